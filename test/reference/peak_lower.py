#!/usr/bin/env python3
"""Checks that the second --metrics file's peak device memory during
training (peak_train_device_bytes) is below the first's by at least --by
bytes. Prints both."""
import argparse
import json
import sys


def peak(path):
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if "peak_train_device_bytes" in record:
                return int(record["peak_train_device_bytes"])
    sys.exit(f"{path}: no peak_train_device_bytes")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--by", type=int, required=True)
    args = parser.parse_args()
    a, b = peak(args.first), peak(args.second)
    print(f"{args.first}: {a} bytes; {args.second}: {b} bytes ({a - b} less)")
    if a - b < args.by:
        sys.exit(f"the peak fell by {a - b} bytes, less than {args.by}")


if __name__ == "__main__":
    main()
