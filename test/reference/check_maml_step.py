#!/usr/bin/python3
"""Checks metac's MAML meta-gradient step against PyTorch.

For each configuration below (MLPs of odd sizes with tanh or ReLU, MAML
order 2 and order 1 with several inner steps, f64 and f32, MSE on sinusoid
tasks and cross-entropy on fixed episodes), writes a spec with
`optimizer = sgd { lr = 1.0 }`, compiles it with `metac --compile-to=autodiff`
(expand, batched and autodiff phases), evaluates the step function
`@<train>.step` on the reference interpreter with `metac-eval` (seeded random
parameters and task batch), and recomputes the same step from the printed
inputs with PyTorch: per task, the inner SGD steps with
`torch.autograd.grad(..., create_graph=(order == 2))`, the query loss, the
mean over tasks, its gradient with respect to the initial parameters, and
theta - 1.0 * grad. The new parameters, the meta-loss and the update
guard's squared norm of each meta-gradient (the step's last result) must
agree to a relative error below 1e-9 (f64) or 1e-4 (f32).

With --precision=bf16 or fp16 the specs compile with that precision (the
model computes in 16 bits, parameters and updates stay in their type) and
the meta-gradient (the parameters before minus after the step, all of them
as one vector) is compared with the f64 reference by its normwise error
||g - g_ref|| / ||g_ref||.
How far a 16-bit meta-gradient may be from the exact one depends on the
problem (second-order terms of several inner steps cancel, and the rounding
of each op is amplified), so the bound is stated against PyTorch doing the
same: the same step with the model computing in torch.bfloat16 (or
float16) from the same parameters (PyTorch's CPU kernels also compute each
16-bit op in f32 and round its result). metac's error may be at most twice
PyTorch's, or one unit in the 16-bit type's last place (2^-8 for bf16,
2^-11 for fp16) where PyTorch's is smaller than that; the meta-loss is held
to the same bound.

Run with Debian's /usr/bin/python3 and its python3-torch.
"""

import argparse
import json
import pathlib
import struct
import subprocess
import sys
import tempfile

try:
    import torch
except ImportError as error:
    sys.exit(
        f"check_maml_step.py: error: cannot import torch ({error}); install "
        "Debian's python3-torch (scripts/setup.sh) and run this script with "
        "/usr/bin/python3"
    )

# name, hidden sizes, activation, inner steps, inner lr, order, dtype, loss,
# and optionally the outer gradient's clip_norm (clipped with PyTorch's
# torch.nn.utils.clip_grad_norm_ on the reference side)
CONFIGS = [
    ("relu_order2", [7, 5], "relu", 1, 0.01, 2, "f64", "mse"),
    ("tanh_order2_3steps", [9, 3], "tanh", 3, 0.1, 2, "f64", "mse"),
    ("tanh_order1_3steps", [9, 3], "tanh", 3, 0.1, 1, "f64", "mse"),
    ("relu_order1_2steps", [11], "relu", 2, 0.05, 1, "f64", "mse"),
    ("tanh_order2_f32", [7, 5], "tanh", 2, 0.1, 2, "f32", "mse"),
    ("relu_order2_xent", [6], "relu", 2, 0.2, 2, "f64", "cross_entropy"),
    ("tanh_order2_clipped", [7, 5], "tanh", 2, 0.1, 2, "f64", "mse", 0.05),
    ("relu_order2_clipped_f32", [9], "relu", 1, 0.1, 2, "f32", "mse", 0.02),
]
META_BATCH, SUPPORT, QUERY, FEATURES, CLASSES = 3, 5, 4, 3, 3


def write_episodes(path, dtype):
    """A safetensors file with the shapes the spec compiles against (metac
    reads only the header at compile time; the step takes its batch as
    arguments)."""
    tensors = {
        "support.x": ("F64" if dtype == "f64" else "F32", [2, SUPPORT, FEATURES]),
        "support.y": ("I64", [2, SUPPORT]),
        "query.x": ("F64" if dtype == "f64" else "F32", [2, QUERY, FEATURES]),
        "query.y": ("I64", [2, QUERY]),
    }
    header, offset = {}, 0
    for name, (dt, shape) in tensors.items():
        size = 8 if dt in ("F64", "I64") else 4
        count = 1
        for d in shape:
            count *= d
        header[name] = {"dtype": dt, "shape": shape,
                        "data_offsets": [offset, offset + count * size]}
        offset += count * size
    blob = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + bytes(offset))


