//===- DeviceKernels.cpp - compile fused groups into CUDA kernels ---------===//
//
// Upstream passes do the work; this file orders them and reads the result:
//
//   one-shot bufferisation (results written into the result buffers)
//   -> temporaries become arguments (the runtime's scratch arena holds
//      them: no allocation inside a step that a CUDA graph replays)
//   -> sums over more than 32 terms per output become block reductions
//      (BlockReductions.h)
//   -> linalg to parallel loops (other sums stay serial loops per thread)
//   -> each loop nest's parallel dimensions collapsed into one and tiled
//      by the block size; tiles mapped to blocks, elements to threads
//   -> parallel loops to gpu.launch, kernel outlining
//   -> per kernel function: gpu to nvvm (bare pointers), NVPTX via
//      gpu-module-to-binary (PTX, libdevice linked for math functions)
//
// and the host side of each function, a list of gpu.launch_func ops, is
// read into a launch plan for the runtime.
//
//===----------------------------------------------------------------------===//

#include "DeviceKernels.h"
#include "BlockReductions.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <numeric>

using namespace mlir;
using namespace metac;
using namespace metac::fusion;

namespace {

/// Threads per block: eight warps, the usual choice for memory-bound maps.
constexpr int64_t kBlockThreads = 256;
/// The longest reduction a thread runs serially. Longer ones (batch norm's
/// sums over samples and pixels) read memory uncoalesced, one row per
/// thread, over few threads (on an H100 they made ConvNet MAML 3.5x slower
/// than the runtime's split reductions): they become block reductions.
constexpr int64_t kLongestSerial = 32;
/// PTX for this architecture runs, compiled by the driver, on it and every
/// later one (A100, H100, ...).
constexpr llvm::StringLiteral kChip = "sm_80";

std::optional<int64_t> tripCount(OpFoldResult lower, OpFoldResult upper,
                                 OpFoldResult step) {
  auto l = getConstantIntValue(lower), u = getConstantIntValue(upper),
       s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  return (*u - *l + *s - 1) / *s;
}

/// The product of the trip counts of the serial loops around the deepest
/// operation in `loop`: the work of one thread.
std::optional<int64_t> serialWork(scf::ParallelOp loop) {
  int64_t most = 1;
  bool known = true;
  loop.walk([&](Operation *op) {
    int64_t work = 1;
    for (auto parent = op->getParentOfType<scf::ForOp>();
         parent && loop->isProperAncestor(parent);
         parent = parent->getParentOfType<scf::ForOp>()) {
      auto trips = tripCount(parent.getLowerBound(), parent.getUpperBound(),
                             parent.getStep());
      if (!trips) {
        known = false;
        return;
      }
      work *= *trips;
    }
    most = std::max(most, work);
  });
  if (!known)
    return std::nullopt;
  return most;
}

std::optional<int64_t> parallelWork(scf::ParallelOp loop) {
  int64_t work = 1;
  for (auto [l, u, s] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    auto trips = tripCount(l, u, s);
    if (!trips)
      return std::nullopt;
    work *= *trips;
  }
  return work;
}

int64_t bytesOf(MemRefType type) {
  return type.getNumElements() *
         static_cast<int64_t>(type.getElementTypeBitWidth() / 8);
}

/// Gives each use of a filled tensor its own fill: bufferised, each sum
/// then starts from a fill of its own result buffer (which a block
/// reduction folds), not from a copy of a shared one.
void fillPerUse(ModuleOp kernels) {
  kernels.walk([](linalg::FillOp fill) {
    if (!fill.hasPureTensorSemantics())
      return;
    OpBuilder b(fill);
    for (OpOperand &use : llvm::make_early_inc_range(
             llvm::drop_begin(fill.getResult(0).getUses())))
      use.set(b.clone(*fill)->getResult(0));
  });
}

/// Temporaries (static allocations in the entry block) become trailing
/// arguments; copies become linalg copies, which become loops like the
/// rest. Fails on anything else that allocates.
LogicalResult hoistTemporaries(func::FuncOp function,
                               SmallVector<int64_t> &temporaryBytes) {
  SmallVector<memref::AllocOp> allocations;
  SmallVector<memref::CopyOp> copies;
  bool unsupported = false;
  function.walk([&](Operation *op) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op))
      allocations.push_back(alloc);
    else if (auto copy = dyn_cast<memref::CopyOp>(op))
      copies.push_back(copy);
    else if (isa<memref::AllocaOp, memref::DeallocOp>(op))
      unsupported = true;
  });
  if (unsupported)
    return failure();
  for (memref::CopyOp copy : copies) {
    OpBuilder b(copy);
    linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    copy.erase();
  }
  Block &entry = function.getBody().front();
  for (memref::AllocOp alloc : allocations) {
    MemRefType type = alloc.getType();
    if (alloc->getBlock() != &entry || !type.hasStaticShape() ||
        !type.getLayout().isIdentity() || type.getElementTypeBitWidth() % 8)
      return failure();
    unsigned index = function.getNumArguments();
    if (failed(function.insertArgument(index, type, {}, alloc.getLoc())))
      return failure();
    alloc.getResult().replaceAllUsesWith(function.getArgument(index));
    alloc.erase();
    temporaryBytes.push_back(bytesOf(type));
  }
  return success();
}

