//===- ErrorTest.cpp - operand checks and their messages ------------------===//
//
// Every kernel checks its operands against the rules of its op: a mismatch
// is METART_ERROR_INVALID_ARGUMENT with a message that names the function
// and the shapes, an id or label out of range METART_ERROR_OUT_OF_RANGE.
//
//===----------------------------------------------------------------------===//

#include "metart/metart.h"

#include <cmath>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

/// A tensor that owns its shape and (zeroed) data.
struct Owned {
  Owned(std::vector<int64_t> dims, metart_dtype dtype = METART_F32)
      : shape(std::move(dims)) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    data.assign(static_cast<size_t>(n > 0 ? n : 0), 0);
    tensor = {data.data(), dtype, static_cast<int32_t>(shape.size()),
              shape.data()};
  }
  const metart_tensor *get() const { return &tensor; }

  std::vector<int64_t> shape;
  std::vector<double> data;
  metart_tensor tensor;
};

class Errors : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(metart_context_create(nullptr, &context), METART_OK);
  }
  void TearDown() override { metart_context_destroy(context); }

  /// Expects `status` to be `expected` with `message` as the last error.
  void expectError(metart_status status, metart_status expected,
                   const std::string &message) {
    EXPECT_EQ(status, expected);
    EXPECT_EQ(metart_context_last_error(context), message);
  }
  void expectInvalid(metart_status status, const std::string &message) {
    expectError(status, METART_ERROR_INVALID_ARGUMENT, message);
  }

  metart_context *context = nullptr;
};

TEST_F(Errors, MalformedTensors) {
  Owned y({2, 3});
  expectInvalid(metart_fill(context, nullptr, 0), "metart_fill: y is null");
  metart_tensor bad = y.tensor;
  bad.dtype = 17;
  expectInvalid(metart_fill(context, &bad, 0),
                "metart_fill: y has an unknown element type (17)");
  bad = y.tensor;
  bad.rank = 17;
  expectInvalid(metart_fill(context, &bad, 0),
                "metart_fill: y has rank 17, outside [0, 16]");
  bad = y.tensor;
  bad.shape = nullptr;
  expectInvalid(metart_fill(context, &bad, 0),
                "metart_fill: y has rank 2 and a null shape");
  int64_t negative[] = {2, -1};
  bad = y.tensor;
  bad.shape = negative;
  expectInvalid(metart_fill(context, &bad, 0),
                "metart_fill: y has a negative dimension: [2, -1]");
  int64_t huge[] = {int64_t(1) << 40, int64_t(1) << 40};
  bad = y.tensor;
  bad.shape = huge;
  expectInvalid(metart_fill(context, &bad, 0),
                "metart_fill: y of shape [1099511627776, 1099511627776] is "
                "too large");
  bad = y.tensor;
  bad.data = nullptr;
  expectInvalid(metart_fill(context, &bad, 0),
                "metart_fill: y ([2, 3] f32) has null data");
  // Empty tensors may have null data.
  int64_t empty[] = {0, 3};
  bad.shape = empty;
  EXPECT_EQ(metart_fill(context, &bad, 0), METART_OK);
}

TEST_F(Errors, IntegerFills) {
  Owned labels({3}, METART_I32);
  EXPECT_EQ(metart_fill(context, labels.get(), 2), METART_OK);
  EXPECT_EQ(static_cast<const int32_t *>(labels.get()->data)[2], 2);
  expectInvalid(metart_fill(context, labels.get(), 2.5),
                "metart_fill: value 2.5 is not an i32 integer");
  expectInvalid(metart_fill(context, labels.get(), 3e9),
                "metart_fill: value 3e+09 is not an i32 integer");
}

