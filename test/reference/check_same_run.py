#!/usr/bin/python3
"""Checks that a run of bench/fashion_mnist_torch.py (--json) and a metac
run (--metrics) saw the same thing: their meta-losses, iteration by
iteration, and their evaluation figures (accuracy and loss per number of
adaptation steps) agree to a relative error below --tolerance (1e-7 by
default: metac's metrics file writes meta-losses to 9 digits). In f64,
with the reference drawing metac's tasks (--task-stream metac) from
metac's starting parameters, any difference in the tasks, their order,
the pixels or the labels shows up here.

  check_same_run.py METAC_METRICS.jsonl TORCH.json [--tolerance 1e-7]
"""

import argparse
import json
import sys


def relative(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("metac")
    parser.add_argument("torch")
    parser.add_argument("--tolerance", type=float, default=1e-7)
    args = parser.parse_args()
    losses, evaluation = {}, {}
    with open(args.metac) as f:
        for line in f:
            record = json.loads(line)
            if "meta_loss" in record:
                losses[record["iteration"]] = record["meta_loss"]
            if "evaluation" in record:
                e = record["evaluation"]
                evaluation[e["steps"]] = (e["accuracy"], e["loss"])
    with open(args.torch) as f:
        reference = json.load(f)
    pairs = []
    for entry in reference["meta_loss"]:
        if entry["iteration"] not in losses:
            sys.exit(f"metac has no meta-loss for iteration {entry['iteration']}")
        pairs.append((f"meta-loss {entry['iteration']}",
                      losses[entry["iteration"]], entry["loss"]))
    for entry in reference["evaluation"]:
        if entry["steps"] not in evaluation:
            sys.exit(f"metac has no evaluation after {entry['steps']} steps")
        accuracy, loss = evaluation[entry["steps"]]
        pairs.append((f"accuracy {entry['steps']}", accuracy, entry["accuracy"]))
        pairs.append((f"loss {entry['steps']}", loss, entry["loss"]))
    if len(pairs) < 2:
        sys.exit("nothing to compare")
    worst = max(relative(a, b) for _, a, b in pairs)
    for name, a, b in pairs:
        print(f"{name}: metac {a:.12g} torch {b:.12g}")
    verdict = "same" if worst < args.tolerance else "DIFFERENT"
    print(f"{verdict}: {len(pairs)} figures, max relative error {worst:.2e} "
          f"(tolerance {args.tolerance:g})")
    return 0 if worst < args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
