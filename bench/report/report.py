#!/usr/bin/env python3
"""Renders a `metac bench` study: DIR/report.md with tables and DIR/plots/*.png.

Reads DIR/environment.json and DIR/runs/<study>/*.json (one record per run,
written by `metac bench`). Every figure of a point is the mean and standard
deviation over its repetitions; a run's time per meta-iteration is the
median over its iterations after the first. Needs matplotlib (metac bench
runs this in the virtual environment of bench/report/plot-venv.sh).
"""

import glob
import json
import math
import os
import statistics
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DPI = 110


def load(directory):
    env_path = os.path.join(directory, "environment.json")
    environment = {}
    if os.path.exists(env_path):
        with open(env_path) as f:
            environment = json.load(f)
    studies = OrderedDict()
    failed = []
    for path in sorted(glob.glob(os.path.join(directory, "runs", "*", "*.json"))):
        with open(path) as f:
            try:
                run = json.load(f)
            except json.JSONDecodeError as e:
                failed.append({"path": path, "error": f"unreadable record: {e}"})
                continue
        if run.get("status") != "ok":
            failed.append({"path": path, "error": run.get("error", "failed")})
            continue
        studies.setdefault(run["study"], []).append(run)
    # The matrix's order: studies, then points.
    ordered = sorted(studies.items(), key=lambda kv: kv[1][0].get("study_index", 0))
    return environment, OrderedDict(ordered), failed


def number(value):
    return isinstance(value, (int, float)) and math.isfinite(value)


def mean_sd(values):
    values = [v for v in values if number(v)]
    if not values:
        return None, None
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def fmt(value, sd=None, digits=3):
    """`value ± sd` (the spread only when repetitions differ); — for none."""
    if value is None:
        return "—"
    text = f"{value:.{digits}g}"
    if sd:
        text += f" ± {sd:.2g}"
    return text


def total_flops(run):
    """FLOPs of a meta-iteration on all ranks: rank 0's program counts its
    share; under task, data and tensor parallelism every rank does as much
    (pipeline stages differ, so this is an estimate there)."""
    flops = run.get("flops_per_iteration")
    return flops * run.get("processes", 1) if number(flops) else None


def quality(run):
    """The last evaluation's accuracy (higher is better) or loss (lower)."""
    evaluations = run.get("evaluation") or []
    if not evaluations:
        return None, None
    last = evaluations[-1]
    if number(last.get("accuracy")):
        return "accuracy", last["accuracy"]
    if number(last.get("loss")):
        return "loss", last["loss"]
    return None, None


def comm_split(run):
    """Seconds per iteration in collectives, split off the pipeline's."""
    collectives = pipeline = 0.0
    for axes, stats in (run.get("comm_per_iteration") or {}).items():
        seconds = stats.get("seconds", 0.0)
        if "pipeline" in axes:
            pipeline += seconds
        else:
            collectives += seconds
    return collectives, pipeline


class Point:
    """The repetitions of one point of a study."""

    def __init__(self, runs):
        self.runs = runs
        self.axes = runs[0]["axes"]
        self.name = runs[0]["point"]
        self.processes = runs[0]["processes"]
        self.scaling = runs[0].get("scaling", "strong")

    def stat(self, fn):
        return mean_sd([fn(r) for r in self.runs])

    def time(self):
        return self.stat(lambda r: r.get("seconds_per_iteration"))

    def quality(self):
        kinds = {quality(r)[0] for r in self.runs} - {None}
        if len(kinds) != 1:
            return None, None, None
        m, s = self.stat(lambda r: quality(r)[1])
        return kinds.pop(), m, s


def group_points(runs):
    points = OrderedDict()
    for run in sorted(runs, key=lambda r: (r.get("point_index", 0), r["point"], r["repetition"])):
        points.setdefault(run["point"], []).append(run)
    return [Point(rs) for rs in points.values()]


def axis_order(runs):
    order = []
    for run in runs:
        for axis in run["axes"]:
            if axis not in order:
                order.append(axis)
    return order


def numeric_axes(points, axes):
    result = []
    for axis in axes:
        values = {p.axes.get(axis) for p in points}
        try:
            if len(values) >= 2 and all(v is not None for v in values):
                [float(v) for v in values]
                result.append(axis)
        except ValueError:
            pass
    return result