/// The buffer a memref value views (through reshapes and casts).
Value rootOf(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp, memref::CastOp>(
            op))
      break;
    value = op->getOperand(0);
  }
  return value;
}

/// Each buffer a loop nest loads from or stores to, with whether every
/// access indexes it by exactly the loop's induction variables.
struct Accesses {
  llvm::DenseMap<Value, bool> pointwise; // memref value -> identity access
  llvm::DenseSet<Value> written;
};

Accesses accessesOf(scf::ParallelOp loop) {
  Accesses result;
  SmallVector<Value> ivs(loop.getInductionVars());
  auto note = [&](Value memref, ValueRange indices) {
    bool identity = llvm::equal(indices, ivs);
    auto [it, fresh] = result.pointwise.try_emplace(memref, identity);
    if (!fresh)
      it->second = it->second && identity;
  };
  loop.walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op))
      note(load.getMemRef(), load.getIndices());
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      note(store.getMemRef(), store.getIndices());
      result.written.insert(rootOf(store.getMemRef()));
    }
  });
  return result;
}

/// Whether `second` may run, iteration by iteration, inside `first`: both
/// loop over the same iterations, and every buffer one writes and the other
/// touches is accessed only at the iteration's own element, through the
/// same view, in both.
bool fusable(scf::ParallelOp first, scf::ParallelOp second) {
  auto same = [](ValueRange a, ValueRange b) {
    return llvm::equal(a, b, [](Value x, Value y) {
      std::optional<int64_t> cx = getConstantIntValue(x);
      return cx && cx == getConstantIntValue(y);
    });
  };
  if (!same(first.getLowerBound(), second.getLowerBound()) ||
      !same(first.getUpperBound(), second.getUpperBound()) ||
      !same(first.getStep(), second.getStep()) || first.getNumReductions() ||
      second.getNumReductions() || isBlockReduction(first) ||
      isBlockReduction(second))
    return false;
  Accesses a = accessesOf(first), b = accessesOf(second);
  auto conflicts = [](const Accesses &writer, const Accesses &other) {
    for (auto [memref, identity] : other.pointwise) {
      if (!writer.written.contains(rootOf(memref)))
        continue;
      // Every view of the written buffer, in both loops, must be this one
      // and indexed pointwise.
      for (const Accesses *side : {&writer, &other})
        for (auto [view, pointwise] : side->pointwise)
          if (rootOf(view) == rootOf(memref) && (view != memref || !pointwise))
            return true;
    }
    return false;
  };
  return !conflicts(a, b) && !conflicts(b, a);
}

/// Merges adjacent top-level parallel loops over the same iterations (a
/// sum's initialisation into the sum, a map into the loop that computes
/// its operand): one launch instead of several. Upstream's
/// scf-parallel-loop-fusion does not look into the serial loops of sums.
void fuseSiblingLoops(func::FuncOp function) {
  scf::ParallelOp previous;
  for (Operation &op : llvm::make_early_inc_range(function.getOps())) {
    auto loop = dyn_cast<scf::ParallelOp>(op);
    if (!loop) {
      // Constants and views may sit between loops; anything else ends a run.
      if (!isa<arith::ConstantOp, memref::CollapseShapeOp,
               memref::ExpandShapeOp, memref::CastOp>(op))
        previous = nullptr;
      continue;
    }
    if (!previous || !fusable(previous, loop)) {
      previous = loop;
      continue;
    }
    // The constants and views between the loops move above the first, where
    // the merged body can use them.
    for (Operation *between = previous->getNextNode(); between != loop;) {
      Operation *next = between->getNextNode();
      between->moveBefore(previous);
      between = next;
    }
    Block *into = previous.getBody();
    IRMapping mapping;
    mapping.map(loop.getInductionVars(), previous.getInductionVars());
    OpBuilder b(into->getTerminator());
    for (Operation &inner : loop.getBody()->without_terminator())
      b.clone(inner, mapping);
    loop.erase();
  }
}

