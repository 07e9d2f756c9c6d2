// RUN: metac-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of the meta op verifiers (MetaVerifiers.cpp) and attribute
// verifiers (MetaAttrs.cpp). Attribute diagnostics point at the attribute.

//===----------------------------------------------------------------------===//
// #meta.maml
//===----------------------------------------------------------------------===//

func.func private @f() attributes {
  // expected-error@+1 {{maml expects steps >= 1, got 0}}
  a = #meta.maml<steps = 0, inner_lr = 0.1, order = 2>
}

// -----

// Any task distribution that gives ways has at least two.
// expected-error@+1 {{'meta.tasks' op expects ways >= 2, got 1}}
meta.tasks @ep "episodes" support 4 query 4 ways 1 : tensor<3xf32> -> tensor<i64> config {}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{maml expects inner_lr > 0, got -1.000000e-02}}
  a = #meta.maml<steps = 1, inner_lr = -0.01, order = 2>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{maml expects order 1 or 2, got 3}}
  a = #meta.maml<steps = 1, inner_lr = 0.1, order = 3>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{expected ','}}
  a = #meta.maml<steps = 1, inner_lr = 0.1>
}

// -----

func.func private @f() attributes {
  // expected-error@+3 {{unexpected decimal integer literal for a floating point value}}
  // expected-note@+2 {{add a trailing dot to make the literal a float}}
  // expected-error@+1 {{failed to parse Meta_MAMLAttr parameter 'inner_lr'}}
  a = #meta.maml<steps = 1, inner_lr = 1, order = 2>
}

//===----------------------------------------------------------------------===//
// #meta.reptile
//===----------------------------------------------------------------------===//

// -----

func.func private @f() attributes {
  // expected-error@+1 {{reptile expects steps >= 1, got -2}}
  a = #meta.reptile<steps = -2, inner_lr = 0.1>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{reptile expects inner_lr > 0, got 0.000000e+00}}
  a = #meta.reptile<steps = 1, inner_lr = 0.0>
}

//===----------------------------------------------------------------------===//
// #meta.anil
//===----------------------------------------------------------------------===//

// -----

func.func private @f() attributes {
  // expected-error@+1 {{anil expects steps >= 1, got 0}}
  a = #meta.anil<steps = 0, inner_lr = 0.1, order = 2, head = "head">
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{anil expects inner_lr > 0, got -5.000000e-01}}
  a = #meta.anil<steps = 1, inner_lr = -0.5, order = 2, head = "head">
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{anil expects order 1 or 2, got 0}}
  a = #meta.anil<steps = 1, inner_lr = 0.1, order = 0, head = "head">
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{anil expects a non-empty head prefix}}
  a = #meta.anil<steps = 1, inner_lr = 0.1, order = 1, head = "">
}

//===----------------------------------------------------------------------===//
// #meta.metasgd
//===----------------------------------------------------------------------===//

// -----

func.func private @f() attributes {
  // expected-error@+1 {{metasgd expects steps >= 1, got 0}}
  a = #meta.metasgd<steps = 0, inner_lr = 0.1, order = 1>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{metasgd expects inner_lr > 0, got -1.000000e+00}}
  a = #meta.metasgd<steps = 1, inner_lr = -1.0, order = 1>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{metasgd expects order 1 or 2, got -1}}
  a = #meta.metasgd<steps = 1, inner_lr = 0.1, order = -1>
}

//===----------------------------------------------------------------------===//
// #meta.protonet
//===----------------------------------------------------------------------===//

// -----

func.func private @f() attributes {
  // expected-error@+2 {{expected ::metac::meta::Distance to be one of: squared_euclidean}}
  // expected-error@+1 {{failed to parse Meta_ProtoNetAttr parameter 'distance'}}
  a = #meta.protonet<distance = cosine>
}

//===----------------------------------------------------------------------===//
// #meta.imaml
//===----------------------------------------------------------------------===//

// -----

func.func private @f() attributes {
  // expected-error@+1 {{imaml expects steps >= 1, got 0}}
  a = #meta.imaml<steps = 0, inner_lr = 0.1, lambda = 1.0, cg_steps = 5>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{imaml expects inner_lr > 0, got 0.000000e+00}}
  a = #meta.imaml<steps = 1, inner_lr = 0.0, lambda = 1.0, cg_steps = 5>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{imaml expects lambda > 0, got -1.000000e+00}}
  a = #meta.imaml<steps = 1, inner_lr = 0.1, lambda = -1.0, cg_steps = 5>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{imaml expects cg_steps >= 1, got 0}}
  a = #meta.imaml<steps = 1, inner_lr = 0.1, lambda = 1.0, cg_steps = 0>
}

