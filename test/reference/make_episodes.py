#!/usr/bin/env python3
"""Writes fixed sinusoid episodes as safetensors (support.x, support.y,
query.x, query.y, each [tasks, samples, 1]), seeded, standard library only.

  make_episodes.py OUT.safetensors --tasks 32 --samples 8 --dtype F64
"""

import argparse
import json
import math
import random
import struct


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--tasks", type=int, default=32)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--dtype", choices=["F32", "F64"], default="F32")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    fmt = "f" if args.dtype == "F32" else "d"
    arrays = {name: [] for name in ("support.x", "support.y", "query.x",
                                    "query.y")}
    for _ in range(args.tasks):
        amplitude, phase = rng.uniform(0.1, 5.0), rng.uniform(0, math.pi)
        for split in ("support", "query"):
            for _ in range(args.samples):
                x = rng.uniform(-5, 5)
                arrays[f"{split}.x"].append(x)
                arrays[f"{split}.y"].append(amplitude * math.sin(x - phase))
    header, body, offset = {}, b"", 0
    for name, values in arrays.items():
        blob = struct.pack(f"<{len(values)}{fmt}", *values)
        header[name] = {"dtype": args.dtype,
                        "shape": [args.tasks, args.samples, 1],
                        "data_offsets": [offset, offset + len(blob)]}
        body += blob
        offset += len(blob)
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(args.out, "wb") as f:
        f.write(struct.pack("<Q", len(encoded)) + encoded + body)


if __name__ == "__main__":
    main()
