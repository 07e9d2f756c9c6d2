// RUN: metac-opt %s --metac-fuse-elementwise | FileCheck %s
// RUN: metac-opt %s --metac-fuse-elementwise --metac-generate-kernels | FileCheck %s --check-prefix=KERNEL

// Batched products with one term, one row or one column (sinusoid MAML's
// 1-40 and 40-1 layers and their derivatives) and batch norms with
// per-task statistics join the group of the maps around them as they are
// (run op by op, on CUDA, they stay library calls); the kernel generator
// writes them as broadcasts, multiplies and sums. A batched linear layer's
// bias over full matrices becomes a map after the product. Products of
// full matrices, and unbatched ones, stay outside.

// CHECK-LABEL: func.func @one_term
// CHECK: nn.fused(%arg0, %arg1)
// CHECK:   %[[P:.*]] = nn.matmul %{{.*}}, %{{.*}} : tensor<25x10x1xf32>, tensor<25x1x40xf32> -> tensor<25x10x40xf32>
// CHECK:   nn.relu %[[P]]
// KERNEL-LABEL: func.func @one_term
// KERNEL: nn.fused(%arg0, %arg1) {chunks = 1 : i64, kernel = @__metac_kernel_0
func.func @one_term(%a: tensor<25x10x1xf32>, %b: tensor<25x1x40xf32>) -> tensor<25x10x40xf32> {
  %p = nn.matmul %a, %b : tensor<25x10x1xf32>, tensor<25x1x40xf32> -> tensor<25x10x40xf32>
  %r = nn.relu %p : tensor<25x10x40xf32>
  return %r : tensor<25x10x40xf32>
}

// CHECK-LABEL: func.func @one_row
// CHECK: nn.fused
// CHECK:   nn.matmul %{{.*}}, %{{.*}} {transpose_lhs} : tensor<25x10x1xf32>, tensor<25x10x40xf32> -> tensor<25x1x40xf32>
// CHECK:   nn.scale
func.func @one_row(%a: tensor<25x10x1xf32>, %b: tensor<25x10x40xf32>) -> tensor<25x1x40xf32> {
  %p = nn.matmul %a, %b {transpose_lhs} : tensor<25x10x1xf32>, tensor<25x10x40xf32> -> tensor<25x1x40xf32>
  %r = nn.scale %p by 2.0 : tensor<25x1x40xf32>
  return %r : tensor<25x1x40xf32>
}

// One column: a linear layer with one output feature and a per-task bias.
// CHECK-LABEL: func.func @one_column
// CHECK: nn.fused
// CHECK:   nn.linear %{{.*}}, %{{.*}}, %{{.*}} : tensor<25x10x40xf32>, tensor<25x1x40xf32>, tensor<25x1xf32> -> tensor<25x10x1xf32>
// CHECK:   nn.tanh
func.func @one_column(%x: tensor<25x10x40xf32>, %w: tensor<25x1x40xf32>, %b: tensor<25x1xf32>) -> tensor<25x10x1xf32> {
  %y = nn.linear %x, %w, %b : tensor<25x10x40xf32>, tensor<25x1x40xf32>, tensor<25x1xf32> -> tensor<25x10x1xf32>
  %r = nn.tanh %y : tensor<25x10x1xf32>
  return %r : tensor<25x10x1xf32>
}

// Batch norm with per-task statistics (over samples and pixels) joins the
// ReLU's group; the kernel computes it.
// CHECK-LABEL: func.func @per_task_norm
// CHECK: nn.fused
// CHECK:   nn.batch_norm
// CHECK:   nn.relu
// KERNEL-LABEL: func.func @per_task_norm
// KERNEL: nn.fused({{.*}}) {chunks = {{[0-9]+}} : i64, kernel = @__metac_kernel_
func.func @per_task_norm(%x: tensor<4x5x8x6x6xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x5x8x6x6xf32> {
  %n = nn.batch_norm %x, %w, %b channel 2 reduce [1, 3, 4] epsilon 1.0e-5 : tensor<4x5x8x6x6xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x5x8x6x6xf32>
  %r = nn.relu %n : tensor<4x5x8x6x6xf32>
  return %r : tensor<4x5x8x6x6xf32>
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
// KERNEL: llvm.func @__metac_kernel_0(
// KERNEL-NOT: metart_nn_matmul
func.func @kept(%x: tensor<25x10x40xf32>, %w: tensor<25x40x40xf32>, %b: tensor<25x40xf32>, %u: tensor<10x1xf32>, %v: tensor<1x40xf32>) -> (tensor<25x10x40xf32>, tensor<10x40xf32>) {
  %y = nn.linear %x, %w, %b : tensor<25x10x40xf32>, tensor<25x40x40xf32>, tensor<25x40xf32> -> tensor<25x10x40xf32>
  %r = nn.relu %y : tensor<25x10x40xf32>
  %o = nn.matmul %u, %v : tensor<10x1xf32>, tensor<1x40xf32> -> tensor<10x40xf32>
  return %r, %o : tensor<25x10x40xf32>, tensor<10x40xf32>
}
