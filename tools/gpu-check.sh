#!/usr/bin/env bash
# The whole GPU check on the GPU test machine, in one call (GPU_MACHINE.md):
# device, GPU unit tests, the conformance suite on the gpu backend (plain and
# under compute-sanitizer), the PERF.md benchmarks against Triton measured in
# the same call, and a summary table. Every step's failure is recorded in the
# table; none stops the script.
#
#   cd DIR && tools/gpu-check.sh [options]      (or DIR/gpu-check.sh)
#
# DIR holds bin/ (triton-run, triton-conformance, unit_tests if built), lib/,
# the repository's conformance/ and examples/ (and bench/kernels/softmax.tc),
# and optionally triton_reference.py (the Triton reference script, when the developers' copy is found; optional) next to bin/.
# Logs and reports go to ${OUT:-./gpu-check-out}.
#
# Options:
#   --sanitize none|subset|all  compute-sanitizer memcheck + racecheck over no
#                               suites, a subset (default: basic.*, kernels, matmul-loops,
#                               dot, reductions, tiles, broadcast, atomics) or all
#   --sanitize-suite GLOB       the suites of --sanitize subset instead (repeatable)
#   --jobs N                    conformance workers (default: the number of cores)
#   --skip-unit --skip-conformance --skip-bench --skip-triton
#                               (--skip-conformance skips the plain gpu run only;
#                               --sanitize none skips the sanitizer runs)
#   --no-compare                benchmarks without the interpreter check first
#   --tune                      also auto-tune the 4096^3 matmul (tiles x num_warps)
#   --disable-opt LIST          switch GPU optimisations off in the conformance runs
#                               and benchmarks (vectorize,remat,mma,mma-values,pipeline,wgmma,specialize,all)
#   --fuzz-time T               also run a differential fuzz campaign of T (e.g. 10m)
#                               on every device (bin/triton-fuzz; seed $FUZZ_SEED,
#                               default 20261121); report in $OUT/fuzz/report.md
#   --planted-dir DIR           also measure the planted GPU bugs with DIR/bin/triton-fuzz
#                               (scripts/build-dist.sh --planted) and planted-bugs.sh
#   --planted-limit S           seconds per planted bug (default 600)
#   --profile                   ncu (SpeedOfLight, memory, warp stalls) of the bench kernels
set -u

SANITIZE=subset
JOBS=$(nproc 2>/dev/null || echo 4)
SAN_SUITES=()
SKIP_UNIT=0 SKIP_CONF=0 SKIP_BENCH=0 SKIP_TRITON=0 COMPARE=1 TUNE=0
DISABLE=() FUZZ_TIME="" PLANTED_DIR="" PLANTED_LIMIT=600 PROFILE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) SANITIZE=${2:?--sanitize needs none, subset or all}; shift ;;
    --sanitize=*) SANITIZE=${1#*=} ;;
    --sanitize-suite) SAN_SUITES+=(--suite "${2:?--sanitize-suite needs a glob}"); shift ;;
    --jobs|-j) JOBS=${2:?--jobs needs a number}; shift ;;
    --skip-unit) SKIP_UNIT=1 ;;
    --skip-conformance) SKIP_CONF=1 ;;
    --skip-bench) SKIP_BENCH=1 ;;
    --skip-triton) SKIP_TRITON=1 ;;
    --no-compare) COMPARE=0 ;;
    --tune) TUNE=1 ;;
    --disable-opt) DISABLE=(--disable-opt "${2:?--disable-opt needs a list}"); shift ;;
    --fuzz-time) FUZZ_TIME=${2:?--fuzz-time needs a duration}; shift ;;
    --planted-dir) PLANTED_DIR=${2:?--planted-dir needs a folder}; shift ;;
    --planted-limit) PLANTED_LIMIT=${2:?--planted-limit needs seconds}; shift ;;
    --profile) PROFILE=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check.sh: unknown option '$1' (see --help)" >&2; exit 3 ;;
  esac
  shift
