#!/usr/bin/env bash
# Measures the fuzzer's power: for each bug planted by a -DTC_PLANTED_BUGS=ON
# build (support/PlantedBugs.h), runs one fuzz campaign with the bug active and
# reports whether and how fast it fails (bench/RESULTS.md has the table).
#
#   scripts/planted-bugs.sh --bin DIR [--where gpu|ir|all] [--limit SECONDS]
#       [--parallel N] [--seed S] [--out DIR] [--control SECONDS]
#       [--shrink-time SECONDS] [--bugs NAME,...] [-- EXTRA TRITON-FUZZ ARGS]
#
# --bin       folder holding a planted triton-fuzz (scripts/build-dist.sh --planted
#             makes dist-planted/bin; a normal build is refused)
# --where     which bugs: gpu (GPU campaign), ir (the --cpu-only properties), all (default)
# --limit     campaign time per bug (default 600 for gpu bugs, 120 for ir bugs)
# --parallel  campaigns at a time (default 1: timings of concurrent campaigns are slower)
# --seed      campaign seed (default 1)
# --out       folder for the campaigns (default: a new temporary folder); OUT/<bug>/ is
#             the campaign folder, OUT/<bug>.log its output, OUT/table.md the table
# --control   length of the control campaign with no bug planted (default 60; 0: none)
# --shrink-time  reduction budget after the first failure (default 20)
# --bugs      only these bugs (e.g. to split a long measurement into several runs;
#             --bugs spec-div8: the argument specialisation's, integers divisible by 8
#             classed divisible by 16, which property (g) of the class launches finds)
#
# Per bug: TC_PLANT_BUG=<bug> triton-fuzz [--cpu-only] --stop-on-failure --time <limit>s
#   --seed S --out OUT/<bug>, which prints
#   `first-failure-seconds: <s> kernels: <n> property: <p> signature: <sig>`.
# A failure counts as found only if it is the bug's: the failing kernel is replayed
# (--replay I, with --focus PATH when the campaign aimed it at a fast path: its journal
# record's feature aim.PATH) with and without the bug, and when the clean build fails it the same way the
# row says "confounded" (the campaign stopped on a failure that is not the bug's; fix that
# failure or pick another --seed: the control row shows whether the seed is clean).
# Prints a Markdown table and "found X of Y gpu bugs within L s, Z of W ir bugs within L s",
# then the GPU control campaign's path coverage (the share of its kernels on each path).
# Exit status: 0 when every measured bug was found and the control found nothing, 1
# otherwise, 2 on a usage error or a binary that is not a planted build.
set -uo pipefail

usage() {
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}
die() {
  echo "planted-bugs.sh: $*" >&2
  exit 2
}

bin="" where=all limit="" parallel=1 seed=1 out="" control=60 shrink=20 only=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
  --bin) bin="${2:-}"; shift 2 ;;
  --where) where="${2:-}"; shift 2 ;;
  --limit) limit="${2:-}"; shift 2 ;;
  --parallel) parallel="${2:-}"; shift 2 ;;
  --seed) seed="${2:-}"; shift 2 ;;
  --out) out="${2:-}"; shift 2 ;;
  --control) control="${2:-}"; shift 2 ;;
  --shrink-time) shrink="${2:-}"; shift 2 ;;
  --bugs) only=",${2:-},"; shift 2 ;;
  --) shift; extra=("$@"); break ;;
  -h|--help) usage ;;
  *) echo "planted-bugs.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[ -n "$bin" ] || die "--bin DIR is required"
fuzz="$bin/triton-fuzz"
[ -x "$fuzz" ] || die "no executable $fuzz"
case "$where" in gpu|ir|all) ;; *) die "--where must be gpu, ir or all (got '$where')" ;; esac
isNumber() { [[ "$1" =~ ^[0-9]+$ ]]; }
for v in "$parallel" "$seed" "$control" "$shrink" ${limit:+"$limit"}; do
  isNumber "$v" || die "expected a whole number, got '$v'"
done
[ "$parallel" -ge 1 ] || die "--parallel must be at least 1"

