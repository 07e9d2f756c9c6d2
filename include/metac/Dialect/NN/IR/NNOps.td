//===- NNOps.td - nn dialect operations --------------------*- tablegen -*-===//

#ifndef METAC_DIALECT_NN_IR_NNOPS_TD
#define METAC_DIALECT_NN_IR_NNOPS_TD

include "metac/Dialect/NN/IR/NNBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"

//===----------------------------------------------------------------------===//
// Elementwise operations
//===----------------------------------------------------------------------===//

class NN_UnaryOp<string mnemonic, string formula>
    : NN_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise " # formula;
  let description = "Computes `" # formula # "` for every element.";
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def NN_NegOp : NN_UnaryOp<"neg", "-x">;
def NN_ExpOp : NN_UnaryOp<"exp", "exp(x)">;
def NN_LogOp : NN_UnaryOp<"log", "log(x)">;
def NN_SqrtOp : NN_UnaryOp<"sqrt", "sqrt(x)">;
def NN_RsqrtOp : NN_UnaryOp<"rsqrt", "1 / sqrt(x)">;
def NN_ErfOp : NN_UnaryOp<"erf", "erf(x)">;
def NN_ReluOp : NN_UnaryOp<"relu", "max(x, 0)">;
def NN_StepOp : NN_UnaryOp<"step", "x > 0 ? 1 : 0 (the derivative of relu)">;
def NN_TanhOp : NN_UnaryOp<"tanh", "tanh(x)">;
def NN_SigmoidOp : NN_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def NN_GeluOp : NN_UnaryOp<"gelu", "x * Phi(x) (exact, erf-based GELU)">;

def NN_ScaleOp : NN_Op<"scale", [Pure, SameOperandsAndResultType]> {
  let summary = "multiplication by a compile-time constant";
  let description = [{
    `nn.scale %x {factor = f}` computes `f * x` elementwise. Learning rates,
    means and the constants of derivatives are scales.
  }];
  let arguments = (ins NN_Tensor:$input, F64Attr:$factor);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input `by` $factor attr-dict `:` type($result)";
}

