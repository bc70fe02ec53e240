"""NumPy on the interpreter: dtypes, the seed's dot, softmax, defines, grids, outputs."""

import numpy as np
import pytest

import triton_c
from triton_c import _arrays

COPY = """
__global__ void copy(TYPE *X, TYPE *Y, int N) {
  int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = *?(m)(X + i);
}
"""

AXPY = """
__global__ void axpy(float *X, float *Y, float a, int N) {
  int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = a * *?(m)(X + i) + *?(m)(Y + i);
}
"""

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]


@pytest.mark.parametrize("dt", DTYPES)
def test_every_dtype_round_trips(dt):
    k = triton_c.kernel(COPY, outputs=["Y"])
    rng = np.random.default_rng(1)
    if dt == "bool":
        x = rng.integers(0, 2, 100).astype(bool)
    elif dt.startswith(("int", "uint")):
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, 100, dtype=dt, endpoint=True)
    else:
        x = rng.standard_normal(100).astype(dt)
    y = np.zeros_like(x)
    lang = triton_c._core.lang_name(dt)
    out = k(x, y, 100, lambda opt: [triton_c.cdiv(100, opt.BLOCK)], TYPE=lang, BLOCK=32)
    assert out is y
    np.testing.assert_array_equal(y, x)


def test_bf16_as_uint16_bits():
    k = triton_c.kernel(COPY, outputs=["Y"])
    # bf16 bit patterns of 1.0, -2.0, 0.5, 3.0 (the top halves of the float32 encodings)
    x = np.array([1.0, -2.0, 0.5, 3.0], dtype=np.float32).view(np.uint32) >> 16
    x = x.astype(np.uint16)
    y = np.zeros_like(x)
    k(x, y, 4, (1,), TYPE="bf16", BLOCK=4)
    np.testing.assert_array_equal(y, x)


def test_bf16_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    k = triton_c.kernel(COPY, outputs=["Y"])
    x = np.array([1.0, -2.0, 0.5, 3.0], dtype=ml_dtypes.bfloat16)
    y = np.zeros_like(x)
    k(x, y, 4, (1,), TYPE=x.dtype, BLOCK=4)
    np.testing.assert_array_equal(y.astype(np.float32), [1.0, -2.0, 0.5, 3.0])


def test_scalar_float_argument_and_tail():
    k = triton_c.kernel(AXPY, outputs=["Y"])
    x = np.arange(70, dtype=np.float32)
    y = np.ones(70, dtype=np.float32)
    k(x, y, 0.5, 70, grid=lambda opt: [triton_c.cdiv(70, opt.d("BLOCK"))], BLOCK=32)
    np.testing.assert_array_equal(y, 0.5 * np.arange(70, dtype=np.float32) + 1)


def test_grid_as_tuple_and_expression_text():
    k = triton_c.kernel(AXPY, outputs=["Y"])
    x = np.ones(64, dtype=np.float32)
    y = np.zeros(64, dtype=np.float32)
    k(x, y, 2.0, 64, ("cdiv(N, BLOCK)",), BLOCK=16)
    np.testing.assert_array_equal(y, np.full(64, 2.0, np.float32))
    y[:] = 0
    k(x, y, 3.0, 64, (2,), BLOCK=32)
    np.testing.assert_array_equal(y, np.full(64, 3.0, np.float32))


def test_several_outputs_returned_as_tuple():
    src = """
    __global__ void two(int *A, int *B, int N) {
      int i[8] = 0 ... 8;
      bool m[8] = i < N;
      *?(m)(A + i) = i;
      *?(m)(B + i) = i * 2;
    }"""
    k = triton_c.kernel(src, outputs=["B", "A"])
    a, b = np.zeros(8, np.int32), np.zeros(8, np.int32)
    rb, ra = k(a, b, 8, (1,))
    assert ra is a and rb is b
    np.testing.assert_array_equal(a, np.arange(8))
    np.testing.assert_array_equal(b, 2 * np.arange(8))


def test_kernel_from_a_path(tmp_path):
    p = tmp_path / "axpy.tc"
    p.write_text(AXPY)
    k = triton_c.kernel(str(p), outputs=["Y"])
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    k(x, y, 1.0, 8, (1,), BLOCK=8)
    np.testing.assert_array_equal(y, np.ones(8))


def test_list_defines_run_first_variant_and_check_variants():
    k = triton_c.kernel(AXPY, outputs=["Y"])
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, dtype=np.float32)
    k(x, y, 1.0, 100, lambda opt: [triton_c.cdiv(100, opt.BLOCK)], BLOCK=[16, 32, 64])
    np.testing.assert_array_equal(y, x)
    assert [d for d in k._compiled] == [(("BLOCK", "16"),)]
    y[:] = 0
    k(x, y, 1.0, 100, lambda opt: [triton_c.cdiv(100, opt.BLOCK)], BLOCK=[16, 32, 64],
      check_variants=True)
    np.testing.assert_array_equal(y, x)
    assert len(k._compiled) == 3


