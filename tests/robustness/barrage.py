#!/usr/bin/env python3
"""The robustness barrage: a fixed, seeded set of hostile inputs for the tools.

    barrage.py --bin DIR [--src DIR] [--seed 18] [--jobs 2] [--sanitized] [--list]

Every input runs in a fresh folder holding its input files, under a wall-clock
timeout, a CPU-time limit and a memory cap (RLIMIT_AS; under ASan, which
reserves a huge address space, ASan's own allocation and RSS limits instead).
An input fails when the tool
  - is killed by a signal or exits with a code outside 0-4 ("crash"),
  - prints a sanitizer report ("sanitizer"),
  - runs past its timeout ("hang"),
  - changes, removes or replaces one of its input files ("changed input"),
  - or, where the input names one, exits with another code than expected.
The categories follow docs/limits.md; the summary gives counts and verdicts
per category. Exit status 0 when every input passed.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import resource
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time

ALLOWED_EXIT = {0, 1, 2, 3, 4}
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "AddressSanitizer:DEADLYSIGNAL", "SUMMARY: UndefinedBehaviorSanitizer",
                     "SUMMARY: AddressSanitizer", "terminate called", "Assertion `")
FIFO, DIR = object(), object()  # special "files" of a case

KERNEL_PID = b"__global__ void k(int *c) { *c = get_program_id(0); }\n"
KERNEL_COPY = (b"__global__ void k(int *x, int *y) {\n  int i[4] = 0 ... 4;\n"
               b"  *(y + i) = *(x + i) * 2;\n}\n")


def suite(cases=None, source=KERNEL_COPY.decode(), grid=(1,), extra_arg=None, source_file=None):
    arg_x = extra_arg or {"name": "x", "dtype": "int32", "shape": [4], "data": [1, 2, 3, 4]}
    src = {"source_file": source_file} if source_file is not None else {"source": source}
    c = {"name": "double", **src, "grid": list(grid),
         "args": [arg_x, {"name": "y", "dtype": "int32", "shape": [4], "fill": 0}],
         "expect": {"outputs": {"y": {"data": [2, 4, 6, 8]}}}}
    return json.dumps({"format": "triton-conformance/1", "suite": "b",
                       "cases": cases if cases is not None else [c]}).encode()


def npy(dtype=b"<i4", shape=(4,), data=None):
    header = b"{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        dtype, b"".join(b"%d, " % d for d in shape))
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    count = 1
    for d in shape:
        count *= d
    body = data if data is not None else struct.pack("<%di" % count, *range(count))
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + body


def chain(n, reverse=False, deep=0, arg="x"):
    def call(i, a):
        inner = "f%d(%s)" % (i, a)
        return "(%s - %s + " % (a, a) * deep + inner + ")" * deep
    fs = ["int f0(int x) { return x + 1; }"]
    fs += ["int f%d(int x) { return %s + 1; }" % (i, call(i - 1, "x")) for i in range(1, n)]
    if reverse:
        fs.reverse()
    fs.append("__global__ void k(int *c) { *c = %s; }" % call(n - 1, "0"))
    return "\n".join(fs).encode()


class Case:
    def __init__(self, category, name, argv, files=None, timeout=30, expect=None, outputs=()):
        self.category, self.name, self.argv = category, name, argv
        self.files = files or {}
        self.timeout, self.expect, self.outputs = timeout, expect, set(outputs)


def build_cases(rng, src):
    cases = []

    def add(cat, name, argv, **kw):
        cases.append(Case(cat, name, argv, **kw))

    # 1. Recursion depth: helper chains, nesting in every phase.
    for n, rev, deep in [(63, False, 0), (64, False, 0), (500, False, 0), (4000, False, 0),
                         (4000, True, 0), (63, False, 100), (63, True, 100), (200, False, 30)]:
        f = {"k.tc": chain(n, rev, deep)}
        # Deep expressions at every call may reach the stack budget first (2 MiB;
        # ASan's frames are larger): a diagnostic either way.
        want = {2} if n > 63 else {0, 2} if deep else {0}
        add("1 recursion", "tritonc chain %d%s%s" % (n, " rev" if rev else "",
                                                     " deep" if deep else ""),
            ["tritonc", "k.tc"], files=f, expect=want)
        add("1 recursion", "interp chain %d%s%s" % (n, " rev" if rev else "",
                                                    " deep" if deep else ""),
            ["triton-interp", "k.tc", "--grid", "1", "--arg", "c=zeros:i32[1]"], files=f,
            expect=want)
    for depth in [1000, 1100, 100000]:
        add("1 recursion", "parens %d" % depth, ["tritonc", "k.tc"],
            files={"k.tc": b"__global__ void k(int *c) { *c = " + b"(" * depth + b"1" +
                   b")" * depth + b"; }\n"}, expect={0, 2})
        add("1 recursion", "blocks %d" % depth, ["tritonc", "k.tc"],
            files={"k.tc": b"__global__ void k(int *c) { " + b"{" * depth + b"*c = 1;" +
                   b"}" * depth + b" }\n"}, expect={0, 2})
        add("1 recursion", "unary %d" % depth, ["tritonc", "k.tc"],
            files={"k.tc": b"__global__ void k(int *c) { *c = " + b"-" * depth + b"1; }\n"},
            expect={0, 2})
        add("1 recursion", "ifs %d" % depth, ["tritonc", "k.tc"],
            files={"k.tc": b"__global__ void k(int *c) { " + b"if (1) " * depth + b"*c = 1; }\n"},
            expect={0, 2})
        add("1 recursion", "pp #if %d" % depth, ["tritonc", "k.tc", "-E"],
            files={"k.tc": b"#if " + b"(" * depth + b"1" + b")" * depth + b"\n#endif\n"},
            expect={0, 2})
        add("1 recursion", "nested #if %d" % depth, ["tritonc", "k.tc", "-E"],
            files={"k.tc": b"#if 1\n" * depth + b"#endif\n" * depth}, expect={0, 2})
    add("1 recursion", "macro chain", ["tritonc", "k.tc", "-E"],
        files={"k.tc": b"".join(b"#define M%d M%d\n" % (i, i + 1) for i in range(3000)) +
               b"M0\n"}, expect={0, 2})
    add("1 recursion", "self include", ["tritonc", "k.tc"],
        files={"k.tc": b'#include "k.tc"\n'}, expect={2})
    add("1 recursion", "mutual include", ["tritonc", "a.h"],
        files={"a.h": b'#include "b.h"\n', "b.h": b'#include "a.h"\n'}, expect={2})
    add("1 recursion", "tir regions", ["tritonc", "k.tir"],
        files={"k.tir": b"kernel @k() {\n" + b"scf.if %0 {\n" * 5000 + b"}\n" * 5000 + b"}\n"},
        expect={2})

    # 2. Bytes that are not UTF-8 in messages that go into JSON reports.
    bad_bytes = [b"\xff", b"\xc3", b"\xe9", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf"]
    for i, bb in enumerate(bad_bytes):
        grid_case = suite().replace(b'"grid": [1]', b'"grid": ["' + bb + b'"]')
        name_case = suite().replace(b'"suite": "b"', b'"suite": "b' + bb + b'"')
        src_case = suite().replace(b"*(x + i) * 2", b"*(x + i) * 2 " + bb)
        for label, data in [("grid", grid_case), ("suite name", name_case), ("source", src_case)]:
            add("2 utf-8", "run --no-isolation %s %r" % (label, bb),
                ["triton-conformance", "run", "-q", "s.json", "--no-isolation", "--out", "r.json",
                 "--md", "r.md"], files={"s.json": data}, expect={1}, outputs={"r.json", "r.md"})
            add("2 utf-8", "run %s %r" % (label, bb),
                ["triton-conformance", "run", "-q", "s.json", "-j", "1", "--out", "r.json"],
                files={"s.json": data}, expect={1}, outputs={"r.json"})
        add("2 utf-8", "source_file bytes %r" % bb,
            ["triton-conformance", "run", "-q", "s.json", "--no-isolation", "--out", "r.json"],
            files={"s.json": suite(source_file="k.tc"), "k.tc": KERNEL_COPY + bb}, expect={1},
            outputs={"r.json"})
        add("2 utf-8", "launch bytes %r" % bb, ["triton-interp", "--launch", "s.json"],
            files={"s.json": grid_case}, expect={1, 3})
        add("2 utf-8", "tritonc source bytes %r" % bb, ["tritonc", "k.tc"],
            files={"k.tc": KERNEL_PID.replace(b"get_program_id", b"get_" + bb)}, expect={2})

    # 3. Files that are not regular files, and unbounded reads, in every input position.
    nonreg = [("/dev/zero", None), ("/dev/urandom", None), ("fifo", FIFO), ("dir", DIR),
              ("/dev/null", None)]
    for path, special in nonreg:
        f = {"k.tc": KERNEL_PID, "s.json": suite(), "r.json": b"{}"}
        if special is not None:
            f[path] = special
        tag = os.path.basename(path)
        add("3 non-regular files", "tritonc " + tag, ["tritonc", path], files=f, expect={2})
        add("3 non-regular files", "tritonc .tir " + tag, ["tritonc", path, "--emit=ir"], files=f,
            expect={2})
        add("3 non-regular files", "interp source " + tag, ["triton-interp", path, "--grid", "1"],
            files=f, expect={3})
        add("3 non-regular files", "interp --arg @" + tag,
            ["triton-interp", "k.tc", "--grid", "1", "--arg", "c=@" + path], files=f, expect={3})
        add("3 non-regular files", "interp --launch " + tag, ["triton-interp", "--launch", path],
            files=f, expect={3})
        add("3 non-regular files", "conformance run " + tag,
            ["triton-conformance", "run", "-q", path, "--no-isolation"], files=f, expect={1, 3})
        add("3 non-regular files", "conformance check " + tag,
            ["triton-conformance", "check", path], files=f, expect={1, 3})
        add("3 non-regular files", "conformance diff " + tag,
            ["triton-conformance", "diff", path, "r.json"], files=f, expect={3})
        add("3 non-regular files", "conformance report " + tag,
            ["triton-conformance", "report", path], files=f, expect={3})
        add("3 non-regular files", "conformance --expectations " + tag,
            ["triton-conformance", "run", "-q", "s.json", "--expectations", path], files=f,
            expect={3})
        add("3 non-regular files", "json source_file " + tag,
            ["triton-conformance", "check", "t.json"],
            files=dict(f, **{"t.json": suite(source_file=path)}),
            expect={1})
        add("3 non-regular files", "json npy " + tag, ["triton-conformance", "check", "t.json"],
            files=dict(f, **{"t.json": suite(extra_arg={"name": "x", "dtype": "int32",
                                                        "shape": [4], "npy": path})}),
            expect={1})
        add("3 non-regular files", "#include " + tag, ["tritonc", "i.tc"],
            files=dict(f, **{"i.tc": b'#include "' + path.encode() + b'"\n' + KERNEL_PID}),
            expect={2})
        add("3 non-regular files", "fuzz merge " + tag, ["triton-fuzz", "merge", path,
                                                         "--out", "m.html"], files=f, expect={3})
        add("3 non-regular files", "fuzz --known " + tag,
            ["triton-fuzz", "merge", "nothing", "--known", path, "--out", "m.html"], files=f,
            expect={3})
    for tool in (["tritonc", "k.tc", "-o", "fifo"],
                 ["triton-interp", "k.tc", "--grid", "1", "--arg", "c=zeros:i32[1]", "--out",
                  "c=fifo", "--force"],
                 ["triton-conformance", "run", "-q", "s.json", "--out", "fifo", "--force"]):
        add("3 non-regular files", "output to a FIFO: " + tool[0], tool,
            files={"k.tc": KERNEL_PID, "s.json": suite(), "fifo": FIFO}, expect={3})
    big = b"// " + b"x" * (4 << 20) + b"\n"
    add("3 non-regular files", "source over 4 MiB", ["tritonc", "k.tc"], files={"k.tc": big},
        expect={2})
    add("3 non-regular files", "include over 4 MiB", ["tritonc", "k.tc"],
        files={"k.tc": b'#include "b.h"\n', "b.h": big}, expect={2})
    add("3 non-regular files", "npy header claims 2^40 elements",
        ["triton-interp", "k.tc", "--grid", "1", "--arg", "c=@a.npy"],
        files={"k.tc": KERNEL_PID, "a.npy": npy(shape=(1 << 40,), data=b"")}, expect={3})

    # 4. Time limits over many short programs (KERNEL_PID's programs all store
    # c[0]: --no-race-check, so that the limit is what stops them).
    for extra in ([], ["--threads", "2"]):
        add("4 timeouts", "grid 2^31-1 --timeout 1 %s" % " ".join(extra),
            ["triton-interp", "k.tc", "--grid", "2147483647", "--arg", "c=zeros:i32[1]",
             "--timeout", "1", "--no-race-check"] + extra, files={"k.tc": KERNEL_PID}, timeout=30,
            expect={1})
    add("4 timeouts", "grid 65535,65535 --timeout 1",
        ["triton-interp", "k.tc", "--grid", "65535,65535", "--arg", "c=zeros:i32[1]",
         "--timeout", "1", "--no-race-check"], files={"k.tc": KERNEL_PID}, timeout=30, expect={1})
    add("4 timeouts", "--launch grid 2^31-1 --timeout 1",
        ["triton-interp", "--launch", "s.json", "--timeout", "1"],
        files={"s.json": suite(grid=(2147483647,))}, timeout=30, expect={1})
    add("4 timeouts", "conformance run grid 2^31-1 --timeout 2",
        ["triton-conformance", "run", "-q", "s.json", "--timeout", "2"],
        files={"s.json": suite(grid=(2147483647,))}, timeout=40, expect={1})
    add("4 timeouts", "loop --timeout 1",
        ["triton-interp", "k.tc", "--grid", "1", "--arg", "c=zeros:i32[1]", "--timeout", "1"],
        files={"k.tc": b"__global__ void k(int *c) { int i = 0; while (i >= 0) { i = i * 1; } "
                       b"*c = i; }\n"}, timeout=30, expect={1, 2})

    # 5. Time-limit arithmetic.
    for v in ["1e10", "9.3e9", "1e300", "1.7976931348623157e308", "nan", "-nan", "inf", "-1",
              "-0", "0", "1e-300", "abc", "", "0x10", "1e", "NaN"]:
        ok = v in ("1e10", "9.3e9", "1e300", "1.7976931348623157e308", "-0", "0", "1e-300",
                   "0x10")
        add("5 time arithmetic", "interp --timeout %r" % v,
            ["triton-interp", "k.tc", "--grid", "3", "--arg", "c=zeros:i32[1]", "--timeout", v,
             "--no-race-check"],
            files={"k.tc": KERNEL_PID}, expect={0, 1} if v == "1e-300" else {0} if ok else {3})
        add("5 time arithmetic", "conformance --timeout %r" % v,
            ["triton-conformance", "run", "-q", "s.json", "--timeout", v, "-j", "1"],
            files={"s.json": suite()}, expect={0, 1} if v == "1e-300" else {0} if ok else {3})
    for v in ["nan", "inf", "-1s", "1e300h", "5x", "", "1e-9"]:
        add("5 time arithmetic", "fuzz --time %r" % v,
            ["triton-fuzz", "--cpu-only", "--time", v, "--max-kernels", "2", "--out", "f"],
            expect={0, 3}, outputs={"f"})

    # 6. Outputs that are inputs, existing outputs.
    inc = {"k.tc": b'#include "inc.h"\n__global__ void k(int *c) { *c = ONE; }\n',
           "inc.h": b"#define ONE 1\n", "old.txt": b"old\n", "s.json": suite(),
           "bad.tc": b"__global__ void k(int *c) { *c = nope; }\n", "a.npy": npy(), "r.md": b"x"}
    for argv, want in [
            (["tritonc", "k.tc", "-o", "inc.h"], {3}), (["tritonc", "k.tc", "-o", "k.tc"], {3}),
            (["tritonc", "k.tc", "-o", "./inc.h"], {3}), (["tritonc", "bad.tc", "-o", "old.txt"], {2}),
            (["tritonc", "k.tc", "-o", "k.tc", "-E"], {3}),
            (["triton-interp", "k.tc", "--grid", "1", "--arg", "c=@a.npy", "--out", "c=a.npy",
              "--force"], {3}),
            (["triton-interp", "k.tc", "--grid", "1", "--arg", "c=zeros:i32[1]", "--out",
              "c=k.tc", "--force"], {3}),
            (["triton-interp", "k.tc", "--grid", "1", "--arg", "c=zeros:i32[1]", "--out",
              "c=old.txt"], {3}),
            (["triton-conformance", "run", "-q", "s.json", "--out", "s.json", "--force"], {3}),
            (["triton-conformance", "run", "-q", ".", "--html", "./s.json", "--force"], {3}),
            (["triton-conformance", "run", "-q", "s.json", "--md", "r.md"], {3}),
            (["triton-conformance", "run", "-q", "s.json", "--out", "x.json", "--md", "x.json"],
             {3}),
            (["triton-conformance", "report", "s.json", "--out", "s.json", "--force"], {3}),
            (["triton-fuzz", "merge", ".", "--out", "r.html"], {3})]:
        add("6 overwrite", " ".join(argv), argv, files=inc, expect=want,
            outputs={"x.json"} if "x.json" in argv else ())
    add("6 overwrite", "fuzz --out DIR with a report.md",
        ["triton-fuzz", "--cpu-only", "--time", "1s", "--max-kernels", "2", "--out", "d"],
        files={"d/report.md": b"mine\n", "d/report.html": b"mine\n", "d/campaign.json": b"{}"},
        expect={3})

    # 7. Variant and memory explosions.
    ten = "[" + ",".join(str(i) for i in range(10)) + "]"
    many = sum((["-D%s=%s" % (c, ten)] for c in "ABCDEFGH"), [])
    add("7 memory", "tritonc 10^8 variants", ["tritonc", "k.tc"] + many,
        files={"k.tc": KERNEL_PID}, expect={3})
    add("7 memory", "interp 10^8 variants",
        ["triton-interp", "k.tc", "--grid", "1", "--arg", "c=zeros:i32[1]"] + many,
        files={"k.tc": KERNEL_PID}, expect={3})
    add("7 memory", "interp one list of 5000",
        ["triton-interp", "k.tc", "--grid", "1", "--arg", "c=zeros:i32[1]",
         "-DV=[" + ",".join(str(i) for i in range(5000)) + "]"], files={"k.tc": KERNEL_PID},
        expect={3})
    five = b"__global__ void k(int *c, int *d, int *e, int *f, int *g) { *c = 1; }\n"
    add("7 memory", "five 4 GiB buffers",
        ["triton-interp", "k.tc", "--grid", "1"] +
        sum((["--arg", "%s=zeros:i32[1073741824]" % n] for n in "cdefg"), []),
        files={"k.tc": five}, expect={3})
    # Each variant is compared with the first and released: two variants' buffers
    # at a time (256 MiB here, not 2 GiB).
    add("7 memory", "32 variants of 64 MiB",
        ["triton-interp", "k.tc", "--grid", "1", "--arg", "c=zeros:i32[16777216]",
         "-DV=[" + ",".join(str(i) for i in range(32)) + "]"], files={"k.tc": KERNEL_PID},
        expect={0}, timeout=240)
    add("7 memory", "8 GiB f64 buffer", ["triton-interp", "k.tc", "--grid", "1", "--arg",
                                         "c=zeros:f64[1073741824]"],
        files={"k.tc": b"__global__ void k(double *c) { *c = 1.0; }\n"}, expect={3})
    add("7 memory", "json f64[2^30]", ["triton-conformance", "check", "s.json"],
        files={"s.json": suite(extra_arg={"name": "x", "dtype": "float64",
                                          "shape": [1 << 30], "fill": 0})}, expect={1})
    add("7 memory", "json 5000 variants", ["triton-conformance", "check", "s.json"],
        files={"s.json": suite().replace(b'"grid"', b'"defines": {"V": [' +
                                         b",".join(b"%d" % i for i in range(5000)) +
                                         b'], "W": [1, 2]}, "grid"')}, expect={1})
    big_tiles = (b"__global__ void k(double *c) {\n  int i[1048576] = 0 ... 1048576;\n"
                 b"  double x[1048576] = i;\n  double y[1048576] = x * 2.0 + x;\n"
                 b"  bool m[1048576] = i < 1;\n  *?(m)(c + get_program_id(0) + i) = y + 1.0;\n}\n")
    add("7 memory", "1024 threads of 2^20-element f64 tiles",
        ["triton-interp", "k.tc", "--grid", "16", "--threads", "1024", "--arg",
         "c=zeros:f64[16]"], files={"k.tc": big_tiles}, expect={0}, timeout=120)
    add("7 memory", "tile of 2^21 elements", ["tritonc", "k.tc"],
        files={"k.tc": b"__global__ void k(int *c) { int i[2097152] = 0 ... 2097152; *c = 1; }\n"},
        expect={2})

    # 8. Write failures.
    w = {"k.tc": KERNEL_PID, "s.json": suite(), "adir": DIR}
    for argv in (["tritonc", "k.tc", "-o", "/dev/full"], ["tritonc", "k.tc", "-o", "adir"],
                 ["tritonc", "k.tc", "-o", "/proc/nope/x"],
                 ["triton-interp", "k.tc", "--grid", "1", "--arg", "c=zeros:i32[1]", "--out",
                  "c=/dev/full", "--force"],
                 ["triton-interp", "k.tc", "--grid", "1", "--arg", "c=zeros:i32[1]", "--out",
                  "c=/proc/nope/x.npy"],
                 ["triton-interp", "k.tc", "--grid", "1", "--arg", "c=zeros:i32[1]", "--out",
                  "c=adir"],
                 ["triton-conformance", "run", "-q", "s.json", "--out", "/dev/full"],
                 ["triton-conformance", "run", "-q", "s.json", "--html", "/proc/nope/r.html"],
                 ["triton-conformance", "run", "-q", "s.json", "--md", "adir"],
                 ["triton-fuzz", "merge", ".", "--out", "/proc/nope/m.html"]):
        add("8 write failures", " ".join(argv), argv, files=w, expect={3})
    add("8 write failures", "tritonc > /dev/full", ["sh", "-c", "exec tritonc k.tc > /dev/full"],
        files=w, expect={3})

    # 9. Bad values.
    base = ["triton-interp", "k.tc", "--grid", "1", "--arg", "c=zeros:i32[1]"]
    hostile = ["-1", "18446744073709551616", "1e400", "nan", "", "0x", "%s%n", "9" * 400,
               "\u00e9", "1,2,3,4", "[", "]", "-", "--", "1e", " 1", "1 "]
    for flag in ["--max-steps", "--seed", "--threads", "--grid", "--program", "--print",
                 "--kernel", "--bf16-descr", "--case"]:
        for v in rng.sample(hostile, 6):
            argv = [a for a in base if not (flag == "--grid" and a in ("--grid", "1"))]
            add("9 bad values", "interp %s %r" % (flag, v), argv + [flag, v],
                files={"k.tc": KERNEL_PID})
    for spec in ["c=zeros:i32[-1]", "c=zeros:i32[N]", "c=zeros:q32[1]", "c=@", "c=",
                 "=zeros:i32[1]", "c=randint:5:1:i32[4]", "c=full:nan:i32[1]",
                 "c=zeros:i32[99999999999999999999]",
                 "c=zeros:i32[1]:seed=-1", "c=rand:f32[4]", "c=1"]:
        add("9 bad values", "interp --arg %r" % spec,
            ["triton-interp", "k.tc", "--grid", "1", "--arg", spec], files={"k.tc": KERNEL_PID},
            expect={3})
    for argv in (["triton-interp", "k.tc", "--grid", "1", "--arg", "c=zeros:i32[1]", "--out",
                  "c=x.npy", "--out", "c=./x.npy"],
                 ["triton-interp", "--launch", "s.json", "--kernel", "k"],
                 ["triton-interp", "--launch", "s.json", "-U", "X"],
                 ["triton-interp", "--launch", "s.json", "-I", "."],
                 ["triton-conformance", "run", "empty"], ["triton-conformance", "check", "empty"],
                 ["triton-conformance", "check-ptx", "empty"],
                 ["triton-fuzz", "--cpu-only", "--time", "nan", "--out", "f"],
                 ["triton-fuzz", "--cpu-only", "--seed", "-1", "--out", "f"],
                 ["triton-fuzz", "--cpu-only", "--shard", "3/0", "--out", "f"],
                 ["triton-fuzz", "--cpu-only", "--shard", "-1/2", "--out", "f"],
                 ["tritonc", "k.tc", "--emit=bogus"], ["tritonc", "k.tc", "-D"],
                 ["tritonc", "k.tc", "-D=1"], ["tritonc", "k.tc", "-DX=[1,"],
                 ["tritonc", "k.tc", "--passes=nope"], ["tritonc", "k.tc", "--kernel", "nope"]):
        add("9 bad values", " ".join(argv), argv,
            files={"k.tc": KERNEL_PID, "s.json": suite(), "empty": DIR}, expect={2, 3})

    # 10. Messages for odd sources.
    add("10 messages", "empty source", ["triton-interp", "k.tc", "--grid", "1"],
        files={"k.tc": b""}, expect={2})
    add("10 messages", "empty case source", ["triton-interp", "--launch", "s.json"],
        files={"s.json": suite(source="")}, expect={2})
    # A source with no function at all is an error that says so (docs/language.md).
    add("10 messages", "only comments", ["tritonc", "k.tc"], files={"k.tc": b"// nothing\n"},
        expect={2})
    add("10 messages", "NUL bytes", ["tritonc", "k.tc"], files={"k.tc": b"\0" * 100},
        expect={2})

    # 11. Limits that must fire early.
    stmts = b"".join(b"  *c = %d;\n" % i for i in range(300000))
    add("11 early limits", "300k statements (3.4 MB)", ["tritonc", "k.tc"],
        files={"k.tc": b"__global__ void k(int *c) {\n" + stmts + b"}\n"}, expect={0, 2},
        timeout=120)
    add("11 early limits", "unrolled loop beyond the op limit", ["tritonc", "k.tc"],
        files={"k.tc": b"#define R(x) x x x x x x x x\n__global__ void k(int *c) {\n"
                       b"R(R(R(R(R(R(R(*c = 1;)))))))\n}\n"}, expect={0, 2}, timeout=120)

    # 12. Seeded mutations of sources, suites and .npy files.
    seeds = []
    for d in ("examples",):
        for name in sorted(os.listdir(os.path.join(src, d))):
            if name.endswith(".tc"):
                with open(os.path.join(src, d, name), "rb") as fh:
                    seeds.append(fh.read())
    interesting = [b"0", b"-1", b"2147483647", b"4294967296", b"1048576", b"1e308", b"nan",
                   b"\xff", b"(", b"{", b"[", b"#include \"k.tc\"\n", b"#define", b"\"", b"'",
                   b"..."]

    def mutate(data, n):
        data = bytearray(data)
        for _ in range(n):
            op = rng.randrange(5)
            pos = rng.randrange(len(data) + 1)
            if op == 0 and data:
                del data[pos:pos + rng.randrange(1, 16)]
            elif op == 1:
                data[pos:pos] = rng.choice(interesting)
            elif op == 2 and data:
                data[min(pos, len(data) - 1)] = rng.randrange(256)
            elif op == 3 and data:
                a = rng.randrange(len(data))
                data[pos:pos] = data[a:a + rng.randrange(1, 64)]
            else:
                data = data[:pos]
        return bytes(data)

    for i in range(40):
        text = mutate(rng.choice(seeds), rng.randrange(1, 6))
        defines = ["-DSIZE=64", "-DTYPE=float", "-DTM=32", "-DTN=32", "-DTK=16",
                   "-DBLOCK=64", "-DN=64", "-DM=64"]
        add("12 mutations", "tritonc mutant %d" % i, ["tritonc", "k.tc"] + defines,
            files={"k.tc": text}, expect={0, 2})
        add("12 mutations", "interp mutant %d" % i,
            ["triton-interp", "k.tc", "--grid", "2"] + defines +
            ["--arg", "N=100", "--arg", "a=rand:f32[128]", "--arg", "b=rand:f32[128]",
             "--arg", "c=zeros:f32[128]", "--timeout", "5", "--max-steps", "1000000"],
            files={"k.tc": text}, expect={0, 1, 2, 3}, timeout=40)
    base_suite = suite()
    for i in range(40):
        text = mutate(base_suite, rng.randrange(1, 4))
        add("12 mutations", "suite mutant %d" % i,
            ["triton-conformance", "run", "-q", "s.json", "--no-isolation", "--timeout", "5",
             "--out", "r.json"], files={"s.json": text}, expect={0, 1, 3}, outputs={"r.json"})
    base_npy = npy()
    for i in range(30):
        text = mutate(base_npy, rng.randrange(1, 4))
        add("12 mutations", "npy mutant %d" % i,
            ["triton-interp", "k.tc", "--grid", "1", "--arg", "c=@a.npy", "--print", "c"],
            files={"k.tc": KERNEL_PID, "a.npy": text}, expect={0, 3})
    return cases


def checksums(folder):
    sums = {}
    for root, dirs, files in os.walk(folder):
        for name in files:
            p = os.path.join(root, name)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as fh:
                    sums[os.path.relpath(p, folder)] = hashlib.sha256(fh.read()).hexdigest()
            else:
                sums[os.path.relpath(p, folder)] = "mode %o" % stat.S_IFMT(st.st_mode)
        for name in dirs:
            sums[os.path.relpath(os.path.join(root, name), folder) + "/"] = "dir"
    return sums


def run_case(case, args, workroot, index):
    folder = os.path.join(workroot, "%03d" % index)
    os.makedirs(folder)
    for name, data in case.files.items():
        p = os.path.join(folder, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if data is FIFO:
            os.mkfifo(p)
        elif data is DIR:
            os.makedirs(p, exist_ok=True)
        else:
            with open(p, "wb") as fh:
                fh.write(data)
    before = checksums(folder)
    env = dict(os.environ)
    env["PATH"] = args.bin + os.pathsep + env.get("PATH", "")
    env["ASAN_OPTIONS"] = ("detect_leaks=%d:allocator_may_return_null=1:"
                           "max_allocation_size_mb=3072:hard_rss_limit_mb=3072:"
                           "malloc_context_size=6:exitcode=86" % (1 if args.leaks else 0))
    env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1:exitcode=87"
    cap = args.memory_mb << 20

    def limits():
        os.setsid()
        resource.setrlimit(resource.RLIMIT_CPU, (case.timeout + 5, case.timeout + 10))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if not args.sanitized:  # ASan reserves terabytes of address space: it caps RSS
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    argv = list(case.argv)
    if argv[0] != "sh" and not os.path.isabs(argv[0]):
        argv[0] = os.path.join(args.bin, argv[0])
    start = time.monotonic()
    verdict, code, out = "ok", None, ""
    try:
        p = subprocess.Popen(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             preexec_fn=limits)
        try:
            raw, _ = p.communicate(timeout=case.timeout)
            code = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            raw, _ = p.communicate()
            verdict = "hang"
        out = raw.decode("utf-8", "replace")
    except OSError as e:
        verdict, out = "crash", "cannot run: %s" % e
    seconds = time.monotonic() - start
    if verdict == "ok":
        if any(m in out for m in SANITIZER_MARKERS) or code in (86, 87):
            verdict = "sanitizer"
        elif code is None or code < 0 or code not in ALLOWED_EXIT:
            verdict = "crash"
        elif case.expect is not None and code not in case.expect:
            verdict = "unexpected exit code"
    after = checksums(folder)
    changed = [n for n, s in before.items()
               if n.rstrip("/") not in case.outputs and after.get(n) != s]
    if verdict == "ok" and changed:
        verdict = "changed input"
        out += "\nchanged or removed: " + ", ".join(sorted(changed))
    return {"category": case.category, "name": case.name, "verdict": verdict, "code": code,
            "seconds": seconds, "output": out[-3000:], "folder": folder,
            "argv": " ".join(case.argv), "expect": sorted(case.expect or [])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="folder of the tools (a sanitizer build's bin/)")
    ap.add_argument("--src", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--sanitized", action="store_true",
                    help="the tools are an ASan build (memory capped by ASan, not RLIMIT_AS)")
    ap.add_argument("--leaks", action="store_true", help="LeakSanitizer on (ASan builds)")
    ap.add_argument("--memory-mb", type=int, default=4096)
    ap.add_argument("--category", help="only categories starting with this")
    ap.add_argument("--keep", action="store_true", help="keep the work folders")
    ap.add_argument("--list", action="store_true", help="list the inputs and exit")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    cases = build_cases(random.Random(args.seed), os.path.abspath(args.src))
    if args.category:
        cases = [c for c in cases if c.category.startswith(args.category)]
    if args.list:
        for c in cases:
            print("%-22s %s" % (c.category, c.name))
        print("%d inputs" % len(cases))
        return 0
    workroot = tempfile.mkdtemp(prefix="tc-barrage-")
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda ic: run_case(ic[1], args, workroot, ic[0]),
                                enumerate(cases)))
    failed = [r for r in results if r["verdict"] != "ok"]
    for r in failed:
        print("FAIL [%s] %s: %s (exit code %s, expected %s, %.1f s)\n  $ %s\n  in %s\n%s\n" % (
            r["category"], r["name"], r["verdict"], r["code"], r["expect"], r["seconds"],
            r["argv"], r["folder"], "\n".join("  | " + l for l in r["output"].splitlines()[-25:])))
    cats = {}
    for r in results:
        c = cats.setdefault(r["category"], {"inputs": 0, "seconds": 0.0})
        c["inputs"] += 1
        c["seconds"] += r["seconds"]
        c[r["verdict"]] = c.get(r["verdict"], 0) + 1
    print("robustness barrage (seed %d, %d inputs, %.0f s wall, %s):" % (
        args.seed, len(results), time.monotonic() - start,
        "ASan+UBSan" if args.sanitized else "no sanitizers"))
    for name in sorted(cats, key=lambda n: int(n.split()[0])):
        c = cats[name]
        verdicts = ", ".join("%s %d" % (k, v) for k, v in sorted(c.items())
                             if k not in ("inputs", "seconds"))
        print("  %-22s %4d inputs  %6.1f s  %s" % (name, c["inputs"], c["seconds"], verdicts))
    print("verdict: %s" % ("PASS" if not failed else "FAIL (%d inputs)" % len(failed)))
    if not failed and not args.keep:
        subprocess.run(["rm", "-rf", workroot])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
