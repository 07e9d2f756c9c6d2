//===- KernelsVsInterpreterTest.cpp - runtime kernels vs the interpreter --===//
//
// Every public function of test/Interpreter/nn_ops.mlir and
// attention_ops.mlir (the interpreter's own corpus, checked against PyTorch)
// and of KernelCases.mlir is evaluated on pseudo-random inputs (two seeds) by
// the reference interpreter and by the runtime, one kernel call per op, in f64
// and, with the element types replaced, in f32 and in bf16 (inputs rounded to
// bf16; the runtime computes each bf16 op in f32 and rounds its result, the
// interpreter in f64). The error of an output is
//   max_i |a_i - b_i| / max(|b_i|, 1e-3 * max_j |b_j|),
// which must stay below 1e-12 in f64, 1e-5 in f32 and 1e-2 (2.5 bf16 steps)
// in bf16; f32 products through BLAS get 3e-4, since sgemm accumulates in
// float (as PyTorch's CPU products do) and a sum of k terms near zero then
// carries an error of about sqrt(k) * 2^-24 of the terms, which the 1e-3
// floor turns into 1e-5..1e-4. Where the interpreter refuses an input (an id
// out of range), the runtime must refuse it too.
//
//===----------------------------------------------------------------------===//

#include "RuntimeEvaluator.h"

#include "metac/Dialect/NN/IR/NNDialect.h"
#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Interpreter/Interpreter.h"
#include "metac/Interpreter/RandomInputs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <regex>
#include <sstream>

using namespace mlir;
using metac::interp::Tensor;

namespace {

/// bf16 keeps 8 significant bits: both sides round every result to bf16
/// (the interpreter from f64, the runtime from f32), so one op's results
/// differ by at most one bf16 step (2^-8 relative) where the two
/// computations straddle a rounding boundary, and a function of several
/// ops carries such a step through the ops after it (the largest seen is
/// 0.0048, in avg_pool2d_backward).
constexpr double kBF16Tolerance = 1e-2;

/// The largest error seen in one class of functions, and where.
struct Worst {
  explicit Worst(const char *what) : what(what) {}

