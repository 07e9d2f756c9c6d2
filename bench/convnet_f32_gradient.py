#!/usr/bin/python3
"""How exact is one f32 meta-gradient of the Fashion-MNIST MAML ConvNet?

The example's configuration (four conv / batch norm / relu / max pool
blocks of 32 filters on [1, 28, 28], 5-way 1-shot 75 query, five inner
steps of 0.4, second order, four tasks) on random episodes and
parameters: the meta-gradient in f64 by PyTorch is the reference; printed
per parameter, the relative error (2-norm) of PyTorch's f32 gradient, of
metac's f32 gradient and of metac's f64 gradient (metac's from one
`sgd { lr = 2^20 }` meta-iteration of `metac run`, divided by the rate). The conv biases, whose
exact gradient is zero (batch norm follows), show rounding noise only.

  /usr/bin/python3 bench/convnet_f32_gradient.py [--metac build/bin/metac] [--seed 3] [--steps 5]
"""
import argparse, pathlib, subprocess, sys, tempfile
import torch, torch.nn.functional as F
root = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(root / "test" / "reference"))
from check_safetensors import read_safetensors, write_safetensors  # noqa: E402
parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--metac", default=str(root / "build" / "bin" / "metac"))
parser.add_argument("--seed", type=int, default=3)
parser.add_argument("--steps", type=int, default=5, help="inner steps (the example's: 5)")
args = parser.parse_args()
d = pathlib.Path(tempfile.mkdtemp())
SIZE, BLOCKS, TASKS = 28, 4, 4
# The gradient is read back as (start - updated) / lr. With lr = 1 the f32
# subtraction would add rounding of the order of 6e-8 |start|, which for the
# batch-norm weights (1) is as large as 1e-4 of their gradient: a power of
# two as large as this makes lr * gradient exact and dominant.
SCALE = 2.0 ** 20
filters, head, ways, shots, queries = 32, 5, 5, 1, 75
g = torch.Generator().manual_seed(args.seed)
rand = lambda *s: torch.rand(*s, generator=g, dtype=torch.float64)
sx, qx = rand(TASKS, ways*shots, 1, SIZE, SIZE), rand(TASKS, queries, 1, SIZE, SIZE)
sy = torch.arange(ways).repeat(TASKS, 1)
qy = torch.randint(0, ways, (TASKS, queries), generator=g)
params, names, ch = [], [], 1
for b in range(BLOCKS):
    bound = 1 / (ch*9) ** 0.5
    params += [(rand(filters, ch, 3, 3)*2-1)*bound, (rand(filters)*2-1)*bound, torch.ones(filters), torch.zeros(filters)]
    names += [f"conv2d0.{b}.weight", f"conv2d0.{b}.bias", f"batch_norm0.{b}.weight", f"batch_norm0.{b}.bias"]
    ch = filters
params += [(rand(head, filters)*2-1)/filters**0.5, (rand(head)*2-1)/filters**0.5]
names += ["head.weight", "head.bias"]
def fwd(p, x):
    for b in range(BLOCKS):
        w, bb, ga, be = p[4*b:4*b+4]
        x = F.max_pool2d(F.relu(F.batch_norm(F.conv2d(x, w, bb, padding=1), None, None, ga, be, training=True)), 2)
    return F.linear(x.flatten(1), p[-2], p[-1])
def grads(dtype):
    p = [t.to(dtype).clone().requires_grad_() for t in params]
    total = 0
    for t in range(TASKS):
        fast = list(p)
        for _ in range(args.steps):
            gr = torch.autograd.grad(F.cross_entropy(fwd(fast, sx[t].to(dtype)), sy[t]), fast, create_graph=True)
            fast = [a - 0.4*b for a, b in zip(fast, gr)]
        total = total + F.cross_entropy(fwd(fast, qx[t].to(dtype)), qy[t])
    return [x.detach().double() for x in torch.autograd.grad(total / TASKS, p)]
def metac(dtype):
    st = 'F64' if dtype == 'f64' else 'F32'
    cast = (lambda v: v) if dtype == 'f64' else (lambda v: v.float().double())
    write_safetensors(d/f'ep{dtype}.safetensors', [("support.x", st, list(sx.shape), cast(sx).flatten().tolist()), ("support.y", "I64", list(sy.shape), sy.flatten().tolist()), ("query.x", st, list(qx.shape), cast(qx).flatten().tolist()), ("query.y", "I64", list(qy.shape), qy.flatten().tolist())], {})
    write_safetensors(d/f'init{dtype}.safetensors', [(n, st, list(t.shape), cast(t).flatten().tolist()) for n, t in zip(names, params)], {})
    (d/f'm{dtype}.meta').write_text(f'''model convnet(x: {dtype}[1, {SIZE}, {SIZE}]) -> {dtype}[{head}] {{
  repeat {BLOCKS} {{ x = max_pool2d(relu(batch_norm(conv2d(x, {filters}, kernel = 3, padding = 1))), 2) }}
  return linear(flatten(x), {head}, name = "head")
}}
tasks t = episodes {{ path = "ep{dtype}.safetensors", ways = {ways} }}
train m {{ model = convnet, tasks = t, loss = cross_entropy, algorithm = maml {{ steps = {args.steps}, inner_lr = 0.4, order = 2 }}, optimizer = sgd {{ lr = {SCALE} }}, meta_batch = {TASKS}, iterations = 1 }}
''')
    subprocess.run([args.metac, 'run', str(d/f'm{dtype}.meta'), '--quiet', f'--init-params={d}/init{dtype}.safetensors', f'--save-params={d}/out{dtype}.safetensors'], check=True, stdout=subprocess.DEVNULL)
    *_, ts = read_safetensors(d/f'out{dtype}.safetensors')
    start = [cast(t) for t in params]
    return [(s.flatten() - torch.tensor(ts[n][2], dtype=torch.float64)) / SCALE for n, s in zip(names, start)]
print(f"meta-gradient of the MAML ConvNet ({args.steps} inner steps, seed {args.seed}): relative error against PyTorch f64")
# PyTorch's f32 result depends on its thread count (how its kernels split
# sums), so it is given for one thread and for two.
torch.set_num_threads(1)
exact = grads(torch.float64)
t32 = grads(torch.float32)
torch.set_num_threads(2)
t32x2 = grads(torch.float32)
m64 = metac('f64'); m32 = metac('f32')
print(f"{'parameter':22s} {'|g|':>9s}  {'torch32 1t':>10s} {'torch32 2t':>10s} {'metac32':>9s} {'metac64':>9s}")
for n, e, a, a2, b, c in zip(names, exact, t32, t32x2, m32, m64):
    e = e.flatten(); nrm = e.norm().item() + 1e-30
    err = lambda x: ((x.flatten() - e).norm() / nrm).item()
    print(f"{n:22s} {nrm:9.3e}  {err(a):10.2e} {err(a2):10.2e} {err(b):9.2e} {err(c):9.2e}")
