#!/usr/bin/python3
"""Few-shot Fashion-MNIST in PyTorch: the reference that metac's
`examples/maml_fashion_mnist.meta` and `examples/protonet_fashion_mnist.meta`
are compared with, for accuracy, speed and memory.

Everything below follows metac's semantics, so that the figures compare:

Data
  The Fashion-MNIST idx files (gzipped, Debian's dataset-fashion-mnist,
  /usr/share/datasets/fashion-mnist by default, `--data-dir`). Pixels are
  value / 255 (no mean subtraction), one sample is [1, 28, 28]. Images are
  kept as uint8 and converted per task.
  Meta-training tasks draw from the TRAIN file's images of `--train-classes`
  (default 0..6); evaluation tasks from the t10k file's images of
  `--test-classes` (default 7, 8, 9; `--eval-split train` uses the train
  file instead).
  A task: `ways` distinct classes chosen at random from the allowed list,
  the i-th chosen class gets label i; per class `shots + query` distinct
  random images, the first `shots` go to the support set, the rest to the
  query set. Support = ways * shots samples, query = ways * query samples,
  both ordered class by class. Defaults: 5-way 1-shot 15 query for
  training, 3-way 1-shot 15 query for evaluation.

Model (metac's `repeat 4 { x = max_pool2d(relu(batch_norm(conv2d(x, F,
kernel = 3, padding = 1))), 2) }` then `linear(flatten(x), 5, name = "head")`)
  conv 3x3, padding 1, with bias; batch norm TRANSDUCTIVE: always the batch
  statistics of the set it is applied to (biased variance, eps 1e-5, no
  running statistics), its weight (init 1) and bias (init 0) learned and,
  for MAML, adapted in the inner loop like every other parameter; relu;
  max pool 2 (28 -> 14 -> 7 -> 3 -> 1, floor); flatten; linear to
  `--head` (= the training ways, 5) outputs. Conv and linear initialisation
  is PyTorch's default: kaiming_uniform(a = sqrt(5)), i.e. weights and
  biases uniform in +-1/sqrt(fan_in) (drawn here from a seeded generator).
  F = `--filters` (default 32 for maml, 64 for protonet).
  The model is purely functional (parameters are a list of tensors,
  F.conv2d / F.batch_norm(training=True) / F.max_pool2d / F.linear), and
  every call applies it to ONE set of ONE task, so batch-norm statistics
  are per task and per set (support and query separately).

MAML (Finn et al., 2017)
  `--steps` (5) inner SGD steps of `--inner-lr` (0.4) on the support
  cross-entropy (mean over samples); the meta-loss is the mean over the
  `--meta-batch` (4) tasks of the query cross-entropy after adaptation;
  `--order 2` differentiates through the inner steps
  (torch.autograd.grad(create_graph=True)), `--order 1` treats the inner
  gradients as constants (first-order MAML). Outer optimiser: Adam,
  `--lr` 1e-3, PyTorch's default betas and eps.
  Evaluation: for each task, plain SGD steps at the inner rate (the
  trajectory is shared, so steps 0, 1, 5, 10 come from one run of 10 steps),
  then accuracy and cross-entropy on the query set. Evaluation tasks may
  have fewer ways than the head has outputs (3 vs 5): all the head's logits
  are used, with labels 0..ways-1, as metac does (same model, labels
  remapped).

Prototypical Networks (Snell et al., 2017)
  The model's output (the `head`'s 5 values, as in metac where the model is
  the embedding) embeds each sample; prototype c_k = mean of the support
  embeddings of class k; logits = -||q - c_k||^2 (squared Euclidean);
  loss = cross-entropy over the query set, averaged over the `--meta-batch`
  (4) tasks. Adam, `--lr` 1e-3. Evaluation: the same, on test tasks.

Reported: the meta-loss during training; per evaluation setting the
accuracy mean over `--eval-tasks` (600) tasks with its 95% confidence
interval (1.96 * sample std / sqrt(n)) and the mean query loss; the time
per meta-iteration (the meta-step only: forward, inner loop, backward and
Adam update; task sampling, i.e. data loading, excluded and reported
apart); the peak resident memory of the process (ru_maxrss, which includes
the dataset, ~55 MB of uint8 images, and torch itself). `--json FILE`
writes the figures as JSON.

`--time-only N` runs 5 warm-up meta-iterations and then N timed ones on
training tasks, task sampling included (as in metac's figure), and prints
one line `torch ms/iteration X peak_rss_mb Y`, for bench/convnet_speed.sh.

Run with Debian's /usr/bin/python3 and its python3-torch:
  /usr/bin/python3 bench/fashion_mnist_torch.py --algorithm maml --iterations 2000
  /usr/bin/python3 bench/fashion_mnist_torch.py --algorithm protonet --iterations 1000
  /usr/bin/python3 bench/fashion_mnist_torch.py --algorithm maml --time-only 20
"""

