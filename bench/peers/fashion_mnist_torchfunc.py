"""Few-shot Fashion-MNIST with torch.func: the vmapped and compiled PyTorch
peers of examples/maml_fashion_mnist.meta and protonet_fashion_mnist.meta.

The model, data and algorithms are bench/fashion_mnist_torch.py's (the
reference in PyTorch's per-task loop, imported from it); here the
meta-batch's tasks are vmapped (torch.func.vmap), MAML's inner steps are
torch.func.grad (exact second order through the outer torch.func.grad),
and `compile` runs the same meta-gradient under torch.compile, or reports
it unsupported. Tasks are drawn by the reference's sampler inside the
timed loop (on the CPU, as the reference draws them, then moved to the
device: `--device cpu` or `cuda`; on cuda the timing waits for the device,
and TF32 is off unless `--tf32`, as in the reference). Prints `torch
ALGORITHM VARIANT: X ms/iteration (N ...)` or `torch ALGORITHM VARIANT:
unsupported (REASON)`. Run from bench/peers.sh.
"""

import argparse
import pathlib
import sys

import torch
import torch.nn.functional as F
from torch.func import grad, vmap

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import fashion_mnist_torch as reference  # noqa: E402
from devices import torch_device  # noqa: E402
from timing import time_variant  # noqa: E402

WAYS, STEPS, INNER_LR, META_BATCH = 5, 5, 0.4, 4


def maml_task_loss(params, sx, sy, qx, qy):
    def support_loss(fast):
        return F.cross_entropy(reference.forward(fast, sx), sy)

    fast = params
    for _ in range(STEPS):
        grads = grad(support_loss)(fast)
        fast = tuple(p - INNER_LR * g for p, g in zip(fast, grads))
    return F.cross_entropy(reference.forward(fast, qx), qy)


def protonet_task_loss(params, sx, sy, qx, qy):
    return F.cross_entropy(reference.proto_logits(params, sx, sy, qx, WAYS),
                           qy)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--algorithms", default="maml,protonet")
    parser.add_argument("--variants", default="func,compile")
    parser.add_argument("--data-dir",
                        default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--tf32", action="store_true",
                        help="on cuda, let cuBLAS/cuDNN use TF32 for f32")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device, synchronize = torch_device(args.device, args.tf32)
    split = reference.Split(args.data_dir, "train")
    for algorithm in args.algorithms.split(","):
        task_loss = maml_task_loss if algorithm == "maml" else \
            protonet_task_loss
        filters = 32 if algorithm == "maml" else 64

        def meta_loss(params, sx, sy, qx, qy):
            return torch.mean(vmap(task_loss, in_dims=(None, 0, 0, 0, 0))(
                params, sx, sy, qx, qy))

        for variant in args.variants.split(","):
            generator = torch.Generator().manual_seed(7)
            sampler = reference.TaskSampler(split, list(range(7)), WAYS, 1, 15,
                                            torch.float32, generator)
            params = [p.detach().to(device).requires_grad_()
                      for p in reference.init_params(filters, WAYS,
                                                     torch.float32,
                                                     generator)]
            optimizer = torch.optim.Adam(params, lr=0.001)
            meta_grad = grad(meta_loss)
            if variant == "compile":
                meta_grad = torch.compile(meta_grad, fullgraph=True)

            def step():
                tasks = sampler.batch(META_BATCH)
                batched = [torch.stack([t[i] for t in tasks]).to(device)
                           for i in range(4)]
                grads = meta_grad(tuple(p.detach() for p in params), *batched)
                for p, g in zip(params, grads):
                    p.grad = g
                optimizer.step()

            time_variant(f"torch {algorithm} {variant}", step, 2,
                         args.iterations, synchronize)

if __name__ == "__main__":
    main()
