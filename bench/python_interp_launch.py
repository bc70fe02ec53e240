"""Launch cost of triton_c on the interpreter (issue 31's targets: the one-element
kernel on a 64 MiB array <= 1 ms; a tiny cached launch <= 15 us from Python).

    python bench/python_interp_launch.py [--iters 3000]

Prints, for a kernel that loads and stores one element:
  - the time per call on a 64 MiB float32 array (the launch works on the caller's
    memory: no copy in or out, an undo journal of the pages it writes);
  - the time per call on a 16-element array, through Kernel.__call__ and through
    the C++ core's launch alone (the rest is the Python layer);
  - with threads=1 and with every core, with the race check (on by default) and
    without it.
"""

import argparse
import os
import statistics
import time
import warnings

import numpy as np

import triton_c
from triton_c import _core

SRC = """
__global__ void one(float *X) {
  *X = *X + 1.0;
}
"""


def per_call(fn, iters, reps=5):
    for _ in range(min(iters, 200)):
        fn()
    runs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        runs.append((time.perf_counter() - t0) / iters)
    return statistics.median(runs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=3000)
    args = p.parse_args()
    warnings.simplefilter("ignore", triton_c.LaunchWarning)  # 'never written': by design
    k = triton_c.kernel(SRC)
    big = np.zeros(16 << 20, np.float32)
    small = np.zeros(16, np.float32)
    k(small, (1,))
    ck = k.compile(())
    print(f"cores: {os.cpu_count()}  numpy {np.__version__}")
    for race in (True, False):
        for threads in (1, 0):
            label = ("1 thread" if threads == 1 else "all cores") + (
                ", race check on (the default)" if race else ", race_check=False")
            b = per_call(lambda: k(big, (1,), threads=threads, race_check=race),
                         max(args.iters // 30, 20))
            t = per_call(lambda: k(small, (1,), threads=threads, race_check=race), args.iters)
            c = per_call(lambda: _core.launch(ck, "interp", [small], ["1"], 4, 0, 0, threads,
                                              0.0, race, False, False), args.iters)
            print(f"[{label}] 64 MiB one-element kernel: {b * 1e3:.3f} ms/call")
            print(f"[{label}] tiny kernel, Kernel.__call__: {t * 1e6:.1f} us/call; "
                  f"C++ core launch alone: {c * 1e6:.1f} us/call")
    assert big[0] > 0 and small[0] > 0


if __name__ == "__main__":
    main()
