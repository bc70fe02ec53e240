#!/usr/bin/env python3
"""Runs the commands of the README and the docs, as written, twice in a row.

Every fenced block tagged `sh` in README.md, docs/*.md, conformance/*.md and
deploy/README.md is a list of commands a user may type at the root of a fresh
clone after `scripts/setup.sh`. This script copies the repository's files (what
git tracks, plus untracked files it does not ignore) into a scratch directory,
links the build directory in as `build/`, and runs every command there with
bash, one at a time, in the order of the files; then it runs the whole set a
second time in the same directory, so a command that refuses to overwrite its
own output, or depends on a file that no earlier command made, fails.

What is not run, always with a line that says why:
- a command that needs a CUDA device (it runs `triton-run`, `--backend gpu`,
  `--devices`, or `tools/gpu-check.sh`) when `build/bin/triton-run
  --check-device` finds none;
- a block preceded by the comment `<!-- doc-check: skip: REASON -->` (set-up
  that installs packages, cluster jobs, eight-hour campaigns).

A block without a language tag whose lines start like commands (`build/bin/`,
`scripts/`, a tool's name, ...) is an error: tag it `sh` (checked) or `text`.

Usage: scripts/check-doc-commands.py [--build DIR] [--source DIR] [--rounds N]
       [--timeout S] [--list]
Exit status: 0 when every command that ran succeeded, 1 otherwise.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

DOC_GLOBS = ["README.md", "docs", "conformance", "deploy"]
COMMAND_START = re.compile(
    r"^(build/bin/|scripts/|tools/|deploy/|\./|python3 |cmake |ctest |ninja |"
    r"triton-interp|triton-run|triton-conformance|triton-fuzz|tritonc)\b")
GPU = re.compile(r"\btriton-run\b|--backend gpu\b|--devices\b|gpu-check\.sh")
SKIP = re.compile(r"<!--\s*doc-check:\s*skip:\s*(.*?)\s*-->")


class Block:
    def __init__(self, path, line, tag, lines, skip):
        self.path, self.line, self.tag, self.lines, self.skip = path, line, tag, lines, skip

    def commands(self):
        """The block's commands: continuation lines joined, comments dropped."""
        out, cur, start = [], "", None
        for i, raw in enumerate(self.lines):
            text = raw.rstrip()
            if not cur and (not text.strip() or text.lstrip().startswith("#")):
                continue
            if start is None:
                start = self.line + 1 + i
            if text.endswith("\\"):
                cur += text[:-1] + " "
                continue
            out.append((start, cur + text))
            cur, start = "", None
        if cur:
            out.append((start, cur))
        return out


def doc_files(root):
    files = []
    for g in DOC_GLOBS:
        p = os.path.join(root, g)
        if os.path.isfile(p):
            files.append(g)
        elif os.path.isdir(p):
            for name in sorted(os.listdir(p)):
                if name.endswith(".md"):
                    files.append(os.path.join(g, name))
    return files


def parse_blocks(root, rel):
    blocks, lines = [], open(os.path.join(root, rel), encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(```+)(.*)$", lines[i])
        if not m:
            i += 1
            continue
        fence, tag = m.group(2), m.group(3).strip()
        skip = None
        for j in range(i - 1, max(i - 3, -1), -1):  # a comment within two lines above
            s = SKIP.search(lines[j])
            if s:
                skip = s.group(1)
                break
        body, k = [], i + 1
        while k < len(lines) and not lines[k].strip().startswith(fence):
            body.append(lines[k][len(m.group(1)):] if lines[k].startswith(m.group(1)) else lines[k])
            k += 1
        blocks.append(Block(rel, i + 1, tag, body, skip))
        i = k + 1
    return blocks


def copy_tree(source, dest):
    """The files of a fresh clone: tracked, plus untracked ones git does not ignore."""
    listed = subprocess.run(["git", "-C", source, "ls-files", "-z", "-co", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = os.path.join(source, rel)
        if not os.path.isfile(src) or os.path.islink(src):
            continue
        dst = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)


def have_device(build):
    exe = os.path.join(build, "bin", "triton-run")
    try:
        return subprocess.run([exe, "--check-device"], capture_output=True,
                              timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", default=os.path.dirname(here))
    ap.add_argument("--build", default=None, help="the build directory (default: SOURCE/build)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120, help="seconds per command")
    ap.add_argument("--list", action="store_true", help="list the commands, run nothing")
    a = ap.parse_args()
    source = os.path.abspath(a.source)
    build = os.path.abspath(a.build or os.path.join(source, "build"))

    problems, plan = [], []
    for rel in doc_files(source):
        for b in parse_blocks(source, rel):
            if b.tag in ("sh", "bash", "shell"):
                plan.append(b)
            elif not b.tag and any(COMMAND_START.match(l.strip()) for l in b.lines):
                problems.append(f"{b.path}:{b.line}: a block of commands without a tag: "
                                "tag it ```sh (it is then run by this check) or ```text")
    for p in problems:
        print(f"error: {p}")
    device = False if a.list else have_device(build)
    if a.list:
        for b in plan:
            for line, cmd in b.commands():
                why = b.skip or ("needs a CUDA device" if GPU.search(cmd) else "")
                print(f"{b.path}:{line}: {cmd}" + (f"   [skipped: {why}]" if why else ""))
        return 1 if problems else 0

    failed, ran, skipped = 0, 0, 0
    with tempfile.TemporaryDirectory(prefix="tc-doc-commands-") as scratch:
        copy_tree(source, scratch)
        os.symlink(build, os.path.join(scratch, "build"))
        env = dict(os.environ, TC_DOC_CHECK="1")
        for rnd in range(1, a.rounds + 1):
            print(f"--- round {rnd} of {a.rounds} in {scratch}")
            for b in plan:
                for line, cmd in b.commands():
                    where = f"{b.path}:{line}"
                    if b.skip:
                        skipped += 1
                        print(f"skipped ({b.skip}): {where}: {cmd}")
                        continue
                    if GPU.search(cmd) and not device:
                        skipped += 1
                        print(f"skipped (needs a CUDA device; none here): {where}: {cmd}")
                        continue
                    t0 = time.time()
                    try:
                        r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=scratch,
                                           env=env, capture_output=True, text=True,
                                           timeout=a.timeout)
                        rc, out = r.returncode, r.stdout + r.stderr
                    except subprocess.TimeoutExpired as e:
                        rc, out = "timeout", (e.stdout or b"").decode(errors="replace")
                    ran += 1
                    dt = time.time() - t0
                    if rc == 0:
                        print(f"ok ({dt:.1f} s): {where}: {cmd}")
                    else:
                        failed += 1
                        tail = "\n".join(out.rstrip().split("\n")[-15:])
                        print(f"FAILED (exit {rc}, round {rnd}): {where}: {cmd}\n{tail}")
    print(f"{ran} commands run, {ran - failed} passed, {failed} failed, {skipped} skipped; "
          f"{len(problems)} untagged command blocks")
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())
