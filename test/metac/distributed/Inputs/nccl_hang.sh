#!/bin/bash
# nccl_hang.sh DIR COMMAND...: runs COMMAND on two MPI ranks that share one
# GPU, and reports how the job ended: the launcher's exit code, and the
# seconds from rank 0's "hanging before" line (--hang-rank) to the end.
# NCCL refuses two ranks of a communicator on one device of one host, so
# each rank names a host of its own (NCCL_HOSTID): NCCL then connects them
# through sockets on the loopback interface.
set -u
dir=$1
shift
mpirun -np 2 -x NCCL_SOCKET_IFNAME=lo -x NCCL_IB_DISABLE=1 \
  bash -c 'NCCL_HOSTID=metart-rank-$OMPI_COMM_WORLD_RANK exec "$@"' rank "$@" \
  >"$dir/out.log" 2>"$dir/err.log" &
launcher=$!
hung=""
# The job must end by itself within 120 seconds.
for _ in $(seq 1 1200); do
  if [ -z "$hung" ] && grep -q "hanging before" "$dir/err.log"; then
    hung=$(date +%s%N)
  fi
  kill -0 $launcher 2>/dev/null || break
  sleep 0.1
done
if kill -0 $launcher 2>/dev/null; then
  echo "still running after 120 s"
  kill -9 $launcher
  exit 1
fi
wait $launcher
code=$?
if [ -n "$hung" ]; then
  echo "launcher exit code $code, $((($(date +%s%N) - hung) / 1000000000)) s after the hang"
else
  echo "launcher exit code $code, no hang"
fi
