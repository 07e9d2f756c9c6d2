#!/usr/bin/env python3
"""Checks a metac --trace file (Chrome trace event JSON) for what Perfetto
needs and what the timeline must say.

  check_trace.py TRACE.json --iterations N --rank R [--expect NAME ...]

Fails unless: the file parses; a process_name metadata event names rank R;
every complete ("X") event has a name, pid R, a non-negative start and
duration; there are N meta-iteration events (0 .. N-1, in order, not
overlapping); every runtime call lies within a meta-iteration; every
meta-iteration holds the same number of calls; and each --expect name is
among the calls. Prints a summary line. Standard library only.
"""

import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--expect", action="append", default=[])
    args = parser.parse_args()
    with open(args.trace) as f:
        data = json.load(f)
    events = data["traceEvents"]
    if data["otherData"]["truncated"]:
        sys.exit("the trace is truncated")
    names = [e for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    if not names or names[0]["args"]["name"] != f"rank {args.rank}":
        sys.exit(f"no process_name 'rank {args.rank}': {names}")
    spans = [e for e in events if e["ph"] == "X"]
    for e in spans:
        if not e["name"] or e["pid"] != args.rank or e["ts"] < 0 or e["dur"] < 0:
            sys.exit(f"malformed event: {e}")
    iterations = [e for e in spans if e["tid"] == 1]
    calls = [e for e in spans if e["tid"] == 0]
    got = [e["args"]["iteration"] for e in iterations]
    if got != list(range(args.iterations)):
        sys.exit(f"meta-iterations {got}, expected 0..{args.iterations - 1}")
    for a, b in zip(iterations, iterations[1:]):
        if a["ts"] + a["dur"] > b["ts"] + 1e-3:
            sys.exit(f"meta-iterations overlap: {a} and {b}")
    per_iteration = [0] * len(iterations)
    for c in calls:
        inside = [i for i, it in enumerate(iterations)
                  if it["ts"] - 1e-3 <= c["ts"] and
                  c["ts"] + c["dur"] <= it["ts"] + it["dur"] + 1e-3]
        if len(inside) != 1:
            sys.exit(f"call outside the meta-iterations: {c}")
        per_iteration[inside[0]] += 1
    if len(set(per_iteration)) != 1 or per_iteration[0] == 0:
        sys.exit(f"calls per meta-iteration differ: {per_iteration}")
    present = {c["name"] for c in calls}
    for name in args.expect:
        if name not in present:
            sys.exit(f"no call of {name} (calls: {sorted(present)})")
    print(f"rank {args.rank}: {len(iterations)} meta-iterations, "
          f"{per_iteration[0]} calls each, {len(present)} functions")


if __name__ == "__main__":
    main()
