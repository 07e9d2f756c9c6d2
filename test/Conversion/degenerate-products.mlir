// RUN: metac-opt %s --metac-fuse-elementwise | FileCheck %s

// Batched products with one term, one row or one column (sinusoid MAML's
// 1-40 and 40-1 layers and their derivatives) become broadcasts,
// multiplies and sums, which join the group of the map that reads them;
// a batched linear layer's bias becomes a map after the product. Products
// of full matrices, and unbatched ones, stay.

// One term: an outer product. The unit dimensions are summed away.
// CHECK-LABEL: func.func @one_term
// CHECK-NOT: nn.matmul
// CHECK: nn.fused(%arg0, %arg1)
// CHECK:   %[[A:.*]] = nn.reduce_sum %{{.*}} dims [2] : tensor<25x10x1xf32> -> tensor<25x10xf32>
// CHECK:   %[[B:.*]] = nn.reduce_sum %{{.*}} dims [1] : tensor<25x1x40xf32> -> tensor<25x40xf32>
// CHECK:   %[[BA:.*]] = nn.broadcast %[[A]] dims [2] : tensor<25x10xf32> -> tensor<25x10x40xf32>
// CHECK:   %[[BB:.*]] = nn.broadcast %[[B]] dims [1] : tensor<25x40xf32> -> tensor<25x10x40xf32>
// CHECK:   %[[P:.*]] = nn.mul %[[BA]], %[[BB]]
// CHECK:   nn.relu %[[P]]
func.func @one_term(%a: tensor<25x10x1xf32>, %b: tensor<25x1x40xf32>) -> tensor<25x10x40xf32> {
  %p = nn.matmul %a, %b : tensor<25x10x1xf32>, tensor<25x1x40xf32> -> tensor<25x10x40xf32>
  %r = nn.relu %p : tensor<25x10x40xf32>
  return %r : tensor<25x10x40xf32>
}

// One row (a transposed): the terms are summed after the multiply, and the
// row dimension is broadcast back.
// CHECK-LABEL: func.func @one_row
// CHECK-NOT: nn.matmul
// CHECK:   %[[A:.*]] = nn.reduce_sum %{{.*}} dims [2] : tensor<25x10x1xf32> -> tensor<25x10xf32>
// CHECK:   %[[S:.*]] = nn.broadcast %[[A]] dims [2] : tensor<25x10xf32> -> tensor<25x10x40xf32>
// CHECK:   %[[M:.*]] = nn.mul %[[S]], %{{.*}} : tensor<25x10x40xf32>
// CHECK:   %[[T:.*]] = nn.reduce_sum %[[M]] dims [1] : tensor<25x10x40xf32> -> tensor<25x40xf32>
// CHECK:   nn.broadcast %[[T]] dims [1] : tensor<25x40xf32> -> tensor<25x1x40xf32>
func.func @one_row(%a: tensor<25x10x1xf32>, %b: tensor<25x10x40xf32>) -> tensor<25x1x40xf32> {
  %p = nn.matmul %a, %b {transpose_lhs} : tensor<25x10x1xf32>, tensor<25x10x40xf32> -> tensor<25x1x40xf32>
  %r = nn.scale %p by 2.0 : tensor<25x1x40xf32>
  return %r : tensor<25x1x40xf32>
}

// One column: a linear layer with one output feature and a per-task bias.
// CHECK-LABEL: func.func @one_column
// CHECK-NOT: nn.linear
// CHECK:   %[[W:.*]] = nn.reduce_sum %{{.*}} dims [1] : tensor<25x1x40xf32> -> tensor<25x40xf32>
// CHECK:   %[[S:.*]] = nn.broadcast %[[W]] dims [1] : tensor<25x40xf32> -> tensor<25x10x40xf32>
// CHECK:   %[[M:.*]] = nn.mul %{{.*}}, %[[S]] : tensor<25x10x40xf32>
// CHECK:   %[[T:.*]] = nn.reduce_sum %[[M]] dims [2] : tensor<25x10x40xf32> -> tensor<25x10xf32>
// CHECK:   %[[Y:.*]] = nn.broadcast %[[T]] dims [2] : tensor<25x10xf32> -> tensor<25x10x1xf32>
// CHECK:   %[[B:.*]] = nn.broadcast %{{.*}} dims [1] : tensor<25x1xf32> -> tensor<25x10x1xf32>
// CHECK:   nn.add %[[Y]], %[[B]]
func.func @one_column(%x: tensor<25x10x40xf32>, %w: tensor<25x1x40xf32>, %b: tensor<25x1xf32>) -> tensor<25x10x1xf32> {
  %y = nn.linear %x, %w, %b : tensor<25x10x40xf32>, tensor<25x1x40xf32>, tensor<25x1xf32> -> tensor<25x10x1xf32>
  %r = nn.tanh %y : tensor<25x10x1xf32>
  return %r : tensor<25x10x1xf32>
}

// Full per-task matrices stay products; the bias joins the activation.
// An unbatched product with one term stays as it is.
// CHECK-LABEL: func.func @kept
// CHECK: %[[P:.*]] = nn.matmul %arg0, %arg1 {transpose_rhs} : tensor<25x10x40xf32>, tensor<25x40x40xf32> -> tensor<25x10x40xf32>
// CHECK: nn.fused(%arg2, %[[P]])
// CHECK:   nn.broadcast %{{.*}} dims [1] : tensor<25x40xf32> -> tensor<25x10x40xf32>
// CHECK:   nn.add
// CHECK:   nn.relu
// CHECK: nn.matmul %arg3, %arg4 : tensor<10x1xf32>, tensor<1x40xf32> -> tensor<10x40xf32>
func.func @kept(%x: tensor<25x10x40xf32>, %w: tensor<25x40x40xf32>, %b: tensor<25x40xf32>, %u: tensor<10x1xf32>, %v: tensor<1x40xf32>) -> (tensor<25x10x40xf32>, tensor<10x40xf32>) {
  %y = nn.linear %x, %w, %b : tensor<25x10x40xf32>, tensor<25x40x40xf32>, tensor<25x40xf32> -> tensor<25x10x40xf32>
  %r = nn.relu %y : tensor<25x10x40xf32>
  %o = nn.matmul %u, %v : tensor<10x1xf32>, tensor<1x40xf32> -> tensor<10x40xf32>
  return %r, %o : tensor<25x10x40xf32>, tensor<10x40xf32>
}
