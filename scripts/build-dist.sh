#!/usr/bin/env bash
# Builds a stripped release of the tools into dist/ for the GPU test machine
# (bin/, lib/, and what tools/gpu-check.sh needs next to them).
#   scripts/build-dist.sh [DIST_DIR]
#   scripts/build-dist.sh --planted [DIST_DIR]   (default dist-planted/: only
#       triton-fuzz and libtriton built with -DTC_PLANTED_BUGS=ON, for
#       scripts/planted-bugs.sh; never use it for anything else)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
planted=0
if [ "${1:-}" = --planted ]; then planted=1; shift; fi
if [ $planted = 1 ]; then
  dist="${1:-$root/dist-planted}"
  build="$root/build-dist-planted"
  extra=(-DTC_PLANTED_BUGS=ON -DTC_BUILD_TESTS=OFF)
  targets=(triton-fuzz)
else
  dist="${1:-$root/dist}"
  build="$root/build-dist"
  extra=()
  targets=(tritonc triton-interp triton-run triton-conformance triton-fuzz interp_bench)
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g0 -DNDEBUG" "${extra[@]}" >/dev/null
ninja -C "$build" -j"$(nproc)" "${targets[@]}" $([ $planted = 1 ] || echo unit_tests)
rm -rf "$dist"
mkdir -p "$dist/bin" "$dist/lib"
for t in "${targets[@]}"; do
  cp "$build/bin/$t" "$dist/bin/"
done
[ $planted = 1 ] || cp "$build/bin/unit_tests" "$dist/bin/"
cp "$build/lib/libtriton_c.so" "$dist/lib/"
strip --strip-unneeded "$dist"/bin/* "$dist/lib/libtriton_c.so"
if [ $planted = 1 ]; then
  du -sh "$dist"
  exit 0
fi
cp -r "$root/conformance" "$root/examples" "$dist/"
# bin/unit_tests finds its data (examples/) from the folder that holds this file
# (tests/unit/SourceRoot.h), wherever the copy is moved to.
echo "A stripped copy of the Triton-C tools made by scripts/build-dist.sh (see tests/unit/SourceRoot.h)" \
  > "$dist/TRITON_C_DIST"
mkdir -p "$dist/bench" && cp -r "$root/bench/kernels" "$dist/bench/"
cp "$root/tools/gpu-check.sh" "$dist/" 2>/dev/null || true
cp "$root/scripts/planted-bugs.sh" "$dist/" 2>/dev/null || true
if [ -f "$root/../shared/bench/triton_reference.py" ]; then
  cp "$root/../shared/bench/triton_reference.py" "$dist/"
fi
du -sh "$dist"
