#!/usr/bin/env bash
# `interrupt.sh METAC DIR MATRIX` starts `metac bench MATRIX -o DIR` in its own process group, stops the
# group with SIGTERM (as a scheduler does; a background job here ignores
# SIGINT) once the first run's record exists, and says how many records
# were written.
set -u
metac=$1 dir=$2 matrix=$3
setsid "$metac" bench "$matrix" -o "$dir" --no-report --quiet >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1200); do
  ls "$dir"/runs/*/*.json >/dev/null 2>&1 && break
  sleep 0.05
done
kill -TERM -- -"$pid" 2>/dev/null
wait "$pid"
echo "interrupted with $(ls "$dir"/runs/*/*.json | wc -l) of 8 records"
