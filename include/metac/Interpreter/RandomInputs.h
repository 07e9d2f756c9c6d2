//===- RandomInputs.h - deterministic inputs for the interpreter -*- C++
//-*-===//
//
// Pseudo-random inputs for a function, reproducible from a seed, so that a
// test can print, and another tool recompute, exactly the same values.
//
// The generator is splitmix64 (Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014): a 64-bit state that starts
// at the seed and, per draw, grows by 0x9E3779B97F4A7C15 and is mixed as
//   z = state; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//   z = (z ^ (z >> 27)) * 0x94D049BB133111EB; return z ^ (z >> 31).
// One stream fills the arguments in order, each in row-major order:
//  - a float element is min + (max - min) * u with u = (draw >> 11) * 2^-53
//    in [0, 1), rounded to the argument's element type (so an f32 input is an
//    f32 value, held as a double); min and max default to -1 and 1;
//  - an integer element is min + draw % (max - min), in [min, max); min and
//    max default to 0 and 2.
// An argument attribute overrides a bound: `{metac.eval.max = 10 : i64}`
// gives ids in [0, 10), `{metac.eval.min = 0.5 : f64}` positive floats.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_INTERPRETER_RANDOMINPUTS_H
#define METAC_INTERPRETER_RANDOMINPUTS_H

#include "metac/Interpreter/Interpreter.h"

#include <cstdint>

namespace metac::interp {

/// The splitmix64 generator described above.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}

  /// The next 64-bit draw.
  uint64_t next();
  /// A double uniform in [0, 1): the top 53 bits of a draw, scaled.
  double nextUnit();

private:
  uint64_t state;
};

/// Name of the argument attribute giving the lower bound of the values.
inline constexpr llvm::StringLiteral kEvalMinAttrName = "metac.eval.min";
/// Name of the argument attribute giving the upper bound of the values
/// (exclusive for integers).
inline constexpr llvm::StringLiteral kEvalMaxAttrName = "metac.eval.max";

/// One input per argument of `func`, drawn as described above from `seed`.
/// Reports unsupported argument types and bad bounds at the argument and
/// fails.
mlir::FailureOr<std::vector<Tensor>> makeRandomInputs(mlir::func::FuncOp func,
                                                      uint64_t seed);

} // namespace metac::interp

#endif // METAC_INTERPRETER_RANDOMINPUTS_H
