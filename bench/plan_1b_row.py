#!/usr/bin/env python3
"""One line per training of a `metac plan --format=json` of one hand plan."""
import json
import sys

NAMES = ["maml2 (second order)", "maml1 (first order)"]
for name, p in zip(NAMES, json.load(sys.stdin)):
    axes = ", ".join(f"{k} {v / 2**30:.2f} GiB"
                     for k, v in sorted(p["bytes_per_axes"].items()))
    fits = "fits" if p["fits"] else "does NOT fit"
    mesh = p["mesh"]
    if p["schedule"] != "none":
        mesh += f" ({p['micro_batches']} mb, {p['schedule']})"
    print(f"  {name:22} {mesh:36} {p['predicted_ms']:8.1f} ms (compute "
          f"{p['compute_ms']:.1f}, comm {p['comm_ms']:.1f}, bubble "
          f"{p['bubble_ms']:.1f}), {p['peak_bytes'] / 2**30:6.1f} GiB: {fits}; "
          f"{axes}")
