// A meta.train with a mixed meta-batch (meta.task_mix) that the frontend
// would not build: the expand phase's own checks. Then a split the plan's
// mesh contradicts.
// RUN: metac-opt %s --meta-expand --split-input-file -verify-diagnostics
// RUN: not metac-opt %s --meta-expand=balance=even --split-input-file 2>&1 | FileCheck %s --check-prefix=BALANCE
// BALANCE: error: 'meta.train' op balance must be cost or count, got 'even'
// RUN: not metac-opt %s --meta-expand=task-parts=8 --split-input-file 2>&1 | FileCheck %s --check-prefix=PARTS
// PARTS: error: 'meta.train' op the meta-batch of 4 tasks is smaller than the task axis (8 ranks)
// RUN: not metac-opt %s --meta-expand=task-parts=2 --meta-plan=mesh=task=4 --split-input-file 2>&1 | FileCheck %s --check-prefix=PLAN
// PLAN: error: mesh task=4 (from --mesh): the mixed meta-batch was split over 2 task ranks when it was expanded

meta.tasks @sine "sinusoid" support 4 query 4 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64,
                meta.task_mix = [{name = "a", tasks = 3 : i64, support = 2 : i64, query = 4 : i64, steps = 1 : i64},
                                 {name = "b", tasks = 1 : i64, support = 4 : i64, query = 4 : i64, steps = 2 : i64}]} {
}

// -----
meta.tasks @sine "sinusoid" support 4 query 4 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op mixes 3 tasks into a meta-batch of 4}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64,
                meta.task_mix = [{name = "a", tasks = 3 : i64, support = 2 : i64, query = 4 : i64, steps = 1 : i64}]} {
}

// -----
meta.tasks @sine "sinusoid" support 4 query 4 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op has a malformed meta.task_mix (expected {name, tasks, support, query, steps} dictionaries)}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64,
                meta.task_mix = [{name = "a", tasks = 4 : i64, support = 0 : i64, query = 4 : i64, steps = 1 : i64}]} {
}

// -----
meta.tasks @sine "sinusoid" support 4 query 4 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op mixes task classes, which needs maml, anil, metasgd or protonet}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.reptile<steps = 1, inner_lr = 0.01>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64,
                meta.task_mix = [{name = "a", tasks = 4 : i64, support = 2 : i64, query = 4 : i64, steps = 1 : i64}]} {
}
