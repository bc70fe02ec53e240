#!/usr/bin/env python3
"""The short table of a finished triton-fuzz campaign (any --target), from its
campaign.json: kernels, kernels/s, where the workers' time went, discards by
kind (known Triton bugs set aside, triton-known-bug:NAME, also on a row of their
own), and the findings by signature with their reproducers.

    scripts/triton-fuzz-summary.py CAMPAIGN_DIR

For `--target triton` the reproducer of a finding is its standalone Triton
script (CAMPAIGN_DIR/triton/seedS_kernelI_PROPERTY.py); for every target its
conformance case (CAMPAIGN_DIR/cases/...). Exit status 0 (2 when the folder has
no campaign.json).
"""
import collections
import json
import os
import sys


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: triton-fuzz-summary.py CAMPAIGN_DIR\n")
        return 2
    d = argv[1]
    path = os.path.join(d, "campaign.json")
    if not os.path.exists(path):
        sys.stderr.write("triton-fuzz-summary: %s is missing (not a finished campaign)\n" % path)
        return 2
    s = json.load(open(path))
    el = s.get("elapsed_seconds") or 0
    k = s["kernels"]
    print("| campaign | %s (%s), seed %s |" % (s["mode"], s.get("device", ""), s["seed"]))
    print("|---|---|")
    print("| kernels | %d in %.0f s: %.1f kernels/s |" % (k, el, k / el if el else 0))
    print("| passed / discarded / failed | %d / %d / %d (generator bugs %d) |" % (
        s["passed"], s["discards"], s["failures"], s["generator_bugs"]))
    stages = s.get("stage_seconds", {})
    total = sum(stages.values()) or 1
    print("| stages (ms per kernel) | %s |" % ", ".join(
        "%s %.1f" % (n, 1000 * v / max(k, 1))
        for n, v in sorted(stages.items(), key=lambda x: -x[1]) if v / total >= 0.005))
    print("| discards | %s |" % ", ".join(
        "%s %d" % kv for kv in sorted(s.get("discards_by_kind", {}).items(), key=lambda x: -x[1])))
    known = {kind.split(":", 1)[1]: n for kind, n in s.get("discards_by_kind", {}).items()
             if kind.startswith("triton-known-bug:")}
    if known:  # compile failures that are known bugs of the Triton in use (docs/triton.md)
        print("| known Triton bugs set aside | %s |" % ", ".join(
            "%s %d" % kv for kv in sorted(known.items(), key=lambda x: -x[1])))
    print("| failures by property | %s |" % (", ".join(
        "%s %d" % kv for kv in sorted(s.get("failures_by_property", {}).items())) or "none"))
    by_sig = collections.OrderedDict()
    for f in s.get("findings", []):
        by_sig.setdefault(f["signature"], []).append(f)
    print("\nfindings by signature: %d" % len(by_sig))
    if by_sig:
        print("\n| signature | kernels | first | reproducer | culprit |")
        print("|---|---|---|---|---|")
    for sig, fs in by_sig.items():
        f = fs[0]
        script = os.path.join(d, "triton", "seed%d_kernel%d_%s.py" % (
            f["campaign_seed"], f["index"], f["property"]))
        repro = script if os.path.exists(script) else (
            os.path.join(d, f["case_file"]) if f.get("case_file") else "-")
        culprit = (f.get("culprit") or "").split("; standalone Triton script:")[0]
        print("| `%s` | %d | kernel %d: %s | %s | %s |" % (
            sig, len(fs), f["index"], f["message"].splitlines()[0][:160] if f["message"] else "",
            repro, culprit[:300]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