/// Promotes one accumulator of `loop` to a loop-carried value, if it has
/// one: a store and loads, directly in the body and before the store, of
/// one element whose indices are loop-invariant, that nothing else in the
/// loop touches. A sum then adds in a register instead of a round trip
/// through memory per term (the generated pointers may alias, so LLVM does
/// not promote it itself).
bool promoteAccumulator(scf::ForOp loop) {
  Block *body = loop.getBody();
  for (Operation &op : *body) {
    auto store = dyn_cast<memref::StoreOp>(op);
    if (!store || !loop.isDefinedOutsideOfLoop(store.getMemRef()) ||
        !llvm::all_of(store.getIndices(), [&](Value index) {
          return loop.isDefinedOutsideOfLoop(index);
        }))
      continue;
    Value memref = store.getMemRef(), root = rootOf(memref);
    SmallVector<memref::LoadOp> loads;
    bool alone = true;
    loop.walk([&](Operation *inner) {
      auto load = dyn_cast<memref::LoadOp>(inner);
      Value touched;
      if (load)
        touched = load.getMemRef();
      else if (auto other = dyn_cast<memref::StoreOp>(inner))
        touched = other.getMemRef();
      if (!touched || inner == store || rootOf(touched) != root)
        return;
      if (load && load->getBlock() == body && touched == memref &&
          llvm::equal(load.getIndices(), store.getIndices()) &&
          load->isBeforeInBlock(store))
        loads.push_back(load);
      else
        alone = false;
    });
    if (!alone)
      continue;
    // The loop is replaced by one with one more result: its location is
    // kept before.
    Location loc = loop.getLoc();
    IRRewriter rewriter(loop.getContext());
    rewriter.setInsertionPoint(loop);
    Value initial =
        memref::LoadOp::create(rewriter, loc, memref, store.getIndices());
    SmallVector<Value> indices(store.getIndices());
    auto promoted =
        cast<LoopLikeOpInterface>(loop.getOperation())
            .replaceWithAdditionalYields(
                rewriter, initial,
                /*replaceInitOperandUsesInLoop=*/false,
                [&](OpBuilder &, Location, ArrayRef<BlockArgument> carried) {
                  for (memref::LoadOp load : loads) {
                    load.getResult().replaceAllUsesWith(carried.front());
                    load.erase();
                  }
                  Value last = store.getValue();
                  store.erase();
                  return SmallVector<Value>{last};
                });
    if (failed(promoted))
      return false;
    rewriter.setInsertionPointAfter(*promoted);
    memref::StoreOp::create(rewriter, loc, promoted->getLoopResults()->back(),
                            memref, indices);
    return true;
  }
  return false;
}

