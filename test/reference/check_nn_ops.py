#!/usr/bin/python3
"""Checks metac's reference interpreter against PyTorch, op by op.

For every public function of the input file (test/Interpreter/nn_ops.mlir),
runs `metac-eval FILE --entry=NAME --seed=S`, reads the inputs and outputs it
prints as JSON, recomputes the outputs from those inputs with PyTorch in
float64 (the derivative ops through torch.autograd.grad of the forward op
they differentiate), and fails unless every output has the reference's shape
and a relative error below the tolerance (1e-12).

The relative error of an output a against the reference b is
max_i |a_i - b_i| / max(|b_i|, 1e-3 * max_j |b_j|): elementwise relative, except
that elements more than a thousand times smaller than the largest one are
measured against a thousandth of it, so that sums that cancel to almost zero
(where the order of summation decides the last bits) do not count as errors.

Also checks coverage: every op of NNOps.td appears in the input file, every
public function has a reference below, and every reference has a function.

Run with Debian's /usr/bin/python3 and its python3-torch (1.13).
"""

import argparse
import itertools
import json
import math
import pathlib
import re
import subprocess
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError as error:  # Debian's python3-torch is a dependency.
    sys.exit(
        f"check_nn_ops.py: error: cannot import torch ({error}); install "
        "Debian's python3-torch (scripts/setup.sh) and run this script with "
        "/usr/bin/python3"
    )

F64 = torch.float64
TOLERANCE = 1e-12
SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def over_prefix(n, fn, *tensors):
    """Applies fn to the slices of the first n dimensions of the tensors
    (None passes through) and stacks the results: how a weight batched over a
    prefix of the input's leading dimensions applies."""
    if n == 0:
        return fn(*tensors)
    slices = [
        over_prefix(n - 1, fn, *[None if t is None else t[i] for t in tensors])
        for i in range(tensors[0].shape[0])
    ]
    return torch.stack(slices)


def grad_of(forward, shape, cotangent):
    """The vector-Jacobian product of forward (a function of one tensor of
    shape `shape`, linear in it) with `cotangent`."""
    x = torch.zeros(shape, dtype=F64, requires_grad=True)
    (g,) = torch.autograd.grad(forward(x), x, cotangent)
    return g


def conv2d(x, w, b=None, stride=(1, 1), padding=(0, 0)):
    """nn.conv2d: x [B..., C, H, W], w [P..., O, C, kh, kw], b [P..., O]."""
    def unbatched(x, w, b):
        lead = x.shape[:-3]
        y = F.conv2d(x.reshape(-1, *x.shape[-3:]), w, b, stride, padding)
        return y.reshape(*lead, *y.shape[1:])
    return over_prefix(w.dim() - 4, unbatched, x, w, b)


def planes(fn, x, *args, **kwargs):
    """Applies a 2-D pooling fn to x [B..., C, H, W] as [1, planes, H, W]."""
    y = fn(x.reshape(1, -1, *x.shape[-2:]), *args, **kwargs)
    return y.reshape(*x.shape[:-2], *y.shape[-2:])


def max_pool2d(x, kernel, stride, padding):
    return planes(F.max_pool2d, x, kernel, stride, padding)


def avg_pool2d(x, kernel, stride, padding):
    return planes(F.avg_pool2d, x, kernel, stride, padding,
                  count_include_pad=True)


def max_pool2d_gather(x, source, kernel, stride, padding):
    """source at PyTorch's argmax indices of max pooling over x."""
    h, w = x.shape[-2:]
    _, indices = F.max_pool2d(x.reshape(1, -1, h, w), kernel, stride, padding,
                              return_indices=True)
    flat = source.reshape(1, -1, h * w)
    gathered = flat.gather(2, indices.reshape(*indices.shape[:2], -1))
    return gathered.reshape(*x.shape[:-2], *indices.shape[-2:])


def batch_norm(x, w, b, channel, reduce, eps):
    """Statistics over `reduce` (biased variance); w, b: [P..., C]."""
    mean = x.mean(dim=reduce, keepdim=True)
    var = x.var(dim=reduce, unbiased=False, keepdim=True)
    shape = [1] * x.dim()
    for i in range(w.dim() - 1):
        shape[i] = x.shape[i]
    shape[channel] = x.shape[channel]
    return w.reshape(shape) * (x - mean) / torch.sqrt(var + eps) + \
        b.reshape(shape)


