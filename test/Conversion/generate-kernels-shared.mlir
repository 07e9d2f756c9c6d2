// RUN: metac-opt %s --metac-generate-kernels | FileCheck %s

// Groups that compute the same on the same types share a kernel (an
// unrolled inner loop repeats its step's groups); one that differs in an
// op or a type gets its own.
// CHECK: nn.fused(%arg0) {chunks = 1 : i64, kernel = @[[SAME:__metac_kernel_[0-9]+]]
// CHECK: nn.fused(%{{.*}}) {chunks = 1 : i64, kernel = @[[SAME]],
// CHECK: nn.fused(%{{.*}}) {chunks = 1 : i64, kernel = @[[OTHER:__metac_kernel_[0-9]+]]
// CHECK-NOT: kernel = @[[SAME]]
// CHECK: nn.fused(%{{.*}}) {chunks = 1 : i64, kernel = @[[WIDE:__metac_kernel_[0-9]+]]
// CHECK-COUNT-3: llvm.func @__metac_kernel_
// CHECK-NOT: llvm.func @__metac_kernel_
func.func @shared(%x: tensor<4x8xf32>, %y: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %a = nn.fused(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%v: tensor<4x8xf32>):
    %n = nn.neg %v : tensor<4x8xf32>
    nn.yield %n : tensor<4x8xf32>
  }
  %b = nn.fused(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%v: tensor<4x8xf32>):
    %n = nn.neg %v : tensor<4x8xf32>
    nn.yield %n : tensor<4x8xf32>
  }
  %c = nn.fused(%b) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%v: tensor<4x8xf32>):
    %n = nn.exp %v : tensor<4x8xf32>
    nn.yield %n : tensor<4x8xf32>
  }
  %d = nn.fused(%y) : (tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%v: tensor<4x16xf32>):
    %n = nn.neg %v : tensor<4x16xf32>
    nn.yield %n : tensor<4x16xf32>
  }
  return %c, %d : tensor<4x8xf32>, tensor<4x16xf32>
}
