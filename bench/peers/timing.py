"""How the PyTorch peers time a variant: warm-up steps (compilation, where
torch.compile refuses the double backward: reported, not timed), then
`count` timed steps, one line `LABEL: X ms/iteration (N meta-iterations)`
or `LABEL: unsupported (REASON)`. Returns the ms, or None when refused.
On a GPU, `synchronize` (torch.cuda.synchronize) is called after the
warm-up and after the timed steps, so that the time covers their kernels."""

import time


def time_variant(label, step, warmup, count, synchronize=None):
    try:
        for _ in range(warmup):
            step()
        if synchronize:
            synchronize()
    except Exception as error:  # Dynamo/AOTAutograd refusals
        reason = str(error).strip().splitlines()[0][:160]
        print(f"{label}: unsupported ({type(error).__name__}: {reason})",
              flush=True)
        return None
    start = time.perf_counter()
    for _ in range(count):
        step()
    if synchronize:
        synchronize()
    ms = (time.perf_counter() - start) * 1e3 / count
    print(f"{label}: {ms:.4f} ms/iteration ({count} meta-iterations)",
          flush=True)
    return ms
