// RUN: metac-opt %s | FileCheck %s
// RUN: metac-opt %s | metac-opt | FileCheck %s
// RUN: metac-opt %s --mlir-print-op-generic | metac-opt | FileCheck %s

// Round trip of every meta op and attribute. Doubles print with as many digits
// as they need to parse back to the same value (3.14159265 is not exactly
// representable and prints as 3.1415926500000002 on every pass).

//===----------------------------------------------------------------------===//
// Task distributions
//===----------------------------------------------------------------------===//

// CHECK: meta.tasks @sine "sinusoid" support 10 query 10 : tensor<1xf32> -> tensor<1xf32> config {amplitude = [1.000000e-01, 5.000000e+00], input = [-5.000000e+00, 5.000000e+00], phase = [0.000000e+00, 3.1415926500000002]}
meta.tasks @sine "sinusoid" support 10 query 10 : tensor<1xf32> -> tensor<1xf32>
    config {amplitude = [1.0e-01, 5.0], phase = [0.0, 3.14159265], input = [-5.0, 5.0]}

// CHECK: meta.tasks @sine_eval "sinusoid" support 5 query 100 : tensor<1xf32> -> tensor<1xf32> config {amplitude = [1.000000e-01, 5.000000e+00], input = [-5.000000e+00, 5.000000e+00], phase = [0.000000e+00, 3.1415926500000002]}
meta.tasks @sine_eval "sinusoid" support 5 query 100 : tensor<1xf32> -> tensor<1xf32>
    config {amplitude = [1.0e-01, 5.0], phase = [0.0, 3.14159265], input = [-5.0, 5.0]}

// 5-way 1-shot, 15 queries per class.
// CHECK: meta.tasks @fashion "fashion_mnist" support 5 query 75 ways 5 : tensor<1x28x28xf32> -> tensor<i64> config {classes = [0, 1, 2, 3, 4, 5, 6], root = "data/fashion"}
meta.tasks @fashion "fashion_mnist" support 5 query 75 ways 5 : tensor<1x28x28xf32> -> tensor<i64>
    config {classes = [0, 1, 2, 3, 4, 5, 6], root = "data/fashion"}

// CHECK: meta.tasks @fashion_test "fashion_mnist" support 25 query 75 ways 5 : tensor<1x28x28xf32> -> tensor<i64> config {classes = [7, 8, 9], root = "data/fashion"}
meta.tasks @fashion_test "fashion_mnist" support 25 query 75 ways 5 : tensor<1x28x28xf32> -> tensor<i64>
    config {classes = [7, 8, 9], root = "data/fashion"}

// CHECK: meta.tasks @folder "image_folder" support 10 query 10 ways 2 : tensor<3x8x8xf32> -> tensor<i32> config {path = "data/images"}
meta.tasks @folder "image_folder" support 10 query 10 ways 2 : tensor<3x8x8xf32> -> tensor<i32>
    config {path = "data/images"}

// Episodes with float targets (regression) and with integer labels.
// CHECK: meta.tasks @episodes "episodes" support 4 query 4 : tensor<6xf64> -> tensor<2xf64> config {}
meta.tasks @episodes "episodes" support 4 query 4 : tensor<6xf64> -> tensor<2xf64> config {}

// CHECK: meta.tasks @episodes_cls "episodes" support 6 query 9 ways 3 : tensor<16xf16> -> tensor<i64> config {path = "episodes.npz"}
meta.tasks @episodes_cls "episodes" support 6 query 9 ways 3 : tensor<16xf16> -> tensor<i64>
    config {path = "episodes.npz"}

// Extra attributes go after the config.
// CHECK: meta.tasks @tagged "sinusoid" support 1 query 1 : tensor<1xf64> -> tensor<1xf64> config {} {note = "extra"}
meta.tasks @tagged "sinusoid" support 1 query 1 : tensor<1xf64> -> tensor<1xf64> config {} {note = "extra"}

//===----------------------------------------------------------------------===//
// Models: parameters first (named with meta.param), the sample last
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @sine_model
// CHECK-SAME: (%[[W1:.*]]: tensor<40x1xf32> {meta.param = "fc1.weight"}, %[[B1:.*]]: tensor<40xf32> {meta.param = "fc1.bias"}, %[[W2:.*]]: tensor<1x40xf32> {meta.param = "fc2.weight"}, %[[B2:.*]]: tensor<1xf32> {meta.param = "fc2.bias"}, %[[X:.*]]: tensor<1xf32>) -> tensor<1xf32>
// CHECK: %[[H:.*]] = nn.linear %[[X]], %[[W1]], %[[B1]]
// CHECK: %[[A:.*]] = nn.relu %[[H]]
// CHECK: %[[Y:.*]] = nn.linear %[[A]], %[[W2]], %[[B2]]
// CHECK: return %[[Y]] : tensor<1xf32>
func.func @sine_model(%w1: tensor<40x1xf32> {meta.param = "fc1.weight"},
                      %b1: tensor<40xf32> {meta.param = "fc1.bias"},
                      %w2: tensor<1x40xf32> {meta.param = "fc2.weight"},
                      %b2: tensor<1xf32> {meta.param = "fc2.bias"},
                      %x: tensor<1xf32>) -> tensor<1xf32> {
  %h = nn.linear %x, %w1, %b1 : tensor<1xf32>, tensor<40x1xf32>, tensor<40xf32> -> tensor<40xf32>
  %a = nn.relu %h : tensor<40xf32>
  %y = nn.linear %a, %w2, %b2 : tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}

