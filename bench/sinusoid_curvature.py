#!/usr/bin/python3
"""Why a MAML sinusoid model diverges when adapted for more steps than it
was trained for: the largest eigenvalue of the support loss's Hessian at
the meta-learned initialisation, against 2 / inner_lr (200 for the
example's 0.01), above which plain gradient descent is unstable along that
direction.

For each parameter file (metac's --save-params or
bench/maml_sinusoid_torch.py's --save-params, metac's names), samples
`--tasks` held-out tasks as bench/maml_sinusoid_torch.py's evaluation does
and reports the median and largest lambda_max by power iteration on
Hessian-vector products (double backward in PyTorch), over all of them and
over the large-amplitude ones (support values above 4.5 in magnitude), and how many exceed 2 / inner_lr.

  /usr/bin/python3 bench/sinusoid_curvature.py FILE... [--seed S] [--tasks N]
"""
import argparse
import math
import pathlib
import statistics
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import maml_sinusoid_torch as reference  # noqa: E402


def top_eigenvalue(params, x, y, iterations=50):
    loss = ((reference.forward(params, x[None]) - y[None]) ** 2).mean()
    grads = torch.autograd.grad(loss, params, create_graph=True)
    generator = torch.Generator().manual_seed(0)
    v = [torch.randn(p.shape, generator=generator, dtype=p.dtype) for p in params]
    value = 0.0
    for _ in range(iterations):
        norm = math.sqrt(sum((a * a).sum().item() for a in v))
        v = [a / norm for a in v]
        hv = torch.autograd.grad(grads, params, v, retain_graph=True)
        value = sum((a * b).sum().item() for a, b in zip(v, hv))
        v = [h.detach() for h in hv]
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--seed", type=int, default=1,
                        help="tasks of the evaluation of this seed")
    parser.add_argument("--tasks", type=int, default=100)
    args = parser.parse_args()
    limit = 2 / reference.INNER_LR
    print(f"| parameters | tasks | median lambda_max | largest | above {limit:g} |")
    print("|---|---|---|---|---|")
    for path in args.files:
        params = [p.detach().requires_grad_() for p in
                  reference.init_params(torch.Generator().manual_seed(0))]
        reference.load_params(path, params)
        generator = torch.Generator().manual_seed(args.seed + 1000003)
        tasks = []
        while len(tasks) < args.tasks:
            sx, sy, _, _ = reference.sample(generator, reference.META_BATCH)
            amplitude = (sy.abs().amax(dim=(1, 2)))
            tasks += [(amplitude[i].item(), sx[i], sy[i]) for i in range(len(sx))]
        tasks = tasks[:args.tasks]
        values = [(a, top_eigenvalue(params, x, y)) for a, x, y in tasks]
        for name, group in [("all", values),
                            ("large amplitude (support max abs y > 4.5)",
                             [v for v in values if v[0] > 4.5])]:
            if not group:
                continue
            lams = [v[1] for v in group]
            print(f"| {pathlib.Path(path).stem} | {name}: {len(lams)} | "
                  f"{statistics.median(lams):.1f} | {max(lams):.1f} | "
                  f"{sum(l > limit for l in lams)} |")


if __name__ == "__main__":
    main()