def layer_norm(x, w, b, eps):
    return over_prefix(w.dim() - 1,
                       lambda x, w, b: F.layer_norm(x, w.shape, w, b, eps),
                       x, w, b)


def broadcast(x, dims, shape):
    view = [1 if i in dims else size for i, size in enumerate(shape)]
    return x.reshape(view).expand(shape)


def mse_loss(p, t, batch_rank=0):
    return over_prefix(batch_rank, F.mse_loss, p, t)


def cross_entropy(logits, labels, batch_rank=0):
    classes = logits.shape[-1]
    return over_prefix(
        batch_rank,
        lambda l, y: F.cross_entropy(l.reshape(-1, classes), y.reshape(-1)),
        logits, labels)


def accuracy(logits, labels, batch_rank=0):
    classes = logits.shape[-1]
    return over_prefix(
        batch_rank,
        lambda l, y: (l.reshape(-1, classes).argmax(-1) == y.reshape(-1))
        .to(F64).mean(),
        logits, labels)


def attention(q, k, v, scale, causal):
    """softmax(scale q k^T) v, the later keys masked out when causal (the
    unfused formula; PyTorch 1.13 has no scaled_dot_product_attention)."""
    scores = scale * q @ k.transpose(-1, -2)
    if causal:
        n = scores.shape[-1]
        later = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(later, float("-inf"))
    return torch.softmax(scores, -1) @ v


def attention_grad(wrt, scale, causal):
    """The cotangent of attention's operand `wrt` (0 q, 1 k, 2 v) for the
    output cotangent dy, by PyTorch's autograd of the unfused formula."""
    def grad(q, k, v, dy):
        inputs = [t.clone().requires_grad_() for t in (q, k, v)]
        y = attention(*inputs, scale, causal)
        return torch.autograd.grad(y, inputs[wrt], dy)[0]
    return grad


def attention_double_grad(wrt_first, wrt, scale, causal):
    """The cotangent of input `wrt` (0 q, 1 k, 2 v, 3 dy) of
    attention_grad(wrt_first) for the cotangent g of its result: PyTorch's
    double backward of the unfused formula."""
    def grad(q, k, v, dy, g):
        inputs = [t.clone().requires_grad_() for t in (q, k, v, dy)]
        y = attention(*inputs[:3], scale, causal)
        first = torch.autograd.grad(y, inputs[:3], inputs[3],
                                    create_graph=True)[wrt_first]
        second = torch.autograd.grad((first * g).sum(), inputs[wrt],
                                     allow_unused=True)[0]
        return torch.zeros_like(inputs[wrt]) if second is None else second
    return grad


def moe_dispatch(p, top_k, capacity):
    """nn.moe_dispatch: probs [G..., N, E] -> mask [G..., N, E, C]; each
    token's top_k experts by a stable descending sort (the lower index among
    equals), placed choice rank by choice rank, tokens in order, while the
    expert has a free slot."""
    *groups, tokens, experts = p.shape
    flat = p.reshape(-1, tokens, experts)
    out = torch.zeros(flat.shape[0], tokens, experts, capacity, dtype=F64)
    for g in range(flat.shape[0]):
        order = torch.sort(flat[g], dim=1, descending=True, stable=True).indices
        used = [0] * experts
        for r in range(top_k):
            for n in range(tokens):
                e = int(order[n, r])
                if used[e] < capacity:
                    out[g, n, e, used[e]] = 1.0
                    used[e] += 1
    return out.reshape(*groups, tokens, experts, capacity)


def embedding(ids, table):
    return over_prefix(table.dim() - 2, F.embedding, ids, table)


# ---------------------------------------------------------------------------
# References, one per public function of nn_ops.mlir
# ---------------------------------------------------------------------------


def f32_values(x):
    """x, after checking that metac-eval drew f32 values for an f32 input."""
    assert torch.equal(x, x.float().double()), "f32 input is not f32-valued"
    return x


S21, P12, P11 = (2, 1), (1, 2), (1, 1)

