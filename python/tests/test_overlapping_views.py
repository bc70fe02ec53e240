"""Overlapping views passed to one launch (NumPy and PyTorch slices of one array).

Every path sees them as one memory: the interpreter (a store through one argument and a load
of the same element through another is a race it reports, and values follow the program
order), the GPU with host arrays (one copy of their union, one device allocation), CUDA
tensors (one memory already), and the copies that backend='compare' and check_variants run
on. Expected values come from NumPy. The GPU tests skip with the reason without a CUDA device.
"""
import numpy as np
import pytest
import triton_c

SHIFT = """
__global__ void shift(float *X, float *Y) {
  int off[64] = get_program_id(0) * 64 + 0 ... 64;
  *(Y + off) = *(X + off) + 1;
}
"""


def test_race_between_overlapping_slices_is_reported():
    # Program 0 stores x[64:128] through Y; program 1 loads x[64:128] through X.
    k = triton_c.kernel(SHIFT)
    x = np.arange(192, dtype=np.float32)
    before = x.copy()
    with pytest.raises(triton_c.TrapError) as e:
        k(x[0:128], x[64:192], (2,))
    assert e.value.kind == "data_race"
    np.testing.assert_array_equal(x, before)  # a trap leaves the caller's memory as it was


def test_overlapping_slices_without_a_race_follow_program_order():
    # One program: the whole tile of X is loaded before the tile of Y is stored.
    k = triton_c.kernel(SHIFT)
    x = np.arange(65, dtype=np.float32)
    want = x.copy()
    want[1:65] = x[0:64] + 1
    # X and Y are one buffer, x's 65 elements, of which the kernel never stores element 0.
    with pytest.warns(triton_c.LaunchWarning, match=r"X \(one array with Y\): 1 of 65 elements of the array never written \(0\)"):
        k(x[0:64], x[1:65], (1,))
    np.testing.assert_array_equal(x, want)


def test_partial_overlap_names_two_different_arguments():
    # X and Y are one array; Z starts 2 bytes into it. The message named 'X'
    # twice (the group's first array against itself).
    k = triton_c.kernel("""
    __global__ void add(float *X, float *Y, float *Z) {
      int i[16] = 0 ... 16;
      *(Z + i) = *(X + i) + *(Y + i);
    }""")
    raw = np.zeros(70, np.uint8)
    v1, v2 = raw[0:64].view(np.float32), raw[2:66].view(np.float32)
    with pytest.raises(ValueError, match=r"argument 'Z' \(float32\*\) overlaps argument 'X' "
                                         r"\(float32\*\) in memory at an offset that is not"):
        k(v1, v1, v2, (1,))
    assert not raw.any()


def test_overlapping_views_of_other_dtypes_at_a_partial_element_are_refused():
    k = triton_c.kernel("""
    __global__ void f(short *X, int *Y) {
      *Y = *X;
    }""")
    raw = np.zeros(16, np.uint8)
    x = raw[1:9].view(np.int16)  # starts at byte 1
    y = raw[0:8].view(np.int32)  # starts at byte 0: byte 1 is inside Y's element 0
    with pytest.raises(ValueError, match="not a whole number of its elements"):
        k(x, y, (1,))


def test_torch_slices_race_too():
    torch = pytest.importorskip("torch")
    k = triton_c.kernel(SHIFT)
    x = torch.arange(192, dtype=torch.float32)
    with pytest.raises(triton_c.TrapError) as e:
        k(x[0:128], x[64:192], (2,))
    assert e.value.kind == "data_race"



