#!/usr/bin/env python3
"""Compares two safetensors parameter files tensor by tensor.

The relative error of a tensor is max|a - b| / max|b| (the infinity norm of
the difference relative to the reference b). Prints the largest and exits
non-zero when any tensor's exceeds --rtol, or when names, dtypes or shapes
differ. With --atol, a tensor whose largest difference is within it passes
whatever its scale: a parameter whose gradient is zero by symmetry holds
round-off alone (ProtoNets' last batch-norm bias before global max
pooling, which shifts every embedding alike), relative to nothing.
Standard library only, so it runs wherever the tests run.

  compare_params.py A.safetensors B.safetensors --rtol 1e-5 [--atol 1e-7]
"""

import argparse
import json
import struct
import sys

FORMATS = {"F32": "f", "F64": "d", "I32": "i", "I64": "q"}


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    body = data[8 + length:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        fmt = FORMATS[info["dtype"]]
        count = (end - begin) // struct.calcsize(fmt)
        values = struct.unpack(f"<{count}{fmt}", body[begin:end])
        tensors[name] = (info["dtype"], info["shape"], values)
    return tensors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rtol", type=float, required=True)
    parser.add_argument("--atol", type=float, default=0.0)
    args = parser.parse_args()
    a, b = read(args.a), read(args.b)
    if sorted(a) != sorted(b):
        sys.exit(f"different tensors: {sorted(a)} vs {sorted(b)}")
    worst = 0.0
    for name in sorted(a):
        (ta, sa, va), (tb, sb, vb) = a[name], b[name]
        if ta != tb or sa != sb:
            sys.exit(f"{name}: {ta}{sa} vs {tb}{sb}")
        scale = max(abs(x) for x in vb) or 1.0
        difference = max((abs(x - y) for x, y in zip(va, vb)), default=0.0)
        error = difference / scale
        if args.atol > 0 and difference <= args.atol:
            print(f"{name}: difference {difference:.3e} within --atol")
            continue
        worst = max(worst, error)
        if error > args.rtol:
            print(f"{name}: relative error {error:.3e} > {args.rtol:.1e}")
    print(f"max relative error {worst:.3e} over {len(a)} tensors")
    sys.exit(1 if worst > args.rtol else 0)


if __name__ == "__main__":
    main()