# The bug list (name<TAB>where<TAB>description); a normal build says
# "not built with TC_PLANTED_BUGS" and exits 3.
listErr=$(mktemp)
list=$("$fuzz" --list-planted-bugs 2>"$listErr")
rc=$?
if [ $rc -ne 0 ]; then
  msg=$(cat "$listErr")
  rm -f "$listErr"
  die "$fuzz cannot plant bugs (exit $rc): ${msg:-no message} (build it with -DTC_PLANTED_BUGS=ON, e.g. scripts/build-dist.sh --planted)"
fi
rm -f "$listErr"
[ -n "$list" ] || die "$fuzz --list-planted-bugs printed no bugs"

if [ -z "$out" ]; then
  out=$(mktemp -d /tmp/planted-bugs.XXXXXX)
fi
mkdir -p "$out" || die "cannot create $out"

names=() wheres=()
while IFS=$'\t' read -r name w _; do
  [ -n "$name" ] || continue
  [ -z "$only" ] || [[ "$only" == *",$name,"* ]] || continue
  if [ "$where" = all ] || [ "$where" = "$w" ]; then
    names+=("$name")
    wheres+=("$w")
  fi
done <<<"$list"
[ ${#names[@]} -gt 0 ] || die "no bug in the list matches --where $where${only:+ --bugs ${only:1:-1}}"
for name in "${names[@]}" control-gpu control-ir; do
  [ ! -e "$out/$name" ] || die "$out/$name exists (a campaign folder resumes): remove it or use another --out"
done

limitFor() { # where -> seconds
  if [ -n "$limit" ]; then echo "$limit"; elif [ "$1" = gpu ]; then echo 600; else echo 120; fi
}

# One campaign: run NAME WHERE SECONDS [BUG]; the log goes to OUT/NAME.log.
run() {
  local name=$1 w=$2 secs=$3 bug=${4:-}
  local mode=()
  [ "$w" = ir ] && mode=(--cpu-only)
  # The campaign stops at its time limit; shrinking and reports come on top.
  TC_PLANT_BUG="$bug" timeout $((secs + shrink + 300)) "$fuzz" "${mode[@]}" --stop-on-failure \
    --time "${secs}s" --seed "$seed" --shrink-time "${shrink}s" --out "$out/$name" "${extra[@]}" \
    >"$out/$name.log" 2>&1
  echo "exit: $?" >>"$out/$name.log"
}

jobsFinish() { # waits until fewer than N campaigns run
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n; done
}

echo "planted-bugs.sh: ${#names[@]} bugs, seed $seed, logs in $out" >&2
declare -A wantControl=()
for i in "${!names[@]}"; do
  wantControl[${wheres[$i]}]=1
  jobsFinish
  echo "  running ${names[$i]} (${wheres[$i]}, $(limitFor "${wheres[$i]}") s)" >&2
  run "${names[$i]}" "${wheres[$i]}" "$(limitFor "${wheres[$i]}")" "${names[$i]}" &
done
if [ "$control" -gt 0 ]; then
  for w in gpu ir; do
    [ -n "${wantControl[$w]:-}" ] || continue
    jobsFinish
    echo "  running the control (no bug, $w, $control s)" >&2
    run "control-$w" "$w" "$control" &
  done
fi
wait

# The fast path campaign NAME aimed kernel I at, as `--focus PATH` ("" for none;
# also when the extra arguments give a --focus of their own, which the replay gets).
focusOf() {
  local aim a
  for a in "${extra[@]}"; do
    case "$a" in --focus | --focus=*) return 0 ;; esac
  done
  aim=$(grep -m1 "^{\"index\":$2," "$out/$1/journal.jsonl" 2>/dev/null |
    grep -o '"aim\.[a-z.]*"' | head -1 | tr -d '"')
  [ -z "$aim" ] || echo "--focus ${aim#aim.}"
}

# Output and exit status of `triton-fuzz --replay I` in mode w with bug $3 ("" for none)
# and the focus $4 (see focusOf).
replay() {
  local w=$1 index=$2 bug=$3 focus=${4:-} mode=() text rc
  [ "$w" = ir ] && mode=(--cpu-only)
  # shellcheck disable=SC2086 # $focus is "" or "--focus PATH"
  text=$(TC_PLANT_BUG="$bug" timeout 300 "$fuzz" "${mode[@]}" --seed "$seed" --replay "$index" \
    $focus "${extra[@]}" 2>&1)
  rc=$?
  grep -v '^device:' <<<"$text"
  echo "replay-exit: $rc"
}

# Whether the first failure in a log is the planted bug's (see the header): the
# clean build passes that kernel, or fails it differently (a crash counts as failing).
failureIsTheBugs() {
  local name=$1 w=$2 log="$out/$1.log" index clean focus
  index=$(grep -oE 'FAILURE of property .* on kernel [0-9]+' "$log" | head -1 | grep -oE '[0-9]+$')
  [ -n "$index" ] || return 0
  focus=$(focusOf "$name" "$index")
  clean=$(replay "$w" "$index" "" "$focus")
  grep -q '^replay-exit: 0$' <<<"$clean" && return 0
  [ "$clean" != "$(replay "$w" "$index" "$name" "$focus")" ]
}

# One table row from a campaign log: sets rowText and found (yes/no/confounded/error).
row() {
  local name=$1 w=$2 log="$out/$1.log"
  local rc line secs kernels prop sig culprit
  rc=$(sed -n 's/^exit: //p' "$log" | tail -1)
  line=$(grep -E '^first-failure-seconds: ' "$log" | tail -1)
  if [ -n "$line" ]; then
    found=yes
    secs=$(sed -E 's/^first-failure-seconds: ([^ ]+).*/\1/' <<<"$line")
    kernels=$(sed -E 's/.* kernels: ([^ ]+).*/\1/' <<<"$line")
    prop=$(sed -E 's/.* property: ([^ ]+).*/\1/' <<<"$line")
    sig=$(sed -E 's/.* signature: //' <<<"$line")
    culprit=$(sed -n 's/^first-failure-culprit: //p' "$log" | tail -1)
    [[ "$name" == control-* ]] || [ "$(cat "$out/$name.theirs" 2>/dev/null)" = 0 ] ||
      found=confounded
  elif [ "$rc" = 0 ]; then
    found=no secs=- prop=- sig=-
    kernels=$(grep -oE 'kernels [0-9]+' "$log" | tail -1 | sed 's/kernels //')
  else
    found=error secs=- prop=- kernels=-
    sig="exit $rc: $(grep -v '^exit: ' "$log" | tail -1)"
  fi
  rowText="| $name | $w | $found | $secs | ${kernels:--} | $prop | \`${sig//|/\\|}\` | ${culprit:--} |"
}

# The replays of failureIsTheBugs, --parallel at a time: OUT/<bug>.theirs gets its status.
for i in "${!names[@]}"; do
  grep -qE '^first-failure-seconds: ' "$out/${names[$i]}.log" || continue
  jobsFinish
  (
    failureIsTheBugs "${names[$i]}" "${wheres[$i]}"
    echo $? >"$out/${names[$i]}.theirs"
  ) &
done
wait

{
  echo "| bug | where | found | seconds to first failure | kernels | property | signature | culprit (GPU) |"
  echo "|---|---|---|---|---|---|---|---|"
  declare -A total=() hits=()
  ok=1
  for i in "${!names[@]}"; do
    w=${wheres[$i]}
    row "${names[$i]}" "$w"
    echo "$rowText"
    total[$w]=$((${total[$w]:-0} + 1))
    [ "$found" = yes ] && hits[$w]=$((${hits[$w]:-0} + 1))
    [ "$found" = yes ] || ok=0
  done
  for w in gpu ir; do
    [ -e "$out/control-$w.log" ] || continue
    row "control-$w" "$w"
    echo "${rowText/| control-$w |/| (control: no bug) |}"
    [ "$found" = no ] || ok=0
  done
  echo
  summary=()
  for w in gpu ir; do
    [ -n "${total[$w]:-}" ] &&
      summary+=("${hits[$w]:-0} of ${total[$w]} $w bugs within $(limitFor "$w") s")
  done
  (IFS=,; echo "found ${summary[*]}" | sed 's/,/, /g')
  if [ -e "$out/control-gpu.log" ]; then
    echo
    echo "GPU control campaign (no bug), path coverage:"
    sed -n '/^path coverage/,/never taken/p' "$out/control-gpu.log"
  fi
  echo "$ok" >"$out/.ok"
} | tee "$out/table.md"
[ "$(cat "$out/.ok")" = 1 ]
