// REQUIRES: cuda-toolkit
// RUN: metac-opt %s --metac-generate-kernels="device=true" | FileCheck %s
// RUN: metac-opt %s --metac-generate-kernels | FileCheck %s --check-prefix=HOST

// With `device`, each group is also compiled for CUDA: loops over the same
// iterations merge (the mean's initialisation, its sum of 8 terms, which
// adds in a register, and its division are one launch of one 32-thread
// block, the sum kept in a temporary of 4 floats, argument 2); a group
// whose sum feeds a map over more iterations launches twice; a sum of 1024 terms per
// thread over 64 threads would leave the GPU idle: that group gets no
// device kernel and runs op by op on CUDA. The PTX of each kernel is kept
// once in the module (sm_80, run by the driver on later GPUs too).
// CHECK: module attributes {metac.device_kernels = {__metac_device_1 = "{{.*}}.target sm_80{{.*}}.visible .entry __metac_device_1_kernel({{.*}}", __metac_device_2 = "{{.*}}.visible .entry __metac_device_2_kernel({{.*}}.visible .entry __metac_device_2_kernel_0({{.*}}"}}
// CHECK-LABEL: func.func @groups
// CHECK: nn.fused(%arg0, %arg1) {chunks = 2 : i64, kernel = @__metac_kernel_0, replicated = array<i1: false, true>}
// CHECK: nn.fused(%arg2) {chunks = 1 : i64, kernel = @__metac_kernel_1, metac.device = {kernel = @__metac_device_1, launches = [{arguments = array<i64: 2, 0, 1>, blocks = 1 : i64, entry = "__metac_device_1_kernel", threads = 32 : i64}], temporaries = array<i64: 16>}
// CHECK: nn.fused(%arg2) {chunks = 1 : i64, kernel = @__metac_kernel_2, metac.device = {kernel = @__metac_device_2, launches = [{arguments = array<i64: 2, 0>, blocks = 1 : i64, entry = "__metac_device_2_kernel", threads = 32 : i64}, {arguments = array<i64: 0, 2, 1>, blocks = 1 : i64, entry = "__metac_device_2_kernel_0", threads = 32 : i64}], temporaries = array<i64: 16>}
// Without `device` (and without the module attribute that
// `metac --device-kernels=on` sets), no group has one.
// HOST-NOT: metac.device
func.func @groups(%x: tensor<64x1024xf32>, %b: tensor<1024xf32>, %w: tensor<4x8xf32>) -> (tensor<64xf32>, tensor<4xf32>, tensor<4x8xf32>) {
  %t = nn.fused(%x, %b) : (tensor<64x1024xf32>, tensor<1024xf32>) -> tensor<64xf32> {
  ^bb0(%a: tensor<64x1024xf32>, %c: tensor<1024xf32>):
    %s = nn.broadcast %c dims [0] : tensor<1024xf32> -> tensor<64x1024xf32>
    %y = nn.add %a, %s : tensor<64x1024xf32>
    %r = nn.reduce_sum %y dims [1] : tensor<64x1024xf32> -> tensor<64xf32>
    nn.yield %r : tensor<64xf32>
  }
  %m = nn.fused(%w) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %n = nn.neg %a : tensor<4x8xf32>
    %v = nn.reduce_mean %n dims [1] : tensor<4x8xf32> -> tensor<4xf32>
    nn.yield %v : tensor<4xf32>
  }
  %d = nn.fused(%w) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %v = nn.reduce_sum %a dims [1] : tensor<4x8xf32> -> tensor<4xf32>
    %s = nn.broadcast %v dims [1] : tensor<4xf32> -> tensor<4x8xf32>
    %e = nn.sub %a, %s : tensor<4x8xf32>
    nn.yield %e : tensor<4x8xf32>
  }
  return %t, %m, %d : tensor<64xf32>, tensor<4xf32>, tensor<4x8xf32>
}
