"""Launch paths that run on copies (check_variants=True, backend='compare', CUDA tensors
on the interpreter) keep the direct launch's rules; warnings point at the caller; what a
grid lambda's meta sees agrees with the kernel; scalars and options are checked as
documented.

Expected values come from NumPy, from the C standard (octal literals) or from the
direct single-variant launch's documented behaviour.
"""

import os
import re
import warnings

import numpy as np
import pytest

import triton_c
from triton_c import _arrays

FILL = """
__global__ void fill(float *Y, int N) {
  int i[BLOCK] = 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = (float)i + 1;
}
"""

FORTY_TWO = """
__global__ void k(float *Z, int N) {
  int i[BLOCK] = 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Z + i) = 42.0;
}
"""

# Elements at even offsets from Y agree between variants; odd ones hold BLOCK.
ODD_BLOCK = """
__global__ void k(float *Y, int N) {
  int i[BLOCK] = 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = (i % 2 == 0) ? 1.0 : (float)BLOCK;
}
"""


# -- requires_grad on the paths that run on copies ------------------------------------

@pytest.mark.parametrize("opts", [dict(BLOCK=16), dict(BLOCK=[16, 32], check_variants=True)])
def test_a_tensor_that_requires_grad_is_not_written_with_check_variants(opts):
    torch = pytest.importorskip("torch")
    k = triton_c.kernel(FORTY_TWO)
    w = torch.ones(16, requires_grad=True)
    with pytest.raises(RuntimeError, match="'Z' is a tensor that requires grad"):
        k[(1,)](w, 16, **opts)
    assert torch.equal(w.detach(), torch.ones(16))  # nothing written
    with torch.no_grad():  # allowed there, as for torch's in-place ops
        k[(1,)](w, 16, **opts)
    assert torch.equal(w.detach(), torch.full((16,), 42.0))


def test_an_inference_tensor_is_not_written_with_check_variants():
    torch = pytest.importorskip("torch")
    k = triton_c.kernel(FORTY_TWO)
    with torch.inference_mode():
        w = torch.ones(16)
    with pytest.raises(RuntimeError, match="inference tensor"):
        k[(1,)](w, 16, BLOCK=[16, 32], check_variants=True)
    assert torch.equal(w, torch.ones(16))


# -- strided views: stores outside the view's own elements ----------------------------

def _fill_expected():
    # Y[i] = i + 1 for i < 16 from the view's first element: every element of the
    # 16-element storage (a strided view's bounds are its whole storage).
    return np.arange(1, 17, dtype=np.float32)


