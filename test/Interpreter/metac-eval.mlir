// The JSON that metac-eval prints, its generator and its determinism.
// RUN: metac-eval %s --entry=pinned | FileCheck %s --check-prefix=PINNED
// RUN: metac-eval %s --entry=ranges --seed=42 | FileCheck %s --check-prefix=RANGES
// RUN: metac-eval %s --entry=ranges --seed=42 > %t.first
// RUN: metac-eval %s --entry=ranges --seed=42 > %t.second
// RUN: diff %t.first %t.second
// RUN: metac-eval %s --entry=ranges --seed=43 > %t.other
// RUN: not diff %t.first %t.other > /dev/null
// RUN: metac-eval %s --entry=no_arguments | FileCheck %s --check-prefix=EMPTY

// Seed 0 (the default): splitmix64's first draw is 0xe220a8397b1dcdaf, so
// the first f64 is 2 * (0xe220a8397b1dcdaf >> 11) * 2^-53 - 1 and the first
// f32 is that value rounded to f32. The outputs are exact: -x, and x + x.
// PINNED:      {
// PINNED-NEXT:   "inputs": [
// PINNED-NEXT:     {"shape": [2], "integer": false, "values": [0.76662161642728521, -0.13694400590298006]},
// PINNED-NEXT:     {"shape": [1], "integer": false, "values": [-0.94713246822357178]}
// PINNED-NEXT:   ],
// PINNED-NEXT:   "outputs": [
// PINNED-NEXT:     {"shape": [2], "integer": false, "values": [-0.76662161642728521, 0.13694400590298006]},
// PINNED-NEXT:     {"shape": [1], "integer": false, "values": [-1.8942649364471436]}
// PINNED-NEXT:   ]
// PINNED-NEXT: }
func.func @pinned(%x: tensor<2xf64>, %y: tensor<1xf32>) -> (tensor<2xf64>, tensor<1xf32>) {
  %0 = nn.neg %x : tensor<2xf64>
  %1 = nn.add %y, %y : tensor<1xf32>
  return %0, %1 : tensor<2xf64>, tensor<1xf32>
}

// Integers in [min, max) (default [0, 2)), floats in [min, max) (default
// [-1, 1)); 0-d tensors have shape [].
// RANGES:      "inputs": [
// RANGES-NEXT: {"shape": [3, 2], "integer": true, "values": [{{[0-4]}}, {{[0-4]}}, {{[0-4]}}, {{[0-4]}}, {{[0-4]}}, {{[0-4]}}]},
// RANGES-NEXT: {"shape": [4], "integer": true, "values": [{{(-[12]|0|1)}}, {{(-[12]|0|1)}}, {{(-[12]|0|1)}}, {{(-[12]|0|1)}}]},
// RANGES-NEXT: {"shape": [2], "integer": true, "values": [{{[01]}}, {{[01]}}]},
// RANGES-NEXT: {"shape": [], "integer": false, "values": [1{{[012]}}.{{[0-9]+}}]}
// RANGES-NEXT: ],
// RANGES-NEXT: "outputs": [
// RANGES-NEXT: {"shape": [3, 2, 5], "integer": false, "values": [{{([01], ){29}[01]}}]}
// RANGES-NEXT: ]
func.func @ranges(%ids: tensor<3x2xi64> {metac.eval.max = 5 : i64},
                  %neg: tensor<4xi32> {metac.eval.min = -2 : i64, metac.eval.max = 2 : i64},
                  %bits: tensor<2xi64>,
                  %f: tensor<f64> {metac.eval.min = 10 : i64, metac.eval.max = 12.5 : f64})
    -> tensor<3x2x5xf64> {
  %0 = nn.one_hot %ids : tensor<3x2xi64> -> tensor<3x2x5xf64>
  return %0 : tensor<3x2x5xf64>
}

// EMPTY:      "inputs": [],
// EMPTY-NEXT: "outputs": [
// EMPTY-NEXT: {"shape": [2], "integer": true, "values": [-3, 9223372036854775807]},
// EMPTY-NEXT: {"shape": [2, 2], "integer": false, "values": [NaN, Infinity, -Infinity, 2.5]}
func.func @no_arguments() -> (tensor<2xi64>, tensor<2x2xf64>) {
  %0 = arith.constant dense<[-3, 9223372036854775807]> : tensor<2xi64>
  %1 = arith.constant dense<[[0x7FF8000000000000, 0x7FF0000000000000], [0xFFF0000000000000, 2.5]]> : tensor<2x2xf64>
  return %0, %1 : tensor<2xi64>, tensor<2x2xf64>
}
