#!/usr/bin/env bash
# --offload=optimizer, params and all (both) against resident parameters and
# optimizer state, in the same run:
# time per meta-iteration, peak device memory during training, and the
# bytes held in host buffers, for the 1-256-256-256-1 MLP
# (bench/specs/wide_mlp.meta) and the 4-block GPT of width 256
# (examples/transformer_sequence.meta). Each offloaded arm runs twice: with
# its copies prefetched (the default: on CUDA on a second stream) and made
# in turn (METART_OFFLOAD_PREFETCH=off). On the CPU backend host and device
# memory are the same RAM: this measures the mechanism and its accounting;
# BACKEND=cuda measures a GPU's.
#   [BACKEND=cpu|cuda] bench/offload.sh [ITERATIONS]      (default 10)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${METAC_BUILD_DIR:-$root/build}
iterations=${1:-10}
backend=${BACKEND:-cpu}
"$root/scripts/build.sh" metac >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME SPEC [metac options]: prints ms/iteration, peak and host bytes.
run() {
  local name=$1 spec=$2
  shift 2
  "$build/bin/metac" run "$spec" --backend="$backend" --iterations="$iterations" --quiet \
    --metrics="$work/$name.jsonl" --save-params="$work/$name.safetensors" \
    "$@" >"$work/$name.out"
  /usr/bin/python3 - "$work/$name.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
steps = [l["seconds"] for l in lines if "iteration" in l][1:]
peak = next(l for l in lines if "peak_train_device_bytes" in l)
print(1e3 * sum(steps) / len(steps), peak["peak_train_device_bytes"],
      peak.get("offloaded_host_bytes", 0))
PY
}

printf '%-24s %10s %8s %14s %8s %12s %s\n' model ms/iter time "peak bytes" memory \
  "host bytes" parameters
for model in "wide_mlp $root/bench/specs/wide_mlp.meta" \
  "transformer_sequence $root/examples/transformer_sequence.meta"; do
  set -- $model
  read -r base_ms base_peak _ < <(run "$1" "$2")
  /usr/bin/python3 -c "print('%-24s %10.2f %8s %14d %8s %12s' % ('$1', $base_ms, '1.00x', $base_peak, '1.00x', '-'))"
  for what in optimizer params all; do
    for prefetch in on off; do
      read -r ms peak host < <(METART_OFFLOAD_PREFETCH=$prefetch run "$1-$what-$prefetch" "$2" --offload=$what)
      same=different
      cmp -s "$work/$1.safetensors" "$work/$1-$what-$prefetch.safetensors" && same="same bits"
      label="  --offload=$what"
      [ "$prefetch" = off ] && label="    in turn"
      /usr/bin/python3 -c "print('%-24s %10.2f %7.2fx %14d %7.3fx %12d %s' % ('$label', $ms, $ms / $base_ms, $peak, $peak / $base_peak, $host, '$same'))"
    done
  done
done
