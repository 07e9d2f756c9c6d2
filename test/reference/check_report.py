#!/usr/bin/env python3
"""Checks a `metac bench` report: every plot report.md names exists, reads as
a PNG of a sensible size, and its plot area is not empty (coloured pixels:
the lines, markers and bars; axes and text are black or grey); the text
never shows NaN. Run with the plotting environment's python (matplotlib).

usage: check_report.py DIR [--min-plots N]
"""

import os
import re
import sys

import matplotlib.image as mpimg


def coloured_fraction(image):
    rgb = image[..., :3]
    spread = rgb.max(axis=2) - rgb.min(axis=2)
    return float((spread > 0.25).mean())


def main():
    directory = sys.argv[1]
    minimum = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--min-plots" else 1
    with open(os.path.join(directory, "report.md")) as f:
        text = f.read()
    if re.search(r"\bnan\b", text, re.IGNORECASE):
        print("check_report: report.md shows NaN", file=sys.stderr)
        return 1
    plots = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text)
    if len(plots) < minimum:
        print(f"check_report: {len(plots)} plots, expected at least {minimum}", file=sys.stderr)
        return 1
    for plot in plots:
        path = os.path.join(directory, plot)
        image = mpimg.imread(path)  # raises on a file that is not a PNG
        height, width = image.shape[:2]
        fraction = coloured_fraction(image)
        print(f"{plot}: {width}x{height}, {100 * fraction:.2f}% coloured")
        if width < 300 or height < 200:
            print(f"check_report: {plot} is too small", file=sys.stderr)
            return 1
        if fraction < 0.0005:
            print(f"check_report: {plot} has an empty plot area", file=sys.stderr)
            return 1
    print(f"check_report: {len(plots)} plots ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
