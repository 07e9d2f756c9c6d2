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
# Written so far: the sinusoid (examples/sinusoid.meta against
# bench/peers/sinusoid_jax.py and sinusoid_torch.py). The Fashion-MNIST
# ConvNet MAML and ProtoNets peers are still to be written; until then the
# last line says they are pending:
#   peers: sinusoid A× JAX, convnet pending, protonet pending
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
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip
  "$venv/bin/pip" install --quiet jax optax torch
fi
"$venv/bin/python" -c "import jax, optax, torch; print(f'peers: jax {jax.__version__}, optax {optax.__version__}, torch {torch.__version__}')"

ms_of() { sed -n 's/.*[:,] \([0-9.]*\) ms\/iteration.*/\1/p' | head -1; }

echo "sinusoid MAML (second order, meta-batch 25, 10 + 10 samples), $iterations meta-iterations:"
metac_ms=$("$metac" run "$root/examples/sinusoid.meta" --iterations="$iterations" \
  --quiet | ms_of)
echo "  metac: $metac_ms ms/iteration"
jax_lines=$("$venv/bin/python" "$root/bench/peers/sinusoid_jax.py" \
  --iterations="$iterations")
sed 's/^/  /' <<<"$jax_lines"
torch_lines=$("$venv/bin/python" "$root/bench/peers/sinusoid_torch.py" \
  --iterations="$iterations" 2>/dev/null)
sed 's/^/  /' <<<"$torch_lines"
# JAX's best way of writing it is the one compared with.
jax_ms=$(sed -n 's/^jax [a-z]*: \([0-9.]*\) ms.*/\1/p' <<<"$jax_lines" | sort -g | head -1)
sinusoid=$(/usr/bin/python3 -c "print(f'{$jax_ms / $metac_ms:.2f}')")
echo "peers: sinusoid ${sinusoid}× JAX, convnet pending, protonet pending"
