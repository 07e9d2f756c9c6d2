#!/usr/bin/env bash
# What the non-finite check costs: sinusoid MAML (examples/sinusoid.meta) with
# the update guard (the default, --on-nonfinite=stop) against the same run
# compiled without it (--on-nonfinite=ignore), alternated in one run so that
# both see the same machine, several times each; prints the median ms per
# meta-iteration of each and their ratio.
#
#   bench/nonfinite_overhead.sh [ITERATIONS] [REPEATS] [BACKEND]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
iterations=${1:-5000}
repeats=${2:-5}
backend=${3:-cpu}
"$root/scripts/build.sh" metac >&2
metac=${METAC_BUILD_DIR:-$root/build}/bin/metac
run() {
  "$metac" run "$root/examples/sinusoid.meta" --iterations="$iterations" \
    --quiet --backend="$backend" "$@" |
    sed -n 's/.* \([0-9.]*\) ms\/iteration.*/\1/p'
}
guarded=() ignored=()
for ((r = 0; r < repeats; ++r)); do
  guarded+=("$(run --on-nonfinite=stop)")
  ignored+=("$(run --on-nonfinite=ignore)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
g=$(median "${guarded[@]}")
i=$(median "${ignored[@]}")
echo "sinusoid MAML, $iterations meta-iterations x $repeats on $backend"
echo "  with the check:    ${guarded[*]} ms/iteration (median $g)"
echo "  without the check: ${ignored[*]} ms/iteration (median $i)"
awk -v g="$g" -v i="$i" 'BEGIN {printf "  ratio with/without: %.4f (%+.2f%%)\n", g / i, 100 * (g / i - 1)}'
