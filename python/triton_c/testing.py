"""Test helpers: comparison with the suite's tolerances, and benchmarking."""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Optional

from . import _arrays as A
from . import _core

__all__ = ["assert_close", "do_bench"]


_DEFAULT_TOL = {  # the conformance suite's defaults: (rtol, atol)
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7)}


def _as_array(x: Any, what: str) -> Any:
    """A host NumPy array (or the core's bf16 descriptor) for an array, tensor,
    Python number or nested list."""
    import numpy as np

    if A.is_array(x):
        return A.host_numpy(x)
    if isinstance(x, (bool, int, float)) or isinstance(x, (list, tuple)):
        a = np.asarray(x)
        if a.dtype == object:
            raise TypeError(f"assert_close: {what} is not numeric: {x!r}")
        return a
    if isinstance(x, np.generic):
        return np.asarray(x)
    raise TypeError(f"assert_close: {what} must be an array, a tensor or a number, "
                    f"got {type(x).__name__}")


def _dtype_of(a: Any) -> str:
    return a[2] if isinstance(a, tuple) else A.dtype_name(a.dtype)


def _to_float64(a: Any) -> Any:
    import numpy as np

    if isinstance(a, tuple):  # bf16 bits: widen exactly
        bits = np.asarray(a[1]).astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64)
    return np.asarray(a).astype(np.float64)


def _assert_equal_ints(got: Any, want: Any, check_dtype: bool) -> None:
    """assert_close of two integer/bool arrays of different dtypes: their values
    as Python integers must be equal (a number broadcasts, as in NumPy)."""
    import numpy as np

    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape:
        if check_dtype or (g.shape != () and w.shape != ()):
            raise AssertionError(f"shapes differ: {g.shape} vs {w.shape}")
        g, w = np.broadcast_arrays(g, w)
    go, wo = g.astype(object).ravel(), w.astype(object).ravel()
    bad = np.flatnonzero(go != wo)
    if bad.size:
        i = int(bad[0])
        raise AssertionError(f"{bad.size} element(s) differ (integers, exactly); first at flat "
                             f"index {i}: {go[i]} vs {wo[i]}")


def assert_close(actual: Any, expected: Any, rtol: Optional[float] = None,
                 atol: Optional[float] = None, *, check_dtype: bool = True) -> None:
    """Raises AssertionError unless the arrays match element by element.

    Integers and bools must be equal; floats match when NaN meets NaN or
    ``|got - want| <= atol + rtol * |want|`` with the dtype's defaults
    (float16 rtol 1e-3, bfloat16 1.6e-2, float32 1.3e-6, float64 1e-7; atol
    1e-5, float64 1e-7), the tolerances of the conformance suite.

    With ``check_dtype=False`` (as torch.testing.assert_close) arrays of
    different dtypes compare as float64 values with the looser dtype's
    default tolerance; a Python number or list compares with every element
    (numbers broadcast, as in NumPy).

    >>> triton_c.testing.assert_close(c, a @ b)
    >>> triton_c.testing.assert_close(y32, y64, check_dtype=False)
    >>> triton_c.testing.assert_close(z, 0.0, check_dtype=False)
    """
    import numpy as np

    got, want = _as_array(actual, "actual"), _as_array(expected, "expected")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                              or not v >= 0 or v == float("inf")):
            raise ValueError(f"assert_close: {name}={v!r}: expected a non-negative finite number")
    gd, wd = _dtype_of(got), _dtype_of(want)
    if gd != wd:
        if check_dtype:
            raise AssertionError(f"dtypes differ: {gd} vs {wd} (check_dtype=False compares "
                                 f"their values)")
        if gd not in _DEFAULT_TOL and wd not in _DEFAULT_TOL:
            # Integers and bools of two dtypes: equal as integers, exactly (through
            # float64, 2**53 + 1 would equal 2**53).
            _assert_equal_ints(got, want, check_dtype)
            return
        tols = [_DEFAULT_TOL.get(d, (0.0, 0.0)) for d in (gd, wd)]
        if rtol is None:
            rtol = max(t[0] for t in tols)
        if atol is None:
            atol = max(t[1] for t in tols)
        got, want = _to_float64(got), _to_float64(want)
    gs = np.shape(got[1] if isinstance(got, tuple) else got)
    ws = np.shape(want[1] if isinstance(want, tuple) else want)
    if gs != ws:
        if not check_dtype and (gs == () or ws == ()):
            shape = gs if ws == () else ws
            got = np.ascontiguousarray(np.broadcast_to(got, shape))
            want = np.ascontiguousarray(np.broadcast_to(want, shape))
        else:
            raise AssertionError(f"shapes differ: {gs} vs {ws}")
    r = _core.compare(got, want, rtol, atol)
    if r is not None:
        index, g, w, count, rule = r
        raise AssertionError(f"{count} element(s) differ ({rule}); first at flat index {index}: "
                             f"{g} vs {w}" if index >= 0 else f"{g} vs {w}")


def do_bench(fn: Callable[[], Any], warmup: int = 5, rep: int = 20,
             device: Optional[str] = None) -> float:
    """Median time of ``fn()`` in milliseconds.

    On CUDA (``device='cuda'``, or when PyTorch sees a GPU and ``device`` is
    None) each call is timed with CUDA events; otherwise with wall time.

    >>> ms = triton_c.testing.do_bench(lambda: triton_c.ops.dot(a, b))
    """
    for name, v, low in (("warmup", warmup, 0), ("rep", rep, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise ValueError(f"do_bench: {name}={v!r}: expected an integer, at least {low}")
    if device not in (None, "cpu", "cuda"):
        raise ValueError(f"do_bench: device={device!r}: expected 'cpu', 'cuda' or None")
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
