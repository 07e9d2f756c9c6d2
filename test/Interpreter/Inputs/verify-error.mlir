// An nn op that its verifier rejects: metac-eval reports it and stops.
func.func @f(%x: tensor<2x3xf64>, %w: tensor<4x3xf64>) -> tensor<2x5xf64> {
  %0 = nn.linear %x, %w : tensor<2x3xf64>, tensor<4x3xf64> -> tensor<2x5xf64>
  return %0 : tensor<2x5xf64>
}
