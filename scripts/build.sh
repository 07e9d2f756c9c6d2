#!/usr/bin/env bash
# Installs what is missing, configures (once) and builds metac into build/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
build=${METAC_BUILD_DIR:-$root/build}
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
ninja -C "$build" "$@"
