#!/usr/bin/python3
"""The baselines of seed document 003 for few-shot text classification, on
the same test episodes as metac (bench/minilm.sh): from the same pretrained
MiniLM body, per episode, fine-tune on the support set and classify the
query set.

- full fine-tuning: every parameter and a new linear head (Adam);
- linear probe: the body frozen, a linear head on the mean-pooled sentence
  embeddings (Adam on the head alone);
- LoRA: the body frozen but for rank-r adapters on the attention's query
  and value projections (Hu et al. 2021: B initialised to 0, A Gaussian,
  scale alpha / r) and the head.

The head starts at 0 (a fair start for every method: the first step is
the same for all); hyperparameters are the flags', printed with the results.
Reports the mean query accuracy and macro-F1 over the episodes with 95%
confidence half-widths. PyTorch's own layers (Debian's python3-torch).

  baselines.py --weights model.safetensors --episodes test-episodes.safetensors
      [--episodes-count 100] [--steps 10] [--methods full,probe,lora]
"""

import argparse
import json
import math
import pathlib
import struct
import sys
import time

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "test" / "reference"))
from bert_reference import bert_encoder  # noqa: E402

F = torch.nn.functional
HIDDEN, HEADS, LAYERS, EPS = 384, 12, 6, 1e-12


def read_safetensors(path):
    """name -> numpy array, for F32 and I64 tensors."""
    data = pathlib.Path(path).read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    body = memoryview(data)[8 + length:]
    kinds = {"F32": np.float32, "I64": np.int64, "F64": np.float64}
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, end = entry["data_offsets"]
        out[name] = np.frombuffer(body[start:end], dtype=kinds[entry["dtype"]]).reshape(
            entry["shape"])
    return out


def encoder(p, x, lora=None):
    """Mean-pooled MiniLM sentence embeddings of ids `x` [n, L]."""
    return bert_encoder(p, x, HEADS, LAYERS, EPS, lora).mean(1)


def macro_f1(predicted, labels, ways):
    scores = []
    for c in range(ways):
        tp = int(((predicted == c) & (labels == c)).sum())
        fp = int(((predicted == c) & (labels != c)).sum())
        fn = int(((predicted != c) & (labels == c)).sum())
        scores.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return sum(scores) / ways


def adapted(start, sx, sy, qx, qy, ways, args):
    """MAML's adaptation as metac evaluates it: plain SGD at the inner
    learning rate on every parameter (head included) from `start`."""
    params = {k: v.clone().requires_grad_() for k, v in start.items()}
    for _ in range(args.steps):
        logits = F.linear(encoder(params, sx), params["classifier.weight"],
                          params["classifier.bias"])
        grads = torch.autograd.grad(F.cross_entropy(logits, sy), list(params.values()))
        with torch.no_grad():
            for p, g in zip(params.values(), grads):
                p -= args.inner_lr * g
    with torch.no_grad():
        predicted = F.linear(encoder(params, qx), params["classifier.weight"],
                             params["classifier.bias"]).argmax(-1)
    return float((predicted == qy).double().mean()), macro_f1(predicted, qy, ways)


def episode(method, body, sx, sy, qx, qy, ways, args, generator):
    head_w = torch.zeros(ways, HIDDEN, requires_grad=True)
    head_b = torch.zeros(ways, requires_grad=True)
    extra = []  # what the method trains beside the head
    lora = None
    if method == "full":
        params = {k: v.clone().requires_grad_() for k, v in body.items()}
        extra = list(params.values())
    else:
        params = body
    if method == "lora":
        lora = {}
        for i in range(LAYERS):
            for which in ("query", "value"):
                a = (torch.randn(args.rank, HIDDEN, generator=generator) / math.sqrt(HIDDEN)
                     ).requires_grad_()
                b = torch.zeros(HIDDEN, args.rank, requires_grad=True)
                lora[f"{i}.{which}"] = (a, b, args.alpha / args.rank)
                extra += [a, b]
    if method == "probe":  # the features once: the body does not change
        with torch.no_grad():
            support_features, query_features = encoder(body, sx), encoder(body, qx)
    groups = [{"params": [head_w, head_b], "lr": args.head_lr}]
    if extra:
        groups.append({"params": extra,
                       "lr": args.full_lr if method == "full" else args.lora_lr})
    optimizer = torch.optim.Adam(groups)
    for _ in range(args.steps):
        features = support_features if method == "probe" else encoder(params, sx, lora)
        loss = F.cross_entropy(F.linear(features, head_w, head_b), sy)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        features = query_features if method == "probe" else encoder(params, qx, lora)
        predicted = F.linear(features, head_w, head_b).argmax(-1)
    return float((predicted == qy).double().mean()), macro_f1(predicted, qy, ways)


