#!/usr/bin/env bash
# Builds the wheel of the whole project for one Python interpreter: the package
# triton_c with its extension module, libtriton_c.so (LLVM linked in) and the
# command-line tools as console scripts (the root pyproject.toml; what
# `pip install .` builds). It needs no Python package but numpy at run time.
#   scripts/build-wheel.sh [--python PYTHON] [--out DIR] [--no-build-isolation]
# PYTHON: an interpreter (a path or a command), or a version such as 3.12 (pyenv's
#   3.12.x when there is one, else python3.12 on PATH); default python3.
# DIR: where the wheel goes (default wheels/, git-ignored).
# The wheel for the GPU machine (Python 3.12, glibc 2.39, nothing installable):
#   scripts/build-wheel.sh --python 3.12
# and there: python3 -m pip install --no-index --no-deps WHEEL (or --target DIR).
# scikit-build-core and nanobind come from PyPI into pip's isolated build
# environment (--no-build-isolation: the interpreter's own). The build is the
# working tree's, in build-wheel/<wheel tag>/ (kept: the next run rebuilds what
# changed; ccache shares objects between interpreters). A full build takes 15-30
# minutes on 2 cores; CMAKE_BUILD_PARALLEL_LEVEL sets the jobs.
# Then checks the wheel: its binaries need no shared library outside a base
# system (libc, libstdc++, libz, libzstd), the newest glibc symbol they use,
# and a smoke test (a tool runs; the extension module loads).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py=python3
out="$root/wheels"
isolation=()
while (($#)); do
  case "$1" in
    --python) py="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-build-isolation) isolation=(--no-build-isolation); shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-wheel: unknown argument $1 (see --help)" >&2; exit 3 ;;
  esac
done

if [[ "$py" =~ ^[0-9]+\.[0-9]+$ ]]; then
  found=""
  pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
  # shellcheck disable=SC2012  # version folders: plain names
  for cand in $(ls -d "$pyenv_root/versions/$py".* 2>/dev/null | sort -V -r); do
    if [ -x "$cand/bin/python$py" ]; then found="$cand/bin/python$py"; break; fi
  done
  [ -n "$found" ] || found="$(command -v "python$py" || true)"
  [ -n "$found" ] || { echo "build-wheel: no Python $py (pyenv or python$py on PATH)" >&2; exit 1; }
  py="$found"
fi
command -v "$py" >/dev/null || { echo "build-wheel: $py not found" >&2; exit 1; }
echo "build-wheel: $("$py" -c 'import sys; print(sys.executable, sys.version.split()[0])')"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$py" -m pip wheel --no-deps "${isolation[@]}" -w "$tmp" "$root"
wheel="$(ls "$tmp"/triton_c-*.whl)"
cp "$wheel" "$out/"
wheel="$out/$(basename "$wheel")"

# What the wheel's binaries need from the system it goes to.
mkdir "$tmp/site"
"$py" -m zipfile -e "$wheel" "$tmp/site"
chmod +x "$tmp"/site/triton_c/bin/*  # zipfile does not restore modes; pip does
bad=0
glibc=""
while IFS= read -r f; do
  for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    case "$lib" in
      libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|ld-linux*|libpthread.so.*|libdl.so.*|librt.so.*|libz.so.*|libzstd.so.*|libtriton_c.so) ;;
      *) echo "build-wheel: ${f#"$tmp"/site/} needs $lib, which the wheel does not carry" >&2; bad=1 ;;
    esac
  done
  glibc="$glibc $(objdump -T "$f" | grep -o 'GLIBC_[0-9.]*' | sort -u | tr '\n' ' ')"
done < <(find "$tmp/site/triton_c" -type f \( -name '*.so' -o -path '*/bin/*' \))
newest="$(tr ' ' '\n' <<<"$glibc" | grep . | sort -u -V | tail -1)"
echo "build-wheel: newest glibc symbol used: $newest"
((bad == 0)) || exit 1

# Smoke test: a tool runs from the unpacked wheel; the extension module loads
# (without importing the package, which needs numpy).
"$tmp/site/triton_c/bin/triton-interp" --help >/dev/null
core="$(ls "$tmp"/site/triton_c/_core*.so)"
"$py" - "$core" <<'EOF'
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.ExtensionFileLoader("triton_c._core", sys.argv[1])
spec = importlib.util.spec_from_file_location("triton_c._core", sys.argv[1], loader=loader)
importlib.util.module_from_spec(spec)
EOF
echo "build-wheel: $wheel ($(du -h "$wheel" | cut -f1))"
