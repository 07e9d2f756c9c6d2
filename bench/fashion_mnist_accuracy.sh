#!/usr/bin/env bash
# Meta-trains the Fashion-MNIST example of ALGORITHM (maml or protonet) with
# metac and the PyTorch reference (bench/fashion_mnist_torch.py, the same
# model, tasks, initialisation scheme and optimiser), evaluates both on 600
# 3-way 1-shot tasks of the held-out classes 7-9, and says whether metac's
# accuracy lies within the reference's 95% confidence interval.
#   bench/fashion_mnist_accuracy.sh ALGORITHM [OUTPUT_DIR]
# MAML takes about 25 min (metac) + 15 min (PyTorch) on two cores,
# ProtoNets about 20 + 5. Figures and logs stay in OUTPUT_DIR (default
# bench/results/fashion_mnist). One run per side compares two training
# runs, and the interval covers only the evaluation tasks:
# bench/fashion_mnist_seeds.sh repeats both over several seeds and compares
# the procedures.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${METAC_BUILD_DIR:-$root/build}
algorithm=${1:?usage: bench/fashion_mnist_accuracy.sh maml|protonet [OUTPUT_DIR]}
out=${2:-$root/bench/results/fashion_mnist}
case $algorithm in
maml | protonet) ;;
*) echo "unknown algorithm '$algorithm' (maml or protonet)" >&2; exit 2 ;;
esac
"$root/scripts/build.sh" metac >/dev/null
mkdir -p "$out"
cd "$out"

"$build/bin/metac" run "$root/examples/${algorithm}_fashion_mnist.meta" \
  --quiet --metrics "metac_$algorithm.jsonl" | tee "metac_$algorithm.txt"
/usr/bin/python3 "$root/bench/fashion_mnist_torch.py" --algorithm "$algorithm" \
  --threads "$(nproc)" --json "torch_$algorithm.json" | tee "torch_$algorithm.txt"
/usr/bin/python3 "$root/bench/compare_accuracy.py" \
  "metac_$algorithm.jsonl" "torch_$algorithm.json"
