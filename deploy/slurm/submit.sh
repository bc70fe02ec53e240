#!/usr/bin/env bash
# deploy/slurm/submit.sh - queue a sharded campaign and its merge on Slurm.
#
#   deploy/slurm/submit.sh [SHARDS] [-- MORE SBATCH OPTIONS]
#
# Submits deploy/slurm/fuzz-array.sbatch as an array of SHARDS tasks
# [$FUZZ_SHARDS, else 64], one GPU each, then deploy/slurm/merge.sbatch with
# --dependency=afterany on it, and prints both job ids. Options after `--`
# go to both sbatch calls (e.g. --partition=gpu --account=compilers).
#
# Variables (defaults): OUT [$PWD/fuzz-campaign], FUZZ_TIME [8h],
# FUZZ_SEED [1], FUZZ_EXTRA, FUZZ_DEVICES, TRITON_FUZZ, FUZZ_KNOWN,
# FUZZ_CASES_DIR (see deploy/README.md); FUZZ_SLURM_TIME, the array's time
# limit in minutes [FUZZ_TIME + 60 minutes]. Exported to the jobs as they are
# now; OUT must be on a file system every node sees.
set -euo pipefail

deploy_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=deploy/common.sh
source "$deploy_dir/common.sh"

shards=${FUZZ_SHARDS:-64}
if [[ $# -gt 0 && "$1" != "--" ]]; then
  shards=$1
  shift
fi
[[ $# -eq 0 || "$1" == "--" ]] || die "usage: submit.sh [SHARDS] [-- SBATCH OPTIONS]"
[[ $# -gt 0 ]] && shift
require_count "$shards" "the shard count"
((shards > 0)) || die "the shard count must be positive"

export OUT=${OUT:-$PWD/fuzz-campaign}
export FUZZ_TIME=${FUZZ_TIME:-8h}
export FUZZ_SEED=${FUZZ_SEED:-1}
export FUZZ_DEPLOY_DIR=$deploy_dir
minutes=${FUZZ_SLURM_TIME:-$(($(duration_seconds "$FUZZ_TIME") / 60 + 60))}
require_count "$minutes" "FUZZ_SLURM_TIME"
mkdir -p "$OUT"

# `sbatch --parsable` prints "jobid" or "jobid;cluster".
array=$(sbatch --parsable --array="0-$((shards - 1))" --time="$minutes" --export=ALL \
  "$@" "$deploy_dir/slurm/fuzz-array.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterany:$array" --export=ALL \
  "$@" "$deploy_dir/slurm/merge.sbatch")
merge=${merge%%;*}
echo "submitted: campaign array job $array ($shards shards of $FUZZ_TIME, seed $FUZZ_SEED, into $OUT)"
echo "submitted: merge job $merge (after $array) -> $OUT/report.html"
