"""Sinusoid MAML in JAX: the compiled peer of examples/sinusoid.meta.

The same setting as the example (Finn et al., 2017): a 1-40-40-1 ReLU MLP,
10 support and 10 query samples per task (amplitude in [0.1, 5], phase in
[0, pi], x in [-5, 5]), meta-batch 25, one inner SGD step of 0.01, MSE,
exact second-order meta-gradients (jax.grad through jax.grad), Adam 1e-3
(optax). Tasks are drawn inside the compiled step with jax.random, as
metac draws them inside its meta-iteration.

Two ways to write the meta-batch, both under jax.jit:
  vmap  the per-task adaptation vmapped over the tasks (the idiomatic one)
  loop  a Python loop over the 25 tasks, unrolled by the trace

`--device cpu` (the default) runs on JAX's CPU platform only; `--device
cuda` on the first GPU (jax.devices("gpu")), with f32 products at full
precision unless `--tf32` (metac computes in full f32).

Prints one line per variant: `jax VARIANT: X ms/iteration (N meta-iterations)`,
timed after two warm-up steps (compilation), the last step's result waited
for (block_until_ready).
Run from bench/peers.sh, which makes the virtual environment with jax and
optax.
"""

import argparse
import math
import sys
import time

import jax
import jax.numpy as jnp
import optax

from devices import jax_device

META_BATCH, SUPPORT, QUERY = 25, 10, 10
INNER_LR, OUTER_LR = 0.01, 0.001
WIDTHS = [1, 40, 40, 1]


def init_params(key):
    """PyTorch's default initialisation: uniform in +-1/sqrt(fan_in)."""
    params = []
    for fan_in, fan_out in zip(WIDTHS[:-1], WIDTHS[1:]):
        key, wk, bk = jax.random.split(key, 3)
        bound = 1.0 / math.sqrt(fan_in)
        params.append((jax.random.uniform(wk, (fan_out, fan_in), minval=-bound,
                                          maxval=bound),
                       jax.random.uniform(bk, (fan_out,), minval=-bound,
                                          maxval=bound)))
    return params


def forward(params, x):
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w.T + b
        if i + 1 < len(params):
            h = jax.nn.relu(h)
    return h


def mse(params, x, y):
    return jnp.mean((forward(params, x) - y) ** 2)


def task_loss(params, task):
    """The query loss after one SGD step on the support set."""
    xs, ys, xq, yq = task
    grads = jax.grad(mse)(params, xs, ys)
    adapted = jax.tree_util.tree_map(lambda p, g: p - INNER_LR * g, params,
                                     grads)
    return mse(adapted, xq, yq)


def draw_tasks(key):
    ka, kp, kx = jax.random.split(key, 3)
    amplitude = jax.random.uniform(ka, (META_BATCH, 1, 1), minval=0.1, maxval=5.0)
    phase = jax.random.uniform(kp, (META_BATCH, 1, 1), minval=0.0,
                               maxval=math.pi)
    x = jax.random.uniform(kx, (META_BATCH, SUPPORT + QUERY, 1), minval=-5.0,
                           maxval=5.0)
    y = amplitude * jnp.sin(x - phase)
    return x[:, :SUPPORT], y[:, :SUPPORT], x[:, SUPPORT:], y[:, SUPPORT:]


def make_step(variant, optimizer):
    def meta_loss(params, tasks):
        if variant == "vmap":
            return jnp.mean(jax.vmap(task_loss, in_axes=(None, 0))(params,
                                                                   tasks))
        losses = [task_loss(params, tuple(t[i] for t in tasks))
                  for i in range(META_BATCH)]
        return sum(losses) / META_BATCH

    @jax.jit
    def step(params, state, key):
        key, sub = jax.random.split(key)
        loss, grads = jax.value_and_grad(meta_loss)(params, draw_tasks(sub))
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, key, loss

    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--variants", default="vmap,loop")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--tf32", action="store_true",
                        help="on cuda, let XLA use TF32 for f32 products")
    args = parser.parse_args()
    with jax.default_device(jax_device(args.device, args.tf32)):
        run(args)


def run(args):
    for variant in args.variants.split(","):
        optimizer = optax.adam(OUTER_LR)
        params = init_params(jax.random.PRNGKey(1))
        state = optimizer.init(params)
        key = jax.random.PRNGKey(2)
        step = make_step(variant, optimizer)
        for _ in range(2):
            params, state, key, loss = step(params, state, key)
        loss.block_until_ready()
        start = time.perf_counter()
        for _ in range(args.iterations):
            params, state, key, loss = step(params, state, key)
        loss.block_until_ready()
        ms = (time.perf_counter() - start) * 1e3 / args.iterations
        if not math.isfinite(float(loss)):
            sys.exit(f"jax {variant}: the meta-loss is not finite")
        print(f"jax {variant}: {ms:.4f} ms/iteration ({args.iterations} "
              f"meta-iterations, final meta-loss {float(loss):.4f})",
              flush=True)


if __name__ == "__main__":
    main()
