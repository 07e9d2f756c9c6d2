#!/usr/bin/env python3
"""Draws the timeline of a pipeline run from its METART_TRACE files.

  pipeline_timeline.py TRACE_DIR OUT.png [--steps K] [--stages P --micro M]

One row per rank (rank 0 at the top), time left to right over the last K
meta-iterations: blue while the rank computes, red while it waits in a
receive (the bubble, and the transfer itself), orange in sends, green in
all-reduces and other collectives, white between steps. Prints each rank's
share of step time in receives next to the ideal bubble (p-1)/(m+p-1).
Standard library only (the PNG is written by hand).
"""

import argparse
import glob
import json
import os
import struct
import zlib

COLOURS = {
    "compute": (66, 110, 200),
    "recv": (214, 60, 50),
    "send": (240, 160, 40),
    "collective": (60, 170, 90),
    "idle": (255, 255, 255),
}


def write_png(path, width, height, pixels):
    raw = b"".join(b"\x00" + bytes(row) for row in pixels)

    def chunk(kind, data):
        body = kind + data
        return (struct.pack(">I", len(data)) + body +
                struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                           0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(chunk(b"IEND", b""))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace_dir")
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--stages", type=int, default=0)
    parser.add_argument("--micro", type=int, default=0)
    parser.add_argument("--width", type=int, default=1200)
    args = parser.parse_args()

    ranks = {}
    for path in glob.glob(os.path.join(args.trace_dir, "trace.*.jsonl")):
        rank = int(path.rsplit(".", 2)[-2])
        ranks[rank] = [json.loads(line) for line in open(path)]
    if not ranks:
        raise SystemExit(f"no trace files in {args.trace_dir}")
    steps = {r: [e for e in events if e["what"] == "step"]
             for r, events in ranks.items()}
    count = min(len(s) for s in steps.values())
    if count < args.steps:
        raise SystemExit(f"only {count} steps traced")
    # The window: the last K steps of every rank.
    begin = min(s[count - args.steps]["begin"] for s in steps.values())
    end = max(s[count - 1]["end"] for s in steps.values())
    scale = args.width / (end - begin)

    row, gap = 36, 8
    height = len(ranks) * (row + gap) + gap
    pixels = [[255] * (3 * args.width) for _ in range(height)]

    def paint(rank_index, t0, t1, colour):
        x0 = max(0, int((t0 - begin) * scale))
        x1 = min(args.width, max(x0 + 1, int((t1 - begin) * scale)))
        y0 = gap + rank_index * (row + gap)
        for y in range(y0, y0 + row):
            line = pixels[y]
            for x in range(x0, x1):
                line[3 * x:3 * x + 3] = colour

    print(f"{'rank':>4} {'step ms':>9} {'in receives':>12} {'in sends':>9} "
          f"{'in collectives':>15}")
    for index, rank in enumerate(sorted(ranks)):
        window = steps[rank][count - args.steps:count]
        total = sum(s["end"] - s["begin"] for s in window)
        shares = {"recv": 0.0, "send": 0.0, "collective": 0.0}
        for s in window:
            paint(index, s["begin"], s["end"], COLOURS["compute"])
        for e in ranks[rank]:
            if e["what"] == "step" or e["end"] < begin or e["begin"] > end:
                continue
            kind = e["what"] if e["what"] in ("recv", "send") else "collective"
            inside = any(s["begin"] <= e["begin"] <= s["end"] for s in window)
            if inside:
                shares[kind] += e["end"] - e["begin"]
            paint(index, e["begin"], e["end"], COLOURS[kind])
        print(f"{rank:>4} {1e3 * total / len(window):>9.2f} "
              f"{shares['recv'] / total:>12.3f} {shares['send'] / total:>9.3f} "
              f"{shares['collective'] / total:>15.3f}")
    if args.stages and args.micro:
        p, m = args.stages, args.micro
        print(f"ideal bubble (p-1)/(m+p-1) for p={p}, m={m}: "
              f"{(p - 1) / (m + p - 1):.3f}")
    write_png(args.out, args.width, height, pixels)


if __name__ == "__main__":
    main()
