//===- RuntimeSymbols.cpp - the metart functions JIT code may call --------===//

#include "RuntimeSymbols.h"

#include "metart/comm.h"
#include "metart/metart.h"

using namespace metac;

llvm::ArrayRef<RuntimeSymbol> metac::getRuntimeSymbols() {
  static const RuntimeSymbol symbols[] = {
      {"metart_adam_update", reinterpret_cast<void *>(&metart_adam_update)},
      {"metart_increment", reinterpret_cast<void *>(&metart_increment)},
      {"metart_all_gather", reinterpret_cast<void *>(&metart_all_gather)},
      {"metart_all_reduce", reinterpret_cast<void *>(&metart_all_reduce)},
      {"metart_all_slice", reinterpret_cast<void *>(&metart_all_slice)},
      {"metart_reduce_scatter",
       reinterpret_cast<void *>(&metart_reduce_scatter)},
      {"metart_recv", reinterpret_cast<void *>(&metart_recv)},
      {"metart_scratch_free", reinterpret_cast<void *>(&metart_scratch_free)},
      {"metart_send", reinterpret_cast<void *>(&metart_send)},
      {"metart_copy_device", reinterpret_cast<void *>(&metart_copy_device)},
      {"metart_copy_to_device",
       reinterpret_cast<void *>(&metart_copy_to_device)},
      {"metart_copy_to_host", reinterpret_cast<void *>(&metart_copy_to_host)},
      {"metart_fill", reinterpret_cast<void *>(&metart_fill)},
      {"metart_convert", reinterpret_cast<void *>(&metart_convert)},
      {"metart_nn_avg_pool2d", reinterpret_cast<void *>(&metart_nn_avg_pool2d)},
      {"metart_nn_avg_pool2d_backward",
       reinterpret_cast<void *>(&metart_nn_avg_pool2d_backward)},
      {"metart_nn_batch_norm", reinterpret_cast<void *>(&metart_nn_batch_norm)},
      {"metart_nn_binary", reinterpret_cast<void *>(&metart_nn_binary)},
      {"metart_nn_broadcast", reinterpret_cast<void *>(&metart_nn_broadcast)},
      {"metart_nn_conv2d", reinterpret_cast<void *>(&metart_nn_conv2d)},
      {"metart_nn_conv2d_backward_input",
       reinterpret_cast<void *>(&metart_nn_conv2d_backward_input)},
      {"metart_nn_conv2d_backward_weight",
       reinterpret_cast<void *>(&metart_nn_conv2d_backward_weight)},
      {"metart_nn_cross_entropy_loss",
       reinterpret_cast<void *>(&metart_nn_cross_entropy_loss)},
      {"metart_nn_accuracy", reinterpret_cast<void *>(&metart_nn_accuracy)},
      {"metart_nn_embedding", reinterpret_cast<void *>(&metart_nn_embedding)},
      {"metart_nn_embedding_backward",
       reinterpret_cast<void *>(&metart_nn_embedding_backward)},
      {"metart_nn_layer_norm", reinterpret_cast<void *>(&metart_nn_layer_norm)},
      {"metart_nn_linear", reinterpret_cast<void *>(&metart_nn_linear)},
      {"metart_nn_log_softmax",
       reinterpret_cast<void *>(&metart_nn_log_softmax)},
      {"metart_nn_matmul", reinterpret_cast<void *>(&metart_nn_matmul)},
      {"metart_nn_attention", reinterpret_cast<void *>(&metart_nn_attention)},
      {"metart_nn_max_pool2d", reinterpret_cast<void *>(&metart_nn_max_pool2d)},
      {"metart_nn_max_pool2d_backward",
       reinterpret_cast<void *>(&metart_nn_max_pool2d_backward)},
      {"metart_nn_max_pool2d_gather",
       reinterpret_cast<void *>(&metart_nn_max_pool2d_gather)},
      {"metart_nn_mse_loss", reinterpret_cast<void *>(&metart_nn_mse_loss)},
      {"metart_nn_one_hot", reinterpret_cast<void *>(&metart_nn_one_hot)},
      {"metart_nn_reduce_mean",
       reinterpret_cast<void *>(&metart_nn_reduce_mean)},
      {"metart_nn_reduce_sum", reinterpret_cast<void *>(&metart_nn_reduce_sum)},
      {"metart_nn_scale", reinterpret_cast<void *>(&metart_nn_scale)},
      {"metart_nn_softmax", reinterpret_cast<void *>(&metart_nn_softmax)},
      {"metart_nn_transpose", reinterpret_cast<void *>(&metart_nn_transpose)},
      {"metart_nn_unary", reinterpret_cast<void *>(&metart_nn_unary)},
      {"metart_scratch_alloc", reinterpret_cast<void *>(&metart_scratch_alloc)},
      {"metart_scratch_reset", reinterpret_cast<void *>(&metart_scratch_reset)},
      {"metart_sgd_update", reinterpret_cast<void *>(&metart_sgd_update)},
      {"metart_update_guard", reinterpret_cast<void *>(&metart_update_guard)},
  };
  return symbols;
}
