#!/usr/bin/env bash
# Trains the Fashion-MNIST example of ALGORITHM (maml or protonet) with
# metac and with the PyTorch reference once per SEED (the seed sets the
# initial parameters and the task stream on each side), evaluates every run
# on 600 held-out 3-way tasks, and compares the two sides over the seeds:
# one run's confidence interval covers only the evaluation tasks, not the
# spread between training runs, so a match is judged on the seed means
# (bench/compare_accuracy.py --seeds).
#   bench/fashion_mnist_seeds.sh [--same-start] ALGORITHM OUTPUT_DIR SEED...
# With --same-start the reference is trained identically to metac, not just
# alike: from metac's initial parameters for the seed (`metac run
# --iterations 0 --save-params`) on metac's own task stream
# (fashion_mnist_torch.py --task-stream metac), evaluated on metac's
# evaluation tasks; what remains different is the arithmetic.
# TORCH_THREADS sets the reference's thread count (default: every core);
# PyTorch 1.13 trains the MAML ConvNet worse on two threads than on one
# (docs/results.md).
# Runs one job at a time (each uses every core). On two cores a ProtoNets
# seed takes about 12 min (metac) + 5 min (PyTorch), a MAML seed about
# 18 + 11 min. Finished runs are kept: rerunning skips seeds whose results
# exist.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${METAC_BUILD_DIR:-$root/build}
usage="usage: bench/fashion_mnist_seeds.sh [--same-start] maml|protonet OUTPUT_DIR SEED..."
same_start=
if [ "${1:-}" = --same-start ]; then
  same_start=1
  shift
fi
algorithm=${1:?$usage}
out=${2:?$usage}
shift 2
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
case $algorithm in
maml | protonet) ;;
*) echo "unknown algorithm '$algorithm' (maml or protonet)" >&2; exit 2 ;;
esac
metac=${METAC:-}
if [ -z "$metac" ]; then
  "$root/scripts/build.sh" metac >/dev/null
  metac=$build/bin/metac
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$out"

for seed in "$@"; do
  if [ ! -s "metac_${algorithm}_$seed.jsonl" ] ||
    ! grep -q '"evaluation"' "metac_${algorithm}_$seed.jsonl"; then
    "$metac" run "$root/examples/${algorithm}_fashion_mnist.meta" \
      --quiet --seed "$seed" \
      --metrics "metac_${algorithm}_$seed.jsonl.part" \
      --save-params "metac_${algorithm}_$seed.safetensors" \
      >"metac_${algorithm}_$seed.txt"
    mv "metac_${algorithm}_$seed.jsonl.part" "metac_${algorithm}_$seed.jsonl"
  fi
  reference=torch${same_start:+_same}_${algorithm}_$seed
  if [ ! -s "$reference.json" ]; then
    start=()
    if [ -n "$same_start" ]; then
      "$metac" run "$root/examples/${algorithm}_fashion_mnist.meta" --quiet \
        --seed "$seed" --iterations 0 \
        --save-params "metac_${algorithm}_${seed}_start.safetensors" >/dev/null
      start=(--task-stream metac
        --init-params "metac_${algorithm}_${seed}_start.safetensors")
    fi
    /usr/bin/python3 "$root/bench/fashion_mnist_torch.py" --algorithm "$algorithm" \
      --seed "$seed" --threads "${TORCH_THREADS:-$(nproc)}" "${start[@]}" \
      --save-params "$reference.safetensors" \
      --json "$reference.json.part" >"$reference.txt"
    mv "$reference.json.part" "$reference.json"
  fi
  tail -n 1 "metac_${algorithm}_$seed.txt" "$reference.txt"
done
metac_runs=() torch_runs=()
for seed in "$@"; do
  metac_runs+=("metac_${algorithm}_$seed.jsonl")
  torch_runs+=("torch${same_start:+_same}_${algorithm}_$seed.json")
done
/usr/bin/python3 "$root/bench/compare_accuracy.py" --seeds \
  --metac "${metac_runs[@]}" --torch "${torch_runs[@]}"
