#!/usr/bin/env bash
# The pipedream schedule against GPipe and 1F1B on two pipeline stages, in
# one run: time per meta-iteration, peak memory of stage 0, and convergence
# (the mean meta-loss over the last fifth of ITERATIONS, and the iterations
# and seconds until the running mean of 20 reaches GPipe's level, within
# twice ITERATIONS).
#   bench/pipedream.sh [ITERATIONS]      (default 300)
# Specs: bench/specs/deep_mlp.meta (second-order MAML, balanced stages) and
# bench/specs/deep_joint.meta (0 inner steps: one forward and one backward
# sweep, where the bubble is largest). Every process runs OpenBLAS on one
# thread, so the two stages use the two cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${METAC_BUILD_DIR:-$root/build}
iterations=${1:-300}
"$root/scripts/build.sh" metac >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-10s %3s %-10s %9s %12s %10s %16s\n' spec m schedule ms/iter "peak bytes" "late loss" "to target: it, s"
for spec in deep_mlp deep_joint; do
  for m in 1 2 4; do
    for schedule in gpipe 1f1b pipedream; do
      name=$spec.$m.$schedule
      mpirun -np 2 -x OPENBLAS_NUM_THREADS "$build/bin/metac" run \
        "$root/bench/specs/$spec.meta" --mesh pipeline=2 --micro-batches "$m" \
        --schedule="$schedule" --iterations=$((2 * iterations)) --quiet \
        --metrics="$work/$name.jsonl" >"$work/$name.out"
    done
    # The target: GPipe's mean meta-loss over the last fifth of ITERATIONS,
    # reached by each schedule's running mean of 20 iterations.
    /usr/bin/python3 - "$work" "$spec" "$m" "$iterations" <<'PY'
import json, sys
work, spec, m, n = sys.argv[1:]
n = int(n)
def rows(schedule):
    lines = [json.loads(l) for l in open(f"{work}/{spec}.{m}.{schedule}.jsonl")]
    return [l for l in lines if "iteration" in l]
def late(r):
    losses = [l["meta_loss"] for l in r[:n] if l["meta_loss"] is not None]
    tail = losses[-max(1, n // 5):]
    return sum(tail) / len(tail)
target = late(rows("gpipe"))
for schedule in ["gpipe", "1f1b", "pipedream"]:
    r = rows(schedule)
    ms = 1e3 * sum(l["seconds"] for l in r[1:n]) / max(1, n - 1)
    peak = max(l["peak_device_bytes"] for l in r)
    elapsed, window, reached = 0.0, [], None
    for l in r:
        elapsed += l["seconds"]
        if l["meta_loss"] is None:
            continue
        window = (window + [l["meta_loss"]])[-20:]
        if reached is None and len(window) == 20 and sum(window) / 20 <= target:
            reached = (l["iteration"], elapsed)
    print("%-10s %3s %-10s %9.2f %12d %10.4f %16s" % (
        spec, m, schedule, ms, peak, late(r),
        "%d, %.2f" % reached if reached is not None else "not reached"))
PY
  done
done
