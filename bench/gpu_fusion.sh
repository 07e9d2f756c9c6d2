#!/usr/bin/env bash
# The CUDA half of issue 18 on a GPU machine that has no LLVM: the
# examples' executables, compiled elsewhere and packed with their libraries
# by bench/gpu_bundle.sh (bin/sinusoid, bin/maml, bin/protonet, bin/maml64:
# the f64 ConvNet of test/metac/Inputs/maml_fm64.meta, and
# bin/metart-cuda-tests), run on CUDA with metac's generated kernels and op
# by op (METART_FUSED_KERNELS=off): the parameters after 3 meta-iterations
# compared (f64 to 1e-9, f32 to 1e-4 relative to each tensor's largest
# element; parameters whose gradient is zero by symmetry, the convolution
# biases that batch norm removes, hold round-off alone and are compared to
# 1e-6 absolute: f32 training of these examples is chaotic over tens of
# iterations, on the CPU too), the time per meta-iteration of each (CUDA
# graph, and without one), cuDNN's convolutions against im2col's, and the
# profile of the ConvNet MAML step.
#   bench/gpu_fusion.sh BUNDLE OUT
# Run from the repository's root (test/reference/compare_params.py).
set -uo pipefail
bundle=$1
out=$2
mkdir -p "$out"
# shellcheck disable=SC1091
source "$bundle/env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
missing=$(ldd "$bundle"/bin/* 2>/dev/null | grep "not found" | sort -u)
[ -n "$missing" ] && echo "libraries not found: $missing"

timeout 300 "$bundle/bin/metart-cuda-tests" >"$out/cuda-tests.txt" 2>&1
echo "metart-cuda-tests: exit $?, $(grep -E '^\[  (PASSED|FAILED) ' "$out/cuda-tests.txt" | tr '\n' ' ')"
grep -E '^\[  FAILED  \]' "$out/cuda-tests.txt" | head

# The convolutions on im2col in both: the generated kernels are what differs.
export METART_CONVOLUTION=im2col
for run in maml64:1 maml64:3 sinusoid:3 maml:3 protonet:3; do
  example=${run%:*} n=${run#*:}
  tolerance=(--rtol 1e-4 --atol 1e-6)
  # f64: the convolution biases that batch norm removes hold round-off alone
  # (Adam scales it up): 1e-8 absolute for them.
  [ "$example" = maml64 ] && tolerance=(--rtol 1e-9 --atol 1e-8)
  for mode in fused ops; do
    [ "$mode" = ops ] && export METART_FUSED_KERNELS=off
    timeout 300 "$bundle/bin/$example" --backend=cuda --iterations="$n" --quiet \
      --save-params="$out/$example-$n-$mode.safetensors" >"$out/$example-$n-$mode.txt" 2>&1 ||
      tail -3 "$out/$example-$n-$mode.txt"
    unset METART_FUSED_KERNELS
  done
  python3 test/reference/compare_params.py "$out/$example-$n-fused.safetensors" \
    "$out/$example-$n-ops.safetensors" "${tolerance[@]}" >"$out/$example-$n-compare.txt" 2>&1
  verdict=$([ $? = 0 ] && echo "within ${tolerance[*]}" || echo "NOT within ${tolerance[*]}")
  echo "$example after $n meta-iterations, generated kernels against op by op:" \
    "$(tail -1 "$out/$example-$n-compare.txt"), $verdict"
done
unset METART_CONVOLUTION

ms_of() { sed -n 's/.*[:,] \([0-9.]*\) ms\/iteration.*/\1/p' | head -1; }
loss_of() { sed -n 's/.*final meta-loss \([-0-9.e+naif]*\),.*/\1/p' | head -1; }
declare -A iterations=([sinusoid]=${SINUSOID_ITERATIONS:-2000}
  [maml]=${CONVNET_ITERATIONS:-51} [protonet]=${CONVNET_ITERATIONS:-51})
for example in sinusoid maml protonet; do
  program=$bundle/bin/$example
  n=${iterations[$example]}
  common=(--backend=cuda --iterations="$n" --quiet)
  timeout 300 "$program" "${common[@]}" \
    --save-params="$out/$example-fused.safetensors" >"$out/$example-fused.txt" 2>&1
  fused_status=$?
  METART_FUSED_KERNELS=off timeout 300 "$program" "${common[@]}" \
    --save-params="$out/$example-ops.safetensors" >"$out/$example-ops.txt" 2>&1
  timeout 300 "$program" "${common[@]}" --no-cuda-graph \
    >"$out/$example-fused-nograph.txt" 2>&1
  METART_FUSED_KERNELS=off timeout 300 "$program" "${common[@]}" \
    --no-cuda-graph >"$out/$example-ops-nograph.txt" 2>&1
  echo "$example ($n meta-iterations, exit $fused_status): generated kernels" \
    "$(ms_of <"$out/$example-fused.txt") ms (no graph" \
    "$(ms_of <"$out/$example-fused-nograph.txt")), op by op" \
    "$(ms_of <"$out/$example-ops.txt") ms (no graph" \
    "$(ms_of <"$out/$example-ops-nograph.txt")); meta-loss" \
    "$(loss_of <"$out/$example-fused.txt") against" \
    "$(loss_of <"$out/$example-ops.txt")"
  [ "$fused_status" = 0 ] || tail -5 "$out/$example-fused.txt"
done
# The convolutions: cuDNN against im2col + cuBLAS (generated kernels, CUDA
# graph), and the choices measured per shape.
for example in maml protonet; do
  n=${CONVNET_ITERATIONS:-51}
  for convolution in im2col cudnn cudnn-grouped; do
    METART_CONVOLUTION=$convolution timeout 300 "$bundle/bin/$example" --backend=cuda \
      --iterations="$n" --quiet >"$out/$example-$convolution.txt" 2>&1
  done
  METART_CONVOLUTION_VERBOSE=1 timeout 120 "$bundle/bin/$example" --backend=cuda \
    --iterations=2 --quiet >"$out/$example-convolutions.txt" 2>&1
  echo "$example convolutions: im2col $(ms_of <"$out/$example-im2col.txt") ms," \
    "cuDNN $(ms_of <"$out/$example-cudnn.txt") ms, cuDNN grouped over tasks" \
    "$(ms_of <"$out/$example-cudnn-grouped.txt") ms, measured per shape" \
    "$(ms_of <"$out/$example-fused.txt") ms ($(grep -c ': cuDNN$' "$out/$example-convolutions.txt")" \
    "shapes to cuDNN, $(grep -c ': im2col$' "$out/$example-convolutions.txt") to im2col)"
  grep -m3 -i "error\|cudnn did not" "$out/$example-cudnn.txt"
done
[ -n "${PROFILE:-1}" ] && timeout 120 "$bundle/bin/maml" --backend=cuda --iterations=6 --profile \
  --no-cuda-graph >"$out/maml-profile.txt" 2>&1
METART_FUSED_KERNELS=off timeout 120 "$bundle/bin/maml" --backend=cuda \
  --iterations=6 --profile --no-cuda-graph >"$out/maml-profile-ops.txt" 2>&1
# The NCCL watchdog (issue 20): two ranks sharing the GPU, a healthy run
# and one whose rank 0 hangs before meta-iteration 3 (comm-timeout-nccl.test
# without lit, which needs LLVM's libraries).
if [ -x "$bundle/bin/sine2" ] && command -v mpirun >/dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mkdir -p "$out/nccl-ok" "$out/nccl-hang"
  echo "NCCL, healthy: $(bash test/metac/distributed/Inputs/nccl_hang.sh "$out/nccl-ok" \
    "$bundle/bin/sine2" --backend=cuda --iterations 5 --comm-timeout=2 --quiet)"
  echo "NCCL, rank 0 hung: $(bash test/metac/distributed/Inputs/nccl_hang.sh "$out/nccl-hang" \
    "$bundle/bin/sine2" --backend=cuda --iterations 50 --comm-timeout=2 \
    --hang-rank=0:3 --quiet); $(grep -c 'did not complete within' "$out/nccl-hang/err.log") ranks named the collective"
fi
# The sinusoid's generated kernels one by one (each its own profile line):
# which of its 315 launches cost the time.
[ -n "${PROFILE:-1}" ] && timeout 120 "$bundle/bin/sinusoid" --backend=cuda --iterations=200 \
  --profile --no-cuda-graph >"$out/sinusoid-profile.txt" 2>&1
echo "profile written: $out/maml-profile.txt, $out/sinusoid-profile.txt"