//===----------------------------------------------------------------------===//
// #meta.sgd
//===----------------------------------------------------------------------===//

// -----

func.func private @f() attributes {
  // expected-error@+1 {{sgd expects lr > 0, got 0.000000e+00}}
  a = #meta.sgd<lr = 0.0, momentum = 0.0, weight_decay = 0.0>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{sgd expects momentum in [0, 1), got 1.000000e+00}}
  a = #meta.sgd<lr = 0.1, momentum = 1.0, weight_decay = 0.0>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{sgd expects momentum in [0, 1), got -1.000000e-01}}
  a = #meta.sgd<lr = 0.1, momentum = -0.1, weight_decay = 0.0>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{sgd expects weight_decay >= 0, got -1.000000e-04}}
  a = #meta.sgd<lr = 0.1, momentum = 0.0, weight_decay = -1.0e-4>
}

//===----------------------------------------------------------------------===//
// #meta.adam and #meta.adamw
//===----------------------------------------------------------------------===//

// -----

func.func private @f() attributes {
  // expected-error@+1 {{adam expects lr > 0, got -1.000000e-03}}
  a = #meta.adam<lr = -0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{adam expects beta1 in [0, 1), got 1.000000e+00}}
  a = #meta.adam<lr = 0.001, beta1 = 1.0, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{adam expects beta2 in [0, 1), got 1.500000e+00}}
  a = #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 1.5, eps = 1.0e-8, weight_decay = 0.0>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{adam expects eps > 0, got 0.000000e+00}}
  a = #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 0.0, weight_decay = 0.0>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{adam expects weight_decay >= 0, got -1.000000e+00}}
  a = #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = -1.0>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{adamw expects lr > 0, got 0.000000e+00}}
  a = #meta.adamw<lr = 0.0, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{adamw expects beta1 in [0, 1), got -9.000000e-01}}
  a = #meta.adamw<lr = 0.001, beta1 = -0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{adamw expects beta2 in [0, 1), got 1.000000e+00}}
  a = #meta.adamw<lr = 0.001, beta1 = 0.9, beta2 = 1.0, eps = 1.0e-8, weight_decay = 0.01>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{adamw expects eps > 0, got -1.000000e-08}}
  a = #meta.adamw<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = -1.0e-8, weight_decay = 0.01>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{adamw expects weight_decay >= 0, got -1.000000e-02}}
  a = #meta.adamw<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = -0.01>
}

//===----------------------------------------------------------------------===//
// #meta.plan
//===----------------------------------------------------------------------===//

// -----

func.func private @f() attributes {
  // expected-error@+1 {{plan expects task >= 1, got 0}}
  a = #meta.plan<task = 0, data = 1, tensor = 1, pipeline = 1, micro_batches = 1, schedule = gpipe>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{plan expects data >= 1, got -1}}
  a = #meta.plan<task = 1, data = -1, tensor = 1, pipeline = 1, micro_batches = 1, schedule = gpipe>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{plan expects tensor >= 1, got 0}}
  a = #meta.plan<task = 1, data = 1, tensor = 0, pipeline = 1, micro_batches = 1, schedule = gpipe>
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{plan expects pipeline >= 1, got 0}}
  a = #meta.plan<task = 1, data = 1, tensor = 1, pipeline = 0, micro_batches = 1, schedule = "1f1b">
}

// -----

func.func private @f() attributes {
  // expected-error@+1 {{plan expects micro_batches >= 1, got 0}}
  a = #meta.plan<task = 1, data = 1, tensor = 1, pipeline = 1, micro_batches = 0, schedule = "1f1b">
}

// -----

func.func private @f() attributes {
  // expected-error@+2 {{expected ::metac::meta::PipelineSchedule to be one of: gpipe, 1f1b}}
  // expected-error@+1 {{failed to parse Meta_PlanAttr parameter 'schedule'}}
  a = #meta.plan<task = 1, data = 1, tensor = 1, pipeline = 1, micro_batches = 1, schedule = zb>
}

//===----------------------------------------------------------------------===//
// #meta.loss
//===----------------------------------------------------------------------===//

// -----