def device_axis(points, axis):
    """Whether the processes change with this axis's value."""
    by_value = defaultdict(set)
    for p in points:
        by_value[p.axes[axis]].add(p.processes)
    return len({frozenset(v) for v in by_value.values()}) > 1


def series(points, axis):
    """Points along `axis`, grouped by the values of the other axes."""
    groups = OrderedDict()
    for p in points:
        rest = ", ".join(f"{k}={v}" for k, v in p.axes.items() if k != axis)
        groups.setdefault(rest, []).append(p)
    for rest in groups:
        groups[rest].sort(key=lambda p: float(p.axes[axis]))
    return groups


def save(fig, directory, name):
    os.makedirs(os.path.join(directory, "plots"), exist_ok=True)
    path = os.path.join("plots", name)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, path), dpi=DPI)
    plt.close(fig)
    return path


def geometric(groups, axis):
    """Whether the axis's values span a factor of 8 or more: then log-log
    axes show a power law as a line."""
    values = [float(p.axes[axis]) for pts in groups.values() for p in pts]
    return min(values) > 0 and max(values) / min(values) >= 8


def plot_lines(ax, groups, axis, fn, ylabel, logx=False):
    drawn = False
    for label, pts in groups.items():
        xs, ys, es = [], [], []
        for p in pts:
            m, s = fn(p)
            if m is None:
                continue
            xs.append(float(p.axes[axis]))
            ys.append(m)
            es.append(s or 0.0)
        if xs:
            ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=label or "all")
            drawn = True
    if logx:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
    ticks(ax, groups, axis)
    ax.set_ylabel(ylabel + (" (log)" if logx else ""))
    ax.grid(True, alpha=0.3, which="both")
    return drawn


def ticks(ax, groups, axis):
    """The axis's values as ticks: device counts are not continuous."""
    values = sorted({float(p.axes[axis]) for pts in groups.values() for p in pts})
    ax.set_xticks(values)
    ax.set_xticklabels([f"{v:g}" for v in values])
    ax.minorticks_off() if ax.get_xscale() == "log" else None
    ax.set_xlabel(axis)


def legend(ax, groups):
    if len(groups) > 1 or next(iter(groups), ""):
        ax.legend(fontsize=8)


def device_scaling(directory, study, points, axis):
    groups = series(points, axis)
    weak = points[0].scaling == "weak"
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    plot_lines(left, groups, axis, lambda p: scale(p.time(), 1e3), "time per meta-iteration (ms)")
    left.set_title(f"{study}: time against {axis} ({'weak' if weak else 'strong'} scaling)")
    legend(left, groups)
    for label, pts in groups.items():
        base = pts[0]
        t0, _ = base.time()
        n0 = base.processes
        xs, eff = [], []
        for p in pts:
            t, _ = p.time()
            if t is None or t0 is None:
                continue
            ratio = t0 / t if weak else (t0 * n0) / (t * p.processes)
            xs.append(float(p.axes[axis]))
            eff.append(100.0 * ratio)
        if xs:
            right.plot(xs, eff, marker="o", label=label or "all")
    right.axhline(100, color="grey", linestyle="--", linewidth=1)
    ticks(right, groups, axis)
    right.set_ylabel("parallel efficiency (%)")
    right.set_title("efficiency: " + ("T1 / TN" if weak else "T1·N1 / (TN·N)"))
    right.grid(True, alpha=0.3)
    legend(right, groups)
    return save(fig, directory, f"{study}-devices-{axis}.png")


def scale(pair, factor):
    m, s = pair
    return (None if m is None else m * factor, None if s is None else s * factor)


def size_scaling(directory, study, points, axis):
    groups = series(points, axis)
    log = geometric(groups, axis)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    plot_lines(axes[0], groups, axis, lambda p: scale(p.time(), 1e3),
               "time per meta-iteration (ms)", log)
    plot_lines(axes[1], groups, axis,
               lambda p: scale(p.stat(lambda r: r.get("peak_device_bytes")), 1 / 2**20),
               "peak device memory (MiB)", log)
    plot_lines(axes[2], groups, axis,
               lambda p: scale(p.stat(total_flops), 1e-9),
               "GFLOP per meta-iteration (all ranks)", log)
    axes[0].set_title(f"{study}: scaling with {axis}")
    axes[1].set_title("memory")
    axes[2].set_title("work")
    legend(axes[0], groups)
    return save(fig, directory, f"{study}-scaling-{axis}.png")


