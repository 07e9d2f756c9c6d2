// RUN: metac-opt %s --metac-fold-transposes | FileCheck %s

// Transposes of the last two dimensions fold into the products reading
// them; the transposes themselves disappear.
// CHECK-LABEL: func.func @products
// CHECK-NOT: nn.transpose
// CHECK: %[[L:.*]] = nn.matmul %arg0, %arg1 : tensor<5x3x4xf32>, tensor<5x4x6xf32> -> tensor<5x3x6xf32>
// CHECK: %[[M:.*]] = nn.matmul %arg2, %arg1 {transpose_lhs, transpose_rhs} : tensor<5x6x3xf32>, tensor<5x4x6xf32> -> tensor<5x3x4xf32>
// CHECK: %[[T:.*]] = nn.matmul %arg0, %arg2 {transpose_lhs, transpose_rhs} : tensor<5x3x4xf32>, tensor<5x6x3xf32> -> tensor<5x4x6xf32>
// CHECK: return %[[L]], %[[M]], %[[T]], %arg1
func.func @products(%x: tensor<5x3x4xf32>, %w: tensor<5x4x6xf32>, %g: tensor<5x6x3xf32>) -> (tensor<5x3x6xf32>, tensor<5x3x4xf32>, tensor<5x4x6xf32>, tensor<5x4x6xf32>) {
  // linear(x, w^T) = x w.
  %wt = nn.transpose %w [0, 2, 1] : tensor<5x4x6xf32> -> tensor<5x6x4xf32>
  %l = nn.linear %x, %wt : tensor<5x3x4xf32>, tensor<5x6x4xf32> -> tensor<5x3x6xf32>
  // g^T w^T with g read transposed and w^T's transpose flipped.
  %m = nn.matmul %g, %wt {transpose_lhs} : tensor<5x6x3xf32>, tensor<5x6x4xf32> -> tensor<5x3x4xf32>
  // (g x)^T = x^T g^T.
  %p = nn.matmul %g, %x : tensor<5x6x3xf32>, tensor<5x3x4xf32> -> tensor<5x6x4xf32>
  %t = nn.transpose %p [0, 2, 1] : tensor<5x6x4xf32> -> tensor<5x4x6xf32>
  // A transpose of a transpose is the value itself.
  %back = nn.transpose %wt [0, 2, 1] : tensor<5x6x4xf32> -> tensor<5x4x6xf32>
  return %l, %m, %t, %back : tensor<5x3x6xf32>, tensor<5x3x4xf32>, tensor<5x4x6xf32>, tensor<5x4x6xf32>
}

// What does not fold stays: a linear with a bias, a weight shared by a
// batched input (x's rank differs), a transpose of other dimensions, and a
// product that is also used untransposed. Two permutations compose.
// CHECK-LABEL: func.func @kept
// CHECK: %[[WT:.*]] = nn.transpose %arg1 [0, 2, 1]
// CHECK: nn.linear %arg0, %[[WT]], %arg2
// CHECK: %[[ST:.*]] = nn.transpose %arg3 [1, 0]
// CHECK: nn.linear %arg0, %[[ST]] : tensor<5x3x4xf32>, tensor<6x4xf32>
// CHECK: nn.transpose %arg0 [1, 0, 2]
// CHECK: %[[P:.*]] = nn.matmul %arg0, %arg1 :
// CHECK: nn.transpose %[[P]] [0, 2, 1]
// CHECK: nn.transpose %arg0 [2, 0, 1] : tensor<5x3x4xf32> -> tensor<4x5x3xf32>
func.func @kept(%x: tensor<5x3x4xf32>, %w: tensor<5x4x6xf32>, %b: tensor<5x6xf32>, %s: tensor<4x6xf32>) -> (tensor<5x3x6xf32>, tensor<5x3x6xf32>, tensor<3x5x4xf32>, tensor<5x3x6xf32>, tensor<5x6x3xf32>, tensor<4x5x3xf32>) {
  %wt = nn.transpose %w [0, 2, 1] : tensor<5x4x6xf32> -> tensor<5x6x4xf32>
  %biased = nn.linear %x, %wt, %b : tensor<5x3x4xf32>, tensor<5x6x4xf32>, tensor<5x6xf32> -> tensor<5x3x6xf32>
  %st = nn.transpose %s [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %shared = nn.linear %x, %st : tensor<5x3x4xf32>, tensor<6x4xf32> -> tensor<5x3x6xf32>
  %other = nn.transpose %x [1, 0, 2] : tensor<5x3x4xf32> -> tensor<3x5x4xf32>
  %p = nn.matmul %x, %w : tensor<5x3x4xf32>, tensor<5x4x6xf32> -> tensor<5x3x6xf32>
  %pt = nn.transpose %p [0, 2, 1] : tensor<5x3x6xf32> -> tensor<5x6x3xf32>
  %r1 = nn.transpose %x [0, 2, 1] : tensor<5x3x4xf32> -> tensor<5x4x3xf32>
  %r2 = nn.transpose %r1 [1, 0, 2] : tensor<5x4x3xf32> -> tensor<4x5x3xf32>
  return %biased, %shared, %other, %p, %pt, %r2 : tensor<5x3x6xf32>, tensor<5x3x6xf32>, tensor<3x5x4xf32>, tensor<5x3x6xf32>, tensor<5x6x3xf32>, tensor<4x5x3xf32>
}