func.func private @f() attributes {
  // expected-error@+2 {{expected ::metac::meta::LossKind to be one of: mse, cross_entropy}}
  // expected-error@+1 {{failed to parse Meta_LossAttr parameter 'value'}}
  a = #meta.loss<l1>
}

//===----------------------------------------------------------------------===//
// meta.tasks
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{'meta.tasks' op unknown task distribution kind 'omniglot'}}
meta.tasks @t "omniglot" support 5 query 5 ways 5 : tensor<1x28x28xf32> -> tensor<i64> config {}

// -----

// expected-error@+1 {{'meta.tasks' op expects support and query sizes >= 1, got 0 and 10}}
meta.tasks @t "sinusoid" support 0 query 10 : tensor<1xf32> -> tensor<1xf32> config {}

// -----

// expected-error@+1 {{'meta.tasks' op expects support and query sizes >= 1, got 10 and -10}}
meta.tasks @t "sinusoid" support 10 query -10 : tensor<1xf32> -> tensor<1xf32> config {}

// -----

// expected-error@+1 {{'meta.tasks' op classification tasks expect ways >= 2}}
meta.tasks @t "fashion_mnist" support 5 query 5 : tensor<1x28x28xf32> -> tensor<i64> config {}

// -----

// expected-error@+1 {{'meta.tasks' op classification tasks expect ways >= 2}}
meta.tasks @t "image_folder" support 5 query 5 ways 1 : tensor<3x8x8xf32> -> tensor<i64> config {}

// -----

// expected-error@+1 {{'meta.tasks' op classification tasks expect ways >= 2}}
meta.tasks @t "image_folder" support 5 query 5 ways -5 : tensor<3x8x8xf32> -> tensor<i64> config {}

// -----

// expected-error@+1 {{'meta.tasks' op classification targets must be 0-d integer tensors, got 'tensor<1xi64>'}}
meta.tasks @t "fashion_mnist" support 5 query 5 ways 5 : tensor<1x28x28xf32> -> tensor<1xi64> config {}

// -----

// expected-error@+1 {{'meta.tasks' op classification targets must be 0-d integer tensors, got 'tensor<f32>'}}
meta.tasks @t "image_folder" support 5 query 5 ways 5 : tensor<3x8x8xf32> -> tensor<f32> config {}

// -----

// expected-error@+1 {{'meta.tasks' op support and query sizes must be multiples of ways (5)}}
meta.tasks @t "fashion_mnist" support 5 query 12 ways 5 : tensor<1x28x28xf32> -> tensor<i64> config {}

// -----

// expected-error@+1 {{'meta.tasks' op support and query sizes must be multiples of ways (3)}}
meta.tasks @t "image_folder" support 4 query 6 ways 3 : tensor<3x8x8xf32> -> tensor<i32> config {}

// -----

// expected-error@+1 {{'meta.tasks' op attribute 'input_type' failed to satisfy constraint: type attribute of statically shaped tensor}}
meta.tasks @t "sinusoid" support 5 query 5 : tensor<?xf32> -> tensor<1xf32> config {}

// -----

// expected-error@+1 {{'meta.tasks' op attribute 'target_type' failed to satisfy constraint: type attribute of statically shaped tensor}}
meta.tasks @t "sinusoid" support 5 query 5 : tensor<1xf32> -> f32 config {}

// -----

func.func @f() {
  // expected-error@+1 {{'meta.tasks' op expects parent op 'builtin.module'}}
  meta.tasks @t "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
  return
}

//===----------------------------------------------------------------------===//
// meta.train: attributes
//===----------------------------------------------------------------------===//

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op expects meta_batch >= 1, got 0}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 0 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op expects meta_batch >= 1, got -4}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = -4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op expects iterations >= 0, got -1}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = -1 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op expects checkpoint_every >= 1, got 0}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64,
                checkpoint_every = 0 : i64, checkpoint_dir = "ckpt"} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op checkpoint_every and checkpoint_dir go together}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64,
                checkpoint_every = 100 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op checkpoint_every and checkpoint_dir go together}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64,
                checkpoint_dir = "ckpt"} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op meta_batch 12 is not divisible by task axis size 4 times 2 micro-batches}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 12 : i64, iterations = 10 : i64, seed = 0 : i64,
                plan = #meta.plan<task = 4, data = 1, tensor = 1, pipeline = 1, micro_batches = 2, schedule = gpipe>} {
}

// -----

