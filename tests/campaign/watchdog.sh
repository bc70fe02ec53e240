#!/bin/bash
# The watchdog and worker restarts: with the test hooks, a worker that sleeps
# forever on kernel 2 is killed after --hang-timeout and one that aborts on
# kernel 5 dies; each is restarted, each kernel is tried twice and then
# recorded as a "hang" / "crash" finding with a case, and the campaign checks
# every other kernel too. A worker stuck in a kernel dies with its campaign
# (kill -9 of the parent; PR_SET_PDEATHSIG).
. "$(dirname "$0")/common.sh"
N=10
TC_FUZZ_TEST_HANG_INDEX=2 TC_FUZZ_TEST_CRASH_INDEX=5 \
  "$FUZZ" --cpu-only --seed 3 --max-kernels $N --time 10m --hang-timeout 2s --out "$T/w" \
  >"$T/w.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "exit code $rc (want 1: failures)"
read -r records distinct <<<"$(journal_check "$T/w")"
[ "$records" = "$N" ] && [ "$distinct" = "$N" ] || fail "journal: $records records (want $N)"
python3 - "$T/w/journal.jsonl" <<'PY' || fail "hang/crash records wrong"
import json, sys
recs = {r["index"]: r for r in map(json.loads, open(sys.argv[1]))}
assert recs[2]["status"] == "fail" and recs[2]["property"] == "hang", recs[2]
assert recs[5]["status"] == "fail" and recs[5]["property"] == "crash", recs[5]
assert recs[2]["restarts"] == 2 and recs[5]["restarts"] == 2
assert "aborting on kernel 5" in recs[5]["finding"]["message"]
others = [r for i, r in recs.items() if i not in (2, 5)]
assert all(r["property"] not in ("hang", "crash") for r in others)
PY
[ "$(summary_field "$T/w" worker_restarts)" = "4" ] || fail "campaign.json: restarts not 4"
ls "$T/w/cases/"*_kernel2_hang.json "$T/w/cases/"*_kernel5_crash.json >/dev/null ||
  fail "no hang/crash cases"
grep -q "fuzz-signature: hang|" "$T/w/cases/"*_kernel2_hang.json || fail "case without signature"
grep -q "restarting it" "$T/w.log" || fail "no restart message"
TC_FUZZ_TEST_HANG_INDEX=0 "$FUZZ" --cpu-only --seed 3 --time 10m --out "$T/k" >"$T/k.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  worker=$(pgrep -P "$pid")
  [ -n "$worker" ] && break
  sleep 0.1
done
[ -n "$worker" ] || fail "no worker under the campaign"
sleep 1 # it is asleep on kernel 0 now
kill -9 "$pid"
wait "$pid" 2>/dev/null
sleep 0.5
state=$(ps -o stat= -p "$worker" 2>/dev/null)
[ -z "$state" ] || [ "${state#Z}" != "$state" ] || fail "a stuck worker outlived its campaign"
echo "PASS: hang and crash recorded, 4 restarts, $N kernels"