/// Promotes the accumulators of every serial loop, innermost first (an
/// outer loop's accumulator appears once its inner loop's is promoted).
void accumulateInRegisters(func::FuncOp function) {
  bool changed = true;
  while (changed) {
    changed = false;
    function.walk([&](scf::ForOp loop) {
      if (promoteAccumulator(loop)) {
        changed = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
  }
}

/// Collapses each top-level loop nest's parallel dimensions into one and
/// tiles it by the block size. Fails when a nest would leave the GPU idle
/// or is not a parallel loop with constant bounds.
LogicalResult shapeForThreads(func::FuncOp function) {
  IRRewriter rewriter(function.getContext());
  for (Operation &op : llvm::make_early_inc_range(function.getOps())) {
    if (isa<scf::ForOp>(op))
      return failure(); // a reduction to a scalar: one thread's work
    auto loop = dyn_cast<scf::ParallelOp>(op);
    if (!loop)
      continue;
    if (isBlockReduction(loop)) {
      mapBlockReduction(loop); // shaped as built
      continue;
    }
    std::optional<int64_t> threads = parallelWork(loop);
    std::optional<int64_t> serial = serialWork(loop);
    if (!threads || !serial || *serial > kLongestSerial)
      return failure();
    if (loop.getNumLoops() > 1) {
      // The collapsed loop (its bound computed by new ops, not folded yet)
      // takes the old one's place: the first loop after what preceded it.
      Operation *before = loop->getPrevNode();
      std::vector<unsigned> all(loop.getNumLoops());
      std::iota(all.begin(), all.end(), 0u);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {all});
      Operation *next =
          before ? before->getNextNode() : &function.getBody().front().front();
      while (next && !isa<scf::ParallelOp>(next))
        next = next->getNextNode();
      if (!next)
        return failure();
      loop = cast<scf::ParallelOp>(next);
    }
    int64_t block = std::min(kBlockThreads, (*threads + 31) / 32 * 32);
    scf::tileParallelLoop(loop, {block}, /*noMinMaxBounds=*/true);
  }
  return success();
}

/// The function argument `value` views, when it views one whole (through
/// reshapes of contiguous buffers).
std::optional<unsigned> argumentViewed(Value value) {
  while (true) {
    if (auto argument = dyn_cast<BlockArgument>(value))
      return argument.getArgNumber();
    Operation *op = value.getDefiningOp();
    if (isa_and_nonnull<memref::CollapseShapeOp, memref::ExpandShapeOp,
                        memref::CastOp>(op)) {
      value = op->getOperand(0);
      continue;
    }
    return std::nullopt;
  }
}

/// Reads the launches of an outlined function. Fails when the host side
/// does anything else.
FailureOr<SmallVector<DeviceLaunch>> readLaunches(func::FuncOp function) {
  SmallVector<DeviceLaunch> launches;
  for (Operation &op : function.getOps()) {
    if (isa<arith::ConstantOp, memref::CollapseShapeOp, memref::ExpandShapeOp,
            memref::CastOp, func::ReturnOp>(op))
      continue;
    auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
    if (!launch)
      return failure();
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    auto blocks = getConstantIntValue(grid.x),
         threads = getConstantIntValue(block.x);
    if (!blocks || !threads || getConstantIntValue(grid.y) != 1 ||
        getConstantIntValue(grid.z) != 1 || getConstantIntValue(block.y) != 1 ||
        getConstantIntValue(block.z) != 1 || launch.hasClusterSize() ||
        launch.getDynamicSharedMemorySize())
      return failure();
    DeviceLaunch plan;
    // Outlining names each kernel's module uniquely, not the kernel: the
    // kernels take their modules' names when merged.
    plan.entry = launch.getKernelModuleName().str();
    plan.blocks = *blocks;
    plan.threads = *threads;
    for (Value operand : launch.getKernelOperands()) {
      auto type = dyn_cast<MemRefType>(operand.getType());
      std::optional<unsigned> argument = argumentViewed(operand);
      if (!type || !type.getLayout().isIdentity() || !argument)
        return failure();
      plan.arguments.push_back(*argument);
    }
    launches.push_back(std::move(plan));
  }
  return launches;
}

/// The CUDA toolkit, for libdevice: $CUDA_HOME, else /usr/local/cuda.
std::string toolkitPath() {
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char *value = std::getenv(variable); value && *value)
      return value;
  return "/usr/local/cuda";
}

} // namespace

void metac::fusion::registerDeviceKernelDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect, cf::ControlFlowDialect,
                  scf::SCFDialect, affine::AffineDialect>();
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

