//===- RuntimeCallEmitter.cpp - LLVM dialect calls of the metart API ------===//

#include "RuntimeCallEmitter.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace metac::lowering;

int64_t metac::lowering::metartDtypeOf(Type element) {
  if (element.isF32())
    return 0;
  if (element.isF64())
    return 1;
  if (element.isInteger(32))
    return 2;
  if (element.isBF16())
    return 4;
  if (element.isF16())
    return 5;
  return 3; // i64
}

RuntimeCallEmitter::RuntimeCallEmitter(ModuleOp module, Location loc)
    : module(module), loc(loc), b(module.getContext()) {
  MLIRContext *ctx = module.getContext();
  ptr = LLVM::LLVMPointerType::get(ctx);
  i32Type = IntegerType::get(ctx, 32);
  i64Type = IntegerType::get(ctx, 64);
  f64Type = Float64Type::get(ctx);
  descriptorType =
      LLVM::LLVMStructType::getLiteral(ctx, {ptr, i32Type, i32Type, ptr});
}

LLVM::LLVMFuncOp RuntimeCallEmitter::declare(StringRef name, Type result,
                                             TypeRange args) {
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return fn;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(
      b, loc, name,
      LLVM::LLVMFunctionType::get(result, SmallVector<Type>(args)));
}

LLVM::LLVMFuncOp RuntimeCallEmitter::beginFunction(StringRef name) {
  b.setInsertionPointToEnd(module.getBody());
  auto fn = LLVM::LLVMFuncOp::create(
      b, loc, name, LLVM::LLVMFunctionType::get(i32Type, {ptr, ptr, ptr}));
  entry = fn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  allocaCount =
      LLVM::ConstantOp::create(b, loc, i64Type, b.getI64IntegerAttr(1));
  contextArg = entry->getArgument(0);
  inputsArg = entry->getArgument(1);
  outputsArg = entry->getArgument(2);
  // One shared exit for errors: returns the status it receives.
  errorBlock =
      b.createBlock(&fn.getBody(), fn.getBody().end(), {i32Type}, {loc});
  LLVM::ReturnOp::create(b, loc, errorBlock->getArgument(0));
  b.setInsertionPointToEnd(entry);
  return fn;
}

void RuntimeCallEmitter::finishFunction() {
  LLVM::ReturnOp::create(b, loc, i32(0));
}

Value RuntimeCallEmitter::i32(int64_t v) {
  return LLVM::ConstantOp::create(b, loc, i32Type, b.getI32IntegerAttr(v));
}
Value RuntimeCallEmitter::i64(int64_t v) {
  return LLVM::ConstantOp::create(b, loc, i64Type, b.getI64IntegerAttr(v));
}
Value RuntimeCallEmitter::f64(double v) {
  return LLVM::ConstantOp::create(b, loc, f64Type, b.getF64FloatAttr(v));
}
Value RuntimeCallEmitter::null() { return LLVM::ZeroOp::create(b, loc, ptr); }

Value RuntimeCallEmitter::i64Array(ArrayRef<int64_t> values) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << "i64:";
  for (int64_t v : values)
    os << v << ',';
  auto it = globals.find(key);
  if (it == globals.end()) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    // A zero-length array still needs an address.
    SmallVector<int64_t> data(values);
    if (data.empty())
      data.push_back(0);
    auto type = LLVM::LLVMArrayType::get(i64Type, data.size());
    auto global = LLVM::GlobalOp::create(
        b, loc, type, /*isConstant=*/true, LLVM::Linkage::Private,
        ("__metac_i64_" + llvm::Twine(globalCount++)).str(),
        b.getI64TensorAttr(data));
    it = globals.insert({key, global}).first;
  }
  return LLVM::AddressOfOp::create(b, loc, it->second);
}

Value RuntimeCallEmitter::bytes(StringRef data) {
  LLVM::GlobalOp global;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto type = LLVM::LLVMArrayType::get(IntegerType::get(b.getContext(), 8),
                                         data.size());
    global = LLVM::GlobalOp::create(
        b, loc, type, /*isConstant=*/true, LLVM::Linkage::Private,
        ("__metac_data_" + llvm::Twine(globalCount++)).str(),
        b.getStringAttr(data), /*alignment=*/64);
  }
  return LLVM::AddressOfOp::create(b, loc, global);
}

Value RuntimeCallEmitter::cString(StringRef text) {
  std::string key = ("str:" + text).str();
  auto it = globals.find(key);
  if (it == globals.end()) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    std::string data = text.str();
    data.push_back('\0');
    auto type = LLVM::LLVMArrayType::get(IntegerType::get(b.getContext(), 8),
                                         data.size());
    auto global = LLVM::GlobalOp::create(
        b, loc, type, /*isConstant=*/true, LLVM::Linkage::Private,
        ("__metac_str_" + llvm::Twine(globalCount++)).str(),
        b.getStringAttr(data));
    it = globals.insert({key, global}).first;
  }
  return LLVM::AddressOfOp::create(b, loc, it->second);
}

