"""Errors: bad arguments name the parameter; compile errors; every trap kind as TrapError."""

import numpy as np
import pytest

import triton_c

AXPY = """
__global__ void axpy(float *X, float *Y, float a, int N) {
  int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = a * *?(m)(X + i) + *?(m)(Y + i);
}
"""


@pytest.fixture
def axpy():
    return triton_c.kernel(AXPY, outputs=["Y"])


def test_wrong_dtype_names_parameter(axpy):
    x, y = np.ones(8, np.float64), np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=r"argument 'X' \(float32\*\) expects an array of "
                                        r"float32, got float64"):
        axpy(x, y, 1.0, 8, (1,), BLOCK=8)


def test_dtype_the_language_lacks_is_named(axpy):
    # An ndarray in the other byte order, a record or object array is an array:
    # the message says what is wrong with its dtype.
    y = np.zeros(8, np.float32)
    swapped = np.ones(8, np.dtype(np.float32).newbyteorder("S"))
    with pytest.raises(TypeError, match=r"argument 'X' \(float32\*\) expects an array of "
                                        r"float32, got a NumPy array of dtype .*, in the other "
                                        r"byte order; pass arr.astype"):
        axpy(swapped, y, 2.0, 8, (1,), BLOCK=8)
    for bad in (np.zeros(8, [("a", "<f4")]), np.zeros(8, object), np.zeros(8, "U3")):
        with pytest.raises(TypeError, match=r"argument 'X' .*got a NumPy array of dtype .*, "
                                            r"which the language has no type for"):
            axpy(bad, y, 2.0, 8, (1,), BLOCK=8)
    assert not y.any()
    axpy(swapped.astype(swapped.dtype.newbyteorder("=")), y, 2.0, 8, (1,), BLOCK=8)
    assert (y == 2.0).all()


def test_missing_and_extra_arguments(axpy):
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=r"missing argument for parameter 'N' \(int32\)"):
        axpy(x, y, 1.0, grid=(1,), BLOCK=8)
    with pytest.raises(TypeError, match=r"takes 4 arguments \(X, Y, a, N\) but got 5"):
        axpy(x, y, 1.0, 8, 9, grid=(1,), BLOCK=8)


def test_scalar_out_of_range(axpy):
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(ValueError, match=r"argument 'N' \(int32\) = 4294967296 does not fit"):
        axpy(x, y, 1.0, 2**32, (1,), BLOCK=8)
    with pytest.raises(ValueError, match=r"argument 'N' \(int32\) = 2\.5 does not fit"):
        axpy(x, y, 1.0, 2.5, (1,), BLOCK=8)
    with pytest.raises(ValueError, match=r"argument 'N'.* does not fit"):
        axpy(x, y, 1.0, 2**70, (1,), BLOCK=8)


def test_scalar_given_an_array_and_array_given_a_scalar(axpy):
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=r"argument 'X' \(float32\*\) expects an array"):
        axpy(3, y, 1.0, 8, (1,), BLOCK=8)
    with pytest.raises(TypeError, match=r"argument 'a' \(float32\) .*array"):
        axpy(x, y, x, 8, (1,), BLOCK=8)


def test_strided_view_is_bounded_by_its_storage(axpy):
    # A strided view's buffer is the storage it views: inside it is fine, past it traps.
    base = np.arange(16, dtype=np.float32).reshape(8, 2)
    x = base[:, 0]
    y = np.zeros(8, np.float32)
    axpy(x, y, 1.0, 8, (1,), BLOCK=8)  # reads base's first 8 elements (unit stride)
    np.testing.assert_array_equal(y, np.arange(8, dtype=np.float32))
    with pytest.raises(triton_c.TrapError) as e:
        axpy(base[4:, 0], y, 1.0, 16, (1,), BLOCK=16)  # 8 + 16 elements > 16 in storage
    assert e.value.kind == "out_of_bounds"
    np.testing.assert_array_equal(y, np.arange(8, dtype=np.float32))  # unchanged


