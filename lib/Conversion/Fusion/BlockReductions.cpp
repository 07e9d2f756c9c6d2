//===- BlockReductions.cpp - long sums across a block's threads -----------===//
//
//   linalg.generic {.., reduction, ..} ins(%x ..) outs(%sum ..)
//     ^bb0(%in.., %out): ... yield addf(%out, term)
//
// becomes
//
//   scf.parallel (%o) = (0) to (outputs)            // blocks
//     scf.parallel (%t) = (0) to (threads)          // threads of a block
//       %part = scf.for %r = %t to terms step threads iter_args(%a = 0)
//         yield addf(%a, term at (%o, %r))
//       %all = gpu.all_reduce add %part uniform
//       scf.if %t == 0 { %sum[%o] = %sum[%o] + %all }
//
// Outputs and terms are the generic's parallel and reduction iterations,
// each flattened in loop order: the innermost summed dimension varies
// fastest between neighbouring threads, so their loads coalesce.
//
//===----------------------------------------------------------------------===//

#include "BlockReductions.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace metac;

namespace {

/// A block's threads: at most eight warps (the all-reduce's shared buffer
/// holds one partial per warp, up to 32)...
constexpr int64_t kMostThreads = 256;
/// ... and no more than give each thread this many terms.
constexpr int64_t kFewestTermsPerThread = 4;

/// The sum in `generic`'s body, `addf(out, term)` yielded, when the body
/// is one: one result on a buffer, read only by that addition.
arith::AddFOp sumOf(linalg::GenericOp generic) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1)
    return {};
  Type element = getElementTypeOrSelf(generic.getDpsInits()[0].getType());
  if (!element.isF32() && !element.isF64())
    return {}; // the shuffles move 32- or 64-bit values
  Block *body = generic.getBlock();
  BlockArgument out = body->getArguments().back();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add || !out.hasOneUse() || !out.getUses().begin()->getOwner() ||
      out.getUses().begin()->getOwner() != add.getOperation())
    return {};
  return add;
}

/// `linear`'s indices over `sizes`, row-major.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<int64_t> sizes) {
  SmallVector<Value> indices(sizes.size());
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i > 0; --i) {
    Value size = arith::ConstantIndexOp::create(b, loc, sizes[i]);
    indices[i] = arith::RemUIOp::create(b, loc, linear, size);
    linear = arith::DivUIOp::create(b, loc, linear, size);
  }
  if (!sizes.empty())
    indices[0] = linear;
  return indices;
}

/// The indices `map` gives at the loop indices `dims`.
SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map,
                             ArrayRef<Value> dims) {
  SmallVector<Value> indices;
  for (unsigned i = 0; i < map.getNumResults(); ++i) {
    AffineExpr expr = map.getResult(i);
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      indices.push_back(dims[dim.getPosition()]);
    else
      indices.push_back(
          affine::AffineApplyOp::create(b, loc, map.getSubMap({i}), dims));
  }
  return indices;
}

/// Adds the term of `generic` at `dims` to `accumulator`: its operands
/// loaded, its body cloned up to the sum.
Value addTerm(OpBuilder &b, Location loc, linalg::GenericOp generic,
              arith::AddFOp sum, ArrayRef<Value> dims, Value accumulator) {
  Block *body = generic.getBlock();
  IRMapping mapping;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    Value operand = input->get(), value = operand;
    if (isa<MemRefType>(operand.getType()))
      value = memref::LoadOp::create(
          b, loc, operand,
          indicesAt(b, loc, generic.getMatchingIndexingMap(input), dims));
    mapping.map(body->getArgument(input->getOperandNumber()), value);
  }
  mapping.map(body->getArguments().back(), accumulator);
  for (Operation &op : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      mapping.map(index.getResult(), dims[index.getDim()]);
      continue;
    }
    b.clone(op, mapping);
  }
  return mapping.lookup(sum.getResult());
}

/// The buffer `view` views (through reshapes and casts).
Value rootOf(Value view) {
  while (Operation *op = view.getDefiningOp()) {
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp, memref::CastOp>(
            op))
      break;
    view = op->getOperand(0);
  }
  return view;
}

/// The linalg.fill that last wrote all of `buffer` before `op`, when what
/// ran since (other linalg ops, views, constants) left the buffer alone.
linalg::FillOp fillBefore(Operation *op, Value buffer) {
  Value root = rootOf(buffer);
  for (Operation *before = op->getPrevNode(); before;
       before = before->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(before);
    if (fill && fill.hasPureBufferSemantics() &&
        fill.getDpsInits()[0] == buffer)
      return fill;
    // Anything that may touch the buffer ends the search: an operand of
    // its root, or one whose root is not an argument (a subview or another
    // view that may alias it).
    if (!isa<linalg::LinalgOp, arith::ConstantOp, memref::CollapseShapeOp,
             memref::ExpandShapeOp, memref::CastOp>(before) ||
        llvm::any_of(before->getOperands(), [&](Value operand) {
          if (!isa<MemRefType>(operand.getType()))
            return false;
          Value other = rootOf(operand);
          return other == root || !isa<BlockArgument>(other);
        }))
      return {};
  }
  return {};
}

