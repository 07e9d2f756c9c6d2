#!/usr/bin/env bash
# How often MAML on sinusoid diverges when adapted for longer than trained:
# metac and the PyTorch reference (bench/maml_sinusoid_torch.py --batched),
# each trained for the example's 70 000 meta-iterations with seeds 1..8 on 1
# and 2 threads, then evaluated on 600 held-out tasks after 1..10 inner steps.
# A task diverges when its query loss is non-finite or above 100. Each model
# is also scored by the other framework's evaluation, which separates a
# model that diverges from an evaluation that does.
#
#   bench/sinusoid_divergence.sh [DIR] [PHASE...]
#
# PHASE: train-metac, train-torch, evaluate, table (default: all four).
# Finished runs are kept in DIR (default bench/out/divergence) and not redone,
# so an interrupted study resumes. ITERATIONS, SEEDS and THREADS override the
# setting from the environment, CORES the OpenBLAS kernels (machines), METAC
# a metac binary to use unbuilt. The table (markdown) goes to DIR/table.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/bench/out/divergence}
shift || true
phases=${*:-train-metac train-torch evaluate table}
iterations=${ITERATIONS:-70000}
seeds=${SEEDS:-1 2 3 4 5 6 7 8}
threads=${THREADS:-1 2}
# OpenBLAS kernels stand for other machines: "native" is this machine's
# choice, SkylakeX (AVX-512), Haswell (AVX2) or Sandybridge (AVX) another's,
# whose products round differently (metac's own loops are the same code on
# every x86-64 machine, PyTorch's depend on its CPU capability too).
cores=${CORES:-native}
build=${METAC_BUILD_DIR:-$root/build}
python=/usr/bin/python3
mkdir -p "$dir"
# METAC names a metac binary to use as it is; otherwise the build's, built.
if [ -n "${METAC:-}" ]; then
  metac=$METAC
else
  metac=$build/bin/metac
  case " $phases " in
  *" train-metac "* | *" evaluate "*) "$root/scripts/build.sh" metac >&2 ;;
  esac
fi

# The example with evaluation after every step count from 1 to 10.
spec=$dir/sinusoid_eval10.meta
sed 's/steps = \[1, 10\]/steps = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]/' \
  "$root/examples/sinusoid.meta" > "$spec"
grep -q 'steps = \[1, 2, 3' "$spec" || { echo "cannot rewrite the evaluation steps" >&2; exit 1; }

for phase in $phases; do
  for s in $seeds; do
    for t in $threads; do
     for core in $cores; do
      run=s$s-t$t
      blas=()
      if [ "$core" != native ]; then
        run=$run-$core
        blas=(OPENBLAS_CORETYPE="$core")
      fi
      case $phase in
      train-metac)
        [ -f "$dir/metac-$run.safetensors" ] && continue
        echo "metac: seed $s, $t threads, $core kernels" >&2
        env "${blas[@]}" METART_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t "$metac" run \
          "$root/examples/sinusoid.meta" --seed="$s" --iterations="$iterations" \
          --quiet --save-params="$dir/metac-$run.safetensors.tmp" \
          > "$dir/metac-$run.train.txt" 2>&1 || true
        mv "$dir/metac-$run.safetensors.tmp" "$dir/metac-$run.safetensors"
        ;;
      train-torch)
        [ -f "$dir/torch-$run.safetensors" ] && continue
        echo "pytorch: seed $s, $t threads, $core kernels" >&2
        env "${blas[@]}" "$python" "$root/bench/maml_sinusoid_torch.py" \
          --batched --seed "$s" \
          --threads "$t" --iterations "$iterations" --eval-steps 1 \
          --save-params "$dir/torch-$run.safetensors.tmp" \
          > "$dir/torch-$run.train.txt" 2>&1
        mv "$dir/torch-$run.safetensors.tmp" "$dir/torch-$run.safetensors"
        ;;
      evaluate)
        for trained in metac torch; do
          model=$dir/$trained-$run.safetensors
          [ -f "$model" ] || continue
          out=$dir/$trained-$run.metac-eval.jsonl
          [ -f "$out" ] || "$metac" run "$spec" --seed="$s" --iterations=0 \
            --quiet --init-params="$model" --metrics="$out" > /dev/null
          out=$dir/$trained-$run.torch-eval.json
          [ -f "$out" ] || "$python" "$root/bench/maml_sinusoid_torch.py" \
            --seed "$s" --threads "$t" --iterations 0 --load-params "$model" \
            --eval-steps 1,2,3,4,5,6,7,8,9,10 --json "$out" > /dev/null
        done
        ;;
      table) ;;
      *) echo "unknown phase '$phase'" >&2; exit 2 ;;
      esac
     done
    done
  done
  if [ "$phase" = table ]; then
    "$python" "$root/bench/divergence_table.py" "$dir" | tee "$dir/table.md"
  fi
done
