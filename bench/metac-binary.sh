# Sourced by bench scripts: sets `root` (the checkout), `build` (the build
# directory, METAC_BUILD_DIR or build/) and `metac`: the binary METAC names,
# used as it is, or else the build's, built first.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${METAC_BUILD_DIR:-$root/build}
if [ -z "${METAC:-}" ]; then
  "$root/scripts/build.sh" metac >/dev/null
fi
metac=${METAC:-$build/bin/metac}
