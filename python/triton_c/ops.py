"""Ready-made ops with autograd: PyTriton's fused-transposition ``dot`` and a row softmax.

>>> c = triton_c.ops.dot(a, b)                      # a @ b
>>> c = triton_c.ops.dot(a, b, transpose_a=True)    # a.T @ b, fused into the kernel
>>> y = triton_c.ops.softmax(x)                     # softmax over the last axis of a 2-D x
"""

from __future__ import annotations

from typing import Any

from . import _arrays as A
from ._grid import cdiv
from ._kernel import kernel
from .function import function

__all__ = ["dot", "softmax"]

# PyTriton's `dot` (its tutorial, "Fused Transpositions and Auto-Tuning"),
# driven by the same macros. Three additions, so that any shape and float64
# work: loads and the store are masked against M, N and K (the tutorial's listing
# needs multiples of the tile sizes); the prefetch at the end of the loop is
# guarded (the tutorial's reads one tile past the operands); the accumulator type
# is the macro ACC (float as in the tutorial; double for float64 operands). The
# tutorial's __multipleof(8) claims on the leading dimensions are passed as LD_ATTR
# when they hold.
DOT_SRC = r"""
__global__ void dot(TYPE *A, TYPE *B, TYPE *C, int M, int N, int K,
                    int lda LD_ATTR, int ldb LD_ATTR, int ldc LD_ATTR) {
  // prologue
  int pm = get_program_id(0);
  int pn = get_program_id(1);
  int rm[TM] = pm * TM + 0 ... TM;
  int rn[TN] = pn * TN + 0 ... TN;
  int rk[TK] = 0 ... TK;
  ACC c[TM, TN] = 0;
  // pointers to operands
  TYPE *pa[SHAPE_A] = A + rk[BROADCAST_AK] * STRIDE_AK + rm[BROADCAST_AM] * STRIDE_AM;
  TYPE *pb[SHAPE_B] = B + rk[BROADCAST_BK] * STRIDE_BK + rn[BROADCAST_BN] * STRIDE_BN;
  // prefetches operands
  bool ca[SHAPE_A] = (rk[BROADCAST_AK] < K) && (rm[BROADCAST_AM] < M);
  bool cb[SHAPE_B] = (rk[BROADCAST_BK] < K) && (rn[BROADCAST_BN] < N);
  TYPE a[SHAPE_A] = ca ? *pa : 0;
  TYPE b[SHAPE_B] = cb ? *pb : 0;
  // reduction loop
  for (int k = K; k > 0; k -= TK) {
    c += USE_A @ USE_B;
    pa = pa + TK * STRIDE_AK;
    pb = pb + TK * STRIDE_BK;
    ca = (rk[BROADCAST_AK] < k - TK) && (rm[BROADCAST_AM] < M);
    cb = (rk[BROADCAST_BK] < k - TK) && (rn[BROADCAST_BN] < N);
    a = ca ? *pa : 0;
    b = cb ? *pb : 0;
  }
  // epilogue
  int rcm[TM] = pm * TM + 0 ... TM;
  int rcn[TN] = pn * TN + 0 ... TN;
  TYPE *pc[TM, TN] = C + rcn[newaxis, :] + rcm[:, newaxis] * ldc;
  bool cc[TM, TN] = (rcm[:, newaxis] < M) && (rcn[newaxis, :] < N);
  *?(cc) pc = c;
}
"""

SOFTMAX_FWD_SRC = r"""
__global__ void softmax_fwd(TYPE *X, TYPE *Y, int N, int ld) {
  int row = get_program_id(0);
  int cols[BLOCK] = 0 ... BLOCK;
  bool m[BLOCK] = cols < N;
  ACC x[BLOCK] = m ? *(X + row * ld + cols) : -F32_INFINITY;
  ACC z[BLOCK] = x - x[max];
  ACC e[BLOCK] = exp(z);
  ACC s = e[+];
  *?(m)(Y + row * ld + cols) = e / s;
}
"""

SOFTMAX_BWD_SRC = r"""
__global__ void softmax_bwd(TYPE *Y, TYPE *DY, TYPE *DX, int N, int ld) {
  int row = get_program_id(0);
  int cols[BLOCK] = 0 ... BLOCK;
  bool m[BLOCK] = cols < N;
  ACC y[BLOCK] = m ? *(Y + row * ld + cols) : 0;
  ACC dy[BLOCK] = m ? *(DY + row * ld + cols) : 0;
  ACC p[BLOCK] = y * dy;
  ACC s = p[+];
  *?(m)(DX + row * ld + cols) = y * (dy - s);
}
"""


def _acc(dtype: Any) -> str:
    return "double" if A.dtype_name(dtype) == "float64" else "float"


def _shape(x: Any) -> tuple:
    return tuple(x.shape)


def _empty(shape, dtype, like):
    from . import empty

    return empty(shape, dtype, like=like)


def _contiguous(x: Any) -> Any:
    if A.is_torch(x):
        return x.contiguous()
    import numpy as np

    return np.ascontiguousarray(x)


_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _check_operand(op: str, name: str, x: Any) -> None:
    if not A.is_array(x):
        raise TypeError(f"{op}: {name} must be a NumPy array or a tensor, got {type(x).__name__}")
    if len(_shape(x)) != 2:
        raise ValueError(f"{op}: {name} must be 2-D, got shape {_shape(x)}")
    if A.dtype_name(x.dtype) not in _FLOATS:
        raise TypeError(f"{op}: {name} has dtype {A.dtype_name(x.dtype)}; expected one of "
                        f"{', '.join(_FLOATS)}")