// task * micro_batches overflows int64: the check must not divide by it.
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op meta_batch 8 is not divisible by task axis size 4294967296 times 4294967296 micro-batches}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 8 : i64, iterations = 10 : i64, seed = 0 : i64,
                plan = #meta.plan<task = 4294967296, data = 1, tensor = 1, pipeline = 1, micro_batches = 4294967296, schedule = gpipe>} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op requires attribute 'seed'}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// An optimizer is not an algorithm.
// expected-error@+1 {{'meta.train' op attribute 'algorithm' failed to satisfy constraint}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op attribute 'optimizer' failed to satisfy constraint}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.reptile<steps = 1, inner_lr = 0.01>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

//===----------------------------------------------------------------------===//
// meta.train: the model and the tasks it names
//===----------------------------------------------------------------------===//

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
// expected-error@+1 {{'meta.train' op model 'missing' is not a func.func}}
meta.train @t model @missing tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
// expected-error@+1 {{'meta.train' op model 'sine' is not a func.func}}
meta.train @t model @sine tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op tasks 'model' is not a meta.tasks}}
meta.train @t model @model tasks @model loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op tasks 'nowhere' is not a meta.tasks}}
meta.train @t model @model tasks @nowhere loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model() -> tensor<1xf32> {
  %c = arith.constant dense<1.0> : tensor<1xf32>
  return %c : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op model 'model' must take a sample and return one value}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%x: tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  return %x, %x : tensor<1xf32>, tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op model 'model' must take a sample and return one value}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %b: tensor<1xf32>,
                 %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w, %b : tensor<1xf32>, tensor<1x1xf32>, tensor<1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op model argument 1 is neither a named parameter (meta.param) nor the last argument}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

// meta.param must be a string.
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = 0 : i64}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op model argument 0 is neither a named parameter (meta.param) nor the last argument}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x2xf32> {meta.param = "fc.weight"}, %x: tensor<2xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<2xf32>, tensor<1x2xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op model 'model' takes 'tensor<2xf32>' but tasks 'sine' give inputs of type 'tensor<1xf32>'}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%x: tensor<1xf32>) -> f32 {
  %c = arith.constant 1.0 : f32
  return %c : f32
}
// expected-error@+1 {{'meta.train' op model output must be a ranked tensor}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<4x1xf32> {meta.param = "body.weight"}, %x: tensor<1xf32>) -> tensor<4xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<4x1xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
// expected-error@+1 {{'meta.train' op protonet needs classification tasks}}
meta.train @t model @model tasks @sine loss <cross_entropy>
    algorithm #meta.protonet<distance = squared_euclidean>
    optimizer #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