TEST_F(Errors, ElementTypes) {
  Owned x({2, 3}), y({2, 3}, METART_F64), ids({2}, METART_I32);
  expectInvalid(metart_nn_unary(context, METART_EXP, x.get(), y.get()),
                "metart_nn_unary: y ([2, 3] f64) does not have the element "
                "type of x ([2, 3] f32)");
  expectInvalid(metart_nn_unary(context, METART_EXP, ids.get(), ids.get()),
                "metart_nn_unary: expects x of element type f32, f64, bf16 "
                "or f16, got [2] i32");
  Owned table({4, 3}), rows({2, 3});
  expectInvalid(metart_nn_embedding(context, x.get(), table.get(), rows.get()),
                "metart_nn_embedding: expects ids of element type i32 or i64, "
                "got [2, 3] f32");
  expectInvalid(metart_nn_unary(context, static_cast<metart_unary_op>(42),
                                x.get(), x.get()),
                "metart_nn_unary: unknown unary op 42");
}

TEST_F(Errors, Elementwise) {
  Owned a({2, 3}), b({3, 2}), y({2, 3}), z({6});
  expectInvalid(
      metart_nn_binary(context, METART_ADD, a.get(), b.get(), y.get()),
      "metart_nn_binary: operand shapes [2, 3] and [3, 2] differ "
      "(broadcasting is explicit)");
  expectInvalid(metart_nn_scale(context, a.get(), 2.0, z.get()),
                "metart_nn_scale: y shape [6] does not match the expected "
                "shape [2, 3]");
  // In place is fine; a partial overlap is not.
  EXPECT_EQ(metart_nn_binary(context, METART_MUL, a.get(), y.get(), a.get()),
            METART_OK);
  metart_tensor shifted = y.tensor;
  int64_t shape5[] = {5};
  shifted.shape = shape5;
  shifted.rank = 1;
  metart_tensor tail = shifted;
  tail.data = static_cast<float *>(y.tensor.data) + 1;
  expectInvalid(metart_nn_unary(context, METART_NEG, &shifted, &tail),
                "metart_nn_unary: y and x overlap in memory");
}

TEST_F(Errors, Linear) {
  Owned x({2, 5, 3}), w({4, 4}), y({2, 5, 4});
  expectInvalid(metart_nn_linear(context, x.get(), w.get(), nullptr, y.get()),
                "metart_nn_linear: input features 3 do not match the "
                "weight's in-features 4 (x [2, 5, 3] f32, weight [4, 4] f32)");
  Owned wb({3, 4, 3});
  expectInvalid(metart_nn_linear(context, x.get(), wb.get(), nullptr, y.get()),
                "metart_nn_linear: weight batch dimensions [3] are not a "
                "prefix of the input's leading dimensions [2, 5] (x "
                "[2, 5, 3] f32, weight [3, 4, 3] f32)");
  Owned w2({2, 4, 3}), bias({4});
  expectInvalid(
      metart_nn_linear(context, x.get(), w2.get(), bias.get(), y.get()),
      "metart_nn_linear: bias shape [4] does not match the expected "
      "shape [2, 4]");
  Owned wrong({2, 5, 5});
  expectInvalid(
      metart_nn_linear(context, x.get(), w2.get(), nullptr, wrong.get()),
      "metart_nn_linear: y shape [2, 5, 5] does not match the "
      "expected shape [2, 5, 4]");
  expectInvalid(metart_nn_linear(context, x.get(), w2.get(), nullptr, x.get()),
                "metart_nn_linear: y shape [2, 5, 3] does not match the "
                "expected shape [2, 5, 4]");
}

