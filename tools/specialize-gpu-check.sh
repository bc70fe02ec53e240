#!/usr/bin/env bash
# Argument specialisation on a GPU (docs/gpu-perf.md, "Argument specialisation"),
# from a stripped build (scripts/build-dist.sh): the GPU unit tests, vector add
# launched with N = 1024, 1001, 1 and 2048 through one disk cache (each checked
# against the interpreter; --time-passes names the class and the cache hit), a
# broken __multipleof still trapping, and a bandwidth comparison of the
# specialised and unspecialised kernels. Exit code 0 when every check passed.
#   tools/specialize-gpu-check.sh [DIST]     (default: dist)
set -uo pipefail
dist="$(cd "${1:-dist}" && pwd)"
run="$dist/bin/triton-run"
add="$dist/examples/vector_add.tc"
fail=0
check() { # name, then the command; its output must contain every "want" line given with -w
  local name="$1"; shift
  local wants=()
  while [ "$1" = -w ]; do wants+=("$2"); shift 2; done
  local out rc
  out="$("$@" 2>&1)"; rc=$?
  local ok=1
  for w in "${wants[@]}"; do grep -qF -- "$w" <<<"$out" || ok=0; done
  if [ $ok = 1 ]; then echo "PASS $name"; else echo "FAIL $name (rc=$rc)"; echo "$out" | tail -20; fail=1; fi
}
"$dist/bin/unit_tests" --gtest_filter='Specialize*:GpuBackend*:Autotune.Gpu*' 2>&1 | tail -3
[ "${PIPESTATUS[0]}" = 0 ] && echo "PASS unit tests" || { echo "FAIL unit tests"; fail=1; }
cache="$(mktemp -d)"
# 2048 elements whatever N: a kernel that wrote past N would disagree.
args=(-DSIZE=1024 -DTYPE=float --grid 'cdiv(N, SIZE)' --arg 'a=randn:f32[2048]' --arg 'b=randn:f32[2048]' --arg 'c=zeros:f32[2048]' --time-passes --compare)
agree="compare: the GPU and the interpreter agree on all 3 buffers"
check "N=1024" -w "specialised: N=16,a=16,b=16,c=16 (cache: miss)" -w "$agree" env XDG_CACHE_HOME="$cache" "$run" "$add" --arg N=1024 "${args[@]}"
check "N=1001" -w "specialised: a=16,b=16,c=16 (cache: miss)" -w "$agree" env XDG_CACHE_HOME="$cache" "$run" "$add" --arg N=1001 "${args[@]}"
check "N=1" -w "specialised: N=1,a=16,b=16,c=16 (cache: miss)" -w "$agree" env XDG_CACHE_HOME="$cache" "$run" "$add" --arg N=1 "${args[@]}"
check "N=2048 (disk hit)" -w "specialised: N=16,a=16,b=16,c=16 (cache: disk hit)" -w "$agree" env XDG_CACHE_HOME="$cache" "$run" "$add" --arg N=2048 "${args[@]}"
check "N=1001 off" -w "$agree" "$run" "$add" --arg N=1001 "${args[@]}" --no-cache --disable-opt specialize
rm -rf "$cache"
claim="$(mktemp -d)/claim.tc"
printf '%s\n' '__global__ void copy(int N __multipleof(16), float *X, float *Y) {' \
  '  int i[1024] = 0 ... 1024;' '  bool m[1024] = i < N;' '  *?(m)(Y + i) = *?(m)(X + i);' '}' > "$claim"
check "__multipleof kept" -w "compare: the GPU and the interpreter agree on all 2 buffers" "$run" "$claim" --grid 1 --arg N=1024 --arg 'X=arange:f32[1024]' --arg 'Y=zeros:f32[1024]' --compare --no-cache
check "__multipleof broken traps" -w "'N' = 1000 is not a multiple of 16" "$run" "$claim" --grid 1 --arg N=1000 --arg 'X=zeros:f32[1024]' --arg 'Y=zeros:f32[1024]' --no-cache
# Bandwidth: the specialised kernel (N = 2^26, aligned) against the one with
# run-time checks (--disable-opt specialize), same call; then N = 2^26 - 1.
for n in 67108864 67108863; do
  for mode in specialise off; do
    extra=(); [ $mode = off ] && extra=(--disable-opt specialize)
    line="$("$run" "$add" -DSIZE=1024 -DTYPE=float --grid 'cdiv(N, SIZE)' --arg N=$n --arg 'a=rand:f32[N]' --arg 'b=rand:f32[N]' --arg 'c=zeros:f32[N]' --no-cache --bench --bench-iters 50 --bench-warmup 5 "${extra[@]}" 2>&1 | grep -E 'median|GB/s' | tr -s ' \n' ' ')"
    echo "bench N=$n $mode: $line"
  done
done
[ $fail = 0 ] && echo "specialize-gpu-check: all passed" || echo "specialize-gpu-check: FAILED"
exit $fail
