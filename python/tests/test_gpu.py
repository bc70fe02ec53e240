"""On a CUDA device: zero-copy tensors, the compare backend, gradcheck, auto-tuning.

Skipped with the reason when there is no CUDA device (conftest.py).
"""

import numpy as np
import pytest

import triton_c
from triton_c import _core

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

SCALE = """
__global__ void scale(TYPE *X, TYPE *Y, float s, int N) {
  int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = *?(m)(X + i) * s;
}
"""


def test_cuda_tensors_zero_copy():
    k = triton_c.kernel(SCALE, outputs=["Y"])
    x = torch.arange(1000, dtype=torch.float32, device="cuda")
    y = torch.zeros(1003, dtype=torch.float32, device="cuda")[3:]  # a view at an offset
    out = k(x, y, 2.0, 1000, lambda opt: [triton_c.cdiv(1000, opt.BLOCK)], TYPE="float",
            BLOCK=128)
    assert out is y
    assert _core.last_device_pointers() == [x.data_ptr(), y.data_ptr()]
    torch.cuda.synchronize()
    assert torch.equal(y, x * 2)


def test_shared_memory_visible_through_aliases():
    # X and Y start at the same address with different lengths: two buffers
    # for a copying backend, one memory for a zero-copy one.
    src = """__global__ void alias(float *X, float *Y) {
      *X = 42.0;
      float v = *Y;
      *(X + 1) = v;
    }"""
    a = torch.zeros(8, device="cuda")
    triton_c.kernel(src)(a, a[:4], (1,))
    torch.cuda.synchronize()
    assert a[1].item() == 42.0


def test_runs_on_callers_stream():
    k = triton_c.kernel(SCALE, outputs=["Y"])
    s = torch.cuda.Stream()
    x = torch.ones(1 << 20, device="cuda")
    y = torch.zeros_like(x)
    with torch.cuda.stream(s):
        k(x, y, 3.0, x.numel(), (triton_c.cdiv(x.numel(), 1024),), TYPE="float", BLOCK=1024)
    s.synchronize()
    assert torch.equal(y, torch.full_like(x, 3.0))


def test_compare_backend_and_mismatch_free():
    k = triton_c.kernel(SCALE, outputs=["Y"])
    x = torch.randn(300, device="cuda")
    y = torch.zeros(300, device="cuda")
    k(x, y, 0.5, 300, (3,), TYPE="float", BLOCK=128, backend="compare")
    assert torch.equal(y, x * 0.5)


def test_numpy_on_gpu_copies_and_back():
    k = triton_c.kernel(SCALE, outputs=["Y"])
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, np.float32)
    k(x, y, 2.0, 100, (1,), TYPE="float", BLOCK=128, backend="gpu")
    np.testing.assert_array_equal(y, 2 * x)


def test_env_interp_runs_cuda_tensors_on_host(monkeypatch):
    monkeypatch.setenv("TRITON_C_BACKEND", "interp")
    k = triton_c.kernel(SCALE, outputs=["Y"])
    x = torch.arange(64, dtype=torch.float32, device="cuda")
    y = torch.zeros(64, device="cuda")
    k(x, y, 2.0, 64, (1,), TYPE="float", BLOCK=64)
    assert y.is_cuda and torch.equal(y, x * 2)


FILL = """
__global__ void fill(float *Y, int N) {
  int i[BLOCK] = 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = (float)i + 1;
}
"""


@pytest.mark.parametrize("how", ["env_interp", "compare", "check_variants"])
def test_copy_paths_refuse_writing_a_cuda_tensor_that_requires_grad(how, monkeypatch):
    # The direct launch refuses it (RuntimeError); so do the paths that run on copies.
    k = triton_c.kernel(FILL)
    opts = dict(BLOCK=16)
    if how == "env_interp":
        monkeypatch.setenv("TRITON_C_BACKEND", "interp")
    elif how == "compare":
        opts["backend"] = "compare"
    else:
        monkeypatch.setenv("TRITON_C_BACKEND", "interp")
        opts.update(BLOCK=[16, 32], check_variants=True)
    w = torch.zeros(16, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="'Y' is a tensor that requires grad"):
        k[(1,)](w, 16, **opts)
    assert not w.detach().any()  # nothing written
    with torch.no_grad():
        k[(1,)](w, 16, **opts)
    assert torch.equal(w.detach().cpu(), torch.arange(1, 17, dtype=torch.float32))