def test_race_report_names_the_parameter_that_made_the_access():
    # Y = x[64:192] (the first parameter), X = x[0:128]: program 0 stores Y[0:64] = x[64:128],
    # program 1 loads X[64:128], the same elements. The report names the load through X with
    # X's own index (x[64]) and program 0's store through Y ("Y[0]"), not "Y[64]" (x[128]).
    k = triton_c.kernel("""
    __global__ void shift(float *Y, float *X) {
      int off[64] = get_program_id(0) * 64 + 0 ... 64;
      *(Y + off) = *(X + off) + 1;
    }""")
    x = np.arange(192, dtype=np.float32)
    with pytest.raises(triton_c.TrapError) as e:
        k(x[64:192], x[0:128], (2,))
    assert e.value.kind == "data_race"
    assert "load of X[64] by program (1, 0, 0) races with a store by program (0, 0, 0)" in (
        e.value.message)
    assert "program (0, 0, 0) stored Y[0] here" in str(e.value)
    assert "[128]" not in str(e.value)


K2 = """
__global__ void k2(float *X, short *Y, int real) {
  int p = get_program_id(0);
  if (real != 0 && p == 0)
    *X = 1.0;
  else
    *(Y + p) = (short)(p + 7);
}
"""


@pytest.mark.parametrize("real", [0, 1])
def test_views_of_different_element_sizes_are_refused_with_the_race_check(real):
    # Programs 0 and 1 store the int16 Y[0] and Y[1], the two halves of the float32 X[0]:
    # different bytes, no race, but the race check counts the memory in one element size, so
    # it refuses such a launch by name rather than report a race that is not there (and a
    # real race across the two sizes, real=1, is refused the same way, never passed as clean).
    k = triton_c.kernel(K2)
    buf = np.zeros(256, np.uint8)
    with pytest.raises(triton_c.TrapError) as e:
        k(buf.view(np.float32)[0:64], buf.view(np.int16)[0:100], real, (2,))
    assert e.value.kind == "invalid_launch"
    assert ("views of one memory with different element sizes: not supported yet with the "
            "race check on; pass race_check=False / --no-race-check") in e.value.message
    np.testing.assert_array_equal(buf, np.zeros(256, np.uint8))
    if real:
        return
    # (the never-written check counts the union in X's elements: only X[0] was stored)
    with pytest.warns(triton_c.LaunchWarning, match=r"\(one array with [A-Z]+\): 63 of 64 elements of the array never written \(1\.\.63\)"):
        k(buf.view(np.float32)[0:64], buf.view(np.int16)[0:100], real, (2,), race_check=False)
    np.testing.assert_array_equal(buf.view(np.int16)[0:2], [7, 8])
    np.testing.assert_array_equal(buf[4:], np.zeros(252, np.uint8))

def test_repeated_launches_see_the_overlap():
    # Launches that repeat an earlier one's options take the package's repeated-launch path:
    # overlapping views must still be one buffer there, after separate arrays made that path.
    k = triton_c.kernel(SHIFT)
    for _ in range(3):
        a, b = np.zeros(128, np.float32), np.zeros(128, np.float32)
        k(a, b, (2,))
        np.testing.assert_array_equal(b, np.ones(128, np.float32))
    for _ in range(3):
        x = np.arange(192, dtype=np.float32)
        with pytest.raises(triton_c.TrapError) as e:
            k(x[0:128], x[64:192], (2,))
        assert e.value.kind == "data_race"


# Each lane stores Y[i] = Z[i], then loads X[i + 64]: with X = x[0:128] and Y = x[64:192] that
# is the element it just stored, so Z gets its own values back and x[64:128] = Z. Two separate
# copies of X and Y (a copying backend that ignores the overlap) would give Z = x[64:128].
STORE_THEN_LOAD = """
__global__ void sl(float *X, float *Y, float *Z) {
  int off[64] = 0 ... 64;
  *(Y + off) = *(Z + off);
  *(Z + off) = *(X + off + 64);
}
"""


def _store_then_load_inputs():
    x = np.arange(192, dtype=np.float32)
    z = 1000 + np.arange(64, dtype=np.float32)
    want_x = x.copy()
    want_x[64:128] = z
    return x, z, want_x, z.copy()


