#!/bin/bash
# Two shards of a campaign check disjoint halves (I % 2 == K) of the kernels
# of one run, and their merge counts as many kernels as that run. merge refuses
# a missing campaign and an output that would overwrite an input. Shard 1 runs
# with --batch 3 (kernels per worker request): its shard's indices all the same.
. "$(dirname "$0")/common.sh"
N=40
ARGS="--cpu-only --seed 7 --max-kernels $N --time 10m"
"$FUZZ" $ARGS --out "$T/one" >"$T/one.log" 2>&1
"$FUZZ" $ARGS --shard 0/2 --out "$T/s0" >"$T/s0.log" 2>&1
"$FUZZ" $ARGS --shard 1/2 --batch 3 --out "$T/s1" >"$T/s1.log" 2>&1
[ "$(summary_field "$T/s0" kernels)" = "$((N / 2))" ] || fail "shard 0: not $((N / 2)) kernels"
python3 - "$T/s0/journal.jsonl" "$T/s1/journal.jsonl" $N <<'PY' || fail "shard indices wrong"
import json, sys
s0 = {json.loads(l)["index"] for l in open(sys.argv[1])}
s1 = {json.loads(l)["index"] for l in open(sys.argv[2])}
n = int(sys.argv[3])
assert all(i % 2 == 0 for i in s0) and all(i % 2 == 1 for i in s1)
assert s0 | s1 == set(range(n))
PY
"$FUZZ" merge "$T/s0" "$T/s1" --out "$T/merged/report.html" >"$T/merge.log" 2>&1 ||
  fail "merge failed: $(cat "$T/merge.log")"
[ -f "$T/merged/report.md" ] && [ -f "$T/merged/merged.json" ] || fail "merge outputs missing"
merged=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kernels"])' \
  "$T/merged/merged.json")
[ "$merged" = "$(summary_field "$T/one" kernels)" ] || fail "merged $merged kernels, one run $N"
"$FUZZ" merge "$T/s0" "$T/nothing" --out "$T/x.html" >"$T/missing.log" 2>&1
[ $? -eq 3 ] && grep -q "missing" "$T/missing.log" || fail "a missing campaign was not refused"
mkdir -p "$T/s1/sub"
"$FUZZ" merge "$T/s0" "$T/s1" --out "$T/s1/campaign.html" >"$T/over.log" 2>&1
[ $? -eq 0 ] || fail "an output beside an input was refused"
"$FUZZ" merge "$T/s0" "$T/s1" --out "$T/s0/campaign.json" >"$T/over.log" 2>&1
[ $? -eq 3 ] && grep -q "overwrite" "$T/over.log" || fail "overwriting an input was not refused"
"$FUZZ" merge "$T/s0" "$T/s1" --out "$T/k.html" --known "$T/no-such-list" >"$T/known.log" 2>&1
[ $? -eq 3 ] && grep -q "no-such-list" "$T/known.log" || fail "a missing --known file was not refused"
echo "PASS: shards 0/2 and 1/2 = $merged kernels, as one run"
