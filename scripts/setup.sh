#!/usr/bin/env bash
# Set-up in one command: installs the Debian packages that are missing, builds a
# release into build/, and runs the main job on a bundled example.
# Idempotent: installed packages and an up-to-date build are left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake ninja-build ccache python3
          llvm-19-dev llvm-19-tools clang-19 libclang-rt-19-dev
          libgtest-dev googletest librapidcheck-dev nlohmann-json3-dev libcli11-dev
          libeigen3-dev libzstd-dev zlib1g-dev libbenchmark-dev
          python3-venv python3-dev python3-numpy python3-torch python3-pytest)
# A single-node Slurm for the test of deploy/slurm (tests/campaign/slurm_real.sh):
# installed without recommendations (they add dozens of unused plugins); the
# test starts its own private daemons, none of the system's.
SLURM_PACKAGES=(slurmctld slurmd slurm-client munge)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
missing_slurm=()
for p in "${SLURM_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing_slurm+=("$p")
done
if ((${#missing[@]} + ${#missing_slurm[@]})); then
  echo "setup: installing ${missing[*]}${missing[*]:+ }${missing_slurm[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  if ((${#missing[@]})); then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
  fi
  if ((${#missing_slurm[@]})); then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing_slurm[@]}"
  fi
fi

# The Python package's environment: a virtual environment on Debian's python3
# (/usr/bin/python3, whatever `python3` is first on PATH) that sees Debian's
# NumPy, PyTorch and pytest, plus the binding tools from PyPI.
if [ ! -x .venv/bin/python ]; then
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
.venv/bin/python -c "import nanobind, scikit_build_core" 2>/dev/null ||
  .venv/bin/pip install -q "nanobind>=2.0" "scikit-build-core>=0.10"
# Triton (OpenAI's Python DSL) for the triton backend (docs/triton.md): its
# interpreter (TRITON_INTERPRET=1) needs no GPU, so CI runs a sample of the
# conformance suite on it. Pinned to the GPU machine's version; about 10 s
# from PyPI. Without it the triton backend says so and its tests skip.
TRITON_VERSION=3.6.0
.venv/bin/python -c "import sys, triton; sys.exit(triton.__version__ != '$TRITON_VERSION')" \
    2>/dev/null ||
  .venv/bin/pip install -q "triton==$TRITON_VERSION" ||
  echo "setup: warning: could not install triton==$TRITON_VERSION; the triton backend's tests skip"

BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$BUILD_DIR"

echo "setup: running the tutorial's vector add (examples/vector_add.tc) on the reference interpreter"
"$BUILD_DIR"/bin/triton-interp examples/vector_add.tc -DSIZE=1024 -DTYPE=float \
    --grid 'cdiv(N, SIZE)' --arg N=5000 --arg a=arange:f32[5000] --arg b=full:0.5:f32[5000] \
    --arg c=zeros:f32[5000] --print c
