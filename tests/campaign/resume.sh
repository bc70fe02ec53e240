#!/bin/bash
# A CPU-only campaign killed with kill -9 mid-way and restarted with the same
# arguments loses nothing and repeats nothing: the journal holds each index
# once, the kernel count equals a one-go run's, and every kernel got the same
# verdict as in the one-go run (kernels depend on (seed, index) alone, not on
# the number of workers). The workers die with the parent, a torn last line is
# ignored, and a restart with other arguments into the folder is refused. The
# killed run sends kernels in batches of 4 per request, the resumed one of 3
# (--batch changes how kernels are handed out, never which or their verdicts).
. "$(dirname "$0")/common.sh"
N=60
ARGS="--cpu-only --seed 5 --max-kernels $N --time 10m"

"$FUZZ" $ARGS --out "$T/one" >"$T/one.log" 2>&1
[ "$(summary_field "$T/one" kernels)" = "$N" ] || fail "one-go run: not $N kernels"

# Kernel 30 hangs in this first run (a test hook), so the campaign cannot
# finish before it is killed however fast the build is.
TC_FUZZ_TEST_HANG_INDEX=30 "$FUZZ" $ARGS --workers 2 --batch 4 --out "$T/two" >"$T/two1.log" 2>&1 &
pid=$!
for _ in $(seq 200); do
  [ -f "$T/two/journal.jsonl" ] && [ "$(wc -l <"$T/two/journal.jsonl")" -ge 10 ] && break
  sleep 0.1
done
workers=$(pgrep -P "$pid")
[ -n "$workers" ] || fail "no worker processes under the campaign"
kill -9 "$pid"
wait "$pid" 2>/dev/null
done1=$(wc -l <"$T/two/journal.jsonl")
[ "$done1" -lt "$N" ] || fail "the campaign finished before it was killed"
sleep 0.5
for w in $workers; do # gone, or a zombie not reaped yet (state Z)
  state=$(ps -o stat= -p "$w" 2>/dev/null)
  [ -z "$state" ] || [ "${state#Z}" != "$state" ] || fail "worker $w outlived the campaign ($state)"
done
printf '{"index": 999, "status": "pa' >>"$T/two/journal.jsonl" # a torn write

"$FUZZ" --cpu-only --seed 6 --max-kernels $N --time 10m --out "$T/two" >"$T/refused.log" 2>&1
[ $? -eq 3 ] || fail "a restart with another seed was not refused"
grep -q "other arguments" "$T/refused.log" || fail "no clear message for other arguments"

"$FUZZ" $ARGS --workers 2 --batch 3 --out "$T/two" >"$T/two2.log" 2>&1
grep -q "resuming" "$T/two2.log" || fail "the restart did not resume"
read -r records distinct <<<"$(journal_check "$T/two")"
[ "$records" = "$N" ] && [ "$distinct" = "$N" ] ||
  fail "journal after resume: $records records, $distinct distinct (want $N, $N)"
[ "$(summary_field "$T/two" kernels)" = "$N" ] || fail "resumed run: not $N kernels"
python3 - "$T/one/journal.jsonl" "$T/two/journal.jsonl" <<'PY' || fail "verdicts differ"
import json, sys
def verdicts(path):
    out = {}
    for line in open(path):
        try:
            r = json.loads(line)
        except Exception:
            continue
        out[r["index"]] = (r["status"], r["property"], tuple(r["features"]))
    return out
a, b = verdicts(sys.argv[1]), verdicts(sys.argv[2])
sys.exit(0 if a == b else 1)
PY
echo "PASS: killed after $done1 kernels, resumed to $N, verdicts identical"
