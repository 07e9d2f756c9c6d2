//===- GenerateKernels.cpp - compile nn.fused bodies into LLVM functions --===//
//
// Each `nn.fused` body becomes `func.func @__metac_kernel_N(memref...)`:
// its inputs read through `bufferization.to_tensor`, its ops built as
// `linalg.generic` (NNToLinalg.h), its results materialised in the output
// buffers. The kernels are gathered in a nested module and compiled there
// by upstream passes only:
//
//   linalg elementwise fusion, canonicalisation, CSE
//   -> empty-tensor elimination, one-shot bufferisation (results written in
//      place into the output buffers), buffer deallocation
//   -> linalg to loops, affine and scf to cf
//   -> math (intrinsics, else libm), arith, cf, memref, func to LLVM (bare
//      pointers: a kernel takes one `ptr` per input, then per result)
//
// and then moved into the module. LLVM's loop vectoriser, which the JIT and
// `metac -o` run at -O2, vectorises the loops.
//
//===----------------------------------------------------------------------===//

#include "metac/Conversion/Passes.h"

#include "DegenerateProducts.h"
#include "DeviceKernels.h"
#include "NNToLinalg.h"

#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Dialect/NN/Transforms/DecomposeNorms.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include <algorithm>

namespace metac {
#define GEN_PASS_DEF_GENERATEFUSEDKERNELS
#include "metac/Conversion/Passes.h.inc"
} // namespace metac

using namespace mlir;
using namespace metac;

