#!/usr/bin/env python3
"""One row of bench/foundation_1b.sh: a metac run's metrics file and its
--profile output turned into ms/iteration, tokens/s, FLOPs, MFU, peak memory
and the time split (GEMM, attention, other).

  foundation_1b_row.py VARIANT METRICS.jsonl PROFILE.txt PEAK_TFLOPS
  foundation_1b_row.py --flops METRICS.jsonl...   (the first file's FLOPs, or 0)
"""

import json
import re
import sys

TOKENS = 1 * (8 + 8) * 512  # meta-batch x (support + query) x length


def iterations(path):
    lines = [json.loads(line) for line in open(path)]
    its = [l for l in lines if "iteration" in l and "meta_loss" in l]
    peaks = [l["peak_train_device_bytes"] for l in lines
             if "peak_train_device_bytes" in l]
    peaks += [l.get("peak_device_bytes", 0) for l in its]
    return its, max(peaks, default=0)


def split(profile):
    """Shares of the profiled runtime time: GEMM, attention, other."""
    shares = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
    try:
        lines = open(profile).readlines()
    except OSError:
        return None
    for line in lines:
        m = re.match(r"\s+(metart_\w+)\s+\d+\s+([0-9.]+)\s", line)
        if not m:
            continue
        name, ms = m.group(1), float(m.group(2))
        if name in ("metart_nn_linear", "metart_nn_matmul"):
            shares["gemm"] += ms
        elif name.startswith("metart_nn_attention"):
            shares["attention"] += ms
        else:
            shares["other"] += ms
    total = sum(shares.values())
    return {k: v / total for k, v in shares.items()} if total else None


def main():
    if sys.argv[1] == "--flops":
        for path in sys.argv[2:]:
            try:
                its, _ = iterations(path)
                if its:
                    print(its[-1]["flops"])
                    return
            except OSError:
                pass
        print(0)
        return
    variant, metrics, profile, peak = sys.argv[1:5]
    its, peak_bytes = iterations(metrics)
    # The first runs op by op (warming caches and the workspaces), the
    # second records the CUDA graph: the rest replay it.
    timed = its[2:] or its[1:] or its
    seconds = sum(l["seconds"] for l in timed) / len(timed)
    flops = its[-1]["flops"]
    mfu = flops / seconds / (float(peak) * 1e12)
    name = {"1": "FOMAML", "2": "second-order MAML"}[variant[1]]
    attention = "fused" if variant[2] == "f" else "unfused"
    shares = split(profile)
    split_text = ("time split GEMM %.0f%%, attention %.0f%%, other %.0f%%" %
                  tuple(100 * shares[k] for k in ("gemm", "attention", "other"))
                  if shares else "no profile")
    print(f"metac {name:17s} {attention:7s}: {seconds * 1e3:9.1f} ms/iteration, "
          f"{TOKENS / seconds:9.0f} tokens/s, {flops / 1e12:6.1f} TFLOP, "
          f"MFU {100 * mfu:.1f}%, peak {peak_bytes / 2**30:.2f} GiB, "
          f"meta-loss {its[-1]['meta_loss']:.4f}, {split_text}", flush=True)


if __name__ == "__main__":
    main()
