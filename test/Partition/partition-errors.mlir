// Errors of the partitioned phase on annotated functions it cannot split.
// RUN: metac-opt %s --meta-partition --split-input-file --verify-diagnostics

shard.grid @mesh(shape = 1x2x1x1x2x1)

func.func @several_axes(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[4, 1]] : !shard.sharding
  // expected-error @+1 {{'shard.shard' op splits one dimension over several axes, which is supported only for samples over the data and expert axes}}
  %x1 = shard.shard %x to %s : tensor<8x4xf32>
  return %x1 : tensor<8x4xf32>
}

// -----

shard.grid @mesh(shape = 1x2x1x1x1x1)

func.func @not_an_argument(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %y = nn.tanh %x : tensor<8x4xf32>
  // expected-error @+1 {{'shard.shard' op partitioning takes shardings of function arguments only}}
  %y1 = shard.shard %y to %s : tensor<8x4xf32>
  return %y1 : tensor<8x4xf32>
}

// -----

shard.grid @mesh(shape = 1x2x1x1x1x1)
shard.grid @other(shape = 1x2x1x1x1x1)

func.func @two_grids(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %t = shard.sharding @other split_axes = [[1]] : !shard.sharding
  // The function's grid is the one its last annotation names.
  // expected-error @+1 {{'shard.shard' op uses a grid other than other}}
  %x1 = shard.shard %x to %s : tensor<8x4xf32>
  %y1 = shard.shard %y to %t : tensor<8x4xf32>
  %z = nn.add %x1, %y1 : tensor<8x4xf32>
  return %z : tensor<8x4xf32>
}

// -----

// expected-error @+1 {{'shard.grid' op is not a metac mesh (task x data x tensor x pipeline x expert x sequence)}}
shard.grid @mesh(shape = 2x2)

func.func @not_metac(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x4xf32>
  return %x1 : tensor<8x4xf32>
}

// -----

shard.grid @mesh(shape = 1x2x1x1x2x1)

// expected-error @+1 {{cannot split dimension 0 of 'tensor<6x4xf32>' over the data and expert axes (4 ranks)}}
func.func @indivisible(%x: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %s = shard.sharding @mesh split_axes = [[1, 4]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<6x4xf32>
  return %x1 : tensor<6x4xf32>
}

// -----

shard.grid @mesh(shape = 1x2x1x1x1x1)

// expected-error @+1 {{'func.func' op has control flow, which partitioning does not support yet}}
func.func @blocks(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x4xf32>
  return %x1 : tensor<8x4xf32>
^unreachable:
  return %x : tensor<8x4xf32>
}

// -----

shard.grid @mesh(shape = 1x2x1x1x1x1)

func.func @regions(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x4xf32>
  // expected-error @+1 {{'scf.execute_region' op has regions, which partitioning does not support yet}}
  %y = scf.execute_region -> tensor<8x4xf32> {
    scf.yield %x1 : tensor<8x4xf32>
  }
  return %y : tensor<8x4xf32>
}