TEST_F(Errors, Attention) {
  Owned q({2, 3, 4}), k({2, 5, 4}), v({2, 5, 6}), y({2, 3, 6});
  Owned narrow({2, 5, 3}), short_({2, 4, 6}), other({3, 5, 4});
  expectInvalid(
      metart_nn_attention(context, q.get(), narrow.get(), v.get(), 1.0, 0,
                          y.get()),
      "metart_nn_attention: q [2, 3, 4], k [2, 5, 3] and v [2, 5, 6] do not "
      "fit: q and k need one width, k and v one length");
  expectInvalid(
      metart_nn_attention(context, q.get(), k.get(), short_.get(), 1.0, 0,
                          y.get()),
      "metart_nn_attention: q [2, 3, 4], k [2, 5, 4] and v [2, 4, 6] do not "
      "fit: q and k need one width, k and v one length");
  expectInvalid(metart_nn_attention(context, q.get(), other.get(), v.get(), 1.0,
                                    0, y.get()),
                "metart_nn_attention: batch dimensions differ: [2, 3, 4], "
                "[3, 5, 4] and [2, 5, 6]");
  expectInvalid(
      metart_nn_attention(context, q.get(), k.get(), v.get(), 1.0, 1, y.get()),
      "metart_nn_attention: causal attention needs as many queries "
      "as keys, got 3 and 5");
  expectInvalid(metart_nn_attention(context, q.get(), k.get(), v.get(),
                                    std::nan(""), 0, y.get()),
                "metart_nn_attention: expects a finite scale, got nan");
  expectInvalid(
      metart_nn_attention(context, q.get(), k.get(), v.get(), 1.0, 0, q.get()),
      "metart_nn_attention: y shape [2, 3, 4] does not match the "
      "expected shape [2, 3, 6]");
  Owned flat({4});
  expectInvalid(metart_nn_attention(context, flat.get(), flat.get(), flat.get(),
                                    1.0, 0, y.get()),
                "metart_nn_attention: expects q, k and v of one rank >= 2, got "
                "[4], [4] and [4]");
}

TEST_F(Errors, AttentionBackward) {
  Owned q({2, 3, 4}), k({2, 5, 4}), v({2, 5, 6}), dy({2, 3, 6});
  Owned dq({2, 3, 4}), dk({2, 5, 4}), dv({2, 5, 6}), narrow({2, 5, 3});
  expectInvalid(metart_nn_attention_backward(context, q.get(), k.get(), v.get(),
                                             dy.get(), 1.0, 0, nullptr, nullptr,
                                             nullptr),
                "metart_nn_attention_backward: asks for none of dq, dk and dv");
  expectInvalid(
      metart_nn_attention_backward(context, q.get(), narrow.get(), v.get(),
                                   dy.get(), 1.0, 0, dq.get(), nullptr,
                                   nullptr),
      "metart_nn_attention_backward: q [2, 3, 4], k [2, 5, 3] and v [2, 5, "
      "6] do not fit: q and k need one width, k and v one length");
  expectInvalid(metart_nn_attention_backward(context, q.get(), k.get(), v.get(),
                                             q.get(), 1.0, 0, dq.get(), nullptr,
                                             nullptr),
                "metart_nn_attention_backward: dy shape [2, 3, 4] does not "
                "match the expected shape [2, 3, 6]");
  expectInvalid(metart_nn_attention_backward(context, q.get(), k.get(), v.get(),
                                             dy.get(), 1.0, 0, nullptr,
                                             dv.get(), nullptr),
                "metart_nn_attention_backward: dk shape [2, 5, 6] does not "
                "match the expected shape [2, 5, 4]");
  expectInvalid(metart_nn_attention_backward(context, q.get(), k.get(), v.get(),
                                             dy.get(), 1.0, 0, nullptr, nullptr,
                                             v.get()),
                "metart_nn_attention_backward: dv and v overlap in memory");
  expectInvalid(metart_nn_attention_backward(context, q.get(), k.get(), v.get(),
                                             dy.get(), 1.0, 1, dq.get(),
                                             dk.get(), dv.get()),
                "metart_nn_attention_backward: causal attention needs as many "
                "queries as keys, got 3 and 5");
}

