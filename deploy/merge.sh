#!/usr/bin/env bash
# deploy/merge.sh - merge the shards of a campaign into one report.
#
#   deploy/merge.sh [OUT]
#
# Runs `triton-fuzz merge OUT/shard*/ --out OUT/report.html` over the shard
# folders that hold a campaign.json (a shard that never finished is named and
# left out), which writes OUT/report.html, OUT/report.md and OUT/merged.json.
# Case files in the report are relative to OUT (OUT/shardK/cases/...).
#
# Environment: OUT [fuzz-campaign] when no argument; TRITON_FUZZ (as
# run-shard.sh); FUZZ_KNOWN, a file of known signatures (--known);
# FUZZ_CASES_DIR, the conformance cases holding known signatures
# (--cases-dir; triton-fuzz's default when unset).
set -euo pipefail

# shellcheck source=deploy/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

out=${1:-${OUT:-fuzz-campaign}}
[[ -d "$out" ]] || die "no campaign folder $out"
binary=$(resolve_triton_fuzz)

parts=()
while IFS= read -r dir; do
  if [[ -f "$dir/campaign.json" ]]; then
    parts+=("$dir")
  else
    echo "merge: $dir has no campaign.json (the shard did not finish): left out" >&2
  fi
done < <(find "$out" -mindepth 1 -maxdepth 1 -type d -name 'shard*' | sort -V)
((${#parts[@]} > 0)) || die "no finished shard (shard*/campaign.json) under $out"

# --force: the merged report of this campaign folder is replaced on a re-run (more shards done).
args=(merge "${parts[@]}" --out "$out/report.html" --force)
[[ -n "${FUZZ_KNOWN:-}" ]] && args+=(--known "$FUZZ_KNOWN")
[[ -n "${FUZZ_CASES_DIR:-}" ]] && args+=(--cases-dir "$FUZZ_CASES_DIR")
echo "merge: $binary ${args[*]}" >&2
exec "$binary" "${args[@]}"
