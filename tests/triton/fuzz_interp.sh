#!/usr/bin/env bash
# triton-fuzz --target triton on Triton's interpreter (TRITON_INTERPRET=1, no
# GPU; docs/fuzz.md, "Against Triton"):
#  1. a fixed-count campaign (seed 4, shard 1/4 of the first 112 kernels: 28,
#     2 workers; kernel 29 hits a known bug of Triton's interpreter,
#     docs/upstream/triton-interp-compare-result-dtype.md): its summary says
#     the mode, counts the kernels the translator refuses as discards
#     ("triton-unsupported") and kernel 29 as a known-bug discard
#     ("triton-known-bug:interp-compare-result-dtype"), passes the others or
#     reduces them to findings, and every finding's standalone script
#     reproduces it (exit 1 under TRITON_INTERPRET=1);
#  2. a kernel of the campaign that Triton gets right, written out with
#     --replay --script: its script exits 0, and 1 (saying WRONG) once its
#     expected values are changed;
#  3. --replay 1,29: both kernels in one process, exit 0 (29 is set aside);
#     with --report-known-triton-bugs exit 1 (29 fails), and kernel 29's
#     script (--script) reproduces the bug (exit 1 under TRITON_INTERPRET=1).
# Skips (77), saying why, when the triton backend is not available.
# Usage: fuzz_interp.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
bin=$2/bin
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
py=${TC_TRITON_PYTHON:-$src/.venv/bin/python}
[ -x "$py" ] || py=python3

set +e
"$bin/triton-fuzz" --target triton --triton-mode interp --seed 4 --shard 1/4 --max-kernels 112 --time 5m \
    --workers-per-device 2 --shrink-time 10s --out "$out/c" >"$out/campaign.txt" 2>&1
rc=$?
set -e
if [ "$rc" -eq 4 ]; then
  echo "triton_fuzz_interp skipped: $(tail -3 "$out/campaign.txt")"
  exit 77
fi
grep -v '^  \|^//\|^$' "$out/campaign.txt" | tail -20
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || { echo "FAIL: triton-fuzz exited with $rc"; exit 1; }

"$py" - "$out/c" "$py" <<'PY'
import json, os, subprocess, sys
d, py = sys.argv[1], sys.argv[2]
s = json.load(open(os.path.join(d, "campaign.json")))
print("campaign:", s["mode"], "kernels", s["kernels"], "passed", s["passed"],
      "discards", s["discards_by_kind"], "failures", s["failures"])
assert s["mode"] == "triton-interpret", s["mode"]
assert s["kernels"] == 28, s["kernels"]
assert s["passed"] > 0, "no kernel passed"
assert s["discards_by_kind"].get("triton-unsupported", 0) > 0, "no kernel refused"
assert s["passed"] + s["discards"] + s["failures"] + s["generator_bugs"] == 28
assert s["generator_bugs"] == 0
known = s["discards_by_kind"].get("triton-known-bug:interp-compare-result-dtype", 0)
assert known > 0, "kernel 29 (a known bug of Triton's interpreter) was not set aside"
for f in s["findings"]:
    name = "seed%d_kernel%d_%s.py" % (f["campaign_seed"], f["index"], f["property"])
    script = os.path.join(d, "triton", name)
    assert os.path.exists(script), "no standalone script " + script
    env = dict(os.environ, TRITON_INTERPRET="1")
    r = subprocess.run([py, script], env=env, capture_output=True, text=True, timeout=120)
    print("finding", f["signature"][:60], "-> script exit", r.returncode)
    assert r.returncode == 1, (script, r.returncode, r.stdout[-2000:], r.stderr[-2000:])
PY

# Kernel 1 of seed 4 translates and passes.
"$bin/triton-fuzz" --target triton --triton-mode interp --seed 4 --replay 1 --script "$out/k1.py"
TRITON_INTERPRET=1 "$py" "$out/k1.py"
TRITON_INTERPRET=1 "$py" - "$out/k1.py" <<'PY'
import base64, importlib.util, sys
spec = importlib.util.spec_from_file_location("k1", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
name = next(n for n, (d, data) in m.EXPECTED.items() if base64.b64decode(data))
dtype, data = m.EXPECTED[name]
raw = bytearray(base64.b64decode(data))
raw[0] ^= 0x41  # a different value in the first element
m.EXPECTED[name] = (dtype, base64.b64encode(bytes(raw)).decode())
sys.argv = [sys.argv[0]]
rc = m.main()
assert rc == 1, "a changed expected value must fail the script"
print("changed expected value of", name, "-> exit", rc)
PY
# --replay I,J: each in turn in one process (one Triton worker); kernel 29 is
# a known bug, set aside (exit 0), and a failure with --report-known-triton-bugs.
"$bin/triton-fuzz" --target triton --triton-mode interp --seed 4 --replay 1,29 >"$out/two.txt" 2>&1 \
  || { cat "$out/two.txt" | cut -c1-200; echo "FAIL: --replay 1,29 did not exit 0"; exit 1; }
cat "$out/two.txt" | cut -c1-200
grep -q '^kernel 1: pass$' "$out/two.txt"
grep -q '^kernel 29: discard (triton-known-bug:interp-compare-result-dtype)$' "$out/two.txt"
set +e
"$bin/triton-fuzz" --target triton --triton-mode interp --seed 4 --replay 1,29 \
  --report-known-triton-bugs >"$out/two.txt" 2>&1
rc=$?
set -e
cat "$out/two.txt" | cut -c1-200
[ "$rc" -eq 1 ] || { echo "FAIL: --replay 1,29 --report-known-triton-bugs exited with $rc, not 1"; exit 1; }
grep -q '^kernel 1: pass$' "$out/two.txt"
grep -q '^kernel 29: FAIL' "$out/two.txt"
[ "$(grep -c '^device: ' "$out/two.txt")" -eq 1 ] || { echo "FAIL: more than one worker"; exit 1; }
set +e
"$bin/triton-fuzz" --target triton --triton-mode interp --seed 4 --replay 29 \
  --report-known-triton-bugs --script "$out/k29.py" >/dev/null 2>&1
TRITON_INTERPRET=1 "$py" "$out/k29.py" >"$out/k29.txt" 2>&1
rc=$?
set -e
tail -3 "$out/k29.txt" | cut -c1-200
[ "$rc" -eq 1 ] || { echo "FAIL: kernel 29's script exited with $rc, not 1"; exit 1; }
echo "triton_fuzz_interp: OK"