TEST_F(Errors, AttentionDoubleBackward) {
  Owned q({2, 3, 4}), k({2, 5, 4}), v({2, 5, 6}), dy({2, 3, 6});
  Owned out({2, 3, 4}), wide({2, 3, 5});
  const char *name = "metart_nn_attention_double_backward: ";
  expectInvalid(metart_nn_attention_double_backward(
                    context, q.get(), k.get(), v.get(), dy.get(), nullptr,
                    nullptr, nullptr, 1.0, 0, out.get(), nullptr, nullptr,
                    nullptr),
                std::string(name) + "is given none of gq, gk and gv");
  expectInvalid(
      metart_nn_attention_double_backward(
          context, q.get(), k.get(), v.get(), dy.get(), q.get(), nullptr,
          nullptr, 1.0, 0, nullptr, nullptr, nullptr, nullptr),
      std::string(name) + "asks for none of q_bar, k_bar, v_bar and dy_bar");
  expectInvalid(metart_nn_attention_double_backward(
                    context, q.get(), k.get(), v.get(), dy.get(), wide.get(),
                    nullptr, nullptr, 1.0, 0, out.get(), nullptr, nullptr,
                    nullptr),
                std::string(name) + "gq shape [2, 3, 5] does not match the "
                                    "expected shape [2, 3, 4]");
  expectInvalid(metart_nn_attention_double_backward(
                    context, q.get(), k.get(), v.get(), dy.get(), q.get(),
                    nullptr, nullptr, 1.0, 0, nullptr, nullptr, nullptr,
                    wide.get()),
                std::string(name) + "dy_bar shape [2, 3, 5] does not match "
                                    "the expected shape [2, 3, 6]");
  expectInvalid(metart_nn_attention_double_backward(
                    context, q.get(), k.get(), v.get(), dy.get(), out.get(),
                    nullptr, nullptr, 1.0, 0, out.get(), nullptr, nullptr,
                    nullptr),
                std::string(name) + "q_bar and gq overlap in memory");
}

TEST_F(Errors, Matmul) {
  Owned a({2, 3, 4}), b({2, 5, 6}), y({2, 3, 6});
  expectInvalid(metart_nn_matmul(context, a.get(), b.get(), 0, 0, y.get()),
                "metart_nn_matmul: contracting dimensions differ: 4 vs 5 (a "
                "[2, 3, 4], b [2, 5, 6], transpose_a 0, transpose_b 0)");
  Owned c({3, 4, 5});
  expectInvalid(metart_nn_matmul(context, a.get(), c.get(), 0, 0, y.get()),
                "metart_nn_matmul: batch dimensions differ: [2, 3, 4] and "
                "[3, 4, 5]");
  Owned v({4});
  expectInvalid(metart_nn_matmul(context, v.get(), v.get(), 0, 0, y.get()),
                "metart_nn_matmul: expects operands of rank >= 2, got [4] and "
                "[4]");
}

TEST_F(Errors, Convolution) {
  int64_t stride[] = {1, 1}, padding[] = {0, 0}, zero[] = {0, 1};
  Owned x({2, 3, 5, 5}), w({4, 2, 3, 3}), y({2, 4, 3, 3});
  expectInvalid(metart_nn_conv2d(context, x.get(), w.get(), nullptr, stride,
                                 padding, y.get()),
                "metart_nn_conv2d: input channels 3 do not match the weight's "
                "in-channels 2 (x [2, 3, 5, 5] f32, weight [4, 2, 3, 3] f32)");
  Owned big({4, 3, 7, 7});
  expectInvalid(metart_nn_conv2d(context, x.get(), big.get(), nullptr, stride,
                                 padding, y.get()),
                "metart_nn_conv2d: the kernel [7, 7] does not fit the input "
                "[5, 5] padded by [0, 0]");
  Owned w3({4, 3, 3, 3});
  expectInvalid(metart_nn_conv2d(context, x.get(), w3.get(), nullptr, zero,
                                 padding, y.get()),
                "metart_nn_conv2d: expects stride values in [1, 4294967296], "
                "got [0, 1]");
  expectInvalid(metart_nn_conv2d(context, x.get(), w3.get(), nullptr, nullptr,
                                 padding, y.get()),
                "metart_nn_conv2d: stride is null");
  Owned grad({2, 4, 2, 2});
  expectInvalid(metart_nn_conv2d_backward_input(context, grad.get(), w3.get(),
                                                stride, padding, x.get()),
                "metart_nn_conv2d_backward_input: grad shape [2, 4, 2, 2] "
                "does not match the expected shape [2, 4, 3, 3]");
  Owned wb({3, 4, 3, 3, 3});
  expectInvalid(metart_nn_conv2d_backward_weight(context, x.get(), y.get(),
                                                 stride, padding, wb.get()),
                "metart_nn_conv2d_backward_weight: y batch dimensions [3] are "
                "not a prefix of the input's batch dimensions [2] (x "
                "[2, 3, 5, 5] f32, y [3, 4, 3, 3, 3] f32)");
}