REFERENCES = {
    # Elementwise.
    "neg": lambda x: -x,
    "neg_scalar": lambda x: -x,
    "exp": torch.exp,
    "log": torch.log,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "erf": torch.erf,
    "relu": torch.relu,
    "step": lambda x: (x > 0).to(F64),
    "step_relu_at_zero": lambda: (
        torch.tensor([0.0, 0.0, 1.0], dtype=F64),
        torch.relu(torch.tensor([-0.0, 0.0, 1e-300], dtype=F64))),
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "gelu": lambda x: F.gelu(x),  # exact (erf) by default
    "scale": lambda x: 2.5 * x,
    "stop_gradient": lambda x: x.detach(),
    # Both sides round to nearest, ties to even (PyTorch's .bfloat16() and
    # .half()); a product of two bf16 values is exact in f32, so it is
    # rounded once, as metac's interpreter rounds the f64 product.
    "convert_bf16": lambda x: f32_values(x).float().bfloat16().to(F64),
    "convert_f16": lambda x: f32_values(x).float().half().to(F64),
    "mul_bf16": lambda a, b: (f32_values(a).float().bfloat16()
                              * f32_values(b).float().bfloat16()).to(F64),
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    # Linear layers and matrix products.
    "linear": F.linear,
    "linear_vector": F.linear,
    "linear_no_bias": F.linear,
    "linear_batched": lambda x, w, b: over_prefix(1, F.linear, x, w, b),
    "linear_batched_prefix": lambda x, w, b: over_prefix(1, F.linear, x, w, b),
    "linear_batched_full": lambda x, w: over_prefix(2, F.linear, x, w),
    "attention": lambda q, k, v: attention(q, k, v, 0.5, False),
    "attention_causal": lambda q, k, v: attention(q, k, v, 1.5, True),
    "attention_tiled": lambda q, k, v: attention(q, k, v, 1.0, True),
    "attention_f32": lambda q, k, v: attention(q, k, v, 0.5, True),
    "attention_backward_query": attention_grad(0, 0.5, False),
    "attention_backward_key": attention_grad(1, 0.5, False),
    "attention_backward_value": attention_grad(2, 0.5, False),
    "attention_backward_tiled_query": attention_grad(0, 1.0, True),
    "attention_backward_tiled_key": attention_grad(1, 1.0, True),
    "attention_backward_tiled_value": attention_grad(2, 1.0, True),
    "attention_backward_causal_batched": attention_grad(1, 1.5, True),
    "attention_backward_f32": attention_grad(0, 0.5, True),
    "attention_double_backward_query_query": attention_double_grad(0, 0, 0.5, False),
    "attention_double_backward_query_key": attention_double_grad(0, 1, 0.5, False),
    "attention_double_backward_query_value": attention_double_grad(0, 2, 0.5, False),
    "attention_double_backward_query_grad": attention_double_grad(0, 3, 0.5, False),
    "attention_double_backward_key_query": attention_double_grad(1, 0, 0.5, False),
    "attention_double_backward_key_key": attention_double_grad(1, 1, 0.5, False),
    "attention_double_backward_key_value": attention_double_grad(1, 2, 0.5, False),
    "attention_double_backward_key_grad": attention_double_grad(1, 3, 0.5, False),
    "attention_double_backward_value_query": attention_double_grad(2, 0, 0.5, False),
    "attention_double_backward_value_key": attention_double_grad(2, 1, 0.5, False),
    "attention_double_backward_value_grad": attention_double_grad(2, 3, 0.5, False),
    "attention_double_backward_tiled_query_key": attention_double_grad(0, 1, 1.0, True),
    "attention_double_backward_tiled_key_query": attention_double_grad(1, 0, 1.0, True),
    "attention_double_backward_tiled_value_grad": attention_double_grad(2, 3, 1.0, True),
    "attention_double_backward_tiled_query_grad": attention_double_grad(0, 3, 1.0, True),
    "attention_double_backward_tiled_key_value": attention_double_grad(1, 2, 1.0, True),
    "attention_double_backward_tiled_value_query": attention_double_grad(2, 0, 1.0, True),
    "attention_double_backward_f32": attention_double_grad(1, 1, 0.5, True),
    "matmul": torch.matmul,
    "matmul_transpose_lhs": lambda a, b: a.T @ b,
    "matmul_transpose_rhs": lambda a, b: a @ b.T,
    "matmul_transpose_both": lambda a, b: a.T @ b.T,
    "matmul_batched": torch.matmul,
    "matmul_batched_transpose_both":
        lambda a, b: a.transpose(-1, -2) @ b.transpose(-1, -2),
    # Convolution.
    "conv2d": lambda x, w, b: conv2d(x, w, b),
    "conv2d_stride_padding": lambda x, w, b: conv2d(x, w, b, S21, P12),
    "conv2d_uneven_no_bias": lambda x, w: conv2d(x, w, None, (3, 2), (1, 0)),
    "conv2d_unbatched": lambda x, w, b: conv2d(x, w, b),
    "conv2d_batched": lambda x, w, b: conv2d(x, w, b, (1, 1), P11),
    "conv2d_backward_input": lambda g, w: grad_of(
        lambda x: conv2d(x, w, None, S21, P12), (2, 3, 7, 6), g),
    "conv2d_backward_input_uneven": lambda g, w: grad_of(
        lambda x: conv2d(x, w, None, (3, 2), (1, 0)), (1, 2, 8, 8), g),
    "conv2d_backward_input_batched": lambda g, w: grad_of(
        lambda x: conv2d(x, w, None, (1, 1), P11), (2, 3, 2, 5, 5), g),
    "conv2d_backward_weight": lambda x, g: grad_of(
        lambda w: conv2d(x, w, None, S21, P12), (4, 3, 3, 2), g),
    "conv2d_backward_weight_uneven": lambda x, g: grad_of(
        lambda w: conv2d(x, w, None, (3, 2), (1, 0)), (3, 2, 3, 3), g),
    "conv2d_backward_weight_batched": lambda x, g: grad_of(
        lambda w: conv2d(x, w, None, (1, 1), P11), (2, 4, 2, 3, 3), g),
    # Pooling.
    "max_pool2d": lambda x: max_pool2d(x, 2, 2, 0),
    "max_pool2d_padding": lambda x: max_pool2d(x, 3, S21, P11),
    "max_pool2d_unbatched": lambda x: max_pool2d(x, 2, 1, 0),
    "max_pool2d_backward": lambda x, g: torch.autograd.grad(
        max_pool2d(x.requires_grad_(), 3, S21, P11), x, g)[0],
    "max_pool2d_backward_ties": lambda x, g: (lambda s: torch.autograd.grad(
        max_pool2d(s, 3, 1, 1), s, g)[0])((x > 0).to(F64).requires_grad_()),
    "max_pool2d_backward_zeros": lambda g: (lambda s: torch.autograd.grad(
        max_pool2d(s, 2, 2, 1), s, g)[0])(
            torch.zeros(1, 1, 4, 4, dtype=F64, requires_grad=True)),
    "max_pool2d_gather": lambda x, s: max_pool2d_gather(x, s, 3, S21, P11),
    "max_pool2d_gather_ties": lambda x, s: max_pool2d_gather(
        (torch.relu(x) > 0).to(F64), s, 3, 1, 1),
    "avg_pool2d": lambda x: avg_pool2d(x, 2, 2, 0),
    "avg_pool2d_padding": lambda x: avg_pool2d(x, 3, S21, P11),
    "avg_pool2d_rank5": lambda x: avg_pool2d(x, 2, 1, 0),
    "avg_pool2d_backward": lambda g: grad_of(
        lambda x: avg_pool2d(x, 3, S21, P11), (2, 2, 7, 5), g),
    "avg_pool2d_backward_uneven": lambda g: grad_of(
        lambda x: avg_pool2d(x, (3, 2), (3, 2), (1, 0)), (1, 2, 8, 6), g),
    # Normalisation: the common layouts through F.batch_norm in training
    # mode, the others through their definition.
    "batch_norm": lambda x, w, b: F.batch_norm(
        x, None, None, w, b, training=True, eps=1e-5),
    "batch_norm_features": lambda x, w, b: F.batch_norm(
        x, None, None, w, b, training=True, eps=0.1),
    "batch_norm_batched": lambda x, w, b: batch_norm(
        x, w, b, 2, [1, 3, 4], 1e-5),
    "batch_norm_partial": lambda x, w, b: batch_norm(x, w, b, 1, [0], 1e-5),
    "batch_norm_channel_last": lambda x, w, b: batch_norm(
        x, w, b, 2, [0, 1], 1e-5),
    "layer_norm": lambda x, w, b: layer_norm(x, w, b, 1e-5),
    "layer_norm_vector": lambda x, w, b: layer_norm(x, w, b, 0.5),
    "layer_norm_batched": lambda x, w, b: layer_norm(x, w, b, 1e-5),
    "softmax": lambda x: torch.softmax(x, 2),
    "softmax_axis0": lambda x: torch.softmax(x, 0),
    "softmax_large": lambda x: torch.softmax(x, 1),
    "log_softmax": lambda x: torch.log_softmax(x, 2),
    "log_softmax_axis1": lambda x: torch.log_softmax(x, 1),
    # Shape manipulation and reductions.
    "reshape": lambda x: x.reshape(4, 6),
    "reshape_scalar": lambda x: x.reshape(()),
    "transpose": lambda x: x.permute(2, 0, 1),
    "transpose_2d": lambda x: x.permute(1, 0),
    "broadcast": lambda x: broadcast(x, [0, 2], (2, 3, 4)),
    "broadcast_middle": lambda x: broadcast(x, [1], (2, 5, 3)),
    "broadcast_scalar": lambda x: broadcast(x, [0, 1], (2, 3)),
    "reduce_sum": lambda x: x.sum(dim=(0, 2)),
    "reduce_sum_all": lambda x: x.sum(dim=(0, 1, 2)),
    "reduce_sum_none": lambda x: x,  # torch.sum(dim=[]) would reduce all
    "reduce_mean": lambda x: x.mean(dim=1),
    "reduce_mean_all": lambda x: x.mean(dim=(0, 1, 2)),
    # Losses.
    "mse_loss": mse_loss,
    "mse_loss_batched": lambda p, t: mse_loss(p, t, 1),
    "mse_loss_batch_rank2": lambda p, t: mse_loss(p, t, 2),
    "mse_loss_full_rank": lambda p, t: mse_loss(p, t, 2),
    "cross_entropy_loss": cross_entropy,
    "cross_entropy_loss_batched": lambda l, y: cross_entropy(l, y, 1),
    "cross_entropy_loss_positions": lambda l, y: cross_entropy(l, y, 1),
    "cross_entropy_loss_single": cross_entropy,
    "cross_entropy_loss_full_rank": lambda l, y: cross_entropy(l, y, 2),
    "accuracy": accuracy,
    "accuracy_batched": lambda l, y: accuracy(l, y, 1),
    # Integer-indexed ops.
    "one_hot": lambda y: F.one_hot(y, 4).to(F64),
    "one_hot_i32": lambda y: F.one_hot(y, 3).to(F64),
    "moe_dispatch": lambda p: moe_dispatch(p, 2, 3),
    "moe_dispatch_top1": lambda p: moe_dispatch(p, 1, 2),
    "moe_dispatch_ties": lambda x: moe_dispatch(torch.tensor(
        [[0.4, 0.4, 0.2], [0.2, 0.4, 0.4], [0.25, 0.25, 0.5]], dtype=F64),
        2, 2),
    "embedding": embedding,
    "embedding_i32": embedding,
    "embedding_batched": embedding,
    "embedding_batched_prefix": embedding,
    "embedding_backward": lambda ids, g: grad_of(
        lambda t: embedding(ids, t), (4, 5), g),
    "embedding_backward_batched": lambda ids, g: grad_of(
        lambda t: embedding(ids, t), (2, 3, 4), g),
    # Constants, calls and element types.
    "constant_splat": lambda x: x * 0.5,
    "constant_ids": lambda t: (
        embedding(torch.tensor([2, 0, 3]), t),
        F.one_hot(torch.tensor([1, 1, 1]), 4).to(F64)),
    "constant_f32": lambda x: f32_values(x) + torch.tensor(
        [0.1, 0.2, 0.3], dtype=torch.float32).to(F64),
    "call_mlp": lambda x, w1, b1, w2, b2, y: (lambda h: (
        F.cross_entropy(torch.relu(F.linear(h, w2, b2)), y), h))(
            torch.relu(F.linear(x, w1, b1))),
}


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def to_torch(entry):
    dtype = torch.int64 if entry["integer"] else F64
    return torch.tensor(entry["values"], dtype=dtype).reshape(entry["shape"])


