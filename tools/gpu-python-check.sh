#!/usr/bin/env bash
# The Python package on the GPU machine: installs a wheel (scripts/build-wheel.sh
# --python 3.12 makes it) into a private folder, then runs the package's tests
# (GPU tests included), the launch-overhead benchmark against Triton in the same
# process run, the interpreter launch benchmark, and the GPU conformance suite
# through the wheel's triton-conformance. Logs go to OUT; a table is printed last.
#   tools/gpu-python-check.sh WHEEL [OUT]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
wheel="${1:?usage: tools/gpu-python-check.sh WHEEL [OUT]}"
out="${2:-$root/gpu-python-out}"
mkdir -p "$out"
site="$(mktemp -d)"
python3 -m pip install -q --no-index --no-deps --target "$site" "$wheel" > "$out/install.log" 2>&1 ||
  { echo "gpu-python-check: pip install failed (see $out/install.log)"; exit 1; }
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
cd "$root"
declare -a rows
step() { # name log timeout command...
  local name="$1" log="$2" t="$3"; shift 3
  local s=$SECONDS
  timeout "$t" "$@" > "$log" 2>&1
  local rc=$?
  rows+=("$(printf '%-22s rc=%-3s %4ss  %s' "$name" "$rc" "$((SECONDS - s))" "$(tail -1 "$log" | cut -c1-90)")")
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1
step pytest "$out/pytest.log" 600 python3 -m pytest -q -rs -p no:cacheprovider python/tests
step launch-overhead "$out/launch.log" 300 python3 bench/python_launch_overhead.py --iters 5000
step interp-launch "$out/interp-launch.log" 300 python3 bench/python_interp_launch.py
step gpu-conformance "$out/conformance.log" 900 "$site/triton_c/bin/triton-conformance" run \
  conformance/cases --backend gpu --out "$out/conformance.json" --force
echo "== $(cat "$out/gpu.txt")"
grep -h "launch\|ratio\|us/call\|ms/call" "$out/launch.log" "$out/interp-launch.log"
printf '%s\n' "${rows[@]}"
