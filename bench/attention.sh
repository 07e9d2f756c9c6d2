#!/usr/bin/env bash
# Fused attention through second-order MAML (issue 17, item 4): a 2-block
# GPT-style transformer (width 64, 4 heads) meta-learning token
# substitutions with 2 inner steps, second order, its attention fused
# (`fused = true`: nn.attention forward, nn.attention_backward in tiles,
# the double backward in nn ops) against the unfused softmax(q k^T) v in
# the same run, for sequence lengths 32 to 512: time per meta-iteration,
# peak device memory, and their ratios (fused over unfused).
#   bench/attention.sh
#   LENGTHS="64 256" ITERATIONS=3 bench/attention.sh
set -euo pipefail
source "$(dirname "$0")/metac-binary.sh"
lengths=${LENGTHS:-"32 64 128 256 512"}
iterations=${ITERATIONS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run: "ms/iteration peak-bytes".
measure() {
  "$metac" run "$1" --iterations="$iterations" --quiet </dev/null |
    sed -n 's/.*, \([0-9.]*\) ms\/iteration, .*peak device memory \([0-9]*\) bytes.*/\1 \2/p'
}

spec() { # length fused
  cat <<EOF
block layer(h) {
  h = h + attention(layer_norm(h, name = "ln1"), 4, causal = true, fused = $2, name = "attn")
  return h + linear(gelu(linear(layer_norm(h, name = "ln2"), 256, name = "up")), 64, name = "down")
}
model gpt(x: i64[$1]) -> f32[$1, 16] {
  h = embedding(x, 16, 64, name = "tok")
  repeat 2 { h = layer(h, name = "block") }
  return linear(layer_norm(h, name = "ln"), 16, name = "head")
}
tasks seq = sequence { vocab = 16 length = $1 support = 4 query = 4 }
train meta_gpt {
  model = gpt
  tasks = seq
  loss = cross_entropy
  algorithm = maml { steps = 2, inner_lr = 0.1, order = 2 }
  optimizer = adam { lr = 0.001 }
  meta_batch = 2
  iterations = $iterations
  seed = 1
}
EOF
}

printf '%-7s %14s %14s %14s %14s %8s %8s\n' length "unfused ms" "fused ms" \
  "unfused MiB" "fused MiB" "time x" "memory x"
for length in $lengths; do
  spec "$length" false >"$work/unfused.meta"
  spec "$length" true >"$work/fused.meta"
  read -r plain_ms plain_peak < <(measure "$work/unfused.meta")
  read -r fused_ms fused_peak < <(measure "$work/fused.meta")
  /usr/bin/python3 -c "
import sys
length, pm, pp, fm, fp = sys.argv[1:]
print('%-7s %14.1f %14.1f %14.1f %14.1f %7.2fx %7.2fx' % (length, float(pm),
      float(fm), int(pp) / 2**20, int(fp) / 2**20, float(fm) / float(pm),
      int(fp) / int(pp)))" "$length" "$plain_ms" "$plain_peak" "$fused_ms" \
    "$fused_peak"
done
