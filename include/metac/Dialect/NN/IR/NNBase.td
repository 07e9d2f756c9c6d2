//===- NNBase.td - nn dialect definition -------------------*- tablegen -*-===//
//
// The `nn` dialect: differentiable tensor operations on statically shaped,
// ranked tensors with value semantics.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_DIALECT_NN_IR_NNBASE_TD
#define METAC_DIALECT_NN_IR_NNBASE_TD

include "mlir/IR/OpBase.td"

include "mlir/IR/AttrTypeBase.td"
include "metac/Interfaces/DifferentiableOpInterface.td"

def NN_Dialect : Dialect {
  let name = "nn";
  let cppNamespace = "::metac::nn";
  let summary = "Differentiable neural-network tensor operations";
  let description = [{
    The `nn` dialect holds the tensor operations a meta-learning program is
    made of: layers (`nn.linear`, `nn.conv2d`, ...), activations, shape
    manipulation, reductions and losses. Every operand and result is a ranked,
    statically shaped tensor with value semantics whose element type is one of
    f16, bf16, f32 or f64 (token ids and class labels are i32 or i64).

    Ops that carry weights accept weights with leading batch dimensions that
    match a prefix of the input's leading dimensions. That is how the
    `batched` phase represents per-task adapted parameters: a weight of shape
    `[T, out, in]` applied to an input `[T, N, in]`.

    Model functions at the `meta` phase are written per sample. The one op
    whose value couples samples, `nn.batch_norm`, reduces over the sample
    axis that vectorisation adds, in the way JAX's `vmap` with a named axis
    does; see its description.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def NN_FloatElement : AnyTypeOf<[F16, BF16, F32, F64]>;

def NN_Tensor : Type<
    And<[RankedTensorOf<[F16, BF16, F32, F64]>.predicate, HasStaticShapePred]>,
    "statically shaped tensor of f16, bf16, f32 or f64",
    "::mlir::RankedTensorType">;

def NN_IndexTensor : Type<
    And<[RankedTensorOf<[I32, I64]>.predicate, HasStaticShapePred]>,
    "statically shaped tensor of i32 or i64",
    "::mlir::RankedTensorType">;

def NN_Scalar : Type<
    And<[RankedTensorOf<[F16, BF16, F32, F64]>.predicate,
         CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).getRank() == 0">]>,
    "0-d tensor of f16, bf16, f32 or f64",
    "::mlir::RankedTensorType">;

/// Every nn op is differentiable: its VJP is built from nn ops.
class NN_Op<string mnemonic, list<Trait> traits = []>
    : Op<NN_Dialect, mnemonic, !listconcat(traits,
        [DeclareOpInterfaceMethods<DifferentiableOpInterface>])>;

#endif // METAC_DIALECT_NN_IR_NNBASE_TD
