// Functions that metac-eval must reject with a diagnostic (see errors.test).

func.func @unsupported_op(%x: tensor<2xf64>) -> tensor<2xf64> {
  %0 = arith.addf %x, %x : tensor<2xf64>
  return %0 : tensor<2xf64>
}

func.func @constant_id_out_of_range(%t: tensor<3x2xf64>) -> tensor<2x2xf64> {
  %ids = arith.constant dense<[0, 7]> : tensor<2xi64>
  %0 = nn.embedding %ids, %t : tensor<2xi64>, tensor<3x2xf64> -> tensor<2x2xf64>
  return %0 : tensor<2x2xf64>
}

func.func @negative_id(%ids: tensor<4xi32> {metac.eval.min = -5 : i64, metac.eval.max = -1 : i64}, %t: tensor<3x2xf64>) -> tensor<4x2xf64> {
  %0 = nn.embedding %ids, %t : tensor<4xi32>, tensor<3x2xf64> -> tensor<4x2xf64>
  return %0 : tensor<4x2xf64>
}

func.func @embedding_backward_id(%ids: tensor<4xi64> {metac.eval.min = 3 : i64, metac.eval.max = 9 : i64}, %g: tensor<4x2xf64>) -> tensor<3x2xf64> {
  %0 = nn.embedding_backward %ids, %g : tensor<4xi64>, tensor<4x2xf64> -> tensor<3x2xf64>
  return %0 : tensor<3x2xf64>
}

func.func @label_out_of_range(%l: tensor<4x3xf64>, %y: tensor<4xi64> {metac.eval.min = 3 : i64, metac.eval.max = 10 : i64}) -> tensor<f64> {
  %0 = nn.cross_entropy_loss %l, %y : tensor<4x3xf64>, tensor<4xi64> -> tensor<f64>
  return %0 : tensor<f64>
}

func.func @one_hot_label(%y: tensor<4xi64> {metac.eval.min = 3 : i64, metac.eval.max = 10 : i64}) -> tensor<4x3xf64> {
  %0 = nn.one_hot %y : tensor<4xi64> -> tensor<4x3xf64>
  return %0 : tensor<4x3xf64>
}

func.func private @bad_lookup(%t: tensor<3x2xf64>) -> tensor<2x2xf64> {
  %ids = arith.constant dense<[-1, 0]> : tensor<2xi64>
  %0 = nn.embedding %ids, %t : tensor<2xi64>, tensor<3x2xf64> -> tensor<2x2xf64>
  return %0 : tensor<2x2xf64>
}

func.func @error_in_callee(%t: tensor<3x2xf64>) -> tensor<2x2xf64> {
  %0 = func.call @bad_lookup(%t) : (tensor<3x2xf64>) -> tensor<2x2xf64>
  return %0 : tensor<2x2xf64>
}

func.func @dynamic_argument(%x: tensor<?xf64>) -> tensor<?xf64> {
  return %x : tensor<?xf64>
}

func.func @scalar_argument(%x: f64) -> f64 {
  return %x : f64
}

func.func @empty_int_range(%ids: tensor<2xi64> {metac.eval.max = 0 : i64}) -> tensor<2xi64> {
  return %ids : tensor<2xi64>
}

func.func @bad_bound_attribute(%ids: tensor<2xi64> {metac.eval.max = 2.5 : f64}) -> tensor<2xi64> {
  return %ids : tensor<2xi64>
}

func.func @empty_float_range(%x: tensor<2xf64> {metac.eval.min = 1.0 : f64, metac.eval.max = 0.5 : f64}) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}

func.func @bad_float_bound(%x: tensor<2xf64> {metac.eval.max = "one"}) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}

func.func @recursive(%x: tensor<2xf64>) -> tensor<2xf64> {
  %0 = func.call @recursive(%x) : (tensor<2xf64>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

func.func private @external(%x: tensor<2xf64>) -> tensor<2xf64>

func.func @calls_external(%x: tensor<2xf64>) -> tensor<2xf64> {
  %0 = func.call @external(%x) : (tensor<2xf64>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

func.func @scalar_constant() -> f64 {
  %0 = arith.constant 1.0 : f64
  return %0 : f64
}

func.func @wide_constant() -> tensor<1xi128> {
  %0 = arith.constant dense<170141183460469231731687303715884105727> : tensor<1xi128>
  return %0 : tensor<1xi128>
}

func.func @region_op(%x: tensor<2xf64>) -> tensor<2xf64> {
  %0 = scf.execute_region -> tensor<2xf64> {
    scf.yield %x : tensor<2xf64>
  }
  return %0 : tensor<2xf64>
}

func.func @huge_argument(%x: tensor<32768x32768xf64>) -> tensor<32768x32768xf64> {
  return %x : tensor<32768x32768xf64>
}

func.func @huge_result(%x: tensor<2xf64>) -> tensor<2x16384x16384xf64> {
  %0 = nn.broadcast %x dims [1, 2] : tensor<2xf64> -> tensor<2x16384x16384xf64>
  return %0 : tensor<2x16384x16384xf64>
}
