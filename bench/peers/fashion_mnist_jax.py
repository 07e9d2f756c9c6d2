"""Few-shot Fashion-MNIST in JAX: the compiled peer of
examples/maml_fashion_mnist.meta and examples/protonet_fashion_mnist.meta.

The setting of bench/fashion_mnist_torch.py (the PyTorch reference, whose
docstring states it in full): 5-way 1-shot tasks with 15 queries per class
from the train file's classes 0-6, pixels / 255; the four-block ConvNet
(3x3 convolutions with padding 1 and bias, transductive batch norm: the
statistics of the set it is applied to, biased variance, eps 1e-5; relu;
2x2 max pool) and a linear head of 5; PyTorch's default initialisation.
MAML: 32 filters, 5 inner SGD steps of 0.4 on the support cross-entropy,
exact second order, meta-batch 4, Adam 1e-3. ProtoNets: 64 filters,
squared Euclidean distance to the class means of the support embeddings,
meta-batch 4, Adam 1e-3. Tasks are drawn on the host (numpy) each
meta-iteration and included in the time, as metac draws its own.

Variants, both under jax.jit: `vmap` over the meta-batch's tasks, `loop`
a Python loop over them unrolled by the trace. `--device cpu` (the
default) runs on JAX's CPU platform only; `--device cuda` on the first GPU
(jax.devices("gpu"); the host-drawn tasks are copied to it each step), with
f32 products at full precision unless `--tf32` (metac computes in full
f32). Prints one line per algorithm and variant: `jax ALGORITHM VARIANT: X
ms/iteration (N ...)`. Run from bench/peers.sh.
"""

import argparse
import gzip
import math
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

from devices import jax_device

WAYS, SHOTS, QUERY, META_BATCH = 5, 1, 15, 4


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(raw[4 + 4 * dims:], dtype=np.uint8).reshape(shape)


class Sampler:
    """5-way 1-shot tasks from the train file's classes 0-6, as float32."""

    def __init__(self, data_dir, seed):
        images = read_idx(os.path.join(data_dir,
                                       "train-images-idx3-ubyte.gz"))
        labels = read_idx(os.path.join(data_dir,
                                       "train-labels-idx1-ubyte.gz"))
        images = images.reshape(-1, 1, 28, 28)
        self.by_class = [images[labels == c] for c in range(7)]
        self.rng = np.random.default_rng(seed)

    def task(self):
        classes = self.rng.permutation(7)[:WAYS]
        support, query = [], []
        for c in classes:
            pool = self.by_class[c]
            picks = self.rng.choice(len(pool), SHOTS + QUERY, replace=False)
            chosen = pool[picks].astype(np.float32) / 255.0
            support.append(chosen[:SHOTS])
            query.append(chosen[SHOTS:])
        labels = np.arange(WAYS, dtype=np.int32)
        return (np.concatenate(support), np.repeat(labels, SHOTS),
                np.concatenate(query), np.repeat(labels, QUERY))

    def batch(self):
        tasks = [self.task() for _ in range(META_BATCH)]
        return tuple(np.stack([t[i] for t in tasks]) for i in range(4))


def init_params(key, filters):
    params = []
    channels = 1
    for _ in range(4):
        key, wk, bk = jax.random.split(key, 3)
        bound = 1.0 / math.sqrt(channels * 9)
        params.append({
            "w": jax.random.uniform(wk, (filters, channels, 3, 3),
                                    minval=-bound, maxval=bound),
            "b": jax.random.uniform(bk, (filters,), minval=-bound,
                                    maxval=bound),
            "gamma": jnp.ones((filters,)), "beta": jnp.zeros((filters,))})
        channels = filters
    key, wk, bk = jax.random.split(key, 3)
    bound = 1.0 / math.sqrt(filters)
    params.append({
        "w": jax.random.uniform(wk, (WAYS, filters), minval=-bound,
                                maxval=bound),
        "b": jax.random.uniform(bk, (WAYS,), minval=-bound, maxval=bound)})
    return params


def embed(params, x):
    for block in params[:4]:
        x = jax.lax.conv_general_dilated(
            x, block["w"], (1, 1), ((1, 1), (1, 1)),
            dimension_numbers=("NCHW", "OIHW", "NCHW"))
        x = x + block["b"][None, :, None, None]
        mean = jnp.mean(x, axis=(0, 2, 3), keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=(0, 2, 3), keepdims=True)
        x = (x - mean) / jnp.sqrt(var + 1e-5)
        x = x * block["gamma"][None, :, None, None] + \
            block["beta"][None, :, None, None]
        x = jax.nn.relu(x)
        x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2),
                                  (1, 1, 2, 2), "VALID")
    return x.reshape(x.shape[0], -1)


def cross_entropy(logits, labels):
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits),
                                         labels[:, None], axis=1))


def classify(params, x):
    head = params[4]
    return embed(params, x) @ head["w"].T + head["b"]


def maml_task_loss(params, task):
    sx, sy, qx, qy = task
    fast = params
    for _ in range(5):
        grads = jax.grad(lambda p: cross_entropy(classify(p, sx), sy))(fast)
        fast = jax.tree_util.tree_map(lambda p, g: p - 0.4 * g, fast, grads)
    return cross_entropy(classify(fast, qx), qy)


def protonet_task_loss(params, task):
    sx, sy, qx, qy = task
    support = embed(params, sx)
    # The class means of the support embeddings (SHOTS per class).
    prototypes = (jax.nn.one_hot(sy, WAYS).T @ support) / SHOTS
    query = embed(params, qx)
    distances = jnp.sum((query[:, None, :] - prototypes[None]) ** 2, axis=-1)
    return cross_entropy(-distances, qy)


def make_step(task_loss, variant, optimizer):
    def meta_loss(params, tasks):
        if variant == "vmap":
            return jnp.mean(jax.vmap(task_loss, in_axes=(None, 0))(params,
                                                                   tasks))
        return sum(task_loss(params, tuple(t[i] for t in tasks))
                   for i in range(META_BATCH)) / META_BATCH

    @jax.jit
    def step(params, state, tasks):
        loss, grads = jax.value_and_grad(meta_loss)(params, tasks)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--algorithms", default="maml,protonet")
    parser.add_argument("--variants", default="vmap,loop")
    parser.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--tf32", action="store_true",
                        help="on cuda, let XLA use TF32 for f32 products")
    args = parser.parse_args()
    with jax.default_device(jax_device(args.device, args.tf32)):
        run(args)


def run(args):
    for algorithm in args.algorithms.split(","):
        task_loss = maml_task_loss if algorithm == "maml" else \
            protonet_task_loss
        filters = 32 if algorithm == "maml" else 64
        for variant in args.variants.split(","):
            sampler = Sampler(args.data_dir, seed=7)
            optimizer = optax.adam(0.001)
            params = init_params(jax.random.PRNGKey(7), filters)
            state = optimizer.init(params)
            step = make_step(task_loss, variant, optimizer)
            for _ in range(2):
                params, state, loss = step(params, state, sampler.batch())
            loss.block_until_ready()
            start = time.perf_counter()
            for _ in range(args.iterations):
                params, state, loss = step(params, state, sampler.batch())
            loss.block_until_ready()
            ms = (time.perf_counter() - start) * 1e3 / args.iterations
            if not math.isfinite(float(loss)):
                sys.exit(f"jax {algorithm} {variant}: the loss is not finite")
            print(f"jax {algorithm} {variant}: {ms:.2f} ms/iteration "
                  f"({args.iterations} meta-iterations, final loss "
                  f"{float(loss):.4f})", flush=True)


if __name__ == "__main__":
    main()
