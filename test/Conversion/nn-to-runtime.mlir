// RUN: metac-opt %s --convert-nn-to-runtime | FileCheck %s
// RUN: metac-opt %s --convert-nn-to-runtime | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM

// A hand-written step: one SGD update of a linear regressor on one task.
meta.tasks @t "sinusoid" support 4 query 4 : tensor<1xf64> -> tensor<1xf64> config {}
func.func @m(%w: tensor<1x1xf64> {meta.param = "w"}, %x: tensor<1xf64>) -> tensor<1xf64> {
  %y = nn.linear %x, %w : tensor<1xf64>, tensor<1x1xf64> -> tensor<1xf64>
  return %y : tensor<1xf64>
}
meta.train @train model @m tasks @t loss <mse> algorithm #meta.maml<steps = 1, inner_lr = 0.1, order = 2> optimizer #meta.sgd<lr = 1.0, momentum = 0.0, weight_decay = 0.0> attributes {iterations = 1 : i64, meta_batch = 1 : i64, seed = 0 : i64, meta.step = @train.step} {
}
func.func @train.step(%w: tensor<1x1xf64>, %x: tensor<4x1xf64>, %y: tensor<4x1xf64>) -> (tensor<1x1xf64>, tensor<f64>) {
  %p = nn.linear %x, %w : tensor<4x1xf64>, tensor<1x1xf64> -> tensor<4x1xf64>
  %l = nn.mse_loss %p, %y : tensor<4x1xf64>, tensor<4x1xf64> -> tensor<f64>
  %two = arith.constant dense<[[2.0]]> : tensor<1x1xf64>
  %unused = arith.constant dense<[1.0, 2.0]> : tensor<2xf64>
  %g = nn.mul %w, %two : tensor<1x1xf64>
  %r = nn.reshape %g : tensor<1x1xf64> -> tensor<1x1xf64>
  %n = meta.outer_step #meta.sgd<lr = 1.0, momentum = 0.0, weight_decay = 0.0> params(%w : tensor<1x1xf64>) grads(%r : tensor<1x1xf64>) state()
  return %n, %l : tensor<1x1xf64>, tensor<f64>
}

// Only LLVM dialect is left: the step function takes the context and the
// input and output descriptor arrays, and returns a status.
// CHECK-NOT: func.func
// CHECK-NOT: meta.
// CHECK-LABEL: llvm.func @train.step(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32 {
// CHECK: llvm.call @metart_scratch_reset
// CHECK: llvm.call @metart_scratch_alloc
// CHECK: %[[S1:.*]] = llvm.call @metart_nn_linear
// CHECK: llvm.icmp "ne" %[[S1]]
// CHECK: llvm.cond_br
// CHECK: llvm.call @metart_nn_mse_loss
// A splat constant is a fill, a dense one a copy from a global.
// CHECK: llvm.call @metart_fill
// CHECK: llvm.call @metart_copy_to_device
// CHECK: llvm.call @metart_nn_binary
// The reshape shares its operand's data: no kernel call for it.
// CHECK-NOT: metart_nn_reshape
// CHECK: llvm.call @metart_sgd_update
// CHECK: llvm.call @metart_copy_device
// CHECK: llvm.call @metart_copy_device
// CHECK: llvm.return

// LLVM: define i32 @train.step(ptr %0, ptr %1, ptr %2)
// LLVM: call i32 @metart_nn_linear(
// LLVM: call i32 @metart_sgd_update(
