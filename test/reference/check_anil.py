#!/usr/bin/python3
"""Checks `metac run` (compiled code on the runtime's CPU kernels) against
PyTorch for one outer step of ANIL: MAML whose inner loop adapts only the
head (the output layer, parameters `out.*`) while the body is shared.

For each configuration (MLPs of odd sizes with tanh or ReLU, MAML order 2
and order 1 with several inner steps, MSE and cross-entropy, f64 and f32),
writes fixed episodes and initial parameters (PyTorch state_dict names and
layouts) as safetensors files, runs
`metac run SPEC --iterations 1 --init-params P --save-params Q` with
`optimizer = sgd { lr = 1.0 }`, and compares Q with theta - grad computed by
torch.autograd.grad(..., create_graph=(order == 2)), the inner gradients
taken with respect to the head only, on the same episodes: relative error
below 1e-9 in f64 and 1e-4 in f32.

Run with Debian's /usr/bin/python3 and its python3-torch.
"""

import argparse
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from mlp_episodes import MlpEpisodes, torch, worst_error  # noqa: E402

# name, hidden, activation, steps, inner lr, order, dtype, loss
CONFIGS = [
    ("anil_relu_order2", [7, 5], "relu", 1, 0.1, 2, "f64", "mse"),
    ("anil_tanh_order2_3steps", [9, 3], "tanh", 3, 0.2, 2, "f64", "mse"),
    ("anil_tanh_order1_3steps", [9, 3], "tanh", 3, 0.2, 1, "f64", "mse"),
    ("anil_relu_order2_xent", [6], "relu", 2, 0.3, 2, "f64", "cross_entropy"),
    ("anil_tanh_order2_f32", [7, 5], "tanh", 2, 0.1, 2, "f32", "mse"),
]


def run_config(metac, directory, config, seed):
    name, hidden, activation, steps, lr, order, dtype, loss_kind = config
    e = MlpEpisodes(directory, name, hidden, activation, dtype, loss_kind, seed)
    tensors = e.run(metac, f"anil {{ steps = {steps}, inner_lr = {lr}, "
                           f'order = {order}, head = "out" }}')
    params = [p.clone().requires_grad_() for p in e.params]
    total = 0
    for t in range(e.tasks):
        body, head = params[:-2], params[-2:]
        for _ in range(steps):
            g = torch.autograd.grad(e.loss(e.model(body + head, e.sx[t]), e.sy[t]),
                                    head, create_graph=(order == 2))
            head = [p - lr * gi for p, gi in zip(head, g)]
        total = total + e.loss(e.model(body + head, e.qx[t]), e.qy[t])
    grads = torch.autograd.grad(total / e.tasks, params)
    return worst_error([(n, p - g) for n, p, g in zip(e.names, params, grads)], tensors)


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