def test_check_variants_reports_disagreement():
    # The grid ignores BLOCK, so BLOCK=16 covers only 16 elements: the variants disagree.
    k = triton_c.kernel(AXPY, outputs=["Y"])
    x = np.ones(64, dtype=np.float32)
    y = np.zeros(64, dtype=np.float32)
    with pytest.raises(triton_c.MismatchError) as e:
        k(x, y, 1.0, 64, (1,), BLOCK=[64, 16], check_variants=True)
    assert "Y" in e.value.mismatches
    index, got, want, count, _ = e.value.mismatches["Y"]
    assert index == 16 and count == 48
    np.testing.assert_array_equal(y, np.zeros(64))  # nothing written


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_seed_dot_all_transpositions(ta, tb, dt):
    rng = np.random.default_rng(7)
    M, N, K = 40, 24, 20
    a = rng.standard_normal((K, M) if ta else (M, K)).astype(dt)
    b = rng.standard_normal((N, K) if tb else (K, N)).astype(dt)
    c = triton_c.ops.dot(a, b, ta, tb)
    want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    assert c.shape == (M, N) and c.dtype == np.dtype(dt)
    np.testing.assert_allclose(c, want, rtol=1e-5 if dt == "float32" else 1e-12, atol=1e-5)


def test_seed_dot_float16_exact_on_small_integers():
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, (32, 16)).astype(np.float16)
    b = rng.integers(-4, 5, (16, 32)).astype(np.float16)
    c = triton_c.ops.dot(a, b)
    np.testing.assert_array_equal(c, (a.astype(np.float64) @ b.astype(np.float64)))


def test_softmax_with_tail():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 37)).astype(np.float32)
    y = triton_c.ops.softmax(x)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_helpers():
    assert triton_c.cdiv(10, 4) == 3 and triton_c.cdiv(8, 4) == 2
    a = np.zeros((3, 4), np.float32)
    assert triton_c.shape(a) == (3, 4)
    e = triton_c.empty([2, 5], np.float16)
    assert e.shape == (2, 5) and e.dtype == np.float16
    e = triton_c.empty([2], np.int8, like=a)
    assert e.dtype == np.int8


def test_assert_close_uses_dtype_tolerance():
    a = np.array([1.0, 2.0], np.float32)
    triton_c.testing.assert_close(a * (1 + 1e-7), a)
    with pytest.raises(AssertionError, match="first at flat index 1"):
        triton_c.testing.assert_close(np.array([1.0, 2.1], np.float32), a)
    with pytest.raises(AssertionError):
        triton_c.testing.assert_close(np.array([1, 3], np.int32), np.array([1, 2], np.int32))
    h = np.array([1.0], np.float16)
    triton_c.testing.assert_close(h * np.float16(1.0005), h)  # within fp16's rtol 1e-3


def test_assert_close_integers_of_two_dtypes_compare_exactly():
    # Through float64, 2**53 + 1 and 2**53 would be equal (torch raises here too).
    big = np.array([2**53 + 1], np.int64)
    with pytest.raises(AssertionError, match=r"integers, exactly.*9007199254740993 vs "
                                             r"9007199254740992"):
        triton_c.testing.assert_close(big, np.array([2**53], np.uint64), check_dtype=False)
    triton_c.testing.assert_close(big, np.array([2**53 + 1], np.uint64), check_dtype=False)
    triton_c.testing.assert_close(np.array([1, 0], np.int8), np.array([True, False]),
                                  check_dtype=False)
    triton_c.testing.assert_close(np.zeros(3, np.int16), 0, check_dtype=False)
    with pytest.raises(AssertionError, match="dtypes differ"):
        triton_c.testing.assert_close(big, np.array([2**53 + 1], np.uint64))


def test_do_bench_interp_returns_ms():
    k = triton_c.kernel(AXPY, outputs=["Y"])
    x, y = np.ones(16, np.float32), np.zeros(16, np.float32)
    ms = triton_c.testing.do_bench(lambda: k(x, y, 1.0, 16, (1,), BLOCK=16), warmup=1, rep=3,
                                   device="cpu")
    assert ms > 0
    np.testing.assert_array_equal(y, np.full(16, 4.0))  # 1 + 3 runs


def test_backend_env_var(monkeypatch):
    monkeypatch.setenv("TRITON_C_BACKEND", "interp")
    k = triton_c.kernel(AXPY, outputs=["Y"])
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    k(x, y, 1.0, 8, (1,), BLOCK=8)
    np.testing.assert_array_equal(y, x)
    monkeypatch.setenv("TRITON_C_BACKEND", "cpu")
    with pytest.raises(ValueError, match="TRITON_C_BACKEND"):
        k(x, y, 1.0, 8, (1,), BLOCK=8)


def test_function_forward_only_for_numpy():
    class _twice(triton_c.function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 2 * x

        @staticmethod
        def backward(ctx, dy):
            return 2 * dy

    np.testing.assert_array_equal(_twice.apply(np.arange(3)), [0, 2, 4])


def test_numpy_bf16_convention_documented():
    # Without ml_dtypes, bf16 state arrays come back as uint16 bit patterns.
    dt = _arrays.numpy_dtype("bfloat16")
    assert dt is not None


class _DLPackOnly:
    """An array known only through the DLPack protocol."""

    def __init__(self, a):
        self._a = a
        self.shape = a.shape
        self.dtype = a.dtype

    def __dlpack__(self, stream=None, **kw):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_objects_are_arrays():
    k = triton_c.kernel(AXPY, outputs=["Y"])
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    out = k(_DLPackOnly(x), _DLPackOnly(y), 2.0, 16, (1,), BLOCK=16)
    assert isinstance(out, _DLPackOnly)
    np.testing.assert_array_equal(y, 2 * x)  # written through the shared memory
