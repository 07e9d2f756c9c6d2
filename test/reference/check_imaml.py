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
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from mlp_episodes import MlpEpisodes, torch, worst_error  # noqa: E402

# name, hidden, activation, steps, inner lr, lambda, loss
CONFIGS = [
    ("imaml_tanh_3steps", [3], "tanh", 3, 0.1, 2.0, "mse"),
    ("imaml_tanh_8steps", [4], "tanh", 8, 0.05, 1.0, "mse"),
    ("imaml_tanh_xent", [3], "tanh", 2, 0.1, 4.0, "cross_entropy"),
]


def run_config(metac, directory, config, seed):
    name, hidden, activation, steps, lr, lam, loss_kind = config
    e = MlpEpisodes(directory, name, hidden, activation, "f64", loss_kind, seed,
                    features=2)
    count = sum(p.numel() for p in e.params)
    tensors = e.run(metac, f"imaml {{ steps = {steps}, inner_lr = {lr}, "
                           f"lambda = {lam}, cg_steps = {count + 5} }}")
    shapes = [p.shape for p in e.params]

    def unflatten(flat):
        out, at = [], 0
        for shape in shapes:
            n = int(torch.tensor(shape).prod())
            out.append(flat[at:at + n].reshape(shape))
            at += n
        return out

    theta = torch.cat([p.flatten() for p in e.params])
    total = torch.zeros_like(theta)
    for t in range(e.tasks):
        def support_loss(flat):
            return e.loss(e.model(unflatten(flat), e.sx[t]), e.sy[t])

        def query_loss(flat):
            return e.loss(e.model(unflatten(flat), e.qx[t]), e.qy[t])

        phi = theta.clone()
        for _ in range(steps):
            phi_ = phi.clone().requires_grad_()
            g, = torch.autograd.grad(support_loss(phi_), phi_)
            phi = phi - lr * (g + lam * (phi - theta))
        phi_ = phi.clone().requires_grad_()
        v, = torch.autograd.grad(query_loss(phi_), phi_)
        hessian = torch.autograd.functional.hessian(support_loss, phi)
        a = torch.eye(count, dtype=e.dt) + hessian / lam
        total += torch.linalg.solve(a, v)
    expected = unflatten(theta - total / e.tasks)
    return worst_error(list(zip(e.names, expected)), tensors)


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