// Episodes with float targets are not classification tasks either.
meta.tasks @ep "episodes" support 4 query 4 : tensor<3xf32> -> tensor<f32> config {}
func.func @model(%w: tensor<4x3xf32> {meta.param = "body.weight"}, %x: tensor<3xf32>) -> tensor<4xf32> {
  %y = nn.linear %x, %w : tensor<3xf32>, tensor<4x3xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
// expected-error@+1 {{'meta.train' op protonet needs classification tasks}}
meta.train @t model @model tasks @ep loss <cross_entropy>
    algorithm #meta.protonet<distance = squared_euclidean>
    optimizer #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<2x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<2xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<2x1xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}
// expected-error@+1 {{'meta.train' op mse loss compares the model output 'tensor<2xf32>' with targets of type 'tensor<1xf32>'}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf64> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf64> {
  %xd = arith.extf %x : tensor<1xf32> to tensor<1xf64>
  %y = nn.linear %xd, %w : tensor<1xf64>, tensor<1x1xf64> -> tensor<1xf64>
  return %y : tensor<1xf64>
}
// expected-error@+1 {{'meta.train' op mse loss compares the model output 'tensor<1xf64>' with targets of type 'tensor<1xf32>'}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.reptile<steps = 1, inner_lr = 0.01>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<5x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<5xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<5x1xf32> -> tensor<5xf32>
  return %y : tensor<5xf32>
}
// expected-error@+1 {{'meta.train' op cross_entropy loss needs integer class labels, tasks give 'tensor<1xf32>'}}
meta.train @t model @model tasks @sine loss <cross_entropy>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @ep "episodes" support 4 query 4 : tensor<3xf32> -> tensor<2xi64> config {}
func.func @model(%w: tensor<5x3xf32> {meta.param = "fc.weight"}, %x: tensor<3xf32>) -> tensor<5xf32> {
  %y = nn.linear %x, %w : tensor<3xf32>, tensor<5x3xf32> -> tensor<5xf32>
  return %y : tensor<5xf32>
}
// expected-error@+1 {{'meta.train' op cross_entropy loss needs integer class labels, tasks give 'tensor<2xi64>'}}
meta.train @t model @model tasks @ep loss <cross_entropy>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @fashion "fashion_mnist" support 5 query 5 ways 5 : tensor<1x28x28xf32> -> tensor<i64> config {}
func.func @model(%w: tensor<5x28xf32> {meta.param = "head.weight"}, %x: tensor<1x28x28xf32>) -> tensor<1x28x5xf32> {
  %y = nn.linear %x, %w : tensor<1x28x28xf32>, tensor<5x28xf32> -> tensor<1x28x5xf32>
  return %y : tensor<1x28x5xf32>
}
// expected-error@+1 {{'meta.train' op cross_entropy loss needs a model output of one logit per class, got 'tensor<1x28x5xf32>'}}
meta.train @t model @model tasks @fashion loss <cross_entropy>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @fashion "fashion_mnist" support 5 query 5 ways 5 : tensor<1x28x28xf32> -> tensor<i64> config {}
func.func @model(%w: tensor<4x784xf32> {meta.param = "head.weight"}, %x: tensor<1x28x28xf32>) -> tensor<4xf32> {
  %f = nn.reshape %x : tensor<1x28x28xf32> -> tensor<784xf32>
  %y = nn.linear %f, %w : tensor<784xf32>, tensor<4x784xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
// expected-error@+1 {{'meta.train' op model output 'tensor<4xf32>' has 4 logits but tasks 'fashion' are 5-way}}
meta.train @t model @model tasks @fashion loss <cross_entropy>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

meta.tasks @ep "episodes" support 6 query 6 ways 3 : tensor<3xf32> -> tensor<i32> config {}
func.func @model(%w: tensor<2x3xf32> {meta.param = "head.weight"}, %x: tensor<3xf32>) -> tensor<2xf32> {
  %y = nn.linear %x, %w : tensor<3xf32>, tensor<2x3xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}
// expected-error@+1 {{'meta.train' op model output 'tensor<2xf32>' has 2 logits but tasks 'ep' are 3-way}}
meta.train @t model @model tasks @ep loss <cross_entropy>
    algorithm #meta.anil<steps = 1, inner_lr = 0.01, order = 2, head = "head">
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

// -----

func.func @f() {
  // expected-error@+1 {{'meta.train' op expects parent op 'builtin.module'}}
  meta.train @t model @model tasks @sine loss <mse>
      algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
      optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
      attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  }
  return
}

//===----------------------------------------------------------------------===//
// meta.evaluate
//===----------------------------------------------------------------------===//

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op expects count >= 1, got 0}}
  meta.evaluate tasks @sine count 0 steps [0]
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op expects count >= 1, got -3}}
  meta.evaluate tasks @sine count -3 steps [0]
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op expects at least one number of steps}}
  meta.evaluate tasks @sine count 10 steps []
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op expects steps >= 0, got -1}}
  meta.evaluate tasks @sine count 10 steps [0, -1, 5]
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op tasks 'model' is not a meta.tasks}}
  meta.evaluate tasks @model count 10 steps [0]
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
meta.tasks @wide "sinusoid" support 5 query 5 : tensor<2xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op evaluation tasks 'wide' have samples 'tensor<2xf32>' -> 'tensor<1xf32>' but training tasks 'sine' have 'tensor<1xf32>' -> 'tensor<1xf32>'}}
  meta.evaluate tasks @wide count 10 steps [0]
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
meta.tasks @other "episodes" support 5 query 5 : tensor<1xf32> -> tensor<1xf64> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op evaluation tasks 'other' have samples 'tensor<1xf32>' -> 'tensor<1xf64>' but training tasks 'sine' have 'tensor<1xf32>' -> 'tensor<1xf32>'}}
  meta.evaluate tasks @other count 10 steps [0]
}

// -----

meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @f() {
  // expected-error@+1 {{'meta.evaluate' op expects parent op 'meta.train'}}
  meta.evaluate tasks @sine count 10 steps [0]
  return
}

//===----------------------------------------------------------------------===//
// meta.task_batch
//===----------------------------------------------------------------------===//

// -----

func.func @f() {
  // expected-error@+1 {{'meta.task_batch' op tasks 'f' is not a meta.tasks}}
  %sx, %sy, %qx, %qy = meta.task_batch @f : tensor<5x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>
  return
}

// -----

