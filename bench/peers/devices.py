"""Where the peers compute (`--device cpu|cuda`), set up one way for all:
f32 products in full precision on the GPU unless `tf32`, as metac computes."""


def jax_device(device, tf32):
    """The JAX device; on cpu, JAX's CPU platform only (before any backend
    starts), so that a GPU build of jaxlib stays off the GPU."""
    import jax
    if device == "cpu":
        jax.config.update("jax_platforms", "cpu")
        return jax.devices("cpu")[0]
    if not tf32:
        jax.config.update("jax_default_matmul_precision", "highest")
    return jax.devices("gpu")[0]


def torch_device(device, tf32):
    """The torch device, and what waits for its work (None on the CPU)."""
    import torch
    if device != "cuda":
        return torch.device(device), None
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    return torch.device(device), torch.cuda.synchronize
