#!/bin/bash
# env_launch.sh KIND NP PORT DIR PROGRAM ARGS...: starts NP copies of
# PROGRAM ARGS as a launcher without MPI would, each told its rank by the
# environment alone: KIND `slurm` sets srun's variables (SLURM_PROCID,
# SLURM_STEP_NUM_TASKS, SLURM_LOCALID, SLURM_STEP_NODELIST, SLURM_JOB_ID;
# MASTER_PORT=PORT), `torchrun` those torchrun gives its workers (RANK,
# WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR,
# MASTER_PORT; without TORCHELASTIC_RUN_ID, since no agent holds the port),
# or, when `torchrun` is on PATH as TORCHRUN names it, runs that torchrun
# itself. Rank R's output goes to DIR/out.R and DIR/err.R; with
# KILL=R:FILE rank R is killed (SIGKILL) once the metrics file FILE shows
# the job training, with TERM_WHEN=FILE every rank gets SIGTERM then (a
# scheduler's preemption).
# Prints each rank's exit code and the seconds the job took.
set -u
kind=$1 np=$2 port=$3 dir=$4
shift 4
mkdir -p "$dir"
start=$(date +%s.%N)
if [ "$kind" = torchrun ] && [ -n "${TORCHRUN:-}" ]; then
  "$TORCHRUN" --nproc_per_node="$np" --master_port="$port" --no_python \
    "$@" >"$dir/out.0" 2>"$dir/err.0"
  echo "torchrun exit $?"
  exit 0
fi
pids=()
for ((r = 0; r < np; ++r)); do
  if [ "$kind" = slurm ]; then
    env SLURM_PROCID=$r SLURM_STEP_NUM_TASKS="$np" SLURM_LOCALID=$r \
      SLURM_STEP_NODELIST=localhost SLURM_JOB_ID=4242 MASTER_PORT="$port" \
      "$@" >"$dir/out.$r" 2>"$dir/err.$r" &
  else
    env RANK=$r WORLD_SIZE="$np" LOCAL_RANK=$r LOCAL_WORLD_SIZE="$np" \
      GROUP_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
      "$@" >"$dir/out.$r" 2>"$dir/err.$r" &
  fi
  pids+=($!)
done
# Waits (up to 120 s) until FILE, a metrics file, has 5 meta-iterations:
# the ranks met and train.
training() {
  for _ in $(seq 1 1200); do
    [ -s "$1" ] && [ "$(wc -l <"$1")" -ge 5 ] && return
    sleep 0.1
  done
}
if [ -n "${KILL:-}" ]; then
  training "${KILL#*:}"
  kill -9 "${pids[${KILL%%:*}]}"
fi
if [ -n "${TERM_WHEN:-}" ]; then
  training "$TERM_WHEN"
  kill -TERM "${pids[@]}"
fi
codes=()
for pid in "${pids[@]}"; do
  wait "$pid"
  codes+=($?)
done
end=$(date +%s.%N)
echo "exit codes: ${codes[*]}, $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%d", b - a }') s"
