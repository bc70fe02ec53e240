#!/usr/bin/env bash
# The robustness barrage as CI runs it: build the tools in the sanitizer tree
# of the frontend fuzz test (ASan + UBSan, configured as tests/fuzz/run.sh
# does, so the two share one tree and its objects), then throw the barrage.
#   tests/robustness/run.sh <source dir> <sanitizer build dir> [barrage.py options...]
set -euo pipefail
SRC=$(cd "${1:?source dir}" && pwd)
BIN=${2:?build dir}
shift 2

cmake -S "$SRC" -B "$BIN" -G Ninja -DTC_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" -DCMAKE_CXX_FLAGS=-Wno-maybe-uninitialized >/dev/null
ninja -C "$BIN" tritonc triton-interp triton-conformance triton-fuzz

if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && [ -x /usr/lib/llvm-19/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-19/bin/llvm-symbolizer
fi
exec python3 "$SRC/tests/robustness/barrage.py" --bin "$BIN/bin" --src "$SRC" --sanitized "$@"
