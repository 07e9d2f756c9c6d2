// RUN: not metac-gradcheck %s 2>&1 | FileCheck %s
// RUN: not metac-gradcheck %s --entry=missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not metac-gradcheck %s --order=3 2>&1 | FileCheck %s --check-prefix=ORDER

// Diagnostics go to stderr, the per-function lines to stdout.
// CHECK-DAG: errors.mlir:[[@LINE+11]]:8: error: 'func.call' op cannot be differentiated: it has no derivative rule (DifferentiableOpInterface)
// CHECK-DAG: errors.mlir:[[@LINE+14]]:1: error: gradient check needs float arguments and results
// CHECK-DAG: @opaque_call: ERROR
// CHECK-DAG: @integer_only: ERROR
// CHECK: 0 passed, 2 failed
// MISSING: metac-gradcheck: error: no function 'missing'
// ORDER: metac-gradcheck: error: --order must be 1 or 2

func.func private @opaque(tensor<3xf64>) -> tensor<3xf64>

func.func @opaque_call(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = func.call @opaque(%x) : (tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

func.func @integer_only(%ids: tensor<3xi64>) -> tensor<3x2xf64> {
  %0 = nn.one_hot %ids : tensor<3xi64> -> tensor<3x2xf64>
  return %0 : tensor<3x2xf64>
}