Value RuntimeCallEmitter::descriptor(RankedTensorType type, Value data) {
  Value slot;
  {
    // Stack slots live at the top of the entry block.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfterValue(allocaCount);
    slot = LLVM::AllocaOp::create(b, loc, ptr, descriptorType, allocaCount, 8);
  }
  auto field = [&](int32_t index) {
    return LLVM::GEPOp::create(b, loc, ptr, descriptorType, slot,
                               ArrayRef<LLVM::GEPArg>{0, index});
  };
  LLVM::StoreOp::create(b, loc, i32(metartDtypeOf(type.getElementType())),
                        field(1));
  LLVM::StoreOp::create(b, loc, i32(type.getRank()), field(2));
  LLVM::StoreOp::create(b, loc, i64Array(type.getShape()), field(3));
  if (data) {
    LLVM::StoreOp::create(b, loc, data, field(0));
  } else {
    int64_t bytes = type.getNumElements() * (type.getElementTypeBitWidth() / 8);
    checkedCall("metart_scratch_alloc", {contextArg, i64(bytes), field(0)});
  }
  return slot;
}

Value RuntimeCallEmitter::dataOf(Value descriptor) {
  Value field = LLVM::GEPOp::create(b, loc, ptr, descriptorType, descriptor,
                                    ArrayRef<LLVM::GEPArg>{0, 0});
  return LLVM::LoadOp::create(b, loc, ptr, field);
}

Value RuntimeCallEmitter::offsetBytes(Value pointer, int64_t bytes) {
  if (bytes == 0)
    return pointer;
  // A GEP's constant index holds 29 signed bits (kGEPConstantBitWidth): a
  // larger one wraps silently (a 256 MiB offset into a gradient bucket
  // became 256 MiB before it). Offsets beyond it go as a value.
  constexpr int64_t kLargestConstant =
      (int64_t(1) << (LLVM::kGEPConstantBitWidth - 1)) - 1;
  if (bytes > kLargestConstant || bytes < -kLargestConstant)
    return LLVM::GEPOp::create(b, loc, ptr, b.getI8Type(), pointer,
                               ArrayRef<LLVM::GEPArg>{i64(bytes)});
  return LLVM::GEPOp::create(
      b, loc, ptr, b.getI8Type(), pointer,
      ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(bytes)});
}

Value RuntimeCallEmitter::pointerArray(ValueRange pointers) {
  auto type = LLVM::LLVMArrayType::get(ptr, pointers.size());
  Value slot;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfterValue(allocaCount);
    slot = LLVM::AllocaOp::create(b, loc, ptr, type, allocaCount, 8);
  }
  for (auto [i, pointer] : llvm::enumerate(pointers)) {
    Value address =
        LLVM::GEPOp::create(b, loc, ptr, ptr, slot,
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    LLVM::StoreOp::create(b, loc, pointer, address);
  }
  return slot;
}

Value RuntimeCallEmitter::arrayElement(Value array, int64_t index) {
  Value address = LLVM::GEPOp::create(b, loc, ptr, ptr, array,
                                      ArrayRef<LLVM::GEPArg>{index});
  return LLVM::LoadOp::create(b, loc, ptr, address);
}

void RuntimeCallEmitter::checkedCall(StringRef name, ValueRange args) {
  LLVM::LLVMFuncOp fn = declare(name, i32Type, args.getTypes());
  Value status = LLVM::CallOp::create(b, loc, fn, args).getResult();
  Value failed =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, status, i32(0));
  Block *current = b.getInsertionBlock();
  Block *next =
      b.createBlock(current->getParent(), std::next(current->getIterator()));
  b.setInsertionPointToEnd(current);
  LLVM::CondBrOp::create(b, loc, failed, errorBlock, ValueRange{status}, next,
                         ValueRange{});
  b.setInsertionPointToEnd(next);
}

Value RuntimeCallEmitter::callI32(StringRef name, ValueRange args) {
  LLVM::LLVMFuncOp fn = declare(name, i32Type, args.getTypes());
  return LLVM::CallOp::create(b, loc, fn, args).getResult();
}

void RuntimeCallEmitter::call(StringRef name, ValueRange args) {
  LLVM::LLVMFuncOp fn =
      declare(name, LLVM::LLVMVoidType::get(b.getContext()), args.getTypes());
  LLVM::CallOp::create(b, loc, fn, args);
}
