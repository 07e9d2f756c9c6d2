#!/usr/bin/env bash
# Makes (once) the virtual environment in which `metac bench` draws its
# plots, with matplotlib from PyPI, and prints its python on the last line.
# METAC_PLOT_VENV chooses the directory (default ~/.cache/metac/plot-venv).
set -euo pipefail
venv=${METAC_PLOT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/metac/plot-venv}
python=$venv/bin/python
if [ -x "$python" ] && "$python" -c "import matplotlib" 2>/dev/null; then
  echo "$python"
  exit 0
fi
# Tests and studies may ask at once: one makes it, the others wait.
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if [ -x "$python" ] && "$python" -c "import matplotlib" 2>/dev/null; then
  echo "$python"
  exit 0
fi
if ! /usr/bin/python3 -c "import venv, ensurepip" 2>/dev/null; then
  # Debian splits venv's pip bootstrap into python3-venv.
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q python3-venv >&2
fi
/usr/bin/python3 -m venv --clear "$venv" >&2
"$python" -m pip install -q --disable-pip-version-check "matplotlib>=3.7,<4" >&2
echo "$python"
