#!/bin/bash
# preempt.sh DIR NP SIGNAL RANK PROGRAM ARGS...: trains PROGRAM ARGS (under
# mpirun with NP processes when NP > 1) with checkpoints in DIR/ck, sends
# SIGNAL to rank RANK (`all`: every rank) once 20 meta-iterations are done,
# and reports the exit code and the meta-iteration the run stopped after;
# then resumes from the checkpoint to 10 meta-iterations later and trains
# the same number straight, and says whether the parameters are the same
# bits.
set -u
dir=$1
np=$2
signal=$3
target=$4
shift 4
mkdir -p "$dir"
launch=()
[ "$np" -gt 1 ] && launch=(mpirun -np "$np")
"${launch[@]}" "$@" --iterations 100000000 --checkpoint-dir "$dir/ck" \
  --metrics "$dir/m.jsonl" --quiet >"$dir/out.log" 2>"$dir/err.log" &
launcher=$!
for _ in $(seq 1 600); do
  [ -s "$dir/m.jsonl" ] && [ "$(wc -l <"$dir/m.jsonl")" -ge 20 ] && break
  kill -0 $launcher 2>/dev/null || { echo "the job ended early"; exit 1; }
  sleep 0.1
done
victims=()
if [ "$np" -gt 1 ]; then
  for pid in $(pgrep -f "checkpoint-dir $dir/ck"); do
    rank=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null |
      sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
    if [ -n "$rank" ] && { [ "$target" = all ] || [ "$rank" = "$target" ]; }; then
      victims+=("$pid")
    fi
  done
else
  victims=($launcher)
fi
[ ${#victims[@]} -gt 0 ] || { echo "no rank $target found"; kill -9 $launcher; exit 1; }
kill -"$signal" "${victims[@]}"
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
stopped=$(sed -n 's/.*stopped by SIG[A-Z]* after meta-iteration \([0-9]*\).*/\1/p' "$dir/err.log" | head -1)
echo "exit code $code after meta-iteration ${stopped:-none}"
[ -n "$stopped" ] || exit 1
total=$((stopped + 10))
"${launch[@]}" "$@" --resume "$dir/ck" --iterations $total --quiet \
  --save-params "$dir/resumed.safetensors" >/dev/null || exit 1
"${launch[@]}" "$@" --iterations $total --quiet \
  --save-params "$dir/straight.safetensors" >/dev/null || exit 1
if cmp -s "$dir/resumed.safetensors" "$dir/straight.safetensors"; then
  echo "resumed to $total: the same bits as straight"
else
  echo "resumed to $total: different parameters"
fi
