#!/usr/bin/python3
"""Checks a BERT encoder written in the spec language, loaded from a
checkpoint in Hugging Face's names, against PyTorch.

A BERT (word, position and token-type embeddings, post-LayerNorm blocks of
self-attention and a GELU MLP, mean pooling, a classification head) is
written as a spec whose parameter names are Hugging Face's `BertModel`
names (`embeddings.word_embeddings.weight`, `encoder.layer.0.attention.
self.query.weight`, ...): `attention(..., projections = [...])` names the
projections, `positions(x)` gives the position ids (and with step = 0 the
token types). For each configuration (attention unfused and fused; f64):

1. a pretrained body is written in those names, with an extra tensor the
   model does not use (BERT's pooler) and without the task's head;
   `metac run --iterations=0 --init-params-partial --save-params` loads
   it: the body comes back exactly, the head keeps its initialisation and
   is named on stderr;
2. strict `--init-params` on the same file fails, naming the head;
3. one MAML meta-iteration (order 2, one inner step, `sgd { lr = 1.0 }`)
   from the body and that head on fixed episodes of token sequences, against
   theta - grad computed by torch.autograd.grad(create_graph=True) with
   PyTorch's own layer_norm, gelu (erf), softmax and cross-entropy:
   relative error below 1e-9.

Run with Debian's /usr/bin/python3 and its python3-torch.
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bert_reference import bert_encoder  # noqa: E402
from check_safetensors import read_safetensors, write_safetensors  # noqa: E402
from mlp_episodes import relative_error, tensor_entry, torch  # noqa: E402

F = torch.nn.functional
VOCAB, MAX_POSITIONS, LENGTH, HIDDEN, HEADS, INTERMEDIATE, LAYERS = 23, 12, 6, 8, 2, 12, 2
WAYS, TASKS, SUPPORT, QUERY = 3, 2, 6, 3
EPS = 1e-12
INNER_LR = 0.5


def spec_text(fused, episodes):
    fused_text = "true" if fused else "false"
    return f"""
block bert_layer(h) {{
  a = attention(h, {HEADS}, fused = {fused_text}, name = "attention",
                projections = ["self.query", "self.key", "self.value", "output.dense"])
  h = layer_norm(h + a, eps = {EPS}, name = "attention.output.LayerNorm")
  f = linear(gelu(linear(h, {INTERMEDIATE}, name = "intermediate.dense")), {HIDDEN},
             name = "output.dense")
  return layer_norm(h + f, eps = {EPS}, name = "output.LayerNorm")
}}

model bert(x: i64[{LENGTH}]) -> f64[{WAYS}] {{
  h = embedding(x, {VOCAB}, {HIDDEN}, name = "embeddings.word_embeddings")
    + embedding(positions(x), {MAX_POSITIONS}, {HIDDEN}, name = "embeddings.position_embeddings")
    + embedding(positions(x, step = 0), 2, {HIDDEN}, name = "embeddings.token_type_embeddings")
  h = layer_norm(h, eps = {EPS}, name = "embeddings.LayerNorm")
  repeat {LAYERS} {{ h = bert_layer(h, name = "encoder.layer") }}
  return linear(mean(h, dims = [0]), {WAYS}, name = "classifier")
}}

