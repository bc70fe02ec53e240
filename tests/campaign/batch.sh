#!/bin/bash
# --batch N (docs/fuzz.md, "Batches") in --compile-only mode (the GPU compile
# pipeline and ptxas, one module and one ptxas run per batch; no GPU needed):
# 1. --batch 1 and --batch 16 campaigns of one seed journal the same kernel
#    indices with the same verdicts, with a compile failure planted in one
#    kernel (TC_FUZZ_TEST_COMPILE_FAIL_INDEX): the batch holding it falls back
#    to one kernel at a time, and only that kernel fails;
# 2. a worker that hangs or crashes in a batch has the batch's unanswered
#    kernels checked alone: the hang and the crash land on their own kernels,
#    exactly as with --batch 1, and every other kernel is checked; a kernel that
#    fails only in a batch (a planted fault that ends its worker) is re-checked
#    alone in a new worker and recorded as "batch-only-gpu-fault";
# 3. a batched campaign killed with kill -9 and resumed (with another batch
#    size) journals every index exactly once, with the one-go run's verdicts.
. "$(dirname "$0")/common.sh"
N=48
ARGS="--compile-only --seed 11 --max-kernels $N --time 10m --workers-per-device 2 --shrink-time 1s"
verdicts_equal() { # verdicts_equal A B: same indices, statuses, properties, signatures
  python3 - "$1/journal.jsonl" "$2/journal.jsonl" <<'PY'
import json, sys
def verdicts(path):
    out = {}
    for line in open(path):
        try:
            r = json.loads(line)
        except Exception:
            continue
        assert r["index"] not in out, ("journaled twice", r["index"])
        out[r["index"]] = (r["status"], r["property"], r.get("raw_signature", ""))
    return out
a, b = verdicts(sys.argv[1]), verdicts(sys.argv[2])
for i in sorted(set(a) | set(b)):
    if a.get(i) != b.get(i):
        sys.exit("kernel %d: %s vs %s" % (i, a.get(i), b.get(i)))
PY
}

TC_FUZZ_TEST_COMPILE_FAIL_INDEX=5 "$FUZZ" $ARGS --batch 1 --out "$T/one" >"$T/one.log" 2>&1
[ $? -eq 1 ] || fail "--batch 1 with a planted compile failure did not exit 1: $(tail -5 "$T/one.log")"
TC_FUZZ_TEST_COMPILE_FAIL_INDEX=5 "$FUZZ" $ARGS --batch 16 --out "$T/b16" >"$T/b16.log" 2>&1
[ $? -eq 1 ] || fail "--batch 16 with a planted compile failure did not exit 1: $(tail -5 "$T/b16.log")"
read -r records distinct <<<"$(journal_check "$T/b16")"
[ "$records" = "$N" ] && [ "$distinct" = "$N" ] || fail "--batch 16 journal: $records records, $distinct distinct"
verdicts_equal "$T/one" "$T/b16" || fail "--batch 16 and --batch 1 give other verdicts"
python3 - "$T/b16/journal.jsonl" <<'PY' || fail "the planted compile failure is misattributed"
import json, sys
recs = {r["index"]: r for r in map(json.loads, open(sys.argv[1]))}
fails = [i for i, r in recs.items() if r["status"] == "fail"]
assert fails == [5], fails
assert recs[5]["property"] == "gpu-compile", recs[5]
assert "TC_FUZZ_TEST_COMPILE_FAIL_INDEX" in recs[5]["finding"]["message"], recs[5]
# Kernels compiled in a module of several carry an equal share of its stages.
shares = {}
for r in recs.values():
    if r["status"] == "pass":
        shares.setdefault(round(r["stages"]["llvm-opt"], 9), []).append(r["index"])
assert any(len(v) > 1 for v in shares.values()), "no kernel shared a module"
PY

# 2. A hang (kernel 2) and a crash (kernel 5) inside batches of 8.
M=16
TC_FUZZ_TEST_HANG_INDEX=2 TC_FUZZ_TEST_CRASH_INDEX=5 \
  "$FUZZ" --compile-only --seed 3 --max-kernels $M --time 10m --workers-per-device 2 \
  --batch 8 --hang-timeout 2s --shrink-time 1s --out "$T/w" >"$T/w.log" 2>&1
