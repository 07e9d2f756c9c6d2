"""Fixed episodes and MLP parameters for the algorithm checks
(check_{maml_runtime,anil,metasgd,reptile,imaml}.py).

`MlpEpisodes` draws support and query sets (regression targets, or class
labels for cross-entropy) and MLP parameters from a seeded generator,
writes them as safetensors files (PyTorch names and layouts: `l0`, `l1`,
..., `out`), runs one meta-iteration of an algorithm with `metac run` on
them, and gives the PyTorch model and loss to compute the expected result
with, and the relative error of metac's parameters against it.
"""

import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from check_safetensors import read_safetensors, write_safetensors  # noqa: E402

try:
    import torch
except ImportError as error:
    sys.exit(f"{pathlib.Path(sys.argv[0]).name}: cannot import torch ({error}); "
             "use /usr/bin/python3 with Debian's python3-torch")


def tensor_entry(name, storage, tensor):
    """A write_safetensors entry for `tensor`."""
    return (name, storage, list(tensor.shape), tensor.flatten().tolist())


class MlpEpisodes:
    """`tasks` episodes of `support` and `query` samples and the parameters
    of an MLP with `hidden` widths, drawn uniformly in [-1, 1) in `dtype`
    ("f32" or "f64"); regression with one input and one output for "mse",
    `features` inputs and `classes` labels for "cross_entropy"."""

    def __init__(self, directory, name, hidden, activation, dtype, loss_kind,
                 seed, tasks=3, support=5, query=4, features=3, classes=3):
        self.directory, self.name = pathlib.Path(directory), name
        self.hidden, self.activation, self.loss_kind = hidden, activation, loss_kind
        self.dtype, self.tasks = dtype, tasks
        self.dt = torch.float64 if dtype == "f64" else torch.float32
        self.storage = "F64" if dtype == "f64" else "F32"
        self.generator = torch.Generator().manual_seed(seed)
        mse = loss_kind == "mse"
        self.outputs = 1 if mse else classes
        self.features = 1 if mse else features

        self.sx = self.rand(tasks, support, self.features)
        self.qx = self.rand(tasks, query, self.features)
        if mse:
            self.sy, self.qy = self.rand(tasks, support, 1), self.rand(tasks, query, 1)
            label_storage = self.storage
        else:
            self.sy = torch.randint(0, classes, (tasks, support), generator=self.generator)
            self.qy = torch.randint(0, classes, (tasks, query), generator=self.generator)
            label_storage = "I64"
        self.episodes = self.directory / f"{name}.episodes.safetensors"
        write_safetensors(self.episodes, [
            tensor_entry("support.x", self.storage, self.sx),
            tensor_entry("query.x", self.storage, self.qx),
            tensor_entry("support.y", label_storage, self.sy),
            tensor_entry("query.y", label_storage, self.qy)], {})

        sizes = [self.features] + hidden + [self.outputs]
        layers = [f"l{i}" for i in range(len(hidden))] + ["out"]
        self.params, self.names = [], []
        for layer, (fan_in, fan_out) in zip(layers, zip(sizes, sizes[1:])):
            self.params += [self.rand(fan_out, fan_in), self.rand(fan_out)]
            self.names += [f"{layer}.weight", f"{layer}.bias"]

    def rand(self, *shape):
        """Uniform in [-1, 1), drawn in double and rounded to the dtype."""
        return (torch.rand(*shape, generator=self.generator,
                           dtype=torch.float64) * 2 - 1).to(self.dt)

    def entries(self):
        """The parameters as write_safetensors entries."""
        return [tensor_entry(n, self.storage, p) for n, p in zip(self.names, self.params)]

    def run(self, metac, algorithm, optimizer="sgd { lr = 1.0 }", extra_params=()):
        """Runs one meta-iteration of `algorithm` (spec text) with
        `optimizer` from these parameters (plus `extra_params`, (name,
        tensor) pairs) and returns metac's saved tensors by name."""
        init = self.directory / f"{self.name}.init.safetensors"
        write_safetensors(init, self.entries() + [
            tensor_entry(n, self.storage, t) for n, t in extra_params], {})
        lines = [f"model m(x: {self.dtype}[{self.features}]) -> "
                 f"{self.dtype}[{self.outputs}] {{", "  h = x"]
        for i, width in enumerate(self.hidden):
            lines.append(f'  h = {self.activation}(linear(h, {width}, name = "l{i}"))')
        lines += [f'  return linear(h, {self.outputs}, name = "out")', "}",
                  f'tasks t = episodes {{ path = "{self.episodes.name}" }}',
                  f"train {self.name} {{ model = m, tasks = t, loss = {self.loss_kind}, "
                  f"algorithm = {algorithm}, optimizer = {optimizer}, "
                  f"meta_batch = {self.tasks}, iterations = 1 }}"]
        spec = self.directory / f"{self.name}.meta"
        spec.write_text("\n".join(lines) + "\n")
        saved = self.directory / f"{self.name}.out.safetensors"
        subprocess.run([metac, "run", str(spec), "--iterations=1", "--quiet",
                        f"--init-params={init}", f"--save-params={saved}"],
                       check=True, stdout=subprocess.DEVNULL)
        *_, tensors = read_safetensors(saved)
        return tensors

    def model(self, p, x):
        """The MLP with parameters `p` (weight, bias per layer) on `x`."""
        act = torch.relu if self.activation == "relu" else torch.tanh
        h = x
        for i in range(0, len(p) - 2, 2):
            h = act(torch.nn.functional.linear(h, p[i], p[i + 1]))
        return torch.nn.functional.linear(h, p[-2], p[-1])

    def loss(self, prediction, target):
        """The spec's loss, with PyTorch's means."""
        if self.loss_kind == "mse":
            return torch.nn.functional.mse_loss(prediction, target)
        return torch.nn.functional.cross_entropy(prediction, target)


def relative_error(expected, actual):
    """max |actual - expected| / |expected| over the elements, the divisor
    floored at 1e-3 of the largest |expected| (near-zero elements)."""
    expected = expected.detach().double().flatten()
    actual = torch.as_tensor(actual, dtype=torch.float64).flatten()
    scale = torch.clamp(expected.abs(), min=1e-3 * float(expected.abs().max()) + 1e-300)
    return float(((actual - expected).abs() / scale).max())


def worst_error(expected, tensors):
    """The largest relative_error of metac's saved `tensors` against
    `expected`, (name, tensor) pairs."""
    return max(relative_error(e, tensors[name][2]) for name, e in expected)