def test_interpreter_store_then_load_through_the_other_view():
    x, z, want_x, want_z = _store_then_load_inputs()
    # X and Y are one buffer, x's 192 elements, of which the kernel stores 64..127 only.
    with pytest.warns(triton_c.LaunchWarning, match=r"\(one array with [A-Z]+\): 128 of 192 elements of the array never written"):
        triton_c.kernel(STORE_THEN_LOAD)(x[0:128], x[64:192], z, (1,))
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(z, want_z)


def test_gpu_launch_binds_one_host_buffer_for_overlapping_views():
    # The binding without a GPU: what a launch hands the backend. Overlapping views are one
    # buffer (on the GPU one copy, uploaded to one allocation and downloaded once), each
    # argument at its byte offset; a separate array is its own buffer.
    from triton_c import _core
    from triton_c import _arrays as A

    kc = triton_c.kernel(STORE_THEN_LOAD).compile()
    x, z, _, _ = _store_then_load_inputs()
    for backend in ("gpu", "interp"):
        got = _core.host_buffers(kc, [A.for_core(x[0:128]), A.for_core(x[64:192]),
                                      A.for_core(z)], backend)
        assert got == [(0, 0, 768), (0, 256, 768), (1, 0, 256)], backend
    # Slices that only touch (x[0:64] and x[64:128]) stay two buffers.
    got = _core.host_buffers(kc, [x[0:64], x[64:128], z], "gpu")
    assert [g[0] for g in got] == [0, 1, 2]
    # A read-only view over a writable one is refused by name, as on the interpreter.
    ro = x[0:128]
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=r"argument 'Y' \(float32\*\) overlaps argument 'X' "
                                         r"\(float32\*\) in memory, and one of them is read-only"):
        _core.host_buffers(kc, [A.for_core(ro), A.for_core(x[64:192]), z], "gpu")


def test_torch_cpu_views_bind_one_host_buffer():
    torch = pytest.importorskip("torch")
    from triton_c import _core
    from triton_c import _arrays as A

    kc = triton_c.kernel(STORE_THEN_LOAD).compile()
    t = torch.arange(192, dtype=torch.float32)
    z = torch.zeros(64)
    got = _core.host_buffers(kc, [A.for_core(t[0:128]), A.for_core(t[64:192]), A.for_core(z)],
                             "gpu")
    assert got == [(0, 0, 768), (0, 256, 768), (1, 0, 256)]


def test_copies_keep_the_overlap():
    # What backend='compare' and check_variants run on: copies in which overlapping views
    # overlap as in the caller's memory, apart from it.
    from triton_c._kernel import _clone_all

    x = np.arange(192, dtype=np.float32)
    y = np.arange(10, dtype=np.float32)
    a, b, c, s = _clone_all([x[0:128], x[64:192], y, 3], host=True)
    assert s == 3
    assert np.shares_memory(a, b) and not np.shares_memory(a, x) and not np.shares_memory(c, y)
    assert b.ctypes.data - a.ctypes.data == 256
    np.testing.assert_array_equal(a, x[0:128])
    np.testing.assert_array_equal(b, x[64:192])
    np.testing.assert_array_equal(c, y)
    # A strided view keeps its strides and its place in the storage.
    m = np.arange(48, dtype=np.float32).reshape(6, 8)
    col, row = _clone_all([m[:, 2], m[3]], host=True)
    assert np.shares_memory(col, row)
    np.testing.assert_array_equal(col, m[:, 2])
    np.testing.assert_array_equal(row, m[3])
    assert col.strides == m[:, 2].strides
    torch = pytest.importorskip("torch")
    t = torch.arange(192, dtype=torch.float32)
    ta, tb, tn = _clone_all([t[0:128], t[64:192], x[0:8]], host=True)
    assert tb.data_ptr() - ta.data_ptr() == 256 and ta.data_ptr() != t.data_ptr()
    assert torch.equal(ta, t[0:128]) and torch.equal(tb, t[64:192])
    ta[64] = -1.0
    assert tb[0].item() == -1.0
    # A tensor over NumPy's memory and the array itself: one copy too.
    u = torch.from_numpy(x)
    ua, ub = _clone_all([u[0:100], x[50:150]], host=True)
    ua[60] = -5.0
    assert ub[10] == -5.0 and x[60] == 60.0


