"""Argument specialisation at launch (docs/gpu-perf.md, "Argument specialisation").

The GPU backend compiles each kernel for its launch's argument classes
(integers equal to 1 or divisible by 16, 16-byte aligned pointers). The fast
path's launcher (_core.DeviceLauncher) finds the compiled kernel by a key that
includes the class, so a launch of another class never reuses a kernel
compiled for one: the CPU tests check that key (no device needed), the GPU
tests that launches of one kernel with arguments of different classes are
each right and that repeated classes take the fast path.
"""

import pytest

import triton_c
from triton_c import _kernel

torch = pytest.importorskip("torch")

SCALE = """
__global__ void scale(float *X, float *Y, float s, int N) {
  int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = *?(m)(X + i) * s;
}
"""


def cpu_launcher():
    """A fast-path launcher for CPU tensors (device -1: get_device() of a CPU
    tensor), which computes its key exactly as for CUDA tensors."""
    k = triton_c.kernel(SCALE).compile([("BLOCK", "128")])
    return _kernel._core.DeviceLauncher(k, -1, 4, 0, [torch.float32, torch.float32, None, None],
                                        torch.Tensor, lambda ts: None)


def test_fast_path_key_includes_the_argument_classes():
    dl = cpu_launcher()
    x = torch.zeros(4096)
    y = torch.zeros(4096)
    assert x.data_ptr() % 16 == 0 and y.data_ptr() % 16 == 0
    key = dl.variant((x, y, 1.5, 1024), False)
    # X, Y aligned; s a float (never classified); N = 1024 divisible by 16.
    assert key == "spec=DD.D"
    # Same classes, other values: the same kernel.
    assert dl.variant((x, y, 2.0, 2048), False) == key
    assert dl.variant((x[16:], y[4:], 1.5, 0), False) == key
    # Each class change is another kernel.
    assert dl.variant((x, y, 1.5, 1000), False) == "spec=DD.."
    assert dl.variant((x, y, 1.5, 1), False) == "spec=DD.1"
    assert dl.variant((x[1:], y, 1.5, 1024), False) == "spec=.D.D"
    assert dl.variant((x, y[2:], 1.5, 1024), False) == "spec=D..D"
    # What the launcher would not launch has no key (the full path takes it).
    assert dl.variant((x, y, 1.5, "1024"), False) is None
    assert dl.variant((x.double(), y, 1.5, 1024), False) is None
    assert dl.variant((x, y, 1.5, 2 ** 40), False) is None  # does not fit an int


def test_disable_opt_environment_is_checked(monkeypatch):
    # Read when a device's backend is first made (device -7: never used
    # elsewhere in the process); a bad name is a ValueError naming it.
    monkeypatch.setenv("TRITON_C_DISABLE_OPT", "specialize,bogus")
    k = triton_c.kernel(SCALE).compile([("BLOCK", "128")])
    with pytest.raises(ValueError, match="TRITON_C_DISABLE_OPT=specialize,bogus: unknown "
                                         "optimisation 'bogus'"):
        _kernel._core.DeviceLauncher(k, -7, 4, 0, [torch.float32, torch.float32, None, None],
                                     torch.Tensor, lambda ts: None)
    monkeypatch.setenv("TRITON_C_DISABLE_OPT", "specialize")
    _kernel._core.DeviceLauncher(k, -8, 4, 0, [torch.float32, torch.float32, None, None],
                                 torch.Tensor, lambda ts: None)
    monkeypatch.delenv("TRITON_C_DISABLE_OPT")


@pytest.mark.gpu
def test_one_kernel_launched_with_every_class_is_right():
    k = triton_c.kernel(SCALE, outputs=["Y"])

    def fast():
        return sum(fe.launcher.launches for fe in k._fast.values())

    x = torch.randn(4096 + 1, device="cuda")
    seen = set()
    # (N, offset of X's view): N divisible by 16, not, equal to 1; X aligned or
    # one float in. Every launch is checked; a class seen before is launched
    # by the fast path (its kernel was compiled by the full path's launch).
    for n, off in [(1024, 0), (1001, 0), (1, 0), (1024, 0), (1001, 0), (4096, 1), (1024, 1),
                   (4096, 0), (1, 0), (777, 1), (4096, 1), (1002, 0)]:
        xs = x[off:off + n]
        # 64 more elements than N: a kernel of another class could store past
        # N (N = 1024's kernel stores whole runs of 4); they must stay -7.
        y = torch.full((n + 64,), -7.0, device="cuda")
        before = fast()
        out = k[(triton_c.cdiv(n, 128),)](xs, y, 1.5, n, BLOCK=128)
        assert out is y
        torch.cuda.synchronize()
        assert torch.equal(y[:n], xs * 1.5), (n, off)
        assert torch.equal(y[n:], torch.full((64,), -7.0, device="cuda")), (n, off)
        cls = (n % 16 == 0, n == 1, off == 0)
        if cls in seen:
            assert fast() == before + 1, (n, off)
        seen.add(cls)


@pytest.mark.gpu
def test_broken_multipleof_claim_still_traps_with_specialisation():
    k = triton_c.kernel("""
__global__ void copy(float *X, float *Y, int N __multipleof(16)) {
  int i[16] = get_program_id(0) * 16 + 0 ... 16;
  bool m[16] = i < N;
  *?(m)(Y + i) = *?(m)(X + i);
}
""", outputs=["Y"])
    x = torch.arange(64, dtype=torch.float32, device="cuda")
    y = torch.zeros_like(x)
    k(x, y, 64, (4,))
    torch.cuda.synchronize()
    assert torch.equal(x, y)
    with pytest.raises(triton_c.TrapError, match="multiple of 16"):
        k(x, y, 40, (3,))
