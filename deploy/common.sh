# deploy/common.sh - helpers shared by the deploy scripts (sourced, not run).
# shellcheck shell=bash

# Prints a message on stderr and exits with status 3 (a usage error, as
# triton-fuzz itself uses).
die() {
  echo "deploy: $*" >&2
  exit 3
}

# The triton-fuzz binary: $TRITON_FUZZ, else triton-fuzz on PATH, else
# build/bin/triton-fuzz of this checkout.
resolve_triton_fuzz() {
  local candidate
  if [[ -n "${TRITON_FUZZ:-}" ]]; then
    [[ -x "$TRITON_FUZZ" ]] || die "TRITON_FUZZ=$TRITON_FUZZ is not an executable file"
    echo "$TRITON_FUZZ"
    return
  fi
  if command -v triton-fuzz >/dev/null 2>&1; then
    command -v triton-fuzz
    return
  fi
  candidate=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/bin/triton-fuzz
  if [[ -x "$candidate" ]]; then
    echo "$candidate"
    return
  fi
  die "triton-fuzz not found: set TRITON_FUZZ, put it on PATH, or build it in build/"
}

# "90", "30s", "2m", "1h" (triton-fuzz's --time syntax) -> whole seconds.
duration_seconds() {
  local text=$1 number unit
  [[ "$text" =~ ^([0-9]+)([smh]?)$ ]] || die "bad duration '$text' (use e.g. 90, 30s, 2m, 8h)"
  number=${BASH_REMATCH[1]}
  unit=${BASH_REMATCH[2]}
  case "$unit" in
    h) echo $((number * 3600)) ;;
    m) echo $((number * 60)) ;;
    *) echo "$number" ;;
  esac
}

# Checks that $1 is a non-negative integer (named $2 in the message).
require_count() {
  [[ "$1" =~ ^[0-9]+$ ]] || die "$2 must be a non-negative integer, not '$1'"
}