done
case "$SANITIZE" in none|subset|all) ;; *) echo "gpu-check.sh: --sanitize none|subset|all" >&2; exit 3 ;; esac

ROOT=$(pwd)
BIN=$ROOT/bin
OUT=${OUT:-./gpu-check-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SUMMARY=$OUT/summary.txt
: > "$OUT/steps.tsv"   # step, verdict, note
: > "$OUT/bench.tsv"   # kernel, ours ms, Triton ms (or -), note

CUDA_BIN=/usr/local/cuda/bin
SANITIZER=$(command -v compute-sanitizer || echo "$CUDA_BIN/compute-sanitizer")
[ -x "$SANITIZER" ] || SANITIZER=""
export PATH="$BIN:$CUDA_BIN:$PATH"

record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$OUT/steps.tsv"; }

# step NAME LOG TIMEOUT CMD...: runs CMD with its output in LOG (and on the
# terminal), records "ok" or "FAIL (exit N)" / "TIMEOUT"; returns CMD's status.
step() {
  local name=$1 log=$2 limit=$3; shift 3
  echo
  echo "== $name: $*"
  local t0=$SECONDS rc
  timeout --kill-after=30 "$limit" "$@" > "$log" 2>&1
  rc=$?
  tail -n 40 "$log"
  local secs=$((SECONDS - t0)) verdict
  case $rc in
    0) verdict=ok ;;
    124|137) verdict="TIMEOUT (${limit}s)" ;;
    *) verdict="FAIL (exit $rc)" ;;
  esac
  echo "-- $name: $verdict (${secs}s, log $log)"
  STEP_RC=$rc
  STEP_VERDICT=$verdict
  STEP_SECS=$secs
  return $rc
}

last_line() { grep -E "$1" "$2" 2>/dev/null | tail -n 1; }

#--- device ------------------------------------------------------------------
echo "== machine: $(hostname), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
if step nvidia-smi "$OUT/nvidia-smi.log" 60 nvidia-smi; then
  record nvidia-smi ok "$(grep -m1 -oE 'NVIDIA [A-Z0-9][^|]*[0-9]GB[^|]*' "$OUT/nvidia-smi.log" | sed 's/ *$//')"
else
  record nvidia-smi "$STEP_VERDICT" "no nvidia-smi output"
fi
if step check-device "$OUT/check-device.log" 120 "$BIN/triton-run" --check-device; then
  record check-device ok "$(head -n 1 "$OUT/check-device.log")"
  DEVICE_OK=1
else
  record check-device "$STEP_VERDICT" "$(head -n 1 "$OUT/check-device.log")"
  DEVICE_OK=0
fi

#--- unit tests --------------------------------------------------------------
if [ $SKIP_UNIT = 1 ]; then
  record unit-tests skipped "--skip-unit"
elif [ -x "$BIN/unit_tests" ]; then
  # unit_tests may carry its build tree's rpath: point it at lib/ here, and at
  # the examples/ here (the copy's TRITON_C_DIST marks it; tests/unit/SourceRoot.h).
  step unit-tests "$OUT/unit-tests.log" 1200 env LD_LIBRARY_PATH="$ROOT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    TC_SOURCE_DIR="$ROOT" \
    "$BIN/unit_tests" --gtest_filter='*Gpu*:*Cuda*'
  note=$(grep -E '^\[ +(PASSED|FAILED|SKIPPED) +\] [0-9]+ tests?' "$OUT/unit-tests.log" |
    sed 's/^\[ *//; s/ *\]/:/; s/, listed below://' | tr '\n' ' ')
  [ -z "$note" ] && note=$(head -n 1 "$OUT/unit-tests.log")
  record unit-tests "$STEP_VERDICT" "$note"
else
  record unit-tests skipped "no bin/unit_tests"
fi

#--- conformance -------------------------------------------------------------
SUBSET=(--suite 'basic.*' --suite kernels --suite dot --suite reductions --suite tiles
        --suite broadcast --suite atomics --suite matmul-loops)
