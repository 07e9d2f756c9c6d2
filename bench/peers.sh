#!/usr/bin/env bash
# metac against the frameworks its users would otherwise write meta-learning
# in (issue 18), in one run on this machine: ms per meta-iteration of the
# examples' settings for metac, JAX (jit + vmap over tasks, and jit with a
# loop over tasks) and a current PyTorch (a per-task loop as learn2learn and
# higher users write it, torch.func vmap, torch.compile where it takes the
# double backward).
#   bench/peers.sh [cpu|cuda]
# cpu (the default): everything on the CPU (metac --backend=cpu, JAX's CPU
# platform, torch on the CPU with nproc threads). cuda: on the first GPU
# (metac --backend=cuda, jax.devices('gpu'), torch on cuda; f32 without
# TF32 on every side, as metac computes).
# The peers come from PyPI into a virtual environment this script makes
# (bench/out/peers/venv, or $PEERS_VENV): jax, optax, torch; or
# PEERS_PYTHON names a python that already has them (for cuda, with their
# CUDA builds), and no venv is made. Run on an otherwise idle machine: the
# figures are times.
#
# metac: METAC (a metac binary) or else the build's, built first
# (bench/metac-binary.sh). Prebuilt executables can stand in for the
# compiler, on a machine without it: METAC_SINUSOID_EXE, METAC_MAML_EXE,
# METAC_PROTONET_EXE (compiled elsewhere with `metac SPEC -o PROG` from the
# specs that `bench/peers.sh specs DIR` writes: the examples, the ConvNets
# without evaluation and checkpoints); with all three set, no metac is
# needed. Fashion-MNIST: FASHION_MNIST_DIR (default
# /usr/share/datasets/fashion-mnist) goes to the peers as --data-dir and
# into the specs metac compiles as the tasks' `path` (an executable reads
# the directory compiled into it: there is no environment variable).
#
# Settings: the examples' (sinusoid.meta; maml_fashion_mnist.meta and
# protonet_fashion_mnist.meta without their evaluation and checkpoints).
# Iterations: SINUSOID_ITERATIONS (2000; the per-task loop 200),
# CONVNET_ITERATIONS (20; JAX 10). The sinusoid's runs take under a second,
# where a burst of other load on a shared machine doubles a figure: metac
# and JAX each run it REPEATS times (3), alternating, and the medians
# count. The last line:
#   peers: sinusoid A× JAX, convnet B× best peer, protonet C× best peer
# (A: the best JAX variant's time over metac's; B, C: the best peer's).
set -euo pipefail
backend=${1:-cpu}
root=$(cd "$(dirname "$0")/.." && pwd)
data_dir=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}

# The ConvNet example ALGORITHM as timed: without evaluation and
# checkpoints; its tasks read FASHION_MNIST_DIR where that is set.
convnet_spec() {
  local path=
  if [ -n "${FASHION_MNIST_DIR:-}" ]; then
    path="path = \"$FASHION_MNIST_DIR\", "
  fi
  grep -v -e 'evaluate {' -e 'checkpoint {' \
    "$root/examples/${1}_fashion_mnist.meta" |
    sed "s|= fashion_mnist { |= fashion_mnist { $path|"
}

case $backend in
cpu | cuda) ;;
specs)
  # The specs to compile the executables from, for METAC_*_EXE.
  out=${2:?usage: bench/peers.sh specs DIR}
  mkdir -p "$out"
  cp "$root/examples/sinusoid.meta" "$out/sinusoid.meta"
  for algorithm in maml protonet; do
    convnet_spec "$algorithm" >"$out/$algorithm.meta"
  done
  echo "wrote $out/sinusoid.meta, $out/maml.meta, $out/protonet.meta; compile each with: metac SPEC -o PROG"
  exit 0
  ;;
*)
  echo "usage: bench/peers.sh [cpu|cuda] (or: bench/peers.sh specs DIR)" >&2
  exit 2
  ;;
esac
if [ -n "${METAC_SINUSOID_EXE:-}" ] && [ -n "${METAC_MAML_EXE:-}" ] &&
  [ -n "${METAC_PROTONET_EXE:-}" ]; then
  metac=${METAC:-}  # not needed: the executables stand in for it
else
  source "$root/bench/metac-binary.sh"
fi
iterations=${SINUSOID_ITERATIONS:-2000}
if [ -n "${PEERS_PYTHON:-}" ]; then
  python=$PEERS_PYTHON
  if ! "$python" -c "import jax, optax, torch" 2>/dev/null; then
    echo "bench/peers.sh: PEERS_PYTHON ($python) cannot import jax, optax and torch" >&2
    exit 1
  fi
else
  venv=${PEERS_VENV:-$root/bench/out/peers/venv}
  python=$venv/bin/python
  if [ ! -x "$venv/bin/python" ] ||
    ! "$venv/bin/python" -c "import jax, optax, torch" 2>/dev/null; then
    echo "making $venv (jax, optax, torch from PyPI)"
    if ! /usr/bin/python3 -m venv "$venv" 2>/dev/null; then
      # Debian keeps ensurepip in python3-venv.
      if [ "$(id -u)" != 0 ]; then
        echo "bench/peers.sh: needs Debian's python3-venv: run as root or install it" >&2
        exit 1
      fi
      apt-get install -y -qq python3-venv >/dev/null
      /usr/bin/python3 -m venv "$venv"
    fi
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet jax optax torch
  fi
