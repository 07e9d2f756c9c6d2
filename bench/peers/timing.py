"""How the PyTorch peers time a variant: warm-up steps (compilation, where
torch.compile refuses the double backward: reported, not timed), then
`count` timed steps, one line `LABEL: X ms/iteration (N meta-iterations)`
or `LABEL: unsupported (REASON)`. Returns the ms, or None when refused."""

import time


def time_variant(label, step, warmup, count):
    try:
        for _ in range(warmup):
            step()
    except Exception as error:  # Dynamo/AOTAutograd refusals
        reason = str(error).strip().splitlines()[0][:160]
        print(f"{label}: unsupported ({type(error).__name__}: {reason})",
              flush=True)
        return None
    start = time.perf_counter()
    for _ in range(count):
        step()
    ms = (time.perf_counter() - start) * 1e3 / count
    print(f"{label}: {ms:.4f} ms/iteration ({count} meta-iterations)",
          flush=True)
    return ms
