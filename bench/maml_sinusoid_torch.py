#!/usr/bin/python3
"""The MAML paper's sinusoid benchmark in PyTorch: the reference that metac's
`examples/sinusoid.meta` is compared with, for quality and speed.

Setting (Finn et al., 2017): a 1-40-40-1 ReLU MLP, K = 10 support and 10
query samples per task, meta-batch 25, one inner SGD step of 0.01, Adam 1e-3
outer, second-order meta-gradients (torch.autograd.grad with
create_graph=True). By default tasks are processed one at a time, as
learn2learn and higher do; `--batched` batches them with bmm, as metac does. PyTorch's default
initialisation (uniform fan-in bounds). Evaluation: mean squared error on
the query set of `--eval-tasks` held-out tasks (the same tasks for every
step count) after each of `--eval-steps` adaptation steps, reported as metac
reports it: the mean and 95% confidence interval over the tasks that stayed
finite and below `--diverge-above`, the median over all, and the number of
tasks that diverged.

`--save-params` writes the trained parameters with metac's names;
`--load-params` evaluates (or continues from) a file written by metac or by
this script, so either framework's model can be scored by the other.
`--json` writes the evaluation as one JSON object.

Run with Debian's /usr/bin/python3 and its python3-torch:
  /usr/bin/python3 bench/maml_sinusoid_torch.py --iterations 20000
"""

import argparse
import json
import math
import pathlib
import sys
import time

try:
    import torch
except ImportError as error:
    sys.exit(f"maml_sinusoid_torch.py: cannot import torch ({error}); use "
             "/usr/bin/python3 with Debian's python3-torch")

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "test" / "reference"))
from check_safetensors import read_safetensors, write_safetensors  # noqa: E402

META_BATCH, SUPPORT, QUERY, INNER_LR, HIDDEN = 25, 10, 10, 0.01, 40
PARAM_NAMES = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias",
               "out.weight", "out.bias"]


def sample(generator, tasks):
    amplitude = torch.empty(tasks, 1, 1).uniform_(0.1, 5.0, generator=generator)
    phase = torch.empty(tasks, 1, 1).uniform_(0.0, math.pi, generator=generator)
    x = torch.empty(tasks, SUPPORT + QUERY, 1).uniform_(-5.0, 5.0, generator=generator)
    y = amplitude * torch.sin(x - phase)
    return x[:, :SUPPORT], y[:, :SUPPORT], x[:, SUPPORT:], y[:, SUPPORT:]


def init_params(generator):
    params = []
    for fan_in, fan_out in [(1, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, 1)]:
        bound = 1.0 / math.sqrt(fan_in)
        params.append(torch.empty(fan_out, fan_in).uniform_(-bound, bound, generator=generator))
        params.append(torch.empty(fan_out).uniform_(-bound, bound, generator=generator))
    return [p.requires_grad_() for p in params]


def forward(params, x):
    """x: [T, N, 1]; params either shared ([out, in]) or per task ([T, out, in])."""
    h = x
    for i in range(0, len(params), 2):
        w, b = params[i], params[i + 1]
        if w.dim() == 2:
            h = h @ w.t() + b
        else:
            h = torch.bmm(h, w.transpose(1, 2)) + b.unsqueeze(1)
        if i < len(params) - 2:
            h = torch.relu(h)
    return h


def task_losses(params, x, y):
    return ((forward(params, x) - y) ** 2).mean(dim=(1, 2))


def adapt(params, x, y, steps, create_graph):
    tasks = x.shape[0]
    fast = [p.unsqueeze(0).expand(tasks, *p.shape) for p in params]
    for _ in range(steps):
        loss = task_losses(fast, x, y).sum()  # per-task gradients
        grads = torch.autograd.grad(loss, fast, create_graph=create_graph)
        fast = [f - INNER_LR * g for f, g in zip(fast, grads)]
    return fast


def meta_step(params, optimizer, batch, batched):
    sx, sy, qx, qy = batch
    if batched:
        fast = adapt(params, sx, sy, 1, create_graph=True)
        meta_loss = task_losses(fast, qx, qy).mean()
    else:
        # The usual implementation (learn2learn, higher): one task at a time.
        total = 0
        for t in range(sx.shape[0]):
            loss = ((forward(params, sx[t:t + 1]) - sy[t:t + 1]) ** 2).mean()
            grads = torch.autograd.grad(loss, params, create_graph=True)
            fast = [p - INNER_LR * g for p, g in zip(params, grads)]
            total = total + ((forward(fast, qx[t:t + 1]) - qy[t:t + 1]) ** 2).mean()
        meta_loss = total / sx.shape[0]
    optimizer.zero_grad()
    meta_loss.backward()
    optimizer.step()
    return meta_loss.item()


def save_params(path, params):
    write_safetensors(pathlib.Path(path), [
        (name, "F32", list(p.shape), p.detach().cpu().flatten().tolist())
        for name, p in zip(PARAM_NAMES, params)], {})


