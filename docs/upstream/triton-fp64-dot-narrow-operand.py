# Triton 3.6 bug: tl.dot of float64 operands fails to compile for sm_90 when an operand is a
# conversion from an 8- or 16-bit type (docs/upstream/triton-fp64-dot-narrow-operand.md).
# Needs only triton (no GPU, no torch): compiles offline for sm_90 and exits 1 if any fails.
# Triton 3.6.0: the fp16/int8/int16 rows abort in ConvertTritonGPUToLLVM ("Currently fp64
# don't support largeK MMA"; an assertion build of Triton aborts the process, a release build
# raises "PassManager::run failed"). Triton 3.9.0: every row compiles.
import subprocess
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def kernel(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    b = tl.load(B + rk[:, None] * N + rn[None, :])
    c = tl.dot(a.to(tl.float64), b.to(tl.float64), input_precision="ieee")
    tl.store(C + rm[:, None] * N + rn[None, :], c)


def compile_one(ta, tb, m, n, k):
    sig = {"A": "*" + ta, "B": "*" + tb, "C": "*fp64", "M": "constexpr", "N": "constexpr",
           "K": "constexpr"}
    triton.compile(ASTSource(kernel, sig, {"M": m, "N": n, "K": k}),
                   target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})


CASES = [("fp64", "fp64"), ("fp32", "fp32"), ("i64", "i64"),  # right in 3.6.0
         ("fp16", "fp64"), ("fp64", "fp16"), ("bf16", "bf16"), ("i8", "i8"), ("i16", "i16")]

if __name__ == "__main__":
    if len(sys.argv) == 6:  # one case, in a child process: an assertion aborts the process
        compile_one(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:]))
        sys.exit(0)
    print("Triton", triton.__version__, "for sm_90, tl.dot(a.to(tl.float64), b.to(tl.float64))")
    failed = 0
    for ta, tb in CASES:
        for m, n, k in [(16, 16, 16), (16, 16, 32)]:
            r = subprocess.run([sys.executable, __file__, ta, tb, str(m), str(n), str(k)],
                               capture_output=True, text=True)
            why = ""
            if r.returncode != 0:
                failed += 1
                lines = [l for l in (r.stderr + r.stdout).splitlines()
                         if "Assertion" in l or "Error" in l or "error:" in l]
                why = ": " + (lines[0][-160:] if lines else "exit %d" % r.returncode)
            print("  a: %-4s b: %-4s M=%d N=%d K=%d %s%s" % (
                ta, tb, m, n, k, "ok" if r.returncode == 0 else "FAILS", why))
    print("WRONG: %d of %d fail to compile" % (failed, 2 * len(CASES)) if failed else "OK: all compile")
    sys.exit(1 if failed else 0)
