#!/usr/bin/env bash
# The Python package's tests (ctest runs this as `python`): installs python/
# into .venv against the given build directory (only the extension module is
# compiled), then runs pytest. GPU tests skip with the reason when there is no
# CUDA device.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
py="$root/.venv/bin/python"
if [ ! -x "$py" ]; then
  echo "python tests: $root/.venv is missing; run scripts/setup.sh first" >&2
  exit 1
fi
TRITON_C_BUILD_DIR="$build" "$py" -m pip install -q --no-build-isolation --no-deps "$root/python"
cd "$root"
exec "$py" -m pytest -q -rs -p no:cacheprovider python/tests