import argparse
import gzip
import json
import math
import os
import resource
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError as error:
    sys.exit(f"fashion_mnist_torch.py: cannot import torch ({error}); use "
             "/usr/bin/python3 with Debian's python3-torch")

DATA_DIR = "/usr/share/datasets/fashion-mnist"
BN_EPS = 1e-5
WARMUP = 5


# ----------------------------------------------------------------- data


def read_idx(path):
    """A gzipped idx file as a uint8 tensor of its declared shape."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    if raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        sys.exit(f"{path}: not an unsigned-byte idx file")
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    data = torch.frombuffer(bytearray(raw[4 + 4 * dims:]), dtype=torch.uint8)
    return data.reshape(shape)


class Split:
    """The images of one idx file, grouped by class (uint8, [n, 1, 28, 28])."""

    def __init__(self, data_dir, prefix):
        images = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"))
        labels = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
        images = images.reshape(-1, 1, 28, 28)
        self.by_class = {c: images[labels == c].clone() for c in range(10)}


class TaskSampler:
    """N-way K-shot tasks from a Split, restricted to `classes`."""

    def __init__(self, split, classes, ways, shots, query, dtype, generator):
        if ways > len(classes):
            sys.exit(f"{ways}-way tasks need at least {ways} classes, got {classes}")
        for c in classes:
            if shots + query > len(split.by_class[c]):
                sys.exit(f"class {c} has only {len(split.by_class[c])} images")
        self.split, self.classes = split, list(classes)
        self.ways, self.shots, self.query = ways, shots, query
        self.dtype, self.generator = dtype, generator

    def sample(self):
        """One task: (support x, support y, query x, query y)."""
        g = self.generator
        order = torch.randperm(len(self.classes), generator=g)[:self.ways]
        support, query = [], []
        for label, index in enumerate(order.tolist()):
            images = self.split.by_class[self.classes[index]]
            picks = torch.randperm(len(images), generator=g)[:self.shots + self.query]
            chosen = images[picks]
            support.append(chosen[:self.shots])
            query.append(chosen[self.shots:])
        to_float = lambda xs: torch.cat(xs).to(self.dtype) / 255.0
        labels = torch.arange(self.ways)
        return (to_float(support), labels.repeat_interleave(self.shots),
                to_float(query), labels.repeat_interleave(self.query))

    def batch(self, tasks):
        return [self.sample() for _ in range(tasks)]


MASK64 = (1 << 64) - 1
GOLDEN_GAMMA = 0x9E3779B97F4A7C15


def mix64(z):
    """splitmix64's finalizer, as runtime/src/data/Random.h."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def hash_words(words):
    state = 0
    for word in words:
        state = mix64(state ^ mix64((word + GOLDEN_GAMMA) & MASK64))
    return state


class SplitMix64:
    def __init__(self, state):
        self.state = state

    def next(self):
        self.state = (self.state + GOLDEN_GAMMA) & MASK64
        return mix64(self.state)

    def below(self, n):
        """Lemire's unbiased integer in [0, n), as metac's SplitMix64::below."""
        threshold = ((1 << 64) - n) % n
        product = self.next() * n
        while product & MASK64 < threshold:
            product = self.next() * n
        return product >> 64


