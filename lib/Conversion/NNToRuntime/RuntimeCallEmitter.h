//===- RuntimeCallEmitter.h - LLVM dialect calls of the metart API -*- C++
//-*-===//
//
// The pieces a lowered step function is built from: declarations of metart
// functions, constant i64 arrays (shapes, dims, strides), stack descriptors
// (`metart_tensor`: data, dtype, rank, shape) and status-checked calls that
// return the first error.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_CONVERSION_NNTORUNTIME_RUNTIMECALLEMITTER_H
#define METAC_LIB_CONVERSION_NNTORUNTIME_RUNTIMECALLEMITTER_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace metac::lowering {

/// The metart_dtype value (runtime/include/metart/metart.h) of an element
/// type.
int64_t metartDtypeOf(mlir::Type element);

class RuntimeCallEmitter {
public:
  RuntimeCallEmitter(mlir::ModuleOp module, mlir::Location loc);

  /// Starts `i32 name(ptr context, ptr inputs, ptr outputs)`; the builder is
  /// left in its body.
  mlir::LLVM::LLVMFuncOp beginFunction(llvm::StringRef name);
  /// Returns 0 from the current block.
  void finishFunction();

  mlir::Value context() const { return contextArg; }
  mlir::Value inputs() const { return inputsArg; }
  mlir::Value outputs() const { return outputsArg; }
  mlir::OpBuilder &builder() { return b; }

  mlir::Type ptrType() const { return ptr; }
  mlir::Value i32(int64_t v);
  mlir::Value i64(int64_t v);
  mlir::Value f64(double v);
  mlir::Value null();

  /// The address of a constant array of i64 (one global per distinct array).
  mlir::Value i64Array(llvm::ArrayRef<int64_t> values);
  /// The address of a constant byte blob (dense constants).
  mlir::Value bytes(llvm::StringRef data);

  /// The address of a NUL-terminated constant string (one global per
  /// distinct string).
  mlir::Value cString(llvm::StringRef text);

  /// A `metart_tensor` on the stack for `type`, with data from the scratch
  /// arena unless `data` is given.
  mlir::Value descriptor(mlir::RankedTensorType type,
                         mlir::Value data = nullptr);
  /// The data pointer of a descriptor.
  mlir::Value dataOf(mlir::Value descriptor);
  /// `pointer` advanced by `bytes`.
  mlir::Value offsetBytes(mlir::Value pointer, int64_t bytes);
  /// A stack array of `pointers` (a `metart_tensor *const *` argument).
  mlir::Value pointerArray(mlir::ValueRange pointers);
  /// `descriptors[index]` of a `metart_tensor **` array.
  mlir::Value arrayElement(mlir::Value array, int64_t index);

  /// Calls `name` (declared on first use as returning i32 with the given
  /// argument types) and returns its status to the caller if non-zero.
  void checkedCall(llvm::StringRef name, mlir::ValueRange args);
  /// Calls a function returning nothing.
  void call(llvm::StringRef name, mlir::ValueRange args);
  /// Calls `name` (declared on first use as returning i32) and returns
  /// its result unchecked (queries such as metart_context_is_host).
  mlir::Value callI32(llvm::StringRef name, mlir::ValueRange args);

private:
  mlir::LLVM::LLVMFuncOp declare(llvm::StringRef name, mlir::Type result,
                                 mlir::TypeRange args);

  mlir::ModuleOp module;
  mlir::Location loc;
  mlir::OpBuilder b;
  mlir::Type ptr, i32Type, i64Type, f64Type, descriptorType;
  mlir::Value contextArg, inputsArg, outputsArg;
  /// The constant 1 that every stack slot's alloca counts.
  mlir::Value allocaCount;
  mlir::Block *entry = nullptr, *errorBlock = nullptr;
  llvm::StringMap<mlir::LLVM::GlobalOp> globals;
  unsigned globalCount = 0;
};

} // namespace metac::lowering

#endif // METAC_LIB_CONVERSION_NNTORUNTIME_RUNTIMECALLEMITTER_H