// CHECK-LABEL: func.func @fashion_model
// CHECK-SAME: (%[[W:.*]]: tensor<5x784xf32> {meta.param = "head.weight"}, %[[B:.*]]: tensor<5xf32> {meta.param = "head.bias"}, %[[X:.*]]: tensor<1x28x28xf32>) -> tensor<5xf32>
// CHECK: %[[F:.*]] = nn.reshape %[[X]] : tensor<1x28x28xf32> -> tensor<784xf32>
// CHECK: %[[L:.*]] = nn.linear %[[F]], %[[W]], %[[B]]
// CHECK: return %[[L]] : tensor<5xf32>
func.func @fashion_model(%w: tensor<5x784xf32> {meta.param = "head.weight"},
                         %b: tensor<5xf32> {meta.param = "head.bias"},
                         %x: tensor<1x28x28xf32>) -> tensor<5xf32> {
  %f = nn.reshape %x : tensor<1x28x28xf32> -> tensor<784xf32>
  %l = nn.linear %f, %w, %b : tensor<784xf32>, tensor<5x784xf32>, tensor<5xf32> -> tensor<5xf32>
  return %l : tensor<5xf32>
}

// A ProtoNet embedding network: its output is an embedding, not logits.
// CHECK-LABEL: func.func @embedding_model
// CHECK-SAME: (%[[W:.*]]: tensor<64x784xf32> {meta.param = "body.weight"}, %[[X:.*]]: tensor<1x28x28xf32>) -> tensor<64xf32>
func.func @embedding_model(%w: tensor<64x784xf32> {meta.param = "body.weight"},
                           %x: tensor<1x28x28xf32>) -> tensor<64xf32> {
  %f = nn.reshape %x : tensor<1x28x28xf32> -> tensor<784xf32>
  %e = nn.linear %f, %w : tensor<784xf32>, tensor<64x784xf32> -> tensor<64xf32>
  return %e : tensor<64xf32>
}

// A model without parameters is only its sample.
// CHECK-LABEL: func.func @episodes_model
// CHECK-SAME: (%[[X:.*]]: tensor<6xf64>) -> tensor<2xf64>
func.func @episodes_model(%x: tensor<6xf64>) -> tensor<2xf64> {
  %y = nn.reshape %x : tensor<6xf64> -> tensor<3x2xf64>
  %s = nn.reduce_sum %y dims [0] : tensor<3x2xf64> -> tensor<2xf64>
  return %s : tensor<2xf64>
}

// CHECK-LABEL: func.func @episodes_cls_model
// CHECK-SAME: (%[[W:.*]]: tensor<3x16xf16> {meta.param = "head.weight"}, %[[X:.*]]: tensor<16xf16>) -> tensor<3xf16>
func.func @episodes_cls_model(%w: tensor<3x16xf16> {meta.param = "head.weight"},
                              %x: tensor<16xf16>) -> tensor<3xf16> {
  %l = nn.linear %x, %w : tensor<16xf16>, tensor<3x16xf16> -> tensor<3xf16>
  return %l : tensor<3xf16>
}

//===----------------------------------------------------------------------===//
// Training programs
//===----------------------------------------------------------------------===//

// CHECK-LABEL: meta.train @sine_maml model @sine_model tasks @sine loss <mse> algorithm #meta.maml<steps = 5, inner_lr = 1.000000e-02, order = 2> optimizer #meta.adam<lr = 1.000000e-03, beta1 = 9.000000e-01, beta2 = 0.99899999999999999, eps = 1.000000e-08, weight_decay = 0.000000e+00> attributes {iterations = 70000 : i64, meta_batch = 25 : i64, seed = 42 : i64} {
// CHECK-NEXT: meta.evaluate tasks @sine_eval count 600 steps [0, 1, 10]
// CHECK-NEXT: meta.evaluate tasks @sine count 100 steps [5]
// CHECK-NEXT: }
meta.train @sine_maml model @sine_model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 5, inner_lr = 0.01, order = 2>
    optimizer #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
    attributes {meta_batch = 25 : i64, iterations = 70000 : i64, seed = 42 : i64} {
  meta.evaluate tasks @sine_eval count 600 steps [0, 1, 10]
  meta.evaluate tasks @sine count 100 steps [5]
}

// First-order MAML with a plan and checkpoints; no evaluation.
// CHECK-LABEL: meta.train @sine_fomaml model @sine_model tasks @sine loss <mse> algorithm #meta.maml<steps = 1, inner_lr = 3.1415926500000002, order = 1> optimizer #meta.sgd<lr = 1.000000e-02, momentum = 0.000000e+00, weight_decay = 0.000000e+00> attributes {checkpoint_dir = "ckpt/sine", checkpoint_every = 1000 : i64, iterations = 0 : i64, meta_batch = 32 : i64, plan = #meta.plan<task = 4, data = 2, tensor = 1, pipeline = 2, micro_batches = 8, schedule = "1f1b">, seed = 0 : i64} {
// CHECK-NEXT: }
meta.train @sine_fomaml model @sine_model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 3.14159265, order = 1>
    optimizer #meta.sgd<lr = 0.01, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 32 : i64, iterations = 0 : i64, seed = 0 : i64,
                plan = #meta.plan<task = 4, data = 2, tensor = 1, pipeline = 2, micro_batches = 8, schedule = "1f1b">,
                checkpoint_every = 1000 : i64, checkpoint_dir = "ckpt/sine"} {
}

// CHECK-LABEL: meta.train @sine_reptile model @sine_model tasks @sine loss <mse> algorithm #meta.reptile<steps = 10, inner_lr = 2.000000e-02> optimizer #meta.sgd<lr = 1.000000e-01, momentum = 0.000000e+00, weight_decay = 0.000000e+00> attributes {iterations = 1000 : i64, meta_batch = 5 : i64, plan = #meta.plan<task = 1, data = 1, tensor = 1, pipeline = 1, micro_batches = 1, schedule = gpipe>, seed = 1 : i64} {
// CHECK-NEXT: meta.evaluate tasks @sine_eval count 10 steps [0, 32]
meta.train @sine_reptile model @sine_model tasks @sine loss <mse>
    algorithm #meta.reptile<steps = 10, inner_lr = 0.02>
    optimizer #meta.sgd<lr = 0.1, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 5 : i64, iterations = 1000 : i64, seed = 1 : i64,
                plan = #meta.plan<task = 1, data = 1, tensor = 1, pipeline = 1, micro_batches = 1, schedule = gpipe>} {
  meta.evaluate tasks @sine_eval count 10 steps [0, 32]
}