class MetacTaskStream:
    """metac's own draw (runtime/src/data/Classification.cpp), task for task:
    task i of draw t of split s comes from streams hashed from (seed, s, t,
    i, ...), so `--task-stream metac --seed S` trains on exactly the tasks
    `metac run --seed S` trains on, and evaluates on its evaluation tasks.
    Training draws are t = 0, 1, ... (one per meta-iteration); evaluation
    tasks are indices 0, 1, ... of draw 0 of the evaluation split."""

    def __init__(self, split, classes, ways, shots, query, dtype, seed, split_id):
        self.split, self.classes = split, list(classes)
        self.ways, self.shots, self.query = ways, shots, query
        self.dtype, self.seed, self.split_id = dtype, seed, split_id
        self.draw, self.index = 0, 0

    def task(self, draw, index):
        stream = lambda s: SplitMix64(hash_words(
            [self.seed & MASK64, self.split_id, draw, index, s]))
        classes = list(self.classes)
        random = stream(0)
        for c in range(self.ways):
            j = c + random.below(len(classes) - c)
            classes[c], classes[j] = classes[j], classes[c]
        support, query = [], []
        for c in range(self.ways):
            images = self.split.by_class[classes[c]]
            random, moved, picks = stream(1 + c), {}, []
            for i in range(self.shots + self.query):
                j = i + random.below(len(images) - i)
                picks.append(moved.get(j, j))
                moved[j] = moved.get(i, i)
            chosen = images[torch.tensor(picks)]
            support.append(chosen[:self.shots])
            query.append(chosen[self.shots:])
        to_float = lambda xs: (torch.cat(xs).double() / 255.0).to(self.dtype)
        labels = torch.arange(self.ways)
        return (to_float(support), labels.repeat_interleave(self.shots),
                to_float(query), labels.repeat_interleave(self.query))

    def sample(self):
        """The next evaluation task (consecutive indices of draw 0)."""
        self.index += 1
        return self.task(0, self.index - 1)

    def batch(self, tasks):
        """The next meta-batch: draw t's tasks 0..tasks-1."""
        self.draw += 1
        return [self.task(self.draw - 1, i) for i in range(tasks)]


# ---------------------------------------------------------------- model


def init_params(filters, outputs, dtype, generator):
    """[conv w, conv b, bn weight, bn bias] x 4, then head w, head b."""

    def uniform(shape, fan_in):
        # kaiming_uniform(a=sqrt(5)) gives bound gain * sqrt(3 / fan_in) with
        # gain = sqrt(2 / (1 + 5)): exactly 1 / sqrt(fan_in), as for the bias.
        bound = 1.0 / math.sqrt(fan_in)
        return torch.empty(shape, dtype=dtype).uniform_(-bound, bound, generator=generator)

    params, channels = [], 1
    for _ in range(4):
        fan_in = channels * 9
        params += [uniform((filters, channels, 3, 3), fan_in), uniform((filters,), fan_in),
                   torch.ones(filters, dtype=dtype), torch.zeros(filters, dtype=dtype)]
        channels = filters
    params += [uniform((outputs, filters), filters), uniform((outputs,), filters)]
    return [p.requires_grad_() for p in params]


def param_names():
    """metac's names for init_params' list (the model's state_dict names)."""
    names = []
    for block in range(4):
        names += [f"conv2d0.{block}.weight", f"conv2d0.{block}.bias",
                  f"batch_norm0.{block}.weight", f"batch_norm0.{block}.bias"]
    return names + ["head.weight", "head.bias"]


SAFETENSORS_DTYPES = {"F32": torch.float32, "F64": torch.float64}


