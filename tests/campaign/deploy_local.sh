#!/usr/bin/env bash
# tests/campaign/deploy_local.sh TRITON_FUZZ
#
# The deploy/ scripts without a cluster:
#  1. three CPU-only shards run side by side through deploy/run-shard.sh,
#     deploy/merge.sh merges them: the merged report exists, names the three
#     parts, and its kernel count is the sum of the shards' campaign.json;
#  2. rerunning a finished shard resumes it (no kernel counted twice);
#  3. the command lines run-shard.sh builds (Slurm and Kubernetes variables,
#     exit statuses) against a stand-in triton-fuzz;
#  4. the Kubernetes manifests parse as YAML and agree on the shard count.
# deploy/slurm/submit.sh and the job scripts under a real Slurm are
# tests/campaign/slurm_real.sh's (no stand-in sbatch here).
set -euo pipefail

[[ $# -eq 1 && -x "$1" ]] || { echo "usage: deploy_local.sh PATH/TO/triton-fuzz" >&2; exit 2; }
fuzz=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
deploy=$root/deploy
export FUZZ_DEPLOY_DIR=$deploy # the Slurm scripts look for deploy/ from the submit folder
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
expect_contains() { # FILE TEXT
  grep -qF -- "$2" "$1" || fail "$1 does not contain '$2'"
}

for script in "$deploy"/*.sh "$deploy"/slurm/*; do
  bash -n "$script" || fail "syntax error in $script"
done

# --- 1. three shards and a merge ---------------------------------------------
export TRITON_FUZZ=$fuzz OUT=$work/campaign FUZZ_SEED=5 FUZZ_TIME=20s
export FUZZ_EXTRA="--cpu-only --max-kernels 60 --shrink-time 2s"
pids=()
for k in 0 1 2; do
  "$deploy/run-shard.sh" "$k" 3 >"$work/shard$k.log" 2>&1 &
  pids+=($!)
done
for k in 0 1 2; do
  wait "${pids[$k]}" || { cat "$work/shard$k.log" >&2; fail "shard $k exited with $?"; }
done
"$deploy/merge.sh" "$OUT" >"$work/merge.log" 2>&1 || { cat "$work/merge.log" >&2; fail "merge failed"; }
for f in report.html report.md merged.json; do
  [[ -s "$OUT/$f" ]] || fail "the merge wrote no $OUT/$f"
done
python3 - "$OUT" <<'EOF' || fail "merged counts"
import json, sys
out = sys.argv[1]
shards = [json.load(open(f"{out}/shard{k}/campaign.json")) for k in range(3)]
merged = json.load(open(f"{out}/merged.json"))
total = sum(s["kernels"] for s in shards)
assert merged["format"] == "triton-fuzz-campaign/1", merged["format"]
assert len(merged["parts"]) == 3, merged["parts"]
assert merged["kernels"] == total > 0, (merged["kernels"], total)
assert [(s["shard_index"], s["shard_count"]) for s in shards] == [(0, 3), (1, 3), (2, 3)]
print(f"deploy_local: 3 shards, {total} kernels, merged {merged['kernels']}")
EOF
expect_contains "$OUT/report.md" "merged from 3 parts"
for k in 0 1 2; do
  expect_contains "$OUT/report.html" "shard$k"
done

# --- 2. a finished shard rerun resumes --------------------------------------
before=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kernels"])' "$OUT/shard1/campaign.json")
"$deploy/run-shard.sh" 1 3 >"$work/rerun.log" 2>&1 || { cat "$work/rerun.log" >&2; fail "rerun of shard 1"; }
after=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kernels"])' "$OUT/shard1/campaign.json")
[[ "$before" == "$after" ]] || fail "rerunning finished shard 1 changed its kernels from $before to $after"

# --- 3. run-shard.sh's command lines against a stand-in triton-fuzz ----------
fake=$work/fake-triton-fuzz
cat >"$fake" <<'EOF'
#!/usr/bin/env bash
echo "$*" >"$FAKE_LOG"
exit "${FAKE_STATUS:-0}"
EOF
chmod +x "$fake"
export TRITON_FUZZ=$fake FAKE_LOG=$work/fake.log OUT=$work/fake-out
unset FUZZ_EXTRA FUZZ_TIME FUZZ_SEED
SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=3 FUZZ_TIME=10m FUZZ_SEED=9 \
  bash "$deploy/slurm/fuzz-array.sbatch" 2>/dev/null || fail "fuzz-array.sbatch"
[[ "$(cat "$FAKE_LOG")" == "--time 10m --seed 9 --shard 2/3 --devices all --out $OUT/shard2" ]] ||
  fail "slurm task ran: $(cat "$FAKE_LOG")"
[[ -d "$OUT/shard2" ]] || fail "run-shard.sh did not make $OUT/shard2"
JOB_COMPLETION_INDEX=4 "$deploy/run-shard.sh" 4 64 2>/dev/null || fail "k8s-style run"
[[ "$(cat "$FAKE_LOG")" == "--time 8h --seed 1 --shard 4/64 --devices all --out $OUT/shard4" ]] ||
  fail "k8s pod ran: $(cat "$FAKE_LOG")"
JOB_COMPLETION_INDEX=1 FUZZ_SHARD_COUNT=2 FUZZ_EXTRA="--cpu-only --max-kernels 7" \
  "$deploy/run-shard.sh" 2>/dev/null || fail "run-shard.sh from the environment"
[[ "$(cat "$FAKE_LOG")" == "--time 8h --seed 1 --shard 1/2 --out $OUT/shard1 --cpu-only --max-kernels 7" ]] ||
  fail "cpu-only run: $(cat "$FAKE_LOG")"
status=0
FAKE_STATUS=1 "$deploy/run-shard.sh" 0 2 2>/dev/null || status=$?
[[ $status -eq 0 ]] || fail "a shard with findings exited $status, not 0"
status=0
FAKE_STATUS=1 FUZZ_FAIL_ON_FINDINGS=1 "$deploy/run-shard.sh" 0 2 2>/dev/null || status=$?
[[ $status -eq 1 ]] || fail "FUZZ_FAIL_ON_FINDINGS=1: exited $status, not 1"
for bad in "3 3" "x 3" ""; do
  status=0
  # shellcheck disable=SC2086 # the arguments are split on purpose
  (unset SLURM_ARRAY_TASK_ID JOB_COMPLETION_INDEX; "$deploy/run-shard.sh" $bad) 2>/dev/null || status=$?
  [[ $status -eq 3 ]] || fail "run-shard.sh $bad: exited $status, not 3 (usage error)"
done

# --- 4. the Kubernetes manifests ----------------------------------------------
python3 - "$deploy/k8s" <<'EOF' || fail "Kubernetes manifests"
import sys
d = sys.argv[1]
try:
    import yaml
except ImportError:  # no PyYAML: the keys at least are there
    text = open(f"{d}/fuzz-indexed-job.yaml").read()
    for key in ("completionMode: Indexed", "nvidia.com/gpu: 1", "$(JOB_COMPLETION_INDEX)",
                "persistentVolumeClaim:", "claimName: triton-fuzz-campaign"):
        assert key in text, key
    assert "\t" not in text
    print("deploy_local: PyYAML missing, manifests checked for their keys only")
    sys.exit(0)
docs = list(yaml.safe_load_all(open(f"{d}/fuzz-indexed-job.yaml")))
pvc = next(x for x in docs if x["kind"] == "PersistentVolumeClaim")
job = next(x for x in docs if x["kind"] == "Job")
spec = job["spec"]
assert spec["completionMode"] == "Indexed"
pod = spec["template"]["spec"]
c = pod["containers"][0]
assert c["args"][0] == "$(JOB_COMPLETION_INDEX)", c["args"]
assert spec["completions"] == spec["parallelism"] == int(c["args"][1]), "shard counts differ"
assert c["resources"]["limits"]["nvidia.com/gpu"] == 1
assert "ReadWriteMany" in pvc["spec"]["accessModes"]
claim = pod["volumes"][0]["persistentVolumeClaim"]["claimName"]
assert claim == pvc["metadata"]["name"]
merge = yaml.safe_load(open(f"{d}/merge-job.yaml"))
assert merge["kind"] == "Job"
mpod = merge["spec"]["template"]["spec"]
assert mpod["volumes"][0]["persistentVolumeClaim"]["claimName"] == claim
out = next(e["value"] for e in c["env"] if e["name"] == "OUT")
assert mpod["containers"][0]["args"] == [out], "the merge reads another folder"
EOF

echo "deploy_local: PASS"
