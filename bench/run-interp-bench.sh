#!/usr/bin/env bash
# Interpreter speed vs Triton's own interpreter, measured in one call on one machine
# (the GPU test machine's CPU, where Triton is installed).
#   bench/run-interp-bench.sh BIN_DIR [OUT_DIR]
# BIN_DIR holds interp_bench (and ../lib/libtriton_c.so); triton_reference.py is looked
# for beside it, in bench/, or beside the checkout (optional: without it only our side is timed).
set -euo pipefail
BIN=${1:?bin dir}
OUT=${2:-.}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REF=""
for f in "$BIN/triton_reference.py" "$ROOT/bench/triton_reference.py" "$ROOT/../shared/bench/triton_reference.py"; do
  [ -f "$f" ] && REF=$f && break
done
mkdir -p "$OUT"
echo "== machine"; (nproc; lscpu | grep -E "Model name" || true) | tee "$OUT/machine.txt"
TRITON_ARGS=()
if [ -n "$REF" ] && python3 -c "import triton" 2>/dev/null; then
  echo "== Triton's interpreter (TRITON_INTERPRET=1 $REF interp)"
  # Three runs; the median per kernel is taken below.
  for i in 1 2 3; do
    TRITON_INTERPRET=1 python3 "$REF" interp --json "$OUT/triton_interp_$i.json" | tee -a "$OUT/triton_interp.log"
  done
  python3 - "$OUT" <<'PY'
import json, sys, statistics, glob
out = sys.argv[1]
runs = [json.load(open(f)) for f in sorted(glob.glob(out + '/triton_interp_[0-9].json'))]
med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
json.dump(med, open(out + '/triton_interp.json', 'w'), indent=1)
PY
  TRITON_ARGS=(--triton "$OUT/triton_interp.json")
else
  echo "== Triton not available here: no ratios"
fi
echo "== our interpreter"
"$BIN/interp_bench" --src "$ROOT" --repeat 5 --json "$OUT/interp_bench.json" "${TRITON_ARGS[@]}" | tee "$OUT/interp_bench.txt"
echo "== the plain loops split across threads (the speed-up the machine itself gives)"
"$BIN/interp_bench" --src "$ROOT" --repeat 5 --plain-scaling --json "$OUT/plain_scaling.json" | tee "$OUT/plain_scaling.txt"
