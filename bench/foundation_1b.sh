#!/usr/bin/env bash
# The 1.14B-parameter GPT of examples/transformer_1b.meta meta-trained on
# one GPU (issue 17, item 6), against PyTorch 2.x on the same GPU in the
# same run. One task per meta-batch (8 support + 8 query sequences of 512
# tokens) in bf16 with f32 master weights and Adam state; FOMAML and
# second-order MAML, attention unfused and fused (`fused = true`).
#
#   bench/foundation_1b.sh build DIR   compile the variants to executables
#                                      in DIR (needs metac; no GPU)
#   bench/foundation_1b.sh run DIR     run them and the PyTorch peer (GPU)
#   bench/foundation_1b.sh             both, on a GPU machine with metac
#
# `run` prints per variant the ms per meta-iteration (mean of the
# iterations after the second: the first runs op by op, the second records
# the CUDA graph), tokens/s, the
# model FLOPs per meta-iteration (metac's per-op counts), MFU against the
# H100's 989 dense bf16 TFLOP/s, the peak device memory, and the time split
# (GEMM, attention, other) from a second, op-by-op run with --profile (for
# the variants in PROFILE, default the fused ones); then PyTorch's lines
# with the same FLOPs as numerator. VARIANTS, ITERATIONS, PROFILE,
# TORCH_VARIANTS1, TORCH_VARIANTS2, PEAK_TFLOPS and RUN_TIMEOUT (seconds
# per metac run) override the defaults.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
variants=${VARIANTS:-"o1u o1f o2u o2f"}
iterations=${ITERATIONS:-4}
peak=${PEAK_TFLOPS:-989}

# A spec of one training: order 1 or 2, attention fused or not.
spec_of() {
  local order=$1 fused=$2
  sed -n '1,/^train maml2/p' "$root/examples/transformer_1b.meta" | sed '$d' |
    sed "s/causal = true,/causal = true, fused = $fused,/"
  cat <<EOF
train maml$order {
  model      = gpt
  tasks      = substitution
  loss       = cross_entropy
  algorithm  = maml { steps = 1, inner_lr = 0.1, order = $order }
  optimizer  = adam { lr = 0.0001 }
  meta_batch = 1
  iterations = 10000
  seed       = 1
}
EOF
}

build() {
  local dir=$1
  mkdir -p "$dir"
  source "$root/bench/metac-binary.sh"
  for variant in $variants; do
    local order=${variant:1:1} fused=false
    [ "${variant:2:1}" = f ] && fused=true
    spec_of "$order" "$fused" >"$dir/$variant.meta"
    "$metac" "$dir/$variant.meta" --precision=bf16 -o "$dir/$variant"
    echo "built $dir/$variant (order $order, fused attention $fused)"
  done
}

run() {
  local dir=$1 out=${OUT:-$1}
  for variant in $variants; do
    [ -x "$dir/$variant" ] || continue
    timeout "${RUN_TIMEOUT:-600}" "$dir/$variant" --backend=cuda \
      --iterations="$iterations" --quiet \
      --metrics="$out/$variant.jsonl" >"$out/$variant.txt" 2>&1 ||
      { echo "$variant: failed: $(tail -3 "$out/$variant.txt")"; continue; }
    case " ${PROFILE:-o1f o2f} " in
    *" $variant "*)
      timeout "${RUN_TIMEOUT:-600}" "$dir/$variant" --backend=cuda \
        --iterations=2 --quiet --profile \
        >"$out/$variant-profile.txt" 2>&1 || true ;;
    esac
    python3 "$root/bench/foundation_1b_row.py" "$variant" "$out/$variant.jsonl" \
      "$out/$variant-profile.txt" "$peak"
  done
  local flops1 flops2
  flops1=$(python3 "$root/bench/foundation_1b_row.py" --flops "$out"/o1*.jsonl)
  flops2=$(python3 "$root/bench/foundation_1b_row.py" --flops "$out"/o2*.jsonl)
  # Order 1: SDPA's flash attention, eager and compiled; order 2: flash
  # (which has no double backward: its line says so) and the math backend.
  PYTHONUNBUFFERED=1 python3 "$root/bench/gpt_maml_torch.py" --order 1 \
    --flops "$flops1" --peak-tflops "$peak" --json "$out/torch.jsonl" \
    $(for v in ${TORCH_VARIANTS1:-sdpa compile}; do echo --variant "$v"; done)
  PYTHONUNBUFFERED=1 python3 "$root/bench/gpt_maml_torch.py" --order 2 \
    --flops "$flops2" --peak-tflops "$peak" --json "$out/torch.jsonl" \
    $(for v in ${TORCH_VARIANTS2:-sdpa math}; do echo --variant "$v"; done)
}

case ${1:-all} in
build) build "$2" ;;
run) run "$2" ;;
all)
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  build "$dir"
  run "$dir"
  ;;
*) echo "usage: $0 [build DIR | run DIR]" >&2; exit 2 ;;
esac
