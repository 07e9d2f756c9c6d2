#!/usr/bin/env python3
"""A finite-difference check of a run's meta-gradient along a direction.

One meta-iteration of SGD with learning rate LR moves the parameters from
theta0 to theta1 = theta0 - LR * g, so g = (theta0 - theta1) / LR is the
meta-gradient the run computed (distributed or not). Its derivative along
a random unit direction v, g . v, is compared with the central difference
(L(theta0 + eps v) - L(theta0 - eps v)) / (2 eps) of the meta-losses that
two more runs report for their first iteration (same seed, so the same
task batch). Standard library only.

  fd_direction.py perturb THETA0 EPS PLUS MINUS [--seed S]
  fd_direction.py check THETA0 THETA1 LR PLUS.jsonl MINUS.jsonl EPS --rtol R [--seed S]
"""

import argparse
import json
import math
import random
import struct
import sys

from compare_params import read

PACK = {"F32": "f", "F64": "d"}


def direction(params, seed):
    rng = random.Random(seed)
    v = {name: [rng.gauss(0, 1) for _ in values]
         for name, (dtype, shape, values) in params.items()}
    norm = math.sqrt(sum(x * x for values in v.values() for x in values))
    return {name: [x / norm for x in values] for name, values in v.items()}


def write(path, params):
    header, body, offset = {}, b"", 0
    for name in sorted(params):
        dtype, shape, values = params[name]
        data = struct.pack(f"<{len(values)}{PACK[dtype]}", *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        body += data
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + body)


def first_loss(path):
    for line in open(path):
        row = json.loads(line)
        if row.get("iteration") == 1:
            return row["meta_loss"]
    sys.exit(f"{path}: no meta-loss of iteration 1")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("perturb")
    p.add_argument("theta0")
    p.add_argument("eps", type=float)
    p.add_argument("plus")
    p.add_argument("minus")
    p.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("check")
    for name in ["theta0", "theta1"]:
        c.add_argument(name)
    c.add_argument("lr", type=float)
    c.add_argument("plus")
    c.add_argument("minus")
    c.add_argument("eps", type=float)
    c.add_argument("--rtol", type=float, required=True)
    c.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    theta0 = read(args.theta0)
    v = direction(theta0, args.seed)
    if args.command == "perturb":
        for path, sign in [(args.plus, 1), (args.minus, -1)]:
            write(path, {name: (dtype, shape,
                                [x + sign * args.eps * d
                                 for x, d in zip(values, v[name])])
                         for name, (dtype, shape, values) in theta0.items()})
        return
    theta1 = read(args.theta1)
    analytic = sum((a - b) / args.lr * d
                   for name, (_, _, values) in theta0.items()
                   for a, b, d in zip(values, theta1[name][2], v[name]))
    numeric = (first_loss(args.plus) - first_loss(args.minus)) / (2 * args.eps)
    error = abs(analytic - numeric) / max(abs(numeric), 1e-300)
    print(f"directional derivative: run {analytic:.12g}, finite "
          f"differences {numeric:.12g}, relative error {error:.3e}")
    if not error <= args.rtol:
        sys.exit(f"relative error {error:.3e} > {args.rtol:.1e}")


if __name__ == "__main__":
    main()