def scaling_table(points, axis):
    """Speed-up and efficiency against the first value of a device axis."""
    weak = points[0].scaling == "weak"
    lines = [f"| {'other axes | ' if len(points[0].axes) > 1 else ''}{axis} | ranks | "
             f"ms / iteration | speed-up | efficiency ({'weak' if weak else 'strong'}) |",
             "|" + "---|" * (5 + (len(points[0].axes) > 1))]
    for rest, pts in series(points, axis).items():
        t0, _ = pts[0].time()
        for p in pts:
            t, _ = p.time()
            if t is None or t0 is None:
                continue
            speedup = t0 / t
            efficiency = speedup if weak else speedup * pts[0].processes / p.processes
            prefix = f"{rest} | " if len(points[0].axes) > 1 else ""
            lines.append(f"| {prefix}{p.axes[axis]} | {p.processes} | {t * 1e3:.3g} | "
                         f"{speedup:.2f}× | {100 * efficiency:.0f}% |")
    return "\n".join(lines)


def pareto_front(xs, ys, higher_better):
    """Indices of the points no other point beats on both cost and quality."""
    order = sorted(range(len(xs)), key=lambda i: (xs[i], -ys[i] if higher_better else ys[i]))
    front, best = [], None
    for i in order:
        if best is None or (ys[i] > best if higher_better else ys[i] < best):
            front.append(i)
            best = ys[i]
    return front


def pareto(directory, study, points):
    rows = []
    for p in points:
        kind, q, _ = p.quality()
        t, _ = p.time()
        mem, _ = p.stat(lambda r: r.get("peak_device_bytes"))
        if kind and q is not None and t is not None and mem is not None:
            rows.append((p, kind, q, t, mem))
    kinds = {r[1] for r in rows}
    # A front needs points to choose between.
    if len(rows) < 3 or len(kinds) != 1:
        return None
    kind = kinds.pop()
    higher = kind == "accuracy"
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, cost, xlabel in ((axes[0], lambda r: r[4] / 2**20, "peak device memory (MiB)"),
                             (axes[1], lambda r: r[3] * 1e3, "time per meta-iteration (ms)")):
        xs = [cost(r) for r in rows]
        ys = [r[2] for r in rows]
        ax.scatter(xs, ys, color="tab:blue", label="points")
        front = pareto_front(xs, ys, higher)
        fx = [xs[i] for i in front]
        fy = [ys[i] for i in front]
        ax.plot(fx, fy, color="tab:red", marker="D", linewidth=2, label="Pareto front")
        for i in front:
            ax.annotate(short_name(rows[i][0]), (xs[i], ys[i]), fontsize=7,
                        xytext=(4, 4), textcoords="offset points")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"evaluation {kind} ({'higher' if higher else 'lower'} is better)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_title(f"{study}: {kind} against memory")
    axes[1].set_title(f"{study}: {kind} against time")
    return save(fig, directory, f"{study}-pareto.png")


def short_name(point):
    """A point's label: the values alone when one axis varies."""
    if len(point.axes) == 1:
        return next(iter(point.axes.values()))
    return point.name