  const char *what;
  double error = 0;
  std::string where;
  int runs = 0;
};
Worst worstF64{"f64"}, worstF32{"f32"}, worstF32Blas{"f32 through BLAS"},
    worstBF16{"bf16"};

/// Prints the largest errors when the tests are done.
class Summary : public ::testing::Environment {
public:
  void TearDown() override {
    for (const Worst *worst : {&worstF64, &worstF32, &worstF32Blas, &worstBF16})
      std::cout << "max relative error " << worst->what << ": " << worst->error
                << " (" << worst->where << ") over " << worst->runs
                << " runs\n";
  }
};
const auto *summary = ::testing::AddGlobalTestEnvironment(new Summary);

/// Whether `func` computes in f32 (any f32 tensor in its signature).
bool computesInF32(func::FuncOp func) {
  auto isF32 = [](Type type) {
    return cast<RankedTensorType>(type).getElementType().isF32();
  };
  return llvm::any_of(func.getArgumentTypes(), isF32) ||
         llvm::any_of(func.getResultTypes(), isF32);
}

/// Whether `func` computes in bf16 (any bf16 tensor in its signature).
bool computesInBF16(func::FuncOp func) {
  auto isBF16 = [](Type type) {
    return cast<RankedTensorType>(type).getElementType().isBF16();
  };
  return llvm::any_of(func.getArgumentTypes(), isBF16) ||
         llvm::any_of(func.getResultTypes(), isBF16);
}

/// Rounds the float inputs of a bf16 function to bf16, so that both sides
/// start from the values the runtime's bf16 tensors hold.
void roundToBF16(std::vector<Tensor> &inputs) {
  for (Tensor &t : inputs)
    for (double &x : t.values) {
      APFloat v(x);
      bool lost = false;
      v.convert(APFloat::BFloat(), APFloat::rmNearestTiesToEven, &lost);
      x = v.convertToDouble();
    }
}

/// Whether `func` has a product that the CPU backend computes with BLAS.
bool usesBlas(func::FuncOp func) {
  bool blas = false;
  func.walk([&](Operation *op) {
    blas |= isa<metac::nn::LinearOp, metac::nn::MatmulOp,
                metac::nn::AttentionOp, metac::nn::AttentionBackwardOp,
                metac::nn::AttentionDoubleBackwardOp, metac::nn::Conv2DOp,
                metac::nn::Conv2DBackwardInputOp,
                metac::nn::Conv2DBackwardWeightOp>(op);
  });
  return blas;
}

/// max_i |a_i - b_i| / max(|b_i|, 1e-3 * max_j |b_j|); NaNs must agree.
double relativeError(const Tensor &actual, const Tensor &expected) {
  if (actual.shape != expected.shape || actual.isInteger != expected.isInteger)
    return std::numeric_limits<double>::infinity();
  if (expected.isInteger)
    return actual.ints == expected.ints
               ? 0
               : std::numeric_limits<double>::infinity();
  double scale = 0;
  for (double b : expected.values)
    if (std::isfinite(b))
      scale = std::max(scale, std::abs(b));
  double floor = std::max(1e-3 * scale, std::numeric_limits<double>::min());
  double worst = 0;
  for (size_t i = 0; i < expected.values.size(); ++i) {
    double a = actual.values[i], b = expected.values[i];
    if (std::isnan(a) || std::isnan(b) || std::isinf(b)) {
      if (!(std::isnan(a) && std::isnan(b)) && a != b)
        return std::numeric_limits<double>::infinity();
      continue;
    }
    worst = std::max(worst, std::abs(a - b) / std::max(std::abs(b), floor));
  }
  return worst;
}

/// The text of `path`.
std::string readFile(const char *path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// `text` with every f64 tensor element type made `element` (f64 keeps
/// it).
std::string retyped(const std::string &text, const std::string &element) {
  return std::regex_replace(
      std::regex_replace(text, std::regex("xf64>"), "x" + element + ">"),
      std::regex("<f64>"), "<" + element + ">");
}

class KernelsVsInterpreter : public ::testing::Test {
protected:
  KernelsVsInterpreter() {
    context.loadDialect<metac::nn::NNDialect, func::FuncDialect,
                        arith::ArithDialect>();
    context.printOpOnDiagnostic(false);
  }
  void SetUp() override {
    ASSERT_EQ(metart_context_create(nullptr, &runtime), METART_OK);
  }
  void TearDown() override { metart_context_destroy(runtime); }

  /// Compares interpreter and runtime on every runnable public function of
  /// `text` with its f64 tensors made `element`, requiring at least
  /// `minimum` of them.
  void compareAll(const std::string &text, const std::string &element,
                  int minimum);

  MLIRContext context;
  metart_context *runtime = nullptr;
};

void KernelsVsInterpreter::compareAll(const std::string &text,
                                      const std::string &element, int minimum) {
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    diagnostics += diagnostic.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(retyped(text, element), &context);
  ASSERT_TRUE(module) << diagnostics;
  int compared = 0;
  for (func::FuncOp func : module->getOps<func::FuncOp>()) {
    if (func.isPrivate() || !metart::test::isRunnable(func))
      continue;
    ++compared;
    std::string name = func.getSymName().str();
    bool half = computesInBF16(func);
    bool single = computesInF32(func), blas = usesBlas(func);
    double tolerance = half      ? kBF16Tolerance
                       : !single ? 1e-12
                       : blas    ? 3e-4
                                 : 1e-5;
    Worst &worst = half      ? worstBF16
                   : !single ? worstF64
                   : blas    ? worstF32Blas
                             : worstF32;
    for (uint64_t seed : {1, 2}) {
      SCOPED_TRACE(name + " (seed " + std::to_string(seed) + ")");
      diagnostics.clear();
      FailureOr<std::vector<Tensor>> inputs =
          metac::interp::makeRandomInputs(func, seed);
      ASSERT_TRUE(succeeded(inputs)) << diagnostics;
      if (half)
        roundToBF16(*inputs);
      FailureOr<std::vector<Tensor>> expected =
          metac::interp::evaluate(func, *inputs);
      std::string error;
      FailureOr<std::vector<Tensor>> actual =
          metart::test::evaluateWithRuntime(runtime, func, *inputs, error);
      if (failed(expected)) {
        // The interpreter refused the input: the runtime must refuse it too.
        EXPECT_TRUE(failed(actual)) << "the interpreter failed with "
                                    << diagnostics << "but the runtime did not";
        EXPECT_NE(error.find("is out of range"), std::string::npos) << error;
        continue;
      }
      ASSERT_TRUE(succeeded(actual)) << error;
      ASSERT_EQ(actual->size(), expected->size());
      ++worst.runs;
      for (size_t i = 0; i < expected->size(); ++i) {
        double e = relativeError((*actual)[i], (*expected)[i]);
        EXPECT_LE(e, tolerance) << "output #" << i;
        if (e > worst.error || worst.where.empty()) {
          worst.error = std::max(worst.error, e);
          worst.where = name;
        }
      }
    }
  }
  EXPECT_GE(compared, minimum);
}

/// The interpreter's corpus: nn_ops.mlir and attention_ops.mlir.
std::string corpus() {
  return readFile(METART_TEST_CORPUS) + readFile(METART_TEST_ATTENTION_CORPUS);
}

TEST_F(KernelsVsInterpreter, InterpreterCorpusF64) {
  compareAll(corpus(), "f64", 120);
}

TEST_F(KernelsVsInterpreter, InterpreterCorpusF32) {
  compareAll(corpus(), "f32", 120);
}

TEST_F(KernelsVsInterpreter, InterpreterCorpusBF16) {
  compareAll(corpus(), "bf16", 120);
}

TEST_F(KernelsVsInterpreter, KernelCasesF64) {
  compareAll(readFile(METART_TEST_CASES), "f64", 40);
}

TEST_F(KernelsVsInterpreter, KernelCasesF32) {
  compareAll(readFile(METART_TEST_CASES), "f32", 40);
}

TEST_F(KernelsVsInterpreter, KernelCasesBF16) {
  compareAll(readFile(METART_TEST_CASES), "bf16", 40);
}

} // namespace