@pytest.mark.parametrize("opts", [dict(BLOCK=16), dict(BLOCK=[16, 32], check_variants=True)])
def test_check_variants_keeps_stores_outside_a_strided_view(opts):
    fill = triton_c.kernel(FILL)
    base = np.zeros(16, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fill[(1,)](base[::2], 16, **opts)
    np.testing.assert_array_equal(base, _fill_expected())


def test_check_variants_keeps_stores_outside_a_strided_tensor_view():
    torch = pytest.importorskip("torch")
    fill = triton_c.kernel(FILL)
    base = torch.zeros(4, 16)
    v = base[1, ::2]  # storage offset 16, stride 2
    fill[(1,)](v, 48, BLOCK=[64, 128], check_variants=True)
    want = np.zeros(64, np.float32)
    want[16:] = np.arange(1, 49)
    np.testing.assert_array_equal(base.reshape(-1).numpy(), want)


def test_check_variants_compares_outside_a_strided_view():
    k = triton_c.kernel(ODD_BLOCK)
    base = np.zeros(16, np.float32)
    with pytest.raises(triton_c.MismatchError, match="Y"):
        k[(1,)](base[::2], 16, BLOCK=[16, 32], check_variants=True)
    np.testing.assert_array_equal(base, 0)  # nothing written


def test_span_is_the_storage_of_a_strided_view_and_zero_copy():
    base = np.arange(10, dtype=np.float32)
    v = base[1::3]
    s = _arrays.span(v)
    # The storage from the view's element alignment: all of base, sharing its memory.
    assert s.shape == (10,) and np.shares_memory(s, base)
    np.testing.assert_array_equal(s, base)
    c = base[2:6]
    assert _arrays.span(c) is c  # a contiguous array is its own buffer


# -- warnings point at the caller ---------------------------------------------------

COPY8 = """
__global__ void add(float *X, float *Z, int N) {
  int i[BLOCK] = 0 ... BLOCK;
  *(Z + i) = *(X + i);
}
"""


def test_warnings_point_at_the_callers_line_for_every_launch_form():
    k = triton_c.kernel(COPY8)
    x = np.arange(20, dtype=np.float32)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        k[(1,)](x, np.zeros(20, np.float32), 20, BLOCK=8)             # LaunchWarning
        k[(1,)](x, np.zeros(20, np.float32), 20, BLOCK=8, BLOKC=1)    # + CompileWarning
        k(x, np.zeros(20, np.float32), 20, (1,), BLOCK=8)             # LaunchWarning
        k[(1,)](x, np.zeros(20, np.float32), 20, BLOCK=8, UNUSED=[1, 2], check_variants=True)
    kinds = [type(w.message) for w in rec]
    assert triton_c.CompileWarning in kinds and triton_c.LaunchWarning in kinds
    for w in rec:
        assert w.filename == __file__, (w.filename, w.lineno, str(w.message))


def test_compiler_warnings_point_at_the_callers_line():
    k = triton_c.kernel("""
    __global__ void k(char *Y) {
      char c = 300;
      *Y = c;
    }""")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        k[(1,)](np.zeros(1, np.int8))
    assert any(isinstance(w.message, triton_c.CompileWarning) for w in rec)
    for w in rec:
        assert w.filename == __file__, (w.filename, w.lineno, str(w.message))


# -- bf16 without ml_dtypes ------------------------------------------------------------

def test_empty_bfloat16_falls_back_to_uint16_bit_patterns(monkeypatch):
    # The README: bf16 in NumPy is ml_dtypes.bfloat16 when installed, else uint16
    # arrays holding the bit patterns.
    monkeypatch.setattr(_arrays, "BF16_NUMPY", None)
    a = triton_c.empty([3], dtype="bfloat16")
    assert isinstance(a, np.ndarray) and a.shape == (3,) and a.dtype == np.uint16
    torch = pytest.importorskip("torch")
    t = triton_c.empty([2], dtype="bfloat16", like=torch.zeros(1))
    assert t.dtype == torch.bfloat16 and t.shape == (2,)


# -- key= names parameters on every backend --------------------------------------------

def test_autotune_key_naming_no_parameter_is_refused_on_the_interpreter():
    k = triton_c.kernel("""
    __global__ void k(float *X, int N) {
      int i[BLOCK] = 0 ... BLOCK;
      *?(i < N)(X + i) = N;
    }""")
    x = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="'NOPE'"):
        k[(1,)](x, 3, BLOCK=[4, 8], key=["NOPE"])
    with pytest.raises(ValueError, match="'NOPE'"):
        k[(1,)](x, 3, BLOCK=4, key=("N", "NOPE"))
    k[(1,)](x, 3, BLOCK=[4, 8], key=["N"])  # a parameter: fine
    np.testing.assert_array_equal(x, [3, 3, 3])


# -- Python ints beyond 64 bits for float parameters -----------------------------------