TEST_F(Errors, Pooling) {
  int64_t kernel[] = {2, 2}, stride[] = {2, 2}, padding[] = {0, 0},
          wide[] = {2, 1};
  Owned x({2, 3, 6, 6}), y({2, 3, 2, 2});
  expectInvalid(
      metart_nn_max_pool2d(context, x.get(), kernel, stride, padding, y.get()),
      "metart_nn_max_pool2d: y shape [2, 3, 2, 2] does not match "
      "the expected shape [2, 3, 3, 3]");
  expectInvalid(
      metart_nn_avg_pool2d(context, x.get(), kernel, stride, wide, y.get()),
      "metart_nn_avg_pool2d: padding [2, 1] exceeds half the kernel "
      "[2, 2]");
  Owned flat({6, 6});
  expectInvalid(metart_nn_avg_pool2d(context, flat.get(), kernel, stride,
                                     padding, y.get()),
                "metart_nn_avg_pool2d: expects x of rank >= 3 ([..., C, H, "
                "W]), got [6, 6] f32");
}

TEST_F(Errors, Normalization) {
  Owned x({4, 3, 5}), w({3}), b({3}), y({4, 3, 5}), w5({5});
  int64_t reduce[] = {0, 1}, unsorted[] = {2, 0}, over[] = {0, 3};
  expectInvalid(metart_nn_batch_norm(context, x.get(), w.get(), b.get(), 1,
                                     reduce, 2, 1e-5, y.get()),
                "metart_nn_batch_norm: reduce dimensions [0, 1] must not "
                "contain the channel dimension 1");
  expectInvalid(metart_nn_batch_norm(context, x.get(), w.get(), b.get(), 1,
                                     unsorted, 2, 1e-5, y.get()),
                "metart_nn_batch_norm: reduce dimensions must be sorted and "
                "distinct, got [2, 0]");
  expectInvalid(metart_nn_batch_norm(context, x.get(), w.get(), b.get(), 1,
                                     over, 2, 1e-5, y.get()),
                "metart_nn_batch_norm: reduce dimension 3 is out of range for "
                "rank 3");
  expectInvalid(metart_nn_batch_norm(context, x.get(), w5.get(), b.get(), 1,
                                     reduce, 1, 1e-5, y.get()),
                "metart_nn_batch_norm: weight [5] f32 is not [P..., C] with P "
                "a prefix of the input's dimensions before channel 1 and C "
                "its size (x [4, 3, 5] f32)");
  expectInvalid(metart_nn_batch_norm(context, x.get(), w.get(), b.get(), 1,
                                     reduce, 1, -1.0, y.get()),
                "metart_nn_batch_norm: expects a non-negative epsilon, got -1");
  expectInvalid(
      metart_nn_layer_norm(context, x.get(), w.get(), w.get(), 1e-5, y.get()),
      "metart_nn_layer_norm: weight [3] f32 is not [P..., D] with P "
      "a prefix of the input's leading dimensions and D its last (x "
      "[4, 3, 5] f32)");
  expectInvalid(metart_nn_log_softmax(context, x.get(), -1, y.get()),
                "metart_nn_log_softmax: axis -1 is out of range for x "
                "[4, 3, 5] f32");
}

