"""Launch overhead of a cached 8-argument kernel: triton_c vs Triton (torch tensors).

    python bench/python_launch_overhead.py [--iters 5000]

Both kernels take 4 pointers and 4 ints, run one program that does almost
nothing, and are launched back to back with CUDA tensors; the time per launch
is the wall time of the loop (then one synchronisation) divided by the count.
Prints both, and triton_c's ratio to Triton (lower is better).
"""

import argparse
import statistics
import time

import torch

import triton_c

SRC = """
__global__ void k8(float *A, float *B, float *C, float *D, int n0, int n1, int n2, int n3) {
  int i[32] = 0 ... 32;
  bool m[32] = i < n0;
  *?(m)(D + i) = *?(m)(A + i) + *?(m)(B + i) + *?(m)(C + i) + (float)(n1 + n2 + n3);
}
"""


def timed(fn, iters):
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters * 1e6


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=5000)
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args()
    a, b, c, d = (torch.zeros(32, device="cuda") for _ in range(4))
    k = triton_c.kernel(SRC)
    grid = (1,)
    ours = lambda: k(a, b, c, d, 32, 1, 2, 3, grid)

    import triton
    import triton.language as tl

    @triton.jit
    def k8(A, B, C, D, n0, n1, n2, n3):
        i = tl.arange(0, 32)
        m = i < n0
        x = tl.load(A + i, mask=m) + tl.load(B + i, mask=m) + tl.load(C + i, mask=m)
        tl.store(D + i, x + (n1 + n2 + n3), mask=m)

    theirs = lambda: k8[grid](a, b, c, d, 32, 1, 2, 3)
    ours()
    theirs()
    torch.cuda.synchronize()
    want = a + b + c + 6
    assert torch.equal(d, want)
    o, t = [], []
    for _ in range(args.reps):  # alternated, so that a change in the host's load hits both
        o.append(timed(ours, args.iters))
        t.append(timed(theirs, args.iters))
    fast = sum(getattr(getattr(fe, "launcher", None), "launches", 0) for fe in k._fast.values())
    om, tm = statistics.median(o), statistics.median(t)
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  "
          f"triton {triton.__version__}")
    print(f"triton_c launch (cached, 8 args): {om:.2f} us  (runs: "
          + ", ".join(f"{x:.2f}" for x in o) + ")")
    print(f"triton.jit launch (8 args):       {tm:.2f} us  (runs: "
          + ", ".join(f"{x:.2f}" for x in t) + ")")
    print(f"ratio triton_c / triton: {om / tm:.2f}x")
    print(f"triton_c launches through the repeated-launch path: {fast}")


if __name__ == "__main__":
    main()