def breakdown(directory, study, points):
    """Stacked time per meta-iteration. With `--profile` records the time
    outside runtime calls (the host between calls, idle) is split off."""
    names, compute, collectives, pipeline, outside = [], [], [], [], []
    profiled = all(number(r.get("calls_seconds_per_iteration")) for p in points for r in p.runs)
    for p in points:
        t, _ = p.time()
        if t is None:
            continue
        c, _ = p.stat(lambda r: comm_split(r)[0])
        s, _ = p.stat(lambda r: comm_split(r)[1])
        c, s = c or 0.0, s or 0.0
        busy = p.stat(lambda r: r.get("calls_seconds_per_iteration"))[0] if profiled else t
        busy = min(busy, t)
        names.append(short_name(p))
        collectives.append(c * 1e3)
        pipeline.append(s * 1e3)
        compute.append(max(busy - c - s, 0.0) * 1e3)
        outside.append(max(t - busy, 0.0) * 1e3)
    if not names:
        return None
    fig, ax = plt.subplots(figsize=(max(8, 0.7 * len(names) + 5), 4.5))
    xs = range(len(names))
    ax.bar(xs, compute, label="kernels and copies" if profiled else "compute and runtime",
           color="tab:blue")
    ax.bar(xs, collectives, bottom=compute, label="collectives (incl. waiting)", color="tab:orange")
    below = [a + b for a, b in zip(compute, collectives)]
    ax.bar(xs, pipeline, bottom=below, label="pipeline transfers and bubble", color="tab:green")
    if profiled:
        below = [a + b for a, b in zip(below, pipeline)]
        ax.bar(xs, outside, bottom=below, label="outside runtime calls (host, idle)",
               color="tab:grey")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names, rotation=35, ha="right", fontsize=7)
    ax.set_ylabel("time per meta-iteration (ms)")
    ax.set_title(f"{study}: where a meta-iteration goes (rank 0)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(True, axis="y", alpha=0.3)
    return save(fig, directory, f"{study}-breakdown.png")


def mfu(run):
    """Model FLOPs utilisation: achieved FLOP/s (all ranks) over the peak the
    matrix gives for the hardware of one run."""
    flops, seconds, peak = total_flops(run), run.get("seconds_per_iteration"), run.get("peak_flops")
    if not (number(flops) and number(seconds) and number(peak)) or seconds <= 0 or peak <= 0:
        return None
    return 100.0 * flops / seconds / peak


def function_label(name):
    name = name.removeprefix("metart_").removeprefix("nn_")
    return "generated kernels" if name == "run_host_kernel" else name


def profile_plot(directory, study, points):
    """Where the runtime's time goes, per point: the most expensive entry
    points in ms per meta-iteration (records of runs with `--profile`)."""
    per_point = []
    for p in points:
        totals = defaultdict(float)
        for r in p.runs:
            iterations = r.get("profile_iterations") or 0
            for entry in r.get("profile") or []:
                if iterations > 0:
                    totals[function_label(entry["function"])] += (
                        entry["seconds"] / iterations / len(p.runs) * 1e3)
        if totals:
            per_point.append((short_name(p), totals))
    if not per_point:
        return None
    overall = defaultdict(float)
    for _, totals in per_point:
        for name, ms in totals.items():
            overall[name] += ms
    top = [name for name, _ in sorted(overall.items(), key=lambda kv: -kv[1])[:9]]
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(per_point) + 2.2))
    colours = plt.get_cmap("tab10").colors
    lefts = [0.0] * len(per_point)
    ys = range(len(per_point))
    for i, name in enumerate(top + ["other"]):
        widths = [totals.get(name, 0.0) if name != "other"
                  else sum(v for k, v in totals.items() if k not in top)
                  for _, totals in per_point]
        ax.barh(ys, widths, left=lefts, color=colours[i % 10], label=name)
        lefts = [a + b for a, b in zip(lefts, widths)]
    ax.set_yticks(list(ys))
    ax.set_yticklabels([name for name, _ in per_point], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("time in runtime calls per meta-iteration (ms)")
    ax.set_title(f"{study}: runtime calls by function (--profile, rank 0)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(True, axis="x", alpha=0.3)
    return save(fig, directory, f"{study}-profile.png")


def table(points, axes):
    with_mfu = any(number(r.get("peak_flops")) for p in points for r in p.runs)
    header = axes + ["ranks", "runs", "ms / iteration", "tasks/s", "GFLOP / it", "GFLOP/s"] + (
        ["MFU %"] if with_mfu else []) + [
                     "peak device MiB", "peak host MiB", "collectives ms / it",
                     "bytes / it", "evaluation", "final meta-loss"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for p in points:
        t = scale(p.time(), 1e3)
        tasks = p.stat(lambda r: r.get("tasks_per_second"))
        flops = scale(p.stat(total_flops), 1e-9)
        rate = scale(p.stat(lambda r: (total_flops(r) or math.nan)
                            / (r.get("seconds_per_iteration") or math.nan)), 1e-9)
        dev = scale(p.stat(lambda r: r.get("peak_device_bytes")), 1 / 2**20)
        host = scale(p.stat(lambda r: r.get("peak_host_bytes")), 1 / 2**20)
        comm = scale(p.stat(lambda r: r.get("comm_seconds_per_iteration")), 1e3)
        nbytes = p.stat(lambda r: r.get("comm_bytes_per_iteration"))
        kind, q, qs = p.quality()
        loss = p.stat(lambda r: r.get("final_meta_loss"))
        cells = [p.axes.get(a, "") for a in axes] + [
            str(p.processes), str(len(p.runs)), fmt(*t), fmt(*tasks), fmt(*flops), fmt(*rate)] + (
            [fmt(*p.stat(mfu))] if with_mfu else []) + [fmt(*dev),
            fmt(*host), fmt(*comm), fmt(nbytes[0]),
            (f"{kind} " + fmt(q, qs, 4)) if kind else "—", fmt(*loss)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def environment_table(env):
    gpus = ", ".join(f"{g.get('name')} (driver {g.get('driver')}, {g.get('memory')})"
                     for g in env.get("gpus") or []) or "none"
    rows = [("CPU", f"{env.get('cpu_model', '?')}, {env.get('logical_cores', '?')} logical cores"),
            ("memory", f"{(env.get('memory_bytes') or 0) / 2**30:.1f} GiB"),
            ("GPUs", gpus),
            ("MPI", env.get("mpi") or "none"),
            ("CUDA toolkit", env.get("cuda_toolkit") or "none"),
            ("LLVM", env.get("llvm", "?")),
            ("compiler", env.get("compiler", "?")),
            ("OS", f"{env.get('os', '?')}, kernel {env.get('kernel', '?')}"),
            ("metac", f"{env.get('metac_commit') or '?'}"
                      + (" (with uncommitted changes)" if env.get("metac_tree_modified") else ""))]
    lines = ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        print("usage: report.py DIR", file=sys.stderr)
        return 2
    directory = sys.argv[1]
    environment, studies, failed = load(directory)
    if not studies and not failed:
        print(f"report.py: error: no run records under {directory}/runs", file=sys.stderr)
        return 1
    out = [f"# Benchmark report: {next(iter(studies.values()))[0]['matrix'] if studies else '?'}",
           "",
           "Each figure is the mean ± standard deviation over a point's repetitions "
           "(different seeds); a run's time per meta-iteration is the median over its "
           "meta-iterations after the first. FLOPs are counted by the compiler per op "
           "(rank 0's program). Reproduce with `metac bench matrix.yaml -o DIR` "
           "(the matrix is copied into this directory).",
           "", "## Machine and software", "", environment_table(environment), ""]
    plots = []
    for study, runs in studies.items():
        points = group_points(runs)
        axes = axis_order(runs)
        common = [s for s in runs[0]["settings"] if all(s in r["settings"] for r in runs)]
        out += [f"## Study `{study}`", "",
                f"Spec `{runs[0]['spec']}`, {runs[0]['iterations_requested']} "
                f"meta-iterations per run; every run sets "
                + (", ".join(f"`{s}`" for s in common) or "nothing") + ". "
                "GFLOP counts all ranks.", "",
                table(points, axes), ""]
        for axis in numeric_axes(points, axes):
            if device_axis(points, axis):
                path = device_scaling(directory, study, points, axis)
                caption = f"Device scaling along `{axis}` ({points[0].scaling})"
                out += [scaling_table(points, axis), ""]
            else:
                path = size_scaling(directory, study, points, axis)
                caption = f"Scaling with `{axis}`: time, peak memory and FLOPs"
            plots.append(path)
            out += [f"![{caption}]({path})", "", f"*{caption}.*", ""]
        # Each plot that applies, with its alt text and caption.
        for draw, alt, caption in (
                (pareto, "Pareto fronts of",
                 "Evaluation quality against peak memory and against time; the red "
                 "line joins the points no other point beats on both."),
                (profile_plot, "Profile of",
                 "The runtime entry points that take the most time per meta-iteration "
                 "(kernels, generated kernels, copies, collectives), from `--profile`."),
                (breakdown, "Time breakdown of",
                 "Time per meta-iteration split into collectives (MPI/NCCL calls, "
                 "including waiting for other ranks), pipeline transfers and the rest; "
                 "with `--profile`, the time outside runtime calls (the host between "
                 "calls, idle) apart.")):
            path = draw(directory, study, points)
            if path:
                plots.append(path)
                out += [f"![{alt} {study}]({path})", "", f"*{caption}*", ""]
    if failed:
        out += ["## Failed runs", ""] + [f"- `{os.path.relpath(f['path'], directory)}`: {f['error']}"
                                         for f in failed] + [""]
    with open(os.path.join(directory, "report.md.partial"), "w") as f:
        f.write("\n".join(out))
    os.replace(os.path.join(directory, "report.md.partial"), os.path.join(directory, "report.md"))
    runs = sum(len(r) for r in studies.values())
    print(f"report: {os.path.join(directory, 'report.md')} ({runs} runs, "
          f"{len(plots)} plots, {len(failed)} failed runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