fi
"$python" -c "import jax, optax, torch; print(f'peers: jax {jax.__version__}, optax {optax.__version__}, torch {torch.__version__}')"
if [ "$backend" = cuda ]; then
  # Both frameworks must see the GPU: no silent fallback to the CPU.
  "$python" -c "
import jax, torch
gpu = jax.devices('gpu')[0]
assert torch.cuda.is_available(), 'torch sees no GPU'
print(f'peers on cuda: jax {gpu.device_kind}, torch {torch.cuda.get_device_name(0)}')"
fi
ratio_of() { "$python" -c "print(f'{$1 / $2:.2f}')"; }

ms_of() { sed -n 's/.*[:,] \([0-9.]*\) ms\/iteration.*/\1/p' | head -1; }

echo "sinusoid MAML (second order, meta-batch 25, 10 + 10 samples), $iterations meta-iterations:"
repeats=${REPEATS:-3}
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
metac_runs=() jax_runs=()
if [ -n "${METAC_SINUSOID_EXE:-}" ]; then
  metac_sinusoid=("$METAC_SINUSOID_EXE")
else
  metac_sinusoid=("$metac" run "$root/examples/sinusoid.meta")
fi
for ((r = 0; r < repeats; ++r)); do
  metac_runs+=("$("${metac_sinusoid[@]}" --backend="$backend" \
    --iterations="$iterations" --quiet | ms_of)")
  jax_runs+=("$("$python" "$root/bench/peers/sinusoid_jax.py" \
    --iterations="$iterations" --device "$backend")")
done
metac_ms=$(printf '%s\n' "${metac_runs[@]}" | median)
echo "  metac: $metac_ms ms/iteration (median of: ${metac_runs[*]})"
# Per JAX variant, the median of its runs.
jax_lines=$(printf '%s\n' "${jax_runs[@]}" |
  awk '/^jax / {v[$2] = v[$2] " " $3} END {for (k in v) print k v[k]}' |
  while read -r variant times; do
    m=$(tr ' ' '\n' <<<"$times" | median)
    echo "jax $variant $m ms/iteration (median of $times; $iterations meta-iterations)"
  done | sort)
sed 's/^/  /' <<<"$jax_lines"
torch_lines=$("$python" "$root/bench/peers/sinusoid_torch.py" \
  --iterations="$iterations" --device "$backend" 2>/dev/null)
sed 's/^/  /' <<<"$torch_lines"
# JAX's best way of writing it is the one compared with.
jax_ms=$(sed -n 's/^jax [a-z]*: \([0-9.]*\) ms.*/\1/p' <<<"$jax_lines" | sort -g | head -1)
sinusoid=$(ratio_of "$jax_ms" "$metac_ms")

# The ConvNet examples: metac's executable (the example without evaluation
# and checkpoints), PyTorch's per-task loop (the reference,
# bench/fashion_mnist_torch.py, under the venv's torch), torch.func and
# torch.compile, JAX.
convnet_iterations=${CONVNET_ITERATIONS:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A ratio
for algorithm in maml protonet; do
  echo "${algorithm} on Fashion-MNIST (5-way 1-shot, meta-batch 4), $convnet_iterations meta-iterations:"
  exe_variable=METAC_${algorithm^^}_EXE
  exe=${!exe_variable:-}
  if [ -z "$exe" ]; then
    convnet_spec "$algorithm" >"$work/$algorithm.meta"
    "$metac" "$work/$algorithm.meta" -o "$work/$algorithm"
    exe=$work/$algorithm
  fi
  metac_ms=$("$exe" --backend="$backend" \
    --iterations=$((convnet_iterations + 1)) --quiet | ms_of)
  echo "  metac: $metac_ms ms/iteration"
  peers=$(
    loop_ms=$("$python" "$root/bench/fashion_mnist_torch.py" \
      --algorithm "$algorithm" --threads "$(nproc)" --device "$backend" \
      --data-dir "$data_dir" --time-only "$convnet_iterations" 2>/dev/null |
      sed -n 's/.*ms\/iteration \([0-9.]*\).*/\1/p')
    echo "torch $algorithm loop: $loop_ms ms/iteration"
    "$python" "$root/bench/peers/fashion_mnist_torchfunc.py" \
      --algorithms "$algorithm" --iterations "$convnet_iterations" \
      --threads "$(nproc)" --device "$backend" --data-dir "$data_dir" \
      2>/dev/null
    "$python" "$root/bench/peers/fashion_mnist_jax.py" \
      --algorithms "$algorithm" --iterations $(((convnet_iterations + 1) / 2)) \
      --device "$backend" --data-dir "$data_dir"
  )
  sed 's/^/  /' <<<"$peers"
  best=$(sed -n 's/^[a-z]* [a-z]* [a-z]*: \([0-9.]*\) ms.*/\1/p' <<<"$peers" |
    sort -g | head -1)
  ratio[$algorithm]=$(ratio_of "$best" "$metac_ms")
done
echo "peers: sinusoid ${sinusoid}× JAX, convnet ${ratio[maml]}× best peer, protonet ${ratio[protonet]}× best peer"
