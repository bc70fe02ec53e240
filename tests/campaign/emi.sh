#!/bin/bash
# EMI variants in a CPU-only campaign: with every kernel checked by its variant
# (--emi-rate 1), 300 kernels pass; with the test hook that makes the dead code
# run, the first failure is an emi-mismatch, reduced, and its conformance case
# holds the variant (the EMI parameter) and the plain kernel's outputs.
. "$(dirname "$0")/common.sh"
"$FUZZ" --cpu-only --seed 11 --max-kernels 300 --time 10m --emi-rate 1 --out "$T/clean" \
  >"$T/clean.log" 2>&1 || { tail -40 "$T/clean.log"; fail "clean EMI campaign failed"; }
grep -q "failed 0, generator bugs 0" "$T/clean.log" || fail "clean campaign: $(grep passed "$T/clean.log")"
TC_FUZZ_TEST_EMI_TAKEN=1 "$FUZZ" --cpu-only --seed 11 --max-kernels 300 --time 10m --emi-rate 1 \
  --stop-on-failure --shrink-time 5s --out "$T/taken" >"$T/taken.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "exit code $rc with the hook (want 1: a failure)"
grep -q "^first-failure-seconds: .* property: emi-mismatch signature: emi-mismatch|" "$T/taken.log" ||
  fail "no emi-mismatch: $(grep first-failure "$T/taken.log")"
case=$(ls "$T/taken/cases/"*_emi-mismatch.json 2>/dev/null | head -1)
[ -n "$case" ] || fail "no emi-mismatch case"
python3 - "$case" <<'PY' || fail "the case is not the variant"
import json, sys
c = json.load(open(sys.argv[1]))
c = c["cases"][0] if "cases" in c else c
assert "int32 *EMI," in c["source"], c["source"]
assert c["args"][0]["name"] == "EMI", c["args"][0]
assert "fuzz-signature: emi-mismatch|" in json.dumps(json.load(open(sys.argv[1])))
PY
# Rate 0: no variant, so the hook changes nothing.
TC_FUZZ_TEST_EMI_TAKEN=1 "$FUZZ" --cpu-only --seed 11 --max-kernels 50 --time 10m --emi-rate 0 \
  --out "$T/off" >"$T/off.log" 2>&1 || fail "--emi-rate 0 campaign failed"
"$FUZZ" --cpu-only --emi-rate 1.5 --max-kernels 1 --out "$T/bad" >"$T/bad.log" 2>&1
[ $? -eq 3 ] && grep -q "bad --emi-rate" "$T/bad.log" || fail "--emi-rate 1.5 not refused"
echo "emi: ok"
