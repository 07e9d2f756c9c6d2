#!/usr/bin/python3
"""Checks Reptile's outer update in `metac run` against PyTorch.

For each configuration, writes fixed episodes and initial parameters
(safetensors, PyTorch names and layouts), runs one meta-iteration with
`optimizer = sgd { lr = EPS }`, and compares the saved parameters with
theta + EPS * mean_t(phi_t - theta), where phi_t is `steps` SGD steps of
`inner_lr` on task t's support loss, computed with torch.autograd: relative
error below 1e-8 in f64 and 1e-4 in f32.

Run with Debian's /usr/bin/python3 and its python3-torch.
"""

import argparse
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from mlp_episodes import MlpEpisodes, torch, worst_error  # noqa: E402

# name, hidden, activation, steps, inner lr, epsilon, dtype, loss
CONFIGS = [
    ("tanh_1step", [7, 5], "tanh", 1, 0.1, 0.5, "f64", "mse"),
    ("relu_5steps", [9, 3], "relu", 5, 0.05, 1.0, "f64", "mse"),
    ("tanh_3steps_xent", [6], "tanh", 3, 0.2, 0.3, "f64", "cross_entropy"),
    ("tanh_3steps_f32", [7, 5], "tanh", 3, 0.1, 0.5, "f32", "mse"),
]


def run_config(metac, directory, config, seed):
    name, hidden, activation, steps, lr, epsilon, dtype, loss_kind = config
    e = MlpEpisodes(directory, name, hidden, activation, dtype, loss_kind, seed)
    tensors = e.run(metac, f"reptile {{ steps = {steps}, inner_lr = {lr} }}",
                    optimizer=f"sgd {{ lr = {epsilon} }}")
    phis = []
    for t in range(e.tasks):
        fast = [p.clone().requires_grad_() for p in e.params]
        for _ in range(steps):
            g = torch.autograd.grad(e.loss(e.model(fast, e.sx[t]), e.sy[t]), fast)
            fast = [(p - lr * gi).detach().requires_grad_()
                    for p, gi in zip(fast, g)]
        phis.append([p.detach() for p in fast])
    expected = []
    for i, (name, theta) in enumerate(zip(e.names, e.params)):
        mean_phi = sum(phi[i] for phi in phis) / e.tasks
        expected.append((name, theta + epsilon * (mean_phi - theta)))
    return worst_error(expected, tensors)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--metac", default="metac")
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for config in CONFIGS:
            worst = run_config(args.metac, pathlib.Path(tmp), config, seed=9)
            tolerance = 1e-8 if config[6] == "f64" else 1e-4
            status = "ok" if worst < tolerance else "FAILED"
            failures += status != "ok"
            print(f"{config[0]}: max relative error {worst:.2e} "
                  f"(tolerance {tolerance:.0e}) {status}")
    print(f"{len(CONFIGS) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
