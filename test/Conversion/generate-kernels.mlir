// RUN: metac-opt %s --metac-generate-kernels | FileCheck %s

// Each nn.fused body becomes an LLVM function over bare pointers (inputs,
// then results), named by the op. A group of 64 x 1024 elements is split
// into 2 slices along its leading dimension (32768 elements each); the
// bias, broadcast along that dimension, is read whole by every slice. The
// sum over the rows of each slice accumulates with reassociation (so that
// LLVM vectorises it) and erf calls libm. 32 elements stay one slice.
// CHECK-LABEL: func.func @group
// CHECK: nn.fused(%arg0, %arg1) {chunks = 2 : i64, kernel = @__metac_kernel_0, replicated = array<i1: false, true>}
// CHECK: nn.fused(%arg2) {chunks = 1 : i64, kernel = @__metac_kernel_1, replicated = array<i1: false>}
// CHECK-LABEL: llvm.func @__metac_kernel_0(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr, %arg3: !llvm.ptr)
// CHECK: llvm.call @erff
// CHECK: llvm.fadd {{.*}} {fastmathFlags = #llvm.fastmath<reassoc>}
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @__metac_kernel_1(%arg0: !llvm.ptr, %arg1: !llvm.ptr)
func.func @group(%x: tensor<64x1024xf32>, %b: tensor<1024xf32>, %w: tensor<4x8xf32>) -> (tensor<64x1024xf32>, tensor<64xf32>, tensor<4xf32>) {
  %r:2 = nn.fused(%x, %b) : (tensor<64x1024xf32>, tensor<1024xf32>) -> (tensor<64x1024xf32>, tensor<64xf32>) {
  ^bb0(%a: tensor<64x1024xf32>, %c: tensor<1024xf32>):
    %s = nn.broadcast %c dims [0] : tensor<1024xf32> -> tensor<64x1024xf32>
    %y = nn.add %a, %s : tensor<64x1024xf32>
    %e = nn.erf %y : tensor<64x1024xf32>
    %t = nn.reduce_sum %e dims [1] : tensor<64x1024xf32> -> tensor<64xf32>
    nn.yield %e, %t : tensor<64x1024xf32>, tensor<64xf32>
  }
  %q = nn.fused(%w) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %n = nn.neg %a : tensor<4x8xf32>
    %v = nn.reduce_mean %n dims [1] : tensor<4x8xf32> -> tensor<4xf32>
    nn.yield %v : tensor<4xf32>
  }
  return %r#0, %r#1, %q : tensor<64x1024xf32>, tensor<64xf32>, tensor<4xf32>
}
