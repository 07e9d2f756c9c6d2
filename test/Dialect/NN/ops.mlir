// RUN: metac-opt %s | FileCheck %s
// RUN: metac-opt %s | metac-opt | FileCheck %s
// RUN: metac-opt %s --mlir-print-op-generic | metac-opt | FileCheck %s

// Round trip of every nn op in its custom assembly format.

//===----------------------------------------------------------------------===//
// Elementwise unary operations
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @neg
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[R:.*]] = nn.neg %[[X]] : tensor<2x3xf32>
// CHECK: return %[[R]]
func.func @neg(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.neg %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @exp
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK: %[[R:.*]] = nn.exp %[[X]] : tensor<4xf16>
// CHECK: return %[[R]]
func.func @exp(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = nn.exp %x : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// CHECK-LABEL: func.func @log
// CHECK-SAME: (%[[X:.*]]: tensor<4xbf16>)
// CHECK: %[[R:.*]] = nn.log %[[X]] : tensor<4xbf16>
// CHECK: return %[[R]]
func.func @log(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = nn.log %x : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// CHECK-LABEL: func.func @sqrt
// CHECK-SAME: (%[[X:.*]]: tensor<2x2xf64>)
// CHECK: %[[R:.*]] = nn.sqrt %[[X]] : tensor<2x2xf64>
// CHECK: return %[[R]]
func.func @sqrt(%x: tensor<2x2xf64>) -> tensor<2x2xf64> {
  %0 = nn.sqrt %x : tensor<2x2xf64>
  return %0 : tensor<2x2xf64>
}

// CHECK-LABEL: func.func @rsqrt
// CHECK-SAME: (%[[X:.*]]: tensor<f32>)
// CHECK: %[[R:.*]] = nn.rsqrt %[[X]] : tensor<f32>
// CHECK: return %[[R]]
func.func @rsqrt(%x: tensor<f32>) -> tensor<f32> {
  %0 = nn.rsqrt %x : tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @erf
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK: %[[R:.*]] = nn.erf %[[X]] : tensor<3xf32>
// CHECK: return %[[R]]
func.func @erf(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = nn.erf %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @relu
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xbf16>)
// CHECK: %[[R:.*]] = nn.relu %[[X]] : tensor<8x16xbf16>
// CHECK: return %[[R]]
func.func @relu(%x: tensor<8x16xbf16>) -> tensor<8x16xbf16> {
  %0 = nn.relu %x : tensor<8x16xbf16>
  return %0 : tensor<8x16xbf16>
}

// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[R:.*]] = nn.step %[[X]] : tensor<8x16xf32>
// CHECK: return %[[R]]
func.func @step(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = nn.step %x : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @tanh
// CHECK-SAME: (%[[X:.*]]: tensor<5xf16>)
// CHECK: %[[R:.*]] = nn.tanh %[[X]] : tensor<5xf16>
// CHECK: return %[[R]]
func.func @tanh(%x: tensor<5xf16>) -> tensor<5xf16> {
  %0 = nn.tanh %x : tensor<5xf16>
  return %0 : tensor<5xf16>
}

// CHECK-LABEL: func.func @sigmoid
// CHECK-SAME: (%[[X:.*]]: tensor<5xf64>)
// CHECK: %[[R:.*]] = nn.sigmoid %[[X]] : tensor<5xf64>
// CHECK: return %[[R]]
func.func @sigmoid(%x: tensor<5xf64>) -> tensor<5xf64> {
  %0 = nn.sigmoid %x : tensor<5xf64>
  return %0 : tensor<5xf64>
}

// CHECK-LABEL: func.func @gelu
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[R:.*]] = nn.gelu %[[X]] : tensor<2x8xf32>
// CHECK: return %[[R]]
func.func @gelu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = nn.gelu %x : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[A:.*]] = nn.scale %[[X]] by 2.500000e+00 : tensor<2x3xf32>
// CHECK: %[[B:.*]] = nn.scale %[[A]] by -1.000000e-03 : tensor<2x3xf32>
// CHECK: %[[C:.*]] = nn.scale %[[B]] by 3.1415926500000002 : tensor<2x3xf32>
// CHECK: return %[[C]]
func.func @scale(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.scale %x by 2.5 : tensor<2x3xf32>
  %1 = nn.scale %0 by -1.0e-3 : tensor<2x3xf32>
  %2 = nn.scale %1 by 3.14159265 : tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @convert
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[B:.*]] = nn.convert %[[X]] : tensor<2x3xf32> -> tensor<2x3xbf16>
// CHECK: %[[H:.*]] = nn.convert %[[B]] : tensor<2x3xbf16> -> tensor<2x3xf16>
// CHECK: %[[D:.*]] = nn.convert %[[H]] : tensor<2x3xf16> -> tensor<2x3xf64>
// CHECK: return %[[D]]
func.func @convert(%x: tensor<2x3xf32>) -> tensor<2x3xf64> {
  %0 = nn.convert %x : tensor<2x3xf32> -> tensor<2x3xbf16>
  %1 = nn.convert %0 : tensor<2x3xbf16> -> tensor<2x3xf16>
  %2 = nn.convert %1 : tensor<2x3xf16> -> tensor<2x3xf64>
  return %2 : tensor<2x3xf64>
}

// CHECK-LABEL: func.func @scale_f16
// CHECK: nn.scale %{{.*}} by 5.000000e-01 : tensor<4xf16>
func.func @scale_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = nn.scale %x by 0.5 : tensor<4xf16>
  return %0 : tensor<4xf16>
}

//===----------------------------------------------------------------------===//
// Elementwise binary operations
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>)
// CHECK: %[[R:.*]] = nn.add %[[A]], %[[B]] : tensor<2x3xf32>
// CHECK: return %[[R]]
func.func @add(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.add %a, %b : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @sub
// CHECK-SAME: (%[[A:.*]]: tensor<7xf16>, %[[B:.*]]: tensor<7xf16>)
// CHECK: %[[R:.*]] = nn.sub %[[A]], %[[B]] : tensor<7xf16>
// CHECK: return %[[R]]
func.func @sub(%a: tensor<7xf16>, %b: tensor<7xf16>) -> tensor<7xf16> {
  %0 = nn.sub %a, %b : tensor<7xf16>
  return %0 : tensor<7xf16>
}

// CHECK-LABEL: func.func @mul
// CHECK-SAME: (%[[A:.*]]: tensor<bf16>, %[[B:.*]]: tensor<bf16>)
// CHECK: %[[R:.*]] = nn.mul %[[A]], %[[B]] : tensor<bf16>
// CHECK: return %[[R]]
func.func @mul(%a: tensor<bf16>, %b: tensor<bf16>) -> tensor<bf16> {
  %0 = nn.mul %a, %b : tensor<bf16>
  return %0 : tensor<bf16>
}

// CHECK-LABEL: func.func @div
// CHECK-SAME: (%[[A:.*]]: tensor<3x1xf64>, %[[B:.*]]: tensor<3x1xf64>)
// CHECK: %[[R:.*]] = nn.div %[[A]], %[[B]] : tensor<3x1xf64>
// CHECK: return %[[R]]
func.func @div(%a: tensor<3x1xf64>, %b: tensor<3x1xf64>) -> tensor<3x1xf64> {
  %0 = nn.div %a, %b : tensor<3x1xf64>
  return %0 : tensor<3x1xf64>
}

//===----------------------------------------------------------------------===//
// nn.linear
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @linear_bias
// CHECK-SAME: (%[[X:.*]]: tensor<5x3xf32>, %[[W:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[R:.*]] = nn.linear %[[X]], %[[W]], %[[B]] : tensor<5x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<5x4xf32>
// CHECK: return %[[R]]
func.func @linear_bias(%x: tensor<5x3xf32>, %w: tensor<4x3xf32>,
                       %b: tensor<4xf32>) -> tensor<5x4xf32> {
  %0 = nn.linear %x, %w, %b : tensor<5x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// CHECK-LABEL: func.func @linear_no_bias
// CHECK-SAME: (%[[X:.*]]: tensor<5x3xf32>, %[[W:.*]]: tensor<4x3xf32>)
// CHECK: %[[R:.*]] = nn.linear %[[X]], %[[W]] : tensor<5x3xf32>, tensor<4x3xf32> -> tensor<5x4xf32>
// CHECK: return %[[R]]
func.func @linear_no_bias(%x: tensor<5x3xf32>, %w: tensor<4x3xf32>) -> tensor<5x4xf32> {
  %0 = nn.linear %x, %w : tensor<5x3xf32>, tensor<4x3xf32> -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// A per-sample (rank-1) input.
// CHECK-LABEL: func.func @linear_vector
// CHECK-SAME: (%[[X:.*]]: tensor<3xf16>, %[[W:.*]]: tensor<4x3xf16>, %[[B:.*]]: tensor<4xf16>)
// CHECK: %[[R:.*]] = nn.linear %[[X]], %[[W]], %[[B]] : tensor<3xf16>, tensor<4x3xf16>, tensor<4xf16> -> tensor<4xf16>
// CHECK: return %[[R]]
func.func @linear_vector(%x: tensor<3xf16>, %w: tensor<4x3xf16>,
                         %b: tensor<4xf16>) -> tensor<4xf16> {
  %0 = nn.linear %x, %w, %b : tensor<3xf16>, tensor<4x3xf16>, tensor<4xf16> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// A weight batched over tasks: [T, out, in] applied to [T, N, in].
// CHECK-LABEL: func.func @linear_batched
// CHECK-SAME: (%[[X:.*]]: tensor<8x10x3xf32>, %[[W:.*]]: tensor<8x4x3xf32>, %[[B:.*]]: tensor<8x4xf32>)
// CHECK: %[[R:.*]] = nn.linear %[[X]], %[[W]], %[[B]] : tensor<8x10x3xf32>, tensor<8x4x3xf32>, tensor<8x4xf32> -> tensor<8x10x4xf32>
// CHECK: return %[[R]]
func.func @linear_batched(%x: tensor<8x10x3xf32>, %w: tensor<8x4x3xf32>,
                          %b: tensor<8x4xf32>) -> tensor<8x10x4xf32> {
  %0 = nn.linear %x, %w, %b : tensor<8x10x3xf32>, tensor<8x4x3xf32>, tensor<8x4xf32> -> tensor<8x10x4xf32>
  return %0 : tensor<8x10x4xf32>
}

// A batched weight without bias, in bf16.
// CHECK-LABEL: func.func @linear_batched_no_bias
// CHECK-SAME: (%[[X:.*]]: tensor<8x10x3xbf16>, %[[W:.*]]: tensor<8x4x3xbf16>)
// CHECK: %[[R:.*]] = nn.linear %[[X]], %[[W]] : tensor<8x10x3xbf16>, tensor<8x4x3xbf16> -> tensor<8x10x4xbf16>
// CHECK: return %[[R]]
func.func @linear_batched_no_bias(%x: tensor<8x10x3xbf16>,
                                  %w: tensor<8x4x3xbf16>) -> tensor<8x10x4xbf16> {
  %0 = nn.linear %x, %w : tensor<8x10x3xbf16>, tensor<8x4x3xbf16> -> tensor<8x10x4xbf16>
  return %0 : tensor<8x10x4xbf16>
}

// The whole leading shape of the input is batch: [T, N, out, in] on [T, N, in].
// CHECK-LABEL: func.func @linear_full_batch_f64
// CHECK: nn.linear %{{.*}}, %{{.*}} : tensor<2x3x5xf64>, tensor<2x3x4x5xf64> -> tensor<2x3x4xf64>
func.func @linear_full_batch_f64(%x: tensor<2x3x5xf64>,
                                 %w: tensor<2x3x4x5xf64>) -> tensor<2x3x4xf64> {
  %0 = nn.linear %x, %w : tensor<2x3x5xf64>, tensor<2x3x4x5xf64> -> tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

//===----------------------------------------------------------------------===//
// nn.attention
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @attention
// CHECK: nn.attention %{{.*}}, %{{.*}}, %{{.*}} scale 5.000000e-01 : tensor<4x3x8xf32>, tensor<4x5x8xf32>, tensor<4x5x2xf32> -> tensor<4x3x2xf32>
// CHECK: nn.attention %{{.*}}, %{{.*}}, %{{.*}} scale 2.500000e-01 causal : tensor<6x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16> -> tensor<6x8xbf16>
func.func @attention(%q: tensor<4x3x8xf32>, %k: tensor<4x5x8xf32>, %v: tensor<4x5x2xf32>, %x: tensor<6x8xbf16>) -> (tensor<4x3x2xf32>, tensor<6x8xbf16>) {
  %0 = nn.attention %q, %k, %v scale 0.5 : tensor<4x3x8xf32>, tensor<4x5x8xf32>, tensor<4x5x2xf32> -> tensor<4x3x2xf32>
  %1 = nn.attention %x, %x, %x scale 0.25 causal : tensor<6x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16> -> tensor<6x8xbf16>
  return %0, %1 : tensor<4x3x2xf32>, tensor<6x8xbf16>
}

// CHECK-LABEL: func.func @attention_backward
// CHECK: nn.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale 5.000000e-01 wrt "key" : tensor<4x3x8xf32>, tensor<4x5x8xf32>, tensor<4x5x2xf32>, tensor<4x3x2xf32> -> tensor<4x5x8xf32>
// CHECK: nn.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale 2.500000e-01 causal wrt "value" : tensor<6x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16> -> tensor<6x8xbf16>
func.func @attention_backward(%q: tensor<4x3x8xf32>, %k: tensor<4x5x8xf32>, %v: tensor<4x5x2xf32>, %g: tensor<4x3x2xf32>, %x: tensor<6x8xbf16>) -> (tensor<4x5x8xf32>, tensor<6x8xbf16>) {
  %0 = nn.attention_backward %q, %k, %v, %g scale 0.5 wrt "key" : tensor<4x3x8xf32>, tensor<4x5x8xf32>, tensor<4x5x2xf32>, tensor<4x3x2xf32> -> tensor<4x5x8xf32>
  %1 = nn.attention_backward %x, %x, %x, %x scale 0.25 causal wrt "value" : tensor<6x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16> -> tensor<6x8xbf16>
  return %0, %1 : tensor<4x5x8xf32>, tensor<6x8xbf16>
}

// CHECK-LABEL: func.func @attention_double_backward
// CHECK: nn.attention_double_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale 5.000000e-01 causal from "value" wrt "grad" : tensor<4x5x8xf32>, tensor<4x5x8xf32>, tensor<4x5x2xf32>, tensor<4x5x2xf32>, tensor<4x5x2xf32> -> tensor<4x5x2xf32>
func.func @attention_double_backward(%q: tensor<4x5x8xf32>, %k: tensor<4x5x8xf32>, %v: tensor<4x5x2xf32>, %dy: tensor<4x5x2xf32>, %g: tensor<4x5x2xf32>) -> tensor<4x5x2xf32> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 0.5 causal from "value" wrt "grad" : tensor<4x5x8xf32>, tensor<4x5x8xf32>, tensor<4x5x2xf32>, tensor<4x5x2xf32>, tensor<4x5x2xf32> -> tensor<4x5x2xf32>
  return %0 : tensor<4x5x2xf32>
}

//===----------------------------------------------------------------------===//
// nn.matmul
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3x4xf32>)
// CHECK: %[[R:.*]] = nn.matmul %[[A]], %[[B]] : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
// CHECK: return %[[R]]
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = nn.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @matmul_transpose_lhs
// CHECK-SAME: (%[[A:.*]]: tensor<3x2xf32>, %[[B:.*]]: tensor<3x4xf32>)
// CHECK: %[[R:.*]] = nn.matmul %[[A]], %[[B]] {transpose_lhs} : tensor<3x2xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
// CHECK: return %[[R]]
func.func @matmul_transpose_lhs(%a: tensor<3x2xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = nn.matmul %a, %b {transpose_lhs} : tensor<3x2xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @matmul_transpose_rhs
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf16>, %[[B:.*]]: tensor<4x3xf16>)
// CHECK: %[[R:.*]] = nn.matmul %[[A]], %[[B]] {transpose_rhs} : tensor<2x3xf16>, tensor<4x3xf16> -> tensor<2x4xf16>
// CHECK: return %[[R]]
func.func @matmul_transpose_rhs(%a: tensor<2x3xf16>, %b: tensor<4x3xf16>) -> tensor<2x4xf16> {
  %0 = nn.matmul %a, %b {transpose_rhs} : tensor<2x3xf16>, tensor<4x3xf16> -> tensor<2x4xf16>
  return %0 : tensor<2x4xf16>
}

// CHECK-LABEL: func.func @matmul_transpose_both
// CHECK-SAME: (%[[A:.*]]: tensor<3x2xbf16>, %[[B:.*]]: tensor<4x3xbf16>)
// CHECK: %[[R:.*]] = nn.matmul %[[A]], %[[B]] {transpose_lhs, transpose_rhs} : tensor<3x2xbf16>, tensor<4x3xbf16> -> tensor<2x4xbf16>
// CHECK: return %[[R]]
func.func @matmul_transpose_both(%a: tensor<3x2xbf16>, %b: tensor<4x3xbf16>) -> tensor<2x4xbf16> {
  %0 = nn.matmul %a, %b {transpose_lhs, transpose_rhs} : tensor<3x2xbf16>, tensor<4x3xbf16> -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// CHECK-LABEL: func.func @matmul_batched
// CHECK-SAME: (%[[A:.*]]: tensor<8x5x2x3xf64>, %[[B:.*]]: tensor<8x5x3x4xf64>)
// CHECK: %[[R:.*]] = nn.matmul %[[A]], %[[B]] : tensor<8x5x2x3xf64>, tensor<8x5x3x4xf64> -> tensor<8x5x2x4xf64>
// CHECK: return %[[R]]
func.func @matmul_batched(%a: tensor<8x5x2x3xf64>, %b: tensor<8x5x3x4xf64>) -> tensor<8x5x2x4xf64> {
  %0 = nn.matmul %a, %b : tensor<8x5x2x3xf64>, tensor<8x5x3x4xf64> -> tensor<8x5x2x4xf64>
  return %0 : tensor<8x5x2x4xf64>
}

//===----------------------------------------------------------------------===//
// nn.conv2d
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @conv2d_bias
// CHECK-SAME: (%[[X:.*]]: tensor<4x1x28x28xf32>, %[[W:.*]]: tensor<32x1x3x3xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK: %[[R:.*]] = nn.conv2d %[[X]], %[[W]], %[[B]] stride [1, 1] padding [1, 1] : tensor<4x1x28x28xf32>, tensor<32x1x3x3xf32>, tensor<32xf32> -> tensor<4x32x28x28xf32>
// CHECK: return %[[R]]
func.func @conv2d_bias(%x: tensor<4x1x28x28xf32>, %w: tensor<32x1x3x3xf32>,
                       %b: tensor<32xf32>) -> tensor<4x32x28x28xf32> {
  %0 = nn.conv2d %x, %w, %b stride [1, 1] padding [1, 1] : tensor<4x1x28x28xf32>, tensor<32x1x3x3xf32>, tensor<32xf32> -> tensor<4x32x28x28xf32>
  return %0 : tensor<4x32x28x28xf32>
}

// CHECK-LABEL: func.func @conv2d_no_bias
// CHECK-SAME: (%[[X:.*]]: tensor<3x9x7xf16>, %[[W:.*]]: tensor<8x3x3x2xf16>)
// CHECK: %[[R:.*]] = nn.conv2d %[[X]], %[[W]] stride [2, 1] padding [0, 1] : tensor<3x9x7xf16>, tensor<8x3x3x2xf16> -> tensor<8x4x8xf16>
// CHECK: return %[[R]]
func.func @conv2d_no_bias(%x: tensor<3x9x7xf16>, %w: tensor<8x3x3x2xf16>) -> tensor<8x4x8xf16> {
  %0 = nn.conv2d %x, %w stride [2, 1] padding [0, 1] : tensor<3x9x7xf16>, tensor<8x3x3x2xf16> -> tensor<8x4x8xf16>
  return %0 : tensor<8x4x8xf16>
}

// Weights batched over tasks: [T, O, C, kh, kw] on [T, N, C, H, W].
// CHECK-LABEL: func.func @conv2d_batched
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x3x8x8xbf16>, %[[W:.*]]: tensor<2x4x3x3x3xbf16>, %[[B:.*]]: tensor<2x4xbf16>)
// CHECK: %[[R:.*]] = nn.conv2d %[[X]], %[[W]], %[[B]] stride [1, 1] padding [0, 0] : tensor<2x5x3x8x8xbf16>, tensor<2x4x3x3x3xbf16>, tensor<2x4xbf16> -> tensor<2x5x4x6x6xbf16>
// CHECK: return %[[R]]
func.func @conv2d_batched(%x: tensor<2x5x3x8x8xbf16>, %w: tensor<2x4x3x3x3xbf16>,
                          %b: tensor<2x4xbf16>) -> tensor<2x5x4x6x6xbf16> {
  %0 = nn.conv2d %x, %w, %b stride [1, 1] padding [0, 0] : tensor<2x5x3x8x8xbf16>, tensor<2x4x3x3x3xbf16>, tensor<2x4xbf16> -> tensor<2x5x4x6x6xbf16>
  return %0 : tensor<2x5x4x6x6xbf16>
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @max_pool2d
// CHECK-SAME: (%[[X:.*]]: tensor<4x32x28x28xf32>)
// CHECK: %[[R:.*]] = nn.max_pool2d %[[X]] kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<4x32x28x28xf32> -> tensor<4x32x14x14xf32>
// CHECK: return %[[R]]
func.func @max_pool2d(%x: tensor<4x32x28x28xf32>) -> tensor<4x32x14x14xf32> {
  %0 = nn.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<4x32x28x28xf32> -> tensor<4x32x14x14xf32>
  return %0 : tensor<4x32x14x14xf32>
}

// CHECK-LABEL: func.func @avg_pool2d
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x16x16x16xf64>)
// CHECK: %[[R:.*]] = nn.avg_pool2d %[[X]] kernel [3, 3] stride [2, 1] padding [1, 1] : tensor<2x3x16x16x16xf64> -> tensor<2x3x16x8x16xf64>
// CHECK: return %[[R]]
func.func @avg_pool2d(%x: tensor<2x3x16x16x16xf64>) -> tensor<2x3x16x8x16xf64> {
  %0 = nn.avg_pool2d %x kernel [3, 3] stride [2, 1] padding [1, 1] : tensor<2x3x16x16x16xf64> -> tensor<2x3x16x8x16xf64>
  return %0 : tensor<2x3x16x8x16xf64>
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

// Per-sample statistics over the spatial dimensions of [C, H, W].
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.*]]: tensor<32x14x14xf32>, %[[W:.*]]: tensor<32xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK: %[[R:.*]] = nn.batch_norm %[[X]], %[[W]], %[[B]] channel 0 reduce [1, 2] epsilon 1.000000e-05 : tensor<32x14x14xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<32x14x14xf32>
// CHECK: return %[[R]]
func.func @batch_norm(%x: tensor<32x14x14xf32>, %w: tensor<32xf32>,
                      %b: tensor<32xf32>) -> tensor<32x14x14xf32> {
  %0 = nn.batch_norm %x, %w, %b channel 0 reduce [1, 2] epsilon 1.0e-5 : tensor<32x14x14xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<32x14x14xf32>
  return %0 : tensor<32x14x14xf32>
}

// Task-batched weights [T, C] on [T, N, C, H, W], statistics over N, H, W.
// CHECK-LABEL: func.func @batch_norm_batched
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x4x6x6xf16>, %[[W:.*]]: tensor<2x4xf16>, %[[B:.*]]: tensor<2x4xf16>)
// CHECK: %[[R:.*]] = nn.batch_norm %[[X]], %[[W]], %[[B]] channel 2 reduce [1, 3, 4] epsilon 1.000000e-03 : tensor<2x5x4x6x6xf16>, tensor<2x4xf16>, tensor<2x4xf16> -> tensor<2x5x4x6x6xf16>
// CHECK: return %[[R]]
func.func @batch_norm_batched(%x: tensor<2x5x4x6x6xf16>, %w: tensor<2x4xf16>,
                              %b: tensor<2x4xf16>) -> tensor<2x5x4x6x6xf16> {
  %0 = nn.batch_norm %x, %w, %b channel 2 reduce [1, 3, 4] epsilon 1.0e-3 : tensor<2x5x4x6x6xf16>, tensor<2x4xf16>, tensor<2x4xf16> -> tensor<2x5x4x6x6xf16>
  return %0 : tensor<2x5x4x6x6xf16>
}

// No reduce dimensions and a zero epsilon are accepted.
// CHECK-LABEL: func.func @batch_norm_empty_reduce
// CHECK: nn.batch_norm %{{.*}}, %{{.*}}, %{{.*}} channel 0 reduce [] epsilon 0.000000e+00 : tensor<3xf64>, tensor<3xf64>, tensor<3xf64> -> tensor<3xf64>
func.func @batch_norm_empty_reduce(%x: tensor<3xf64>, %w: tensor<3xf64>,
                                   %b: tensor<3xf64>) -> tensor<3xf64> {
  %0 = nn.batch_norm %x, %w, %b channel 0 reduce [] epsilon 0.0 : tensor<3xf64>, tensor<3xf64>, tensor<3xf64> -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<10x64xbf16>, %[[W:.*]]: tensor<64xbf16>, %[[B:.*]]: tensor<64xbf16>)
// CHECK: %[[R:.*]] = nn.layer_norm %[[X]], %[[W]], %[[B]] epsilon 1.000000e-05 : tensor<10x64xbf16>, tensor<64xbf16>, tensor<64xbf16> -> tensor<10x64xbf16>
// CHECK: return %[[R]]
func.func @layer_norm(%x: tensor<10x64xbf16>, %w: tensor<64xbf16>,
                      %b: tensor<64xbf16>) -> tensor<10x64xbf16> {
  %0 = nn.layer_norm %x, %w, %b epsilon 1.0e-5 : tensor<10x64xbf16>, tensor<64xbf16>, tensor<64xbf16> -> tensor<10x64xbf16>
  return %0 : tensor<10x64xbf16>
}

// CHECK-LABEL: func.func @layer_norm_batched
// CHECK-SAME: (%[[X:.*]]: tensor<4x10x64xf32>, %[[W:.*]]: tensor<4x64xf32>, %[[B:.*]]: tensor<4x64xf32>)
// CHECK: %[[R:.*]] = nn.layer_norm %[[X]], %[[W]], %[[B]] epsilon 9.9999999999999995E-7 : tensor<4x10x64xf32>, tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x10x64xf32>
// CHECK: return %[[R]]
func.func @layer_norm_batched(%x: tensor<4x10x64xf32>, %w: tensor<4x64xf32>,
                              %b: tensor<4x64xf32>) -> tensor<4x10x64xf32> {
  %0 = nn.layer_norm %x, %w, %b epsilon 1.0e-6 : tensor<4x10x64xf32>, tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x10x64xf32>
  return %0 : tensor<4x10x64xf32>
}

//===----------------------------------------------------------------------===//
// nn.embedding
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[I:.*]]: tensor<16xi64>, %[[T:.*]]: tensor<100x8xf32>)
// CHECK: %[[R:.*]] = nn.embedding %[[I]], %[[T]] : tensor<16xi64>, tensor<100x8xf32> -> tensor<16x8xf32>
// CHECK: return %[[R]]
func.func @embedding(%ids: tensor<16xi64>, %table: tensor<100x8xf32>) -> tensor<16x8xf32> {
  %0 = nn.embedding %ids, %table : tensor<16xi64>, tensor<100x8xf32> -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// A task-batched table [T, V, D] with i32 ids [T, S].
// CHECK-LABEL: func.func @embedding_batched
// CHECK-SAME: (%[[I:.*]]: tensor<4x16xi32>, %[[T:.*]]: tensor<4x100x8xf16>)
// CHECK: %[[R:.*]] = nn.embedding %[[I]], %[[T]] : tensor<4x16xi32>, tensor<4x100x8xf16> -> tensor<4x16x8xf16>
// CHECK: return %[[R]]
func.func @embedding_batched(%ids: tensor<4x16xi32>, %table: tensor<4x100x8xf16>) -> tensor<4x16x8xf16> {
  %0 = nn.embedding %ids, %table : tensor<4x16xi32>, tensor<4x100x8xf16> -> tensor<4x16x8xf16>
  return %0 : tensor<4x16x8xf16>
}

// CHECK-LABEL: func.func @embedding_scalar_id
// CHECK: nn.embedding %{{.*}}, %{{.*}} : tensor<i64>, tensor<10x3xf64> -> tensor<3xf64>
func.func @embedding_scalar_id(%id: tensor<i64>, %table: tensor<10x3xf64>) -> tensor<3xf64> {
  %0 = nn.embedding %id, %table : tensor<i64>, tensor<10x3xf64> -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

//===----------------------------------------------------------------------===//
// Normalised exponentials
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<4x5xf32>)
// CHECK: %[[R:.*]] = nn.softmax %[[X]] axis 1 : tensor<4x5xf32>
// CHECK: return %[[R]]
func.func @softmax(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %0 = nn.softmax %x axis 1 : tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @log_softmax
// CHECK-SAME: (%[[X:.*]]: tensor<4x5xbf16>)
// CHECK: %[[R:.*]] = nn.log_softmax %[[X]] axis 0 : tensor<4x5xbf16>
// CHECK: return %[[R]]
func.func @log_softmax(%x: tensor<4x5xbf16>) -> tensor<4x5xbf16> {
  %0 = nn.log_softmax %x axis 0 : tensor<4x5xbf16>
  return %0 : tensor<4x5xbf16>
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[X:.*]]: tensor<4x32x7x7xf32>)
// CHECK: %[[R:.*]] = nn.reshape %[[X]] : tensor<4x32x7x7xf32> -> tensor<4x1568xf32>
// CHECK: return %[[R]]
func.func @reshape(%x: tensor<4x32x7x7xf32>) -> tensor<4x1568xf32> {
  %0 = nn.reshape %x : tensor<4x32x7x7xf32> -> tensor<4x1568xf32>
  return %0 : tensor<4x1568xf32>
}

// CHECK-LABEL: func.func @reshape_to_scalar
// CHECK: nn.reshape %{{.*}} : tensor<1x1xf16> -> tensor<f16>
func.func @reshape_to_scalar(%x: tensor<1x1xf16>) -> tensor<f16> {
  %0 = nn.reshape %x : tensor<1x1xf16> -> tensor<f16>
  return %0 : tensor<f16>
}

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf64>)
// CHECK: %[[R:.*]] = nn.transpose %[[X]] [2, 0, 1] : tensor<2x3x4xf64> -> tensor<4x2x3xf64>
// CHECK: return %[[R]]
func.func @transpose(%x: tensor<2x3x4xf64>) -> tensor<4x2x3xf64> {
  %0 = nn.transpose %x [2, 0, 1] : tensor<2x3x4xf64> -> tensor<4x2x3xf64>
  return %0 : tensor<4x2x3xf64>
}

// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[R:.*]] = nn.broadcast %[[X]] dims [0, 2] : tensor<4xf32> -> tensor<3x4x5xf32>
// CHECK: return %[[R]]
func.func @broadcast(%x: tensor<4xf32>) -> tensor<3x4x5xf32> {
  %0 = nn.broadcast %x dims [0, 2] : tensor<4xf32> -> tensor<3x4x5xf32>
  return %0 : tensor<3x4x5xf32>
}

// CHECK-LABEL: func.func @broadcast_scalar
// CHECK: nn.broadcast %{{.*}} dims [0, 1] : tensor<bf16> -> tensor<2x3xbf16>
func.func @broadcast_scalar(%x: tensor<bf16>) -> tensor<2x3xbf16> {
  %0 = nn.broadcast %x dims [0, 1] : tensor<bf16> -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reduce_sum
// CHECK-SAME: (%[[X:.*]]: tensor<3x4x5xf32>)
// CHECK: %[[R:.*]] = nn.reduce_sum %[[X]] dims [0, 2] : tensor<3x4x5xf32> -> tensor<4xf32>
// CHECK: return %[[R]]
func.func @reduce_sum(%x: tensor<3x4x5xf32>) -> tensor<4xf32> {
  %0 = nn.reduce_sum %x dims [0, 2] : tensor<3x4x5xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @reduce_mean
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf16>)
// CHECK: %[[R:.*]] = nn.reduce_mean %[[X]] dims [0, 1] : tensor<3x4xf16> -> tensor<f16>
// CHECK: return %[[R]]
func.func @reduce_mean(%x: tensor<3x4xf16>) -> tensor<f16> {
  %0 = nn.reduce_mean %x dims [0, 1] : tensor<3x4xf16> -> tensor<f16>
  return %0 : tensor<f16>
}


// An empty dimension list is the identity.
// CHECK-LABEL: func.func @reduce_sum_none
// CHECK: nn.reduce_sum %{{.*}} dims [] : tensor<3xbf16> -> tensor<3xbf16>
func.func @reduce_sum_none(%x: tensor<3xbf16>) -> tensor<3xbf16> {
  %0 = nn.reduce_sum %x dims [] : tensor<3xbf16> -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

// The default batch_rank (0) is elided.
// CHECK-LABEL: func.func @mse_loss
// CHECK-SAME: (%[[P:.*]]: tensor<10x1xf32>, %[[T:.*]]: tensor<10x1xf32>)
// CHECK: %[[R:.*]] = nn.mse_loss %[[P]], %[[T]] : tensor<10x1xf32>, tensor<10x1xf32> -> tensor<f32>
// CHECK: return %[[R]]
func.func @mse_loss(%p: tensor<10x1xf32>, %t: tensor<10x1xf32>) -> tensor<f32> {
  %0 = nn.mse_loss %p, %t : tensor<10x1xf32>, tensor<10x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @mse_loss_explicit_default
// CHECK: nn.mse_loss %{{.*}}, %{{.*}} : tensor<10x1xf64>, tensor<10x1xf64> -> tensor<f64>
func.func @mse_loss_explicit_default(%p: tensor<10x1xf64>, %t: tensor<10x1xf64>) -> tensor<f64> {
  %0 = nn.mse_loss %p, %t {batch_rank = 0 : i64} : tensor<10x1xf64>, tensor<10x1xf64> -> tensor<f64>
  return %0 : tensor<f64>
}

// One loss per task.
// CHECK-LABEL: func.func @mse_loss_batched
// CHECK-SAME: (%[[P:.*]]: tensor<8x10x1xf16>, %[[T:.*]]: tensor<8x10x1xf16>)
// CHECK: %[[R:.*]] = nn.mse_loss %[[P]], %[[T]] {batch_rank = 1 : i64} : tensor<8x10x1xf16>, tensor<8x10x1xf16> -> tensor<8xf16>
// CHECK: return %[[R]]
func.func @mse_loss_batched(%p: tensor<8x10x1xf16>, %t: tensor<8x10x1xf16>) -> tensor<8xf16> {
  %0 = nn.mse_loss %p, %t {batch_rank = 1 : i64} : tensor<8x10x1xf16>, tensor<8x10x1xf16> -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// CHECK-LABEL: func.func @cross_entropy_loss
// CHECK-SAME: (%[[L:.*]]: tensor<25x5xf32>, %[[Y:.*]]: tensor<25xi64>)
// CHECK: %[[R:.*]] = nn.cross_entropy_loss %[[L]], %[[Y]] : tensor<25x5xf32>, tensor<25xi64> -> tensor<f32>
// CHECK: return %[[R]]
func.func @cross_entropy_loss(%l: tensor<25x5xf32>, %y: tensor<25xi64>) -> tensor<f32> {
  %0 = nn.cross_entropy_loss %l, %y : tensor<25x5xf32>, tensor<25xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// A single sample: 0-d labels.
// CHECK-LABEL: func.func @cross_entropy_loss_sample
// CHECK: nn.cross_entropy_loss %{{.*}}, %{{.*}} : tensor<5xbf16>, tensor<i32> -> tensor<bf16>
func.func @cross_entropy_loss_sample(%l: tensor<5xbf16>, %y: tensor<i32>) -> tensor<bf16> {
  %0 = nn.cross_entropy_loss %l, %y : tensor<5xbf16>, tensor<i32> -> tensor<bf16>
  return %0 : tensor<bf16>
}

// One loss per task, and per task and query set.
// CHECK-LABEL: func.func @accuracy
// CHECK: nn.accuracy %{{.*}}, %{{.*}} {batch_rank = 1 : i64} : tensor<4x25x5xf32>, tensor<4x25xi64> -> tensor<4xf32>
func.func @accuracy(%l: tensor<4x25x5xf32>, %y: tensor<4x25xi64>) -> tensor<4xf32> {
  %0 = nn.accuracy %l, %y {batch_rank = 1 : i64} : tensor<4x25x5xf32>, tensor<4x25xi64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @cross_entropy_loss_batched
// CHECK-SAME: (%[[L:.*]]: tensor<4x2x25x5xf64>, %[[Y:.*]]: tensor<4x2x25xi32>)
// CHECK: %[[A:.*]] = nn.cross_entropy_loss %[[L]], %[[Y]] {batch_rank = 1 : i64} : tensor<4x2x25x5xf64>, tensor<4x2x25xi32> -> tensor<4xf64>
// CHECK: %[[B:.*]] = nn.cross_entropy_loss %[[L]], %[[Y]] {batch_rank = 2 : i64} : tensor<4x2x25x5xf64>, tensor<4x2x25xi32> -> tensor<4x2xf64>
// CHECK: return %[[A]], %[[B]]
func.func @cross_entropy_loss_batched(%l: tensor<4x2x25x5xf64>, %y: tensor<4x2x25xi32>)
    -> (tensor<4xf64>, tensor<4x2xf64>) {
  %0 = nn.cross_entropy_loss %l, %y {batch_rank = 1 : i64} : tensor<4x2x25x5xf64>, tensor<4x2x25xi32> -> tensor<4xf64>
  %1 = nn.cross_entropy_loss %l, %y {batch_rank = 2 : i64} : tensor<4x2x25x5xf64>, tensor<4x2x25xi32> -> tensor<4x2xf64>
  return %0, %1 : tensor<4xf64>, tensor<4x2xf64>
}

//===----------------------------------------------------------------------===//
// A small model: the ops composed
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[W1:.*]]: tensor<40x1xf32>, %[[B1:.*]]: tensor<40xf32>, %[[W2:.*]]: tensor<1x40xf32>, %[[B2:.*]]: tensor<1xf32>, %[[X:.*]]: tensor<1xf32>)
// CHECK: %[[H:.*]] = nn.linear %[[X]], %[[W1]], %[[B1]] : tensor<1xf32>, tensor<40x1xf32>, tensor<40xf32> -> tensor<40xf32>
// CHECK: %[[A:.*]] = nn.relu %[[H]] : tensor<40xf32>
// CHECK: %[[Y:.*]] = nn.linear %[[A]], %[[W2]], %[[B2]] : tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32> -> tensor<1xf32>
// CHECK: return %[[Y]] : tensor<1xf32>
func.func @mlp(%w1: tensor<40x1xf32>, %b1: tensor<40xf32>, %w2: tensor<1x40xf32>,
               %b2: tensor<1xf32>, %x: tensor<1xf32>) -> tensor<1xf32> {
  %h = nn.linear %x, %w1, %b1 : tensor<1xf32>, tensor<40x1xf32>, tensor<40xf32> -> tensor<40xf32>
  %a = nn.relu %h : tensor<40xf32>
  %y = nn.linear %a, %w2, %b2 : tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}

//===----------------------------------------------------------------------===//
// Ops that derivatives need
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @stop_gradient
// CHECK: nn.stop_gradient %{{.*}} : tensor<4x3xf64>
func.func @stop_gradient(%x: tensor<4x3xf64>) -> tensor<4x3xf64> {
  %0 = nn.stop_gradient %x : tensor<4x3xf64>
  return %0 : tensor<4x3xf64>
}

// CHECK-LABEL: func.func @conv2d_backward
// CHECK: nn.conv2d_backward_input %[[G:.*]], %[[W:.*]] stride [2, 2] padding [1, 1] : tensor<2x8x4x4xf32>, tensor<8x3x3x3xf32> -> tensor<2x3x8x8xf32>
// CHECK: nn.conv2d_backward_weight %{{.*}}, %[[G]] stride [2, 2] padding [1, 1] : tensor<2x3x8x8xf32>, tensor<2x8x4x4xf32> -> tensor<8x3x3x3xf32>
func.func @conv2d_backward(%x: tensor<2x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %g: tensor<2x8x4x4xf32>)
    -> (tensor<2x3x8x8xf32>, tensor<8x3x3x3xf32>) {
  %dx = nn.conv2d_backward_input %g, %w stride [2, 2] padding [1, 1] : tensor<2x8x4x4xf32>, tensor<8x3x3x3xf32> -> tensor<2x3x8x8xf32>
  %dw = nn.conv2d_backward_weight %x, %g stride [2, 2] padding [1, 1] : tensor<2x3x8x8xf32>, tensor<2x8x4x4xf32> -> tensor<8x3x3x3xf32>
  return %dx, %dw : tensor<2x3x8x8xf32>, tensor<8x3x3x3xf32>
}

// Per-task weights: the weight gradient keeps the task dimension.
// CHECK-LABEL: func.func @conv2d_backward_weight_batched
// CHECK: nn.conv2d_backward_weight {{.*}} : tensor<4x5x3x6x6xf64>, tensor<4x5x2x6x6xf64> -> tensor<4x2x3x3x3xf64>
func.func @conv2d_backward_weight_batched(%x: tensor<4x5x3x6x6xf64>, %g: tensor<4x5x2x6x6xf64>) -> tensor<4x2x3x3x3xf64> {
  %dw = nn.conv2d_backward_weight %x, %g stride [1, 1] padding [1, 1] : tensor<4x5x3x6x6xf64>, tensor<4x5x2x6x6xf64> -> tensor<4x2x3x3x3xf64>
  return %dw : tensor<4x2x3x3x3xf64>
}

// CHECK-LABEL: func.func @pool_backward
// CHECK: nn.max_pool2d_backward %[[X:.*]], %[[G:.*]] kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<3x4x4xf32>, tensor<3x2x2xf32> -> tensor<3x4x4xf32>
// CHECK: nn.max_pool2d_gather %[[X]], %{{.*}} kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<3x4x4xf32>, tensor<3x4x4xf32> -> tensor<3x2x2xf32>
// CHECK: nn.avg_pool2d_backward %[[G]] kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<3x2x2xf32> -> tensor<3x4x4xf32>
func.func @pool_backward(%x: tensor<3x4x4xf32>, %g: tensor<3x2x2xf32>) -> (tensor<3x4x4xf32>, tensor<3x2x2xf32>, tensor<3x4x4xf32>) {
  %dx = nn.max_pool2d_backward %x, %g kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<3x4x4xf32>, tensor<3x2x2xf32> -> tensor<3x4x4xf32>
  %y = nn.max_pool2d_gather %x, %dx kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<3x4x4xf32>, tensor<3x4x4xf32> -> tensor<3x2x2xf32>
  %da = nn.avg_pool2d_backward %g kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<3x2x2xf32> -> tensor<3x4x4xf32>
  return %dx, %y, %da : tensor<3x4x4xf32>, tensor<3x2x2xf32>, tensor<3x4x4xf32>
}

// CHECK-LABEL: func.func @embedding_backward
// CHECK: nn.embedding_backward %{{.*}}, %{{.*}} : tensor<2x7xi64>, tensor<2x7x16xf32> -> tensor<2x100x16xf32>
// CHECK: nn.one_hot %{{.*}} : tensor<2x7xi64> -> tensor<2x7x5xf32>
func.func @embedding_backward(%ids: tensor<2x7xi64>, %g: tensor<2x7x16xf32>) -> (tensor<2x100x16xf32>, tensor<2x7x5xf32>) {
  %dt = nn.embedding_backward %ids, %g : tensor<2x7xi64>, tensor<2x7x16xf32> -> tensor<2x100x16xf32>
  %oh = nn.one_hot %ids : tensor<2x7xi64> -> tensor<2x7x5xf32>
  return %dt, %oh : tensor<2x100x16xf32>, tensor<2x7x5xf32>
}
