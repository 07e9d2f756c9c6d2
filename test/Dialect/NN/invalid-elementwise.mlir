// RUN: metac-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the nn ops: elementwise.

// Every diagnostic of the nn verifiers, and the ODS type constraints.

//===----------------------------------------------------------------------===//
// ODS type constraints
//===----------------------------------------------------------------------===//

func.func @dynamic_shape(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error@+1 {{operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<?x3xf32>'}}
  %0 = nn.relu %x : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
// -----
// The custom syntax only parses ranked tensors; the generic form reaches the
// type constraint.
func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error@+1 {{operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<*xf32>'}}
  %0 = "nn.exp"(%x) : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
// -----
func.func @integer_elementwise(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4xi32>'}}
  %0 = nn.neg %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}
// -----
func.func @f8_elementwise(%x: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  // expected-error@+1 {{operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4xf8E4M3FN>'}}
  %0 = nn.tanh %x : tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}
// -----
func.func @same_type_binary(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error@+1 {{requires the same type for all operands and results}}
  %0 = "nn.add"(%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
func.func @same_type_unary(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{requires the same type for all operands and results}}
  %0 = "nn.sigmoid"(%x) : (tensor<4xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
// -----
func.func @same_type_scale(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error@+1 {{requires the same type for all operands and results}}
  %0 = "nn.scale"(%x) {factor = 2.0 : f64} : (tensor<4xf32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}
// -----
func.func @scale_missing_factor(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{requires attribute 'factor'}}
  %0 = "nn.scale"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
func.func @scale_f32_factor(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{attribute 'factor' failed to satisfy constraint: 64-bit float attribute}}
  %0 = "nn.scale"(%x) {factor = 2.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// nn.linear
//===----------------------------------------------------------------------===//
// -----
func.func @convert_shape(%x: tensor<4x3xf32>) -> tensor<3x4xbf16> {
  // expected-error@+1 {{'nn.convert' op converts [4, 3] to another shape [3, 4] (only the element type changes)}}
  %0 = nn.convert %x : tensor<4x3xf32> -> tensor<3x4xbf16>
  return %0 : tensor<3x4xbf16>
}
// -----
func.func @convert_to_itself(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error@+1 {{'nn.convert' op converts 'bf16' to itself}}
  %0 = nn.convert %x : tensor<4xbf16> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}
// -----
func.func @convert_to_integer(%x: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error@+1 {{result #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4xi32>'}}
  %0 = nn.convert %x : tensor<4xf32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
