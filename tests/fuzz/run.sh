#!/usr/bin/env bash
# The frontend fuzz test as CI runs it: configure and build a separate
# ASan + UBSan tree (only the frontend_fuzz target), then fuzz for a bounded time.
#   tests/fuzz/run.sh <source dir> <sanitizer build dir> [frontend_fuzz options...]
# Environment: TC_FUZZ_SECONDS (default 90), TC_FUZZ_SEED (default: random, printed).
set -euo pipefail
SRC=$(cd "${1:?source dir}" && pwd)
BIN=${2:?build dir}
shift 2

# RelWithDebInfo at -O1 and without -DNDEBUG: assertions stay on, the build is
# quicker than -O2, and ASan's reports keep file:line. GCC 12 gives false
# -Wmaybe-uninitialized warnings in libstdc++ under -fsanitize, hence the -Wno.
cmake -S "$SRC" -B "$BIN" -G Ninja -DTC_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" -DCMAKE_CXX_FLAGS=-Wno-maybe-uninitialized >/dev/null
ninja -C "$BIN" frontend_fuzz

export TC_FUZZ_SECONDS=${TC_FUZZ_SECONDS:-90}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:malloc_context_size=6}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && [ -x /usr/lib/llvm-19/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-19/bin/llvm-symbolizer
fi
exec "$BIN/bin/frontend_fuzz" --src "$SRC" "$@"
