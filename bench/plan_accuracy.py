#!/usr/bin/env python3
"""Predicted against measured time and memory per plan (bench/plan_accuracy.sh).

Reads the planner's JSON (plans-SPEC-N.json) and the runs (run-*.txt: ms per
meta-iteration and the largest rank's peak device bytes) from OUT, prints a
table per spec and process count, and ends with one line:
  plan accuracy: time MAPE X%, memory MAPE Y%, kendall tau Z, chosen plan
  within W% of best measured
Runs and calibrations paired with a drift probe (the same reference run
just before each: probe-cpu-N.txt, the third field of run-*.txt) also get
the error of the prediction scaled by the probe's change since the
calibration, printed as a line of its own before the last.
Kendall's tau is over every pair of plans of the same spec and process
count (pooled over the groups; tied pairs left out); "chosen" is the planner's first plan,
compared with the fastest measured plan of its group (the worst group).
"""
import argparse
import json
import os


def kendall_pairs(pairs):
    """Concordant and discordant counts of (predicted, measured) pairs."""
    concordant = discordant = 0
    for i in range(len(pairs)):
        for j in range(i + 1, len(pairs)):
            a = (pairs[i][0] - pairs[j][0]) * (pairs[i][1] - pairs[j][1])
            if a > 0:
                concordant += 1
            elif a < 0:
                discordant += 1
    return concordant, discordant


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("specs", nargs="+")
    parser.add_argument("--maxnp", type=int, default=8)
    args = parser.parse_args()
    time_errors, memory_errors, drift_errors = [], [], []
    concordant = discordant = 0
    chosen_gaps = []
    print(f"{'spec':22} {'n':>2} {'plan':44} {'pred ms':>9} {'meas ms':>9} "
          f"{'err':>6} {'pred MiB':>9} {'meas MiB':>9} {'err':>6} "
          f"{'drift':>5} {'err':>6}")
    for spec in args.specs:
        for n in range(1, args.maxnp + 1):
            path = os.path.join(args.out, f"plans-{spec}-{n}.json")
            if not os.path.exists(path):
                continue
            plans = [p for p in json.load(open(path))
                     if p["fits"] and p.get("exact", True)]
            # The probe around the calibration of N processes (the mean
            # of the runs before and after it).
            calibrated = None
            probe_path = os.path.join(args.out, f"probe-cpu-{n}.txt")
            if os.path.exists(probe_path):
                values = [float(v) for v in open(probe_path).read().split()]
                if values:
                    calibrated = sum(values) / len(values)
            rows = []
            for rank, p in enumerate(plans):
                tag = f"{spec}-{n}-{p['mesh']}-{p['micro_batches']}-{p['schedule']}"
                run = os.path.join(args.out, f"run-{tag}.txt")
                if not os.path.exists(run):
                    continue
                fields = open(run).read().split()
                if len(fields) < 2:
                    continue
                ms, peak = float(fields[0]), float(fields[1])
                label = p["mesh"]
                if p["schedule"] != "none":
                    label += f" ({p['micro_batches']} mb, {p['schedule']})"
                terr = (p["predicted_ms"] - ms) / ms
                drift = ""
                if calibrated and len(fields) >= 3:
                    scale = float(fields[2]) / calibrated
                    derr = (p["predicted_ms"] * scale - ms) / ms
                    drift_errors.append(abs(derr))
                    drift = f" {scale:5.2f} {derr * 100:+5.1f}%"
                merr = (p["peak_bytes"] - peak) / peak
                time_errors.append(abs(terr))
                memory_errors.append(abs(merr))
                rows.append((rank, p["predicted_ms"], ms))
                print(f"{spec:22} {n:>2} {label:44} {p['predicted_ms']:9.3f} "
                      f"{ms:9.3f} {terr * 100:+5.1f}% {p['peak_bytes'] / 2**20:9.2f} "
                      f"{peak / 2**20:9.2f} {merr * 100:+5.1f}%{drift}")
            if len(rows) >= 2:
                c, d = kendall_pairs([(r[1], r[2]) for r in rows])
                concordant += c
                discordant += d
            if rows:
                chosen = min(rows, key=lambda r: r[0])
                best = min(r[2] for r in rows)
                chosen_gaps.append((chosen[2] - best) / best)
    if not time_errors:
        print("plan accuracy: no runs")
        return
    tau = ((concordant - discordant) / (concordant + discordant)
           if concordant + discordant else 1.0)
    print(f"{len(time_errors)} runs; {concordant + discordant} pairs of plans "
          f"compared within their groups")
    if drift_errors:
        print(f"with the drift probe ({len(drift_errors)} runs): time MAPE "
              f"{100 * sum(drift_errors) / len(drift_errors):.1f}% with each "
              f"prediction scaled by the probe's change since calibration")
    print(f"plan accuracy: time MAPE {100 * sum(time_errors) / len(time_errors):.1f}%, "
          f"memory MAPE {100 * sum(memory_errors) / len(memory_errors):.1f}%, "
          f"kendall tau {tau:.3f}, chosen plan within "
          f"{100 * max(chosen_gaps):.1f}% of best measured")


if __name__ == "__main__":
    main()
