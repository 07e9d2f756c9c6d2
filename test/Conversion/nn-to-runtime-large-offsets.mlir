// RUN: metac-opt %s --convert-nn-to-runtime | mlir-translate --mlir-to-llvmir | FileCheck %s

// Byte offsets into a concatenation (a gradient bucket) and views of it at
// 256 MiB and beyond: an LLVM dialect GEP's constant index holds 29 signed
// bits, so such an offset must go as a value (as a constant it wrapped to
// -256 MiB and a pipelined 100M GPT wrote below its bucket).
meta.tasks @t "sinusoid" support 4 query 4 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @m(%w: tensor<1x1xf32> {meta.param = "w"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @train model @m tasks @t loss <mse> algorithm #meta.maml<steps = 1, inner_lr = 0.1, order = 2> optimizer #meta.sgd<lr = 1.0, momentum = 0.0, weight_decay = 0.0> attributes {iterations = 1 : i64, meta_batch = 1 : i64, seed = 0 : i64, meta.step = @train.step} {
}
func.func @train.step(%a: tensor<67108864xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = tensor.concat dim(0) %a, %b : (tensor<67108864xf32>, tensor<4xf32>) -> tensor<67108868xf32>
  %s = tensor.extract_slice %c[67108864] [4] [1] : tensor<67108868xf32> to tensor<4xf32>
  %t = tensor.extract_slice %c[4] [4] [1] : tensor<67108868xf32> to tensor<4xf32>
  return %s, %t : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: define {{.*}} @train.step(
// The second operand's copy into the concatenation, at 2^28 bytes.
// CHECK: getelementptr i8, ptr %{{[0-9]+}}, i64 268435456
// CHECK: call i32 @metart_copy_device
// The view of it, at the same offset; a small one stays a constant.
// CHECK: getelementptr i8, ptr %{{[0-9]+}}, i64 268435456
// CHECK: getelementptr i8, ptr %{{[0-9]+}}, i32 16
