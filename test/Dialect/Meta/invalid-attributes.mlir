// RUN: metac-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the meta attributes (algorithms, optimizers, plans).

// Every diagnostic of the meta op verifiers (MetaVerifiers.cpp) and attribute
// verifiers (MetaAttrs.cpp). Attribute diagnostics point at the attribute.

//===----------------------------------------------------------------------===//
// #meta.maml
//===----------------------------------------------------------------------===//

func.func private @f() attributes {
  // expected-error@+1 {{maml expects steps >= 0, got -1}}
  a = #meta.maml<steps = -1, inner_lr = 0.1, order = 2>
}
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
