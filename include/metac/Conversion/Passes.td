//===- Passes.td - metac conversion passes -----------------*- tablegen -*-===//

#ifndef METAC_CONVERSION_PASSES_TD
#define METAC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertNNToRuntime : Pass<"convert-nn-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower step functions over nn ops to calls of the metart C API";
  let description = [{
    Turns each function named by a `meta.train`'s `meta.step` and
    `meta.eval` attributes (straight-line functions of nn ops after the
    autodiff phase) into an LLVM dialect function

      `i32 @<name>(ptr context, ptr inputs, ptr outputs)`

    where `inputs` and `outputs` are arrays of `metart_tensor *` (one per
    argument and per result; an output may alias its input). Every tensor
    value gets a `metart_tensor` descriptor on the stack and data from the
    context's scratch arena (reset on entry); every nn op becomes a call of
    its kernel (`metart_nn_<op>`), `meta.outer_step` the optimizer's update
    in place, reshapes and stop-gradients alias their operand, and results
    are copied to the outputs. Each call's status is checked: the first
    non-zero status is returned.

    The models and meta declarations are removed: the lowered module holds
    LLVM dialect only.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def FoldNNTransposes : Pass<"metac-fold-transposes", "::mlir::ModuleOp"> {
  let summary = "Fold transposes of the last two dimensions into products";
  let description = [{
    Part of the `optimized` phase. Products read either operand transposed
    for free (BLAS and oneDNN flags), so transposes of the last two
    dimensions that autodiff writes around them are folded in: a transpose
    of a transpose composes (or vanishes); `linear(x, transpose(w))`
    without bias, where x's leading dimensions are the weight's batch
    dimensions and one row dimension, becomes `matmul(x, w)`; a transposed
    operand of `matmul` flips its flag; and a transpose of a product used
    only there becomes the product of the swapped operands with flipped
    flags. Transposes left without users are erased.
  }];
  let dependentDialects = ["::metac::nn::NNDialect"];
}

def FuseNNElementwise : Pass<"metac-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Group chains of elementwise, broadcast and sum ops into nn.fused";
  let description = [{
    The `fused` phase. A batched linear layer's bias over full matrices
    first becomes a map after its product, and sums over the leading
    dimension and others are split into a sum over the others and a small
    sum over the leading dimension. Elementwise maps, broadcasts, sums that
    keep the leading dimension (sums over it stay runtime calls), batched
    products with a unit dimension and per-task batch norms (which the
    kernel generator writes as maps and sums) are then grouped: a
    broadcast read by several such ops is first cloned for each; then, in
    block order, an op joins (and merges) the groups of its operands'
    producers when each group can still run as one op where its last
    member is (no value of the group is used outside it before the joining
    op); otherwise it starts a group. Groups of two or more ops become
    `nn.fused` ops whose inputs are the values they read from outside and
    whose results are the values used outside. `--fusion=off` leaves this
    pass out.
  }];
  let dependentDialects = ["::metac::nn::NNDialect"];
}

def GenerateFusedKernels : Pass<"metac-generate-kernels", "::mlir::ModuleOp"> {
  let summary = "Compile each nn.fused body into an LLVM function";
  let description = [{
    Outlines each `nn.fused` body into `@__metac_kernel_N(memref...)`,
    computing one of `chunks` equal slices of the group along its leading
    dimension when every value of the group has it (inputs broadcast along
    it are read whole: `replicated`). The body's nn ops become
    `linalg.generic` ops on tensors; upstream elementwise fusion merges
    every producer into its consumers (a producer the group returns
    becomes one more result of the fused loop); empty-tensor elimination
    points the results at the kernel's result buffers; adjacent loop
    dimensions that every operand indexes contiguously are collapsed;
    one-shot bufferisation, buffer deallocation, linalg to loops and the
    conversions to the LLVM dialect (bare-pointer calling convention: one
    `ptr` per input, then per result) follow. The kernels are compiled in a
    module of their own and moved into this one; each `nn.fused` op names
    its kernel in `kernel`.

    With `device` (or the module attribute `metac.generate_device_kernels`,
    which `metac --device-kernels=on` sets), each group is also compiled, unsplit, for
    CUDA GPUs: bufferised, its loops made parallel, collapsed, tiled into
    blocks of threads, outlined into GPU kernels and compiled to PTX through
    NVVM (DeviceKernels.h). The group's `metac.device` attribute holds the
    PTX, the launches and the temporaries' sizes; groups whose kernels
    would serialise a long reduction over few threads get none and run op
    by op on CUDA.
  }];
  let options = [
    Option<"device", "device", "bool", /*default=*/"false",
           "also compile each group into CUDA kernels (PTX)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // METAC_CONVERSION_PASSES_TD
