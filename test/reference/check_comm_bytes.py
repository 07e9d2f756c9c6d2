#!/usr/bin/env python3
"""Checks the bytes per iteration and axis in a metrics file against the
analytic count for MAML on a task x data mesh (docs/distributed.md).

With P parameter elements, s bytes per element, T tasks per meta-batch, k
inner steps, and a mesh of Dt task and Dd data ranks, one meta-iteration
all-reduces:
  - over `data` (Dd > 1): the per-task inner gradients of this rank's T/Dt
    tasks once per inner step, and for order 2 their adjoints once more per
    step in the backward pass: (k or 2k) * (T/Dt) * P elements;
  - the meta-gradients (P) and the meta-loss (1) over every axis of size >
    1 at once (`task`, `data` or `task+data`).

  check_comm_bytes.py METRICS PARAMS --tasks T --steps k --order 2
      --mesh task=2,data=2
"""

import argparse
import json
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from compare_params import read  # noqa: E402

SIZES = {"F32": 4, "F64": 8}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("metrics")
    parser.add_argument("params")
    parser.add_argument("--tasks", type=int, required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--order", type=int, required=True)
    parser.add_argument("--mesh", required=True)
    args = parser.parse_args()
    mesh = {"task": 1, "data": 1}
    for item in args.mesh.split(","):
        axis, size = item.split("=")
        mesh[axis] = int(size)
    params = read(args.params)
    elements = sum(len(values) for _, _, values in params.values())
    size = SIZES[next(iter(params.values()))[0]]

    expected = {}
    if mesh["data"] > 1:
        per_step = args.tasks // mesh["task"] * elements
        expected["data"] = size * per_step * args.steps * (
            2 if args.order == 2 else 1)
    outer = "+".join(a for a in ("task", "data") if mesh[a] > 1)
    expected[outer] = expected.get(outer, 0) + size * (elements + 1)

    # Iteration lines (evaluation lines, after them, move no training bytes).
    lines = [entry for entry in map(json.loads, open(args.metrics))
             if "iteration" in entry]
    if not lines:
        sys.exit("no metrics")
    for line in lines:
        measured = {axis: c["bytes"] for axis, c in line["comm"].items()
                    if c["bytes"]}
        if measured != expected:
            sys.exit(f"iteration {line['iteration']}: measured {measured}, "
                     f"expected {expected} (P = {elements}, s = {size})")
    print(f"{len(lines)} iterations: bytes per axis {expected} as predicted "
          f"(P = {elements}, s = {size})")


if __name__ == "__main__":
    main()