meta.tasks @sine "sinusoid" support 5 query 10 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @f() {
  // expected-error@+1 {{'meta.task_batch' op result 2 has type 'tensor<5x1xf32>', expected 'tensor<10x1xf32>'}}
  %sx, %sy, %qx, %qy = meta.task_batch @sine : tensor<5x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>
  return
}

// -----

meta.tasks @fashion "fashion_mnist" support 5 query 10 ways 5 : tensor<1x28x28xf32> -> tensor<i64> config {}
func.func @f() {
  // expected-error@+1 {{'meta.task_batch' op result 1 has type 'tensor<5xi32>', expected 'tensor<5xi64>'}}
  %sx, %sy, %qx, %qy = meta.task_batch @fashion : tensor<5x1x28x28xf32>, tensor<5xi32>, tensor<10x1x28x28xf32>, tensor<10xi64>
  return
}

// -----

meta.tasks @sine "sinusoid" support 5 query 10 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @f() {
  // expected-error@+1 {{'meta.task_batch' op result 0 has type 'tensor<1x5xf32>', expected 'tensor<5x1xf32>'}}
  %sx, %sy, %qx, %qy = meta.task_batch @sine : tensor<1x5xf32>, tensor<5x1xf32>, tensor<10x1xf32>, tensor<10x1xf32>
  return
}

// -----

func.func @f() {
  // expected-error@+1 {{'meta.task_batch' op result #0 must be statically shaped tensor, but got 'tensor<?x1xf32>'}}
  %sx, %sy, %qx, %qy = meta.task_batch @sine : tensor<?x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>
  return
}

//===----------------------------------------------------------------------===//
// meta.grad
//===----------------------------------------------------------------------===//

// -----

func.func @f() -> tensor<f32> {
  // expected-error@+1 {{'meta.grad' op expects at least one input to differentiate}}
  %v = meta.grad() : () -> tensor<f32> {
    %c = arith.constant dense<1.0> : tensor<f32>
    meta.yield %c : tensor<f32>
  }
  return %v : tensor<f32>
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op body takes 2 arguments but the op has 1 inputs}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>, %q: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %g : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op body argument 0 has type 'tensor<3xf64>' but input 0 has type 'tensor<3xf32>'}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf64>):
    %l = arith.constant dense<1.0> : tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %g : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op body must end with meta.yield}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    func.return %l : tensor<f32>
  }
  return %g : tensor<3xf32>
}

// -----

// A body without a terminator.
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op body must end with meta.yield}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
  }
  return %g : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<f32> {
  // expected-error@+1 {{'meta.grad' op expects one gradient per input, got 0 for 1}}
  %v = meta.grad(%w) : (tensor<3xf32>) -> tensor<f32> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %v : tensor<f32>
}

// -----

func.func @f(%w: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op gradient 1 has type 'tensor<3xf32>' but input 1 has type 'tensor<2xf32>'}}
  %v, %g:2 = meta.grad(%w, %b) : (tensor<3xf32>, tensor<2xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>, %q: tensor<2xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %g#0 : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op value type 'tensor<f64>' does not match the yielded loss type 'tensor<f32>'}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f64>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %g : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op result #0 must be 0-d float tensor, but got 'tensor<1xf32>'}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<1xf32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %g : tensor<3xf32>
}

// -----

// The adaptation body yields one 0-d float loss.
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op body must yield a 0-d float loss, got 'tensor<3xf32>'}}
  %a = meta.adapt(%w) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
    meta.yield %p : tensor<3xf32>
  }
  return %a : tensor<3xf32>
}

// -----

// The value has the yielded loss's type.
func.func @f(%w: tensor<3xf32>, %c: tensor<f64>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op value type 'tensor<f32>' does not match the yielded loss type 'tensor<f64>'}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    meta.yield %c : tensor<f64>
  }
  return %g : tensor<3xf32>
}

// -----

func.func @f(%l: tensor<f32>) {
  // expected-error@+1 {{'meta.yield' op expects parent op to be one of 'meta.grad, meta.adapt, meta.map'}}
  meta.yield %l : tensor<f32>
}

//===----------------------------------------------------------------------===//
// meta.adapt
//===----------------------------------------------------------------------===//

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op expects steps >= 1, got 0}}
  %a = meta.adapt(%w) steps 0 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op expects steps >= 1, got -5}}
  %a = meta.adapt(%w) steps -5 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op expects inner_lr > 0}}
  %a = meta.adapt(%w) steps 1 inner_lr -0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op expects order 1 or 2, got 3}}
  %a = meta.adapt(%w) steps 1 inner_lr 0.1 order 3 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf32>
}

