#!/usr/bin/python3
"""Writes 4 sinusoid-like regression episodes (support and query of 5
samples, f32) whose task 3 has a NaN target: on a task=2 mesh, only rank 1
(tasks 2 and 3) meets it.

  make_nan_episodes.py OUT.safetensors SRC_DIR
"""
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(sys.argv[2]) / "test" / "reference"))
from check_safetensors import write_safetensors  # noqa: E402

tasks, samples = 4, 5
x = [(-4.0 + 8.0 * (t * samples + i) / (tasks * samples)) for t in range(tasks)
     for i in range(samples)]
y = [math.sin(v) for v in x]
query_y = list(y)
query_y[3 * samples + 2] = float("nan")
shape = [tasks, samples, 1]
write_safetensors(pathlib.Path(sys.argv[1]), [
    ("support.x", "F32", shape, x), ("support.y", "F32", shape, y),
    ("query.x", "F32", shape, x), ("query.y", "F32", shape, query_y)], {})
