#!/usr/bin/env bash
# The main job: sets up, builds, then meta-trains and evaluates a spec with
# `metac run` (default: the embedded sinusoid MAML example, the MAML paper's
# setting). Extra arguments go to `metac run`, e.g. --iterations=2000.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" metac >&2
build=${METAC_BUILD_DIR:-$root/build}
spec=$root/examples/sinusoid.meta
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  spec=$1
  shift
fi
exec "$build/bin/metac" run "$spec" "$@"
