#!/usr/bin/env bash
# Foundation-scale building blocks on this CPU (issue 17): the small
# transformer MAML (examples/transformer_sequence.meta, second order,
# without its evaluation) with the inner steps from 1 to 8, its peak device
# memory and time per meta-iteration in f32 and bf16 (`--precision`), with
# recomputation off, every sqrt(K) steps (`--remat=sqrt`) and every step
# (`--remat=steps`), each against f32 without recomputation in the same
# run.
#   bench/foundation.sh                 (steps 1-8)
#   STEPS="1 4 8" ITERATIONS=3 PRECISIONS="f32 bf16" REMATS="off sqrt" \
#     bench/foundation.sh
#   bench/foundation.sh cuda            (on a GPU: the 1.14B GPT against
#                                        PyTorch, bench/foundation_1b.sh)
set -euo pipefail
if [ "${1:-}" = cuda ]; then
  exec "$(dirname "$0")/foundation_1b.sh"
fi
source "$(dirname "$0")/metac-binary.sh"
steps_list=${STEPS:-"1 2 3 4 5 6 7 8"}
iterations=${ITERATIONS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run: "ms/iteration peak-bytes".
measure() {
  "$metac" run "$1" --iterations="$iterations" --quiet "${@:2}" </dev/null |
    sed -n 's/.*, \([0-9.]*\) ms\/iteration, .*peak device memory \([0-9]*\) bytes.*/\1 \2/p'
}

printf '%-6s %-9s %-6s %12s %14s %9s %9s\n' steps precision remat \
  "ms/iter" "peak MiB" "time x" "memory x"
for steps in $steps_list; do
  sed -e '/^ *evaluate *{.*}$/d' \
    -e "s/algorithm  = maml { steps = 1,/algorithm  = maml { steps = $steps,/" \
    "$root/examples/transformer_sequence.meta" >"$work/t.meta"
  grep -q "steps = $steps," "$work/t.meta"
  read -r off_ms off_peak < <(measure "$work/t.meta")
  for precision in ${PRECISIONS:-f32 bf16}; do
    for remat in ${REMATS:-off sqrt steps}; do
      if [ "$remat" = off ] && [ "$precision" = f32 ]; then
        ms=$off_ms peak=$off_peak
      else
        read -r ms peak < <(measure "$work/t.meta" --remat="$remat" \
          --precision="$precision")
      fi
      /usr/bin/python3 -c "
import sys
steps, precision, remat, ms, peak, off_ms, off_peak = sys.argv[1:]
print('%-6s %-9s %-6s %12.1f %14.1f %8.2fx %8.2fx' % (steps, precision,
      remat, float(ms), int(peak) / 2**20, float(ms) / float(off_ms),
      int(peak) / int(off_peak)))" "$steps" "$precision" "$remat" "$ms" \
        "$peak" "$off_ms" "$off_peak"
    done
  done
done
