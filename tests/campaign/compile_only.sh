#!/bin/bash
# --compile-only (no GPU): each kernel goes through the interpreter, the whole
# GPU compile pipeline and ptxas (when one is found), and the campaign prints
# where the time went, per stage; a failure is attributed to its own kernel
# (the planted failure of --fail-on-feature lands exactly on the kernels with
# the feature, and only on them); the path coverage table counts what the
# backend emitted, a steered campaign reaches every fast path (issue 33) and
# --focus aims every kernel at one.
. "$(dirname "$0")/common.sh"
N=24
ARGS="--compile-only --seed 7 --max-kernels $N --time 10m --workers-per-device 2"
"$FUZZ" $ARGS --out "$T/c" >"$T/c.log" 2>&1 || fail "compile-only campaign failed: $(tail -20 "$T/c.log")"
[ "$(summary_field "$T/c" kernels)" = "$N" ] || fail "not $N kernels"
[ "$(summary_field "$T/c" mode)" = "compile-only" ] || fail "mode is not compile-only"
# (The stages come largest first: their order depends on the machine.)
for stage in gen interp llvm-opt ptx; do
  grep -q "^stage times: .* $stage [0-9]*%" "$T/c.log" ||
    fail "no $stage in the summary's stage breakdown: $(grep -A3 summary "$T/c.log")"
done
grep -q "stage times:" "$T/c/report.md" || fail "no stage breakdown in report.md"
# Every kernel the interpreter ran to completion went through LLVM and NVPTX
# (and ptxas, when there is one), each stage timed in its journal record.
python3 - "$T/c/journal.jsonl" "$(command -v ptxas || ls "${PTXAS:-/usr/local/cuda/bin/ptxas}" 2>/dev/null)" <<'PY' ||
import json, sys
ptxas = sys.argv[2]
passed = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["status"] != "pass":
        continue
    passed += 1
    st = r["stages"]
    for s in ["frontend", "interp", "llvm-ir", "llvm-opt", "ptx"] + (["jit"] if ptxas else []):
        assert st.get(s, 0) > 0, (r["index"], s, st)
    assert sum(st.values()) <= r["check_ms"] + 0.01, (r["index"], st, r["check_ms"])
assert passed > 0
PY
  fail "journal stages missing"
# Path coverage: the lowering paths the backend reported for each compiled
# kernel are in its journal record, and the summary, report.md and
# campaign.json count them (the totals recounted from the journal).
grep -q "^path coverage (kernels whose code took each path; [1-9][0-9]* of $N kernels compiled)" "$T/c.log" ||
  fail "no path coverage table in the summary: $(tail -30 "$T/c.log")"
grep -Eq "^ +[0-9.]+% [a-z.=0-9A-Z]+ \([1-9][0-9]*\)$" <(sed -n '/^path coverage/,$p' "$T/c.log") ||
  fail "no path with a nonzero count in the summary"
grep -q "^## Path coverage" "$T/c/report.md" || fail "no path coverage in report.md"
grep -Eq "^\| (remat|dot\.fma|slice\.shared|atomic\.[a-z]+) \| [1-9]" "$T/c/report.md" ||
  fail "no nonzero path row in report.md: $(sed -n '/## Path coverage/,$p' "$T/c/report.md")"
grep -q "Path coverage" "$T/c/report.html" || fail "no path coverage in report.html"
python3 - "$T/c/journal.jsonl" "$T/c/campaign.json" <<'PY' || fail "path counts differ from the journal"
import json, sys
counts, compiled = {}, 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "paths" not in r:
        assert r["status"] != "pass", r["index"]  # every passing kernel was compiled
        continue
    compiled += 1
    for p in r["paths"]:
        counts[p] = counts.get(p, 0) + 1
s = json.load(open(sys.argv[2]))
assert s["paths"] == counts and s["path_kernels"] == compiled, (s["paths"], counts)
assert compiled > 0 and sum(counts.values()) > 0, counts
PY
# Planted failures: exactly the kernels with the feature fail, each under its own index.
"$FUZZ" $ARGS --fail-on-feature loop --shrink-time 1s --out "$T/p" >"$T/p.log" 2>&1
[ $? -eq 1 ] || fail "a planted campaign did not exit 1: $(tail -5 "$T/p.log")"
python3 - "$T/p/journal.jsonl" "$T/c/journal.jsonl" <<'PY' || fail "planted failures misattributed"
import json, sys
planted = {json.loads(l)["index"]: json.loads(l) for l in open(sys.argv[1])}
clean = {json.loads(l)["index"]: json.loads(l) for l in open(sys.argv[2])}
assert planted.keys() == clean.keys()
fails = 0
for i, r in planted.items():
    want_fail = clean[i]["status"] == "pass" and "loop" in clean[i]["features"]
    assert (r["status"] == "fail") == want_fail, (i, r["status"], clean[i]["features"])
    if want_fail:
        assert r["property"] == "planted", r
        fails += 1
    else:
        assert r["status"] == clean[i]["status"], (i, r["status"], clean[i]["status"])
assert 0 < fails < len(planted), fails
PY
# Fast paths (issue 33): steered to a floor of 25%, the compiled kernels take
# every fast path (wgmma for sm_90, mma.sync, mma.loop, the cp.async
# pipeline); the kernels aimed at one say so in their features and mostly
# take it. (All 32 go out in one batch, so their aims come from the priors:
# the same on every run.)
"$FUZZ" --compile-only --seed 7 --max-kernels 32 --time 10m --workers-per-device 2 \
  --path-floor 0.25 --out "$T/f" >"$T/f.log" 2>&1 || fail "steered campaign failed: $(tail -20 "$T/f.log")"
