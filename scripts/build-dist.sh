#!/usr/bin/env bash
# Builds a stripped release of the tools into dist/ for the GPU test machine
# (bin/, lib/, and what tools/gpu-check.sh needs next to them).
#   scripts/build-dist.sh [DIST_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dist="${1:-$root/dist}"
build="$root/build-dist"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g0 -DNDEBUG" >/dev/null
ninja -C "$build" -j"$(nproc)" tritonc triton-interp triton-run triton-conformance unit_tests
rm -rf "$dist"
mkdir -p "$dist/bin" "$dist/lib"
for t in tritonc triton-interp triton-run triton-conformance; do
  cp "$build/bin/$t" "$dist/bin/"
done
cp "$build/bin/unit_tests" "$dist/bin/"
cp "$build/lib/libtriton.so" "$dist/lib/"
strip --strip-unneeded "$dist"/bin/* "$dist/lib/libtriton.so"
cp -r "$root/conformance" "$root/examples" "$dist/"
mkdir -p "$dist/bench" && cp -r "$root/bench/kernels" "$dist/bench/"
cp "$root/tools/gpu-check.sh" "$dist/" 2>/dev/null || true
if [ -f "$root/../shared/bench/triton_reference.py" ]; then
  cp "$root/../shared/bench/triton_reference.py" "$dist/"
fi
du -sh "$dist"
