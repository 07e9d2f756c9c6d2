// REQUIRES: cuda-toolkit
// RUN: metac-opt %s --metac-generate-kernels="device=true" | FileCheck %s
// RUN: metac-opt %s --metac-generate-kernels | FileCheck %s --check-prefix=HOST

// With `device`, each group is also compiled for CUDA: loops over the same
// iterations merge (the mean's initialisation, its sum of 8 terms, which
// adds in a register, and its division are one launch of one 32-thread
// block, the sum kept in a temporary of 4 floats, argument 2); a group
// whose sum feeds a map over more iterations launches twice. A sum of
// 1024 terms per output would leave the GPU idle as one thread's loop over
// 64 threads: it becomes a block reduction, one block of 256 threads per
// output whose threads meet in warp shuffles (shfl.sync.bfly) and shared
// memory (bar.sync), its zero fill folded into the first thread's store
// (one launch). The PTX of each kernel is kept once in the module (sm_80,
// run by the driver on later GPUs too).
// CHECK: module attributes {metac.device_kernels = {__metac_device_0 = "{{.*}}.visible .entry __metac_device_0_kernel({{.*}}.shared .align 4 .b8 __wg___metac_device_0_kernel_0[128];{{.*}}shfl.sync.bfly.b32{{.*}}bar.sync{{.*}}", __metac_device_1 = "{{.*}}.target sm_80{{.*}}.visible .entry __metac_device_1_kernel({{.*}}", __metac_device_2 = "{{.*}}.visible .entry __metac_device_2_kernel({{.*}}.visible .entry __metac_device_2_kernel_0({{.*}}"{{.*}}}}
// CHECK-LABEL: func.func @groups
// CHECK: nn.fused(%arg0, %arg1) {chunks = 2 : i64, kernel = @__metac_kernel_0, metac.device = {kernel = @__metac_device_0, launches = [{arguments = array<i64: 0, 1, 2>, blocks = 64 : i64, entry = "__metac_device_0_kernel", threads = 256 : i64}], temporaries = array<i64>}
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

// A batch norm's sum of squares in f64 over samples and pixels (dims 1, 3,
// 4: 980 terms for each of 128 task-channel outputs) is one block per
// output, the summed dimensions flattened so that neighbouring threads
// read neighbouring pixels, 64-bit values shuffled as two 32-bit halves;
// the mean's division follows as a map. A sum of a whole tensor to a
// scalar is one block.
// CHECK-LABEL: func.func @norms
// CHECK: nn.fused(%arg0) {chunks = 2 : i64, kernel = @__metac_kernel_3, metac.device = {kernel = @__metac_device_3, launches = [{arguments = array<i64: 0, 2>, blocks = 128 : i64, entry = "__metac_device_3_kernel", threads = 256 : i64}, {arguments = array<i64: 2, 1>, blocks = 1 : i64, entry = "__metac_device_3_kernel_{{[0-9]+}}", threads = 128 : i64}], temporaries = array<i64: 1024>}
// CHECK: nn.fused(%arg1) {chunks = 1 : i64, kernel = @__metac_kernel_4, metac.device = {kernel = @__metac_device_4, launches = [{arguments = array<i64: 0, 1>, blocks = 1 : i64, entry = "__metac_device_4_kernel", threads = 256 : i64}], temporaries = array<i64>}
func.func @norms(%x: tensor<4x5x32x14x14xf64>, %y: tensor<100x100xf32>) -> (tensor<4x32xf64>, tensor<f32>) {
  %m = nn.fused(%x) : (tensor<4x5x32x14x14xf64>) -> tensor<4x32xf64> {
  ^bb0(%a: tensor<4x5x32x14x14xf64>):
    %s = nn.mul %a, %a : tensor<4x5x32x14x14xf64>
    %v = nn.reduce_mean %s dims [1, 3, 4] : tensor<4x5x32x14x14xf64> -> tensor<4x32xf64>
    nn.yield %v : tensor<4x32xf64>
  }
  %t = nn.fused(%y) : (tensor<100x100xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<100x100xf32>):
    %e = nn.exp %a : tensor<100x100xf32>
    %v = nn.reduce_sum %e dims [0, 1] : tensor<100x100xf32> -> tensor<f32>
    nn.yield %v : tensor<f32>
  }
  return %m, %t : tensor<4x32xf64>, tensor<f32>
}
