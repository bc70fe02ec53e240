#!/usr/bin/env bash
# The doc-command check itself: on tests/docs/fixture/README.md it runs the sh
# blocks twice, reports a command that fails only on the second run, skips the
# marked block and the GPU command with their reasons, and rejects an untagged
# block of commands.  Usage: check-doc-commands.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1 build=$2
out=$(python3 "$src/scripts/check-doc-commands.py" --source "$src/tests/docs/fixture" --build "$build" 2>&1)
rc=$?
fail=0
expect() {
  if ! grep -qF -- "$1" <<<"$out"; then echo "missing: $1"; fail=1; fi
}
[ "$rc" = 1 ] || { echo "exit $rc, want 1"; fail=1; }
expect "error: README.md:23: a block of commands without a tag"
expect "FAILED (exit 1, round 2): README.md:11: set -o noclobber; echo once > once.txt"
expect "skipped (a reason given here): README.md:16: false"
expect "README.md:20: build/bin/triton-run --check-device"  # skipped, or run where a GPU is
expect " passed, 1 failed, "
expect "; 1 untagged command blocks"
if grep -qF "FAILED (exit 1, round 1)" <<<"$out"; then echo "a command failed on the first round"; fail=1; fi
[ "$fail" = 0 ] && echo "check-doc-commands self-test: ok" || echo "$out"
exit "$fail"
