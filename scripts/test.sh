#!/usr/bin/env bash
# Runs every test: unit tests, property tests, lit golden tests and the frontend
# fuzz test (a sanitizer build, bounded time). Builds what is needed first.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$BUILD_DIR"
ctest --test-dir "$BUILD_DIR" --output-on-failure "$@"
