#!/usr/bin/python3
"""Compares the evaluation accuracy of a metac run (the `evaluation` lines
of its --metrics file) with the PyTorch reference's (--json of
bench/fashion_mnist_torch.py), per number of adaptation steps: metac's mean
and the reference's mean with its 95% confidence interval, and whether
metac's mean lies inside that interval. Exits 1 when one does not.

  bench/compare_accuracy.py METAC_METRICS.jsonl TORCH.json

With --seeds, compares training procedures rather than single runs: given
one metac run and one reference run per training seed, it takes each
side's mean accuracy over its seeds, and the reference's 95% interval for
the mean of its procedure, mean +- t(0.975, n - 1) * s / sqrt(n), s the
standard deviation between its seeds' accuracies (which includes the
evaluation tasks' noise). Exits 1 when metac's seed mean lies outside.

  bench/compare_accuracy.py --seeds --metac A.jsonl B.jsonl ... --torch A.json B.json ...
"""

import argparse
import json
import math
import statistics
import sys

# Student's t quantile t(0.975, df) for df = 1..30 (beyond: the normal's).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


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


def seed_interval(values):
    """(mean, half-width of the 95% t interval, standard deviation)."""
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return mean, math.inf, 0.0
    sd = statistics.stdev(values)
    t = T975[n - 2] if n - 1 <= len(T975) else 1.96
    return mean, t * sd / math.sqrt(n), sd


def compare_seeds(metac_paths, torch_paths):
    ours = [metac_figures(p) for p in metac_paths]
    theirs = [torch_figures(p) for p in torch_paths]
    for path, figures in zip(metac_paths, ours):
        if not figures:
            sys.exit(f"{path}: no evaluation lines")
    inside_all = True
    for steps in sorted(ours[0]):
        if not all(steps in f for f in ours + theirs):
            continue
        a = [f[steps][0] for f in ours]
        b = [f[steps][0] for f in theirs]
        mean, _, sd = seed_interval(a)
        ref, ref_half, ref_sd = seed_interval(b)
        inside = abs(mean - ref) <= ref_half
        inside_all &= inside
        print(f"steps {steps}: metac {' '.join(f'{v:.4f}' for v in a)} -> mean "
              f"{mean:.4f} (sd {sd:.4f}, {len(a)} seeds); pytorch "
              f"{' '.join(f'{v:.4f}' for v in b)} -> mean {ref:.4f} +- "
              f"{ref_half:.4f} (sd {ref_sd:.4f}, {len(b)} seeds): "
              f"{'within' if inside else 'OUTSIDE'} the reference's 95% interval "
              f"(difference {mean - ref:+.4f})")
    return inside_all


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--seeds":
        parser = argparse.ArgumentParser(usage=__doc__)
        parser.add_argument("--seeds", action="store_true")
        parser.add_argument("--metac", nargs="+", required=True)
        parser.add_argument("--torch", nargs="+", required=True)
        args = parser.parse_args()
        sys.exit(0 if compare_seeds(args.metac, args.torch) else 1)
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
