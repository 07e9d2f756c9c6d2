#!/usr/bin/env bash
# Checkpoint write and resume time against model size, gathered (rank 0
# gathers ZeRO's parts and writes one file) against sharded (every rank
# writes its pieces in parallel; an index), on 4 MPI processes
# (task=2,data=2, ZeRO-1): the sinusoid regressor widened to W hidden
# units (about 2 W^2 parameters, 3 times that in f32 with Adam's moments).
# Each configuration writes a checkpoint after each of 4 meta-iterations;
# the times are the runtime's own (the metrics' "checkpoints" line: wall
# time of a write, every rank waiting for the last; of the resume, on 4
# ranks and on 1).
#   bench/checkpoints.sh [WIDTH...]   (default 256 1024 2048)
set -euo pipefail
source "$(dirname "$0")/metac-binary.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
widths=("$@")
[ ${#widths[@]} -eq 0 ] && widths=(256 1024 2048)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
field() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$2" | tail -1; }
printf '| width | parameters | checkpoint MB | format | write ms | resume ms, 4 ranks | resume ms, 1 rank |\n'
printf '|---|---|---|---|---|---|---|\n'
for width in "${widths[@]}"; do
  sed -e "s/40/$width/g" -e 's/evaluate .*//' \
    "$root/test/metac/distributed/Inputs/sine8.meta" >"$work/w$width.meta"
  parameters=$((2 * width + width * width + width + width + 1))
  for format in gathered sharded; do
    dir=$work/$format-$width
    mpirun -np 4 "$metac" run "$work/w$width.meta" --mesh task=2,data=2 \
      --zero=1 --quiet --iterations=4 --checkpoint-every=1 \
      --checkpoint-dir="$dir" --checkpoint-format=$format \
      --metrics="$dir.write.jsonl" >/dev/null
    mpirun -np 4 "$metac" run "$work/w$width.meta" --mesh task=2,data=2 \
      --zero=1 --quiet --iterations=4 --resume="$dir" \
      --metrics="$dir.resume4.jsonl" >/dev/null
    "$metac" run "$work/w$width.meta" --quiet --iterations=4 \
      --resume="$dir" --metrics="$dir.resume1.jsonl" >/dev/null
    bytes=$(du -sb "$dir" | cut -f1)
    awk -v w="$width" -v p="$parameters" -v b="$bytes" -v f="$format" \
      -v n="$(field writes "$dir.write.jsonl")" \
      -v ws="$(field write_seconds "$dir.write.jsonl")" \
      -v r4="$(field resume_seconds "$dir.resume4.jsonl")" \
      -v r1="$(field resume_seconds "$dir.resume1.jsonl")" \
      'BEGIN { printf "| %s | %s | %.1f | %s | %.2f | %.2f | %.2f |\n", w, p,
               b / 1048576, f, ws * 1000 / n, r4 * 1000, r1 * 1000 }'
  done
done