def write_spec(directory, config, output_scale=1.0):
    name, hidden, activation, steps, lr, order, dtype, loss = config[:8]
    clip = f", clip_norm = {config[8]}" if len(config) > 8 else ""
    if loss == "mse":
        features, out = 1, 1
        tasks = (f"tasks t = sinusoid {{ support = {SUPPORT}, query = {QUERY}, "
                 f"dtype = {dtype} }}")
    else:
        features, out = FEATURES, CLASSES
        write_episodes(directory / "episodes.safetensors", dtype)
        tasks = 'tasks t = episodes { path = "episodes.safetensors" }'
    lines = [f"model m(x: {dtype}[{features}]) -> {dtype}[{out}] {{", "  h = x"]
    for i, width in enumerate(hidden):
        lines.append(f'  h = {activation}(linear(h, {width}, name = "l{i}"))')
    scale = f"{output_scale!r} * " if output_scale != 1.0 else ""
    lines.append('  return %slinear(h, %d, name = "out")' % (scale, out))
    lines.append("}")
    lines.append(tasks)
    lines.append(
        f"train {name} {{ model = m, tasks = t, loss = {loss}, "
        f"algorithm = maml {{ steps = {steps}, inner_lr = {lr}, order = {order} }}, "
        f"optimizer = sgd {{ lr = 1.0{clip} }}, meta_batch = {META_BATCH}, iterations = 1 }}")
    spec = directory / f"{name}.meta"
    spec.write_text("\n".join(lines) + "\n")
    return spec


def tensor(entry, dtype):
    if entry.get("integer"):
        return torch.tensor(entry["values"], dtype=torch.int64).reshape(entry["shape"])
    return torch.tensor(entry["values"], dtype=dtype).reshape(entry["shape"])


def torch_step(config, inputs, reference_f64=False, low=None, loss_scale=1.0,
               output_scale=1.0):
    """One meta-step in PyTorch: in the spec's type, in f64 with
    `reference_f64`, or with the model computing in the 16-bit type `low`
    (parameters, losses and updates in the spec's type). `loss_scale`
    multiplies the meta-loss before its gradient is taken and divides the
    gradients after (what torch.cuda.amp.GradScaler does); `output_scale`
    multiplies the model's output (in its type)."""
    _, hidden, activation, steps, lr, order, dtype, loss_kind = config[:8]
    dt = torch.float64 if dtype == "f64" or reference_f64 else torch.float32
    n = 2 * (len(hidden) + 1)
    params = [tensor(e, dt).requires_grad_() for e in inputs[:n]]
    # The batch is last (a loss scale, when there is one, comes before it:
    # it changes nothing in exact arithmetic).
    sx, sy, qx, qy = [tensor(e, dt) for e in inputs[-4:]]
    act = torch.relu if activation == "relu" else torch.tanh

    # bf16: PyTorch's own bf16 kernels. fp16: PyTorch 1.13 has no CPU
    # half-precision products, so each op computes in f32 on values rounded
    # to f16 and its result is rounded to f16 (the casts' derivatives round
    # the cotangents the same way).
    if low is torch.float16:
        def r(t):
            return t.to(low).float()
        linear = lambda h, w, b: r(torch.nn.functional.linear(h, w, b))
        activation = lambda h: r(act(h))
        cast = r
    else:
        linear, activation = torch.nn.functional.linear, act
        cast = (lambda t: t.to(low)) if low is not None else (lambda t: t)

    def model(p, x):
        p, h = [cast(q) for q in p], cast(x)
        for i in range(0, n - 2, 2):
            h = activation(linear(h, p[i], p[i + 1]))
        y = linear(h, p[-2], p[-1])
        if output_scale != 1.0:
            y = cast(output_scale * y) if low is torch.float16 else output_scale * y
        return y.to(dt)

    def loss(prediction, target):
        if loss_kind == "mse":
            return torch.nn.functional.mse_loss(prediction, target)
        return torch.nn.functional.cross_entropy(prediction, target)

    query_losses = []
    for t in range(sx.shape[0]):
        fast = params
        for _ in range(steps):
            inner = loss(model(fast, sx[t]), sy[t])
            grads = torch.autograd.grad(inner, fast, create_graph=(order == 2))
            fast = [p - lr * g for p, g in zip(fast, grads)]
        query_losses.append(loss(model(fast, qx[t]), qy[t]))
    meta_loss = torch.stack(query_losses).mean()
    grads = torch.autograd.grad(meta_loss * loss_scale, params)
    grads = [g / loss_scale for g in grads]
    norms = torch.stack([(g.double() ** 2).sum() for g in grads])
    if len(config) > 8:
        # clip_grad_norm_ clips the .grad of what it is given.
        holders = [torch.zeros_like(g, requires_grad=True) for g in grads]
        for holder, g in zip(holders, grads):
            holder.grad = g.detach().clone()
        torch.nn.utils.clip_grad_norm_(holders, config[8])
        grads = [holder.grad for holder in holders]
    new_params = [(p - 1.0 * g).detach() for p, g in zip(params, grads)]
    return new_params, meta_loss.detach(), norms


def normwise_error(actual, expected):
    return float((actual - expected).norm() / expected.norm().clamp(min=1e-300))


