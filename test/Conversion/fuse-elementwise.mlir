// RUN: metac-opt %s --metac-fuse-elementwise --split-input-file | FileCheck %s

// A chain of maps with a broadcast input becomes one group; the values used
// after it (the relu, for the matmul, and the sum) are its results; the
// matmul and a sum over the leading dimension stay outside.
// CHECK-LABEL: func.func @chain
// CHECK: %[[G:.*]]:2 = nn.fused(%arg1, %arg0) : (tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[B:.*]]: tensor<8xf32>, %[[X:.*]]: tensor<4x8xf32>):
// CHECK-NEXT:   %[[S:.*]] = nn.broadcast %[[B]] dims [0]
// CHECK-NEXT:   %[[A:.*]] = nn.add %[[X]], %[[S]]
// CHECK-NEXT:   %[[R:.*]] = nn.relu %[[A]]
// CHECK-NEXT:   %[[M:.*]] = nn.scale %[[R]] by 2.0{{.*}}
// CHECK-NEXT:   nn.yield %[[R]], %[[M]]
// CHECK: nn.matmul %[[G]]#0
// CHECK: nn.reduce_sum %[[G]]#1 dims [0]
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %s = nn.broadcast %b dims [0] : tensor<8xf32> -> tensor<4x8xf32>
  %a = nn.add %x, %s : tensor<4x8xf32>
  %r = nn.relu %a : tensor<4x8xf32>
  %m = nn.scale %r by 2.0 : tensor<4x8xf32>
  %p = nn.matmul %r, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %t = nn.reduce_sum %m dims [0] : tensor<4x8xf32> -> tensor<8xf32>
  return %p, %t : tensor<4x8xf32>, tensor<8xf32>
}

// -----

// The sum is used before the map that would join it: the map cannot join
// (the group would have to run both before and after the matmul), so it
// starts a group of its own and, alone, stays a plain op. A sum that keeps
// the leading dimension joins the group of its producer.
// CHECK-LABEL: func.func @convexity
// CHECK: %[[G:.*]]:2 = nn.fused(%arg0) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
// CHECK:   nn.exp
// CHECK:   nn.reduce_sum %{{.*}} dims [1]
// CHECK: %[[P:.*]] = nn.matmul %[[G]]#0
// CHECK: nn.add %[[G]]#0, %[[P]]
// CHECK-NOT: nn.fused
func.func @convexity(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %e = nn.exp %x : tensor<4x8xf32>
  %s = nn.reduce_sum %e dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %p = nn.matmul %e, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %y = nn.add %e, %p : tensor<4x8xf32>
  return %y, %s : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// A broadcast read by two groups is cloned into each: neither reads a
// materialised copy. Two groups that meet at an op merge into one.
// CHECK-LABEL: func.func @shared_broadcast
// CHECK: nn.fused(%{{.*}}, %{{.*}}) : ({{.*}}) -> tensor<4x8xf32>
// CHECK-COUNT-2: nn.broadcast %{{.*}} dims [0]
// CHECK-NOT: nn.fused
func.func @shared_broadcast(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = nn.broadcast %b dims [0] : tensor<8xf32> -> tensor<4x8xf32>
  %a = nn.mul %x, %s : tensor<4x8xf32>
  %n = nn.neg %x : tensor<4x8xf32>
  %c = nn.sub %n, %s : tensor<4x8xf32>
  %y = nn.add %a, %c : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// bf16 maps stay runtime calls (the runtime widens them to f32).
// CHECK-LABEL: func.func @half
// CHECK-NOT: nn.fused
func.func @half(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %e = nn.exp %x : tensor<4x8xbf16>
  %n = nn.neg %e : tensor<4x8xbf16>
  return %n : tensor<4x8xbf16>
}

// -----

// Sums over the leading dimension and others of a group's values are split:
// the sum over the others joins the group, the sum of its small result
// over the leading dimension stays outside, before its first user. The
// partial sum joins although a matmul reads the group's values before the
// original sum's place. A mean splits into a mean of means. A sum over the
// leading dimension alone, or of a value no group computes, stays as it is.
// CHECK-LABEL: func.func @split_sums
// CHECK: %[[G:.*]]:4 = nn.fused(%arg0, %arg1) : (tensor<4x3x8xf32>, tensor<4x3x8xf32>) -> (tensor<4x3x8xf32>, tensor<4x8xf32>, tensor<4x3x8xf32>, tensor<4x8xf32>)
// CHECK:   %[[P:.*]] = nn.mul
// CHECK-NEXT:   nn.reduce_sum %[[P]] dims [1] : tensor<4x3x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:   nn.exp %[[P]]
// CHECK-NEXT:   nn.reduce_mean %{{.*}} dims [1] : tensor<4x3x8xf32> -> tensor<4x8xf32>
// CHECK: nn.matmul %[[G]]#2
// CHECK-NEXT: %[[T:.*]] = nn.reduce_sum %[[G]]#1 dims [0] : tensor<4x8xf32> -> tensor<8xf32>
// CHECK-NEXT: nn.neg %[[T]]
// CHECK-NEXT: nn.reduce_sum %arg0 dims [0, 1] : tensor<4x3x8xf32> -> tensor<8xf32>
// CHECK-NEXT: nn.reduce_sum %[[G]]#0 dims [0] : tensor<4x3x8xf32> -> tensor<3x8xf32>
// CHECK-NEXT: nn.reduce_mean %[[G]]#3 dims [0] : tensor<4x8xf32> -> tensor<8xf32>
func.func @split_sums(%x: tensor<4x3x8xf32>, %y: tensor<4x3x8xf32>, %w: tensor<4x8x8xf32>) -> (tensor<4x3x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<3x8xf32>) {
  %p = nn.mul %x, %y : tensor<4x3x8xf32>
  %e = nn.exp %p : tensor<4x3x8xf32>
  %m = nn.matmul %e, %w : tensor<4x3x8xf32>, tensor<4x8x8xf32> -> tensor<4x3x8xf32>
  %s = nn.reduce_sum %p dims [0, 1] : tensor<4x3x8xf32> -> tensor<8xf32>
  %n = nn.neg %s : tensor<8xf32>
  %a = nn.reduce_mean %e dims [0, 1] : tensor<4x3x8xf32> -> tensor<8xf32>
  %b = nn.reduce_sum %x dims [0, 1] : tensor<4x3x8xf32> -> tensor<8xf32>
  %c = nn.reduce_sum %p dims [0] : tensor<4x3x8xf32> -> tensor<3x8xf32>
  return %m, %n, %a, %b, %c : tensor<4x3x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<3x8xf32>
}
