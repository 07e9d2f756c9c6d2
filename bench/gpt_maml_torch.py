#!/usr/bin/env python3
"""PyTorch 2.x peer of examples/transformer_1b.meta on one GPU (issue 17).

The same GPT (pre-norm blocks of width D with H heads, causal attention with
biased q/k/v/o projections, a 4D GELU MLP, token embedding, final layer
norm and head; no position embedding, like the spec), the same tasks
(token substitution: the query is a random permutation of the vocabulary
applied to random tokens), one inner SGD step on S support sequences,
meta-loss on S query sequences, Adam on the initialisation. Written as
torch.func users write MAML: `functional_call` with a dictionary of
adapted parameters, `torch.autograd.grad(..., create_graph=True)` for the
second order. Mixed precision as metac's `--precision=bf16`: f32
parameters and Adam state, bf16 compute under autocast.

Variants (`--variant`):
  sdpa      SDPA with its default backend (flash attention on an H100, which
            has no double backward: order 2 fails, and the line says so)
  math      SDPA's math backend (the unfused formula: order 2 runs)
  compile   torch.compile of the functional forward (default backend,
            default SDPA)

Prints one line per variant: ms per meta-iteration (mean over the timed
iterations after the warm-up), tokens/s, peak GPU memory, and MFU against
`--peak-tflops` for the model FLOPs given by `--flops` (metac's per-op
count of the same meta-iteration, so both MFUs share a numerator), or an
error line when the variant does not run.
"""

import argparse
import contextlib
import gc
import json
import math
import sys
import time

import torch
import torch.nn.functional as F
from torch.func import functional_call


class Block(torch.nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(width)
        self.q = torch.nn.Linear(width, width)
        self.k = torch.nn.Linear(width, width)
        self.v = torch.nn.Linear(width, width)
        self.o = torch.nn.Linear(width, width)
        self.ln2 = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, h):
        b, s, d = h.shape
        x = self.ln1(h)
        split = lambda t: t.view(b, s, self.heads, d // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(split(self.q(x)), split(self.k(x)),
                                           split(self.v(x)), is_causal=True)
        h = h + self.o(a.transpose(1, 2).reshape(b, s, d))
        return h + self.down(F.gelu(self.up(self.ln2(h))))


class Gpt(torch.nn.Module):
    def __init__(self, vocab, width, heads, blocks):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, width)
        self.blocks = torch.nn.ModuleList(Block(width, heads) for _ in range(blocks))
        self.ln = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, x):
        h = self.tok(x)
        for block in self.blocks:
            h = block(h)
        return self.head(self.ln(h))


def run(args, variant, order):
    torch.manual_seed(1)
    device = "cuda"
    model = Gpt(args.vocab, args.width, args.heads, args.blocks).to(device)
    params = dict(model.named_parameters())
    count = sum(p.numel() for p in params.values())
    optimizer = torch.optim.Adam(params.values(), lr=1e-4, fused=True)
    backend = contextlib.nullcontext
    if variant == "math":
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backend = lambda: sdpa_kernel(SDPBackend.MATH)
    forward = lambda p, x: functional_call(model, p, (x,))
    if variant == "compile":
        forward = torch.compile(forward)

    def loss_of(p, x, y):
        with torch.autocast("cuda", dtype=torch.bfloat16), backend():
            logits = forward(p, x)
        return F.cross_entropy(logits.float().view(-1, args.vocab), y.view(-1))

    def task():
        perm = torch.randperm(args.vocab, device=device)
        xs = torch.randint(args.vocab, (args.support, args.length), device=device)
        xq = torch.randint(args.vocab, (args.query, args.length), device=device)
        return xs, perm[xs], xq, perm[xq]

    def step():
        optimizer.zero_grad(set_to_none=True)
        total = 0.0
        for _ in range(args.meta_batch):
            xs, ys, xq, yq = task()
            support = loss_of(params, xs, ys)
            grads = torch.autograd.grad(support, list(params.values()),
                                        create_graph=order == 2)
            adapted = {name: p - args.inner_lr * g
                       for (name, p), g in zip(params.items(), grads)}
            query = loss_of(adapted, xq, yq) / args.meta_batch
            query.backward()
            total += query.detach()
        optimizer.step()
        return total

    torch.cuda.reset_peak_memory_stats()
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.iterations):
        loss = step()
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / args.iterations
    tokens = args.meta_batch * (args.support + args.query) * args.length
    result = {"variant": variant, "order": order, "parameters": count,
              "ms": seconds * 1e3, "tokens_per_s": tokens / seconds,
              "peak_gib": torch.cuda.max_memory_allocated() / 2**30,
              "loss": float(loss)}
    if args.flops:
        result["mfu"] = args.flops / seconds / (args.peak_tflops * 1e12)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--blocks", type=int, default=20)
    parser.add_argument("--length", type=int, default=512)
    parser.add_argument("--support", type=int, default=8)
    parser.add_argument("--query", type=int, default=8)
    parser.add_argument("--meta-batch", type=int, default=1)
    parser.add_argument("--inner-lr", type=float, default=0.1)
    parser.add_argument("--order", type=int, choices=[1, 2], action="append")
    parser.add_argument("--variant", action="append",
                        choices=["sdpa", "math", "compile"])
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--flops", type=float, action="append",
                        help="model FLOPs per meta-iteration, one per --order")
    parser.add_argument("--peak-tflops", type=float, default=989.0)
    parser.add_argument("--json", help="append one JSON object per run here")
    args = parser.parse_args()
    orders = args.order or [1, 2]
    flops = dict(zip(orders, args.flops or []))
    variants = args.variant or ["sdpa", "math", "compile"]
    # torch.compile last: its compilation takes the longest.
    runs = sorted(((v, o) for v in variants for o in orders),
                  key=lambda run: run[0] == "compile")
    for variant, order in runs:
        args.flops = flops.get(order)
        try:
            result = run(args, variant, order)
        except Exception as error:  # a variant PyTorch cannot run
            text = str(error).strip().splitlines()
            result = {"variant": variant, "order": order,
                      "error": f"{type(error).__name__}: {text[0] if text else ''}"[:300]}
        gc.collect()
        torch.cuda.empty_cache()
        if "error" in result:
            print(f"torch order {order} {variant:10s}: {result['error']}", flush=True)
        else:
            mfu = f", MFU {100 * result['mfu']:.1f}%" if "mfu" in result else ""
            print(f"torch order {order} {variant:10s}: {result['ms']:9.1f} ms/iteration, "
                  f"{result['tokens_per_s']:9.0f} tokens/s, peak {result['peak_gib']:.2f} GiB"
                  f"{mfu}, loss {result['loss']:.4f}", flush=True)
        if args.json:
            with open(args.json, "a") as out:
                out.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