conformance() { # NAME LOG LIMIT [PREFIX...] -- [RUN FLAGS...]
  local name=$1 log=$2 limit=$3; shift 3
  local prefix=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do prefix+=("$1"); shift; done
  shift
  step "$name" "$log" "$limit" "${prefix[@]}" "$BIN/triton-conformance" run "$ROOT/conformance/cases" \
    --backend gpu -j "$JOBS" "${DISABLE[@]}" "$@"
  record "$name" "$STEP_VERDICT" "$(last_line '^[0-9]+ passed, ' "$log")"
}
if [ $SKIP_CONF = 1 ] && [ "$SANITIZE" = none ]; then
  record conformance skipped "--skip-conformance --sanitize none"
elif [ ! -d "$ROOT/conformance/cases" ]; then
  record conformance FAIL "no conformance/cases in $ROOT"
else
  if [ $SKIP_CONF = 1 ]; then
    record conformance skipped "--skip-conformance"
  else
    conformance conformance "$OUT/conformance.log" 3600 -- \
      --out "$OUT/gpu.json" --md "$OUT/gpu.md" --html "$OUT/gpu.html"
  fi
  if [ "$SANITIZE" = none ]; then
    record sanitizers skipped "--sanitize none"
  elif [ -z "$SANITIZER" ]; then
    record sanitizers FAIL "compute-sanitizer not found"
  else
    SEL=()
    [ "$SANITIZE" = subset ] && SEL=("${SUBSET[@]}")
    [ "$SANITIZE" = subset ] && [ ${#SAN_SUITES[@]} -gt 0 ] && SEL=("${SAN_SUITES[@]}")
    for tool in memcheck racecheck; do
      conformance "$tool" "$OUT/$tool.log" 5400 \
        "$SANITIZER" --tool "$tool" --target-processes all --print-limit 20 -- \
        --out "$OUT/gpu-$tool.json" --timeout 600 "${SEL[@]}"
      # memcheck ends with "ERROR SUMMARY: N errors", racecheck with "RACECHECK
      # SUMMARY: H hazards displayed (E errors, W warnings)"; both count hazards.
      summary=$(grep -E '(ERROR|RACECHECK) SUMMARY:' "$OUT/$tool.log" | sed 's/^=* *//' | tail -n 1)
      errors=$(grep -E '(ERROR|RACECHECK) SUMMARY:' "$OUT/$tool.log" |
        sed -E 's/.*ERROR SUMMARY: ([0-9]+).*/\1/; s/.*\(([0-9]+) errors?, ([0-9]+) warnings?\).*/\1 \2/' |
        awk '{for (i = 1; i <= NF; i++) s += $i} END {print s + 0}')
      verdict="clean"
      [ "$errors" != 0 ] && verdict="$errors hazards/errors"
      [ -z "$summary" ] && verdict="no sanitizer summary"
      record "$tool-verdict" "$verdict" "${summary:-see $OUT/$tool.log} ($SANITIZE)"
    done
  fi
fi

#--- benchmarks --------------------------------------------------------------
SOFTMAX=""
for f in "$ROOT/bench/kernels/softmax.tc" "$ROOT/softmax.tc" "$ROOT/examples/softmax.tc"; do
  [ -f "$f" ] && SOFTMAX=$f && break
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
# profile NAME TRITON-RUN ARGS...: Nsight Compute over one launch (achieved
# bandwidth and throughput, memory workload, warp stall reasons), and the
# SASS instruction mix of the kernel's cubin (tensor-core HMMA/HGMMA, LDSM,
# vector LDG/STG.128) from ptxas + cuobjdump.
profile() {
  local name=$1; shift
  local tag=${name// /_} nargs=() skip=0
  for a in "$@"; do # without --flops X (it needs --bench)
    if [ $skip = 1 ]; then skip=0; elif [ "$a" = --flops ]; then skip=1; else nargs+=("$a"); fi
  done
  step "ncu $name" "$OUT/ncu-$tag.log" 600 "$NCU" --clock-control none --target-processes all \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section LaunchStats --section Occupancy --launch-count 1 "$BIN/triton-run" "${nargs[@]}" \
    --no-cache "${DISABLE[@]}"
  record "ncu $name" "$STEP_VERDICT" "$OUT/ncu-$tag.log"
  # The same kernel through tritonc -> ptxas -> cuobjdump: its SASS opcode mix.
  local src="" cargs=() prev=""
  for a in "$@"; do
    case "$a" in
      *.tc) [ -z "$src" ] && src=$a ;;
      -D*) cargs+=("$a") ;;
    esac
    [ "$prev" = --num-warps ] && cargs+=(--num-warps "$a")
    prev=$a
  done
  if [ -n "$src" ] && "$BIN/tritonc" "$src" "${cargs[@]}" --assume-aligned --emit=ptx "${DISABLE[@]}" > "$OUT/$tag.ptx" &&
    ptxas -arch=sm_90 -v "$OUT/$tag.ptx" -o "$OUT/$tag.cubin" > "$OUT/$tag.ptxas.log" 2>&1 &&
    cuobjdump --dump-sass "$OUT/$tag.cubin" > "$OUT/$tag.sass" 2>&1; then
    grep -oE '^ +/\*[0-9a-f]{4}\*/ +[A-Z][A-Z0-9_.]*' "$OUT/$tag.sass" | awk '{print $2}' |
      sort | uniq -c | sort -rn > "$OUT/$tag.sass-mix.txt"
    record "sass $name" ok "$(head -n 12 "$OUT/$tag.sass-mix.txt" | awk '{printf "%s %s, ", $2, $1}')"
  else
    record "sass $name" FAIL "tritonc/ptxas/cuobjdump failed (see $OUT/$tag.*)"
  fi
}
# bench NAME TRITON_KEY UNITS COMPARE TRITON-RUN ARGS...: our median ms, and
# Triton's figure (GB/s or TFLOP/s in triton.json) turned into ms.
bench() {
  local name=$1 key=$2 units=$3 compare=$4; shift 4
  local extra=()
  [ "$compare" = 1 ] && [ $COMPARE = 1 ] && extra=(--compare)
  local log="$OUT/bench-${name// /_}.log"
  step "bench $name" "$log" 900 "$BIN/triton-run" "$@" --bench "${extra[@]}" "${DISABLE[@]}"
  [ $PROFILE = 1 ] && profile "$name" "$@"
  local ms note=$STEP_VERDICT
  ms=$(awk '$1 == "median" {print $2}' "$log" | tail -n 1)
  grep -q "disagree on" "$log" && note="MISMATCH vs the interpreter (see the log)"
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "${ms:--}" "$key" "$units" "$note" >> "$OUT/bench.tsv"
}
if [ $SKIP_BENCH = 1 ]; then
  record benchmarks skipped "--skip-bench"
elif [ $DEVICE_OK = 0 ]; then
  record benchmarks skipped "no CUDA device"
else
  EX=$ROOT/examples
  bench "vector add f32 2^26" 'add_f32_2^26_GBps' "GB:$((3 * 4 * (1 << 26)))" 1 \
    "$EX/vector_add.tc" -DSIZE=1024 -DTYPE=float --grid 'cdiv(N, SIZE)' --arg N=67108864 \
    --arg a=rand:f32[N] --arg b=rand:f32[N] --arg c=zeros:f32[N]
  if [ -n "$SOFTMAX" ]; then
    bench "softmax f32 4096x1024" 'softmax_f32_4096x1024_GBps' "GB:$((2 * 4 * 4096 * 1024))" 1 \
      "$SOFTMAX" -DBLOCK=1024 --grid 4096 --arg stride=1024 --arg N=1024 \
      --arg X=randn:f32[4096,1024] --arg Y=zeros:f32[4096,1024]
  else
    printf '%s\t-\t%s\t%s\t%s\n' "softmax f32 4096x1024" softmax_f32_4096x1024_GBps x \
      "no bench/kernels/softmax.tc" >> "$OUT/bench.tsv"
  fi
  bench "transpose f32 8192^2" 'transpose_f32_8192^2_GBps' "GB:$((2 * 4 * 8192 * 8192))" 1 \
    "$EX/transpose.tc" -DTM=64 -DTN=64 -DTYPE=float --grid 'M/TM, N/TN' --arg M=8192 --arg N=8192 \
    --arg ldx=8192 --arg ldy=8192 --arg X=rand:f32[M,N] --arg Y=zeros:f32[N,M]
  # The matmul's check: small integers (exact products and sums, so --compare checks
  # exactly) at 1024^3 (the interpreter needs minutes for 4096^3). The timed runs take
  # randn, as Triton's and cuBLAS's do in triton_reference.py: a tensor core draws less
  # power on small integers (a fifth of them zero), and the clock a kernel keeps depends
  # on it (2026-12-06: 4% on an H100 at 4096^3).
  if [ $COMPARE = 1 ]; then
    step "check matmul f16 1024^3" "$OUT/check-matmul.log" 900 "$BIN/triton-run" \
      "$EX/matmul.tc" -DTM=128 -DTN=128 -DTK=64 -DTYPE=half --num-warps 4 --grid 'M/TM, N/TN' \
      --arg M=1024 --arg N=1024 --arg K=1024 --arg lda=1024 --arg ldb=1024 --arg ldc=1024 \
      --arg A=randint:-2:2:f16[M,K] --arg B=randint:-2:2:f16[K,N] --arg C=zeros:f16[M,N] \
      --compare "${DISABLE[@]}"
    grep -q "disagree on" "$OUT/check-matmul.log" && STEP_VERDICT=MISMATCH
    record "check matmul f16 1024^3" "$STEP_VERDICT" "$(last_line '^compare: ' "$OUT/check-matmul.log")"
  fi
  for S in 1024 4096; do
    bench "matmul f16 ${S}^3" "triton_matmul_f16_${S}^3_TFLOPs" "TF:$((2 * S * S * S))" 0 \
      "$EX/matmul.tc" -DTM=128 -DTN=128 -DTK=64 -DTYPE=half --num-warps 4 --grid 'M/TM, N/TN' \
      --arg M=$S --arg N=$S --arg K=$S --arg lda=$S --arg ldb=$S --arg ldc=$S \
      --arg A=randn:f16[M,K] --arg B=randn:f16[K,N] --arg C=zeros:f16[M,N] \
      --flops '2*M*N*K'
  done
  # bf16 (wgmma on Hopper as fp16; triton_reference.py has no bf16 row: Triton "-").
  bench "matmul bf16 4096^3" "triton_matmul_bf16_4096^3_TFLOPs" "TF:$((2 * 4096 * 4096 * 4096))" 0 \
    "$EX/matmul.tc" -DTM=128 -DTN=128 -DTK=64 -DTYPE=bf16 --num-warps 4 --grid 'M/TM, N/TN' \
    --arg M=4096 --arg N=4096 --arg K=4096 --arg lda=4096 --arg ldb=4096 --arg ldc=4096 \
    --arg A=randn:bf16[M,K] --arg B=randn:bf16[K,N] --arg C=zeros:bf16[M,N] \
    --flops '2*M*N*K'
  # FlashAttention-2 and LayerNorm forward (examples/; Triton "-": their Triton side is
  # bench/attention_layernorm.py's, with the developers' triton_attention.py and
  # triton_layernorm.py). No --compare at these sizes (the interpreter needs minutes);
  # the conformance suite's kernels.attention-layernorm checks them at small ones.
  if [ -f "$EX/attention.tc" ]; then
    bench "attention f16 N4096 D64" "triton_attention_f16_N4096_D64_TFLOPs" \
      "TF:$((4 * 4 * 32 * 4096 * 4096 * 64))" 0 "$EX/attention.tc" -DBLOCK_M=128 -DBLOCK_N=64 \
      -DHEAD_DIM=64 --num-warps 8 --grid 'N_CTX / BLOCK_M, Z * H' --arg Z=4 --arg H=32 \
      --arg N_CTX=4096 --arg stride_z=8388608 --arg stride_h=262144 --arg stride_n=64 \
      --arg sm_scale=1.3 --arg Q=randn:f16[Z,H,N_CTX,64] --arg K=randn:f16[Z,H,N_CTX,64] \
      --arg V=randn:f16[Z,H,N_CTX,64] --arg M=zeros:f32[Z,H,N_CTX] \
      --arg Out=zeros:f16[Z,H,N_CTX,64] --flops '4*Z*H*N_CTX*N_CTX*64'
    bench "layernorm f16 4096x8192" "triton_layernorm_f16_4096x8192_GBps" \
      "GB:$((2 * 4096 * 8192 * 2))" 0 "$EX/layernorm.tc" -DBLOCK=8192 --num-warps 8 --grid 4096 \
      --arg N=8192 --arg stride=8192 --arg eps=1e-5 --arg X=randn:f16[4096,8192] \
      --arg Y=zeros:f16[4096,8192] --arg W=rand:f16[N] --arg B=rand:f16[N] \
      --arg Mean=zeros:f32[4096] --arg Rstd=zeros:f32[4096] --bytes '2*4096*8192*2'
    if [ -f "$EX/layernorm_row.tc" ]; then # one pass over X, the row in registers
      bench "layernorm one-pass f16 4096x8192" "triton_layernorm_f16_4096x8192_GBps" \
        "GB:$((2 * 4096 * 8192 * 2))" 0 "$EX/layernorm_row.tc" -DBLOCK=8192 --num-warps 16 \
        --grid 4096 --arg N=8192 --arg stride=8192 --arg eps=1e-5 --arg X=randn:f16[4096,8192] \
        --arg Y=zeros:f16[4096,8192] --arg W=rand:f16[N] --arg B=rand:f16[N] \
        --arg Mean=zeros:f32[4096] --arg Rstd=zeros:f32[4096] --bytes '2*4096*8192*2'
    fi
  fi
  if [ $TUNE = 1 ]; then
    # Tiles, warps and stages auto-tuned (the winner is printed in the log).
    for S in 1024 4096; do
      bench "matmul f16 ${S}^3 tuned" "triton_matmul_f16_${S}^3_TFLOPs" "TF:$((2 * S * S * S))" 0 \
        "$EX/matmul.tc" -DTM=[64,128] -DTN=[64,128,256] -DTK=[32,64] -DTYPE=half \
        --num-warps 4,8 --num-stages 2,3,4 --autotune-report --grid 'M/TM, N/TN' --arg M=$S \
        --arg N=$S --arg K=$S --arg lda=$S --arg ldb=$S --arg ldc=$S \
        --arg A=randn:f16[M,K] --arg B=randn:f16[K,N] --arg C=zeros:f16[M,N] \
        --flops '2*M*N*K'
    done
  fi
fi

#--- differential fuzzing --------------------------------------------------------
if [ -n "$FUZZ_TIME" ]; then
  if [ ! -x "$BIN/triton-fuzz" ]; then
    record fuzz FAIL "no bin/triton-fuzz"
  else
    secs=$(python3 -c "
import sys; t = sys.argv[1]; m = {'s': 1, 'm': 60, 'h': 3600}
print(int(float(t[:-1]) * m[t[-1]]) if t[-1] in m else int(float(t)))" "$FUZZ_TIME")
    step fuzz "$OUT/fuzz.log" $((secs + 900)) "$BIN/triton-fuzz" --time "$FUZZ_TIME" \
      --seed "${FUZZ_SEED:-20261121}" --devices all --out "$OUT/fuzz" "${DISABLE[@]}"
    record fuzz "$STEP_VERDICT" "$(grep -E '^\[' "$OUT/fuzz.log" | tail -n 1)"
  fi
fi
if [ -n "$PLANTED_DIR" ]; then
  PLANTED_SCRIPT=""
  for f in "$ROOT/planted-bugs.sh" "$ROOT/scripts/planted-bugs.sh"; do
    [ -f "$f" ] && PLANTED_SCRIPT=$f && break
  done
  if [ -z "$PLANTED_SCRIPT" ] || [ ! -x "$PLANTED_DIR/bin/triton-fuzz" ]; then
    record planted FAIL "need planted-bugs.sh and $PLANTED_DIR/bin/triton-fuzz"
  else
    step planted "$OUT/planted.log" $((PLANTED_LIMIT * 3 + 600)) env \
      LD_LIBRARY_PATH="$PLANTED_DIR/lib" bash "$PLANTED_SCRIPT" --bin "$PLANTED_DIR/bin" \
      --where gpu --limit "$PLANTED_LIMIT" --parallel "${PLANTED_PARALLEL:-8}" --out "$OUT/planted"
    record planted "$STEP_VERDICT" "$(grep -E '^found ' "$OUT/planted.log" | tail -n 1)"
  fi
fi

#--- Triton's figures, same machine, same call ---------------------------------
REF=""
for f in "$ROOT/triton_reference.py" "$BIN/triton_reference.py" "$ROOT/bench/triton_reference.py"; do
  [ -f "$f" ] && REF=$f && break
done
if [ $SKIP_TRITON = 1 ] || [ $SKIP_BENCH = 1 ]; then
  record triton skipped "not asked for"
elif [ -z "$REF" ]; then
  record triton skipped "no triton_reference.py next to bin/"
else
  step triton "$OUT/triton.log" 1200 python3 "$REF" gpu --json "$OUT/triton.json"
  record triton "$STEP_VERDICT" "$REF"
fi

#--- summary -----------------------------------------------------------------
{
  echo
  echo "== summary ($(date -u +%Y-%m-%dT%H:%M:%SZ), logs in $OUT)"
  echo
  awk -F '\t' '{printf "%-22s %-24s %s\n", $1, $2, $3}' "$OUT/steps.tsv"
  if [ -s "$OUT/bench.tsv" ]; then
    echo
    if command -v python3 > /dev/null; then
      python3 - "$OUT/bench.tsv" "$OUT/triton.json" <<'PY'
import json, sys
rows = [line.rstrip('\n').split('\t') for line in open(sys.argv[1]) if line.strip()]
try:
    ref = json.load(open(sys.argv[2]))
except (OSError, ValueError):
    ref = {}
def ms_from(value, units):
    kind, _, amount = units.partition(':')
    if not amount or value <= 0:
        return None
    amount = float(amount)
    return amount / value * 1e-6 if kind == 'GB' else amount / value * 1e-9
def rate(ms, units):
    kind, _, amount = units.partition(':')
    if ms is None or not amount:
        return '-'
    v = float(amount) / ms * (1e-6 if kind == 'GB' else 1e-9)
    return f"{v:.1f} GB/s" if kind == 'GB' else f"{v:.1f} TFLOP/s"
print(f"{'kernel':26} {'ours ms':>10} {'Triton ms':>10} {'ratio':>7}  {'ours':>14} {'Triton':>14}  note")
for name, ours, key, units, verdict in rows:
    o = float(ours) if ours not in ('-', '') else None
    t = ms_from(ref[key], units) if key in ref else None
    ratio = f"{t / o:.2f}x" if o and t else '-'
    note = '' if verdict == 'ok' else verdict
    print(f"{name:26} {f'{o:.4f}' if o else '-':>10} {f'{t:.4f}' if t else '-':>10} {ratio:>7}"
          f"  {rate(o, units):>14} {rate(t, units):>14}  {note}")
print("ratio = Triton ms / ours ms (above 1: ours is faster)")
for k, v in ref.items():
    if k.startswith('copy') or k.startswith('cublas') or k.startswith('triton_first'):
        print(f"  {k}: {v:.4f}")
PY
    else
      awk -F '\t' '{printf "%-26s ours %s ms (%s)\n", $1, $2, $5}' "$OUT/bench.tsv"
    fi
  fi
} | tee "$SUMMARY"
# The script reports; it fails only when it could not check anything.
exit 0