// -----

func.func @f() {
  // expected-error@+1 {{'meta.adapt' op expects at least one parameter to adapt}}
  meta.adapt() steps 1 inner_lr 0.1 order 1 : () -> () {
    %l = arith.constant dense<1.0> : tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf64> {
  // expected-error@+1 {{'meta.adapt' op results must have the types of the parameters}}
  %a = meta.adapt(%w) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf64> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf64>
}

// -----

func.func @f(%w: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op results must have the types of the parameters}}
  %a = meta.adapt(%w, %b) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>, %q: tensor<2xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op body takes 0 arguments but the op has 1 inputs}}
  %a = meta.adapt(%w) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
    %l = arith.constant dense<1.0> : tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>, %b: tensor<2xf32>) -> (tensor<3xf32>, tensor<2xf32>) {
  // expected-error@+1 {{'meta.adapt' op body argument 1 has type 'tensor<3xf32>' but input 1 has type 'tensor<2xf32>'}}
  %a:2 = meta.adapt(%w, %b) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>, tensor<2xf32>) -> (tensor<3xf32>, tensor<2xf32>) {
  ^bb0(%p: tensor<3xf32>, %q: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a#0, %a#1 : tensor<3xf32>, tensor<2xf32>
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op body must end with meta.yield}}
  %a = meta.adapt(%w) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
  }
  return %a : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op expects a non-empty block}}
  %a = meta.adapt(%w) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
  }
  return %a : tensor<3xf32>
}

//===----------------------------------------------------------------------===//
// meta.outer_step
//===----------------------------------------------------------------------===//

// -----

func.func @f(%w: tensor<3xf32>, %g: tensor<3xf64>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op expects one gradient of each parameter's type}}
  %p = meta.outer_step #meta.sgd<lr = 0.1, momentum = 0.0, weight_decay = 0.0>
      params(%w : tensor<3xf32>) grads(%g : tensor<3xf64>) state()
  return %p : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op expects one gradient of each parameter's type}}
  %p = meta.outer_step #meta.sgd<lr = 0.1, momentum = 0.0, weight_decay = 0.0>
      params(%w : tensor<3xf32>) grads(%g, %g : tensor<3xf32>, tensor<3xf32>) state()
  return %p : tensor<3xf32>
}

// -----

// The result types are inferred from the parameters and the state.
func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error@+2 {{'meta.outer_step' op failed to infer returned types}}
  // expected-error@+1 {{'meta.outer_step' op inferred type(s) 'tensor<3xf32>' are incompatible with return type(s) of operation 'tensor<2xf32>'}}
  %p = "meta.outer_step"(%w, %g) <{optimizer = #meta.sgd<lr = 0.1, momentum = 0.0, weight_decay = 0.0>, operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<3xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %p : tensor<2xf32>
}

// -----

func.func @f(%w: tensor<3xf32>, %b: tensor<2xf32>, %gw: tensor<3xf32>, %gb: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op optimizer #meta.sgd<lr = 1.000000e-01, momentum = 9.000000e-01, weight_decay = 0.000000e+00> expects 2 state tensors for 2 parameters, got 0}}
  %p:2 = meta.outer_step #meta.sgd<lr = 0.1, momentum = 0.9, weight_decay = 0.0>
      params(%w, %b : tensor<3xf32>, tensor<2xf32>) grads(%gw, %gb : tensor<3xf32>, tensor<2xf32>) state()
  return %p#0 : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>, %m: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op optimizer #meta.sgd<lr = 1.000000e-01, momentum = 0.000000e+00, weight_decay = 0.000000e+00> expects 0 state tensors for 1 parameters, got 1}}
  %p:2 = meta.outer_step #meta.sgd<lr = 0.1, momentum = 0.0, weight_decay = 0.0>
      params(%w : tensor<3xf32>) grads(%g : tensor<3xf32>) state(%m : tensor<3xf32>)
  return %p#0 : tensor<3xf32>
}

// -----

