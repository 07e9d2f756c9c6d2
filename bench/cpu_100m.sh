#!/usr/bin/env bash
# The ~100M-parameter GPT (examples/transformer_100m.meta) meta-trained on
# this CPU machine with second-order MAML and with FOMAML, in f32 and bf16:
# a few meta-iterations each, the time per meta-iteration, the peak memory,
# the model FLOPs per meta-iteration (the cost model's per-op count) and
# the rate achieved, against the f32 peak that `metac calibrate` measures
# on this machine in the same run (the best GEMM rate of one rank using
# every core): the CPU counterpart of issue 17's MFU figure.
#   bench/cpu_100m.sh            (ITERS=3, ORDERS="2 1", PRECISIONS="f32 bf16")
set -euo pipefail
source "$(dirname "$0")/metac-binary.sh"
out=${OUT:-$root/bench/out/cpu_100m}
iters=${ITERS:-3}
orders=${ORDERS:-"2 1"}
precisions=${PRECISIONS:-"f32 bf16"}
mkdir -p "$out"

"$metac" calibrate --np=1 --quick --quiet -o "$out/cpu-1.yaml" >/dev/null
peak=$(/usr/bin/python3 -c "
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r'peak_flops:\s*\n(?:\s+\w+:.*\n)*?\s+f32:\s*([0-9.eE+-]+)', text)
print(m.group(1))" "$out/cpu-1.yaml")
echo "calibrated f32 peak of this machine (one rank, every core): $(/usr/bin/python3 -c "print(f'{$peak / 1e9:.1f}')") GFLOP/s"

for order in $orders; do
  for precision in $precisions; do
    sed "s/order = 2/order = $order/" "$root/examples/transformer_100m.meta" >"$out/spec.meta"
    "$metac" run "$out/spec.meta" --precision="$precision" --iterations="$iters" \
      --quiet --metrics="$out/metrics-$order-$precision.jsonl" >"$out/run-$order-$precision.txt"
    /usr/bin/python3 - "$out/metrics-$order-$precision.jsonl" "$peak" "$order" "$precision" <<'PY'
import json, sys
path, peak, order, precision = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
lines = [json.loads(l) for l in open(path)]
its = [l for l in lines if "iteration" in l and "meta_loss" in l]
timed = its[1:] or its  # the first warms caches
seconds = sum(l["seconds"] for l in timed) / len(timed)
flops = its[-1]["flops"]
peak_bytes = [l for l in lines if "peak_train_device_bytes" in l and "iteration" not in l][0]["peak_train_device_bytes"]
rate = flops / seconds
name = "second-order MAML" if order == "2" else "FOMAML"
print(f"{name:17s} {precision:4s}: {seconds:7.2f} s per meta-iteration, "
      f"{flops / 1e9:7.1f} GFLOP per meta-iteration, {rate / 1e9:6.1f} GFLOP/s "
      f"= {100 * rate / peak:4.1f}% of the calibrated f32 peak, "
      f"peak memory {peak_bytes / 2**30:.2f} GiB")
PY
  done
done
