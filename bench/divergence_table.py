#!/usr/bin/python3
"""The table of bench/sinusoid_divergence.sh: for every trained model
(framework, seed, threads) and both evaluations (metac's and PyTorch's, each
on its own 600 held-out tasks), the query MSE after 1 and 10 inner steps over
the tasks that did not diverge, and how many tasks diverged (a non-finite
loss, or above 100) after 1 to 10 steps. The summary counts distinct
models: runs that trained bitwise the same parameters (another thread count)
count once.

  /usr/bin/python3 bench/divergence_table.py DIR
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


def main():
    directory = pathlib.Path(sys.argv[1])
    runs = sorted(directory.glob("*-s*-t*.safetensors"))
    print("| trained by | seed | threads | BLAS kernels | evaluated by | "
          "MSE, 1 step | MSE, 10 steps | diverged tasks at 1..10 steps |")
    print("|---|---|---|---|---|---|---|---|")
    summary, seen = {}, set()
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


if __name__ == "__main__":
    main()
