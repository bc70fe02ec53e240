# Triton 3.6 bug: a `while` loop whose condition variable starts as the constant False and
# whose body loads through a pointer tile aborts TritonGPUCoalesce (an out-of-range index into
# a SmallVector) when compiled for the GPU (docs/upstream/triton-coalesce-dead-while.md).
# Needs only triton (no GPU, no torch): compiles offline for sm_90, exits 1 if any fails.
# Triton 3.6.0: `dead_while_load` fails ("PassManager::run failed", the pass
# TritonGPUCoalesce); Triton 3.9.0: all three compile.
import subprocess
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def dead_while_load(X, Y, K):
    p = X + tl.arange(0, 4)
    acc = tl.zeros([4], tl.int64)
    c = False
    i = 0
    while c:  # never entered: c starts False
        acc += tl.load(p + i)
        i += 1
        c = K > 0
    tl.store(Y + tl.arange(0, 4), acc)


@triton.jit
def runtime_false_while_load(X, Y, K):  # the same loop, the start condition not a constant
    p = X + tl.arange(0, 4)
    acc = tl.zeros([4], tl.int64)
    c = K < 0
    i = 0
    while c:
        acc += tl.load(p + i)
        i += 1
        c = K > 0
    tl.store(Y + tl.arange(0, 4), acc)


@triton.jit
def dead_while_no_load(X, Y, K):  # the same dead loop without a load in it
    p = X + tl.arange(0, 4)
    c = False
    while c:
        p += 1
        c = K > 0
    tl.store(p, tl.zeros([4], tl.int64))


KERNELS = {f.__name__: f for f in (dead_while_load, runtime_false_while_load, dead_while_no_load)}

if __name__ == "__main__":
    if len(sys.argv) == 2:  # one kernel, in a child process: an assertion may abort it
        triton.compile(ASTSource(KERNELS[sys.argv[1]], {"X": "*i64", "Y": "*i64", "K": "i32"}, {}),
                       target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
        sys.exit(0)
    print("Triton", triton.__version__, "for sm_90")
    failed = 0
    for name in KERNELS:
        r = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True)
        why = ""
        if r.returncode != 0:
            failed += 1
            out = (r.stderr + r.stdout).splitlines()
            lines = [l for l in out if "Assertion" in l] + [l for l in out if "Pipeline failed" in l]
            why = "\n      " + "\n      ".join(l[-170:] for l in lines[:2])
        print("  %-26s %s%s" % (name, "ok" if r.returncode == 0 else "FAILS", why))
    print("WRONG: %d of %d fail to compile" % (failed, len(KERNELS)) if failed else "OK: all compile")
    sys.exit(1 if failed else 0)
