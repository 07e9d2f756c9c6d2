#!/usr/bin/env python3
"""Compares two metac metrics files (--metrics): the meta-loss of every
iteration and the loss and accuracy of every evaluation (per number of
adaptation steps), each to a relative error |a - b| / max(|b|, tiny)
below --rtol. Prints the largest and exits non-zero when any exceeds it,
or when the files report different iterations or evaluations. Standard
library only.

  compare_metrics.py A.jsonl B.jsonl --rtol 1e-10
"""

import argparse
import json
import sys


def read(path):
    figures = {}
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if "meta_loss" in record:
                figures[f"iteration {record['iteration']} meta_loss"] = \
                    record["meta_loss"]
            if "evaluation" in record:
                e = record["evaluation"]
                for key in ("loss", "accuracy"):
                    figures[f"evaluation after {e['steps']} steps {key}"] = \
                        e[key]
    return figures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rtol", type=float, required=True)
    args = parser.parse_args()
    a, b = read(args.a), read(args.b)
    if sorted(a) != sorted(b) or not a:
        sys.exit(f"different figures: {sorted(a)} vs {sorted(b)}")
    worst = 0.0
    for name in sorted(a):
        error = abs(a[name] - b[name]) / max(abs(b[name]), 1e-300)
        worst = max(worst, error)
        if error > args.rtol:
            print(f"{name}: {a[name]!r} vs {b[name]!r}, relative error "
                  f"{error:.3e} > {args.rtol:.1e}")
    print(f"max relative error {worst:.3e} over {len(a)} figures")
    sys.exit(1 if worst > args.rtol else 0)


if __name__ == "__main__":
    main()
