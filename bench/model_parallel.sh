#!/usr/bin/env bash
# Tensor and pipeline parallelism on this machine (and a mixture-of-experts
# transformer split by experts), against one process in
# the same run: time per meta-iteration, peak memory of rank 0, and for
# pipelines the fraction of a stage's time spent waiting on the other
# stages next to the ideal bubble (p-1)/(m+p-1).
#   bench/model_parallel.sh [ITERATIONS]      (default 40)
#   bench/model_parallel.sh --moe             (the mixture of experts only)
#   bench/model_parallel.sh --sequence        (the long sequences only)
#   bench/model_parallel.sh --ring            (ring attention only)
# Every process runs OpenBLAS on one thread, so N processes use N cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${METAC_BUILD_DIR:-$root/build}
only=all
case "${1:-}" in
--moe | --sequence | --ring)
  only=${1#--}
  shift
  ;;
esac
iterations=${1:-40}
"$root/scripts/build.sh" metac >/dev/null
spec=$root/bench/specs/wide_mlp.meta
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
export METART_RING_LAYOUT=${METART_RING_LAYOUT:-zigzag}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME PROCESSES [metac options]: prints ms/iteration and peak bytes.
run() {
  local name=$1 np=$2
  shift 2
  local launch=()
  if [ "$np" -gt 1 ]; then
    launch=(mpirun -np "$np" -x OPENBLAS_NUM_THREADS -x METART_RING_LAYOUT)
  fi
  "${launch[@]}" "$build/bin/metac" run "$spec" --iterations="$iterations" \
    --quiet --metrics="$work/$name.jsonl" "$@" >"$work/$name.out"
  sed -n 's/.*, \([0-9.]*\) ms\/iteration.*peak device memory \([0-9]*\) bytes.*/\1 \2/p' \
    "$work/$name.out"
}

# processes CONFIG: the product of a mesh's axis sizes.
processes() {
  local n=1 axis
  for axis in ${1//,/ }; do n=$((n * ${axis#*=})); done
  echo "$n"
}

# compare NAME BASE_MS BASE_BYTES CONFIG...: a row per mesh against one
# process's time and peak.
compare() {
  local name=$1 base_ms=$2 base_bytes=$3 config np ms bytes
  shift 3
  for config in "$@"; do
    np=$(processes "$config")
    read -r ms bytes < <(run "$name${config//[=,]/}" "$np" --mesh "$config")
    /usr/bin/python3 -c "print('%-28s %10.2f %7.2fx %14d %7.2fx' % ('$config', $ms, $base_ms / $ms, $bytes, $bytes / $base_bytes))"
  done
}

if [ "$only" = all ]; then
read -r base_ms base_bytes < <(run single 1)
printf '%-28s %10s %8s %14s %8s\n' configuration ms/iter speedup "peak bytes" memory
printf '%-28s %10.2f %8s %14d %8s\n' "1 process" "$base_ms" 1.00x "$base_bytes" 1.00x
compare "" "$base_ms" "$base_bytes" tensor=2 tensor=4 pipeline=2 pipeline=4

echo
echo "pipeline=2 bubble: idle share of the two stages, 1 - T1 / (2 Tp) (T1: one process),"
echo "and stage 0's share of time in pipeline receives, next to the ideal (p-1)/(m+p-1)"
printf '%-14s %9s %10s %10s %10s %8s\n' micro-batches ms/iter bubble stage0-wait ideal ratio
for m in 1 2 4 8 16; do
  read -r ms bytes < <(run "bubble$m" 2 --mesh pipeline=2 --micro-batches "$m")
  /usr/bin/python3 - "$work/bubble$m.jsonl" "$m" "$ms" "$base_ms" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])][5:]
total = sum(l["seconds"] for l in lines)
waiting = sum(l["comm"].get("pipeline", {}).get("seconds", 0) for l in lines)
m, ms, base = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
bubble = 1 - base / (2 * ms)
ideal = 1 / (m + 1)
print("%-14d %9.2f %10.3f %10.3f %10.3f %7.2fx" % (m, ms, bubble, waiting / total, ideal, bubble / ideal))
PY
done

echo
echo "pipeline=2 on the balanced bench/specs/deep_mlp.meta: idle share 1 - T1 / (2 Tp)"
printf '%-14s %9s %10s %10s %8s\n' micro-batches ms/iter bubble ideal ratio
spec=$root/bench/specs/deep_mlp.meta
read -r deep_ms deep_bytes < <(run deep1 1)
echo "(one process: $deep_ms ms/iteration)"
for m in 1 2 4 8 16; do
  read -r ms bytes < <(run "deep$m" 2 --mesh pipeline=2 --micro-batches "$m")
  /usr/bin/python3 -c "b = 1 - $deep_ms / (2 * $ms); i = 1 / ($m + 1); print('%-14d %9.2f %10.3f %10.3f %7.2fx' % ($m, $ms, b, i, b / i))"
done

