"""backend='triton': the kernel's translation to Triton's DSL, run by Triton.

On a machine without a GPU these run on Triton's interpreter
(TRITON_INTERPRET=1); skipped with the reason when Triton is not installed.
Expected values come from NumPy or from the interpreter backend (the reference).
"""

import numpy as np
import pytest

import triton_c

pytest.importorskip("torch")
pytest.importorskip("triton", reason="the 'triton' package is not installed "
                    "(scripts/setup.sh installs it)")

ADD = """
__global__ void add(float *X, float *Y, float *Z, int N) {
  int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Z + i) = *?(m)(X + i) + *?(m)(Y + i);
}
"""

ROWMAX = """
__global__ void rowmax(float *X, float *Y) {
  int r[4] = 0 ... 4;
  int c[8] = 0 ... 8;
  float x[4, 8] = *(X + r[:, newaxis] * 8 + c[newaxis, :]);
  *(Y + r) = x[:, max];
}
"""


def test_numpy_arrays_run_on_tritons_interpreter_in_place():
    k = triton_c.kernel(ADD, outputs=["Z"])
    rng = np.random.default_rng(3)
    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    z = np.zeros(1000, np.float32)
    out = k[lambda meta: (triton_c.cdiv(meta["N"], meta["BLOCK"]),)](
        x, y, z, 1000, BLOCK=128, backend="triton")
    assert out is z
    np.testing.assert_array_equal(z, x + y)


def test_reduction_with_nan_and_signed_zero_matches_the_reference():
    k = triton_c.kernel(ROWMAX, outputs=["Y"])
    x = np.arange(32, dtype=np.float32).reshape(4, 8) - 16
    x[0, 3] = np.nan          # maxNum: NaN loses
    x[1, :] = -0.0
    x[1, 5] = 0.0             # max(-0.0, +0.0) is +0.0
    x[2, :] = np.nan          # all NaN: NaN
    want = np.zeros(4, np.float32)
    k(x, want, (1,), backend="interp")
    got = np.full(4, 7.0, np.float32)
    k(x, got, (1,), backend="triton")
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


def test_what_triton_cannot_express_is_refused_by_name():
    k = triton_c.kernel("""
    __global__ void mm(float *A, float *C) {
      int r[8] = 0 ... 8;
      float a[8, 8] = *(A + r[:, newaxis] * 8 + r[newaxis, :]);
      float c[8, 8] = a @ a;
      *(C + r[:, newaxis] * 8 + r[newaxis, :]) = c;
    }""")
    a = np.ones(64, np.float32)
    c = np.zeros(64, np.float32)
    with pytest.raises(ValueError, match="not supported by the triton backend yet: '@' with a "
                                         "dimension below 16"):
        k(a, c, (1,), backend="triton")
    assert not c.any()
    k(a, c, (1,))  # the interpreter runs it
    assert (c == 8).all()


def test_read_only_output_is_refused_and_untouched():
    k = triton_c.kernel(ADD, outputs=["Z"])
    x = np.ones(16, np.float32)
    z = np.zeros(16, np.float32)
    z.setflags(write=False)
    with pytest.raises(ValueError, match="'Z' is read-only"):
        k(x, x, z, 16, (1,), BLOCK=16, backend="triton")
    assert not z.any()


def test_options_triton_does_not_take():
    k = triton_c.kernel(ADD, outputs=["Z"])
    x = np.ones(16, np.float32)
    z = np.zeros(16, np.float32)
    with pytest.raises(ValueError, match="one variant"):
        k(x, x, z, 16, (1,), BLOCK=[16, 32], backend="triton")
    with pytest.raises(ValueError, match="race_check"):
        k(x, x, z, 16, (1,), BLOCK=16, backend="triton", race_check=True)
    with pytest.raises(ValueError, match="max_seconds"):
        k(x, x, z, 16, (1,), BLOCK=16, backend="triton", max_seconds=5)
    assert not z.any()


def test_triton_imported_first_does_not_shadow_our_library():
    # Triton's package loads a libtriton.so; ours is libtriton_c.so, so the
    # order of the imports does not matter.
    import subprocess
    import sys

    code = ("import triton, triton_c; from triton_c import _core; "
            "print(_core.expand_defines([]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]


def test_cuda_tensors_run_on_triton_on_the_gpu():
    torch = pytest.importorskip("torch")
    ok, why = triton_c.cuda_available()
    if not ok or not torch.cuda.is_available():
        pytest.skip(f"needs a CUDA device: {why}")
    k = triton_c.kernel(ROWMAX, outputs=["Y"])
    x = np.arange(32, dtype=np.float32).reshape(4, 8) - 16
    x[0, 3] = np.nan
    x[1, :] = -0.0
    x[1, 5] = 0.0
    want = np.zeros(4, np.float32)
    k(x, want, (1,), backend="interp")
    xt = torch.from_numpy(x).cuda()
    yt = torch.full((4,), 7.0, device="cuda")
    out = k(xt, yt, (1,), backend="triton")
    assert out is yt
    got = yt.cpu().numpy()
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