TEST_F(Errors, Shape) {
  Owned x({2, 3, 4}), y({4, 2, 3});
  int64_t repeated[] = {0, 0, 1};
  expectInvalid(metart_nn_transpose(context, x.get(), repeated, y.get()),
                "metart_nn_transpose: permutation [0, 0, 1] is not a "
                "permutation of the dimensions of x [2, 3, 4] f32");
  int64_t perm[] = {2, 0, 1};
  EXPECT_EQ(metart_nn_transpose(context, x.get(), perm, y.get()), METART_OK);
  Owned r({2, 5});
  int64_t dims[] = {1};
  expectInvalid(metart_nn_reduce_sum(context, x.get(), dims, 1, r.get()),
                "metart_nn_reduce_sum: y shape [2, 5] does not match the "
                "expected shape [2, 4]");
  Owned v({3}), bcast({4, 2});
  int64_t at[] = {0};
  expectInvalid(metart_nn_broadcast(context, v.get(), at, 1, bcast.get()),
                "metart_nn_broadcast: x shape [3] does not match y [4, 2] "
                "without the new dimensions [0]");
  expectInvalid(metart_nn_broadcast(context, v.get(), at, 2, bcast.get()),
                "metart_nn_broadcast: y rank 2 is not the rank 1 of x plus 2 "
                "new dimensions");
}

TEST_F(Errors, Losses) {
  Owned p({4, 3}), t({4, 2}), scalar({}), perTask({4});
  expectInvalid(metart_nn_mse_loss(context, p.get(), t.get(), 0, scalar.get()),
                "metart_nn_mse_loss: prediction shape [4, 3] does not match "
                "target shape [4, 2]");
  expectInvalid(metart_nn_mse_loss(context, p.get(), p.get(), 3, scalar.get()),
                "metart_nn_mse_loss: batch_rank 3 is out of range [0, 2]");
  expectInvalid(metart_nn_mse_loss(context, p.get(), p.get(), 0, perTask.get()),
                "metart_nn_mse_loss: y shape [4] does not match the expected "
                "shape []");
  Owned labels({4}, METART_I64), wrong({3}, METART_I64);
  expectInvalid(metart_nn_cross_entropy_loss(context, p.get(), wrong.get(), 0,
                                             scalar.get()),
                "metart_nn_cross_entropy_loss: labels shape [3] is not the "
                "logits shape [4, 3] without its class dimension");
}

TEST_F(Errors, IdsAndLabelsOutOfRange) {
  std::vector<int64_t> idShape = {3};
  int64_t idValues[] = {1, 7, 0};
  metart_tensor ids = {idValues, METART_I64, 1, idShape.data()};
  Owned table({5, 2}), rows({3, 2});
  expectError(metart_nn_embedding(context, &ids, table.get(), rows.get()),
              METART_ERROR_OUT_OF_RANGE,
              "metart_nn_embedding: id 7 at position 1 is out of range [0, "
              "5)");
  expectError(
      metart_nn_embedding_backward(context, &ids, rows.get(), table.get()),
      METART_ERROR_OUT_OF_RANGE,
      "metart_nn_embedding_backward: id 7 at position 1 is out of "
      "range [0, 5)");
  int32_t labelValues[] = {0, -1, 2};
  metart_tensor labels = {labelValues, METART_I32, 1, idShape.data()};
  Owned logits({3, 4}), scalar({}), hot({3, 4});
  expectError(metart_nn_cross_entropy_loss(context, logits.get(), &labels, 0,
                                           scalar.get()),
              METART_ERROR_OUT_OF_RANGE,
              "metart_nn_cross_entropy_loss: label -1 at position 1 is out "
              "of range [0, 4)");
  expectError(metart_nn_one_hot(context, &labels, hot.get()),
              METART_ERROR_OUT_OF_RANGE,
              "metart_nn_one_hot: label -1 at position 1 is out of range "
              "[0, 4)");
}

