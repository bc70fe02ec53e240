#!/usr/bin/env python3
"""Regenerates the FileCheck lines of lit tests from the current output.

    scripts/update-checks.py tests/lit/lower/vector_add.tc [more files...]

For every `// RUN: %tritonc ... | FileCheck %s [--check-prefix=P]` line, runs the
command, deletes the old `// P:`/`// P-NEXT:`/`// P-EMPTY:` lines and writes the
output as `// P:` + `// P-NEXT:` lines where the old block started (or at the
end). Review the result with `git diff` before committing: the tool records what
the compiler does now, and only a reader can tell whether that is right.
"""
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD_DIR", os.path.join(ROOT, "build"))


def substitute(cmd, path):
    cmd = cmd.replace("%tritonc", os.path.join(BUILD, "bin", "tritonc"))
    cmd = cmd.replace("%examples", os.path.join(ROOT, "examples"))
    return cmd.replace("%s", path)


def escape(line):
    # FileCheck treats {{ and [[ specially; wrap them in a regex literal.
    line = line.rstrip()
    return re.sub(r"(\{\{|\[\[)", lambda m: "{{" + re.escape(m.group(1)) + "}}", line)


def update(path):
    with open(path) as f:
        lines = f.read().split("\n")
    runs = [l.split("RUN:", 1)[1].strip() for l in lines if "RUN:" in l]
    for run in runs:
        if "FileCheck" not in run or "%tritonc" not in run:
            continue
        producer, checker = run.rsplit("|", 1)
        m = re.search(r"--check-prefix[= ](\w+)", checker)
        prefix = m.group(1) if m else "CHECK"
        out = subprocess.run(substitute(producer, path), shell=True, capture_output=True,
                             text=True).stdout
        pat = re.compile(r"^\s*//\s*" + prefix + r"(-NEXT|-EMPTY)?:")
        first = next((i for i, l in enumerate(lines) if pat.match(l)), None)
        lines = [l for l in lines if not pat.match(l)]
        block = []
        for i, o in enumerate(out.rstrip("\n").split("\n")):
            if not o.strip():
                block.append("// %s-EMPTY:" % prefix)
            else:
                block.append("// %s%s: %s" % (prefix, "" if i == 0 else "-NEXT", escape(o)))
        if first is None:
            lines = lines + [""] + block
        else:
            lines = lines[:first] + block + lines[first:]
    with open(path, "w") as f:
        f.write("\n".join(lines).rstrip("\n") + "\n")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        update(p)