/// Rewrites `generic` when it sums more than `longestSerial` terms per
/// output.
void rewriteLongSum(linalg::GenericOp generic, int64_t longestSerial) {
  arith::AddFOp sum = sumOf(generic);
  if (!sum)
    return;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  SmallVector<unsigned> outputDims, termDims;
  SmallVector<int64_t> outputSizes, termSizes;
  int64_t outputs = 1, terms = 1;
  for (auto [dim, iterator] :
       llvm::enumerate(generic.getIteratorTypesArray())) {
    if (ShapedType::isDynamic(ranges[dim]))
      return;
    bool reduced = iterator == utils::IteratorType::reduction;
    (reduced ? termDims : outputDims).push_back(dim);
    (reduced ? termSizes : outputSizes).push_back(ranges[dim]);
    (reduced ? terms : outputs) *= ranges[dim];
  }
  OpOperand *result = generic.getDpsInitOperand(0);
  AffineMap resultMap = generic.getMatchingIndexingMap(result);
  // Each output is one block's alone: the result is indexed by every
  // parallel dimension and by no summed one.
  if (terms <= longestSerial || !resultMap.isProjectedPermutation() ||
      resultMap.getNumResults() != outputDims.size() ||
      llvm::any_of(termDims, [&](unsigned dim) {
        return resultMap.isFunctionOfDim(dim);
      }))
    return;
  int64_t threads = (terms + kFewestTermsPerThread - 1) / kFewestTermsPerThread;
  threads = std::clamp<int64_t>((threads + 31) / 32 * 32, 32, kMostThreads);

  // The sum's initial value, when a fill just wrote it: the first thread
  // stores fill + sum and the fill goes (one launch fewer).
  linalg::FillOp fill = fillBefore(generic, result->get());

  OpBuilder b(generic);
  Location loc = generic.getLoc();
  Type element = sum.getType();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0),
        one = arith::ConstantIndexOp::create(b, loc, 1);
  auto blocks = scf::ParallelOp::create(
      b, loc, ValueRange{zero},
      ValueRange{arith::ConstantIndexOp::create(b, loc, outputs)},
      ValueRange{one}, [&](OpBuilder &b, Location loc, ValueRange block) {
        scf::ParallelOp::create(
            b, loc, ValueRange{zero},
            ValueRange{arith::ConstantIndexOp::create(b, loc, threads)},
            ValueRange{one}, [&](OpBuilder &b, Location loc, ValueRange lane) {
              SmallVector<Value> dims(ranges.size(), zero);
              for (auto [dim, index] : llvm::zip(
                       outputDims, delinearize(b, loc, block[0], outputSizes)))
                dims[dim] = index;
              Value none = arith::ConstantOp::create(
                  b, loc, element, b.getFloatAttr(element, 0.0));
              auto strided = scf::ForOp::create(
                  b, loc, lane[0],
                  arith::ConstantIndexOp::create(b, loc, terms),
                  arith::ConstantIndexOp::create(b, loc, threads),
                  ValueRange{none},
                  [&](OpBuilder &b, Location loc, Value term,
                      ValueRange carried) {
                    SmallVector<Value> at(dims);
                    for (auto [dim, index] : llvm::zip(
                             termDims, delinearize(b, loc, term, termSizes)))
                      at[dim] = index;
                    scf::YieldOp::create(
                        b, loc, addTerm(b, loc, generic, sum, at, carried[0]));
                  });
              Value all = gpu::AllReduceOp::create(
                  b, loc, strided.getResult(0),
                  gpu::AllReduceOperationAttr::get(
                      b.getContext(), gpu::AllReduceOperation::ADD),
                  b.getUnitAttr());
              Value first = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::eq, lane[0], zero);
              auto onlyFirst = scf::IfOp::create(b, loc, first);
              OpBuilder then = onlyFirst.getThenBodyBuilder();
              SmallVector<Value> indices =
                  indicesAt(then, loc, resultMap, dims);
              Value before = fill ? fill.getDpsInputs()[0]
                                  : memref::LoadOp::create(
                                        then, loc, result->get(), indices)
                                        .getResult();
              Value after = arith::AddFOp::create(then, loc, before, all,
                                                  sum.getFastmathAttr());
              memref::StoreOp::create(then, loc, after, result->get(), indices);
            });
      });
  (void)blocks;
  generic.erase();
  if (fill)
    fill.erase();
}

} // namespace

void fusion::reduceAcrossThreads(func::FuncOp function, int64_t longestSerial) {
  SmallVector<linalg::GenericOp> generics;
  function.walk(
      [&](linalg::GenericOp generic) { generics.push_back(generic); });
  // Last first: a sum's fill may sit before earlier sums, which must still
  // be linalg ops for `fillBefore` to see past them.
  for (linalg::GenericOp generic : llvm::reverse(generics))
    rewriteLongSum(generic, longestSerial);
}

bool fusion::isBlockReduction(scf::ParallelOp loop) {
  return loop.walk([](gpu::AllReduceOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

void fusion::mapBlockReduction(scf::ParallelOp loop) {
  MLIRContext *context = loop.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
  auto mapTo = [&](scf::ParallelOp parallel, gpu::Processor last,
                   gpu::Processor others) {
    SmallVector<gpu::ParallelLoopDimMappingAttr> dims(
        parallel.getNumLoops() - 1, gpu::ParallelLoopDimMappingAttr::get(
                                        context, others, identity, identity));
    dims.push_back(gpu::ParallelLoopDimMappingAttr::get(context, last, identity,
                                                        identity));
    (void)gpu::setMappingAttr(parallel, dims);
  };
  // The threads' loop holds the all-reduce; its last dimension counts the
  // threads (the outputs' dimension precedes it when the two merged).
  loop.walk([&](gpu::AllReduceOp reduce) {
    auto threads = reduce->getParentOfType<scf::ParallelOp>();
    mapTo(threads, gpu::Processor::ThreadX, gpu::Processor::BlockX);
    if (threads != loop)
      mapTo(loop, gpu::Processor::BlockX, gpu::Processor::BlockX);
  });
}
