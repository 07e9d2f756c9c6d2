#!/usr/bin/python3
"""Checks iMAML's implicit meta-gradient in `metac run` against an
explicit-Hessian solve in PyTorch.

For small MLPs (so the Hessian can be formed), writes fixed episodes and
initial parameters, runs one meta-iteration with `optimizer = sgd { lr =
1.0 }` and five more conjugate-gradient steps than there are parameters
(exact CG would need as many; the extra ones mop up rounding), and
compares the saved parameters with
theta - mean_t x_t, where per task phi_t is `steps` gradient steps of the
proximal support loss L_s(phi) + lambda/2 |phi - theta|^2 and x_t solves
(I + H_t / lambda) x_t = grad L_q(phi_t) with H_t the Hessian of L_s at
phi_t, formed with torch.autograd.functional.hessian and solved with
torch.linalg.solve: relative error below 1e-8 in f64.

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
    sys.exit(f"check_imaml.py: cannot import torch ({error}); use "
             "/usr/bin/python3 with Debian's python3-torch")

# name, hidden, activation, steps, inner lr, lambda, loss
CONFIGS = [
    ("imaml_tanh_3steps", [3], "tanh", 3, 0.1, 2.0, "mse"),
    ("imaml_tanh_8steps", [4], "tanh", 8, 0.05, 1.0, "mse"),
    ("imaml_tanh_xent", [3], "tanh", 2, 0.1, 4.0, "cross_entropy"),
]
TASKS, SUPPORT, QUERY, FEATURES, CLASSES = 3, 5, 4, 2, 3


def run_config(metac, directory, config, seed):
    name, hidden, activation, steps, lr, lam, loss_kind = config
    dt = torch.float64
    generator = torch.Generator().manual_seed(seed)
    out = 1 if loss_kind == "mse" else CLASSES
    features = 1 if loss_kind == "mse" else FEATURES

    def rand(*shape):
        return torch.rand(*shape, generator=generator, dtype=dt) * 2 - 1

    sx, qx = rand(TASKS, SUPPORT, features), rand(TASKS, QUERY, features)
    if loss_kind == "mse":
        sy, qy = rand(TASKS, SUPPORT, 1), rand(TASKS, QUERY, 1)
        targets = [("support.y", "F64", list(sy.shape), sy.flatten().tolist()),
                   ("query.y", "F64", list(qy.shape), qy.flatten().tolist())]
    else:
        sy = torch.randint(0, CLASSES, (TASKS, SUPPORT), generator=generator)
        qy = torch.randint(0, CLASSES, (TASKS, QUERY), generator=generator)
        targets = [("support.y", "I64", list(sy.shape), sy.flatten().tolist()),
                   ("query.y", "I64", list(qy.shape), qy.flatten().tolist())]
    episodes = directory / f"{name}.episodes.safetensors"
    write_safetensors(episodes, [
        ("support.x", "F64", list(sx.shape), sx.flatten().tolist()),
        ("query.x", "F64", list(qx.shape), qx.flatten().tolist())] + targets, {})

    sizes = [features] + hidden + [out]
    names = [f"l{i}" for i in range(len(hidden))] + ["out"]
    params, entries = [], []
    for layer, (fan_in, fan_out) in zip(names, zip(sizes, sizes[1:])):
        w, b = rand(fan_out, fan_in), rand(fan_out)
        params += [w, b]
        entries += [(f"{layer}.weight", "F64", [fan_out, fan_in],
                     w.flatten().tolist()),
                    (f"{layer}.bias", "F64", [fan_out], b.flatten().tolist())]
    init = directory / f"{name}.init.safetensors"
    write_safetensors(init, entries, {})
    count = sum(p.numel() for p in params)

    lines = [f"model m(x: f64[{features}]) -> f64[{out}] {{", "  h = x"]
    for i, width in enumerate(hidden):
        lines.append(f'  h = {activation}(linear(h, {width}, name = "l{i}"))')
    lines += [f'  return linear(h, {out}, name = "out")', "}",
              f'tasks t = episodes {{ path = "{episodes.name}" }}',
              f"train {name} {{ model = m, tasks = t, loss = {loss_kind}, "
              f"algorithm = imaml {{ steps = {steps}, inner_lr = {lr}, "
              f"lambda = {lam}, cg_steps = {count + 5} }}, "
              f"optimizer = sgd {{ lr = 1.0 }}, meta_batch = {TASKS}, "
              "iterations = 1 }"]
    spec = directory / f"{name}.meta"
    spec.write_text("\n".join(lines) + "\n")
    saved = directory / f"{name}.out.safetensors"
    subprocess.run([metac, "run", str(spec), "--iterations=1", "--quiet",
                    f"--init-params={init}", f"--save-params={saved}"],
                   check=True, stdout=subprocess.DEVNULL)
    *_, tensors = read_safetensors(saved)

    act = torch.tanh if activation == "tanh" else torch.relu
    shapes = [p.shape for p in params]

    def unflatten(flat):
        out, at = [], 0
        for shape in shapes:
            n = int(torch.tensor(shape).prod())
            out.append(flat[at:at + n].reshape(shape))
            at += n
        return out

    def model(p, x):
        h = x
        for i in range(0, len(p) - 2, 2):
            h = act(torch.nn.functional.linear(h, p[i], p[i + 1]))
        return torch.nn.functional.linear(h, p[-2], p[-1])

    def loss(prediction, target):
        if loss_kind == "mse":
            return torch.nn.functional.mse_loss(prediction, target)
        return torch.nn.functional.cross_entropy(prediction, target)

    theta = torch.cat([p.flatten() for p in params])
    total = torch.zeros_like(theta)
    for t in range(TASKS):
        def support_loss(flat):
            return loss(model(unflatten(flat), sx[t]), sy[t])

        def query_loss(flat):
            return loss(model(unflatten(flat), qx[t]), qy[t])

        phi = theta.clone()
        for _ in range(steps):
            phi_ = phi.clone().requires_grad_()
            g, = torch.autograd.grad(support_loss(phi_), phi_)
            phi = phi - lr * (g + lam * (phi - theta))
        phi_ = phi.clone().requires_grad_()
        v, = torch.autograd.grad(query_loss(phi_), phi_)
        hessian = torch.autograd.functional.hessian(support_loss, phi)
        a = torch.eye(count, dtype=dt) + hessian / lam
        total += torch.linalg.solve(a, v)
    expected_flat = theta - total / TASKS
    worst = 0.0
    for entry, expected in zip(entries, unflatten(expected_flat)):
        expected = expected.flatten()
        actual = torch.tensor(tensors[entry[0]][2], dtype=dt)
        scale = torch.clamp(expected.abs(),
                            min=1e-3 * float(expected.abs().max()) + 1e-300)
        worst = max(worst, float(((actual - expected).abs() / scale).max()))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--metac", default="metac")
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for config in CONFIGS:
            worst = run_config(args.metac, pathlib.Path(tmp), config, seed=17)
            status = "ok" if worst < 1e-8 else "FAILED"
            failures += status != "ok"
            print(f"{config[0]}: max relative error {worst:.2e} "
                  f"(tolerance 1e-08) {status}")
    print(f"{len(CONFIGS) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