def load_params(path, params):
    *_, tensors = read_safetensors(pathlib.Path(path))
    with torch.no_grad():
        for name, p in zip(PARAM_NAMES, params):
            if name not in tensors or tensors[name][1] != list(p.shape):
                sys.exit(f"{path}: no tensor '{name}' of shape {list(p.shape)}")
            p.copy_(torch.tensor(tensors[name][2]).reshape(p.shape))


def evaluate(params, seed, count, steps, threshold):
    """Per-task query losses after `steps` steps on `count` tasks (the same
    tasks for every `steps`: the generator starts from `seed`), summarised
    over the tasks that did not diverge."""
    generator = torch.Generator().manual_seed(seed)
    losses = []
    while len(losses) < count:
        sx, sy, qx, qy = [t.to(params[0].device)
                          for t in sample(generator, META_BATCH)]
        with torch.enable_grad():
            fast = adapt(params, sx, sy, steps, create_graph=False)
        losses.extend(task_losses(fast, qx, qy).detach().tolist())
    losses = torch.tensor(losses[:count], dtype=torch.float64)
    kept = losses[torch.isfinite(losses) & (losses <= threshold)]
    mean = kept.mean().item() if len(kept) else float("nan")
    ci = 1.96 * kept.std().item() / math.sqrt(len(kept)) if len(kept) > 1 else 0.0
    finite = losses[torch.isfinite(losses)]
    # The median over all tasks, a diverged one counting as +infinity.
    ordered = torch.cat([finite, torch.full((count - len(finite),), math.inf,
                                            dtype=torch.float64)]).sort().values
    return {"steps": steps, "tasks": count, "loss": mean, "loss_ci95": ci,
            "median": ordered[(count - 1) // 2].item(),
            "diverged": count - len(kept),
            "nonfinite": count - len(finite), "threshold": threshold}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--eval-tasks", type=int, default=600)
    parser.add_argument("--batched", action="store_true",
                        help="batch the tasks with bmm instead of looping "
                             "over them")
    parser.add_argument("--device", default="cpu",
                        help="where the meta-iterations run (cpu, cuda); "
                             "tasks are drawn on the CPU as before, then moved")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch.set_num_threads (0: PyTorch's default)")
    parser.add_argument("--eval-steps", default="1,10",
                        help="comma-separated adaptation step counts")
    parser.add_argument("--diverge-above", type=float, default=100.0,
                        help="a task whose query loss is above this (or "
                             "not finite) counts as diverged")
    parser.add_argument("--save-params", help="write the trained parameters "
                        "(safetensors, metac's names)")
    parser.add_argument("--load-params", help="start from (or, with "
                        "--iterations 0, evaluate) these parameters")
    parser.add_argument("--json", help="write the evaluation to this file")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    generator = torch.Generator().manual_seed(args.seed)
    device = torch.device(args.device)
    params = [p.detach().to(device).requires_grad_()
              for p in init_params(generator)]
    if args.load_params:
        load_params(args.load_params, params)
    optimizer = torch.optim.Adam(params, lr=1e-3)
    times = []
    for iteration in range(1, args.iterations + 1):
        batch = [t.to(device) for t in sample(generator, META_BATCH)]
        begin = time.perf_counter()
        loss = meta_step(params, optimizer, batch, args.batched)
        times.append(time.perf_counter() - begin)
        if iteration % max(1, args.iterations // 10) == 0:
            print(f"iteration {iteration} meta-loss {loss:.5f}", file=sys.stderr)
    per_iteration = sum(times[1:]) / max(1, len(times) - 1)
    variant = "batched" if args.batched else "per-task loop"
    if args.iterations:
        print(f"pytorch ({variant}): {args.iterations} meta-iterations, "
              f"{per_iteration * 1e3:.3f} ms/iteration, "
              f"{META_BATCH / per_iteration:.0f} tasks/s, torch {torch.__version__}, "
              f"{torch.get_num_threads()} threads, device {device}")
    if args.save_params:
        save_params(args.save_params, params)
    results = []
    for steps in [int(s) for s in args.eval_steps.split(",")]:
        r = evaluate(params, args.seed + 1000003, args.eval_tasks, steps,
                     args.diverge_above)
        results.append(r)
        line = (f"evaluation after {steps} step{'s' if steps > 1 else ''}: "
                f"mse {r['loss']:.4f} +- {r['loss_ci95']:.4f} (95% CI), "
                f"median {r['median']:.4f}, {args.eval_tasks} tasks")
        if r["diverged"]:
            line += (f", {r['diverged']} diverged (non-finite or above "
                     f"{args.diverge_above:g}) and left out of the mean")
        print(line)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(
            {"seed": args.seed, "iterations": args.iterations,
             "threads": torch.get_num_threads(), "evaluation": results}) + "\n")


if __name__ == "__main__":
    main()
