#!/usr/bin/env bash
# Times the four-block ConvNet on Fashion-MNIST tasks, metac against the
# PyTorch reference (bench/fashion_mnist_torch.py), in one run on this
# machine: MAML (order 2, five inner steps, 32 filters) and ProtoNets (64
# filters), 5-way 1-shot 15 query, meta-batch 4, as the examples say.
#   bench/convnet_speed.sh [ITERATIONS [cpu|cuda]]   (default 20 cpu)
# Per algorithm: ms per meta-iteration (tasks drawn included, warm-up
# excluded) and peak memory, for metac the runtime arena's peak (device
# memory) and the process's peak resident memory (host), for PyTorch the
# process's peak resident memory; then the ratios. metac runs the compiled
# executable (no compiler in the process); both use every core of the
# machine (OpenBLAS threads, torch.set_num_threads). Run on an otherwise
# idle machine. With cuda, both run on the GPU (PyTorch from $TORCH_PYTHON,
# default python3: a CUDA build of torch).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${METAC_BUILD_DIR:-$root/build}
iterations=${1:-20}
backend=${2:-cpu}
python=/usr/bin/python3
[ "$backend" = cuda ] && python=${TORCH_PYTHON:-python3}
threads=$(nproc)
"$root/scripts/build.sh" metac >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# `field TEXT PATTERN`: the number that PATTERN's \1 captures in TEXT.
field() { sed -n "s/$2/\1/p" <<<"$1" | head -n 1; }

echo "ConvNet on Fashion-MNIST, $iterations timed meta-iterations, $threads threads"
for algorithm in maml protonet; do
  # The example without its evaluation and checkpoints: training only.
  grep -v -e 'evaluate {' -e 'checkpoint {' \
    "$root/examples/${algorithm}_fashion_mnist.meta" >"$work/$algorithm.meta"
  "$build/bin/metac" "$work/$algorithm.meta" -o "$work/$algorithm"
  summary=$("$work/$algorithm" --iterations=$((iterations + 1)) --quiet \
    --backend="$backend")
  metac_ms=$(field "$summary" '.*, \([0-9.]*\) ms\/iteration.*')
  device_mb=$(field "$summary" '.*peak device memory \([0-9]*\) bytes.*')
  host_mb=$(field "$summary" '.*peak host memory \([0-9]*\) bytes.*')
  device_mb=$(/usr/bin/python3 -c "print(f'{$device_mb / 2**20:.1f}')")
  host_mb=$(/usr/bin/python3 -c "print(f'{$host_mb / 2**20:.1f}')")

  torch_line=$("$python" "$root/bench/fashion_mnist_torch.py" \
    --algorithm "$algorithm" --threads "$threads" --device "$backend" \
    --time-only "$iterations")
  torch_ms=$(field "$torch_line" '.*ms\/iteration \([0-9.]*\).*')
  torch_mb=$(field "$torch_line" '.*peak_rss_mb \([0-9.]*\).*')

  echo "$algorithm:"
  echo "  metac:   $metac_ms ms/iteration, peak device memory $device_mb MiB, peak host memory $host_mb MiB"
  echo "  pytorch: $torch_ms ms/iteration, peak host memory $torch_mb MiB"
  /usr/bin/python3 -c "print(f'  time metac/pytorch {$metac_ms / $torch_ms:.2f}x, peak host memory metac/pytorch {$host_mb / $torch_mb:.2f}x')"
done
