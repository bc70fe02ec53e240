"""The repeated-launch path on the interpreter (Kernel._fast, _FastInterp).

A call repeated with the same keywords and options and C-contiguous, writable
NumPy arrays skips the Python-side checks. These tests check that it is taken
(no _Run is made), that it computes what the full path computes, and that each
case the full path treats specially still gets the full path's answer.
"""

import warnings

import numpy as np
import pytest

import triton_c
from triton_c import _kernel

AXPY = """
__global__ void axpy(float *X, float *Y, float a, int N) {
  int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = a * *?(m)(X + i) + *?(m)(Y + i);
}
"""

TRAP = """
__global__ void oob(float *X, int N) {
  int i[16] = 0 ... 16;
  *(X + i) = 1.0;
  *(X + N) = 2.0;
}
"""


@pytest.fixture
def full_runs(monkeypatch):
    """Counts the launches that took the full path (each makes one _Run)."""
    count = [0]
    init = _kernel._Run.__init__

    def counting(self, *a, **kw):
        count[0] += 1
        init(self, *a, **kw)

    monkeypatch.setattr(_kernel._Run, "__init__", counting)
    return count


def test_repeated_launch_is_fast_and_exact(full_runs):
    k = triton_c.kernel(AXPY, outputs=["Y"])
    rng = np.random.default_rng(1)
    for n in (100, 33, 1000):
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        want = np.float32(2.5) * x + y
        out = k(x, y, 2.5, n, lambda meta: (triton_c.cdiv(meta["N"], meta["BLOCK"]),), BLOCK=32)
        assert out is y
        np.testing.assert_array_equal(y, want)
    assert full_runs[0] == 1


def test_grid_lambda_called_once_per_launch():
    k = triton_c.kernel(AXPY, outputs=["Y"])
    calls = []

    def grid(meta):
        calls.append(meta["N"])
        return (triton_c.cdiv(meta["N"], meta["BLOCK"]),)

    for n in (10, 20, 30):
        k(np.ones(n, np.float32), np.zeros(n, np.float32), 1.0, n, grid, BLOCK=8)
    assert calls == [10, 20, 30]


def test_read_only_array_after_fast_launches_is_refused_and_untouched():
    k = triton_c.kernel(AXPY, outputs=["Y"])
    x = np.ones(16, np.float32)
    k(x, np.zeros(16, np.float32), 1.0, 16, (1,), BLOCK=16)
    k(x, np.zeros(16, np.float32), 1.0, 16, (1,), BLOCK=16)
    y = np.zeros(16, np.float32)
    y.setflags(write=False)
    with pytest.raises(ValueError, match="'Y' is read-only"):
        k(x, y, 1.0, 16, (1,), BLOCK=16)
    assert not y.any()


def test_other_dtype_and_strided_view_after_fast_launches():
    k = triton_c.kernel(AXPY, outputs=["Y"])
    x = np.ones(16, np.float32)
    k(x, np.zeros(16, np.float32), 1.0, 16, (1,), BLOCK=16)
    k(x, np.zeros(16, np.float32), 1.0, 16, (1,), BLOCK=16)
    with pytest.raises(TypeError, match="'Y'.*float32.*float64"):
        k(x, np.zeros(16, np.float64), 1.0, 16, (1,), BLOCK=16)
    base = np.zeros(32, np.float32)
    y = base[::2]  # a strided view: the kernel sees the storage from y's first element
    k(x, y, 3.0, 16, (1,), BLOCK=16)
    np.testing.assert_array_equal(base[:16], np.full(16, 3.0, np.float32))
    assert not base[16:].any()


def test_warnings_and_traps_on_the_fast_path(full_runs):
    k = triton_c.kernel(AXPY, outputs=["Y"])
    x = np.ones(16, np.float32)
    k(x, np.zeros(16, np.float32), 1.0, 16, (1,), BLOCK=16)
    with pytest.warns(triton_c.LaunchWarning, match="never written") as rec:
        k(x, np.zeros(32, np.float32), 1.0, 16, (1,), BLOCK=16)
    assert rec[0].filename == __file__  # points at the caller's line
    assert full_runs[0] == 2  # the warning is reported through the full path's code
    t = triton_c.kernel(TRAP)
    a = np.zeros(32, np.float32)
    with pytest.warns(triton_c.LaunchWarning, match="never written"):
        t(a, 20, (1,))
    a[:] = 0
    with pytest.raises(triton_c.TrapError, match="out_of_bounds|out of bounds"):
        t(a, 40, (1,))
    assert not a.any()  # the trap undid the first store


def test_environment_backend_is_read_on_every_call(monkeypatch):
    k = triton_c.kernel(AXPY, outputs=["Y"])
    x = np.ones(16, np.float32)
    k(x, np.zeros(16, np.float32), 1.0, 16, (1,), BLOCK=16)
    monkeypatch.setenv("TRITON_C_BACKEND", "nonsense")
    with pytest.raises(ValueError, match="TRITON_C_BACKEND"):
        k(x, np.zeros(16, np.float32), 1.0, 16, (1,), BLOCK=16)


def test_options_with_equal_values_of_other_types_are_checked():
    k = triton_c.kernel(AXPY, outputs=["Y"])
    x = np.ones(16, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k(x, np.zeros(16, np.float32), 1.0, 16, (1,), BLOCK=16, threads=1)
        with pytest.raises(TypeError, match="threads"):
            k(x, np.zeros(16, np.float32), 1.0, 16, (1,), BLOCK=16, threads=1.0)