[ $? -eq 1 ] || fail "the hang/crash campaign did not exit 1: $(tail -5 "$T/w.log")"
read -r records distinct <<<"$(journal_check "$T/w")"
[ "$records" = "$M" ] && [ "$distinct" = "$M" ] || fail "hang/crash journal: $records records, $distinct distinct"
python3 - "$T/w/journal.jsonl" <<'PY' || fail "hang/crash in a batch misattributed"
import json, sys
recs = {r["index"]: r for r in map(json.loads, open(sys.argv[1]))}
assert recs[2]["status"] == "fail" and recs[2]["property"] == "gpu-hang", recs[2]
assert recs[5]["status"] == "fail" and recs[5]["property"] == "gpu-fault", recs[5]
assert recs[2]["restarts"] == 2 and recs[5]["restarts"] == 2, (recs[2]["restarts"], recs[5]["restarts"])
assert "aborting on kernel 5" in recs[5]["finding"]["message"]
others = [r for i, r in recs.items() if i not in (2, 5)]
assert all(r["status"] != "fail" for r in others), [r for r in others if r["status"] == "fail"]
PY
grep -q "one at a time" "$T/w.log" || fail "no message about the batch's kernels checked alone"

# 2b. A kernel that "faults" only in a batch (TC_FUZZ_TEST_BATCH_FAULT_INDEX=9): its
# worker exits, the campaign checks it alone in a new worker (it passes there) and
# records "batch-only-gpu-fault"; the batch's unchecked kernels are checked too.
TC_FUZZ_TEST_BATCH_FAULT_INDEX=9 "$FUZZ" $ARGS --batch 16 --out "$T/f" >"$T/f.log" 2>&1
[ $? -eq 1 ] || fail "the batch-fault campaign did not exit 1: $(tail -5 "$T/f.log")"
read -r records distinct <<<"$(journal_check "$T/f")"
[ "$records" = "$N" ] && [ "$distinct" = "$N" ] || fail "batch-fault journal: $records records, $distinct distinct"
python3 - "$T/f/journal.jsonl" "$T/one/journal.jsonl" <<'PY' || fail "the batch-only fault is misattributed"
import json, sys
recs = {r["index"]: r for r in map(json.loads, open(sys.argv[1]))}
one = {r["index"]: r for r in map(json.loads, open(sys.argv[2]))}
fails = sorted(i for i, r in recs.items() if r["status"] == "fail")
assert fails == [9], fails
r = recs[9]
assert r["property"] == "batch-only-gpu-fault", r
assert "passes when checked alone" in r["finding"]["message"], r["finding"]
assert r["restarts"] == 1, r["restarts"]
for i, x in recs.items():  # every other kernel: the --batch 1 verdict (5 was planted there)
    if i not in (5, 9):
        assert (x["status"], x["property"]) == (one[i]["status"], one[i]["property"]), i
PY
grep -q "checking it alone" "$T/f.log" || fail "no message about the kernel checked alone"

# 3. kill -9 mid-way (kernel 40 hangs, so it cannot finish first), resume with another
# batch size; kernel 5 planted as in the runs above.
TC_FUZZ_TEST_COMPILE_FAIL_INDEX=5 TC_FUZZ_TEST_HANG_INDEX=40 "$FUZZ" $ARGS --batch 8 --out "$T/r" >"$T/r1.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
  [ -f "$T/r/journal.jsonl" ] && [ "$(wc -l <"$T/r/journal.jsonl")" -ge 10 ] && break
  sleep 0.1
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
done1=$(wc -l <"$T/r/journal.jsonl")
[ "$done1" -lt "$N" ] || fail "the campaign finished before it was killed"
TC_FUZZ_TEST_COMPILE_FAIL_INDEX=5 "$FUZZ" $ARGS --batch 16 --out "$T/r" >"$T/r2.log" 2>&1
grep -q "resuming" "$T/r2.log" || fail "the restart did not resume"
read -r records distinct <<<"$(journal_check "$T/r")"
[ "$records" = "$N" ] && [ "$distinct" = "$N" ] || fail "after resume: $records records, $distinct distinct"
verdicts_equal "$T/one" "$T/r" || fail "the resumed campaign gives other verdicts"
echo "PASS: --batch 16 == --batch 1 ($N kernels), hang/crash in batches attributed, killed after $done1 and resumed"