def NN_ConvertOp : NN_Op<"convert", [Pure]> {
  let summary = "conversion to another float element type";
  let description = [{
    `nn.convert %x : tensor<S x f32> -> tensor<S x bf16>` gives the tensor
    of the same shape in the result's element type (f16, bf16, f32 or f64),
    rounded to nearest, ties to even. Mixed precision is written with it:
    parameters and inputs are converted to bf16 or f16 where a model starts
    and its results back to f32 where it ends. Its derivative converts the
    cotangent back to the operand's type (rounding is treated as the
    identity, as every mixed-precision trainer does).
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

class NN_BinaryOp<string mnemonic, string formula>
    : NN_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise " # formula;
  let description = "Computes `" # formula # "` for every pair of elements of "
                    "two tensors of the same type (broadcasting is explicit, "
                    "through `nn.broadcast`).";
  let arguments = (ins NN_Tensor:$lhs, NN_Tensor:$rhs);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def NN_AddOp : NN_BinaryOp<"add", "a + b">;
def NN_SubOp : NN_BinaryOp<"sub", "a - b">;
def NN_MulOp : NN_BinaryOp<"mul", "a * b">;
def NN_DivOp : NN_BinaryOp<"div", "a / b">;

//===----------------------------------------------------------------------===//
// Layers
//===----------------------------------------------------------------------===//

def NN_LinearOp : NN_Op<"linear", [Pure]> {
  let summary = "affine layer y = x W^T + b";
  let description = [{
    `x : [B..., in]`, `weight : [P..., out, in]` (PyTorch's layout),
    `bias : [P..., out]` (optional) give `y : [B..., out]`. The weight's
    leading dimensions `P...` must equal a prefix of `B...`: a weight batched
    over tasks (`[T, out, in]`) applies to the inputs of its own task
    (`[T, N, in]`).
  }];
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$weight,
                       Optional<NN_Tensor>:$bias);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,`
    type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_MatmulOp : NN_Op<"matmul", [Pure]> {
  let summary = "batched matrix product";
  let description = [{
    `lhs : [B..., m, k]` times `rhs : [B..., k, n]` gives `[B..., m, n]`; both
    operands have the same batch dimensions. `transpose_lhs` and
    `transpose_rhs` read the operand's last two dimensions swapped, which is
    what the derivatives of a product need.
  }];
  let arguments = (ins NN_Tensor:$lhs, NN_Tensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_AttentionOp : NN_Op<"attention", [Pure]> {
  let summary = "fused scaled dot-product attention";
  let description = [{
    `softmax(scale * q k^T) v` for `q : [B..., S, D]`, `k : [B..., T, D]`
    and `v : [B..., T, E]`, giving `[B..., S, E]`; with `causal` (S = T),
    query i attends to keys j <= i only. One op instead of a product, a
    scale, a mask, a softmax and a product: the runtime computes it in
    tiles of keys with an online softmax (a running maximum and sum per
    query, FlashAttention's forward), so the S x T scores never exist at
    once. Its derivative is written in nn ops (the probabilities
    recomputed from q and k), so it is differentiated again like any
    other: second-order MAML through attention.

    With `ring_axes` (set by partitioning for the `sequence` axis), the
    operands are this rank's block of positions, block r on rank r of the
    group of those mesh axes, and the op is ring attention: the keys and
    values pass around the group's ring block by block as each rank
    computes, so it
    equals the attention of the whole sequences restricted to this rank's
    queries (causal by global position) and no rank holds all the keys.
  }];
  let arguments = (ins NN_Tensor:$query, NN_Tensor:$key, NN_Tensor:$value,
                       F64Attr:$scale, UnitAttr:$causal,
                       OptionalAttr<DenseI16ArrayAttr>:$ring_axes);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value `scale` $scale (`causal` $causal^)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_Conv2DOp : NN_Op<"conv2d", [Pure]> {
  let summary = "2-D convolution (cross-correlation, as PyTorch)";
  let description = [{
    `input : [B..., C, H, W]`, `weight : [P..., O, C, kh, kw]`, optional
    `bias : [P..., O]` give `[B..., O, H', W']` with
    `H' = (H + 2 * padding[0] - kh) / stride[0] + 1` (and likewise for `W'`).
    `P...` must be a prefix of `B...`.
  }];
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$weight,
                       Optional<NN_Tensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `stride` $stride `padding` $padding
    attr-dict `:` type($input) `,` type($weight) (`,` type($bias)^)? `->`
    type($result)
  }];
  let hasVerifier = 1;
}

class NN_Pool2DOp<string mnemonic, string what> : NN_Op<mnemonic, [Pure]> {
  let summary = "2-D " # what # " pooling";
  let description = [{
    Pools the last two dimensions of `[B..., C, H, W]` with windows of
    `kernel`, moved by `stride`, over an input padded by `padding`, giving
    `[B..., C, H', W']` with `H' = (H + 2 * padding[0] - kernel[0]) /
    stride[0] + 1`.
  }];
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `kernel` $kernel `stride` $stride `padding` $padding attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_MaxPool2DOp : NN_Pool2DOp<"max_pool2d", "max">;
def NN_AvgPool2DOp : NN_Pool2DOp<"avg_pool2d", "average">;

def NN_BatchNormOp : NN_Op<"batch_norm", [Pure]> {
  let summary = "batch normalisation with batch statistics (transductive)";
  let description = [{
    Normalises `input` per channel (dimension `channel_dim`) with the mean and
    biased variance taken over `reduce_dims`, then applies the per-channel
    affine `weight * x_hat + bias` (`weight`, `bias : [P..., C]`). There are
    no running statistics: as in MAML, statistics always come from the batch
    at hand (transductive batch norm).

    In a per-sample model function the statistics also cover the sample axis
    that the compiler adds when it applies the model to a set of samples, as
    a JAX `vmap` with a named axis would: vectorisation over samples adds the
    new axis to `reduce_dims`, vectorisation over tasks does not.
  }];
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$weight, NN_Tensor:$bias,
                       I64Attr:$channel_dim, DenseI64ArrayAttr:$reduce_dims,
                       F64Attr:$epsilon);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias `channel` $channel_dim `reduce` $reduce_dims
    `epsilon` $epsilon attr-dict `:` type($input) `,` type($weight) `,`
    type($bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_LayerNormOp : NN_Op<"layer_norm", [Pure]> {
  let summary = "layer normalisation over the last dimension";
  let description = [{
    Normalises `input : [B..., D]` over its last dimension with the mean and
    biased variance, then applies `weight * x_hat + bias`
    (`weight`, `bias : [P..., D]`, `P...` a prefix of `B...`).
  }];
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$weight, NN_Tensor:$bias,
                       F64Attr:$epsilon);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias `epsilon` $epsilon attr-dict `:`
    type($input) `,` type($weight) `,` type($bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_EmbeddingOp : NN_Op<"embedding", [Pure]> {
  let summary = "table lookup";
  let description = [{
    `ids : [S...]` (i32 or i64) and `table : [P..., V, D]` give
    `[S..., D]`, row `ids[s]` of the table for every position `s`. `P...`
    must be a prefix of `S...`. Ids out of `[0, V)` are a runtime error.
  }];
  let arguments = (ins NN_IndexTensor:$ids, NN_Tensor:$table);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $ids `,` $table attr-dict `:` type($ids) `,` type($table) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalised exponentials
//===----------------------------------------------------------------------===//

class NN_AxisOp<string mnemonic, string what>
    : NN_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what # " along one dimension";
  let description = "Computes the " # what # " of `input` along `axis`.";
  let arguments = (ins NN_Tensor:$input, I64Attr:$axis);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input `axis` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def NN_SoftmaxOp : NN_AxisOp<"softmax", "softmax">;
def NN_LogSoftmaxOp : NN_AxisOp<"log_softmax", "log-softmax">;

//===----------------------------------------------------------------------===//
// Shape manipulation and reductions
//===----------------------------------------------------------------------===//

def NN_ReshapeOp : NN_Op<"reshape", [Pure]> {
  let summary = "reinterpretation with another shape";
  let description = [{
    Row-major reshape to the result type; the element counts must agree.
    The spec's `flatten` is a reshape.
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def NN_TransposeOp : NN_Op<"transpose", [Pure]> {
  let summary = "permutation of dimensions";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`.
  }];
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_BroadcastOp : NN_Op<"broadcast", [Pure]> {
  let summary = "replication along new dimensions";
  let description = [{
    The result has the input's dimensions plus new ones at the sorted
    positions `dimensions` of the result, as `linalg.broadcast`: the input is
    replicated along the new dimensions. The adjoint of a `nn.reduce_sum`
    over the same dimensions.
  }];
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$dimensions);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `dims` $dimensions attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

class NN_ReduceOp<string mnemonic, string what> : NN_Op<mnemonic, [Pure]> {
  let summary = what # " over dimensions";
  let description = [{
    Reduces the sorted, distinct `dimensions` of the input, which disappear
    from the result.
  }];
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$dimensions);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `dims` $dimensions attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_ReduceSumOp : NN_ReduceOp<"reduce_sum", "sum">;
def NN_ReduceMeanOp : NN_ReduceOp<"reduce_mean", "mean">;

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def NN_MSELossOp : NN_Op<"mse_loss", [Pure]> {
  let summary = "mean squared error";
  let description = [{
    The mean of `(prediction - target)^2` over every dimension after the
    leading `batch_rank` ones, which are kept: with `batch_rank = 0` the
    result is a 0-d tensor (PyTorch's `mse_loss` with `reduction='mean'`);
    the `batched` phase uses `batch_rank = 1` for one loss per task.
  }];
  let arguments = (ins NN_Tensor:$prediction, NN_Tensor:$target,
                       DefaultValuedAttr<I64Attr, "0">:$batch_rank);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $prediction `,` $target attr-dict `:` type($prediction) `,` type($target)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_CrossEntropyLossOp : NN_Op<"cross_entropy_loss", [Pure]> {
  let summary = "softmax cross-entropy with integer labels";
  let description = [{
    `logits : [B..., N..., C]` and `labels : [B..., N...]` (i32 or i64, in
    `[0, C)`) give the mean over the sample positions `N...` of
    `-log_softmax(logits)[label]`, keeping the leading `batch_rank`
    dimensions `B...` (PyTorch's `cross_entropy` with `reduction='mean'`
    when `batch_rank = 0`).
  }];
  let arguments = (ins NN_Tensor:$logits, NN_IndexTensor:$labels,
                       DefaultValuedAttr<I64Attr, "0">:$batch_rank);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels) `->`
    type($result)
  }];
  let hasVerifier = 1;
}