def load_params(path, params):
    """Overwrites `params` with the tensors of a safetensors file written by
    metac (`--save-params`), checking names and shapes."""
    with open(path, "rb") as f:
        raw = f.read()
    length = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + length])
    body = bytearray(raw[8 + length:])
    with torch.no_grad():
        for name, param in zip(param_names(), params):
            if name not in header:
                sys.exit(f"{path}: no tensor '{name}'")
            info = header[name]
            begin, end = info["data_offsets"]
            dtype = SAFETENSORS_DTYPES.get(info["dtype"])
            if dtype is None or list(info["shape"]) != list(param.shape):
                sys.exit(f"{path}: '{name}' is {info['dtype']} {info['shape']}, "
                         f"expected {list(param.shape)}")
            values = torch.frombuffer(body[begin:end], dtype=dtype)
            param.copy_(values.reshape(param.shape))


def write_safetensors(path, tensors):
    """`tensors` [(name, tensor)] as a safetensors file (F32, F64 or I64)."""
    tags = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64"}
    header, blobs, offset = {}, [], 0
    for name, tensor in tensors:
        blob = tensor.detach().contiguous().numpy().tobytes()
        header[name] = {"dtype": tags[tensor.dtype], "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


def dump_episodes(path, sampler, count):
    """The next `count` tasks of `sampler` as an episodes file for metac
    (`support.x`, `support.y`, `query.x`, `query.y` with a leading task
    axis): metac evaluates the same tasks in the same order."""
    tasks = [sampler.sample() for _ in range(count)]
    write_safetensors(path, [(name, torch.stack([t[i] for t in tasks]))
                             for i, name in enumerate(
                                 ["support.x", "support.y", "query.x", "query.y"])])


def save_params(path, params):
    """The parameters as a safetensors file with metac's names (f32 or f64 as
    trained), for `metac run --init-params`."""
    write_safetensors(path, list(zip(param_names(), params)))


def forward(params, x):
    """The ConvNet on one set x: [n, 1, 28, 28] -> [n, outputs]."""
    for block in range(4):
        w, b, gamma, beta = params[4 * block:4 * block + 4]
        x = F.conv2d(x, w, b, padding=1)
        # Transductive batch norm: batch statistics, no running statistics.
        x = F.batch_norm(x, None, None, gamma, beta, training=True, eps=BN_EPS)
        x = F.max_pool2d(F.relu(x), 2)
    return F.linear(x.flatten(1), params[16], params[17])


# ----------------------------------------------------------- algorithms


def adapt(params, sx, sy, steps, inner_lr, create_graph, trace=None):
    """`steps` SGD steps on the support cross-entropy. With `trace`, a
    callback trace(step, fast) is called after 0, 1, ..., steps steps."""
    fast = list(params)
    if trace:
        trace(0, fast)
    for step in range(1, steps + 1):
        loss = F.cross_entropy(forward(fast, sx), sy)
        grads = torch.autograd.grad(loss, fast, create_graph=create_graph)
        fast = [p - inner_lr * g for p, g in zip(fast, grads)]
        if trace:
            trace(step, fast)
    return fast


def maml_loss(params, tasks, args):
    total = 0
    for sx, sy, qx, qy in tasks:
        fast = adapt(params, sx, sy, args.steps, args.inner_lr, args.order == 2)
        total = total + F.cross_entropy(forward(fast, qx), qy)
    return total / len(tasks)


def proto_logits(params, sx, sy, qx, ways):
    """-||q - c_k||^2 for the query embeddings q and prototypes c_k."""
    support = forward(params, sx)
    query = forward(params, qx)
    hot = F.one_hot(sy, ways).to(support.dtype)                  # [n, ways]
    prototypes = hot.t() @ support / hot.sum(0).unsqueeze(1)    # [ways, e]
    return -((query.unsqueeze(1) - prototypes.unsqueeze(0)) ** 2).sum(-1)


def protonet_loss(params, tasks, args):
    total = 0
    for sx, sy, qx, qy in tasks:
        total = total + F.cross_entropy(proto_logits(params, sx, sy, qx, args.ways), qy)
    return total / len(tasks)


def meta_step(params, optimizer, tasks, args):
    loss_fn = maml_loss if args.algorithm == "maml" else protonet_loss
    loss = loss_fn(params, tasks, args)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


# ----------------------------------------------------------- evaluation


def mean_ci(values):
    values = torch.tensor(values, dtype=torch.float64)
    n = len(values)
    std = values.std().item() if n > 1 else 0.0
    return values.mean().item(), 1.96 * std / math.sqrt(n)


def evaluate(params, sampler, args):
    """{setting: (accuracy mean, CI, loss mean, loss CI)}; setting is the
    number of adaptation steps for MAML, None for protonet."""
    settings = args.eval_steps if args.algorithm == "maml" else [None]
    accuracy = {s: [] for s in settings}
    losses = {s: [] for s in settings}
    for _ in range(args.eval_tasks):
        sx, sy, qx, qy = sampler.sample()
        if args.algorithm == "maml":
            def record(step, fast):
                if step in accuracy:
                    with torch.no_grad():
                        logits = forward(fast, qx)
                    accuracy[step].append((logits.argmax(1) == qy).double().mean().item())
                    losses[step].append(F.cross_entropy(logits, qy).item())
            adapt([p.detach().requires_grad_() for p in params], sx, sy,
                  max(settings), args.inner_lr, False, trace=record)
        else:
            with torch.no_grad():
                logits = proto_logits(params, sx, sy, qx, sampler.ways)
            accuracy[None].append((logits.argmax(1) == qy).double().mean().item())
            losses[None].append(F.cross_entropy(logits, qy).item())
    return {s: mean_ci(accuracy[s]) + mean_ci(losses[s]) for s in settings}


# ----------------------------------------------------------------- main


def int_list(text):
    return [int(v) for v in text.split(",") if v.strip()]


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algorithm", choices=["maml", "protonet"], required=True)
    p.add_argument("--iterations", type=int, default=None,
                   help="meta-iterations (default: 60000 maml, 20000 protonet, "
                        "as in the example specs)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    p.add_argument("--device", default="cpu",
                   help="where --time-only runs the meta-iterations (cpu, cuda)")
    p.add_argument("--tf32", action="store_true",
                   help="let cuDNN convolve f32 in TF32 (PyTorch's default; off "
                        "here by default: metac computes in full f32)")
    p.add_argument("--dtype", choices=["f32", "f64"], default="f32")
    p.add_argument("--data-dir", default=DATA_DIR)
    p.add_argument("--filters", type=int, default=None,
                   help="conv filters (default: 32 maml, 64 protonet)")
    p.add_argument("--head", type=int, default=None,
                   help="outputs of the head (default: --ways)")
    p.add_argument("--train-classes", type=int_list, default=list(range(7)))
    p.add_argument("--ways", type=int, default=5, help="training ways")
    p.add_argument("--shots", type=int, default=1, help="training shots")
    p.add_argument("--query", type=int, default=15, help="training query per class")
    p.add_argument("--test-classes", type=int_list, default=[7, 8, 9])
    p.add_argument("--test-ways", type=int, default=3)
    p.add_argument("--test-shots", type=int, default=1)
    p.add_argument("--test-query", type=int, default=15)
    p.add_argument("--eval-split", choices=["t10k", "train"], default="t10k",
                   help="idx file the evaluation tasks draw from")
    p.add_argument("--meta-batch", type=int, default=None,
                   help="tasks per meta-iteration (default: 4 maml, 32 protonet)")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate")
    p.add_argument("--steps", type=int, default=5, help="MAML inner steps")
    p.add_argument("--inner-lr", type=float, default=0.4, help="MAML inner rate")
    p.add_argument("--order", type=int, choices=[1, 2], default=2, help="MAML order")
    p.add_argument("--eval-steps", type=int_list, default=[0, 1, 5, 10],
                   help="MAML adaptation steps at evaluation")
    p.add_argument("--eval-tasks", type=int, default=600)
    p.add_argument("--log-every", type=int, default=None,
                   help="print the meta-loss every N iterations (default: "
                        "a tenth of the run)")
    p.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    p.add_argument("--init-params", metavar="FILE",
                   help="start from these parameters (safetensors with metac's "
                        "names, e.g. from `metac run --save-params`)")
    p.add_argument("--save-params", metavar="FILE",
                   help="write the trained parameters (safetensors, metac's names)")
    p.add_argument("--dump-eval-episodes", metavar="FILE",
                   help="also write the evaluation tasks as a metac episodes "
                        "file (the same tasks the evaluation then uses)")
    p.add_argument("--task-stream", choices=["torch", "metac"], default="torch",
                   help="draw tasks from torch's generator (default) or exactly "
                        "as `metac run --seed S` does (with --init-params from "
                        "metac, both sides then see the same start and tasks)")
    p.add_argument("--time-only", type=int, metavar="N", default=None,
                   help="time N meta-iterations (after 5 warm-up ones), task "
                        "sampling included; print 'torch ms/iteration X peak_rss_mb Y'")
    args = p.parse_args()
    maml = args.algorithm == "maml"
    if args.iterations is None:
        args.iterations = 2000 if maml else 1000
    if args.filters is None:
        args.filters = 32 if maml else 64
    if args.meta_batch is None:
        args.meta_batch = 4
    if args.head is None:
        args.head = args.ways
    if maml and args.test_ways > args.head:
        p.error(f"--test-ways {args.test_ways} exceeds the head's {args.head} outputs")
    args.dtype = torch.float32 if args.dtype == "f32" else torch.float64
    return args


def time_only(args):
    """Times meta-iterations on Fashion-MNIST training tasks, drawing the
    tasks included (metac's meta-iteration draws its tasks too)."""
    generator = torch.Generator().manual_seed(args.seed)
    device = torch.device(args.device)
    torch.backends.cudnn.allow_tf32 = args.tf32
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    params = [p.detach().to(device).requires_grad_()
              for p in init_params(args.filters, args.head, args.dtype, generator)]
    optimizer = torch.optim.Adam(params, lr=args.lr)
    sampler = TaskSampler(Split(args.data_dir, "train"), args.train_classes,
                          args.ways, args.shots, args.query, args.dtype, generator)

    def batch():
        # Drawn on the CPU, then moved: part of the timed meta-iteration.
        return [tuple(t.to(device) for t in task)
                for task in sampler.batch(args.meta_batch)]

    for _ in range(WARMUP):
        meta_step(params, optimizer, batch(), args)
    begin = time.perf_counter()
    for _ in range(args.time_only):
        meta_step(params, optimizer, batch(), args)
    ms = (time.perf_counter() - begin) / max(1, args.time_only) * 1e3
    print(f"torch ms/iteration {ms:.3f} peak_rss_mb {peak_rss_mb():.1f} "
          f"device {device}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"algorithm": args.algorithm, "ms_per_iteration": ms,
                       "peak_rss_mb": peak_rss_mb(), "iterations": args.time_only,
                       "threads": torch.get_num_threads(),
                       "torch": torch.__version__}, f, indent=2)