python3 - "$T/f/journal.jsonl" "$T/f/campaign.json" <<'PY' || fail "fast paths not reached: $(sed -n '/^path coverage/,$p' "$T/f.log")"
import json, sys
paths = json.load(open(sys.argv[2]))["paths"]
for p in ["wgmma", "mma.sync", "mma.loop"]:
    assert paths.get(p, 0) > 0, (p, paths)
assert sum(n for p, n in paths.items() if p.startswith("pipeline.stages=")) > 0, paths
aimed = took = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "aim.wgmma" in r["features"]:
        aimed += 1
        took += "wgmma" in r.get("paths", [])
assert aimed > 0 and 2 * took >= aimed, (aimed, took)
PY
# --focus: every kernel aims at the path; a finding's reproduce command says
# --focus, and replaying it with --focus gives the same kernel.
"$FUZZ" --compile-only --seed 7 --max-kernels 4 --time 10m --workers-per-device 2 --focus wgmma \
  --fail-on-feature aim.wgmma --shrink-time 1s --out "$T/w" >"$T/w.log" 2>&1
[ $? -eq 1 ] || fail "a focused planted campaign did not exit 1: $(tail -5 "$T/w.log")"
[ "$(grep -c '"aim.wgmma"' "$T/w/journal.jsonl")" = 4 ] || fail "not every kernel aimed at wgmma"
grep -q -- "--replay [0-9]* --print --compile-only --fail-on-feature aim.wgmma --focus wgmma" "$T/w/report.md" ||
  fail "no --focus in the reproduce command: $(grep -m3 replay "$T/w/report.md")"
"$FUZZ" --seed 7 --replay 2 --print --compile-only --focus wgmma >"$T/r.txt" 2>&1 || fail "replay failed: $(tail -3 "$T/r.txt")"
grep -q "^// defines: -DTM=\(64\|128\) " "$T/r.txt" || fail "the replayed kernel is not a wgmma tile: $(head -3 "$T/r.txt")"
"$FUZZ" --compile-only --focus wgmma2 --time 1s >"$T/u.txt" 2>&1
[ $? -eq 3 ] && grep -q "unknown --focus path 'wgmma2' (a campaign can aim at: wgmma, mma.sync, mma.loop, pipeline, mma.values.pipeline, mma.values, attention)" "$T/u.txt" ||
  fail "an unknown --focus path: $(cat "$T/u.txt")"
# --focus attention: FlashAttention-like kernels (two `@` per trip, p from exp2
# in registers, a rescaled accumulator) pass the interpreter, lower and go
# through ptxas, with their `@` on tensor cores.
"$FUZZ" --compile-only --seed 11 --max-kernels 12 --time 10m --workers-per-device 2 --focus attention \
  --out "$T/a" >"$T/a.log" 2>&1 || fail "the attention campaign failed: $(tail -8 "$T/a.log")"
[ "$(grep -c '"aim.attention"' "$T/a/journal.jsonl")" = 12 ] || fail "not every kernel is FlashAttention-like"
python3 - "$T/a/journal.jsonl" <<'PY' || fail "attention kernels: $(tail -3 "$T/a.log")"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert all(r["status"] == "pass" for r in rs), [r["status"] for r in rs]
assert all("mma.sync" in r.get("paths", []) or "wgmma" in r.get("paths", []) for r in rs), \
    [r.get("paths") for r in rs]
PY
# --focus mma.values.pipeline: attention kernels in the form of the GPU's
# mma.values path with 16-byte aligned rows; their K^T and V go through the
# values pipeline (the compile's own path list).
"$FUZZ" --compile-only --seed 5 --max-kernels 8 --time 10m --workers-per-device 2 \
  --focus mma.values.pipeline --out "$T/v" >"$T/v.log" 2>&1 ||
  fail "the values pipeline campaign failed: $(tail -8 "$T/v.log")"
python3 - "$T/v/journal.jsonl" <<'PY' || fail "values pipeline kernels: $(tail -3 "$T/v.log")"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert len(rs) == 8 and all("aim.mma.values.pipeline" in r["features"] for r in rs)
assert all(r["status"] == "pass" for r in rs), [r["status"] for r in rs]
took = [r for r in rs if any(p.startswith("mma.values.pipeline.stages=") for p in r.get("paths", []))]
assert len(took) >= 6, [r.get("paths") for r in rs]
PY
grep -q "mma.values.pipeline.stages=" "$T/v.log" || fail "the summary's path coverage lacks the values pipeline"
# --num-warps 8: the attention kernels aimed at mma.values are sized for 8 warps
# (BM = 16 x 8), so they still take the path.
"$FUZZ" --compile-only --seed 5 --max-kernels 6 --time 10m --workers-per-device 2 \
  --focus mma.values --num-warps 8 --out "$T/w8" >"$T/w8.log" 2>&1 ||
  fail "the 8-warp mma.values campaign failed: $(tail -8 "$T/w8.log")"
python3 - "$T/w8/journal.jsonl" <<'PY' || fail "8-warp mma.values kernels: $(tail -3 "$T/w8.log")"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert len(rs) == 6 and all(r["status"] == "pass" for r in rs), [r["status"] for r in rs]
assert all("mma.values" in r.get("paths", []) for r in rs), [r.get("paths") for r in rs]
PY
echo "PASS: compile-only: $N kernels, paths: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"])' "$T/c/campaign.json"), stage times: $(grep '^stage times' "$T/c.log" | cut -c14-90)..."