def mean_ci(values):
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, 0.0
    var = sum((v - m) ** 2 for v in values) / (len(values) - 1)
    return m, 1.96 * math.sqrt(var / len(values))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weights", required=True)
    parser.add_argument("--episodes", required=True)
    parser.add_argument("--episodes-count", type=int, default=100)
    parser.add_argument("--methods", default="probe,lora,full")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--head-lr", type=float, default=1e-2)
    parser.add_argument("--full-lr", type=float, default=5e-5)
    parser.add_argument("--lora-lr", type=float, default=1e-3)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--alpha", type=float, default=16.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--init", action="append", default=[],
                        help="LABEL=FILE: also adapt these parameters (metac's, "
                             "head included) by SGD at --inner-lr, as metac evaluates")
    parser.add_argument("--inner-lr", type=float, default=0.01)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    weights = read_safetensors(args.weights)
    # The encoder's parameters (not the pooler, not the I64 position ids).
    body = {k: torch.from_numpy(v.copy()) for k, v in weights.items()
            if k.startswith(("embeddings.", "encoder.")) and v.dtype == np.float32}
    eps = read_safetensors(args.episodes)
    count = min(args.episodes_count, eps["support.x"].shape[0])
    ways = int(eps["support.y"].max()) + 1
    print(f"baselines on {count} episodes of {ways}-way "
          f"{eps['support.x'].shape[1] // ways}-shot, {eps['support.x'].shape[2]} tokens; "
          f"{args.steps} Adam steps, head lr {args.head_lr}, full lr {args.full_lr}, "
          f"LoRA r={args.rank} alpha={args.alpha} lr {args.lora_lr}")
    def report(label, adapt, note=""):
        """Runs `adapt` (support x, y, query x, y -> accuracy, F1) on every
        episode and prints the means."""
        accuracies, f1s = [], []
        begin = time.time()
        for e in range(count):
            accuracy, f1 = adapt(*[torch.from_numpy(eps[k][e].copy()) for k in
                                   ("support.x", "support.y", "query.x", "query.y")])
            accuracies.append(accuracy)
            f1s.append(f1)
        (acc, acc_ci), (f1, f1_ci) = mean_ci(accuracies), mean_ci(f1s)
        print(f"{label:10} accuracy {100 * acc:.2f} +- {100 * acc_ci:.2f}%  "
              f"macro-F1 {100 * f1:.2f} +- {100 * f1_ci:.2f}%  "
              f"({note}{time.time() - begin:.0f} s)", flush=True)

    for label, path in (i.split("=", 1) for i in args.init):
        start = {k: torch.from_numpy(v.copy()) for k, v in read_safetensors(path).items()}
        report(label, lambda sx, sy, qx, qy: adapted(start, sx, sy, qx, qy, ways, args),
               f"SGD lr {args.inner_lr}, ")
    for method in filter(None, args.methods.split(",")):
        generator = torch.Generator().manual_seed(0)
        report(method, lambda sx, sy, qx, qy: episode(method, body, sx, sy, qx, qy, ways,
                                                      args, generator))
    return 0


if __name__ == "__main__":
    sys.exit(main())