tasks t = episodes {{ path = "{episodes}", ways = {WAYS} }}
train bert_maml {{
  model = bert, tasks = t, loss = cross_entropy,
  algorithm = maml {{ steps = 1, inner_lr = {INNER_LR}, order = 2 }},
  optimizer = sgd {{ lr = 1.0 }}, meta_batch = {TASKS}, iterations = 1
}}
"""


def body_shapes():
    """Hugging Face BertModel's parameter names and shapes (no pooler)."""
    shapes = {
        "embeddings.word_embeddings.weight": [VOCAB, HIDDEN],
        "embeddings.position_embeddings.weight": [MAX_POSITIONS, HIDDEN],
        "embeddings.token_type_embeddings.weight": [2, HIDDEN],
        "embeddings.LayerNorm.weight": [HIDDEN],
        "embeddings.LayerNorm.bias": [HIDDEN],
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for m in ("attention.self.query", "attention.self.key",
                  "attention.self.value", "attention.output.dense"):
            shapes[p + m + ".weight"] = [HIDDEN, HIDDEN]
            shapes[p + m + ".bias"] = [HIDDEN]
        shapes[p + "intermediate.dense.weight"] = [INTERMEDIATE, HIDDEN]
        shapes[p + "intermediate.dense.bias"] = [INTERMEDIATE]
        shapes[p + "output.dense.weight"] = [HIDDEN, INTERMEDIATE]
        shapes[p + "output.dense.bias"] = [HIDDEN]
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[p + norm + ".weight"] = [HIDDEN]
            shapes[p + norm + ".bias"] = [HIDDEN]
    return shapes


def bert(p, x):
    """PyTorch's BERT on ids `x` [n, L] with parameters `p`, mean-pooled and
    classified."""
    h = bert_encoder(p, x, HEADS, LAYERS, EPS)
    return F.linear(h.mean(1), p["classifier.weight"], p["classifier.bias"])


def run_config(metac, directory, fused, seed):
    g = torch.Generator().manual_seed(seed)

    def rand(*shape, scale=1.0):
        return (torch.rand(*shape, generator=g, dtype=torch.float64) * 2 - 1) * scale

    episodes = directory / "episodes.safetensors"
    sx = torch.randint(0, VOCAB, (TASKS, SUPPORT, LENGTH), generator=g)
    qx = torch.randint(0, VOCAB, (TASKS, QUERY, LENGTH), generator=g)
    sy = torch.randint(0, WAYS, (TASKS, SUPPORT), generator=g)
    qy = torch.randint(0, WAYS, (TASKS, QUERY), generator=g)
    write_safetensors(episodes, [tensor_entry("support.x", "I64", sx),
                                 tensor_entry("support.y", "I64", sy),
                                 tensor_entry("query.x", "I64", qx),
                                 tensor_entry("query.y", "I64", qy)], {})
    body = {name: rand(*shape, scale=0.5) for name, shape in body_shapes().items()}
    for name in body:  # LayerNorm gains near 1, as trained ones are
        if name.endswith("LayerNorm.weight"):
            body[name] = body[name] + 1
    pretrained = directory / "pretrained.safetensors"
    write_safetensors(pretrained, [tensor_entry(n, "F64", t) for n, t in body.items()]
                      + [tensor_entry("pooler.dense.weight", "F64", rand(HIDDEN, HIDDEN))],
                      {"format": "pt"})
    spec = directory / "bert.meta"
    spec.write_text(spec_text(fused, episodes.name))
    problems = []

    # 1. Partial load: the body exactly, the head initialised and named.
    start = directory / "start.safetensors"
    done = subprocess.run([metac, "run", str(spec), "--iterations=0", "--quiet",
                           f"--init-params={pretrained}", "--init-params-partial",
                           f"--save-params={start}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return [f"partial load failed: {done.stderr.strip()}"], None
    if "initialised: classifier.weight, classifier.bias" not in done.stderr:
        problems.append(f"partial load did not name the head: {done.stderr.strip()!r}")
    *_, saved = read_safetensors(start)
    for name, t in body.items():
        if saved[name][2] != t.flatten().tolist():
            problems.append(f"'{name}' did not load exactly")
    if "pooler.dense.weight" in saved:
        problems.append("the pooler, not in the model, was saved")

    # 2. Strict loading refuses a file without the head.
    strict = subprocess.run([metac, "run", str(spec), "--iterations=0", "--quiet",
                             f"--init-params={pretrained}"],
                            capture_output=True, text=True)
    if strict.returncode == 0 or "has no tensor 'classifier.weight'" not in strict.stderr:
        problems.append(f"strict load of a headless file: {strict.stderr.strip()!r}")

    # 3. One MAML step from the body and metac's head, against PyTorch.
    after = directory / "after.safetensors"
    subprocess.run([metac, "run", str(spec), "--iterations=1", "--quiet",
                    f"--init-params={start}", f"--save-params={after}"],
                   check=True, stdout=subprocess.DEVNULL)
    *_, tensors = read_safetensors(after)
    names = sorted(saved)
    params = {n: torch.tensor(saved[n][2], dtype=torch.float64).reshape(saved[n][1])
              .requires_grad_() for n in names}
    total = 0
    for t in range(TASKS):
        inner = F.cross_entropy(bert(params, sx[t]), sy[t])
        grads = torch.autograd.grad(inner, list(params.values()), create_graph=True)
        fast = {n: p - INNER_LR * gr for (n, p), gr in zip(params.items(), grads)}
        total = total + F.cross_entropy(bert(fast, qx[t]), qy[t])
    meta = torch.autograd.grad(total / TASKS, list(params.values()))
    worst = max(relative_error(p - gr, tensors[n][2])
                for (n, p), gr in zip(params.items(), meta))
    return problems, worst


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--metac", default="metac")
    args = parser.parse_args()
    failures = 0
    for fused in (False, True):
        label = "fused" if fused else "unfused"
        with tempfile.TemporaryDirectory() as tmp:
            problems, worst = run_config(args.metac, pathlib.Path(tmp), fused, seed=11)
        for problem in problems:
            print(f"{label}: {problem}")
        ok = not problems and worst is not None and worst < 1e-9
        failures += not ok
        if worst is not None:
            print(f"{label}: MAML step max relative error {worst:.2e} (tolerance 1e-09) "
                  f"{'ok' if ok else 'FAILED'}")
    print(f"{2 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
