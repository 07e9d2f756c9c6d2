//===- MetaBase.td - meta dialect definition ---------------*- tablegen -*-===//

#ifndef METAC_DIALECT_META_IR_METABASE_TD
#define METAC_DIALECT_META_IR_METABASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Meta_Dialect : Dialect {
  let name = "meta";
  let cppNamespace = "::metac::meta";
  let summary = "Meta-learning programs: tasks, inner loops, meta-gradients";
  let description = [{
    The `meta` dialect states a meta-learning program at the algorithm level:
    task distributions (`meta.tasks`), the training program (`meta.train`)
    with its algorithm, loss, outer optimizer and evaluation, and the
    constructs its expansion is made of: the inner adaptation loop
    (`meta.adapt`), gradient requests (`meta.grad`) and the outer optimizer
    step (`meta.outer_step`). Models are `func.func` over `nn` ops whose
    leading arguments are the parameters.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let useDefaultAttributePrinterParser = 1;
}

/// A double printed so that it parses back to the same value.
def Meta_F64Parameter : AttrOrTypeParameter<"::llvm::APFloat", "a double"> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
    double value;
    if ($_parser.parseFloat(value))
      return ::mlir::failure();
    return ::llvm::APFloat(value);
  }() }];
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
  let printer = "$_printer.printFloat($_self)";
}

class Meta_Op<string mnemonic, list<Trait> traits = []>
    : Op<Meta_Dialect, mnemonic, traits>;

#endif // METAC_DIALECT_META_IR_METABASE_TD
