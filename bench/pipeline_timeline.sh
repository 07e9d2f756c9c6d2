#!/usr/bin/env bash
# Records a pipeline=2 run of bench/specs/wide_mlp.meta (METART_TRACE) with
# the GPipe and the 1F1B-style schedule and draws each as a PNG timeline
# (one row per stage) with bench/pipeline_timeline.py.
#   bench/pipeline_timeline.sh [OUT_DIR] [MICRO_BATCHES]   (docs/images, 4)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${METAC_BUILD_DIR:-$root/build}
out=${1:-$root/docs/images}
micro=${2:-4}
"$root/scripts/build.sh" metac >/dev/null
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
for schedule in gpipe 1f1b; do
  trace=$(mktemp -d)
  mpirun -np 2 -x OPENBLAS_NUM_THREADS -x METART_TRACE="$trace" \
    "$build/bin/metac" run "$root/bench/specs/wide_mlp.meta" \
    --mesh pipeline=2 --micro-batches "$micro" --schedule "$schedule" \
    --iterations 6 --quiet >/dev/null
  echo "== $schedule, $micro micro-batches: $out/pipeline_$schedule.png"
  /usr/bin/python3 "$root/bench/pipeline_timeline.py" "$trace" \
    "$out/pipeline_$schedule.png" --steps 2 --stages 2 --micro "$micro"
  rm -rf "$trace"
done
