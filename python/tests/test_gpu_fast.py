"""On a CUDA device: the repeated-launch path (Kernel._fast, _core.DeviceLauncher).

A call repeated with the same keywords and options skips the Python-side
checks; these tests check that it launches (the launcher's count), that it
computes what the full path computes, and that every case the full path
treats specially (another dtype, a tensor autograd watches, a scalar that
does not fit, a bad grid, a broken claim) still gets the full path's answer.

Skipped with the reason when there is no CUDA device (conftest.py).
"""

import pytest

import triton_c

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

SCALE = """
__global__ void scale(TYPE *X, TYPE *Y, float s, int N) {
  int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = *?(m)(X + i) * s;
}
"""

CLAIM = """
__global__ void copy(float *X, float *Y, int N __multipleof(16)) {
  int i[16] = get_program_id(0) * 16 + 0 ... 16;
  *(Y + i) = *(X + i);
}
"""


def fast_launches(k) -> int:
    return sum(fe.launcher.launches for fe in k._fast.values())


def test_repeated_launch_takes_the_fast_path_and_computes_the_same():
    k = triton_c.kernel(SCALE, outputs=["Y"])
    # Sizes of one argument class (neither 1 nor a multiple of 16): a launch of
    # another class compiles its kernel through the full path first
    # (test_specialize.py).
    for step, n in enumerate([1000, 777, 4095, 3]):
        x = torch.randn(n, device="cuda")
        y = torch.zeros_like(x)
        out = k[(triton_c.cdiv(n, 128),)](x, y, 1.5, n, TYPE="float", BLOCK=128)
        assert out is y
        torch.cuda.synchronize()
        assert torch.equal(y, x * 1.5)
        assert fast_launches(k) == step  # the first call built the launcher


def test_grid_lambda_sees_defines_and_scalars_and_is_called_once_per_launch():
    k = triton_c.kernel(SCALE, outputs=["Y"])
    calls = []

    def grid(meta):
        calls.append((meta["BLOCK"], meta["N"]))
        return (triton_c.cdiv(meta["N"], meta["BLOCK"]),)

    for n in (300, 5000):
        x = torch.randn(n, device="cuda")
        y = torch.zeros_like(x)
        k[grid](x, y, 2.0, n, TYPE="float", BLOCK=256)
        torch.cuda.synchronize()
        assert torch.equal(y, x * 2)
    assert calls == [(256, 300), (256, 5000)]
    assert fast_launches(k) == 1


def test_written_tensor_version_is_bumped_on_every_launch():
    k = triton_c.kernel(SCALE, outputs=["Y"])
    x = torch.randn(64, device="cuda")
    y = torch.zeros_like(x)
    versions = []
    for _ in range(3):
        k(x, y, 1.0, 64, (1,), TYPE="float", BLOCK=64)
        versions.append((x._version, y._version))
    assert fast_launches(k) == 2
    assert [v[1] for v in versions] == [versions[0][1], versions[0][1] + 1,
                                         versions[0][1] + 2]
    assert len({v[0] for v in versions}) == 1  # X is only read


def test_other_dtype_after_fast_launches_is_the_full_paths_type_error():
    k = triton_c.kernel(SCALE, outputs=["Y"])
    x = torch.randn(64, device="cuda")
    y = torch.zeros_like(x)
    k(x, y, 1.0, 64, (1,), TYPE="float", BLOCK=64)
    k(x, y, 1.0, 64, (1,), TYPE="float", BLOCK=64)
    with pytest.raises(TypeError, match="'X'.*float32.*float16|expects an array of f32"):
        k(x.half(), y, 1.0, 64, (1,), TYPE="float", BLOCK=64)


def test_tensor_requiring_grad_as_output_is_refused_after_fast_launches():
    k = triton_c.kernel(SCALE, outputs=["Y"])
    x = torch.randn(64, device="cuda")
    y = torch.zeros_like(x)
    k(x, y, 1.0, 64, (1,), TYPE="float", BLOCK=64)
    k(x, y, 1.0, 64, (1,), TYPE="float", BLOCK=64)
    w = torch.zeros(64, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="'Y'"):
        k(x, w, 1.0, 64, (1,), TYPE="float", BLOCK=64)
    assert torch.count_nonzero(w.detach()).item() == 0
    with torch.no_grad():  # allowed without grad, as in-place ops are
        k(x, w, 1.0, 64, (1,), TYPE="float", BLOCK=64)
    torch.cuda.synchronize()
    assert torch.equal(w.detach(), x)


def test_scalar_out_of_range_and_bad_grid_after_fast_launches():
    k = triton_c.kernel(SCALE, outputs=["Y"])
    x = torch.randn(64, device="cuda")
    y = torch.zeros_like(x)
    k(x, y, 1.0, 64, (1,), TYPE="float", BLOCK=64)
    k(x, y, 1.0, 64, (1,), TYPE="float", BLOCK=64)
    with pytest.raises(ValueError, match="'N'.*does not fit"):
        k(x, y, 1.0, 2**40, (1,), TYPE="float", BLOCK=64)
    with pytest.raises(ValueError, match="grid dimension 0 .* at least 1"):
        k(x, y, 1.0, 64, (0,), TYPE="float", BLOCK=64)
    with pytest.raises(TypeError, match="grid"):
        k(x, y, 1.0, 64, (1.0,), TYPE="float", BLOCK=64)


def test_broken_multipleof_claim_traps_after_fast_launches():
    k = triton_c.kernel(CLAIM, outputs=["Y"])
    x = torch.arange(64, dtype=torch.float32, device="cuda")
    y = torch.zeros_like(x)
    k(x, y, 64, (4,))
    k(x, y, 32, (2,))
    assert fast_launches(k) == 1
    with pytest.raises(triton_c.TrapError, match="multiple of 16"):
        k(x, y, 40, (2,))


def test_fast_path_launches_on_the_current_stream():
    k = triton_c.kernel(SCALE, outputs=["Y"])
    x = torch.ones(1 << 20, device="cuda")
    y = torch.zeros_like(x)
    grid = (triton_c.cdiv(x.numel(), 1024),)
    k(x, y, 1.0, x.numel(), grid, TYPE="float", BLOCK=1024)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        k(x, y, 5.0, x.numel(), grid, TYPE="float", BLOCK=1024)
    s.synchronize()
    assert fast_launches(k) == 1
    assert torch.equal(y, torch.full_like(x, 5.0))


COLSUM = """
__global__ void colsum(float *X, float *Y, int M, int N) {
  int c[128] = get_program_id(0) * 128 + 0 ... 128;
  bool m[128] = c < N;
  float acc[128] = 0;
  for (int r = 0; r < M; r++)
    acc += *?(m)(X + r * N + c);
  *?(m)(Y + c) = acc;
}
"""


def test_fast_path_loop_prefetch_on_narrow_and_wide_grids():
    # The loop loads one trip ahead (option prefetch) on a grid of at most 16
    # warps a multiprocessor; a wider grid runs the kernel compiled without it
    # (its own cache entry): both, in turn, through the fast path.
    k = triton_c.kernel(COLSUM, outputs=["Y"])
    for step, n in enumerate([1000, 299999, 1000, 299999]):
        x = torch.randint(-8, 8, (5, n), device="cuda").float()
        y = torch.zeros(n, device="cuda")
        k(x, y, 5, n, (triton_c.cdiv(n, 128),), num_warps=4)
        torch.cuda.synchronize()
        assert torch.equal(y, x.sum(dim=0)), (step, n)
    assert fast_launches(k) >= 2
