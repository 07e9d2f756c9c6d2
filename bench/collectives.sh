#!/usr/bin/env bash
# Bandwidth of the runtime's collectives over MPI, as nccl-tests reports it
# (algorithm bandwidth and bus bandwidth per size), for every all-reduce
# algorithm (library = Open MPI's choice, ring, tree, hierarchical) and for
# all-gather and reduce-scatter, on 2, 4 and 8 processes of this machine.
# Hierarchical treats each two consecutive ranks as a node
# (METART_RANKS_PER_NODE=2), as two GPUs per node would be.
#   bench/collectives.sh
#   RANKS="2 4" MAX_BYTES=16777216 bench/collectives.sh
#   LAUNCHER=tcp RANKS="2 4" bench/collectives.sh   # without MPI (torchrun, srun)
# Ends with one line per rank count: the fastest all-reduce algorithm at
# the smallest and the largest size.
set -euo pipefail
source "$(dirname "$0")/metac-binary.sh"
"$root/scripts/build.sh" metart-collectives >/dev/null
tool=$build/bin/metart-collectives
[ -x "$tool" ] || tool=$build/runtime/metart-collectives
ranks=${RANKS:-2 4 8}
max=${MAX_BYTES:-67108864}
export OMPI_MCA_rmaps_base_oversubscribe=1
root_flags=()
[ "$(id -u)" = 0 ] && root_flags=(--allow-run-as-root)
out=$(mktemp -d)
# LAUNCHER=tcp: the ranks started as srun without an MPI plugin starts
# them (Slurm's variables alone), so that they meet over TCP (the TCP
# transport has one algorithm: the names are the same runs).
launch() {
  local n=$1
  shift
  if [ "${LAUNCHER:-mpirun}" = tcp ]; then
    local port=$((20000 + RANDOM % 10000)) pids=()
    for ((r = 0; r < n; ++r)); do
      SLURM_PROCID=$r SLURM_STEP_NUM_TASKS=$n SLURM_LOCALID=$r \
        SLURM_STEP_NODELIST=localhost MASTER_PORT=$port "$@" \
        >"$out/rank$r.txt" &
      pids+=($!)
    done
    wait "${pids[@]}"
    cat "$out/rank0.txt"
  else
    METART_RANKS_PER_NODE=2 mpirun "${root_flags[@]}" -np "$n" \
      -x METART_RANKS_PER_NODE "$@"
  fi
}
for n in $ranks; do
  echo "== $n processes (${LAUNCHER:-mpirun})"
  launch "$n" "$tool" --max-bytes "$max" | tee "$out/$n.txt" |
    grep -v '^{'
done
for n in $ranks; do
  /usr/bin/python3 - "$out/$n.txt" "$n" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
reduce = [r for r in rows if r["collective"] == "all_reduce"]
small, large = min(r["bytes"] for r in reduce), max(r["bytes"] for r in reduce)
def best(size):
    at = sorted((r["seconds"], r["algorithm"]) for r in reduce if r["bytes"] == size)
    lib = next(s for s, a in at if a == "library")
    return f"{at[0][1]} ({at[0][0] * 1e6:.1f} us, library {lib * 1e6:.1f} us)"
bus = max(r["busbw_GBs"] for r in reduce if r["bytes"] == large)
print(f"collectives: {sys.argv[2]} ranks: fastest all-reduce at {small:.0f} B {best(small)}, "
      f"at {large:.0f} B {best(large)}; best bus bandwidth {bus:.2f} GB/s")
PY
done
rm -rf "$out"
