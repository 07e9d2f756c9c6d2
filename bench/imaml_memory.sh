#!/usr/bin/env bash
# Peak memory of second-order MAML and of iMAML as the inner steps grow,
# same model, tasks and run length (test/metac/distributed/Inputs/sine8.meta,
# 2 meta-iterations): MAML keeps every inner step for its backward pass,
# iMAML (implicit gradient by 5 CG steps) keeps none.
#   bench/imaml_memory.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${METAC_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" metac >/dev/null
spec=$root/test/metac/distributed/Inputs/sine8.meta
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
peak() {
  "$build/bin/metac" run "$1" --iterations 2 --quiet |
    sed -n 's/.*memory \([0-9]*\) bytes/\1/p'
}
printf '%-12s %16s %16s %8s\n' "inner steps" "MAML peak bytes" "iMAML peak bytes" ratio
for steps in 1 2 4 8 16; do
  sed "s/algorithm  = maml { steps = 2, inner_lr = 0.01, order = 2 }/algorithm  = maml { steps = $steps, inner_lr = 0.01, order = 2 }/" \
    "$spec" >"$work/maml.meta"
  sed "s/algorithm  = maml { steps = 2, inner_lr = 0.01, order = 2 }/algorithm  = imaml { steps = $steps, inner_lr = 0.01, lambda = 2.0, cg_steps = 5 }/" \
    "$spec" >"$work/imaml.meta"
  maml=$(peak "$work/maml.meta")
  imaml=$(peak "$work/imaml.meta")
  /usr/bin/python3 -c "print('%-12d %16d %16d %7.2fx' % ($steps, $maml, $imaml, $maml / $imaml))"
done