namespace {

/// Elements of work per slice below which splitting does not pay for
/// waking a thread (as the runtime's elementwise grain).
constexpr int64_t kSliceElements = 32768;
/// Slices at most: enough to balance the threads of one node.
constexpr int64_t kMaxSlices = 64;

/// How a group is split along its leading dimension: `chunks` slices, and
/// which inputs every slice reads whole (broadcast along that dimension).
struct SlicePlan {
  int64_t chunks = 1;
  SmallVector<bool> replicated;
};

int64_t leadingSize(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.getRank() > 0 ? tensor.getDimSize(0) : -1;
}

bool broadcastsAlongLead(Operation *op) {
  auto spread = dyn_cast<nn::BroadcastOp>(op);
  return spread && llvm::is_contained(spread.getDimensions(), 0);
}

/// Splits the group when every value has the same leading size D, except
/// inputs that only broadcasts along the leading dimension read.
SlicePlan planSlices(nn::FusedOp fused) {
  SlicePlan unsplit;
  unsplit.replicated.assign(fused.getInputs().size(), false);
  Block &body = fused.getBody().front();
  int64_t lead = leadingSize(fused.getResult(0).getType());
  if (lead <= 1)
    return unsplit;
  SlicePlan plan = unsplit;
  int64_t rowElements = 0;
  for (Operation &op : body.without_terminator()) {
    auto type = cast<RankedTensorType>(op.getResult(0).getType());
    if (leadingSize(type) != lead)
      return unsplit;
    rowElements = std::max(rowElements, type.getNumElements() / lead);
    if (broadcastsAlongLead(&op)) {
      if (!isa<BlockArgument>(op.getOperand(0)))
        return unsplit;
      continue;
    }
    for (Value operand : op.getOperands())
      if (leadingSize(operand.getType()) != lead)
        return unsplit;
  }
  for (BlockArgument argument : body.getArguments()) {
    bool alongLead = llvm::any_of(argument.getUsers(), broadcastsAlongLead);
    if (!alongLead)
      continue;
    if (!llvm::all_of(argument.getUsers(), broadcastsAlongLead))
      return unsplit;
    plan.replicated[argument.getArgNumber()] = true;
  }
  int64_t wanted = std::clamp<int64_t>(lead * rowElements / kSliceElements, 1,
                                       std::min(lead, kMaxSlices));
  // Equal slices: one kernel serves them all.
  int64_t chunks = wanted;
  while (lead % chunks != 0)
    --chunks;
  plan.chunks = chunks;
  return plan;
}

/// `type` with its leading dimension divided by `chunks`.
Type sliceOf(Type type, int64_t chunks) {
  auto tensor = cast<RankedTensorType>(type);
  if (chunks == 1)
    return tensor;
  SmallVector<int64_t> shape(tensor.getShape());
  shape[0] /= chunks;
  return RankedTensorType::get(shape, tensor.getElementType());
}

MemRefType bufferOf(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

/// Builds `name`'s kernel in `kernels` from the body of `fused`: one slice
/// of `plan`.
func::FuncOp buildKernel(OpBuilder &b, nn::FusedOp fused, StringRef name,
                         const SlicePlan &plan) {
  Location loc = fused.getLoc();
  SmallVector<Type> arguments;
  for (auto [index, t] : llvm::enumerate(fused.getInputs().getTypes()))
    arguments.push_back(
        bufferOf(plan.replicated[index] ? t : sliceOf(t, plan.chunks)));
  for (Type t : fused.getResultTypes())
    arguments.push_back(bufferOf(sliceOf(t, plan.chunks)));
  auto function = func::FuncOp::create(
      b, loc, name, b.getFunctionType(arguments, TypeRange{}));
  Block *entry = function.addEntryBlock();
  OpBuilder body = OpBuilder::atBlockBegin(entry);
  Block &group = fused.getBody().front();
  IRMapping mapping;
  for (auto [index, argument] : llvm::enumerate(group.getArguments())) {
    Value buffer = entry->getArgument(index);
    Type tensor = memref::getTensorTypeFromMemRefType(buffer.getType());
    mapping.map(argument, bufferization::ToTensorOp::create(
                              body, loc, tensor, buffer, /*restrict=*/true,
                              /*writable=*/false));
  }
  for (Operation &op : group.without_terminator()) {
    Type type = sliceOf(op.getResult(0).getType(), plan.chunks);
    // A splat constant (batch norm's epsilon, once decomposed) fills its
    // tensor.
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto splat = cast<SplatElementsAttr>(constant.getValue());
      auto tensor = cast<RankedTensorType>(type);
      Value scalar = arith::ConstantOp::create(
          body, loc, cast<TypedAttr>(splat.getSplatValue<Attribute>()));
      Value empty = tensor::EmptyOp::create(body, loc, tensor.getShape(),
                                            tensor.getElementType());
      mapping.map(op.getResult(0),
                  linalg::FillOp::create(body, loc, scalar, empty).result());
      continue;
    }
    SmallVector<Value> operands;
    for (Value v : op.getOperands())
      operands.push_back(mapping.lookup(v));
    mapping.map(op.getResult(0),
                fusion::buildLinalg(body, &op, operands, type));
  }
  auto yield = cast<nn::YieldOp>(group.getTerminator());
  unsigned outputs = fused.getInputs().size();
  for (auto [index, value] : llvm::enumerate(yield.getValues())) {
    auto materialize = bufferization::MaterializeInDestinationOp::create(
        body, loc, mapping.lookup(value), entry->getArgument(outputs + index));
    materialize.setRestrict(true);
    materialize.setWritable(true);
  }
  func::ReturnOp::create(body, loc);
  return function;
}

/// What makes two kernels interchangeable: the printed function (argument
/// types, body) and which inputs the thunk passes whole.
std::string kernelKey(func::FuncOp kernel, const SlicePlan &plan) {
  std::string key;
  llvm::raw_string_ostream os(key);
  for (bool whole : plan.replicated)
    os << (whole ? 'w' : 's');
  kernel.print(os, OpPrintingFlags().printGenericOpForm());
  return key;
}

/// Whether a producer is cheap enough to recompute in each consumer: no
/// transcendental (math dialect) op in its body.
bool isCheap(Operation *producer) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(producer);
  if (!generic)
    return false;
  WalkResult walk = generic.getBody()->walk([](Operation *op) {
    return isa<math::MathDialect>(op->getDialect()) ? WalkResult::interrupt()
                                                    : WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// Fuses elementwise producers into their consumers, also producers with
/// other uses when they are cheap (upstream's pass keeps those apart): an
/// arithmetic map is cheaper to recompute than to write and read back, and
/// a producer whose value the group returns becomes one more result of the
/// fused loop. A group of maps becomes one loop nest that reads each input
/// once; a transcendental used twice is computed once.
LogicalResult fuseProducers(ModuleOp kernels) {
  MLIRContext *context = kernels.getContext();
  RewritePatternSet patterns(context);
  linalg::populateElementwiseOpsFusionPatterns(
      patterns, [](OpOperand *operand) {
        Operation *producer = operand->get().getDefiningOp();
        return producer && (producer->hasOneUse() || isCheap(producer));
      });
  linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
  tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
  return applyPatternsGreedily(kernels, std::move(patterns));
}

/// Maximal runs of adjacent loop dimensions of one kind that every operand
/// indexes contiguously (the last two of a 28x28 image, all of an
/// elementwise map): collapsed into one, so that the innermost loop is long
/// and LLVM vectorises it without short remainders.
SmallVector<ReassociationIndices> collapsibleRuns(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<ReassociationIndices> runs;
  ReassociationIndices run = {0};
  auto close = [&] {
    if (run.size() > 1)
      runs.push_back(run);
  };
  for (int64_t d = 1; d < static_cast<int64_t>(iterators.size()); ++d) {
    ReassociationIndices longer = run;
    longer.push_back(d);
    if (iterators[d] == iterators[d - 1] &&
        linalg::areDimSequencesPreserved(maps, {longer})) {
      run = longer;
      continue;
    }
    close();
    run = {d};
  }
  close();
  return runs;
}

LogicalResult collapseLoops(ModuleOp kernels) {
  MLIRContext *context = kernels.getContext();
  RewritePatternSet patterns(context);
  linalg::populateCollapseDimensions(patterns, collapsibleRuns);
  return applyPatternsGreedily(kernels, std::move(patterns));
}

void buildKernelPipeline(OpPassManager &pm) {
  OpPassManager &perFunction = pm.nest<func::FuncOp>();
  perFunction.addPass(createCanonicalizerPass());
  perFunction.addPass(createCSEPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = false;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Folds the views collapsing made back into the result buffers, and the
  // copies of a buffer onto itself that are left.
  pm.addPass(createCanonicalizerPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.nest<func::FuncOp>().addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions functions;
  functions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(functions));
  pm.addPass(createReconcileUnrealizedCastsPass());
}

/// Records the device kernels: their PTX in the module's
/// `metac.device_kernels` dictionary (one entry per kernel, whichever
/// groups share it), and on each group `metac.device` = {kernel, launches,
/// temporaries}.
void attachDeviceKernels(
    ModuleOp module, const fusion::DeviceKernels &compiled,
    ArrayRef<std::pair<nn::FusedOp, std::string>> deviceOfGroup) {
  Builder b(module.getContext());
  SmallVector<NamedAttribute> ptx;
  for (const auto &entry : compiled.kernels)
    ptx.push_back(
        b.getNamedAttr(entry.getKey(), b.getStringAttr(entry.getValue().ptx)));
  if (!compiled.unavailable.empty())
    module->setAttr(kDeviceKernelsUnavailableAttr,
                    b.getStringAttr(compiled.unavailable));
  if (ptx.empty())
    return;
  module->setAttr(kDeviceKernelsAttr, b.getDictionaryAttr(ptx));
  for (auto &[fused, name] : deviceOfGroup) {
    auto found = compiled.kernels.find(name);
    if (found == compiled.kernels.end())
      continue;
    const fusion::DeviceKernel &kernel = found->getValue();
    SmallVector<Attribute> launches;
    for (const fusion::DeviceLaunch &launch : kernel.launches)
      launches.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("entry", b.getStringAttr(launch.entry)),
           b.getNamedAttr("blocks", b.getI64IntegerAttr(launch.blocks)),
           b.getNamedAttr("threads", b.getI64IntegerAttr(launch.threads)),
           b.getNamedAttr("arguments",
                          b.getDenseI64ArrayAttr(launch.arguments))}));
    fused->setAttr(
        kDeviceKernelAttr,
        b.getDictionaryAttr(
            {b.getNamedAttr("kernel",
                            FlatSymbolRefAttr::get(b.getContext(), name)),
             b.getNamedAttr("launches", b.getArrayAttr(launches)),
             b.getNamedAttr("temporaries",
                            b.getDenseI64ArrayAttr(kernel.temporaryBytes))}));
  }
}

struct GenerateFusedKernels
    : metac::impl::GenerateFusedKernelsBase<GenerateFusedKernels> {
  using GenerateFusedKernelsBase::GenerateFusedKernelsBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<affine::AffineDialect, arith::ArithDialect,
                    bufferization::BufferizationDialect, cf::ControlFlowDialect,
                    func::FuncDialect, linalg::LinalgDialect, LLVM::LLVMDialect,
                    math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                    tensor::TensorDialect>();
    arith::registerBufferizableOpInterfaceExternalModels(registry);
    bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
        registry);
    linalg::registerBufferizableOpInterfaceExternalModels(registry);
    tensor::registerBufferizableOpInterfaceExternalModels(registry);
    memref::registerAllocationOpInterfaceExternalModels(registry);
    scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
    fusion::registerDeviceKernelDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<nn::FusedOp> groups;
    module.walk([&](nn::FusedOp fused) { groups.push_back(fused); });
    if (groups.empty())
      return;
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto kernels = ModuleOp::create(b, module.getLoc(), "metac_kernels");
    ModuleOp deviceKernels;
    bool device = this->device || module->hasAttr(kGenerateDeviceKernelsAttr);
    if (device)
      deviceKernels =
          ModuleOp::create(b, module.getLoc(), "metac_device_kernels");
    // Groups that compute the same thing on the same types (the unrolled
    // inner steps, the evaluation functions' copies of the step) share one
    // kernel: ConvNet MAML's 399 groups need 56 (JIT compile time 23 -> 9 s).
    llvm::StringMap<std::string> kernelOfKey, deviceOfKey;
    SmallVector<std::pair<nn::FusedOp, std::string>> deviceOfGroup;
    for (nn::FusedOp fused : groups) {
      std::string name = (kFusedKernelPrefix + Twine(kernelOfKey.size())).str();
      // The kernel computes products with a unit dimension and batch norms
      // as the maps and sums they are; the group itself keeps them, for the
      // op-by-op path, where they stay library calls.
      OpBuilder scratch(fused);
      auto decomposed = cast<nn::FusedOp>(scratch.clone(*fused));
      fusion::decomposeProductsWithUnitDimension(decomposed.getBody().front());
      nn::decomposeBatchNorms(decomposed, [](nn::BatchNormOp) { return true; });
      SlicePlan plan = planSlices(decomposed);
      b.setInsertionPointToEnd(kernels.getBody());
      func::FuncOp kernel = buildKernel(b, decomposed, "", plan);
      auto [known, added] =
          kernelOfKey.try_emplace(kernelKey(kernel, plan), name);
      if (added)
        kernel.setSymName(name);
      else
        kernel.erase();
      fused.setKernelAttr(FlatSymbolRefAttr::get(&getContext(), known->second));
      fused.setChunks(plan.chunks);
      fused.setReplicated(plan.replicated);
      if (device) {
        // A GPU runs the whole group in one grid: no slices.
        SlicePlan whole;
        whole.replicated.assign(plan.replicated.size(), false);
        b.setInsertionPointToEnd(deviceKernels.getBody());
        func::FuncOp deviceKernel = buildKernel(b, decomposed, "", whole);
        std::string deviceName =
            (kDeviceKernelPrefix + Twine(deviceOfKey.size())).str();
        auto [same, fresh] =
            deviceOfKey.try_emplace(kernelKey(deviceKernel, whole), deviceName);
        if (fresh)
          deviceKernel.setSymName(deviceName);
        else
          deviceKernel.erase();
        deviceOfGroup.push_back({fused, same->second});
      }
      decomposed.erase();
    }
    // Results are written where the kernel's result buffers are (empty
    // tensors replaced by them) before loops are collapsed: the reshapes
    // collapsing adds would hide the destinations.
    auto prepare = [&](ModuleOp target) {
      OpPassManager destinations(ModuleOp::getOperationName());
      destinations.addPass(bufferization::createEmptyTensorEliminationPass());
      return success(succeeded(fuseProducers(target)) &&
                     succeeded(runPipeline(destinations, target)) &&
                     succeeded(collapseLoops(target)));
    };
    if (failed(prepare(kernels)) ||
        (deviceKernels && failed(prepare(deviceKernels)))) {
      kernels.emitError("fusing the kernels' loops failed");
      return signalPassFailure();
    }
    if (deviceKernels) {
      fusion::DeviceKernels compiled = fusion::compileDeviceKernels(
          deviceKernels, [&](OpPassManager &pm, Operation *op) {
            return runPipeline(pm, op);
          });
      deviceKernels.erase();
      attachDeviceKernels(module, compiled, deviceOfGroup);
    }
    OpPassManager pm(ModuleOp::getOperationName());
    buildKernelPipeline(pm);
    if (failed(runPipeline(pm, kernels))) {
      kernels.emitError("generating the fused kernels failed");
      return signalPassFailure();
    }
    for (Operation &op : llvm::make_early_inc_range(*kernels.getBody()))
      op.moveBefore(kernels);
    kernels.erase();
  }
};

} // namespace