// CHECK-LABEL: meta.train @sine_imaml model @sine_model tasks @sine loss <mse> algorithm #meta.imaml<steps = 10, inner_lr = 1.000000e-02, lambda = 2.000000e+00, cg_steps = 5> optimizer #meta.adamw<lr = 1.000000e-03, beta1 = 0.000000e+00, beta2 = 0.99899999999999999, eps = 1.000000e-08, weight_decay = 1.000000e-02> attributes {iterations = 10 : i64, meta_batch = 4 : i64, seed = 7 : i64} {
meta.train @sine_imaml model @sine_model tasks @sine loss <mse>
    algorithm #meta.imaml<steps = 10, inner_lr = 0.01, lambda = 2.0, cg_steps = 5>
    optimizer #meta.adamw<lr = 0.001, beta1 = 0.0, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 7 : i64} {
}

// CHECK-LABEL: meta.train @fashion_anil model @fashion_model tasks @fashion loss <cross_entropy> algorithm #meta.anil<steps = 5, inner_lr = 4.000000e-01, order = 2, head = "head"> optimizer #meta.adam<lr = 1.000000e-03, beta1 = 9.000000e-01, beta2 = 0.99899999999999999, eps = 1.000000e-08, weight_decay = 5.000000e-04> attributes {iterations = 100 : i64, meta_batch = 32 : i64, seed = 3 : i64} {
// CHECK-NEXT: meta.evaluate tasks @fashion_test count 1000 steps [10]
meta.train @fashion_anil model @fashion_model tasks @fashion loss <cross_entropy>
    algorithm #meta.anil<steps = 5, inner_lr = 0.4, order = 2, head = "head">
    optimizer #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 5.0e-4>
    attributes {meta_batch = 32 : i64, iterations = 100 : i64, seed = 3 : i64} {
  meta.evaluate tasks @fashion_test count 1000 steps [10]
}

// CHECK-LABEL: meta.train @fashion_metasgd model @fashion_model tasks @fashion loss <cross_entropy> algorithm #meta.metasgd<steps = 1, inner_lr = 1.000000e-01, order = 1> optimizer #meta.sgd<lr = 1.000000e-02, momentum = 9.000000e-01, weight_decay = 1.000000e-04> attributes {iterations = 100 : i64, meta_batch = 16 : i64, seed = 3 : i64} {
meta.train @fashion_metasgd model @fashion_model tasks @fashion loss <cross_entropy>
    algorithm #meta.metasgd<steps = 1, inner_lr = 0.1, order = 1>
    optimizer #meta.sgd<lr = 0.01, momentum = 0.9, weight_decay = 1.0e-4>
    attributes {meta_batch = 16 : i64, iterations = 100 : i64, seed = 3 : i64} {
}

// CHECK-LABEL: meta.train @fashion_protonet model @embedding_model tasks @fashion loss <cross_entropy> algorithm #meta.protonet<distance = squared_euclidean> optimizer #meta.adam<lr = 1.000000e-03, beta1 = 9.000000e-01, beta2 = 0.99899999999999999, eps = 1.000000e-08, weight_decay = 0.000000e+00> attributes {iterations = 100 : i64, meta_batch = 8 : i64, seed = 3 : i64} {
// CHECK-NEXT: meta.evaluate tasks @fashion_test count 100 steps [0]
meta.train @fashion_protonet model @embedding_model tasks @fashion loss <cross_entropy>
    algorithm #meta.protonet<distance = squared_euclidean>
    optimizer #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
    attributes {meta_batch = 8 : i64, iterations = 100 : i64, seed = 3 : i64} {
  meta.evaluate tasks @fashion_test count 100 steps [0]
}

// CHECK-LABEL: meta.train @episodes_mse model @episodes_model tasks @episodes loss <mse>
meta.train @episodes_mse model @episodes_model tasks @episodes loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.5, order = 2>
    optimizer #meta.sgd<lr = 1.0, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 1 : i64, iterations = 1 : i64, seed = 0 : i64} {
}

// CHECK-LABEL: meta.train @episodes_ce model @episodes_cls_model tasks @episodes_cls loss <cross_entropy>
meta.train @episodes_ce model @episodes_cls_model tasks @episodes_cls loss <cross_entropy>
    algorithm #meta.maml<steps = 1, inner_lr = 0.5, order = 2>
    optimizer #meta.sgd<lr = 1.0, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 2 : i64, iterations = 1 : i64, seed = 0 : i64} {
}

//===----------------------------------------------------------------------===//
// meta.task_batch
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @task_batch
// CHECK: %[[SX:.*]], %[[SY:.*]], %[[QX:.*]], %[[QY:.*]] = meta.task_batch @sine : tensor<10x1xf32>, tensor<10x1xf32>, tensor<10x1xf32>, tensor<10x1xf32>
// CHECK: return %[[SX]], %[[SY]], %[[QX]], %[[QY]]
func.func @task_batch() -> (tensor<10x1xf32>, tensor<10x1xf32>, tensor<10x1xf32>, tensor<10x1xf32>) {
  %sx, %sy, %qx, %qy = meta.task_batch @sine : tensor<10x1xf32>, tensor<10x1xf32>, tensor<10x1xf32>, tensor<10x1xf32>
  return %sx, %sy, %qx, %qy : tensor<10x1xf32>, tensor<10x1xf32>, tensor<10x1xf32>, tensor<10x1xf32>
}

// Classification: 0-d labels get the set size as their only dimension.
// CHECK-LABEL: func.func @task_batch_classification
// CHECK: %[[SX:.*]], %[[SY:.*]], %[[QX:.*]], %[[QY:.*]] = meta.task_batch @fashion : tensor<5x1x28x28xf32>, tensor<5xi64>, tensor<75x1x28x28xf32>, tensor<75xi64>
// CHECK: return %[[SY]], %[[QY]]
func.func @task_batch_classification() -> (tensor<5xi64>, tensor<75xi64>) {
  %sx, %sy, %qx, %qy = meta.task_batch @fashion : tensor<5x1x28x28xf32>, tensor<5xi64>, tensor<75x1x28x28xf32>, tensor<75xi64>
  return %sy, %qy : tensor<5xi64>, tensor<75xi64>
}

