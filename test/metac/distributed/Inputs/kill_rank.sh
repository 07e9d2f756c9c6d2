#!/bin/bash
# kill_rank.sh DIR SPEC METAC: trains SPEC on 4 MPI ranks with checkpoints in
# DIR/ck, kills rank 2 with SIGKILL after the first checkpoint, and reports
# how the job ended: the launcher's exit code and seconds until it ended.
set -u
dir=$1
spec=$2
metac=$3
mpirun -np 4 "$metac" run "$spec" --mesh task=4 --iterations 100000000 \
  --checkpoint-every 20 --checkpoint-dir "$dir/ck" --quiet \
  >"$dir/out.log" 2>"$dir/err.log" &
launcher=$!
for _ in $(seq 1 600); do
  [ -e "$dir/ck/checkpoint.safetensors" ] && break
  kill -0 $launcher 2>/dev/null || { echo "the job ended early"; exit 1; }
  sleep 0.1
done
victim=""
for pid in $(pgrep -f "checkpoint-dir $dir/ck"); do
  if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null |
    grep -qx "OMPI_COMM_WORLD_RANK=2"; then
    victim=$pid
  fi
done
[ -n "$victim" ] || { echo "no rank 2 found"; kill -9 $launcher; exit 1; }
start=$(date +%s)
kill -9 "$victim"
# The job must end by itself within 60 seconds.
for _ in $(seq 1 600); do
  kill -0 $launcher 2>/dev/null || break
  sleep 0.1
done
if kill -0 $launcher 2>/dev/null; then
  echo "still running after 60 s"
  pkill -9 -f "checkpoint-dir $dir/ck"
  exit 1
fi
wait $launcher
code=$?
echo "launcher exit code $code after $(($(date +%s) - start)) s"
