#!/usr/bin/python3
"""Compares the evaluation accuracy of a metac run (the `evaluation` lines
of its --metrics file) with the PyTorch reference's (--json of
bench/fashion_mnist_torch.py), per number of adaptation steps: metac's mean
and the reference's mean with its 95% confidence interval, and whether
metac's mean lies inside that interval. Exits 1 when one does not.

  bench/compare_accuracy.py METAC_METRICS.jsonl TORCH.json
"""

import json
import sys


def metac_figures(path):
    """{steps: (accuracy, ci95)} from the evaluation lines of a metrics file."""
    figures = {}
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if "evaluation" in record:
                e = record["evaluation"]
                figures[e["steps"]] = (e["accuracy"], e["accuracy_ci95"], e["tasks"])
    return figures


def torch_figures(path):
    """{steps: (accuracy, ci95)}; ProtoNets' single setting counts as 0 steps."""
    with open(path) as f:
        run = json.load(f)
    tasks = run["config"]["eval_tasks"]
    return {(e["steps"] or 0): (e["accuracy"], e["accuracy_ci95"], tasks)
            for e in run["evaluation"]}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ours, theirs = metac_figures(sys.argv[1]), torch_figures(sys.argv[2])
    if not ours:
        sys.exit(f"{sys.argv[1]}: no evaluation lines")
    inside_all = True
    for steps in sorted(ours):
        if steps not in theirs:
            continue
        acc, ci, n = ours[steps]
        ref, ref_ci, ref_n = theirs[steps]
        inside = abs(acc - ref) <= ref_ci
        inside_all &= inside
        print(f"steps {steps}: metac {acc:.4f} +- {ci:.4f} ({n} tasks), "
              f"pytorch {ref:.4f} +- {ref_ci:.4f} ({ref_n} tasks): "
              f"{'within' if inside else 'OUTSIDE'} the reference's 95% interval "
              f"(difference {acc - ref:+.4f})")
    sys.exit(0 if inside_all else 1)


if __name__ == "__main__":
    main()
