#!/usr/bin/env bash
# Times the sinusoid MAML meta-iteration of metac against PyTorch on this
# machine in one run, and the time metac takes to compile the spec.
#   bench/sinusoid_speed.sh [ITERATIONS]     (default 2000)
# Prints ms per meta-iteration for metac and for PyTorch (Debian's
# python3-torch, CPU: the usual per-task loop and a bmm-batched variant) and
# the ratios. Run on an otherwise idle machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${METAC_BUILD_DIR:-$root/build}
iterations=${1:-2000}
"$root/scripts/build.sh" metac >/dev/null
spec=$root/examples/sinusoid.meta

# Compile time: the whole pipeline to LLVM IR, best of 5.
best=""
for _ in 1 2 3 4 5; do
  start=$(date +%s.%N)
  "$build/bin/metac" "$spec" --compile-to=llvm -o /dev/null
  end=$(date +%s.%N)
  t=$(/usr/bin/python3 -c "print($end - $start)")
  best=$(/usr/bin/python3 -c "print(min($t, ${best:-$t}))")
done
printf 'compile sinusoid.meta to LLVM IR: %.3f s (best of 5)\n' "$best"

metac_ms=$("$build/bin/metac" run "$spec" --iterations="$iterations" --quiet |
  sed -n 's/.*, \([0-9.]*\) ms\/iteration.*/\1/p')
echo "metac: $metac_ms ms/iteration ($iterations meta-iterations, CPU backend)"

loop_ms=$(/usr/bin/python3 "$root/bench/maml_sinusoid_torch.py" \
  --iterations="$iterations" --eval-tasks=25 2>/dev/null |
  sed -n 's/.*, \([0-9.]*\) ms\/iteration.*/\1/p')
echo "pytorch, per-task loop: $loop_ms ms/iteration"
batched_ms=$(/usr/bin/python3 "$root/bench/maml_sinusoid_torch.py" --batched \
  --iterations="$iterations" --eval-tasks=25 2>/dev/null |
  sed -n 's/.*, \([0-9.]*\) ms\/iteration.*/\1/p')
echo "pytorch, batched (bmm): $batched_ms ms/iteration"

/usr/bin/python3 -c "print(f'metac speedup over pytorch per-task loop: {$loop_ms / $metac_ms:.1f}x')"
/usr/bin/python3 -c "print(f'metac speedup over pytorch batched: {$batched_ms / $metac_ms:.1f}x')"
