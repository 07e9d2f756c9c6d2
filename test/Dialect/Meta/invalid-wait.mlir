// meta.wait's verifier: it waits for a collective marked metac.async, as
// its only user, in its block.
// RUN: metac-opt %s -split-input-file -verify-diagnostics

shard.grid @mesh(shape = 2x1x1x1x1x1)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  // expected-error@+1 {{'meta.wait' op expects the result of a collective marked 'metac.async'}}
  %w = meta.wait %r : tensor<4xf32>
  return %w : tensor<4xf32>
}
// -----
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'meta.wait' op expects the result of a collective marked 'metac.async'}}
  %w = meta.wait %x : tensor<4xf32>
  return %w : tensor<4xf32>
}
// -----
shard.grid @mesh(shape = 2x1x1x1x1x1)
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = shard.all_reduce %x on @mesh grid_axes = [0] {metac.async} : tensor<4xf32> -> tensor<4xf32>
  // expected-error@+1 {{'meta.wait' op must be the only user of the collective it waits for}}
  %w = meta.wait %r : tensor<4xf32>
  return %w, %r : tensor<4xf32>, tensor<4xf32>
}
