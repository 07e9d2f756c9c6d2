#!/usr/bin/env python3
"""Checks that training runs reach the same meta-loss: the mean meta-loss
over the last N iterations of each --metrics file after the first is within
RTOL (relative) of the first file's. Prints the means."""
import argparse
import json
import sys


def mean_loss(path, last):
    losses = []
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if "iteration" in record and "meta_loss" in record:
                losses.append(float(record["meta_loss"]))
    if len(losses) < last:
        sys.exit(f"{path}: {len(losses)} iterations, fewer than --last {last}")
    return sum(losses[-last:]) / last


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("reference")
    parser.add_argument("others", nargs="+")
    parser.add_argument("--last", type=int, default=50)
    parser.add_argument("--rtol", type=float, required=True)
    args = parser.parse_args()
    reference = mean_loss(args.reference, args.last)
    print(f"{args.reference}: mean meta-loss {reference:.6g}")
    failed = False
    for path in args.others:
        value = mean_loss(path, args.last)
        relative = abs(value - reference) / abs(reference)
        verdict = "ok" if relative <= args.rtol else "TOO FAR"
        print(f"{path}: mean meta-loss {value:.6g} ({relative:.2%} off) {verdict}")
        failed |= relative > args.rtol
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
