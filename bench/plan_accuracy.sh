#!/usr/bin/env bash
# The planner's cost model against measured runs on this machine (issue 16):
# calibrates this machine for 1 to MAXNP MPI processes (`metac calibrate`),
# asks `metac plan` for every plan of each process count, runs every plan
# that fits (`metac run --np N`) and compares predicted with measured time
# per meta-iteration and peak memory per device (the largest rank's, over
# the meta-iterations). With more processes than cores the ranks share
# them: the calibration measures that, as a cluster of slower devices.
#   bench/plan_accuracy.sh            (all phases; resumable)
#   MAXNP=4 SPECS="sinusoid" bench/plan_accuracy.sh
# Environment: MAXNP (8), SPECS (sinusoid maml_fashion_mnist
# transformer_sequence), OUT (bench/out/plan_accuracy), METAC (a metac
# binary to use as it is), MAXNP_<spec> (a lower limit for one spec: the
# transformer has 26 plans of 4 processes, minutes each), and ITERS_<spec>
# for the meta-iterations of each run (the first one is not timed);
# REPEATS (3) interleaved rounds of each process count's plans, the
# median of each plan kept; RUNS=0 re-plans and compares without running
# plans not yet measured. Each calibration and
# each plan's runs are paired with a drift probe (below).
# Ends with exactly one line:
#   plan accuracy: time MAPE X%, memory MAPE Y%, kendall tau Z, chosen plan
#   within W% of best measured
# Run it on an otherwise idle machine: the figures are times.
set -euo pipefail
source "$(dirname "$0")/metac-binary.sh"
out=${OUT:-$root/bench/out/plan_accuracy}
maxnp=${MAXNP:-8}
specs=${SPECS:-"sinusoid maml_fashion_mnist transformer_sequence"}
mkdir -p "$out"
declare -A iters=([sinusoid]=${ITERS_sinusoid:-400}
  [maml_fashion_mnist]=${ITERS_maml_fashion_mnist:-5}
  [transformer_sequence]=${ITERS_transformer_sequence:-4})

# The examples without their evaluation blocks: the meta-iterations are
# what is predicted and timed (the model, tasks and training are the
# examples' own).
for spec in $specs; do
  sed '/^ *evaluate *{.*}$/d' "$root/examples/$spec.meta" >"$out/$spec.meta"
done

# The drift probe: this machine's speed moves (by 40% within the hour on
# the 2-core VMs of this project), so every calibration and every measured
# plan is paired with a fixed reference run taken just before it (one
# process, the sinusoid, 400 meta-iterations: about a second). The
# comparison reports the error with and without scaling each prediction by
# the probe's change since its calibration. The probe is the median of
# three runs (one run moves by 20% on its own).
sed '/^ *evaluate *{.*}$/d' "$root/examples/sinusoid.meta" >"$out/probe.meta"
probe() {
  for r in 1 2 3; do
    "$metac" run "$out/probe.meta" --np=1 --mesh=task=1 --iterations=400 \
      --quiet </dev/null 2>&1 | sed -n 's/.*, \([0-9.]*\) ms\/iteration.*/\1/p' | head -1
  done | sort -g | sed -n 2p
}

# One process count at a time: its calibration, then its plans of every
# spec, so that the calibration and the runs it predicts lie in the same
# stretch of this machine's speed.
run_plan() { # spec n mesh micro schedule -> "ms peak" or nothing
  local spec=$1 n=$2 mesh=$3 micro=$4 schedule=$5 extra=()
  local tag="$spec-$n-$mesh-$micro-$schedule"
  [ "$schedule" != none ] && extra=(--micro-batches="$micro" --schedule="$schedule")
  if "$metac" run "$out/$spec.meta" --np="$n" --mesh="$mesh" "${extra[@]}" \
    --iterations="${iters[$spec]}" --quiet --metrics="$out/metrics-$tag.jsonl" \
    </dev/null >"$out/log-$tag.txt" 2>&1; then
    echo "$(sed -n 's/.*, \([0-9.]*\) ms\/iteration.*/\1/p' "$out/log-$tag.txt" | head -1)" \
      "$(sed -n 's/.*"peak_train_device_bytes": \([0-9]*\).*/\1/p' \
        "$out/metrics-$tag.jsonl" | tail -1)"
  else
    echo "  failed: $spec on $n, $mesh: $(tail -2 "$out/log-$tag.txt" | head -1)" >&2
  fi
}

for n in $(seq 1 "$maxnp"); do
  cluster=$out/cpu-$n.yaml
  if [ ! -s "$cluster" ]; then
    before=$(probe)
    "$metac" calibrate --np="$n" --quiet -o "$cluster"
    echo "$before $(probe)" >"$out/probe-cpu-$n.txt"
  fi
  for spec in $specs; do
    limit=MAXNP_$spec
    [ "$n" -gt "${!limit:-$maxnp}" ] && continue
    plans=$out/plans-$spec-$n.json
    if [ ! -s "$plans" ]; then
      # Device counts that no plan can use (they divide nothing) are left
      # out, with the planner's reason.
      if ! "$metac" plan "$out/$spec.meta" --cluster="$cluster" \
        --format=json >"$plans" 2>"$out/plans-$spec-$n.err"; then
        echo "[]" >"$plans"
        echo "$spec on $n: $(head -1 "$out/plans-$spec-$n.err")"
      fi
    fi
    /usr/bin/python3 - "$plans" <<'PY' >"$out/list-$spec-$n.txt"
import json, sys
for p in json.load(open(sys.argv[1])):
    if p["fits"] and p.get("exact", True):
        print(p["mesh"], p["micro_batches"], p["schedule"])
PY
    # The plans not measured yet, run in REPEATS interleaved rounds (each
    # round every plan once, in a rotated order) and the median of each
    # kept: drift during the group moves all its plans alike, so the
    # ranking within the group is the machine's, not the hour's.
    mapfile -t todo < <(while read -r mesh micro schedule; do
      [ -s "$out/run-$spec-$n-$mesh-$micro-$schedule.txt" ] ||
        echo "$mesh $micro $schedule"
    done <"$out/list-$spec-$n.txt")
    [ "${#todo[@]}" = 0 ] || [ "${RUNS:-1}" = 0 ] && continue
    echo "running $spec on $n: ${#todo[@]} plans, ${REPEATS:-3} rounds"
    drift=$(probe)
    declare -A samples=() failed=()
    for r in $(seq 0 $((${REPEATS:-3} - 1))); do
      for i in "${!todo[@]}"; do
        plan=${todo[$(((i + r) % ${#todo[@]}))]}
        [ -n "${failed[$plan]:-}" ] && continue
        # shellcheck disable=SC2086
        if got=$(run_plan "$spec" "$n" $plan) && [ -n "$got" ]; then
          samples[$plan]+="$got;"
        else
          failed[$plan]=1
        fi
      done
    done
    for plan in "${todo[@]}"; do
      [ -n "${failed[$plan]:-}" ] && continue
      read -r mesh micro schedule <<<"$plan"
      echo "${samples[$plan]}" | tr ';' '\n' | sed '/^$/d' | sort -g |
        awk -v d="$drift" '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)], d }' \
          >"$out/run-$spec-$n-$mesh-$micro-$schedule.txt"
    done
    unset samples failed
  done
done

/usr/bin/python3 "$root/bench/plan_accuracy.py" "$out" $specs --maxnp="$maxnp"