def test_check_variants_sees_the_overlap():
    # check_variants runs each variant on copies: the copies must keep the overlap, or the
    # race between the views goes unreported there.
    k = triton_c.kernel(SHIFT.replace("+ 1;", "+ ONE;"))
    x = np.arange(192, dtype=np.float32)
    with pytest.raises(triton_c.TrapError) as e:
        k(x[0:128], x[64:192], (2,), ONE=[1, 1.0], check_variants=True)
    assert e.value.kind == "data_race"
    x, z, want_x, want_z = _store_then_load_inputs()
    k2 = triton_c.kernel(STORE_THEN_LOAD.replace("+ 64", "+ N"))
    with pytest.warns(triton_c.LaunchWarning, match=r"\(one array with [A-Z]+\): 128 of 192 elements of the array never written"):
        k2(x[0:128], x[64:192], z, (1,), N=[64, 64], check_variants=True)
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(z, want_z)


def test_check_variants_refuses_torch_views_at_a_partial_element_as_a_launch_does():
    # A byte tensor at byte 1 and an int16 tensor at byte 2 of one storage: the int16 view
    # starts half an element into their union, which a launch refuses. check_variants' copies
    # used to fall back to one separate copy per argument here, so the variants ran (and
    # their result was written back) on memory that no longer overlapped.
    torch = pytest.importorskip("torch")
    k = triton_c.kernel("""
    __global__ void f(unsigned char *A, short *B) {
      *(A + 1) = V;
      *B = *B + 1;
    }""")
    base = torch.zeros(16, dtype=torch.uint8)
    a, b = base[1:5], base[2:10].view(torch.int16)
    with pytest.raises(ValueError, match=r"argument 'B' \(int16\*\) overlaps argument 'A' "
                                         r"\(uint8\*\) in memory at an offset that is not a "
                                         r"whole number of its elements: not supported yet"):
        k(a, b, (1,), V=5)
    with pytest.raises(ValueError, match=r"argument 'B' \(int16\*\) overlaps argument 'A' "
                                         r"\(uint8\*\) in memory at an offset that is not a "
                                         r"whole number of its elements: not supported yet"):
        k(a, b, (1,), V=[5, 5], check_variants=True)
    assert base.tolist() == [0] * 16
    # The union of an int32 tensor of 20 bytes and an int64 one inside it is no whole number
    # of int64 elements: refused the same way on both paths.
    base = torch.zeros(32, dtype=torch.uint8)
    k2 = triton_c.kernel("""
    __global__ void g(int *A, long *B) {
      *A = V;
      *B = *B + 1;
    }""")
    a, b = base[0:20].view(torch.int32), base[8:16].view(torch.int64)
    for kw in ({}, {"V": [5, 5], "check_variants": True}):
        with pytest.raises(ValueError, match=r"argument 'B' \(int64\*\) overlaps argument 'A' "
                                             r"\(int32\*\) in memory at an offset that is not"):
            k2(a, b, (1,), **({"V": 5} | kw))
    assert base.tolist() == [0] * 32