DeviceKernels metac::fusion::compileDeviceKernels(ModuleOp kernels,
                                                  PipelineRunner runPipeline) {
  DeviceKernels result;
  MLIRContext *context = kernels.getContext();
  std::string toolkit = toolkitPath();
  SmallString<128> libdevice(toolkit);
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  if (!llvm::sys::fs::exists(libdevice)) {
    result.unavailable =
        "no CUDA toolkit (libdevice) at " + toolkit + " (set CUDA_HOME)";
    return result;
  }
  // Diagnostics of kernels that cannot be compiled for the device are kept
  // apart: those groups run op by op.
  std::string diagnostics;
  ScopedDiagnosticHandler quiet(context, [&](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
      diagnostics += diagnostic.str() + "\n";
    return success();
  });

  OpPassManager tidy(ModuleOp::getOperationName());
  tidy.nest<func::FuncOp>().addPass(createCanonicalizerPass());
  tidy.nest<func::FuncOp>().addPass(createCSEPass());
  OpPassManager bufferize(ModuleOp::getOperationName());
  bufferization::OneShotBufferizePassOptions oneShot;
  oneShot.bufferizeFunctionBoundaries = false;
  bufferize.addPass(bufferization::createOneShotBufferizePass(oneShot));
  bufferize.addPass(createCanonicalizerPass());
  bool tidied = succeeded(runPipeline(tidy, kernels));
  if (tidied)
    fillPerUse(kernels); // after CSE, which would merge the fills again
  if (!tidied || failed(runPipeline(bufferize, kernels))) {
    result.unavailable = "bufferising the kernels failed: " + diagnostics;
    return result;
  }

  llvm::StringMap<SmallVector<int64_t>> temporaries;
  for (auto function : llvm::to_vector(kernels.getOps<func::FuncOp>())) {
    SmallVector<int64_t> bytes;
    if (failed(hoistTemporaries(function, bytes))) {
      function.erase();
      continue;
    }
    temporaries[function.getSymName()] = std::move(bytes);
    reduceAcrossThreads(function, kLongestSerial);
  }
  OpPassManager loops(ModuleOp::getOperationName());
  loops.nest<func::FuncOp>().addPass(createConvertLinalgToParallelLoopsPass());
  loops.nest<func::FuncOp>().addPass(createCanonicalizerPass());

  if (failed(runPipeline(loops, kernels))) {
    result.unavailable = "lowering the kernels to loops failed: " + diagnostics;
    return result;
  }
  for (auto function : llvm::to_vector(kernels.getOps<func::FuncOp>())) {
    fuseSiblingLoops(function);
    accumulateInRegisters(function);
    if (failed(shapeForThreads(function)))
      function.erase();
  }

  OpPassManager launches(ModuleOp::getOperationName());
  launches.nest<func::FuncOp>().addPass(createGpuMapParallelLoopsPass());
  launches.addPass(createConvertParallelLoopToGpuPass());
  launches.addPass(createCanonicalizerPass());
  launches.addPass(createGpuLaunchSinkIndexComputationsPass());
  launches.addPass(createGpuKernelOutliningPass());
  if (failed(runPipeline(launches, kernels))) {
    result.unavailable = "outlining the GPU kernels failed: " + diagnostics;
    return result;
  }

  // Each function's launches, and its kernels gathered in one GPU module
  // (one PTX module per group kernel: a kernel that does not compile takes
  // only its group back to op by op).
  auto target = NVVM::NVVMTargetAttr::get(context, /*optLevel=*/3,
                                          "nvptx64-nvidia-cuda", kChip);
  for (auto function : llvm::to_vector(kernels.getOps<func::FuncOp>())) {
    StringRef name = function.getSymName();
    FailureOr<SmallVector<DeviceLaunch>> plan = readLaunches(function);
    SmallVector<Operation *> modules;
    for (auto launch : function.getOps<gpu::LaunchFuncOp>())
      modules.push_back(
          SymbolTable::lookupSymbolIn(kernels, launch.getKernelModuleName()));
    OpBuilder b = OpBuilder::atBlockEnd(kernels.getBody());
    auto holder = ModuleOp::create(b, function.getLoc());
    holder->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    b.setInsertionPointToEnd(holder.getBody());
    auto merged =
        gpu::GPUModuleOp::create(b, function.getLoc(), (name + "_device").str(),
                                 b.getArrayAttr({target}));
    for (Operation *op : modules) {
      auto module = dyn_cast_or_null<gpu::GPUModuleOp>(op);
      if (!module)
        continue;
      for (Operation &inner : llvm::make_early_inc_range(module.getOps())) {
        if (isa<gpu::GPUFuncOp>(inner))
          SymbolTable::setSymbolName(&inner, module.getSymName());
        inner.moveBefore(merged.getBody(), merged.getBody()->end());
      }
      module.erase();
    }
    function.erase();
    // Block reductions meet in shuffles and shared memory.
    RewritePatternSet allReduce(context);
    populateGpuAllReducePatterns(allReduce);
    populateGpuShufflePatterns(allReduce);
    (void)applyPatternsGreedily(merged, std::move(allReduce));
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createLowerAffinePass());
    pm.addPass(createSCFToControlFlowPass());
    ConvertGpuOpsToNVVMOpsOptions nvvm;
    nvvm.useBarePtrCallConv = true;
    pm.nest<gpu::GPUModuleOp>().addPass(createConvertGpuOpsToNVVMOps(nvvm));
    pm.addPass(createReconcileUnrealizedCastsPass());
    GpuModuleToBinaryPassOptions binary;
    binary.toolkitPath = toolkit;
    binary.compilationTarget = "isa";
    pm.addPass(createGpuModuleToBinaryPass(binary));
    if (failed(plan) || modules.empty() || failed(runPipeline(pm, holder))) {
      holder.erase();
      continue;
    }
    auto binaryOp = *holder.getOps<gpu::BinaryOp>().begin();
    auto object = cast<gpu::ObjectAttr>(binaryOp.getObjects()[0]);
    DeviceKernel &kernel = result.kernels[name];
    kernel.launches = std::move(*plan);
    kernel.temporaryBytes = temporaries[name];
    kernel.ptx = object.getObject().str();
    holder.erase();
  }
  if (result.kernels.empty() && !diagnostics.empty())
    result.unavailable = diagnostics;
  return result;
}
