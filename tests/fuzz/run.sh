#!/usr/bin/env bash
# The frontend fuzz test as CI runs it: configure and build a separate
# ASan + UBSan tree (only the frontend_fuzz target), then fuzz for a bounded time.
#   tests/fuzz/run.sh <source dir> <sanitizer build dir> [frontend_fuzz options...]
# Environment: TC_FUZZ_SECONDS (default 90), TC_FUZZ_SEED (default: random, printed).
set -euo pipefail
SRC=$(cd "${1:?source dir}" && pwd)
BIN=${2:?build dir}
shift 2

cmake -S "$SRC" -B "$BIN" -G Ninja -DTC_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$BIN" frontend_fuzz

export TC_FUZZ_SECONDS=${TC_FUZZ_SECONDS:-90}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && [ -x /usr/lib/llvm-19/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-19/bin/llvm-symbolizer
fi
exec "$BIN/bin/frontend_fuzz" --src "$SRC" "$@"