TEST_F(Errors, Routing) {
  Owned probs({6, 4}), mask({6, 4, 2}), wrong({6, 3, 2}), flat({4}),
      flatMask({4, 2});
  expectError(metart_nn_moe_dispatch(context, probs.get(), 5, mask.get()),
              METART_ERROR_INVALID_ARGUMENT,
              "metart_nn_moe_dispatch: top_k 5 is not in [1, 4] (the "
              "experts)");
  expectError(metart_nn_moe_dispatch(context, probs.get(), 0, mask.get()),
              METART_ERROR_INVALID_ARGUMENT,
              "metart_nn_moe_dispatch: top_k 0 is not in [1, 4] (the "
              "experts)");
  expectError(metart_nn_moe_dispatch(context, probs.get(), 1, wrong.get()),
              METART_ERROR_INVALID_ARGUMENT,
              "metart_nn_moe_dispatch: y shape [6, 3, 2] is not the probs "
              "shape [6, 4] plus a capacity dimension");
  expectError(metart_nn_moe_dispatch(context, flat.get(), 1, flatMask.get()),
              METART_ERROR_INVALID_ARGUMENT,
              "metart_nn_moe_dispatch: probs [4] f32 is not [..., tokens, "
              "experts]");
  expectError(metart_nn_moe_dispatch(context, probs.get(), 1, probs.get()),
              METART_ERROR_INVALID_ARGUMENT,
              "metart_nn_moe_dispatch: y shape [6, 4] is not the probs "
              "shape [6, 4] plus a capacity dimension");
}

TEST_F(Errors, Optimizers) {
  Owned p({3}), g({3}), m({3}), v({3}), other({4});
  // Step counts: i64 scalars (Owned's storage holds 8 bytes per element).
  Owned zero({}, METART_I64), one({}, METART_I64), wide({2}, METART_I64);
  *reinterpret_cast<int64_t *>(one.data.data()) = 1;
  expectInvalid(metart_sgd_update(context, p.get(), g.get(), nullptr, 0.1, 0.9,
                                  0, nullptr),
                "metart_sgd_update: momentum 0.9 needs a momentum_buffer, got "
                "null");
  expectInvalid(metart_sgd_update(context, p.get(), other.get(), nullptr, 0.1,
                                  0, 0, nullptr),
                "metart_sgd_update: grad shape [4] does not match the "
                "expected shape [3]");
  expectInvalid(metart_sgd_update(context, p.get(), g.get(), p.get(), 0.1, 0.9,
                                  0, nullptr),
                "metart_sgd_update: momentum_buffer and param overlap in "
                "memory");
  expectInvalid(metart_adam_update(context, p.get(), g.get(), m.get(), v.get(),
                                   zero.get(), 0.1, 0.9, 0.999, 1e-8, 0, 0,
                                   nullptr),
                "metart_adam_update: step 0 is not a 1-based step number");
  expectInvalid(metart_adam_update(context, p.get(), g.get(), m.get(), v.get(),
                                   one.get(), 0.1, 1.0, 0.999, 1e-8, 0, 0,
                                   nullptr),
                "metart_adam_update: expects betas in [0, 1), got 1 and "
                "0.999");
  expectInvalid(metart_adam_update(context, p.get(), g.get(), m.get(), m.get(),
                                   one.get(), 0.1, 0.9, 0.999, 1e-8, 0, 0,
                                   nullptr),
                "metart_adam_update: exp_avg_sq and exp_avg overlap in memory");
  expectInvalid(metart_adam_update(context, p.get(), g.get(), m.get(), v.get(),
                                   p.get(), 0.1, 0.9, 0.999, 1e-8, 0, 0,
                                   nullptr),
                "metart_adam_update: step must be one i64 element, got [3] "
                "f32");
  expectInvalid(metart_increment(context, wide.get(), nullptr),
                "metart_increment: counter must be one i64 element, got [2] "
                "i64");
  expectInvalid(metart_increment(context, nullptr, nullptr),
                "metart_increment: counter is null");
}

} // namespace