def test_same_bytes_read_only_and_writable_are_refused():
    # One array passed as a read-only view and as itself: the interpreter made them two
    # buffers (program 1's store to Y[64] and program 0's load of X[64] were no race), the GPU
    # one copy (any store through Y trapped as a store to a read-only array). Refused by name
    # on every backend, as for overlapping views.
    from triton_c import _core
    from triton_c import _arrays as A
    k = triton_c.kernel("""
    __global__ void shift(float *X, float *Y) {
      int off[64] = get_program_id(0) * 64 + 0 ... 64;
      *(Y + off) = *(X + off + 64) + 1;
    }""")
    x = np.arange(192, dtype=np.float32)
    before = x.copy()
    ro = x.view()
    ro.flags.writeable = False
    msg = (r"argument 'Y' \(float32\*\) overlaps argument 'X' \(float32\*\) in memory, and one "
           r"of them is read-only: not supported yet")
    for grid in ((1,), (2,)):
        with pytest.raises(ValueError, match=msg):
            k(ro, x, grid)
    np.testing.assert_array_equal(x, before)
    for backend in ("interp", "gpu"):
        with pytest.raises(ValueError, match=msg):
            _core.host_buffers(k.compile(), [A.for_core(ro), A.for_core(x)], backend)
    # Both read-only (nothing stored through either) still run.
    k2 = triton_c.kernel("""
    __global__ void sum2(float *X, float *Y, float *Z) {
      int off[64] = 0 ... 64;
      *(Z + off) = *(X + off) + *(Y + off);
    }""")
    z = np.zeros(64, np.float32)
    k2(ro[:64], ro[:64], z, (1,))
    np.testing.assert_array_equal(z, 2 * before[:64])


# -- on a CUDA device (skipped with the reason without one) -------------------------------------


@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore::triton_c.LaunchWarning")
@pytest.mark.parametrize("backend", ["gpu", "compare"])
def test_gpu_numpy_views_are_one_memory(backend):
    x, z, want_x, want_z = _store_then_load_inputs()
    triton_c.kernel(STORE_THEN_LOAD)(x[0:128], x[64:192], z, (1,), backend=backend)
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(z, want_z)


@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore::triton_c.LaunchWarning")
@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("backend", ["gpu", "compare", "interp"])
def test_gpu_torch_views_are_one_memory(device, backend):
    torch = pytest.importorskip("torch")
    x, z, want_x, want_z = _store_then_load_inputs()
    tx, tz = torch.from_numpy(x).to(device), torch.from_numpy(z).to(device)
    triton_c.kernel(STORE_THEN_LOAD)(tx[0:128], tx[64:192], tz, (1,), backend=backend)
    if device == "cuda":
        torch.cuda.synchronize()
    np.testing.assert_array_equal(tx.cpu().numpy(), want_x)
    np.testing.assert_array_equal(tz.cpu().numpy(), want_z)


@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore::triton_c.LaunchWarning")
@pytest.mark.parametrize("backend", ["interp", "compare"])
def test_gpu_cuda_views_with_storages_of_their_own_are_copied_as_one(backend):
    # x[64:192] re-imported through DLPack has a storage of its own, starting 256 bytes into
    # x's. As the group's first argument its storage was taken for the whole union and the
    # copy sliced from a negative offset (torch then refused the other view's place in it).
    torch = pytest.importorskip("torch")
    from torch.utils.dlpack import from_dlpack, to_dlpack
    x, z, want_x, want_z = _store_then_load_inputs()
    tx, tz = torch.from_numpy(x).cuda(), torch.from_numpy(z).cuda()
    ty = from_dlpack(to_dlpack(tx[64:192]))
    from triton_c import _arrays as A
    assert ty.data_ptr() == tx.data_ptr() + 256
    if A.torch_storage(ty)[0] == A.torch_storage(tx)[0]:
        pytest.skip("this torch re-imports the view into x's own storage")
    k = triton_c.kernel(STORE_THEN_LOAD.replace("float *X, float *Y", "float *Y, float *X"))
    k(ty, tx[0:128], tz, (1,), backend=backend)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(tx.cpu().numpy(), want_x)
    np.testing.assert_array_equal(tz.cpu().numpy(), want_z)


@pytest.mark.gpu
def test_gpu_refuses_what_the_interpreter_refuses():
    x, z, _, _ = _store_then_load_inputs()
    ro = x[0:128]
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="one of them is read-only: not supported yet"):
        triton_c.kernel(STORE_THEN_LOAD)(ro, x[64:192], z, (1,), backend="gpu")
