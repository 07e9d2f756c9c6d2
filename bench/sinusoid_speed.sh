#!/usr/bin/env bash
# Times the sinusoid MAML meta-iteration of metac against PyTorch on this
# machine in one run, and the time metac takes to compile the spec.
#   bench/sinusoid_speed.sh [ITERATIONS [cpu|cuda]]   (default 2000 cpu)
# Prints ms per meta-iteration for metac and for PyTorch (the usual per-task
# loop and a bmm-batched variant) and the ratios. On cpu, PyTorch is
# Debian's python3-torch; on cuda, both run on the GPU, metac with and
# without its CUDA graph, PyTorch from $TORCH_PYTHON (default python3: a
# CUDA build of torch). Run on an otherwise idle machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${METAC_BUILD_DIR:-$root/build}
iterations=${1:-2000}
backend=${2:-cpu}
python=/usr/bin/python3
[ "$backend" = cuda ] && python=${TORCH_PYTHON:-python3}
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

ms_of() { sed -n 's/.*, \([0-9.]*\) ms\/iteration.*/\1/p'; }
metac_ms=$("$build/bin/metac" run "$spec" --iterations="$iterations" --quiet \
  --backend="$backend" | ms_of)
echo "metac: $metac_ms ms/iteration ($iterations meta-iterations, $backend backend)"
if [ "$backend" = cuda ]; then
  eager_ms=$("$build/bin/metac" run "$spec" --iterations="$iterations" \
    --quiet --backend=cuda --no-cuda-graph | ms_of)
  echo "metac, op by op (--no-cuda-graph): $eager_ms ms/iteration"
  /usr/bin/python3 -c "print(f'CUDA graph speedup: {$eager_ms / $metac_ms:.2f}x')"
fi

loop_ms=$("$python" "$root/bench/maml_sinusoid_torch.py" --device="$backend" \
  --iterations="$iterations" --eval-tasks=25 2>/dev/null | ms_of)
echo "pytorch, per-task loop: $loop_ms ms/iteration"
batched_ms=$("$python" "$root/bench/maml_sinusoid_torch.py" --batched \
  --device="$backend" --iterations="$iterations" --eval-tasks=25 2>/dev/null |
  ms_of)
echo "pytorch, batched (bmm): $batched_ms ms/iteration"

/usr/bin/python3 -c "print(f'metac speedup over pytorch per-task loop: {$loop_ms / $metac_ms:.1f}x')"
/usr/bin/python3 -c "print(f'metac speedup over pytorch batched: {$batched_ms / $metac_ms:.1f}x')"
