// RUN: metac-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// Sequence tasks: samples are `length` tokens in and `length` labels out,
// and cross_entropy trains a model with one row of `vocab` logits per
// position.

// CHECK: meta.tasks @seq "sequence" support 10 query 10 : tensor<8xi64> -> tensor<8xi64> config {length = 8 : i64, vocab = 16 : i64}
// CHECK: meta.train @t model @model tasks @seq loss <cross_entropy>
meta.tasks @seq "sequence" support 10 query 10 : tensor<8xi64> -> tensor<8xi64> config {length = 8 : i64, vocab = 16 : i64}
func.func @model(%w: tensor<16x8xf32> {meta.param = "fc.weight"}, %x: tensor<8xi64>) -> tensor<8x16xf32> {
  %e = nn.embedding %x, %w : tensor<8xi64>, tensor<16x8xf32> -> tensor<8x8xf32>
  %y = nn.linear %e, %w : tensor<8x8xf32>, tensor<16x8xf32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
meta.train @t model @model tasks @seq loss <cross_entropy>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
// expected-error@+1 {{'meta.tasks' op sequence tasks expect integers vocab >= 2 and length >= 2 in config, got {length = 8 : i64}}}
meta.tasks @seq "sequence" support 10 query 10 : tensor<8xi64> -> tensor<8xi64> config {length = 8 : i64}
// -----
// expected-error@+1 {{'meta.tasks' op sequence tasks expect integers vocab >= 2 and length >= 2 in config, got {length = 1 : i64, vocab = 16 : i64}}}
meta.tasks @seq "sequence" support 10 query 10 : tensor<1xi64> -> tensor<1xi64> config {length = 1 : i64, vocab = 16 : i64}
// -----
// expected-error@+1 {{'meta.tasks' op sequence tasks of length 8 have samples 'tensor<8xi64>' -> 'tensor<8xi64>', got 'tensor<8xi64>' -> 'tensor<8xi32>'}}
meta.tasks @seq "sequence" support 10 query 10 : tensor<8xi64> -> tensor<8xi32> config {length = 8 : i64, vocab = 16 : i64}
// -----
// expected-error@+1 {{'meta.tasks' op sequence tasks of length 8 have samples 'tensor<8xi64>' -> 'tensor<8xi64>', got 'tensor<4xi64>' -> 'tensor<4xi64>'}}
meta.tasks @seq "sequence" support 10 query 10 : tensor<4xi64> -> tensor<4xi64> config {length = 8 : i64, vocab = 16 : i64}
// -----
// expected-error@+1 {{'meta.tasks' op sequence tasks have no ways}}
meta.tasks @seq "sequence" support 10 query 10 ways 2 : tensor<8xi64> -> tensor<8xi64> config {length = 8 : i64, vocab = 16 : i64}
// -----
meta.tasks @seq "sequence" support 10 query 10 : tensor<8xi64> -> tensor<8xi64> config {length = 8 : i64, vocab = 16 : i64}
func.func @model(%w: tensor<12x8xf32> {meta.param = "fc.weight"}, %x: tensor<8xi64>) -> tensor<8x12xf32> {
  %e = nn.embedding %x, %w : tensor<8xi64>, tensor<12x8xf32> -> tensor<8x8xf32>
  %y = nn.linear %e, %w : tensor<8x8xf32>, tensor<12x8xf32> -> tensor<8x12xf32>
  return %y : tensor<8x12xf32>
}
// expected-error@+1 {{'meta.train' op model output 'tensor<8x12xf32>' has 12 logits but tasks 'seq' have a vocabulary of 16 tokens}}
meta.train @t model @model tasks @seq loss <cross_entropy>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @seq "sequence" support 10 query 10 : tensor<8xi64> -> tensor<8xi64> config {length = 8 : i64, vocab = 16 : i64}
func.func @model(%w: tensor<16x8xf32> {meta.param = "emb.weight"}, %x: tensor<8xi64>) -> tensor<4x16xf32> {
  %e = nn.embedding %x, %w : tensor<8xi64>, tensor<16x8xf32> -> tensor<8x8xf32>
  %y = nn.reshape %e : tensor<8x8xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
// expected-error@+1 {{'meta.train' op cross_entropy loss needs a model output of one logit per class at each position of targets 'tensor<8xi64>', got 'tensor<4x16xf32>'}}
meta.train @t model @model tasks @seq loss <cross_entropy>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
