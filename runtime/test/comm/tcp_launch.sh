#!/bin/bash
# tcp_launch.sh NP PROGRAM ARGS...: runs NP copies of PROGRAM as srun
# without an MPI plugin starts them (Slurm's variables alone, a free port),
# so that they meet over TCP; exits with the first failing rank's code.
set -u
np=$1
shift
port=$(/usr/bin/python3 -c "import socket; s = socket.socket(); s.bind(('', 0)); print(s.getsockname()[1])")
pids=()
for ((r = 0; r < np; ++r)); do
  SLURM_PROCID=$r SLURM_STEP_NUM_TASKS=$np SLURM_LOCALID=$r \
    SLURM_STEP_NODELIST=localhost MASTER_PORT=$port "$@" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do
  wait "$pid" || { code=$?; [ $status = 0 ] && status=$code; }
done
exit $status
