// RUN: metac-opt %s --split-input-file --verify-diagnostics

func.func @arguments(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has 1 inputs but its body takes 2 arguments}}
  %r = nn.fused(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %n = nn.neg %a : tensor<4xf32>
    nn.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @argument_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{input 0 has type 'tensor<4xf32>' but its block argument 'tensor<4xf64>'}}
  %r = nn.fused(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf64>):
    %n = nn.neg %a : tensor<4xf64>
    %c = nn.convert %n : tensor<4xf64> -> tensor<4xf32>
    nn.yield %c : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @yield_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{yields 'tensor<2x2xf32>' but returns 'tensor<4xf32>'}}
  %r = nn.fused(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %n = nn.reshape %a : tensor<4xf32> -> tensor<2x2xf32>
    nn.yield %n : tensor<2x2xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @not_fusible(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = nn.fused(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    // expected-error @+1 {{cannot be part of an nn.fused group}}
    %m = nn.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    nn.yield %m : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// Batched products join groups only with a unit dimension (a map and a sum).
func.func @full_batched_product(%x: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %r = nn.fused(%x) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  ^bb0(%a: tensor<2x4x4xf32>):
    // expected-error @+1 {{cannot be part of an nn.fused group}}
    %m = nn.matmul %a, %a : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
    nn.yield %m : tensor<2x4x4xf32>
  }
  return %r : tensor<2x4x4xf32>
}

// -----

// Batch norm joins only with per-task statistics (not over dimension 0).
func.func @norm_over_tasks(%x: tensor<4x8x6xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8x6xf32> {
  %r = nn.fused(%x, %w, %b) : (tensor<4x8x6xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8x6xf32> {
  ^bb0(%a: tensor<4x8x6xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>):
    // expected-error @+1 {{cannot be part of an nn.fused group}}
    %n = nn.batch_norm %a, %c, %d channel 1 reduce [0, 2] epsilon 1.0e-5 : tensor<4x8x6xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8x6xf32>
    nn.yield %n : tensor<4x8x6xf32>
  }
  return %r : tensor<4x8x6xf32>
}

// -----

func.func @half(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %r = nn.fused(%x) : (tensor<4xbf16>) -> tensor<4xbf16> {
  ^bb0(%a: tensor<4xbf16>):
    // expected-error @+1 {{cannot be part of an nn.fused group}}
    %n = nn.neg %a : tensor<4xbf16>
    nn.yield %n : tensor<4xbf16>
  }
  return %r : tensor<4xbf16>
}

// -----

func.func @yield_outside(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = nn.fused(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %n = nn.neg %a : tensor<4xf32>
    nn.yield %n : tensor<4xf32>
  }
  // expected-error @+1 {{expects parent op 'nn.fused'}}
  nn.yield %r : tensor<4xf32>
}

// -----

func.func @missing_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{names kernel @nowhere, which is not a function of the module}}
  %r = nn.fused(%x) {kernel = @nowhere} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %n = nn.neg %a : tensor<4xf32>
    nn.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

llvm.func @one_pointer(!llvm.ptr)

func.func @kernel_arguments(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{names kernel @one_pointer of 1 arguments; its group has 2 inputs and results}}
  %r = nn.fused(%x) {kernel = @one_pointer} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %n = nn.neg %a : tensor<4xf32>
    nn.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