def relative_error(actual, expected):
    """max_i |a_i - b_i| / max(|b_i|, 1e-3 * max_j |b_j|); NaN where exactly
    one side is NaN counts as infinite, NaN on both sides as equal."""
    if expected.numel() == 0:
        return 0.0
    both_nan = torch.isnan(actual) & torch.isnan(expected)
    a = torch.where(both_nan, torch.zeros_like(actual), actual)
    b = torch.where(both_nan, torch.zeros_like(expected), expected)
    if torch.isnan(a).any() or torch.isnan(b).any():
        return math.inf
    difference = (a - b).abs()
    difference[a == b] = 0  # equal infinities
    floor = 1e-3 * b.abs().max()
    scale = torch.maximum(b.abs(), floor)
    error = torch.where(difference == 0, torch.zeros_like(difference),
                        difference / scale)
    return error.max().item()


def evaluate(metac_eval, input_file, name, seed):
    command = [metac_eval, str(input_file), f"--entry={name}", f"--seed={seed}"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed "
                           f"({result.returncode}):\n{result.stderr}")
    return json.loads(result.stdout)


def check_function(metac_eval, input_file, name, seed):
    """Returns (max relative error, message or None)."""
    printed = evaluate(metac_eval, input_file, name, seed)
    inputs = [to_torch(entry) for entry in printed["inputs"]]
    outputs = [to_torch(entry) for entry in printed["outputs"]]
    expected = REFERENCES[name](*inputs)
    if isinstance(expected, torch.Tensor):
        expected = (expected,)
    expected = [e.detach().to(F64) for e in expected]
    if len(expected) != len(outputs):
        return math.inf, (f"{len(outputs)} outputs, the reference has "
                          f"{len(expected)}")
    worst = 0.0
    for i, (actual, reference) in enumerate(zip(outputs, expected)):
        if tuple(actual.shape) != tuple(reference.shape):
            return math.inf, (f"output #{i} has shape {list(actual.shape)}, "
                              f"the reference {list(reference.shape)}")
        error = relative_error(actual, reference)
        worst = max(worst, error)
        if not error < TOLERANCE:
            index = int((actual - reference).abs().nan_to_num(math.inf)
                        .argmax())
            return error, (f"output #{i}: relative error {error:.3g} >= "
                           f"{TOLERANCE:g}; e.g. element {index}: metac "
                           f"{actual.flatten()[index].item()!r}, torch "
                           f"{reference.flatten()[index].item()!r}")
    return worst, None


