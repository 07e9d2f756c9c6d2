// RUN: env CUDA_HOME=%t.none metac-opt %s --metac-generate-kernels="device=true" | FileCheck %s

// Without the CUDA toolkit's libdevice no group gets device kernels (they
// run op by op on CUDA); the module says why, and the host kernels are
// compiled as always.
// CHECK: module attributes {metac.device_kernels_unavailable = "no CUDA toolkit (libdevice) at {{.*}}.none (set CUDA_HOME)"}
// CHECK: nn.fused(%arg0) {chunks = 1 : i64, kernel = @__metac_kernel_0, replicated = array<i1: false>}
// CHECK-NOT: metac.device =
func.func @group(%w: tensor<4x8xf32>) -> tensor<4xf32> {
  %m = nn.fused(%w) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %v = nn.reduce_mean %a dims [1] : tensor<4x8xf32> -> tensor<4xf32>
    nn.yield %v : tensor<4xf32>
  }
  return %m : tensor<4xf32>
}
