#!/usr/bin/env bash
# metac against the frameworks its users would otherwise write meta-learning
# in (issue 18), in one run on this machine: ms per meta-iteration of the
# examples' settings for metac, JAX (jit + vmap over tasks, and jit with a
# loop over tasks) and a current PyTorch (a per-task loop as learn2learn and
# higher users write it, torch.func vmap, torch.compile where it takes the
# double backward).
#   bench/peers.sh [cpu]
# The peers come from PyPI into a virtual environment this script makes
# (bench/out/peers/venv, or $PEERS_VENV): jax, optax, torch. Run on an
# otherwise idle machine: the figures are times.
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
source "$(dirname "$0")/metac-binary.sh"
backend=${1:-cpu}
if [ "$backend" != cpu ]; then
  echo "bench/peers.sh: only the cpu peers are written so far" >&2
  exit 2
fi
iterations=${SINUSOID_ITERATIONS:-2000}
venv=${PEERS_VENV:-$root/bench/out/peers/venv}
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
"$venv/bin/python" -c "import jax, optax, torch; print(f'peers: jax {jax.__version__}, optax {optax.__version__}, torch {torch.__version__}')"

ms_of() { sed -n 's/.*[:,] \([0-9.]*\) ms\/iteration.*/\1/p' | head -1; }

echo "sinusoid MAML (second order, meta-batch 25, 10 + 10 samples), $iterations meta-iterations:"
repeats=${REPEATS:-3}
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
metac_runs=() jax_runs=()
for ((r = 0; r < repeats; ++r)); do
  metac_runs+=("$("$metac" run "$root/examples/sinusoid.meta" \
    --iterations="$iterations" --quiet | ms_of)")
  jax_runs+=("$("$venv/bin/python" "$root/bench/peers/sinusoid_jax.py" \
    --iterations="$iterations")")
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
torch_lines=$("$venv/bin/python" "$root/bench/peers/sinusoid_torch.py" \
  --iterations="$iterations" 2>/dev/null)
sed 's/^/  /' <<<"$torch_lines"
# JAX's best way of writing it is the one compared with.
jax_ms=$(sed -n 's/^jax [a-z]*: \([0-9.]*\) ms.*/\1/p' <<<"$jax_lines" | sort -g | head -1)
sinusoid=$(/usr/bin/python3 -c "print(f'{$jax_ms / $metac_ms:.2f}')")

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
  grep -v -e 'evaluate {' -e 'checkpoint {' \
    "$root/examples/${algorithm}_fashion_mnist.meta" >"$work/$algorithm.meta"
  "$metac" "$work/$algorithm.meta" -o "$work/$algorithm"
  metac_ms=$("$work/$algorithm" --iterations=$((convnet_iterations + 1)) \
    --quiet | ms_of)
  echo "  metac: $metac_ms ms/iteration"
  peers=$(
    loop_ms=$("$venv/bin/python" "$root/bench/fashion_mnist_torch.py" \
      --algorithm "$algorithm" --threads "$(nproc)" \
      --time-only "$convnet_iterations" 2>/dev/null |
      sed -n 's/.*ms\/iteration \([0-9.]*\).*/\1/p')
    echo "torch $algorithm loop: $loop_ms ms/iteration"
    "$venv/bin/python" "$root/bench/peers/fashion_mnist_torchfunc.py" \
      --algorithms "$algorithm" --iterations "$convnet_iterations" \
      --threads "$(nproc)" 2>/dev/null
    "$venv/bin/python" "$root/bench/peers/fashion_mnist_jax.py" \
      --algorithms "$algorithm" --iterations $(((convnet_iterations + 1) / 2))
  )
  sed 's/^/  /' <<<"$peers"
  best=$(sed -n 's/^[a-z]* [a-z]* [a-z]*: \([0-9.]*\) ms.*/\1/p' <<<"$peers" |
    sort -g | head -1)
  ratio[$algorithm]=$(/usr/bin/python3 -c "print(f'{$best / $metac_ms:.2f}')")
done
echo "peers: sinusoid ${sinusoid}× JAX, convnet ${ratio[maml]}× best peer, protonet ${ratio[protonet]}× best peer"
