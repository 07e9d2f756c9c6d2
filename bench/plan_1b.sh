#!/usr/bin/env bash
# The 1.14-billion-parameter transformer (examples/transformer_1b.meta,
# second- and first-order MAML) planned on 128 DGX H100 nodes
# (clusters/dgx-h100-x128.yaml, 1024 GPUs), beside three hand plans: pure
# task parallelism; Megatron-style tensor=8 inside each node with tasks
# across nodes; a pipeline of 16 stages across two nodes with tasks across
# the rest. Prints the planner's table (with the time it took) and one line
# per hand plan: predicted ms per meta-iteration (compute, communication,
# bubble), peak memory per device, bytes per rank by mesh axes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${METAC_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" metac >/dev/null
metac=$build/bin/metac
spec=$root/examples/transformer_1b.meta
cluster=$root/clusters/dgx-h100-x128.yaml

start=$(date +%s.%N)
"$metac" plan "$spec" --cluster="$cluster"
end=$(date +%s.%N)
/usr/bin/python3 -c "print(f'metac plan took {$end - $start:.2f} s in all (both trainings)')"

echo
echo "hand plans:"
for hand in "task=1024" "task=128,tensor=8" "task=64,pipeline=16 --micro-batches=16 --schedule=1f1b"; do
  # shellcheck disable=SC2086
  "$metac" plan "$spec" --cluster="$cluster" --mesh=$hand --format=json |
    /usr/bin/python3 "$root/bench/plan_1b_row.py"
done
