"""Sinusoid MAML in a current PyTorch: the eager and compiled peers of
examples/sinusoid.meta, in the setting of bench/peers/sinusoid_jax.py.

Variants:
  loop     tasks one at a time, torch.autograd.grad(create_graph=True) for
           the inner step, as learn2learn and higher users write it
  func     torch.func: the per-task adaptation (functional_call and
           torch.func.grad) vmapped over the tasks, the meta-gradient by
           torch.func.grad of the mean query loss (exact second order)
  compile  `func`'s meta-gradient step under torch.compile; reported as not
           supported when Dynamo/AOTAutograd cannot trace the double
           backward
Tasks are drawn with torch's generator inside the timed step, on the
device that computes (`--device cpu` or `cuda`; on cuda the timing waits
for the device, and TF32 is off unless `--tf32`, as metac computes in full
f32). Prints one line per variant: `torch VARIANT: X ms/iteration (N
meta-iterations)` or `torch VARIANT: unsupported (REASON)`. Run from
bench/peers.sh.
"""

import argparse
import math
import sys

import torch
from torch import nn

from devices import torch_device
from timing import time_variant

META_BATCH, SUPPORT, QUERY = 25, 10, 10
INNER_LR, OUTER_LR = 0.01, 0.001


def make_model():
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40),
                         nn.ReLU(), nn.Linear(40, 1))


def draw_tasks(generator):
    device = generator.device
    amplitude = torch.empty(META_BATCH, 1, 1, device=device).uniform_(
        0.1, 5.0, generator=generator)
    phase = torch.empty(META_BATCH, 1, 1, device=device).uniform_(
        0.0, math.pi, generator=generator)
    x = torch.empty(META_BATCH, SUPPORT + QUERY, 1, device=device).uniform_(
        -5.0, 5.0, generator=generator)
    y = amplitude * torch.sin(x - phase)
    return x[:, :SUPPORT], y[:, :SUPPORT], x[:, SUPPORT:], y[:, SUPPORT:]


def loop_step(model, optimizer, generator):
    xs, ys, xq, yq = draw_tasks(generator)
    params = list(model.parameters())
    optimizer.zero_grad()
    total = 0.0
    for t in range(META_BATCH):
        loss = torch.nn.functional.mse_loss(model(xs[t]), ys[t])
        grads = torch.autograd.grad(loss, params, create_graph=True)
        adapted = [p - INNER_LR * g for p, g in zip(params, grads)]
        h = xq[t]
        for i in range(0, 6, 2):
            h = torch.nn.functional.linear(h, adapted[i], adapted[i + 1])
            if i < 4:
                h = torch.relu(h)
        query = torch.nn.functional.mse_loss(h, yq[t]) / META_BATCH
        query.backward()
        total += query.item()
    optimizer.step()
    return total


def make_func_step(model, optimizer, compiled):
    from torch.func import functional_call, grad, vmap

    names = [n for n, _ in model.named_parameters()]

    def loss_of(params, x, y):
        out = functional_call(model, dict(zip(names, params)), (x,))
        return torch.mean((out - y) ** 2)

    def task_loss(params, xs, ys, xq, yq):
        grads = grad(loss_of)(params, xs, ys)
        adapted = tuple(p - INNER_LR * g for p, g in zip(params, grads))
        return loss_of(adapted, xq, yq)

    def meta_loss(params, xs, ys, xq, yq):
        return torch.mean(vmap(task_loss, in_dims=(None, 0, 0, 0, 0))(
            params, xs, ys, xq, yq))

    meta_grad = grad(meta_loss)
    if compiled:
        meta_grad = torch.compile(meta_grad, fullgraph=True)

    def step(generator):
        params = tuple(p.detach() for p in model.parameters())
        grads = meta_grad(params, *draw_tasks(generator))
        for p, g in zip(model.parameters(), grads):
            p.grad = g
        optimizer.step()
        return 0.0

    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--variants", default="loop,func,compile")
    parser.add_argument("--loop-iterations", type=int, default=200,
                        help="meta-iterations of the (slow) per-task loop")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--tf32", action="store_true",
                        help="on cuda, let cuBLAS/cuDNN use TF32 for f32")
    args = parser.parse_args()
    device, synchronize = torch_device(args.device, args.tf32)
    for variant in args.variants.split(","):
        model = make_model().to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=OUTER_LR)
        generator = torch.Generator(device=device).manual_seed(2)
        if variant == "loop":
            step = lambda: loop_step(model, optimizer, generator)  # noqa: E731
        else:
            func_step = make_func_step(model, optimizer, variant == "compile")
            step = lambda: func_step(generator)  # noqa: E731
        count = args.loop_iterations if variant == "loop" else args.iterations
        if time_variant(f"torch {variant}", step, 3, count,
                        synchronize) is None:
            continue
        if not all(torch.isfinite(p).all() for p in model.parameters()):
            sys.exit(f"torch {variant}: the parameters are not finite")

if __name__ == "__main__":
    main()
