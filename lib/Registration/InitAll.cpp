//===- InitAll.cpp - registration of metac and upstream pieces ------------===//

#include "metac/InitAll.h"

#include "metac/Conversion/Passes.h"
#include "metac/Dialect/Meta/IR/MetaDialect.h"
#include "metac/Dialect/Meta/Transforms/Passes.h"
#include "metac/Dialect/NN/IR/NNDialect.h"
#include "metac/Partition/Passes.h"
#include "metac/Pipelines/Pipelines.h"
#include "metac/Planner/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void metac::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<meta::MetaDialect, nn::NNDialect>();
  registry.insert<mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::func::FuncDialect, mlir::LLVM::LLVMDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::shard::ShardDialect, mlir::tensor::TensorDialect>();
}

void metac::registerAllPasses() {
  mlir::registerTransformsPasses();
  mlir::registerLinalgPasses();
  mlir::bufferization::registerBufferizationPasses();
  mlir::shard::registerShardPasses();
  meta::registerMetaPasses();
  partition::registerPartitionPasses();
  planner::registerPlannerPasses();
  registerConversionPasses();
  registerPhasePipelines();
}
