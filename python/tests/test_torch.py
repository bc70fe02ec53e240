"""PyTorch on the CPU: tensors as arguments, gradcheck of the ops, triton_c.function."""

import numpy as np
import pytest

import triton_c

torch = pytest.importorskip("torch")

SCALE = """
__global__ void scale(TYPE *X, TYPE *Y, float s, int N) {
  int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = *?(m)(X + i) * s;
}
"""


@pytest.mark.parametrize("dt", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_cpu_tensors_in_place(dt):
    k = triton_c.kernel(SCALE, outputs=["Y"])
    x = torch.arange(50, dtype=dt)
    y = torch.zeros(50, dtype=dt)
    out = k(x, y, 2.0, 50, lambda opt: [triton_c.cdiv(50, opt.BLOCK)], TYPE=dt, BLOCK=16)
    assert out is y
    assert torch.equal(y, x * 2)


def test_tensor_dtype_error_names_parameter():
    k = triton_c.kernel(SCALE, outputs=["Y"])
    with pytest.raises(TypeError, match=r"argument 'Y' \(float32\*\) expects an array of float32, "
                                        r"got int32"):
        k(torch.zeros(4), torch.zeros(4, dtype=torch.int32), 1.0, 4, (1,), TYPE="float",
          BLOCK=4)


def test_strided_tensor_view_reads_its_storage():
    # A column of a row-major matrix: the kernel gets the view's data pointer and
    # walks the storage with unit stride (the view's stride is the kernel's business).
    k = triton_c.kernel(SCALE, outputs=["Y"])
    m = torch.arange(16, dtype=torch.float32).reshape(4, 4)
    col = m.t()[1]  # elements 1, 5, 9, 13: not contiguous
    assert not col.is_contiguous()
    y = torch.zeros(4)
    k(col, y, 1.0, 4, (1,), TYPE="float", BLOCK=4)
    assert y.tolist() == [1.0, 2.0, 3.0, 4.0]  # storage from the view's start


def test_dot_matches_torch_all_transpositions():
    g = torch.Generator().manual_seed(0)
    for ta in (False, True):
        for tb in (False, True):
            a = torch.randn((24, 40) if ta else (40, 24), generator=g)
            b = torch.randn((16, 24) if tb else (24, 16), generator=g)
            c = triton_c.ops.dot(a, b, ta, tb)
            want = (a.t() if ta else a).double() @ (b.t() if tb else b).double()
            triton_c.testing.assert_close(c, want.float(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
def test_gradcheck_dot(ta, tb):
    g = torch.Generator().manual_seed(1)
    a = torch.randn((12, 10) if ta else (10, 12), dtype=torch.float64, generator=g,
                    requires_grad=True)
    b = torch.randn((9, 12) if tb else (12, 9), dtype=torch.float64, generator=g,
                    requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, y: triton_c.ops.dot(x, y, ta, tb), (a, b))


def test_gradcheck_softmax():
    x = torch.randn(3, 37, dtype=torch.float64, generator=torch.Generator().manual_seed(2),
                    requires_grad=True)
    assert torch.autograd.gradcheck(triton_c.ops.softmax, (x,))
    y = triton_c.ops.softmax(x)
    triton_c.testing.assert_close(y, torch.softmax(x, dim=1).detach())


def test_user_function_with_autograd():
    class _cube(triton_c.function):
        kernel = triton_c.kernel("""
        __global__ void cube(double *X, double *Y, double *DY, double *DX, int N, int BWD) {
          int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
          bool m[BLOCK] = i < N;
          double x[BLOCK] = m ? *(X + i) : 0;
          if (BWD) {
            *?(m)(DX + i) = 3 * x * x * *?(m)(DY + i);
          } else {
            *?(m)(Y + i) = x * x * x;
          }
        }""")

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            y = triton_c.empty(x.shape, x.dtype, like=x)
            n = int(np.prod(triton_c.shape(x)))
            _cube.kernel(x, y, x, x, n, 0, (triton_c.cdiv(n, 16),), BLOCK=16)
            return y

        @staticmethod
        def backward(ctx, dy):
            (x,) = ctx.saved_tensors
            dx = torch.empty_like(x)
            _cube.kernel(x, x, dy.contiguous(), dx, x.numel(), 1,
                         (triton_c.cdiv(x.numel(), 16),), BLOCK=16)
            return dx

    x = torch.linspace(-2, 2, 21, dtype=torch.float64, requires_grad=True)
    y = _cube.apply(x)
    assert torch.allclose(y, x.detach() ** 3)
    y.sum().backward()
    assert torch.allclose(x.grad, 3 * x.detach() ** 2)
    assert torch.autograd.gradcheck(_cube.apply, (x,))
    # NumPy: forward only
    np.testing.assert_allclose(_cube.apply(np.array([2.0])), [8.0])


def test_trap_leaves_tensor_untouched():
    k = triton_c.kernel("""__global__ void oob(float *X, float *Y) {
      int i[4] = 0 ... 4;
      *(Y + i) = 5.0;
      *(Y + i) = *(X + i + 2);
    }""")
    x, y = torch.ones(4), torch.zeros(4)
    with pytest.raises(triton_c.TrapError) as e:
        k(x, y, (1,))
    assert e.value.kind == "out_of_bounds" and e.value.lane == 2
    assert torch.equal(y, torch.zeros(4))
    assert np.array_equal(e.value.state["Y"], np.full(4, 5.0, np.float32))


# -- autograd's safety rules (a kernel's stores are in-place writes) --------------

ADD100 = """
__global__ void add100(float *Y, int N) {
  int i[BLOCK] = 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = *?(m)(Y + i) + 100;
}
"""


def test_written_tensor_version_bumped_so_autograd_refuses_stale_saved_tensor():
    # loss = w * x saves x for w's gradient; the kernel then overwrites x. Without
    # the version bump backward silently used the new x (w.grad 102 instead of 2).
    k = triton_c.kernel(ADD100)
    w = torch.ones(1, requires_grad=True)
    x = torch.full((1,), 2.0)
    loss = (w * x).sum()
    v0 = x._version
    k(x, 1, (1,), BLOCK=1)
    assert x._version > v0
    assert x.item() == 102.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_unwritten_tensor_keeps_its_version():
    k = triton_c.kernel(SCALE)
    x, y = torch.ones(4), torch.zeros(4)
    v = x._version
    k(x, y, 2.0, 4, (1,), TYPE="float", BLOCK=4)
    assert x._version == v  # only read
    assert y._version > 0


@pytest.mark.parametrize("make", [lambda: torch.zeros(4, requires_grad=True),
                                  lambda: torch.nn.Parameter(torch.zeros(4)),
                                  lambda: torch.zeros(4, requires_grad=True) * 1])
def test_tensor_that_requires_grad_is_not_written_behind_autograd(make):
    k = triton_c.kernel(ADD100)
    t = make()
    with pytest.raises(RuntimeError, match="requires grad"):
        k(t, 4, (1,), BLOCK=4)
    assert torch.equal(t.detach(), torch.zeros(4))
    with torch.no_grad():  # as torch allows in-place ops there
        k(t, 4, (1,), BLOCK=4)
    assert torch.equal(t.detach(), torch.full((4,), 100.0))


def test_inference_tensor_is_not_written_outside_inference_mode():
    # torch refuses in-place updates to inference tensors outside inference mode;
    # the kernel's stores are refused the same way, before anything is written
    # (the other written argument keeps its contents too).
    k = triton_c.kernel(SCALE)
    x = torch.arange(4.0)
    with torch.inference_mode():
        y = torch.zeros(4)
    other = torch.zeros(4)
    with pytest.raises(RuntimeError, match="argument 'Y' is an inference tensor"):
        k(x, y, 3.0, 4, (1,), TYPE="float", BLOCK=4)
    assert torch.equal(y, torch.zeros(4))
    two = triton_c.kernel("""
    __global__ void two(float *A, float *B) {
      int i[4] = 0 ... 4;
      *(A + i) = 1.0f;
      *(B + i) = 2.0f;
    }""")
    with pytest.raises(RuntimeError, match="argument 'B' is an inference tensor"):
        two(other, y, (1,))
    assert torch.equal(other, torch.zeros(4)) and torch.equal(y, torch.zeros(4))
    k(y, other, 3.0, 4, (1,), TYPE="float", BLOCK=4)  # read: allowed
    with torch.inference_mode():  # as torch allows in-place ops there
        k(x, y, 3.0, 4, (1,), TYPE="float", BLOCK=4)
    assert y.tolist() == [0.0, 3.0, 6.0, 9.0]


def test_overlap_with_a_tensor_that_requires_grad_says_why_it_is_read_only():
    # leaf and leaf.detach() share memory; the user passed nothing read-only, so
    # the message says which argument the kernel may only read, and why.
    k = triton_c.kernel(SCALE)
    leaf = torch.arange(4.0, requires_grad=True)
    out = leaf.detach()
    with pytest.raises(ValueError, match=r"one of them is read-only.*; here 'X' requires grad "
                                         r"\(read-only for kernels while grad mode is on\)"):
        k(leaf, out, 2.0, 4, (1,), TYPE="float", BLOCK=4)
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_tensor_that_requires_grad_may_be_read():
    k = triton_c.kernel(SCALE)
    x = torch.arange(4.0, requires_grad=True)
    y = torch.zeros(4)
    k(x, y, 3.0, 4, (1,), TYPE="float", BLOCK=4)
    assert y.tolist() == [0.0, 3.0, 6.0, 9.0]


def test_stride0_and_transposed_views_as_inputs():
    # The gradient of c.sum() is an expanded (stride-0) tensor; a transposed view
    # is passed with its strides, as Triton users do.
    k = triton_c.kernel("""
    __global__ void f(float *Y, float *X, int s0, int s1) {
      int r[4] = 0 ... 4;
      int c[2] = 0 ... 2;
      *(Y + r[:, newaxis] * 2 + c[newaxis, :]) = *(X + r[:, newaxis] * s0 + c[newaxis, :] * s1);
    }""")
    g = torch.ones(()).expand(4, 2)
    assert g.stride() == (0, 0)
    y = torch.zeros(4, 2)
    k(y, g, *g.stride(), (1,))
    assert torch.equal(y, torch.ones(4, 2))
    a = torch.arange(8.0).reshape(2, 4)
    k(y, a.t(), *a.t().stride(), (1,))
    assert torch.equal(y, a.t())


def test_strided_output_view_only_its_elements_change():
    k = triton_c.kernel("""
    __global__ void f(float *Y, int s) {
      int i[4] = 0 ... 4;
      *(Y + i * s) = 7.0;
    }""")
    m = torch.zeros(4, 3)
    col = m[:, 1]
    k(col, col.stride(0), (1,))
    expect = torch.zeros(4, 3)
    expect[:, 1] = 7
    assert torch.equal(m, expect)
    assert m._version > 0  # a view's write bumps its base's version, as torch does
