"""Test helpers: comparison with the suite's tolerances, and benchmarking."""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Optional

from . import _arrays as A
from . import _core

__all__ = ["assert_close", "do_bench"]


def assert_close(actual: Any, expected: Any, rtol: Optional[float] = None,
                 atol: Optional[float] = None) -> None:
    """Raises AssertionError unless the arrays match element by element.

    Integers and bools must be equal; floats match when NaN meets NaN or
    ``|got - want| <= atol + rtol * |want|`` with the dtype's defaults
    (float16 rtol 1e-3, bfloat16 1.6e-2, float32 1.3e-6, float64 1e-7; atol
    1e-5, float64 1e-7), the tolerances of the conformance suite.

    >>> triton_c.testing.assert_close(c, a @ b)
    """
    r = _core.compare(A.host_numpy(actual), A.host_numpy(expected), rtol, atol)
    if r is not None:
        index, got, want, count, rule = r
        raise AssertionError(f"{count} element(s) differ ({rule}); first at flat index {index}: "
                             f"{got} vs {want}" if index >= 0 else f"{got} vs {want}")


def do_bench(fn: Callable[[], Any], warmup: int = 5, rep: int = 20,
             device: Optional[str] = None) -> float:
    """Median time of ``fn()`` in milliseconds.

    On CUDA (``device='cuda'``, or when PyTorch sees a GPU and ``device`` is
    None) each call is timed with CUDA events; otherwise with wall time.

    >>> ms = triton_c.testing.do_bench(lambda: triton_c.ops.dot(a, b))
    """
    torch = None
    if device != "cpu":
        try:
            import torch as _t

            if _t.cuda.is_available():
                torch = _t
        except ImportError:
            pass
    if device == "cuda" and torch is None:
        raise RuntimeError("do_bench(device='cuda'): no CUDA device")
    for _ in range(warmup):
        fn()
    times = []
    if torch is not None:
        torch.cuda.synchronize()
        for _ in range(rep):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    else:
        for _ in range(rep):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)
