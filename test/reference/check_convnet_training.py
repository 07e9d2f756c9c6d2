#!/usr/bin/python3
"""Checks several meta-iterations of the few-shot ConvNet in `metac run`
against PyTorch: the whole training loop (conv2d, transductive batch norm,
relu, max pooling, flatten, linear; ProtoNets or second/first-order MAML;
Adam) on fixed episodes and fixed initial parameters.

The model is the Fashion-MNIST example's ConvNet, smaller:
`repeat 2 { x = max_pool2d(relu(batch_norm(conv2d(x, F, kernel = 3,
padding = 1))), 2) }` then `linear(flatten(x), H, name = "head")`, on
[1, 8, 8] images (8 -> 4 -> 2, so the head sees F * 4 features). The
episodes file holds exactly `meta_batch` episodes, so every meta-iteration
sees all of them. After `ITERATIONS` Adam steps the saved parameters must
equal PyTorch's (F.conv2d, F.batch_norm(training=True), F.max_pool2d,
torch.optim.Adam with its default betas and eps) to a relative error below
1e-8 in f64. Several steps make Adam's moments and the parameters' drift
part of the check: a wrong derivative anywhere, a wrong batch-norm
convention or a different optimiser shows up as a growing difference.

Run with Debian's /usr/bin/python3 and its python3-torch.
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from check_safetensors import read_safetensors, write_safetensors  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError as error:
    sys.exit(f"check_convnet_training.py: cannot import torch ({error}); use "
             "/usr/bin/python3 with Debian's python3-torch")

SIZE, BLOCKS, TASKS, ITERATIONS, LR = 8, 2, 3, 4, 0.01
BN_EPS = 1e-5

# name, MAML (steps, inner rate, order) or None for ProtoNets, filters,
# head outputs, ways, shots, query samples per task
CONFIGS = [
    ("protonet_3way", None, 4, 5, 3, 2, 6),
    ("maml2_3way", (2, 0.1, 2), 3, 3, 3, 1, 6),
    ("maml1_2way", (3, 0.2, 1), 5, 2, 2, 2, 4),
]


def forward(params, x):
    for block in range(BLOCKS):
        w, b, gamma, beta = params[4 * block:4 * block + 4]
        x = F.conv2d(x, w, b, padding=1)
        x = F.batch_norm(x, None, None, gamma, beta, training=True, eps=BN_EPS)
        x = F.max_pool2d(F.relu(x), 2)
    return F.linear(x.flatten(1), params[-2], params[-1])


def protonet_loss(params, sx, sy, qx, qy, ways):
    support, query = forward(params, sx), forward(params, qx)
    prototypes = torch.stack([support[sy == k].mean(0) for k in range(ways)])
    logits = -((query[:, None, :] - prototypes[None, :, :]) ** 2).sum(-1)
    return F.cross_entropy(logits, qy)


def maml_loss(params, sx, sy, qx, qy, steps, inner_lr, order):
    fast = list(params)
    for _ in range(steps):
        grads = torch.autograd.grad(F.cross_entropy(forward(fast, sx), sy),
                                    fast, create_graph=order == 2)
        fast = [p - inner_lr * g for p, g in zip(fast, grads)]
    return F.cross_entropy(forward(fast, qx), qy)


def run_config(metac, directory, config, seed):
    name, maml, filters, head, ways, shots, queries = config
    algorithm = ("protonet" if maml is None else
                 "maml {{ steps = {}, inner_lr = {}, order = {} }}".format(*maml))
    generator = torch.Generator().manual_seed(seed)
    rand = lambda *shape: torch.rand(*shape, generator=generator, dtype=torch.float64)

    support = ways * shots
    sx, qx = rand(TASKS, support, 1, SIZE, SIZE), rand(TASKS, queries, 1, SIZE, SIZE)
    sy = torch.stack([torch.arange(ways).repeat(shots)[torch.randperm(support, generator=generator)]
                      for _ in range(TASKS)])
    qy = torch.randint(0, ways, (TASKS, queries), generator=generator)
    episodes = directory / f"{name}.episodes.safetensors"
    write_safetensors(episodes, [
        ("support.x", "F64", list(sx.shape), sx.flatten().tolist()),
        ("support.y", "I64", list(sy.shape), sy.flatten().tolist()),
        ("query.x", "F64", list(qx.shape), qx.flatten().tolist()),
        ("query.y", "I64", list(qy.shape), qy.flatten().tolist())], {})

    # Random batch-norm scales and shifts too, so that their derivatives
    # matter from the first step.
    params, entries, channels = [], [], 1
    for block in range(BLOCKS):
        bound = 1.0 / (channels * 9) ** 0.5
        tensors = [(f"conv2d0.{block}.weight", (rand(filters, channels, 3, 3) * 2 - 1) * bound),
                   (f"conv2d0.{block}.bias", (rand(filters) * 2 - 1) * bound),
                   (f"batch_norm0.{block}.weight", 0.5 + rand(filters)),
                   (f"batch_norm0.{block}.bias", rand(filters) - 0.5)]
        for tensor_name, value in tensors:
            params.append(value)
            entries.append((tensor_name, "F64", list(value.shape), value.flatten().tolist()))
        channels = filters
    features = filters * (SIZE >> BLOCKS) ** 2
    for tensor_name, value in (("head.weight", rand(head, features) * 2 - 1),
                               ("head.bias", rand(head) * 2 - 1)):
        params.append(value / features ** 0.5)
        entries.append((tensor_name, "F64", list(value.shape),
                        params[-1].flatten().tolist()))
    init = directory / f"{name}.init.safetensors"
    write_safetensors(init, entries, {})

    spec = directory / f"{name}.meta"
    spec.write_text("\n".join([
        f"model convnet(x: f64[1, {SIZE}, {SIZE}]) -> f64[{head}] {{",
        f"  repeat {BLOCKS} {{",
        f"    x = max_pool2d(relu(batch_norm(conv2d(x, {filters}, kernel = 3, "
        "padding = 1))), 2)",
        "  }",
        f'  return linear(flatten(x), {head}, name = "head")',
        "}",
        f'tasks t = episodes {{ path = "{episodes.name}", ways = {ways} }}',
        f"train {name} {{ model = convnet, tasks = t, loss = cross_entropy, "
        f"algorithm = {algorithm}, optimizer = adam {{ lr = {LR} }}, "
        f"meta_batch = {TASKS}, iterations = {ITERATIONS} }}", ""]))
    saved = directory / f"{name}.out.safetensors"
    subprocess.run([metac, "run", str(spec), "--quiet", f"--init-params={init}",
                    f"--save-params={saved}"], check=True, stdout=subprocess.DEVNULL)
    *_, tensors = read_safetensors(saved)

    params = [p.clone().requires_grad_() for p in params]
    optimizer = torch.optim.Adam(params, lr=LR)
    for _ in range(ITERATIONS):
        total = 0
        for t in range(TASKS):
            if maml is None:
                total = total + protonet_loss(params, sx[t], sy[t], qx[t], qy[t], ways)
            else:
                total = total + maml_loss(params, sx[t], sy[t], qx[t], qy[t],
                                          *maml)
        optimizer.zero_grad()
        (total / TASKS).backward()
        optimizer.step()

    # A conv bias feeds batch norm, which subtracts each channel's mean: its
    # exact gradient is zero (so is the ProtoNets head bias: distances do not
    # change when every embedding shifts). Adam divides rounding noise by
    # sqrt(v) + eps, so these move by noise only, differently in each
    # implementation: they must stay within NOISE of their start on both
    # sides instead of agreeing relatively.
    gradient_free = {f"conv2d0.{block}.bias" for block in range(BLOCKS)}
    if maml is None:
        gradient_free.add("head.bias")
    noise = 1e-6 * LR * ITERATIONS
    worst, moved, drift = 0.0, 0.0, 0.0
    for entry, p in zip(entries, params):
        start = torch.tensor(entry[3], dtype=torch.float64)
        expected = p.detach().flatten()
        actual = torch.tensor(tensors[entry[0]][2], dtype=torch.float64)
        if entry[0] in gradient_free:
            drift = max(drift, float((actual - start).abs().max()),
                        float((expected - start).abs().max()))
            continue
        scale = torch.clamp(expected.abs(), min=1e-3 * float(expected.abs().max()) + 1e-300)
        worst = max(worst, float(((actual - expected).abs() / scale).max()))
        moved = max(moved, float((expected - start).abs().max()))
    # The other parameters must have moved (Adam moves each by about lr per
    # step).
    if moved < 0.5 * LR or drift > noise:
        worst = float("inf")
    return worst, drift, noise


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--metac", default="metac")
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for config in CONFIGS:
            worst, drift, noise = run_config(args.metac, pathlib.Path(tmp), config, seed=29)
            status = "ok" if worst < 1e-8 else "FAILED"
            failures += status != "ok"
            print(f"{config[0]}: {ITERATIONS} Adam steps, max relative error "
                  f"{worst:.2e} (tolerance 1e-08), gradient-free biases drift "
                  f"{drift:.1e} (bound {noise:.0e}) {status}")
    print(f"{len(CONFIGS) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
