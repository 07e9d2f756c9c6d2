// RUN: metac-opt %s --pass-pipeline='builtin.module(func.func(meta-memory-report))' -verify-diagnostics -split-input-file
//
// The runtime's scratch arena replayed by hand: blocks are 64-byte
// multiples, freed after their last reader, reused by a later block of the
// same rounded size; views share a block; returned blocks stay.

// A chain of three ops on [10] f32 (40 bytes -> a 64-byte block each): the
// first is freed when the second has read it, so the third reuses it.
// Peak: two blocks, 128 bytes.
// expected-remark@+1 {{scratch peak 128 bytes: 3 blocks, 1 reused}}
func.func @chain(%x: tensor<10xf32>) -> tensor<10xf32> {
  %a = nn.exp %x : tensor<10xf32>
  %b = nn.neg %a : tensor<10xf32>
  %c = nn.exp %b : tensor<10xf32>
  return %c : tensor<10xf32>
}

// -----

// Second-order style: forward values are read again later. a, b and c
// ([32, 32] f32: 4096 bytes each) are live when d is made: 4 blocks, the
// peak of 16384 bytes. Then a and c are dead (d was their last reader) and
// e reuses one of their blocks: 5 blocks, 1 reused.
// expected-remark@+1 {{scratch peak 16384 bytes: 5 blocks, 1 reused}}
func.func @kept(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = nn.exp %x : tensor<32x32xf32>
  %b = nn.tanh %a : tensor<32x32xf32>
  %c = nn.exp %b : tensor<32x32xf32>
  %d = nn.add %a, %c : tensor<32x32xf32>
  %e = nn.mul %d, %b : tensor<32x32xf32>
  return %e : tensor<32x32xf32>
}

// -----

// A reshape is a view: [4, 16] and [64] share a's 256-byte block, which
// dies with its view's last reader, b (a and b: 512 bytes held). c reuses
// it. The scalar s (4 -> 64 bytes) and r ([8]: 32 -> 64 bytes) cannot take
// a freed 256-byte block, and r is made before s is freed: 256 + 256 + 64
// + 64 = 640 bytes at the end. 5 blocks, 1 reused.
// expected-remark@+1 {{scratch peak 640 bytes: 5 blocks, 1 reused}}
func.func @views(%x: tensor<4x16xf32>) -> tensor<8xf32> {
  %a = nn.exp %x : tensor<4x16xf32>
  %v = nn.reshape %a : tensor<4x16xf32> -> tensor<64xf32>
  %b = nn.neg %v : tensor<64xf32>
  %c = nn.exp %b : tensor<64xf32>
  %s = nn.reduce_sum %c dims [0] : tensor<64xf32> -> tensor<f32>
  %r = nn.broadcast %s dims [0] : tensor<f32> -> tensor<8xf32>
  return %r : tensor<8xf32>
}
