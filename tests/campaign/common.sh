# Shared by the campaign shell tests: $FUZZ is the triton-fuzz binary, $T a
# scratch folder removed at exit; fail() ends the test with a message.
set -u
FUZZ=${1:?usage: $0 path/to/triton-fuzz}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# journal_check DIR: prints "<records> <distinct indices>" of DIR/journal.jsonl
# (torn lines skipped, as the campaign does).
journal_check() {
  python3 - "$1/journal.jsonl" <<'PY'
import json, sys
idx = []
for line in open(sys.argv[1]):
    try:
        idx.append(json.loads(line)["index"])
    except Exception:
        pass
print(len(idx), len(set(idx)))
PY
}
# summary_field DIR KEY: a number from DIR/campaign.json (searched recursively).
summary_field() {
  python3 - "$1/campaign.json" "$2" <<'PY'
import json, sys
def find(o, k):
    if isinstance(o, dict):
        if k in o:
            return o[k]
        for v in o.values():
            r = find(v, k)
            if r is not None:
                return r
    return None
print(find(json.load(open(sys.argv[1])), sys.argv[2]))
PY
}