def test_huge_python_ints_for_float_parameters_are_taken_as_their_float():
    k = triton_c.kernel("""
    __global__ void k(double *O, float *P, double d, float f) {
      *O = d;
      *P = f;
    }""")
    o, p = np.zeros(1), np.zeros(1, np.float32)
    for e in (64, 65, 100, 127, 1000):
        k[(1,)](o, p, 2 ** e, 2 ** min(e, 127))
        assert o[0] == np.float64(2.0 ** e)
        assert p[0] == np.float32(2.0 ** min(e, 127))
    k[(1,)](o, p, -(2 ** 70) - 1, 3 ** 50)
    assert o[0] == np.float64(float(-(2 ** 70) - 1))
    assert p[0] == np.float32(float(3 ** 50))
    # Beyond float64's finite range: refused, naming the parameter and the range.
    with pytest.raises(ValueError, match=r"'d'.*does not fit.*float64"):
        k[(1,)](o, p, 2 ** 1024, 1.0)
    # Beyond float32's, as for the same value given as a Python float.
    with pytest.raises(ValueError, match=r"'f'.*does not fit"):
        k[(1,)](o, p, 1.0, float(2 ** 200))
    with pytest.raises(ValueError, match=r"'f'.*does not fit"):
        k[(1,)](o, p, 1.0, 2 ** 200)


def test_huge_python_ints_for_integer_parameters_are_still_refused():
    k = triton_c.kernel("""
    __global__ void k(long *O, long v) {
      *O = v;
    }""")
    with pytest.raises(ValueError, match="does not fit"):
        k[(1,)](np.zeros(1, np.int64), 2 ** 64)


# -- meta agrees with the kernel ------------------------------------------------------

STORE_BLOCK = """
__global__ void k(int *O, int N) {
  *O = BLOCK;
  *(O + 1) = N;
}
"""


@pytest.mark.parametrize("text, value", [("010", 0o10), ("0x10", 16), ("0b101", 5), ("16", 16),
                                         ("-3", -3), ("12u", 12)])
def test_meta_reads_a_define_as_the_kernels_preprocessor_does(text, value):
    k = triton_c.kernel(STORE_BLOCK)
    o = np.zeros(2, np.int32)
    seen = []

    def grid(meta):
        seen.append(meta["BLOCK"])
        return (1,)

    k[grid](o, 0, BLOCK=text)
    assert o[0] == value  # what the kernel saw (C: a leading 0 is octal)
    assert seen == [value]


def test_meta_reads_float_defines_as_c_does():
    from triton_c._grid import _number

    assert _number("1.5") == 1.5 and _number("1e3") == 1000.0 and _number(".5f") == 0.5
    assert _number("0x1p3") == 8.0
    assert _number("1_000") == "1_000"  # not a C literal: the text


def test_bool_grids_are_refused_numpy_bools_too():
    k = triton_c.kernel(STORE_BLOCK)
    o = np.zeros(2, np.int32)
    for g in [(True,), (np.bool_(True),), np.bool_(True), (2, np.bool_(False))]:
        with pytest.raises(TypeError, match="grid"):
            k(o, 0, g, BLOCK=1)
        with pytest.raises(TypeError, match="grid"):
            k[g](o, 0, BLOCK=1)


def test_meta_has_a_0d_tensor_scalar_argument():
    torch = pytest.importorskip("torch")
    k = triton_c.kernel(STORE_BLOCK)
    seen = []

    def grid(meta):
        seen.append(meta["N"])
        return (1,)

    for n in (torch.tensor(16), np.array(17, np.int32), torch.tensor(18)):
        o = np.zeros(2, np.int32)
        k[grid](o, n, BLOCK=1)
        assert o[1] == int(n)  # the kernel takes a 0-d array as its value
    assert seen == [16, 17, 18]


# -- the docs' thread-independence sentences say "atomics aside" ------------------------

def test_thread_independence_claims_name_the_atomics_exception():
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    claims = re.compile(r"do not depend on it|same for any number|identical results for any "
                        r"number of threads|exact, deterministic")
    found = 0
    for rel in ("README.md", os.path.join("docs", "from-triton-python.md")):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        for m in claims.finditer(text):
            found += 1
            around = text[max(0, m.start() - 200):m.end() + 200]
            assert "atomics aside" in around, (rel, around)
    assert found >= 3
