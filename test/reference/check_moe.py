#!/usr/bin/env python3
"""Recomputes metac's MoE layer with PyTorch (float64) from the inputs that
metac-eval drew for a model function, and compares every output.

The model is test/Gradcheck/Inputs/moe_block.meta with aux_loss: x [1] ->
embed (linear 30) -> reshape [6, 5] -> layer norm -> moe (4 experts,
hidden 7, top-2, capacity factor 1) + residual -> flatten -> head (linear
1); outputs: the prediction and the load-balancing loss.

Usage: check_moe.py --metac-eval BIN --input FILE.mlir --aux WEIGHT
"""

import argparse
import json
import math
import subprocess
import sys

import torch
import torch.nn.functional as F

F64 = torch.float64


def dispatch(p, top_k, capacity):
    """Top-k routing with a capacity, written independently of metac: a
    stable descending sort per token; first choices before second choices,
    tokens in order."""
    tokens, experts = p.shape
    order = torch.sort(p, dim=1, descending=True, stable=True).indices
    mask = torch.zeros(tokens, experts, capacity, dtype=F64)
    used = [0] * experts
    for r in range(top_k):
        for n in range(tokens):
            e = int(order[n, r])
            if used[e] < capacity:
                mask[n, e, used[e]] = 1.0
                used[e] += 1
    return mask


def moe(x, gate, w1, b1, w2, b2, top_k, factor, aux_weight):
    tokens, features = x.shape
    experts = gate.shape[0]
    capacity = max(1, math.ceil(top_k * tokens * factor / experts))
    probs = torch.softmax(x @ gate.T, dim=1)
    mask = dispatch(probs.detach(), top_k, capacity)
    slots = torch.einsum("nec,nd->ecd", mask, x)
    hidden = torch.relu(torch.einsum("ecd,ehd->ech", slots, w1) + b1[:, None, :])
    out = torch.einsum("ech,edh->ecd", hidden, w2) + b2[:, None, :]
    y = torch.einsum("nec,ecd->nd", mask * probs[:, :, None], out)
    f = mask.sum(dim=(0, 2)) / (top_k * tokens)
    P = probs.mean(dim=0)
    return y, aux_weight * experts * (f * P).sum()


def model(args, aux_weight):
    (ew, eb, lw, lb, gate, w1, b1, w2, b2, hw, hb, x) = args
    s = F.linear(x, ew, eb).reshape(6, 5)
    n = F.layer_norm(s, (5,), lw, lb, eps=1e-5)
    y, aux = moe(n, gate, w1, b1, w2, b2, 2, 1.0, aux_weight)
    return F.linear((s + y).reshape(-1), hw, hb), aux


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--metac-eval", required=True)
    parser.add_argument("--input", required=True)
    parser.add_argument("--aux", type=float, required=True)
    args = parser.parse_args()
    worst = 0.0
    for seed in range(3):
        run = subprocess.run([args.metac_eval, args.input, "--entry=m",
                              f"--seed={seed}"], capture_output=True,
                             text=True, check=True)
        data = json.loads(run.stdout)
        inputs = [torch.tensor(i["values"], dtype=F64).reshape(i["shape"])
                  for i in data["inputs"]]
        expected = model(inputs, args.aux)
        for out, ref in zip(data["outputs"], expected):
            got = torch.tensor(out["values"], dtype=F64).reshape(out["shape"])
            error = ((got - ref).abs() / ref.abs().clamp(min=1e-12)).max()
            worst = max(worst, float(error))
        print(f"seed {seed}: outputs {[o['values'] for o in data['outputs']]}")
    print(f"max relative error {worst:.3e}")
    sys.exit(0 if worst < 1e-10 else 1)


if __name__ == "__main__":
    main()
