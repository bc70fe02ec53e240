# ptxas bug reached from Triton: a float -> uint16 conversion (F2I.U16) is copied into a 32-bit
# register with `PRMT 0x7610` (low half only) and then read as 32 bits, so a stale upper half
# makes the value look non-zero (docs/upstream/triton-ptxas-f2i16-prmt.md; the same ptxas bug as
# ptxas-f2i16-remat.md). Needs only triton (torch too to run it on a GPU).
#
# Without a GPU it compiles three variants for sm_90 and looks at the SASS (Triton's bundled
# nvdisasm); on a CUDA device it also runs them and compares with the values computed here.
#   narrow         v = r.to(tl.uint16)                      (the kernel as written)
#   ptxas -O1      the same, ptx_options="--opt-level 1"    (ptxas's default is -O3)
#   widened        v = r.to(tl.int32).to(tl.uint16)         (same value for r in [0, 65536))
# Exits 1 while the narrow variant is miscompiled (the PRMT in its SASS, or wrong values on
# the GPU), 0 otherwise.
import math
import os
import re
import struct
import subprocess
import sys
import tempfile

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.language.extra import libdevice


@triton.jit(do_not_specialize=["C", "S"])  # S = 1 would become a constant
def kernel(X, Y, C, S, WIDEN: tl.constexpr):
    s = S != 0
    i = tl.program_id(0) + tl.arange(0, 8)
    r = libdevice.fmod(tl.broadcast_to(s.to(tl.float32), [8]), tl.load(X + i))  # fmod(1, x)
    if WIDEN:
        v = r.to(tl.int32).to(tl.uint16)
    else:
        v = r.to(tl.uint16)  # 0 for every lane below: each remainder is in (0, 1)
    if C > 2:
        w = tl.where(s.to(tl.uint16) < v, i, v.to(tl.int32)).to(tl.uint8).to(tl.int32)
    else:
        w = i + s.to(tl.int32)
    tl.store(Y + i, w + tl.where(s.to(tl.uint16) < v, i, v.to(tl.int32)))


VARIANTS = [("narrow", 0, None), ("ptxas -O1", 0, "--opt-level 1"), ("widened", 1, None)]
# libdevice's fmodf without flush-to-zero (enable_reflect_ftz=False, as our translation
# launches): 1.0 / x takes the fast path and leaves a non-zero remainder, whose float bits
# (upper half 0x3d.. to 0x3e..) the register the PRMT writes into holds before it.
X = [0.75, 0.375, 0.3, 0.7, 0.6, 0.9, 0.45, 0.65]
S = 1


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def expected(c):
    out = []
    for i, x in enumerate(X):
        r = math.fmod(1.0 if S else 0.0, f32(x))  # exact, so also the float32 result
        v = int(r) & 0xFFFF
        sel = i if S < v else v
        w = (sel & 0xFF) if c > 2 else i + S
        out.append(w + sel)
    return out


def sass_hazard(widen, ptx_options):
    opts = {"num_warps": 4, "enable_reflect_ftz": False}
    if ptx_options:
        opts["ptx_options"] = ptx_options
    sig = {"X": "*fp32", "Y": "*i32", "C": "i32", "S": "i32", "WIDEN": "constexpr"}
    # As a launch specialises it: both pointers 16-byte aligned (torch's allocations are).
    attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}
    k = triton.compile(ASTSource(kernel, sig, {"WIDEN": widen}, attrs),
                       target=GPUTarget("cuda", 90, 32), options=opts)
    return prmt_copies(k)


def prmt_copies(k):
    """Whether the compiled kernel has a 16-bit F2I, and each PRMT 0x7610 copy of one."""
    nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(k.asm["cubin"])
        f.flush()
        sass = subprocess.run([nvdisasm, "-c", f.name], capture_output=True, text=True,
                              check=True).stdout
    f2i, hits = set(), []
    for line in sass.splitlines():
        m = re.search(r"F2I\.U16\S* (R\d+),", line)
        if m:
            f2i.add(m.group(1))
        m = re.search(r"PRMT (R\d+), (R\d+), 0x7610, (R\d+)", line)
        if m and m.group(2) in f2i and m.group(1) == m.group(3):
            hits.append(re.sub(r"\s+", " ", line.split("*/", 1)[1]).strip())
    return "F2I.U16" in sass, hits


def run_gpu(widen, ptx_options, c):
    import torch
    x = torch.tensor(X, dtype=torch.float32, device="cuda")
    y = torch.full((8,), -1, dtype=torch.int32, device="cuda")
    extra = {"ptx_options": ptx_options} if ptx_options else {}
    k = kernel[(1,)](x, y, c, S, WIDEN=widen, num_warps=4, enable_reflect_ftz=False, **extra)
    torch.cuda.synchronize()
    return y.cpu().tolist(), prmt_copies(k)[1]


def main():
    print("Triton", triton.__version__, "ptxas", subprocess.run(
        [os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas"),
         "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1])
    bad = False
    for name, widen, ptx_options in VARIANTS:
        has16, hits = sass_hazard(widen, ptx_options)
        print("  sm_90 SASS, %-10s: %s" % (name, ("F2I.U16 result copied by " + " / ".join(hits))
                                            if hits else "no PRMT copy of a 16-bit F2I" +
                                            ("" if has16 else " (32-bit F2I)")))
        bad |= bool(hits) and name == "narrow"
    try:
        import torch
        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if not gpu:
        print("no CUDA device: SASS only")
    else:
        print("  on", torch.cuda.get_device_name())
        for c in (0, 3):
            want = expected(c)
            for name, widen, ptx_options in VARIANTS:
                got, hits = run_gpu(widen, ptx_options, c)
                wrong = [i for i in range(8) if got[i] != want[i]]
                print("  C=%d %-10s: %s (the launched kernel's SASS: %s)" % (
                    c, name, "ok" if not wrong else "%d of 8 wrong: got %s, want %s" % (
                        len(wrong), got, want), "PRMT copy" if hits else "no PRMT copy"))
                bad |= bool(wrong) and name == "narrow"
    print("WRONG: ptxas miscompiles the narrow conversion" if bad else "OK")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