def coverage_problems(text, functions, ops_td):
    problems = []
    mnemonics = re.findall(r'^def NN_\w+\s*:\s*NN_\w+<"(\w+)"',
                           ops_td.read_text(), re.MULTILINE)
    if not mnemonics:
        problems.append(f"found no op definitions in {ops_td}")
    for mnemonic in mnemonics:
        if not re.search(rf"\bnn\.{mnemonic}\b", text):
            problems.append(f"op nn.{mnemonic} is not covered by any function")
    for name in functions:
        if name not in REFERENCES:
            problems.append(f"function @{name} has no reference")
    for name in REFERENCES:
        if name not in functions:
            problems.append(f"reference {name} has no function")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metac-eval", required=True,
                        help="the metac-eval executable")
    parser.add_argument("--input", required=True, type=pathlib.Path,
                        nargs="+",
                        help="the .mlir files of test functions (together "
                             "they must cover every op and reference)")
    parser.add_argument("--seeds", default="0,1,2",
                        help="comma-separated seeds (default: 0,1,2)")
    parser.add_argument("--ops-td", type=pathlib.Path,
                        default=SOURCE_ROOT / "include/metac/Dialect/NN/IR/NNOps.td",
                        help="NNOps.td, for the coverage check")
    parser.add_argument("--only", help="check this function only")
    args = parser.parse_args()

    torch.set_default_dtype(F64)
    texts = {path: path.read_text() for path in args.input}
    file_of = {name: path for path, text in texts.items()
               for name in re.findall(r"^func\.func @(\w+)", text,
                                      re.MULTILINE)}
    functions = list(file_of)
    problems = coverage_problems("\n".join(texts.values()), functions,
                                 args.ops_td)
    if args.only:
        functions = [args.only]
    seeds = [int(s) for s in args.seeds.split(",")]

    worst = 0.0
    for name, seed in itertools.product(functions, seeds):
        try:
            error, message = check_function(args.metac_eval, file_of[name],
                                            name, seed)
        except Exception as exception:  # report every function, then fail
            error, message = math.inf, f"{type(exception).__name__}: {exception}"
        worst = max(worst, error)
        status = "ok  " if message is None else "FAIL"
        print(f"{status} @{name} seed {seed}: max relative error {error:.3g}")
        if message:
            problems.append(f"@{name} (seed {seed}): {message}")

    print(f"checked {len(functions)} functions x {len(seeds)} seeds; "
          f"max relative error {worst:.3g} (tolerance {TOLERANCE:g})")
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
