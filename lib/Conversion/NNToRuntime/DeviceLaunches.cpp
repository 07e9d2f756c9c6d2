//===- DeviceLaunches.cpp - the runtime calls of generated CUDA kernels ---===//

#include "DeviceLaunches.h"

#include "metac/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace metac;

std::pair<StringAttr, StringAttr>
lowering::deviceModuleOf(nn::FusedOp op, DictionaryAttr device) {
  auto module = op->getParentOfType<ModuleOp>();
  auto kernel = device.getAs<FlatSymbolRefAttr>("kernel");
  auto all = module->getAttrOfType<DictionaryAttr>(kDeviceKernelsAttr);
  auto launches = device.getAs<ArrayAttr>("launches");
  StringAttr ptx =
      kernel && all ? all.getAs<StringAttr>(kernel.getValue()) : StringAttr();
  auto first = launches && !launches.empty()
                   ? dyn_cast<DictionaryAttr>(launches[0])
                   : DictionaryAttr();
  StringAttr entry = first ? first.getAs<StringAttr>("entry") : StringAttr();
  if (!ptx || !entry)
    return {};
  return {ptx, entry};
}

LogicalResult lowering::emitDeviceLaunches(nn::FusedOp op,
                                           DictionaryAttr device,
                                           RuntimeCallEmitter &emit,
                                           ArrayRef<Value> known) {
  StringAttr ptx = deviceModuleOf(op, device).first;
  auto launches = device.getAs<ArrayAttr>("launches");
  auto temporaries = device.getAs<DenseI64ArrayAttr>("temporaries");
  if (!ptx || !temporaries)
    return op.emitOpError("has a malformed ") << kDeviceKernelAttr;
  // Temporaries come from the scratch arena, in whole floats.
  SmallVector<Value> buffers(known);
  SmallVector<std::pair<Value, int64_t>> scratch;
  for (int64_t bytes : temporaries.asArrayRef()) {
    int64_t floats = (bytes + 3) / 4;
    Value d = emit.descriptor(
        RankedTensorType::get({floats}, Float32Type::get(op.getContext())));
    scratch.push_back({d, floats * 4});
    buffers.push_back(emit.dataOf(d));
  }
  Value code = emit.cString(ptx.getValue());
  for (Attribute attribute : launches) {
    auto launch = dyn_cast<DictionaryAttr>(attribute);
    auto entry = launch ? launch.getAs<StringAttr>("entry") : StringAttr();
    auto blocks = launch ? launch.getAs<IntegerAttr>("blocks") : IntegerAttr();
    auto threads =
        launch ? launch.getAs<IntegerAttr>("threads") : IntegerAttr();
    auto arguments = launch ? launch.getAs<DenseI64ArrayAttr>("arguments")
                            : DenseI64ArrayAttr();
    if (!entry || !blocks || !threads || !arguments)
      return op.emitOpError("has a malformed launch in ") << kDeviceKernelAttr;
    SmallVector<Value> pointers;
    for (int64_t index : arguments.asArrayRef()) {
      if (index < 0 || index >= static_cast<int64_t>(buffers.size()))
        return op.emitOpError("launches a kernel on buffer ")
               << index << " of " << buffers.size();
      pointers.push_back(buffers[index]);
    }
    emit.checkedCall("metart_launch_device_kernel",
                     {emit.context(), code, emit.cString(entry.getValue()),
                      emit.i64(blocks.getInt()), emit.i64(threads.getInt()),
                      emit.pointerArray(pointers),
                      emit.i64(static_cast<int64_t>(pointers.size()))});
  }
  for (auto [d, bytes] : scratch)
    emit.call("metart_scratch_free",
              {emit.context(), emit.dataOf(d), emit.i64(bytes)});
  return success();
}