def relative_error(actual, expected):
    scale = torch.clamp(expected.abs(), min=1e-3 * float(expected.abs().max()) + 1e-300)
    return float(((actual - expected).abs() / scale).max())


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--metac", default="metac")
    parser.add_argument("--metac-eval", default="metac-eval")
    parser.add_argument("--seeds", default="1,2")
    parser.add_argument("--metac-flag", action="append", default=[],
                        help="an extra metac option (e.g. --remat=steps)")
    parser.add_argument("--precision", choices=["bf16", "fp16"],
                        help="compile with this precision and compare the "
                        "meta-gradients with the f64 reference")
    parser.add_argument("--loss-scale", choices=["dynamic", "off"],
                        help="metac's --loss-scale (default: dynamic for "
                        "fp16); the PyTorch peer scales its meta-loss by "
                        "1024 when metac does (metac-eval's scale)")
    parser.add_argument("--output-scale", type=float, default=1.0,
                        help="multiply every model's output by this (small: "
                        "the cotangents in the model are as small, where "
                        "fp16 underflows without loss scaling)")
    args = parser.parse_args()
    if args.precision:
        args.metac_flag.append(f"--precision={args.precision}")
    if args.loss_scale:
        args.metac_flag.append(f"--loss-scale={args.loss_scale}")
    scaled = (args.loss_scale == "dynamic" or
              (args.precision == "fp16" and args.loss_scale != "off"))
    summary = []
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        directory = pathlib.Path(tmp)
        for config in CONFIGS:
            name, dtype = config[0], config[6]
            spec = write_spec(directory, config, args.output_scale)
            step = directory / f"{name}.mlir"
            subprocess.run([args.metac, str(spec), "--compile-to=autodiff",
                            *args.metac_flag, "-o", str(step)], check=True)
            for seed in args.seeds.split(","):
                result = subprocess.run(
                    [args.metac_eval, str(step), f"--entry={name}.step",
                     f"--seed={seed}"], capture_output=True, text=True)
                if result.returncode:
                    print(f"{name} seed {seed}: metac-eval failed:\n{result.stderr}")
                    failures += 1
                    continue
                data = json.loads(result.stdout)
                inputs, outputs = data["inputs"], data["outputs"]
                n = 2 * (len(config[1]) + 1)
                expected_params, expected_loss, expected_norms = torch_step(
                    config, inputs, reference_f64=bool(args.precision),
                    output_scale=args.output_scale)
                dt = torch.float64 if dtype == "f64" else torch.float32
                errors = [relative_error(tensor(outputs[i], torch.float64),
                                         expected_params[i].double())
                          for i in range(n)]
                errors.append(relative_error(tensor(outputs[-2], torch.float64),
                                             expected_loss.double()))
                errors.append(relative_error(tensor(outputs[-1], torch.float64),
                                             expected_norms))
                tolerance = 1e-9 if dtype == "f64" else 1e-4
                if args.precision:
                    # The meta-gradient is what the step subtracts (lr 1).
                    low = (torch.bfloat16 if args.precision == "bf16"
                           else torch.float16)
                    peer_params, peer_loss, _ = torch_step(
                        config, inputs, low=low,
                        loss_scale=1024.0 if scaled else 1.0,
                        output_scale=args.output_scale)
                    mine, theirs, exact = [], [], []
                    for i in range(n):
                        before = tensor(inputs[i], torch.float64).flatten()
                        exact.append(before - expected_params[i].double().flatten())
                        mine.append(before - tensor(outputs[i], torch.float64).flatten())
                        theirs.append(before - peer_params[i].double().flatten())
                    exact = torch.cat(exact)
                    errors = [normwise_error(torch.cat(mine), exact)]
                    summary.append(errors[0])
                    peer = [normwise_error(torch.cat(theirs), exact)]
                    errors.append(relative_error(
                        tensor(outputs[-2], torch.float64),
                        expected_loss.double()))
                    peer.append(relative_error(peer_loss.double(),
                                               expected_loss.double()))
                    ulp = 2.0 ** -8 if args.precision == "bf16" else 2.0 ** -11
                    tolerance = 2 * max(max(peer), ulp / 2)
                    label = f"{name} (PyTorch {args.precision} {max(peer):.2e})"
                worst = max(errors)
                status = "ok" if worst < tolerance else "FAILED"
                failures += status != "ok"
                if not args.precision:
                    label = name
                print(f"{label} seed {seed}: max relative error {worst:.2e} "
                      f"(tolerance {tolerance:.0e}) {status}")
    if summary:
        summary.sort()
        print(f"median meta-gradient error {summary[len(summary) // 2]:.2e} "
              f"({'with' if scaled else 'without'} loss scaling)")
    print(f"{len(CONFIGS) * len(args.seeds.split(',')) - failures} passed, "
          f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
