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
    /usr/bin/python3 -c '
import json, sys
names = ["maml2 (second order)", "maml1 (first order)"]
for name, p in zip(names, json.load(sys.stdin)):
    axes = ", ".join(f"{k} {v / 2**30:.2f} GiB" for k, v in sorted(p["bytes_per_axes"].items()))
    fits = "fits" if p["fits"] else "does NOT fit"
    mesh = p["mesh"] + (f" ({p[\"micro_batches\"]} mb, {p[\"schedule\"]})" if p["schedule"] != "none" else "")
    print(f"  {name:22} {mesh:40} {p[\"predicted_ms\"]:9.1f} ms (compute {p[\"compute_ms\"]:.1f}, comm {p[\"comm_ms\"]:.1f}, bubble {p[\"bubble_ms\"]:.1f}), {p[\"peak_bytes\"] / 2**30:6.1f} GiB: {fits}; {axes}")
'
done