def test_compile_error_text():
    k = triton_c.kernel("__global__ void f(float *X) {\n  int y = undeclared + 1;\n}\n")
    with pytest.raises(triton_c.CompileError) as e:
        k(np.zeros(1, np.float32), (1,))
    text = str(e.value)
    assert "<kernel>:2:" in text and "error:" in text and "undeclared" in text
    assert "^" in text  # the caret line


def test_bad_grid_expression(axpy):
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(ValueError, match="grid"):
        axpy(x, y, 1.0, 8, ("cdiv(N, NOPE)",), BLOCK=8)


def _run_trap(src, arrays, scalars=(), grid=(1,), **kw):
    k = triton_c.kernel(src)
    before = [a.copy() for a in arrays]
    with pytest.raises(triton_c.TrapError) as e:
        k(*arrays, *scalars, grid, **kw)
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b)  # the caller's arrays are untouched
    return e.value


def test_trap_out_of_bounds_fields_and_state():
    src = """__global__ void oob(float *X, float *Y) {
  int i[4] = 0 ... 4;
  *(Y + i) = 1.0;
  *(Y + i) = *(X + i + 8);
}
"""
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(4, np.float32)
    e = _run_trap(src, [x, y])
    assert e.kind == "out_of_bounds"
    assert e.program == (0, 0, 0)
    assert e.lane == 2
    assert e.file == "<kernel>" and e.line == 4
    assert str(e).startswith("<kernel>:4:") and "trap: out_of_bounds" in str(e)
    assert "in kernel 'oob'" in str(e)
    # The state at the trap: Y was written by line 3 before the trap.
    np.testing.assert_array_equal(e.state["Y"], np.ones(4, np.float32))


def test_trap_state_of_a_broadcast_view_keeps_its_strides():
    # A stride-0 view of one element: the state is that view over a copy of the
    # buffer's bytes, not the view copied out (2**40 x 2**20 of them would need
    # exabytes and hide the trap behind a MemoryError).
    k = triton_c.kernel("""__global__ void f(float *X, float *Y, int n) {
  int i[4] = 0 ... 4;
  *(Y + i) = *(X + i * 0);
  *(Y + i + n) = 2.0;
}""")
    x = np.broadcast_to(np.float32(3), (2**40, 2**20))
    y = np.zeros(4, np.float32)
    with pytest.raises(triton_c.TrapError) as e:
        k(x, y, 100, (1,))
    assert e.value.kind == "out_of_bounds"
    sx = e.value.state["X"]
    assert sx.shape == (2**40, 2**20) and sx.strides == (0, 0) and sx[5, 7] == 3
    np.testing.assert_array_equal(e.value.state["Y"], np.full(4, 3, np.float32))


INT_OP = """__global__ void op(int *X, int *D, int *Y) {
  int i[4] = 0 ... 4;
  int x[4] = *(X + i);
  int d[4] = *(D + i);
  *(Y + i) = OP;
}
"""


@pytest.mark.parametrize("op,xs,ds,kind", [
    ("x / d", [1, 2, 3, 4], [1, 1, 0, 1], "division_by_zero"),
    ("x % d", [1, 2, -2147483648, 4], [1, 1, -1, 1], "division_overflow"),
    ("x << d", [1, 2, 3, 4], [1, 1, 40, 1], "shift_out_of_range"),
])
def test_trap_integer_kinds(op, xs, ds, kind):
    x, d = np.array(xs, np.int32), np.array(ds, np.int32)
    y = np.full(4, 7, np.int32)
    e = _run_trap(INT_OP, [x, d, y], OP=op)
    assert e.kind == kind and e.lane == 2 and e.line == 5


def test_trap_float_to_int():
    src = """__global__ void f2i(float *X, int *Y) {
  int i[4] = 0 ... 4;
  *(Y + i) = (int)*(X + i);
}
"""
    e = _run_trap(src, [np.array([1, 2, 1e20, 3], np.float32), np.zeros(4, np.int32)])
    assert e.kind == "float_to_int_out_of_range" and e.lane == 2