@pytest.mark.parametrize("how", ["env_interp", "compare", "check_variants"])
def test_copy_paths_keep_stores_outside_a_strided_cuda_view(how, monkeypatch):
    # A strided view's bounds are its whole storage: the kernel's Y[0..15] from
    # base[::2]'s first element is every element of base (as a direct launch writes).
    k = triton_c.kernel(FILL)
    opts = dict(BLOCK=16)
    if how == "env_interp":
        monkeypatch.setenv("TRITON_C_BACKEND", "interp")
    elif how == "compare":
        opts["backend"] = "compare"
    else:
        monkeypatch.setenv("TRITON_C_BACKEND", "interp")
        opts.update(BLOCK=[16, 32], check_variants=True)
    base = torch.zeros(16, device="cuda")
    k[(1,)](base[::2], 16, **opts)
    assert torch.equal(base.cpu(), torch.arange(1, 17, dtype=torch.float32))


def test_compare_keeps_stores_outside_a_strided_numpy_view():
    k = triton_c.kernel(FILL)
    base = np.zeros(16, np.float32)
    k[(1,)](base[::2], 16, BLOCK=16, backend="compare")
    np.testing.assert_array_equal(base, np.arange(1, 17, dtype=np.float32))


@pytest.mark.parametrize("ta,tb", [(False, False), (True, True)])
def test_gradcheck_dot_cuda(ta, tb):
    a = torch.randn((24, 20) if ta else (20, 24), dtype=torch.float64, device="cuda",
                    requires_grad=True)
    b = torch.randn((16, 24) if tb else (24, 16), dtype=torch.float64, device="cuda",
                    requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, y: triton_c.ops.dot(x, y, ta, tb), (a, b))


def test_gradcheck_softmax_cuda():
    x = torch.randn(4, 77, dtype=torch.float64, device="cuda", requires_grad=True)
    assert torch.autograd.gradcheck(triton_c.ops.softmax, (x,))


def test_dot_half_matches_torch():
    a = torch.randn(256, 128, device="cuda", dtype=torch.float16)
    b = torch.randn(128, 192, device="cuda", dtype=torch.float16)
    c = triton_c.ops.dot(a, b)
    triton_c.testing.assert_close(c.float(), (a.float() @ b.float()), rtol=2e-2, atol=2e-2)


def test_autotune_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    src = SCALE
    k = triton_c.kernel(src, outputs=["Y"])
    x = torch.randn(1 << 16, device="cuda")
    y = torch.zeros_like(x)
    grid = lambda opt: [triton_c.cdiv(x.numel(), opt.BLOCK)]
    k(x, y, 2.0, x.numel(), grid, TYPE="float", BLOCK=[256, 1024], num_warps=[4, 8])
    assert not k.last_tune_from_cache
    assert "BLOCK=256" in k.last_tune_report and "BLOCK=1024" in k.last_tune_report
    torch.cuda.synchronize()
    assert torch.equal(y, x * 2)
    tuned = dict(k._tuned)
    k(x, y, 2.0, x.numel(), grid, TYPE="float", BLOCK=[256, 1024], num_warps=[4, 8])
    assert k._tuned == tuned  # same key (shapes, dtypes, scalars): no new tuning
    k(x, y, 3.0, x.numel(), grid, TYPE="float", BLOCK=[256, 1024], num_warps=[4, 8], key=["N"])
    k(x, y, 5.0, x.numel(), grid, TYPE="float", BLOCK=[256, 1024], num_warps=[4, 8], key=["N"])
    assert len(k._tuned) == len(tuned) + 1  # key=['N']: the scalar s is not part of it
    # A new kernel object: the tuner's cache answers.
    k2 = triton_c.kernel(src, outputs=["Y"])
    k2(x, y, 2.0, x.numel(), grid, TYPE="float", BLOCK=[256, 1024], num_warps=[4, 8])
    assert k2.last_tune_from_cache  # the same key as the first call
    torch.cuda.synchronize()
    assert torch.equal(y, x * 2)