echo
echo "pipeline=2, GPipe, on bench/specs/deep_joint.meta (one forward and one backward"
echo "sweep per iteration, the case (p-1)/(m+p-1) describes): idle share 1 - T1 / (2 Tp)"
printf '%-14s %9s %10s %10s %8s\n' micro-batches ms/iter bubble ideal ratio
spec=$root/bench/specs/deep_joint.meta
iterations=20
read -r joint_ms joint_bytes < <(run joint1 1)
echo "(one process: $joint_ms ms/iteration)"
for m in 1 2 4 8 16; do
  read -r ms bytes < <(run "joint$m" 2 --mesh pipeline=2 --micro-batches "$m")
  /usr/bin/python3 -c "b = 1 - $joint_ms / (2 * $ms); i = 1 / ($m + 1); print('%-14d %9.2f %10.3f %10.3f %7.2fx' % ($m, $ms, b, i, b / i))"
done

echo
fi
if [ "$only" = all ] || [ "$only" = moe ]; then
echo "Mixture of experts (examples/moe_transformer.meta: 2 blocks, 8 experts, top-2):"
echo "tensor=N splits attention by heads and each MoE layer by experts (8/N per rank);"
echo "expert=N splits samples and experts, the slots moving all-to-all;"
echo "data=2,expert=2 splits samples over both, experts over expert (GShard's layout);"
echo "task=2 replicates the experts"
printf '%-28s %10s %8s %14s %8s\n' configuration ms/iter speedup "peak bytes" memory
spec=$root/examples/moe_transformer.meta
iterations=10
read -r moe_ms moe_bytes < <(run moe1 1)
printf '%-28s %10.2f %8s %14d %8s\n' "1 process" "$moe_ms" 1.00x "$moe_bytes" 1.00x
compare moe "$moe_ms" "$moe_bytes" task=2 tensor=2 tensor=4 expert=2 expert=4 \
  task=2,expert=2 data=2,expert=2
echo
fi

if [ "$only" = all ] || [ "$only" = sequence ]; then
echo "Long sequences (bench/specs/long_sequence.meta: 256 positions, 2 blocks of width 64,"
echo "2 tasks of 4 sequences): sequence=N splits every sequence's positions (attention"
echo "gathers keys and values); data=N splits the sequences"
printf '%-28s %10s %8s %14s %8s\n' configuration ms/iter speedup "peak bytes" memory
spec=$root/bench/specs/long_sequence.meta
iterations=5
read -r seq_ms seq_bytes < <(run seq1 1)
printf '%-28s %10.2f %8s %14d %8s\n' "1 process" "$seq_ms" 1.00x "$seq_bytes" 1.00x
compare seq "$seq_ms" "$seq_bytes" sequence=2 sequence=4 data=2 tensor=2 \
  tensor=2,sequence=2 data=2,sequence=2
fi

if [ "$only" = all ] || [ "$only" = ring ]; then
echo
echo "Ring attention (bench/specs/long_sequence.meta with fused attention and 1024"
echo "positions): sequence=N with ring attention (keys and values passed around the"
echo "axis, each rank computing its queries) against --ring-attention=off (queries,"
echo "keys and values gathered, whole attention on every rank, the result sliced);"
echo "causal rings in the zigzag layout (each rank a chunk from each end) and on"
echo "contiguous blocks"
printf '%-34s %10s %8s %14s %8s\n' configuration ms/iter speedup "peak bytes" memory
for mask in causal full; do
if [ "$mask" = causal ]; then
  fused='s/causal = true,/causal = true, fused = true,/'
else
  fused='s/causal = true,/fused = true,/'
  echo "Without the causal mask (every rank's queries see every key: the ring balanced)"
fi
sed "$fused; s/i64\\[256\\]/i64[1024]/; s/f32\\[256, 16\\]/f32[1024, 16]/; s/length = 256/length = 1024/" \
  "$root/bench/specs/long_sequence.meta" >"$work/ring.meta"
spec=$work/ring.meta
iterations=3
read -r ring_ms ring_bytes < <(run "ring1$mask" 1)
printf '%-34s %10.2f %8s %14d %8s\n' "1 process" "$ring_ms" 1.00x "$ring_bytes" 1.00x
configs="sequence=2 sequence=4 tensor=2,sequence=2"
[ "$mask" = full ] && configs=sequence=2
for config in $configs; do
  # Causal rings run in the zigzag layout; "contiguous" is the ring on the
  # partitioner's contiguous blocks (METART_RING_LAYOUT), unbalanced.
  variants="on off"
  [ "$mask" = causal ] && variants="on contiguous off"
  for ring in $variants; do
    np=$(processes "$config")
    layout=zigzag option=$ring label="ring-attention=$ring"
    if [ "$ring" = contiguous ]; then
      layout=contiguous option=on label="ring, contiguous blocks"
    fi
    read -r ms bytes < <(METART_RING_LAYOUT=$layout run "ring$mask${config//[=,]/}$ring" \
      "$np" --mesh "$config" --ring-attention="$option")
    /usr/bin/python3 -c "print('%-34s %10.2f %7.2fx %14d %7.2fx' % ('$config $label', $ms, $ring_ms / $ms, $bytes, $bytes / $ring_bytes))"
  done
done
done
fi
