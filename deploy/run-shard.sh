#!/usr/bin/env bash
# deploy/run-shard.sh - run one shard of a triton-fuzz campaign.
#
#   deploy/run-shard.sh [INDEX [COUNT]]
#
# Runs
#   triton-fuzz --time "$FUZZ_TIME" --seed "$FUZZ_SEED" --shard "INDEX/COUNT" \
#       --devices "$FUZZ_DEVICES" --out "$OUT/shardINDEX" $FUZZ_EXTRA
# The Slurm array task and the Kubernetes Indexed Job pod both run this.
#
# INDEX defaults to $FUZZ_SHARD_INDEX, $SLURM_ARRAY_TASK_ID or
# $JOB_COMPLETION_INDEX; COUNT to $FUZZ_SHARD_COUNT or $SLURM_ARRAY_TASK_COUNT.
#
# Environment (defaults in brackets):
#   OUT            campaign folder; this shard writes OUT/shardINDEX [fuzz-campaign]
#   FUZZ_TIME      campaign length of the shard, total over restarts [8h]
#   FUZZ_SEED      campaign seed, the same for every shard [1]
#   FUZZ_DEVICES   --devices value; empty: no --devices [all; empty when
#                  FUZZ_EXTRA holds --cpu-only]
#   FUZZ_EXTRA     more triton-fuzz options, split on spaces (e.g. "--cpu-only
#                  --max-kernels 100", "--num-warps 8") []
#   TRITON_FUZZ    the binary [triton-fuzz on PATH, else build/bin/triton-fuzz]
#   FUZZ_FAIL_ON_FINDINGS  1: exit 1 when the shard found failures (triton-fuzz's
#                  own status); otherwise findings exit 0, so the scheduler
#                  neither marks the task failed nor retries it [0]
#
# Restartable: running the same shard again with the same variables resumes
# the campaign from OUT/shardINDEX's journal (nothing is lost or repeated);
# once its time is spent, a rerun only rewrites the reports.
set -euo pipefail

# shellcheck source=deploy/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

index=${1:-${FUZZ_SHARD_INDEX:-${SLURM_ARRAY_TASK_ID:-${JOB_COMPLETION_INDEX:-}}}}
count=${2:-${FUZZ_SHARD_COUNT:-${SLURM_ARRAY_TASK_COUNT:-}}}
[[ -n "$index" && -n "$count" ]] || die "usage: run-shard.sh INDEX COUNT (or set FUZZ_SHARD_INDEX/FUZZ_SHARD_COUNT)"
require_count "$index" "the shard index"
require_count "$count" "the shard count"
((index < count)) || die "shard index $index is not below the shard count $count"

out=${OUT:-fuzz-campaign}
read -r -a extra <<<"${FUZZ_EXTRA:-}"
default_devices=all
[[ " ${extra[*]:-} " == *" --cpu-only "* ]] && default_devices=
devices=${FUZZ_DEVICES-$default_devices}

binary=$(resolve_triton_fuzz)
dir="$out/shard$index"
mkdir -p "$dir"

args=(--time "${FUZZ_TIME:-8h}" --seed "${FUZZ_SEED:-1}" --shard "$index/$count")
[[ -n "$devices" ]] && args+=(--devices "$devices")
args+=(--out "$dir" "${extra[@]}")
echo "run-shard: $(hostname): $binary ${args[*]}" >&2

# Not exec: the exit status is translated below. Termination signals (Slurm's
# time limit, a pod's deletion) are passed on, so the campaign stops cleanly
# and the rerun resumes from its journal.
"$binary" "${args[@]}" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT HUP
status=0
wait "$child" || status=$?
# A signal interrupts the first wait: wait again for the campaign to finish.
while kill -0 "$child" 2>/dev/null; do
  wait "$child" || status=$?
done
if [[ $status -eq 1 && "${FUZZ_FAIL_ON_FINDINGS:-0}" != 1 ]]; then
  echo "run-shard: shard $index/$count found failures (see $dir/report.md)" >&2
  status=0
fi
exit "$status"