class _dot(function):
    kernel = kernel(DOT_SRC, ["C"])

    @staticmethod
    def _call(a, b, transpose_a, transpose_b):
        _check_operand("dot", "a", a)
        _check_operand("dot", "b", b)
        for n, v in (("transpose_a", transpose_a), ("transpose_b", transpose_b)):
            if not isinstance(v, bool):
                raise TypeError(f"dot: {n}={v!r}: expected a bool")
        if A.is_cuda(a) != A.is_cuda(b):
            raise ValueError("dot: a and b must both be on the GPU or both on the host")
        a, b = _contiguous(a), _contiguous(b)
        # extract shapes
        shape_a = _shape(a)
        shape_b = _shape(b)
        M, Ka = shape_a[0], shape_a[1]
        Kb, N = shape_b[0], shape_b[1]
        # transpose shapes
        if transpose_a:
            M, Ka = Ka, M
        if transpose_b:
            Kb, N = N, Kb
        if Ka != Kb:
            raise ValueError(f"dot: inner dimensions differ ({Ka} and {Kb})")
        if A.dtype_name(a.dtype) != A.dtype_name(b.dtype):
            raise TypeError(f"dot: operands of different dtypes ({a.dtype} and {b.dtype})")
        # contiguous dimensions
        lda = M if transpose_a else Ka
        ldb = Kb if transpose_b else N
        ldc = N
        # data-type
        dtype = a.dtype
        # allocate output
        c = _empty([M, N], dtype, like=a)
        if M == 0 or N == 0:
            return c
        if Ka == 0:
            c[...] = 0
            return c
        # compute
        grid = lambda opt: [cdiv(M, opt.d('TM')), cdiv(N, opt.d('TN'))]
        # macros -- not necessary but makes kernel source-code simpler
        macros = {# handle A transposition
                  'USE_A'       : '^a'         if transpose_a else 'a',
                  'STRIDE_AK'   : 'lda'        if transpose_a else '1',
                  'STRIDE_AM'   : '1'          if transpose_a else 'lda',
                  'BROADCAST_AK': ':, newaxis' if transpose_a else 'newaxis, :',
                  'BROADCAST_AM': 'newaxis, :' if transpose_a else ':, newaxis',
                  'SHAPE_A'     : 'TK, TM'     if transpose_a else 'TM, TK',
                  # handle B transposition
                  'USE_B'       : '^b'         if transpose_b else 'b',
                  'STRIDE_BK'   : '1'          if transpose_b else 'ldb',
                  'STRIDE_BN'   : 'ldb'        if transpose_b else '1',
                  'BROADCAST_BK': 'newaxis, :' if transpose_b else ':, newaxis',
                  'BROADCAST_BN': ':, newaxis' if transpose_b else 'newaxis, :',
                  'SHAPE_B'     : 'TN, TK'     if transpose_b else 'TK, TN'}
        aligned = all(x % 8 == 0 for x in (lda, ldb, ldc))
        return _dot.kernel(a, b, c, M, N, Ka, lda, ldb, ldc, grid,
                           AT=transpose_a, BT=transpose_b, TYPE=dtype, ACC=_acc(dtype),
                           LD_ATTR='__multipleof(8)' if aligned else '',
                           TM=[32, 64, 128], TN=[32, 64, 128], TK=[8], **macros)

    @staticmethod
    def forward(ctx, a, b, transpose_a=False, transpose_b=False):
        ctx.save_for_backward(a, b)
        ctx.t_a = transpose_a
        ctx.t_b = transpose_b
        return _dot._call(a, b, transpose_a, transpose_b)

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        t_a, t_b = ctx.t_a, ctx.t_b
        if not t_a and not t_b:
            da = _dot._call(dy, b, False, True)
            db = _dot._call(a, dy, True, False)
        elif not t_a and t_b:
            da = _dot._call(dy, b, False, False)
            db = _dot._call(dy, a, True, False)
        elif t_a and not t_b:
            da = _dot._call(b, dy, False, True)
            db = _dot._call(a, dy, False, False)
        else:
            da = _dot._call(b, dy, True, True)
            db = _dot._call(dy, a, True, True)
        return da, db, None, None


def dot(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False) -> Any:
    """``op(a) @ op(b)`` with op a fused transposition; differentiable for tensors.

    >>> c = triton_c.ops.dot(a, b, transpose_b=True)   # a @ b.T
    """
    return _dot.apply(a, b, transpose_a, transpose_b)


def _block(n: int) -> int:
    b = 1
    while b < n:
        b *= 2
    return b


class _softmax(function):
    fwd = kernel(SOFTMAX_FWD_SRC, ["Y"])
    bwd = kernel(SOFTMAX_BWD_SRC, ["DX"])

    @staticmethod
    def forward(ctx, x):
        _check_operand("softmax", "x", x)
        x = _contiguous(x)
        rows, n = _shape(x)
        y = _empty([rows, n], x.dtype, like=x)
        if rows and n:
            _softmax.fwd(x, y, n, n, (rows,), TYPE=x.dtype, ACC=_acc(x.dtype),
                         BLOCK=_block(n))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        dy = _contiguous(dy)
        rows, n = _shape(y)
        dx = _empty([rows, n], y.dtype, like=y)
        if rows and n:
            _softmax.bwd(y, dy, dx, n, n, (rows,), TYPE=y.dtype, ACC=_acc(y.dtype),
                         BLOCK=_block(n))
        return dx


def softmax(x: Any) -> Any:
    """Softmax over the rows of a 2-D array (the last axis); differentiable for tensors.

    >>> y = triton_c.ops.softmax(torch.randn(4, 100, dtype=torch.float64, requires_grad=True))
    """
    return _softmax.apply(x)
