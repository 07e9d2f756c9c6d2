#!/usr/bin/python3
"""Checks `metac run` (compiled code on the runtime's CPU kernels) against
PyTorch for one outer step of Meta-SGD: MAML whose inner step is
theta - alpha * grad with a learned rate alpha per parameter element
(saved as `lr.<name>`), meta-learned with the parameters.

For each configuration (MLPs of odd sizes with tanh or ReLU, MAML order 2
and order 1 with several inner steps, MSE and cross-entropy, f64 and f32),
writes fixed episodes and initial parameters (PyTorch state_dict names and
layouts) as safetensors files, runs
`metac run SPEC --iterations 1 --init-params P --save-params Q` with
`optimizer = sgd { lr = 1.0 }`, and compares Q with theta - grad computed by
torch.autograd.grad(..., create_graph=(order == 2)) on the same episodes,
for the parameters and the rates: relative error below 1e-9 in f64 and
1e-4 in f32.

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
except ImportError as error:
    sys.exit(f"check_metasgd.py: cannot import torch ({error}); use "
             "/usr/bin/python3 with Debian's python3-torch")

# name, hidden, activation, steps, inner lr, order, dtype, loss
CONFIGS = [
    ("msgd_relu_order2", [7, 5], "relu", 1, 0.1, 2, "f64", "mse"),
    ("msgd_tanh_order2_3steps", [9, 3], "tanh", 3, 0.1, 2, "f64", "mse"),
    ("msgd_tanh_order1_3steps", [9, 3], "tanh", 3, 0.1, 1, "f64", "mse"),
    ("msgd_relu_order2_xent", [6], "relu", 2, 0.2, 2, "f64", "cross_entropy"),
    ("msgd_tanh_order2_f32", [7, 5], "tanh", 2, 0.1, 2, "f32", "mse"),
]
TASKS, SUPPORT, QUERY, FEATURES, CLASSES = 3, 5, 4, 3, 3


def run_config(metac, directory, config, seed):
    name, hidden, activation, steps, lr, order, dtype, loss_kind = config
    dt = torch.float64 if dtype == "f64" else torch.float32
    st = "F64" if dtype == "f64" else "F32"
    generator = torch.Generator().manual_seed(seed)
    out = 1 if loss_kind == "mse" else CLASSES
    features = 1 if loss_kind == "mse" else FEATURES

    def rand(*shape):
        return (torch.rand(*shape, generator=generator, dtype=torch.float64) * 2 - 1).to(dt)

    sx, qx = rand(TASKS, SUPPORT, features), rand(TASKS, QUERY, features)
    if loss_kind == "mse":
        sy, qy = rand(TASKS, SUPPORT, 1), rand(TASKS, QUERY, 1)
        targets = [("support.y", st, list(sy.shape), sy.flatten().tolist()),
                   ("query.y", st, list(qy.shape), qy.flatten().tolist())]
    else:
        sy = torch.randint(0, CLASSES, (TASKS, SUPPORT), generator=generator)
        qy = torch.randint(0, CLASSES, (TASKS, QUERY), generator=generator)
        targets = [("support.y", "I64", list(sy.shape), sy.flatten().tolist()),
                   ("query.y", "I64", list(qy.shape), qy.flatten().tolist())]
    episodes = directory / f"{name}.episodes.safetensors"
    write_safetensors(episodes, [
        ("support.x", st, list(sx.shape), sx.flatten().tolist()),
        ("query.x", st, list(qx.shape), qx.flatten().tolist())] + targets, {})

    sizes = [features] + hidden + [out]
    names = [f"l{i}" for i in range(len(hidden))] + ["out"]
    params, entries = [], []
    for layer, (fan_in, fan_out) in zip(names, zip(sizes, sizes[1:])):
        w, b = rand(fan_out, fan_in), rand(fan_out)
        params += [w, b]
        entries += [(f"{layer}.weight", st, [fan_out, fan_in], w.flatten().tolist()),
                    (f"{layer}.bias", st, [fan_out], b.flatten().tolist())]
    # The learned rates, around the inner learning rate.
    rates, rate_entries = [], []
    for (entry, p) in zip(list(entries), list(params)):
        alpha = (lr * (1 + 0.5 * rand(*p.shape))).to(dt)
        rates.append(alpha)
        rate_entries.append((f"lr.{entry[0]}", st, entry[2],
                             alpha.flatten().tolist()))
    init = directory / f"{name}.init.safetensors"
    write_safetensors(init, entries + rate_entries, {})

    lines = [f"model m(x: {dtype}[{features}]) -> {dtype}[{out}] {{", "  h = x"]
    for i, width in enumerate(hidden):
        lines.append(f'  h = {activation}(linear(h, {width}, name = "l{i}"))')
    lines += [f'  return linear(h, {out}, name = "out")', "}",
              f'tasks t = episodes {{ path = "{episodes.name}" }}',
              f"train {name} {{ model = m, tasks = t, loss = {loss_kind}, "
              f"algorithm = metasgd {{ steps = {steps}, inner_lr = {lr}, order = {order} }}, "
              f"optimizer = sgd {{ lr = 1.0 }}, meta_batch = {TASKS}, iterations = 1 }}"]
    spec = directory / f"{name}.meta"
    spec.write_text("\n".join(lines) + "\n")
    saved = directory / f"{name}.out.safetensors"
    subprocess.run([metac, "run", str(spec), "--iterations=1", "--quiet",
                    f"--init-params={init}", f"--save-params={saved}"],
                   check=True, stdout=subprocess.DEVNULL)
    *_, tensors = read_safetensors(saved)

    act = torch.relu if activation == "relu" else torch.tanh
    params = [p.clone().requires_grad_() for p in params]
    rates = [a.clone().requires_grad_() for a in rates]

    def model(p, x):
        h = x
        for i in range(0, len(p) - 2, 2):
            h = act(torch.nn.functional.linear(h, p[i], p[i + 1]))
        return torch.nn.functional.linear(h, p[-2], p[-1])

    def loss(prediction, target):
        if loss_kind == "mse":
            return torch.nn.functional.mse_loss(prediction, target)
        return torch.nn.functional.cross_entropy(prediction, target)

    total = 0
    for t in range(TASKS):
        fast = params
        for _ in range(steps):
            g = torch.autograd.grad(loss(model(fast, sx[t]), sy[t]), fast,
                                    create_graph=(order == 2))
            fast = [p - a * gi for p, a, gi in zip(fast, rates, g)]
        total = total + loss(model(fast, qx[t]), qy[t])
    grads = torch.autograd.grad(total / TASKS, params + rates)
    worst = 0.0
    for (entry, p, g) in zip(entries + rate_entries, params + rates, grads):
        expected = (p - g).detach().double().flatten()
        actual = torch.tensor(tensors[entry[0]][2], dtype=torch.float64)
        scale = torch.clamp(expected.abs(), min=1e-3 * float(expected.abs().max()) + 1e-300)
        worst = max(worst, float(((actual - expected).abs() / scale).max()))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--metac", default="metac")
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for config in CONFIGS:
            worst = run_config(args.metac, pathlib.Path(tmp), config, seed=5)
            tolerance = 1e-9 if config[6] == "f64" else 1e-4
            status = "ok" if worst < tolerance else "FAILED"
            failures += status != "ok"
            print(f"{config[0]}: max relative error {worst:.2e} "
                  f"(tolerance {tolerance:.0e}) {status}")
    print(f"{len(CONFIGS) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