def NN_AccuracyOp : NN_Op<"accuracy", [Pure]> {
  let summary = "fraction of samples whose largest logit is the label";
  let description = [{
    `logits : [B..., N..., C]` and `labels : [B..., N...]` (i32 or i64) give
    the mean over the sample positions `N...` of `argmax(logits) == label`
    (ties go to the lowest class, as `torch.argmax`), keeping the leading
    `batch_rank` dimensions `B...`. The classification metric of
    evaluations; not differentiable (a step function of the logits).
  }];
  let arguments = (ins NN_Tensor:$logits, NN_IndexTensor:$labels,
                       DefaultValuedAttr<I64Attr, "0">:$batch_rank);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Ops that derivatives need
//
// The vector-Jacobian product of every nn op is built from nn ops, so that
// differentiating a derivative (second-order MAML, Hessian-vector products)
// needs nothing new. These ops complete the set: each is linear in the
// operand that carries a cotangent, and its own derivative is one of the ops
// above or below.
//===----------------------------------------------------------------------===//

def NN_StopGradientOp : NN_Op<"stop_gradient", [Pure, SameOperandsAndResultType]> {
  let summary = "identity whose derivative is zero";
  let description = [{
    Returns its input; differentiation treats the result as a constant.
    First-order MAML marks its inner gradients with it.
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def NN_AttentionBackwardOp : NN_Op<"attention_backward", [Pure]> {
  let summary = "one cotangent of fused attention, computed in tiles";
  let description = [{
    Given `nn.attention`'s operands `query`, `key`, `value` and its output's
    cotangent `grad`, returns the cotangent of the operand named by `wrt`
    (`"query"`, `"key"` or `"value"`), whose type is that operand's.
    FlashAttention-2's backward: a first pass over tiles of keys recomputes
    each query's softmax statistics and `D = rowsum(P dP)` (online, as the
    forward's sum), with `P` the probabilities and `dP = grad value^T`; a
    second recomputes each tile's `P` and `dP` and contracts
    `dS = P (dP - D)`, so no `S x T` tensor exists. (FlashAttention takes
    `D` from the forward's output, `rowsum(grad * output)`: equal in exact
    arithmetic, but a rounded output, bf16's above all, cancels in
    `dP - D` where the attention is peaked.) The three ops of one attention's derivative
    share their operands, and the lowering gives them one runtime call that
    computes the three cotangents together. Its own derivative is
    `nn.attention_double_backward`. With `ring_axes`, ring attention's
    (as `nn.attention`'s): the key-side cotangents travel with their block
    back to its rank.
  }];
  let arguments = (ins NN_Tensor:$query, NN_Tensor:$key, NN_Tensor:$value,
                       NN_Tensor:$grad, F64Attr:$scale,
                       UnitAttr:$causal, StrAttr:$wrt,
                       OptionalAttr<DenseI16ArrayAttr>:$ring_axes);
  let results = (outs NN_Tensor:$result);
  let extraClassDeclaration = [{
    /// The ops of this block with this op's operands and attributes (one
    /// per `wrt`, the first kept; just this op if an earlier one has its
    /// `wrt`), in program order: what one runtime call computes.
    ::llvm::SmallVector<AttentionBackwardOp, 3> getSiblings();
  }];
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $grad `scale` $scale (`causal` $causal^)?
    `wrt` $wrt attr-dict `:` type($query) `,` type($key) `,` type($value)
    `,` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_AttentionDoubleBackwardOp
    : NN_Op<"attention_double_backward", [Pure]> {
  let summary = "one cotangent of fused attention's derivative, in tiles";
  let description = [{
    The derivative of `nn.attention_backward %query, %key, %value, %grad
    ... wrt <from>` given the cotangent `cotangent` of its result (shaped as
    the operand `from`): returns the cotangent of its operand `wrt`
    (`"query"`, `"key"`, `"value"` or `"grad"`), whose type is that
    operand's. This is the double backward that second-order MAML and
    Hessian-vector products need through attention. Computed in two passes
    over tiles of keys: the first sums, online with the softmax, the
    per-query statistics (the log-normaliser, `D = rowsum(P dP)`,
    `rowsum(P dS-bar)`, `rowsum(P P-bar)`) that the second needs to
    contract every tile's terms, so no `S x T` tensor exists. The ops of one
    `from` and cotangent share one runtime call. Not differentiable again
    (a third derivative through attention needs `fused = false`). With
    `ring_axes`, ring attention's (as `nn.attention`'s).
  }];
  let arguments = (ins NN_Tensor:$query, NN_Tensor:$key, NN_Tensor:$value,
                       NN_Tensor:$grad, NN_Tensor:$cotangent, F64Attr:$scale,
                       UnitAttr:$causal, StrAttr:$from, StrAttr:$wrt,
                       OptionalAttr<DenseI16ArrayAttr>:$ring_axes);
  let results = (outs NN_Tensor:$result);
  let extraClassDeclaration = [{
    /// As nn.attention_backward's: the ops of one runtime call.
    ::llvm::SmallVector<AttentionDoubleBackwardOp, 4> getSiblings();
  }];
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $grad `,` $cotangent `scale` $scale
    (`causal` $causal^)? `from` $from `wrt` $wrt attr-dict `:` type($query)
    `,` type($key) `,` type($value) `,` type($grad) `,` type($cotangent)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_Conv2DBackwardInputOp : NN_Op<"conv2d_backward_input", [Pure]> {
  let summary = "gradient of a 2-D convolution with respect to its input";
  let description = [{
    Given the output cotangent `grad : [B..., O, H', W']` of `nn.conv2d`
    with `weight : [P..., O, C, kh, kw]`, `stride` and `padding`, returns the
    input cotangent, whose type (`[B..., C, H, W]`) is the result type (the
    transposed convolution).
  }];
  let arguments = (ins NN_Tensor:$grad, NN_Tensor:$weight,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $grad `,` $weight `stride` $stride `padding` $padding attr-dict `:`
    type($grad) `,` type($weight) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_Conv2DBackwardWeightOp : NN_Op<"conv2d_backward_weight", [Pure]> {
  let summary = "gradient of a 2-D convolution with respect to its weight";
  let description = [{
    Given the convolution's `input : [B..., C, H, W]` and output cotangent
    `grad : [B..., O, H', W']`, returns the weight cotangent, whose type
    (`[P..., O, C, kh, kw]`, summed over the batch dimensions after `P`) is
    the result type.
  }];
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$grad,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $grad `stride` $stride `padding` $padding attr-dict `:`
    type($input) `,` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_MaxPool2DBackwardOp : NN_Op<"max_pool2d_backward", [Pure]> {
  let summary = "gradient of 2-D max pooling";
  let description = [{
    Routes each element of the output cotangent `grad` to the position of its
    window's maximum in `input` (the first one, on ties) and sums; the result
    has the input's type.
  }];
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$grad,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $grad `kernel` $kernel `stride` $stride `padding` $padding
    attr-dict `:` type($input) `,` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_MaxPool2DGatherOp : NN_Op<"max_pool2d_gather", [Pure]> {
  let summary = "values at the windows' maxima";
  let description = [{
    For each pooling window of `input`, the element of `source` (of the
    input's type) at the position of the window's maximum: the adjoint of
    `nn.max_pool2d_backward` in its cotangent operand.
  }];
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$source,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $source `kernel` $kernel `stride` $stride `padding` $padding
    attr-dict `:` type($input) `,` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_AvgPool2DBackwardOp : NN_Op<"avg_pool2d_backward", [Pure]> {
  let summary = "gradient of 2-D average pooling";
  let description = [{
    Spreads each element of the output cotangent `grad` evenly over its
    window (padding counts in the window size, as PyTorch's default
    `count_include_pad=True`); the result type is the pooled input's.
  }];
  let arguments = (ins NN_Tensor:$grad, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $grad `kernel` $kernel `stride` $stride `padding` $padding attr-dict `:`
    type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_EmbeddingBackwardOp : NN_Op<"embedding_backward", [Pure]> {
  let summary = "gradient of a table lookup";
  let description = [{
    Adds row `s` of `grad : [S..., D]` into row `ids[s]` of a zero table of
    the result type `[P..., V, D]` (a scatter-add).
  }];
  let arguments = (ins NN_IndexTensor:$ids, NN_Tensor:$grad);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $ids `,` $grad attr-dict `:` type($ids) `,` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_OneHotOp : NN_Op<"one_hot", [Pure]> {
  let summary = "one-hot encoding of class labels";
  let description = [{
    `labels : [S...]` (i32 or i64) give `[S..., C]` with 1 at each label and
    0 elsewhere; `C` is the result's last dimension. Not differentiable (its
    operand is an integer).
  }];
  let arguments = (ins NN_IndexTensor:$labels);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$labels attr-dict `:` type($labels) `->` type($result)";
  let hasVerifier = 1;
}

def NN_MoeDispatchOp : NN_Op<"moe_dispatch", [Pure]> {
  let summary = "top-k routing of tokens to experts with a capacity";
  let description = [{
    `probs : [G..., N, E]` (each token's gate probabilities over `E`
    experts, in groups `G...`) give the dispatch mask `[G..., N, E, C]`: 1
    where token `n` takes slot `c` of expert `e`, else 0. Each token chooses
    its `top_k` most probable experts (the lower index among equal
    probabilities); within a group, every token's first choice is placed
    before any second choice (GShard), tokens in order, each at the next
    free slot of its expert; a choice that finds its expert's `C` slots
    taken is dropped. The decisions are discrete: no derivative flows
    through the mask (the gate's weights get theirs through the
    probabilities that multiply it).

    ```mlir
    %d = nn.moe_dispatch %p {top_k = 2 : i64} : tensor<16x4xf32> -> tensor<16x4x10xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$probs, I64Attr:$top_k);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$probs attr-dict `:` type($probs) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fusion groups (the `fused` phase)
//===----------------------------------------------------------------------===//

def NN_FusedOp : Op<NN_Dialect, "fused", [IsolatedFromAbove, Pure,
    SingleBlock, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a group of elementwise, broadcast and reduction ops";
  let description = [{
    The `fused` phase groups chains of elementwise maps (unary, binary,
    scale), broadcasts and sums (`nn.reduce_sum`, `nn.reduce_mean`) into
    one op: its body computes the results from the block arguments (the
    group's inputs) and yields them. The `lowered` phase compiles each
    body into one kernel (the `kernel` attribute names it once generated):
    upstream linalg fusion, bufferisation and lowering to loops that LLVM
    vectorises. When every value of the group shares its leading dimension
    (inputs broadcast along it aside), the kernel computes one of `chunks`
    equal slices of it, and the runtime runs the slices on its threads;
    `replicated` marks the inputs every slice reads whole. On a backend
    that does not run host code the body's ops are called one by one
    instead. Not differentiable: it appears after
    autodiff.

    ```mlir
    %y = nn.fused (%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
      %0 = nn.broadcast %c dims [0] : tensor<8xf32> -> tensor<4x8xf32>
      %1 = nn.add %a, %0 : tensor<4x8xf32>
      %2 = nn.relu %1 : tensor<4x8xf32>
      nn.yield %2 : tensor<4x8xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<NN_Tensor>:$inputs,
                       OptionalAttr<FlatSymbolRefAttr>:$kernel,
                       OptionalAttr<I64Attr>:$chunks,
                       OptionalAttr<DenseBoolArrayAttr>:$replicated);
  let results = (outs Variadic<NN_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether `op` may be part of a group: an elementwise map, a
    /// broadcast, a sum, a batched product with a unit dimension (one
    /// term, row or column) or a batch norm with per-task statistics, of
    /// f32 or f64 tensors. The kernel generator writes the last two as
    /// maps and sums; run op by op (CUDA) they stay library calls.
    static bool isFusible(::mlir::Operation *op);
  }];
}

def NN_YieldOp : Op<NN_Dialect, "yield", [Pure, Terminator, ReturnLike,
    HasParent<"FusedOp">]> {
  let summary = "the results of an `nn.fused` body";
  let arguments = (ins Variadic<NN_Tensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

#endif // METAC_DIALECT_NN_IR_NNOPS_TD