// Adam without its step count.
func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op optimizer #meta.adam<lr = 1.000000e-03, beta1 = 9.000000e-01, beta2 = 0.99899999999999999, eps = 1.000000e-08, weight_decay = 0.000000e+00> expects 3 state tensors for 1 parameters, got 2}}
  %p:3 = meta.outer_step #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
      params(%w : tensor<3xf32>) grads(%g : tensor<3xf32>) state(%m, %v : tensor<3xf32>, tensor<3xf32>)
  return %p#0 : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>, %b: tensor<2xf32>, %gw: tensor<3xf32>, %gb: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op state tensor 1 must have the type of parameter 1}}
  %p:4 = meta.outer_step #meta.sgd<lr = 0.1, momentum = 0.9, weight_decay = 0.0>
      params(%w, %b : tensor<3xf32>, tensor<2xf32>) grads(%gw, %gb : tensor<3xf32>, tensor<2xf32>) state(%gw, %gw : tensor<3xf32>, tensor<3xf32>)
  return %p#0 : tensor<3xf32>
}

// -----

// The second moments (state 2 and 3) come after the first moments.
func.func @f(%w: tensor<3xf32>, %b: tensor<2xf32>, %gw: tensor<3xf32>, %gb: tensor<2xf32>, %n: tensor<i64>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op state tensor 2 must have the type of parameter 0}}
  %p:7 = meta.outer_step #meta.adamw<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01>
      params(%w, %b : tensor<3xf32>, tensor<2xf32>) grads(%gw, %gb : tensor<3xf32>, tensor<2xf32>) state(%gw, %gb, %gb, %gw, %n : tensor<3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>, tensor<i64>)
  return %p#0 : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>, %n: tensor<i32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op the last state tensor is the step count and must be tensor<i64>}}
  %p:4 = meta.outer_step #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
      params(%w : tensor<3xf32>) grads(%g : tensor<3xf32>) state(%g, %g, %n : tensor<3xf32>, tensor<3xf32>, tensor<i32>)
  return %p#0 : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>, %n: tensor<1xi64>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op the last state tensor is the step count and must be tensor<i64>}}
  %p:4 = meta.outer_step #meta.adamw<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
      params(%w : tensor<3xf32>) grads(%g : tensor<3xf32>) state(%g, %g, %n : tensor<3xf32>, tensor<3xf32>, tensor<1xi64>)
  return %p#0 : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op attribute 'optimizer' failed to satisfy constraint}}
  %p = meta.outer_step #meta.maml<steps = 1, inner_lr = 0.1, order = 1>
      params(%w : tensor<3xf32>) grads(%g : tensor<3xf32>) state()
  return %p : tensor<3xf32>
}

// -----

func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op body must yield exactly one loss, got 2 values}}
  %l, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    %s = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %s, %s : tensor<f32>, tensor<f32>
  }
  return %g : tensor<3xf32>
}

// -----

func.func @f(%x: tensor<4x3xf32>, %y: tensor<5x3xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'meta.map' op mapped operands disagree on the number of tasks: 4 and 5}}
  %r = meta.map(%x, %y : tensor<4x3xf32>, tensor<5x3xf32>) shared() -> tensor<4xf32> {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>):
    %s = nn.reduce_sum %a dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %s : tensor<f32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<f32>) -> tensor<4xf32> {
  // expected-error@+1 {{'meta.map' op mapped operands need a leading task dimension, got 'tensor<f32>'}}
  %r = meta.map(%x : tensor<f32>) shared() -> tensor<4xf32> {
  ^bb0(%a: tensor<f32>):
    meta.yield %a : tensor<f32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'meta.map' op body arguments must be one task's slice of each mapped operand, then the shared operands}}
  %r = meta.map(%x : tensor<4x3xf32>) shared() -> tensor<4xf32> {
  ^bb0(%a: tensor<4x3xf32>):
    %s = nn.reduce_sum %a dims [0, 1] : tensor<4x3xf32> -> tensor<f32>
    meta.yield %s : tensor<f32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'meta.map' op body yields 2 values for 1 results}}
  %r = meta.map(%x : tensor<4x3xf32>) shared() -> tensor<4xf32> {
  ^bb0(%a: tensor<3xf32>):
    %s = nn.reduce_sum %a dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %s, %s : tensor<f32>, tensor<f32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x3xf32>) -> tensor<5xf32> {
  // expected-error@+1 {{'meta.map' op result type 'tensor<5xf32>' is not the yielded type 'tensor<f32>' stacked over 4 tasks}}
  %r = meta.map(%x : tensor<4x3xf32>) shared() -> tensor<5xf32> {
  ^bb0(%a: tensor<3xf32>):
    %s = nn.reduce_sum %a dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %s : tensor<f32>
  }
  return %r : tensor<5xf32>
}
