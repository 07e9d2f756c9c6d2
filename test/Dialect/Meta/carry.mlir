// meta.carry_store / meta.carry_load (the pipedream schedule's values kept
// for the next call of the step): they round-trip, and a site is a
// non-negative integer.
// RUN: metac-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @keep
// CHECK: meta.carry_store %arg0 site 3 : tensor<2x4xf32>
// CHECK-NEXT: %[[V:.*]] = meta.carry_load site 3 : tensor<2x4xf32>
// CHECK-NEXT: return %[[V]]
func.func @keep(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  meta.carry_store %x site 3 : tensor<2x4xf32>
  %v = meta.carry_load site 3 : tensor<2x4xf32>
  return %v : tensor<2x4xf32>
}
// -----
func.func @negative(%x: tensor<f64>) {
  // expected-error@+1 {{'meta.carry_store' op attribute 'site' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  meta.carry_store %x site -1 : tensor<f64>
  return
}
// -----
func.func @negative_load() -> tensor<f64> {
  // expected-error@+1 {{'meta.carry_load' op attribute 'site' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %v = meta.carry_load site -2 : tensor<f64>
  return %v : tensor<f64>
}