def test_trap_undefined_value():
    src = """__global__ void poison(float *X, float *Y) {
  int i[4] = 0 ... 4;
  bool m[4] = i < 3;
  float x[4] = *?(m)(X + i);
  *(Y + i) = x;
}
"""
    e = _run_trap(src, [np.ones(4, np.float32), np.zeros(4, np.float32)])
    assert e.kind == "undefined_value" and e.lane == 3


def test_trap_assertion():
    src = """__global__ void check(int *X, int N) {
  int i[4] = 0 ... 4;
  assert(*(X + i) < N, "X must be below N");
}
"""
    e = _run_trap(src, [np.array([0, 1, 9, 2], np.int32)], scalars=[5])
    assert e.kind == "assertion_failed" and e.lane == 2
    assert e.lane_index == (2,)
    assert "X must be below N" in e.message


def test_trap_lane_of_a_2d_tile():
    # X[2, 3] = 9 is the first element, in row-major order, not below 5:
    # lane (2, 3) of the [4, 8] tile, flat 2 * 8 + 3 = 19.
    src = """__global__ void check(int *X, int N) {
  int r[4] = 0 ... 4;
  int c[8] = 0 ... 8;
  assert(*(X + r[:, newaxis] * 8 + c[newaxis, :]) < N, "X must be below N");
}
"""
    x = np.zeros((4, 8), np.int32)
    x[2, 3] = 9
    x[3, 1] = 7
    e = _run_trap(src, [x], scalars=[5])
    assert e.kind == "assertion_failed"
    assert e.lane == 19 and e.lane_index == (2, 3)
    assert "lane [2, 3] (flat 19) is false" in e.message
    assert "lane [2, 3] (flat 19) of a [4, 8] tile" in e.report


def test_trap_misaligned_claim():
    src = """__global__ void f(float *X, int n __multipleof(8)) {
  *X = n;
}
"""
    e = _run_trap(src, [np.zeros(1, np.float32)], scalars=[3])
    assert e.kind == "misaligned" and e.program is None and "multiple of 8" in e.message


def test_trap_step_limit():
    src = """__global__ void spin(int *X, int n) {
  int k = 0;
  while (k < n) {
    k = k + *X;
  }
  *X = k;
}
"""
    e = _run_trap(src, [np.zeros(1, np.int32)], scalars=[1], max_seconds=0.3)
    assert e.kind == "step_limit"


def test_trap_invalid_launch_grid():
    src = "__global__ void f(float *X) {\n  *X = 1.0;\n}\n"
    e = _run_trap(src, [np.zeros(1, np.float32)], grid=(65536, 65536))
    assert e.kind == "invalid_launch" and "more than 2^31 programs" in e.message
    with pytest.raises(ValueError, match="at least 1"):
        triton_c.kernel(src)(np.zeros(1, np.float32), (0,))


def test_flag_options_and_helpers_validate_their_arguments(axpy):
    # A string is not a flag ('no' was taken as true); shapes are integers;
    # do_bench names its parameter.
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=r"trace='no': expected True or False"):
        axpy(x, y, 2.0, 8, (1,), BLOCK=8, trace="no")
    with pytest.raises(TypeError, match=r"check_variants='x': expected True or False"):
        axpy(x, y, 2.0, 8, (1,), BLOCK=8, check_variants="x")
    assert not y.any()
    with pytest.raises(TypeError, match=r"empty: shape=\[2.7\]"):
        triton_c.empty([2.7])
    assert triton_c.empty([2, 3]).shape == (2, 3)
    with pytest.raises(ValueError, match=r"do_bench: rep=0"):
        triton_c.testing.do_bench(lambda: None, rep=0)
    with pytest.raises(ValueError, match=r"do_bench: device='tpu'"):
        triton_c.testing.do_bench(lambda: None, device="tpu")
