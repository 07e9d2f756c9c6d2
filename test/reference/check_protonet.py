#!/usr/bin/python3
"""Checks Prototypical Networks in `metac run` against PyTorch.

For each configuration, writes fixed episodes (support labels cover every
class; classes per episode given by the spec's `ways`) and initial
parameters of an MLP embedding, runs one meta-iteration with
`optimizer = sgd { lr = 1.0 }`, and compares the saved parameters with
theta - grad, the gradient of the mean over tasks of the query
cross-entropy of logits -||q - c_k||^2 (c_k the mean support embedding of
class k), computed with torch.autograd: relative error below 1e-8 in f64
and 1e-4 in f32. The evaluation that follows (the episodes as evaluation
tasks, written to the metrics file) must give PyTorch's query loss and
accuracy of the trained parameters, as means over tasks with their 95%
confidence intervals (1.96 sample standard deviations over sqrt(tasks)).

Run with Debian's /usr/bin/python3 and its python3-torch.
"""

import argparse
import json
import math
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from check_safetensors import read_safetensors, write_safetensors  # noqa: E402

try:
    import torch
except ImportError as error:
    sys.exit(f"check_protonet.py: cannot import torch ({error}); use "
             "/usr/bin/python3 with Debian's python3-torch")

# name, hidden, activation, ways, shots, queries, embedding, dtype
CONFIGS = [
    ("proto_relu_3way", [7], "relu", 3, 2, 4, 5, "f64"),
    ("proto_tanh_5way", [9, 6], "tanh", 5, 1, 3, 4, "f64"),
    ("proto_tanh_f32", [7], "tanh", 3, 2, 4, 5, "f32"),
]
TASKS, FEATURES = 3, 4


def run_config(metac, directory, config, seed):
    name, hidden, activation, ways, shots, queries, width, dtype = config
    dt = torch.float64 if dtype == "f64" else torch.float32
    st = "F64" if dtype == "f64" else "F32"
    generator = torch.Generator().manual_seed(seed)

    def rand(*shape):
        return (torch.rand(*shape, generator=generator,
                           dtype=torch.float64) * 2 - 1).to(dt)

    support, query = ways * shots, queries
    sx, qx = rand(TASKS, support, FEATURES), rand(TASKS, query, FEATURES)
    sy = torch.arange(ways).repeat(shots).repeat(TASKS, 1)
    sy = torch.stack([row[torch.randperm(support, generator=generator)]
                      for row in sy])
    qy = torch.randint(0, ways, (TASKS, query), generator=generator)
    episodes = directory / f"{name}.episodes.safetensors"
    write_safetensors(episodes, [
        ("support.x", st, list(sx.shape), sx.flatten().tolist()),
        ("support.y", "I64", list(sy.shape), sy.flatten().tolist()),
        ("query.x", st, list(qx.shape), qx.flatten().tolist()),
        ("query.y", "I64", list(qy.shape), qy.flatten().tolist())], {})

    sizes = [FEATURES] + hidden + [width]
    names = [f"l{i}" for i in range(len(hidden))] + ["out"]
    params, entries = [], []
    for layer, (fan_in, fan_out) in zip(names, zip(sizes, sizes[1:])):
        w, b = rand(fan_out, fan_in), rand(fan_out)
        params += [w, b]
        entries += [(f"{layer}.weight", st, [fan_out, fan_in],
                     w.flatten().tolist()),
                    (f"{layer}.bias", st, [fan_out], b.flatten().tolist())]
    init = directory / f"{name}.init.safetensors"
    write_safetensors(init, entries, {})

    lines = [f"model m(x: {dtype}[{FEATURES}]) -> {dtype}[{width}] {{",
             "  h = x"]
    for i, size in enumerate(hidden):
        lines.append(f'  h = {activation}(linear(h, {size}, name = "l{i}"))')
    lines += [f'  return linear(h, {width}, name = "out")', "}",
              f'tasks t = episodes {{ path = "{episodes.name}", ways = {ways} }}',
              f"train {name} {{ model = m, tasks = t, loss = cross_entropy, "
              f"algorithm = protonet, optimizer = sgd {{ lr = 1.0 }}, "
              f"meta_batch = {TASKS}, iterations = 1, "
              f"evaluate {{ tasks = t, count = {TASKS} }} }}"]
    spec = directory / f"{name}.meta"
    spec.write_text("\n".join(lines) + "\n")
    saved = directory / f"{name}.out.safetensors"
    metrics = directory / f"{name}.metrics.jsonl"
    subprocess.run([metac, "run", str(spec), "--iterations=1", "--quiet",
                    f"--init-params={init}", f"--save-params={saved}",
                    f"--metrics={metrics}"],
                   check=True, stdout=subprocess.DEVNULL)
    evaluation = [json.loads(line)["evaluation"]
                  for line in metrics.read_text().splitlines()
                  if "evaluation" in json.loads(line)][0]
    *_, tensors = read_safetensors(saved)

    act = torch.relu if activation == "relu" else torch.tanh
    params = [p.clone().requires_grad_() for p in params]

    def embed(x):
        h = x
        for i in range(0, len(params) - 2, 2):
            h = act(torch.nn.functional.linear(h, params[i], params[i + 1]))
        return torch.nn.functional.linear(h, params[-2], params[-1])

    def query_logits(t):
        es, eq = embed(sx[t]), embed(qx[t])
        prototypes = torch.stack([es[sy[t] == k].mean(0)
                                  for k in range(ways)])
        return -((eq[:, None, :] - prototypes[None, :, :]) ** 2).sum(-1)

    total = 0
    for t in range(TASKS):
        total = total + torch.nn.functional.cross_entropy(query_logits(t),
                                                          qy[t])
    grads = torch.autograd.grad(total / TASKS, params)
    worst = 0.0
    for entry, p, g in zip(entries, params, grads):
        expected = (p - g).detach().double().flatten()
        actual = torch.tensor(tensors[entry[0]][2], dtype=torch.float64)
        scale = torch.clamp(expected.abs(),
                            min=1e-3 * float(expected.abs().max()) + 1e-300)
        worst = max(worst, float(((actual - expected).abs() / scale).max()))

    # The evaluation scores the trained parameters on every episode.
    with torch.no_grad():
        for p, entry in zip(params, entries):
            p.copy_(torch.tensor(tensors[entry[0]][2],
                                 dtype=torch.float64).reshape(p.shape))
        losses, hits = [], []
        for t in range(TASKS):
            logits = query_logits(t).double()
            losses.append(float(torch.nn.functional.cross_entropy(logits,
                                                                  qy[t])))
            hits.append(float((logits.argmax(-1) == qy[t]).double().mean()))
    for key, values in (("loss", losses), ("accuracy", hits)):
        mean = sum(values) / len(values)
        sd = math.sqrt(sum((v - mean) ** 2 for v in values)
                       / (len(values) - 1))
        for field, expected in ((key, mean),
                                (key + "_ci95",
                                 1.96 * sd / math.sqrt(len(values)))):
            error = abs(evaluation[field] - expected) / max(abs(expected),
                                                             1e-3)
            worst = max(worst, error)
    if evaluation["tasks"] != TASKS:
        worst = float("inf")
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--metac", default="metac")
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for config in CONFIGS:
            worst = run_config(args.metac, pathlib.Path(tmp), config, seed=13)
            tolerance = 1e-8 if config[7] == "f64" else 1e-4
            status = "ok" if worst < tolerance else "FAILED"
            failures += status != "ok"
            print(f"{config[0]}: max relative error {worst:.2e} "
                  f"(tolerance {tolerance:.0e}) {status}")
    print(f"{len(CONFIGS) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
