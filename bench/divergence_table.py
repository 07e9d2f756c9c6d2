#!/usr/bin/python3
"""The table of bench/sinusoid_divergence.sh: for every trained model
(framework, seed, threads) and both evaluations (metac's and PyTorch's, each
on its own 600 held-out tasks), the query MSE after 1 and 10 inner steps over
the tasks that did not diverge, and how many tasks diverged (a non-finite
loss, or above 100) after 1 to 10 steps. The summary counts distinct
models: runs that trained bitwise the same parameters (another thread count)
count once.

  /usr/bin/python3 bench/divergence_table.py DIR [--compact]

--compact: one row per distinct model, both evaluations side by side.
"""
import hashlib
import json
import pathlib
import sys


def metac_eval(path):
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [r["evaluation"] for r in rows if "evaluation" in r]


def torch_eval(path):
    return json.loads(path.read_text())["evaluation"]


def fmt(e):
    if e["loss"] is None:
        return "all diverged"
    return f'{e["loss"]:.4f} ± {e["loss_ci95"]:.4f}'


def compact(directory):
    """One row per distinct model: both evaluations side by side."""
    print("| trained by | seed | BLAS kernels | threads | metac's evaluation: "
          "1 step, 10 steps, most diverged | PyTorch's evaluation: 1 step, "
          "10 steps, most diverged |")
    print("|---|---|---|---|---|---|")
    rows = {}
    for run in sorted(directory.glob("*-s*-t*.safetensors")):
        trained, seed, threads, *core = run.stem.split("-")
        digest = hashlib.sha256(run.read_bytes()).hexdigest()
        cells = []
        for path, read in [(directory / f"{run.stem}.metac-eval.jsonl", metac_eval),
                           (directory / f"{run.stem}.torch-eval.json", torch_eval)]:
            if not path.exists():
                cells.append("")
                continue
            evals = {e["steps"]: e for e in read(path)}
            most = max(evals[k]["diverged"] for k in evals)
            cells.append(f"{fmt(evals[1])}, {fmt(evals[10])}, {most}")
        key = (trained, digest)
        if key in rows:
            rows[key][3].append(threads[1:])
            continue
        rows[key] = [trained, int(seed[1:]), core[0] if core else "native",
                     [threads[1:]], cells]
    for trained, seed, core, threads, cells in sorted(
            rows.values(), key=lambda r: (r[0], r[2] != "native", r[2], r[1])):
        print(f"| {trained} | {seed} | {core} | {', '.join(threads)} | "
              f"{cells[0]} | {cells[1]} |")


def main():
    directory = pathlib.Path(sys.argv[1])
    if len(sys.argv) > 2 and sys.argv[2] == "--compact":
        compact(directory)
        return
    runs = sorted(directory.glob("*-s*-t*.safetensors"))
    print("| trained by | seed | threads | BLAS kernels | evaluated by | "
          "MSE, 1 step | MSE, 10 steps | diverged tasks at 1..10 steps |")
    print("|---|---|---|---|---|---|---|---|")
    summary, seen, models = {}, set(), {}
    for run in runs:
        # Runs that trained bitwise the same model (another thread count)
        # are listed but counted once in the summary.
        digest = hashlib.sha256(run.read_bytes()).hexdigest()
        trained, seed, threads, *core = run.stem.split("-")
        core = core[0] if core else "native"
        for evaluator, path, read in [
                ("metac", directory / f"{run.stem}.metac-eval.jsonl", metac_eval),
                ("pytorch", directory / f"{run.stem}.torch-eval.json", torch_eval)]:
            if not path.exists():
                continue
            evals = {e["steps"]: e for e in read(path)}
            diverged = [evals[k]["diverged"] for k in range(1, 11) if k in evals]
            print(f"| {trained} | {seed[1:]} | {threads[1:]} | {core} | {evaluator} | "
                  f"{fmt(evals[1])} | {fmt(evals[10])} | "
                  f"{' '.join(map(str, diverged))} |")
            bad = models.setdefault((trained, digest), False)
            models[(trained, digest)] = bad or max(diverged) > 0
            if (digest, evaluator) in seen:
                continue
            seen.add((digest, evaluator))
            key = (trained, evaluator)
            runs_bad, tasks_bad, total = summary.get(key, (0, 0, 0))
            summary[key] = (runs_bad + (max(diverged) > 0),
                            tasks_bad + max(diverged), total + 1)
    print()
    print("| trained by | evaluated by | distinct models with a diverged task | "
          "diverged tasks (most over 1..10 steps, summed over models) |")
    print("|---|---|---|---|")
    for (trained, evaluator), (runs_bad, tasks_bad, total) in sorted(summary.items()):
        print(f"| {trained} | {evaluator} | {runs_bad} of {total} | {tasks_bad} |")
    for trained in sorted({t for t, _ in models}):
        flags = [bad for (t, _), bad in models.items() if t == trained]
        print(f"| {trained} | either | {sum(flags)} of {len(flags)} | |")


if __name__ == "__main__":
    main()