def eval_sampler(split, args):
    """A fresh sampler of the evaluation tasks: metac's (split 1 of its
    draw) or, by default, one with a generator of its own, so that the
    evaluation tasks do not depend on training."""
    if args.task_stream == "metac":
        return MetacTaskStream(split, args.test_classes, args.test_ways,
                               args.test_shots, args.test_query, args.dtype,
                               args.seed, 1)
    return TaskSampler(split, args.test_classes, args.test_ways, args.test_shots,
                       args.test_query, args.dtype,
                       torch.Generator().manual_seed(args.seed + 1000003))


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    if args.time_only is not None:
        return time_only(args)

    generator = torch.Generator().manual_seed(args.seed)
    params = init_params(args.filters, args.head, args.dtype, generator)
    if args.init_params:
        load_params(args.init_params, params)
    optimizer = torch.optim.Adam(params, lr=args.lr)

    load_begin = time.perf_counter()
    train_split = Split(args.data_dir, "train")
    eval_split = train_split if args.eval_split == "train" else Split(args.data_dir, "t10k")
    load_s = time.perf_counter() - load_begin
    if args.task_stream == "metac":
        train_tasks = MetacTaskStream(train_split, args.train_classes, args.ways,
                                      args.shots, args.query, args.dtype, args.seed, 0)
    else:
        train_tasks = TaskSampler(train_split, args.train_classes, args.ways,
                                  args.shots, args.query, args.dtype, generator)
    eval_tasks = eval_sampler(eval_split, args)

    describe = (f"{args.algorithm}" + (f" order {args.order}, {args.steps} steps of "
                                        f"{args.inner_lr}" if args.algorithm == "maml" else "")
                + f", {args.ways}-way {args.shots}-shot {args.query} query, classes "
                f"{args.train_classes}, {args.filters} filters, meta-batch "
                f"{args.meta_batch}, Adam {args.lr}, {str(args.dtype)[6:]}, "
                f"{torch.get_num_threads()} threads, torch {torch.__version__}")
    print(describe, flush=True)

    log_every = args.log_every or max(1, args.iterations // 10)
    step_times, sample_times, logged = [], [], []
    train_begin = time.perf_counter()
    for iteration in range(1, args.iterations + 1):
        begin = time.perf_counter()
        tasks = train_tasks.batch(args.meta_batch)
        middle = time.perf_counter()
        loss = meta_step(params, optimizer, tasks, args)
        end = time.perf_counter()
        sample_times.append(middle - begin)
        step_times.append(end - middle)
        if iteration % log_every == 0 or iteration == args.iterations:
            logged.append((iteration, loss))
            print(f"iteration {iteration} meta-loss {loss:.4f}", flush=True)
    train_s = time.perf_counter() - train_begin
    # The first iterations warm up the allocator and the kernels.
    timed = step_times[WARMUP:] if len(step_times) > 2 * WARMUP else step_times
    step_ms = sum(timed) / max(1, len(timed)) * 1e3
    sample_ms = sum(sample_times) / max(1, len(sample_times)) * 1e3
    print(f"time {step_ms:.2f} ms/iteration (meta-step: forward, inner loop, "
          f"backward, Adam; mean over iterations {len(step_times) - len(timed) + 1}.."
          f"{len(step_times)}), task sampling {sample_ms:.2f} ms/iteration, "
          f"training {train_s:.1f} s, data loading {load_s:.1f} s", flush=True)

    if args.save_params:
        save_params(args.save_params, params)
    if args.dump_eval_episodes:
        dump_episodes(args.dump_eval_episodes, eval_sampler(eval_split, args),
                      args.eval_tasks)
    eval_begin = time.perf_counter()
    results = evaluate(params, eval_tasks, args)
    eval_s = time.perf_counter() - eval_begin
    figures = []
    for setting, (acc, acc_ci, loss, loss_ci) in results.items():
        label = f"steps={setting} " if setting is not None else ""
        print(f"eval {label}accuracy {acc:.4f} +- {acc_ci:.4f} loss {loss:.4f} "
              f"+- {loss_ci:.4f} ({args.eval_tasks} tasks, {args.test_ways}-way "
              f"{args.test_shots}-shot, classes {args.test_classes}, "
              f"{args.eval_split})")
        figures.append({"steps": setting, "accuracy": acc, "accuracy_ci95": acc_ci,
                        "loss": loss, "loss_ci95": loss_ci})
    rss = peak_rss_mb()
    print(f"evaluation {eval_s:.1f} s; peak_rss_mb {rss:.1f}")

    if args.json:
        config = {k: v for k, v in vars(args).items() if k not in ("json", "time_only")}
        config["dtype"] = str(args.dtype)[6:]
        with open(args.json, "w") as f:
            json.dump({"config": config, "torch": torch.__version__,
                       "threads": torch.get_num_threads(),
                       "ms_per_iteration": step_ms,
                       "sampling_ms_per_iteration": sample_ms,
                       "training_s": train_s, "data_loading_s": load_s,
                       "evaluation_s": eval_s, "peak_rss_mb": rss,
                       "meta_loss": [{"iteration": i, "loss": l} for i, l in logged],
                       "evaluation": figures}, f, indent=2)


if __name__ == "__main__":
    main()