//===----------------------------------------------------------------------===//
// meta.grad
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @grad
// CHECK-SAME: (%[[W:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4xf32>, %[[X:.*]]: tensor<5x3xf32>, %[[T:.*]]: tensor<5x4xf32>)
// CHECK: %[[V:.*]], %[[G:.*]]:2 = meta.grad(%[[W]], %[[B]]) : (tensor<4x3xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4x3xf32>, tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[PW:.*]]: tensor<4x3xf32>, %[[PB:.*]]: tensor<4xf32>):
// CHECK-NEXT: %[[Y:.*]] = nn.linear %[[X]], %[[PW]], %[[PB]]
// CHECK-NEXT: %[[L:.*]] = nn.mse_loss %[[Y]], %[[T]]
// CHECK-NEXT: meta.yield %[[L]] : tensor<f32>
// CHECK-NEXT: }
// CHECK: return %[[V]], %[[G]]#0, %[[G]]#1
func.func @grad(%w: tensor<4x3xf32>, %b: tensor<4xf32>, %x: tensor<5x3xf32>,
                %t: tensor<5x4xf32>) -> (tensor<f32>, tensor<4x3xf32>, tensor<4xf32>) {
  %loss, %g:2 = meta.grad(%w, %b) : (tensor<4x3xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4x3xf32>, tensor<4xf32>) {
  ^bb0(%pw: tensor<4x3xf32>, %pb: tensor<4xf32>):
    %y = nn.linear %x, %pw, %pb : tensor<5x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<5x4xf32>
    %l = nn.mse_loss %y, %t : tensor<5x4xf32>, tensor<5x4xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %loss, %g#0, %g#1 : tensor<f32>, tensor<4x3xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @grad_first_order
// CHECK-SAME: (%[[W:.*]]: tensor<3xf64>)
// CHECK: %[[V:.*]], %[[G:.*]] = meta.grad(%[[W]]) first_order : (tensor<3xf64>) -> (tensor<f64>, tensor<3xf64>) {
// CHECK-NEXT: ^bb0(%[[P:.*]]: tensor<3xf64>):
// CHECK-NEXT: %[[S:.*]] = nn.mul %[[P]], %[[P]] : tensor<3xf64>
// CHECK-NEXT: %[[L:.*]] = nn.reduce_sum %[[S]] dims [0] : tensor<3xf64> -> tensor<f64>
// CHECK-NEXT: meta.yield %[[L]] : tensor<f64>
// CHECK-NEXT: }
// CHECK: return %[[G]]
func.func @grad_first_order(%w: tensor<3xf64>) -> tensor<3xf64> {
  %loss, %g = meta.grad(%w) first_order : (tensor<3xf64>) -> (tensor<f64>, tensor<3xf64>) {
  ^bb0(%p: tensor<3xf64>):
    %s = nn.mul %p, %p : tensor<3xf64>
    %l = nn.reduce_sum %s dims [0] : tensor<3xf64> -> tensor<f64>
    meta.yield %l : tensor<f64>
  }
  return %g : tensor<3xf64>
}

// Second order: the outer gradient flows through an inner SGD step whose
// gradient is itself a meta.grad of the outer body's argument.
// CHECK-LABEL: func.func @grad_nested
// CHECK-SAME: (%[[W:.*]]: tensor<4x3xf32>, %[[X:.*]]: tensor<5x3xf32>, %[[T:.*]]: tensor<5x4xf32>)
// CHECK: %[[OV:.*]], %[[OG:.*]] = meta.grad(%[[W]]) : (tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>) {
// CHECK-NEXT: ^bb0(%[[PW:.*]]: tensor<4x3xf32>):
// CHECK-NEXT: %[[IV:.*]], %[[IG:.*]] = meta.grad(%[[PW]]) : (tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>) {
// CHECK-NEXT: ^bb0(%[[QW:.*]]: tensor<4x3xf32>):
// CHECK-NEXT: %[[Y:.*]] = nn.linear %[[X]], %[[QW]]
// CHECK-NEXT: %[[L:.*]] = nn.mse_loss %[[Y]], %[[T]]
// CHECK-NEXT: meta.yield %[[L]] : tensor<f32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[STEP:.*]] = nn.scale %[[IG]] by -1.000000e-02 : tensor<4x3xf32>
// CHECK-NEXT: %[[ADAPTED:.*]] = nn.add %[[PW]], %[[STEP]] : tensor<4x3xf32>
// CHECK-NEXT: %[[Y2:.*]] = nn.linear %[[X]], %[[ADAPTED]]
// CHECK-NEXT: %[[L2:.*]] = nn.mse_loss %[[Y2]], %[[T]]
// CHECK-NEXT: meta.yield %[[L2]] : tensor<f32>
// CHECK-NEXT: }
// CHECK: return %[[OV]], %[[OG]]
func.func @grad_nested(%w: tensor<4x3xf32>, %x: tensor<5x3xf32>,
                       %t: tensor<5x4xf32>) -> (tensor<f32>, tensor<4x3xf32>) {
  %loss, %g = meta.grad(%w) : (tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>) {
  ^bb0(%pw: tensor<4x3xf32>):
    %inner, %ig = meta.grad(%pw) : (tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>) {
    ^bb0(%qw: tensor<4x3xf32>):
      %y = nn.linear %x, %qw : tensor<5x3xf32>, tensor<4x3xf32> -> tensor<5x4xf32>
      %l = nn.mse_loss %y, %t : tensor<5x4xf32>, tensor<5x4xf32> -> tensor<f32>
      meta.yield %l : tensor<f32>
    }
    %step = nn.scale %ig by -0.01 : tensor<4x3xf32>
    %adapted = nn.add %pw, %step : tensor<4x3xf32>
    %y2 = nn.linear %x, %adapted : tensor<5x3xf32>, tensor<4x3xf32> -> tensor<5x4xf32>
    %l2 = nn.mse_loss %y2, %t : tensor<5x4xf32>, tensor<5x4xf32> -> tensor<f32>
    meta.yield %l2 : tensor<f32>
  }
  return %loss, %g : tensor<f32>, tensor<4x3xf32>
}

// A first-order inner gradient inside a second-order outer one.
// CHECK-LABEL: func.func @grad_nested_first_order
// CHECK: meta.grad(%{{.*}}) : (tensor<2xbf16>) -> (tensor<bf16>, tensor<2xbf16>) {
// CHECK: meta.grad(%{{.*}}) first_order : (tensor<2xbf16>) -> (tensor<bf16>, tensor<2xbf16>) {
func.func @grad_nested_first_order(%w: tensor<2xbf16>) -> tensor<2xbf16> {
  %loss, %g = meta.grad(%w) : (tensor<2xbf16>) -> (tensor<bf16>, tensor<2xbf16>) {
  ^bb0(%p: tensor<2xbf16>):
    %inner, %ig = meta.grad(%p) first_order : (tensor<2xbf16>) -> (tensor<bf16>, tensor<2xbf16>) {
    ^bb0(%q: tensor<2xbf16>):
      %s = nn.mul %q, %q : tensor<2xbf16>
      %l = nn.reduce_sum %s dims [0] : tensor<2xbf16> -> tensor<bf16>
      meta.yield %l : tensor<bf16>
    }
    %d = nn.mul %p, %ig : tensor<2xbf16>
    %l2 = nn.reduce_mean %d dims [0] : tensor<2xbf16> -> tensor<bf16>
    meta.yield %l2 : tensor<bf16>
  }
  return %g : tensor<2xbf16>
}

//===----------------------------------------------------------------------===//
// meta.adapt
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @adapt
// CHECK-SAME: (%[[W:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4xf32>, %[[X:.*]]: tensor<5x3xf32>, %[[T:.*]]: tensor<5x4xf32>)
// CHECK: %[[A:.*]]:2 = meta.adapt(%[[W]], %[[B]]) steps 5 inner_lr 1.000000e-02 order 2 : (tensor<4x3xf32>, tensor<4xf32>) -> (tensor<4x3xf32>, tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[PW:.*]]: tensor<4x3xf32>, %[[PB:.*]]: tensor<4xf32>):
// CHECK-NEXT: %[[Y:.*]] = nn.linear %[[X]], %[[PW]], %[[PB]]
// CHECK-NEXT: %[[L:.*]] = nn.mse_loss %[[Y]], %[[T]]
// CHECK-NEXT: meta.yield %[[L]] : tensor<f32>
// CHECK-NEXT: }
// CHECK: return %[[A]]#0, %[[A]]#1
func.func @adapt(%w: tensor<4x3xf32>, %b: tensor<4xf32>, %x: tensor<5x3xf32>,
                 %t: tensor<5x4xf32>) -> (tensor<4x3xf32>, tensor<4xf32>) {
  %a:2 = meta.adapt(%w, %b) steps 5 inner_lr 0.01 order 2 : (tensor<4x3xf32>, tensor<4xf32>) -> (tensor<4x3xf32>, tensor<4xf32>) {
  ^bb0(%pw: tensor<4x3xf32>, %pb: tensor<4xf32>):
    %y = nn.linear %x, %pw, %pb : tensor<5x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<5x4xf32>
    %l = nn.mse_loss %y, %t : tensor<5x4xf32>, tensor<5x4xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a#0, %a#1 : tensor<4x3xf32>, tensor<4xf32>
}

// First order, an inexact double and a model call in the body.
// CHECK-LABEL: func.func @adapt_first_order
// CHECK: %[[A:.*]]:4 = meta.adapt(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) steps 1 inner_lr 3.1415926500000002 order 1 : (tensor<40x1xf32>, tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32>) -> (tensor<40x1xf32>, tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32>) {
// CHECK-NEXT: ^bb0(%[[W1:.*]]: tensor<40x1xf32>, %[[B1:.*]]: tensor<40xf32>, %[[W2:.*]]: tensor<1x40xf32>, %[[B2:.*]]: tensor<1xf32>):
// CHECK-NEXT: %[[Y:.*]] = func.call @sine_model(%[[W1]], %[[B1]], %[[W2]], %[[B2]], %{{.*}})
// CHECK-NEXT: %[[L:.*]] = nn.mse_loss %[[Y]], %{{.*}}
// CHECK-NEXT: meta.yield %[[L]] : tensor<f32>
func.func @adapt_first_order(%w1: tensor<40x1xf32>, %b1: tensor<40xf32>,
                             %w2: tensor<1x40xf32>, %b2: tensor<1xf32>,
                             %x: tensor<1xf32>, %t: tensor<1xf32>) -> tensor<1x40xf32> {
  %a:4 = meta.adapt(%w1, %b1, %w2, %b2) steps 1 inner_lr 3.14159265 order 1 : (tensor<40x1xf32>, tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32>) -> (tensor<40x1xf32>, tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32>) {
  ^bb0(%pw1: tensor<40x1xf32>, %pb1: tensor<40xf32>, %pw2: tensor<1x40xf32>, %pb2: tensor<1xf32>):
    %y = func.call @sine_model(%pw1, %pb1, %pw2, %pb2, %x) : (tensor<40x1xf32>, tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %l = nn.mse_loss %y, %t : tensor<1xf32>, tensor<1xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a#2 : tensor<1x40xf32>
}

// An adaptation whose loss is itself a gradient computation.
// CHECK-LABEL: func.func @adapt_with_grad
// CHECK: meta.adapt(%{{.*}}) steps 3 inner_lr 5.000000e-01 order 2 : (tensor<2xf32>) -> tensor<2xf32> {
// CHECK: meta.grad(%{{.*}}) first_order : (tensor<2xf32>) -> (tensor<f32>, tensor<2xf32>) {
func.func @adapt_with_grad(%w: tensor<2xf32>) -> tensor<2xf32> {
  %a = meta.adapt(%w) steps 3 inner_lr 0.5 order 2 : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%p: tensor<2xf32>):
    %v, %g = meta.grad(%p) first_order : (tensor<2xf32>) -> (tensor<f32>, tensor<2xf32>) {
    ^bb0(%q: tensor<2xf32>):
      %s = nn.mul %q, %q : tensor<2xf32>
      %l = nn.reduce_sum %s dims [0] : tensor<2xf32> -> tensor<f32>
      meta.yield %l : tensor<f32>
    }
    meta.yield %v : tensor<f32>
  }
  return %a : tensor<2xf32>
}

//===----------------------------------------------------------------------===//
// meta.outer_step
//===----------------------------------------------------------------------===//

// SGD without momentum: no state. Result types are inferred (the new
// parameters, then the new state).
// CHECK-LABEL: func.func @outer_step_sgd
// CHECK-SAME: (%[[W:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4xf32>, %[[GW:.*]]: tensor<4x3xf32>, %[[GB:.*]]: tensor<4xf32>)
// CHECK: %[[P:.*]]:2 = meta.outer_step #meta.sgd<lr = 1.000000e-02, momentum = 0.000000e+00, weight_decay = 0.000000e+00> params(%[[W]], %[[B]] : tensor<4x3xf32>, tensor<4xf32>) grads(%[[GW]], %[[GB]] : tensor<4x3xf32>, tensor<4xf32>) state(){{$}}
// CHECK: return %[[P]]#0, %[[P]]#1
func.func @outer_step_sgd(%w: tensor<4x3xf32>, %b: tensor<4xf32>, %gw: tensor<4x3xf32>,
                          %gb: tensor<4xf32>) -> (tensor<4x3xf32>, tensor<4xf32>) {
  %p:2 = meta.outer_step #meta.sgd<lr = 0.01, momentum = 0.0, weight_decay = 0.0>
      params(%w, %b : tensor<4x3xf32>, tensor<4xf32>)
      grads(%gw, %gb : tensor<4x3xf32>, tensor<4xf32>) state()
  return %p#0, %p#1 : tensor<4x3xf32>, tensor<4xf32>
}

// SGD with momentum: one buffer per parameter.
// CHECK-LABEL: func.func @outer_step_sgd_momentum
// CHECK-SAME: (%[[W:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4xf32>, %[[GW:.*]]: tensor<4x3xf32>, %[[GB:.*]]: tensor<4xf32>, %[[MW:.*]]: tensor<4x3xf32>, %[[MB:.*]]: tensor<4xf32>)
// CHECK: %[[R:.*]]:4 = meta.outer_step #meta.sgd<lr = 1.000000e-02, momentum = 9.000000e-01, weight_decay = 5.000000e-04> params(%[[W]], %[[B]] : tensor<4x3xf32>, tensor<4xf32>) grads(%[[GW]], %[[GB]] : tensor<4x3xf32>, tensor<4xf32>) state(%[[MW]], %[[MB]] : tensor<4x3xf32>, tensor<4xf32>)
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3
func.func @outer_step_sgd_momentum(%w: tensor<4x3xf32>, %b: tensor<4xf32>,
                                   %gw: tensor<4x3xf32>, %gb: tensor<4xf32>,
                                   %mw: tensor<4x3xf32>, %mb: tensor<4xf32>)
    -> (tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<4xf32>) {
  %r:4 = meta.outer_step #meta.sgd<lr = 0.01, momentum = 0.9, weight_decay = 5.0e-4>
      params(%w, %b : tensor<4x3xf32>, tensor<4xf32>)
      grads(%gw, %gb : tensor<4x3xf32>, tensor<4xf32>)
      state(%mw, %mb : tensor<4x3xf32>, tensor<4xf32>)
  return %r#0, %r#1, %r#2, %r#3 : tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<4xf32>
}

// Adam: first moments, second moments, then the tensor<i64> step count.
// CHECK-LABEL: func.func @outer_step_adam
// CHECK-SAME: (%[[W:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4xf32>, %[[GW:.*]]: tensor<4x3xf32>, %[[GB:.*]]: tensor<4xf32>, %[[MW:.*]]: tensor<4x3xf32>, %[[MB:.*]]: tensor<4xf32>, %[[VW:.*]]: tensor<4x3xf32>, %[[VB:.*]]: tensor<4xf32>, %[[N:.*]]: tensor<i64>)
// CHECK: %[[R:.*]]:7 = meta.outer_step #meta.adam<lr = 1.000000e-03, beta1 = 9.000000e-01, beta2 = 0.99899999999999999, eps = 1.000000e-08, weight_decay = 0.000000e+00> params(%[[W]], %[[B]] : tensor<4x3xf32>, tensor<4xf32>) grads(%[[GW]], %[[GB]] : tensor<4x3xf32>, tensor<4xf32>) state(%[[MW]], %[[MB]], %[[VW]], %[[VB]], %[[N]] : tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<i64>)
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#6
func.func @outer_step_adam(%w: tensor<4x3xf32>, %b: tensor<4xf32>,
                           %gw: tensor<4x3xf32>, %gb: tensor<4xf32>,
                           %mw: tensor<4x3xf32>, %mb: tensor<4xf32>,
                           %vw: tensor<4x3xf32>, %vb: tensor<4xf32>,
                           %n: tensor<i64>) -> (tensor<4x3xf32>, tensor<4xf32>, tensor<i64>) {
  %r:7 = meta.outer_step #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
      params(%w, %b : tensor<4x3xf32>, tensor<4xf32>)
      grads(%gw, %gb : tensor<4x3xf32>, tensor<4xf32>)
      state(%mw, %mb, %vw, %vb, %n : tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<i64>)
  return %r#0, %r#1, %r#6 : tensor<4x3xf32>, tensor<4xf32>, tensor<i64>
}

// AdamW, one f16 parameter.
// CHECK-LABEL: func.func @outer_step_adamw
// CHECK-SAME: (%[[W:.*]]: tensor<8xf16>, %[[G:.*]]: tensor<8xf16>, %[[M:.*]]: tensor<8xf16>, %[[V:.*]]: tensor<8xf16>, %[[N:.*]]: tensor<i64>)
// CHECK: %[[R:.*]]:4 = meta.outer_step #meta.adamw<lr = 1.000000e-03, beta1 = 9.000000e-01, beta2 = 0.99899999999999999, eps = 1.000000e-08, weight_decay = 1.000000e-02> params(%[[W]] : tensor<8xf16>) grads(%[[G]] : tensor<8xf16>) state(%[[M]], %[[V]], %[[N]] : tensor<8xf16>, tensor<8xf16>, tensor<i64>)
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3
func.func @outer_step_adamw(%w: tensor<8xf16>, %g: tensor<8xf16>, %m: tensor<8xf16>,
                            %v: tensor<8xf16>, %n: tensor<i64>)
    -> (tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<i64>) {
  %r:4 = meta.outer_step #meta.adamw<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01>
      params(%w : tensor<8xf16>) grads(%g : tensor<8xf16>)
      state(%m, %v, %n : tensor<8xf16>, tensor<8xf16>, tensor<i64>)
  return %r#0, %r#1, %r#2, %r#3 : tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<i64>
}

// Adam with no parameters still carries its step count.
// CHECK-LABEL: func.func @outer_step_adam_empty
// CHECK: %[[S:.*]] = meta.outer_step #meta.adam<{{.*}}> params() grads() state(%{{.*}} : tensor<i64>)
func.func @outer_step_adam_empty(%n: tensor<i64>) -> tensor<i64> {
  %s = meta.outer_step #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
      params() grads() state(%n : tensor<i64>)
  return %s : tensor<i64>
}

//===----------------------------------------------------------------------===//
// A full step of batched MAML on one task, put together
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @maml_step
// CHECK: %[[SX:.*]], %[[SY:.*]], %[[QX:.*]], %[[QY:.*]] = meta.task_batch @sine
// CHECK: %[[QL:.*]], %[[G:.*]]:4 = meta.grad(
// CHECK: %[[A:.*]]:4 = meta.adapt(
// CHECK: nn.linear %[[SX]]
// CHECK: nn.mse_loss %{{.*}}, %[[SY]]
// CHECK: meta.yield
// CHECK: nn.linear %[[QX]]
// CHECK: nn.mse_loss %{{.*}}, %[[QY]]
// CHECK: meta.yield
// CHECK: %[[P:.*]]:4 = meta.outer_step #meta.sgd<{{.*}}> params(%{{.*}}) grads(%[[G]]#0, %[[G]]#1, %[[G]]#2, %[[G]]#3 : {{.*}}) state()
func.func @maml_step(%w1: tensor<40x1xf32>, %b1: tensor<40xf32>,
                     %w2: tensor<1x40xf32>, %b2: tensor<1xf32>)
    -> (tensor<40x1xf32>, tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32>) {
  %sx, %sy, %qx, %qy = meta.task_batch @sine : tensor<10x1xf32>, tensor<10x1xf32>, tensor<10x1xf32>, tensor<10x1xf32>
  %ql, %g:4 = meta.grad(%w1, %b1, %w2, %b2) : (tensor<40x1xf32>, tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32>) -> (tensor<f32>, tensor<40x1xf32>, tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32>) {
  ^bb0(%pw1: tensor<40x1xf32>, %pb1: tensor<40xf32>, %pw2: tensor<1x40xf32>, %pb2: tensor<1xf32>):
    %a:4 = meta.adapt(%pw1, %pb1, %pw2, %pb2) steps 1 inner_lr 0.01 order 2 : (tensor<40x1xf32>, tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32>) -> (tensor<40x1xf32>, tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32>) {
    ^bb0(%aw1: tensor<40x1xf32>, %ab1: tensor<40xf32>, %aw2: tensor<1x40xf32>, %ab2: tensor<1xf32>):
      %h = nn.linear %sx, %aw1, %ab1 : tensor<10x1xf32>, tensor<40x1xf32>, tensor<40xf32> -> tensor<10x40xf32>
      %r = nn.relu %h : tensor<10x40xf32>
      %y = nn.linear %r, %aw2, %ab2 : tensor<10x40xf32>, tensor<1x40xf32>, tensor<1xf32> -> tensor<10x1xf32>
      %l = nn.mse_loss %y, %sy : tensor<10x1xf32>, tensor<10x1xf32> -> tensor<f32>
      meta.yield %l : tensor<f32>
    }
    %h = nn.linear %qx, %a#0, %a#1 : tensor<10x1xf32>, tensor<40x1xf32>, tensor<40xf32> -> tensor<10x40xf32>
    %r = nn.relu %h : tensor<10x40xf32>
    %y = nn.linear %r, %a#2, %a#3 : tensor<10x40xf32>, tensor<1x40xf32>, tensor<1xf32> -> tensor<10x1xf32>
    %l = nn.mse_loss %y, %qy : tensor<10x1xf32>, tensor<10x1xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  %p:4 = meta.outer_step #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
      params(%w1, %b1, %w2, %b2 : tensor<40x1xf32>, tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32>)
      grads(%g#0, %g#1, %g#2, %g#3 : tensor<40x1xf32>, tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32>) state()
  return %p#0, %p#1, %p#2, %p#3 : tensor<40x1xf32>, tensor<40xf32>, tensor<1x40xf32>, tensor<1xf32>
}

//===----------------------------------------------------------------------===//
// Every attribute on its own, as a discardable attribute
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func private @attributes()
// CHECK-SAME: adam = #meta.adam<lr = 1.000000e-03, beta1 = 9.000000e-01, beta2 = 0.99899999999999999, eps = 1.000000e-08, weight_decay = 0.000000e+00>
// CHECK-SAME: adamw = #meta.adamw<lr = 3.1415926500000002, beta1 = 0.000000e+00, beta2 = 5.000000e-01, eps = 9.9999999999999995E-7, weight_decay = 2.000000e-02>
// CHECK-SAME: anil = #meta.anil<steps = 2, inner_lr = 1.000000e-01, order = 1, head = "classifier">
// CHECK-SAME: imaml = #meta.imaml<steps = 16, inner_lr = 1.000000e-02, lambda = 1.000000e-01, cg_steps = 5>
// CHECK-SAME: loss_ce = #meta.loss<cross_entropy>
// CHECK-SAME: loss_mse = #meta.loss<mse>
// CHECK-SAME: maml = #meta.maml<steps = 5, inner_lr = 3.1415926500000002, order = 2>
// CHECK-SAME: metasgd = #meta.metasgd<steps = 1, inner_lr = 2.500000e-01, order = 2>
// CHECK-SAME: plan_1f1b = #meta.plan<task = 2, data = 4, tensor = 2, pipeline = 4, micro_batches = 16, schedule = "1f1b">
// CHECK-SAME: plan_gpipe = #meta.plan<task = 1, data = 1, tensor = 1, pipeline = 1, micro_batches = 1, schedule = gpipe>
// CHECK-SAME: protonet = #meta.protonet<distance = squared_euclidean>
// CHECK-SAME: reptile = #meta.reptile<steps = 10, inner_lr = 1.000000e-03>
// CHECK-SAME: sgd = #meta.sgd<lr = 1.000000e+00, momentum = 0.000000e+00, weight_decay = 0.000000e+00>
// CHECK-SAME: sgd_precise = #meta.sgd<lr = 0.12345678901234568, momentum = 0.99999999999999988, weight_decay = 1.000000e-300>
func.func private @attributes() attributes {
  maml = #meta.maml<steps = 5, inner_lr = 3.14159265, order = 2>,
  reptile = #meta.reptile<steps = 10, inner_lr = 1.0e-3>,
  anil = #meta.anil<steps = 2, inner_lr = 0.1, order = 1, head = "classifier">,
  metasgd = #meta.metasgd<steps = 1, inner_lr = 0.25, order = 2>,
  protonet = #meta.protonet<distance = squared_euclidean>,
  imaml = #meta.imaml<steps = 16, inner_lr = 0.01, lambda = 0.1, cg_steps = 5>,
  sgd = #meta.sgd<lr = 1.0, momentum = 0.0, weight_decay = 0.0>,
  sgd_precise = #meta.sgd<lr = 0.123456789012345678, momentum = 0.99999999999999989, weight_decay = 1.0e-300>,
  adam = #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>,
  adamw = #meta.adamw<lr = 3.14159265, beta1 = 0.0, beta2 = 0.5, eps = 1.0e-6, weight_decay = 0.02>,
  plan_gpipe = #meta.plan<task = 1, data = 1, tensor = 1, pipeline = 1, micro_batches = 1, schedule = gpipe>,
  plan_1f1b = #meta.plan<task = 2, data = 4, tensor = 2, pipeline = 4, micro_batches = 16, schedule = "1f1b">,
  loss_mse = #meta.loss<mse>,
  loss_ce = #meta.loss<cross_entropy>
}

//===----------------------------------------------------------------------===//
// meta.map
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @map_tasks
// CHECK: %[[R:.*]]:2 = meta.map(%{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<4x3xf32>) shared(%{{.*}} : tensor<3xf32>) -> tensor<4xf32>, tensor<4x3xf32> {
// CHECK: ^bb0(%[[A:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3xf32>):
// CHECK: meta.yield %{{.*}}, %{{.*}} : tensor<f32>, tensor<3xf32>
func.func @map_tasks(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>, %w: tensor<3xf32>) -> (tensor<4xf32>, tensor<4x3xf32>) {
  %r:2 = meta.map(%x, %y : tensor<4x3xf32>, tensor<4x3xf32>) shared(%w : tensor<3xf32>) -> tensor<4xf32>, tensor<4x3xf32> {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>, %v: tensor<3xf32>):
    %p = nn.mul %a, %v : tensor<3xf32>
    %d = nn.sub %p, %b : tensor<3xf32>
    %l = nn.mse_loss %p, %b : tensor<3xf32>, tensor<3xf32> -> tensor<f32>
    meta.yield %l, %d : tensor<f32>, tensor<3xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4x3xf32>
}

//===----------------------------------------------------------------------===//
// meta.update_guard and a gated outer step
//===----------------------------------------------------------------------===//

// The guard reads the loss and every gradient; the outer step reads its
// gate.
// CHECK-LABEL: func.func @guarded_update
// CHECK-SAME: (%[[L:.*]]: tensor<f32>, %[[W:.*]]: tensor<4x3xf32>, %[[GW:.*]]: tensor<4x3xf32>)
// CHECK: %[[N:.*]], %[[GATE:.*]] = meta.update_guard %[[L]] grads(%[[GW]] : tensor<4x3xf32>) clip_norm 1.000000e+00 : tensor<f32> -> tensor<1xf64>, tensor<2xf64>
// CHECK: %[[P:.*]] = meta.outer_step #meta.sgd<lr = 1.000000e-02, momentum = 0.000000e+00, weight_decay = 0.000000e+00> params(%[[W]] : tensor<4x3xf32>) grads(%[[GW]] : tensor<4x3xf32>) state() gate(%[[GATE]] : tensor<2xf64>)
// CHECK: return %[[P]], %[[N]]
func.func @guarded_update(%l: tensor<f32>, %w: tensor<4x3xf32>, %gw: tensor<4x3xf32>)
    -> (tensor<4x3xf32>, tensor<1xf64>) {
  %n, %gate = meta.update_guard %l grads(%gw : tensor<4x3xf32>) clip_norm 1.0
      : tensor<f32> -> tensor<1xf64>, tensor<2xf64>
  %p = meta.outer_step #meta.sgd<lr = 0.01, momentum = 0.0, weight_decay = 0.0>
      params(%w : tensor<4x3xf32>) grads(%gw : tensor<4x3xf32>) state()
      gate(%gate : tensor<2xf64>)
  return %p, %n : tensor<4x3xf32>, tensor<1xf64>
}
