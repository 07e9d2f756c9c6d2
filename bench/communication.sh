#!/usr/bin/env bash
# The communication options on 2, 4 and 8 MPI processes of this machine
# (bench/matrix/communication.yaml): time per meta-iteration, time in
# collectives (and the part of it overlapped with compute) and bytes per
# meta-iteration for each all-reduce algorithm with and without bf16
# compression, overlap, top-k and PowerSGD compression, the evaluation
# loss (accuracy for Fashion-MNIST) after the same budget, a straggler,
# and parameter servers (synchronous, stale, asynchronous) against
# all-reduce, and a mixed meta-batch split by count against by cost
# (with the load imbalance: the busiest rank's compute over the mean).
# Writes the study and its report to OUT
# (default bench/out/communication); a rerun keeps finished runs.
#   bench/communication.sh
set -euo pipefail
source "$(dirname "$0")/metac-binary.sh"
out=${OUT:-$root/bench/out/communication}
# Nodes of two ranks for --allreduce=hierarchical.
export METART_RANKS_PER_NODE=2
"$metac" bench "$root/bench/matrix/communication.yaml" -o "$out" "$@"
/usr/bin/python3 - "$out" <<'PY'
import glob, json, os, sys
rows = []
for path in glob.glob(os.path.join(sys.argv[1], "runs", "*", "*.json")):
    r = json.load(open(path))
    if r.get("status") != "ok":
        continue
    last = (r.get("evaluation") or [{}])[-1]
    loss = last.get("accuracy", last.get("loss"))
    axes = r["axes"]
    option = ",".join(f"{k}={axes[k]}" for k in ("layout", "pacing", "overlap",
                                                  "staleness", "straggler",
                                                  "balance")
                      if k in axes) or "none"
    rows.append((r["study"], r["processes"], r["axes"].get("allreduce", "library"),
                 r["axes"].get("compress", "none"), option,
                 r["seconds_per_iteration"] * 1e3, r["comm_seconds_per_iteration"] * 1e3,
                 r["comm_bytes_per_iteration"], loss, r["repetition"],
                 100 * r.get("comm_overlapped_fraction", 0),
                 (r.get("balance") or {}).get("imbalance")))
rows.sort()
print(f"{'study':17} {'ranks':>5} {'allreduce':>12} {'compress':>8} {'option':>46} "
      f"{'ms/it':>8} {'sync ms':>8} {'overlap':>7} {'bytes/it':>9} {'eval loss/acc':>13} "
      f"{'imbalance':>9}")
for s, n, a, c, st, t, sync, b, loss, rep, hidden, imbalance in rows:
    shown = f"{loss:13.4f}" if loss is not None else f"{'—':>13}"
    spread = f"{imbalance:9.2f}" if imbalance else f"{'—':>9}"
    print(f"{s:17} {n:5} {a:>12} {c:>8} {st:>46} {t:8.3f} {sync:8.3f} {hidden:6.0f}% {b:9.0f} {shown} {spread}")
PY
