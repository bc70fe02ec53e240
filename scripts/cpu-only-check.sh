#!/usr/bin/env bash
# Builds the CPU-only tools as on a machine without the CUDA toolkit (the toolkit
# hidden: TC_CUDA_HOME points nowhere, no ptxas on PATH) and checks that they work
# and say plainly what needs the toolkit. CI runs it after scripts/test.sh; with
# ccache the build is mostly cache hits.
#   scripts/cpu-only-check.sh            (build dir: build-cpu-only/, or $BUILD_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-cpu-only}
# Cache hits across build directories (ccache hashes the build dir otherwise).
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
# Hide every ptxas: no $PTXAS, and no PATH entry that holds one.
unset PTXAS
path=""
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do [ -x "$d/ptxas" ] || path=${path:+$path:}$d; done
export PATH=$path
nocuda=/nonexistent/cuda
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTC_CUDA_HOME=$nocuda -DTC_LIBDEVICE=$nocuda/nvvm/libdevice/libdevice.10.bc >/dev/null
ninja -C "$BUILD_DIR" tritonc triton-interp triton-conformance triton-fuzz triton-run host_api \
    oracle_ulp_bench
bin=$BUILD_DIR/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
check() { # NAME EXPECTED-EXIT EXPECTED-TEXT COMMAND...
  local name=$1 want=$2 text=$3 rc=0
  shift 3
  "$@" >"$tmp/out" 2>&1 || rc=$?
  if [ "$rc" != "$want" ] || ! grep -qF -- "$text" "$tmp/out"; then
    echo "FAIL: $name: exit $rc (want $want), output lacks '$text':"; tail -20 "$tmp/out"
    failed=1
  else
    echo "ok: $name"
  fi
}
check "triton-interp runs the vector add" 0 "c: float32[1000]" \
  "$bin/triton-interp" examples/vector_add.tc -DSIZE=256 -DTYPE=float --grid 'cdiv(N, SIZE)' \
  --arg N=1000 --arg a=arange:f32[N] --arg b=full:0.5:f32[N] --arg c=zeros:f32[N] --print c
check "triton-interp traps" 1 "trap: out_of_bounds" \
  "$bin/triton-interp" examples/vector_add_fixed.tc --grid 'cdiv(N, 32)' --arg N=1000 \
  --arg a=zeros:f32[N] --arg b=zeros:f32[N] --arg c=zeros:f32[N]
check "conformance suite (basic) on the interpreter" 0 " 0 failed, 0 error, 0 crash" \
  "$bin/triton-conformance" run conformance/cases/basic conformance/cases/kernels.json --backend interp -q
check "tritonc --emit=ir" 0 "kernel @softmax" \
  "$bin/tritonc" examples/softmax.tc -DBLOCK=128 --emit=ir
check "tritonc --emit=ptx without math" 0 ".entry add" \
  "$bin/tritonc" examples/vector_add.tc -DSIZE=1024 -DTYPE=float --emit=ptx
check "tritonc --emit=ptx of a kernel with exp names libdevice" 2 "needs libdevice; this build has no libdevice" \
  "$bin/tritonc" examples/softmax.tc -DBLOCK=128 --emit=ptx
check "tritonc --ptxas says ptxas is missing" 1 "ptxas (from the CUDA toolkit) not found" \
  "$bin/tritonc" examples/vector_add.tc -DSIZE=1024 -DTYPE=float --emit=ptx --ptxas -o "$tmp/k.ptx"
check "check-ptx skips without ptxas" 77 "check-ptx skipped: ptxas (from the CUDA toolkit) not found" \
  "$bin/triton-conformance" check-ptx conformance/cases/basic
check "triton-fuzz --cpu-only" 0 "" \
  "$bin/triton-fuzz" --cpu-only --time 10s --seed 1 --out "$tmp/fuzz"
# The golden tests: those that need the toolkit or a GPU are UNSUPPORTED, the rest pass.
check "lit golden tests" 0 "Total Discovered Tests" \
  python3 /usr/lib/llvm-19/build/utils/lit/lit.py -q "$BUILD_DIR/tests/lit"
[ "$failed" = 0 ] && echo "cpu-only-check: the CPU-only build works without the CUDA toolkit"
exit "$failed"
