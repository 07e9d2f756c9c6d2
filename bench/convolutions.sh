#!/usr/bin/env bash
# oneDNN's convolutions against im2col + OpenBLAS on the CPU (issue 18), in
# one run: the ConvNet examples (MAML, second order, and ProtoNets; without
# their evaluation and checkpoints) timed with the default choice (per
# shape, the fastest of oneDNN on all threads, oneDNN on one thread and
# im2col, measured at first use), with oneDNN wherever it has a kernel and
# with im2col alone, alternating, REPEATS times (3), and the convolutions'
# share of the runtime profile.
#   bench/convolutions.sh
# Iterations per run: CONVNET_ITERATIONS (20, after one to warm up). The
# last line:
#   convolutions: maml A× im2col C× oneDNN, protonet B× im2col D× oneDNN
# (im2col's and oneDNN's median ms per meta-iteration over the choice's).
set -euo pipefail
source "$(dirname "$0")/metac-binary.sh"
iterations=${CONVNET_ITERATIONS:-20}
repeats=${REPEATS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ms_of() { sed -n 's/.* \([0-9.]*\) ms\/iteration.*/\1/p' | head -1; }
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

summary=()
for algorithm in maml protonet; do
  grep -v -e 'evaluate {' -e 'checkpoint {' \
    "$root/examples/${algorithm}_fashion_mnist.meta" >"$work/$algorithm.meta"
  "$metac" "$work/$algorithm.meta" -o "$work/$algorithm"
  for mode in auto onednn im2col; do : >"$work/$algorithm.$mode"; done
  for ((r = 0; r < repeats; ++r)); do
    for mode in auto onednn im2col; do
      METART_CONVOLUTION=$mode "$work/$algorithm" \
        --iterations=$((iterations + 1)) --quiet | ms_of >>"$work/$algorithm.$mode"
    done
  done
  chosen=$(median <"$work/$algorithm.auto")
  onednn=$(median <"$work/$algorithm.onednn")
  im2col=$(median <"$work/$algorithm.im2col")
  echo "$algorithm: chosen $chosen ms/iteration, oneDNN $onednn, im2col $im2col (medians of $repeats runs of $iterations meta-iterations)"
  for mode in auto im2col; do
    echo "  $mode profile (ms per meta-iteration):"
    METART_CONVOLUTION=$mode "$work/$algorithm" --iterations=$((iterations + 1)) \
      --quiet --profile | awk '/metart_nn_conv2d/ {printf "    %-34s %9.2f\n", $1, $4}'
  done
  summary+=("$algorithm $(awk -v a="$im2col" -v b="$onednn" -v c="$chosen" \
    'BEGIN {printf "%.2f× im2col %.2f× oneDNN", a / c, b / c}')")
done
echo "convolutions: ${summary[0]}, ${summary[1]}"
