#!/usr/bin/env bash
# The main job: builds metac and compiles a spec (default: the embedded
# sinusoid MAML example), printing its meta-level IR. Training arrives with
# `metac run` in the single-device milestone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" metac metac-opt >&2
build=${METAC_BUILD_DIR:-$root/build}
spec=${1:-$root/examples/sinusoid.meta}
[ $# -gt 0 ] && shift
exec "$build/bin/metac" "$spec" --compile-to=meta "$@"
