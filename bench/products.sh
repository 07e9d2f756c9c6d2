#!/usr/bin/env bash
# oneDNN's matrix products against OpenBLAS's on the CPU (issue 18), in one
# run: sinusoid MAML (25 tasks of small per-task products; `metac run`) and
# the ConvNet MAML example (a shared 64 x 5 head; its executable, without
# evaluation and checkpoints), each timed with the default (oneDNN for f32
# products) and with METART_MATMUL=blas, alternating, REPEATS times (3),
# and the products' share of the runtime profile.
#   bench/products.sh
# Iterations per run: SINUSOID_ITERATIONS (3000), CONVNET_ITERATIONS (20,
# after one to warm up). The last line:
#   products: sinusoid A× OpenBLAS, convnet B× OpenBLAS
# (OpenBLAS's median ms per meta-iteration over oneDNN's).
set -euo pipefail
source "$(dirname "$0")/metac-binary.sh"
sinusoid_iterations=${SINUSOID_ITERATIONS:-3000}
convnet_iterations=${CONVNET_ITERATIONS:-20}
repeats=${REPEATS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ms_of() { sed -n 's/.* \([0-9.]*\) ms\/iteration.*/\1/p' | head -1; }
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

grep -v -e 'evaluate {' -e 'checkpoint {' \
  "$root/examples/maml_fashion_mnist.meta" >"$work/maml.meta"
"$metac" "$work/maml.meta" -o "$work/maml"
run() { # run EXAMPLE [flags...]
  local example=$1
  shift
  if [ "$example" = sinusoid ]; then
    "$metac" run "$root/examples/sinusoid.meta" \
      --iterations="$sinusoid_iterations" --quiet "$@"
  else
    "$work/maml" --iterations=$((convnet_iterations + 1)) --quiet "$@"
  fi
}

summary=()
for example in sinusoid convnet; do
  for mode in onednn blas; do : >"$work/$example.$mode"; done
  for ((r = 0; r < repeats; ++r)); do
    for mode in onednn blas; do
      METART_MATMUL=$mode run "$example" | ms_of >>"$work/$example.$mode"
    done
  done
  onednn=$(median <"$work/$example.onednn")
  blas=$(median <"$work/$example.blas")
  echo "$example: oneDNN $onednn ms/iteration, OpenBLAS $blas (medians of $repeats runs)"
  for mode in onednn blas; do
    echo "  $mode profile (ms per meta-iteration):"
    METART_MATMUL=$mode run "$example" --profile |
      awk '/metart_nn_(linear|matmul)/ {printf "    %-34s %9.3f\n", $1, $4}'
  done
  summary+=("$example $(awk -v a="$blas" -v b="$onednn" 'BEGIN {printf "%.2f", a / b}')× OpenBLAS")
done
echo "products: ${summary[0]}, ${summary[1]}"
