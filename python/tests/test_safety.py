"""What a PyTorch/NumPy user relies on: no silent wrong launch, nothing written that the
kernel did not store, read-only memory never written, autograd's checks kept, Ctrl-C."""

import ctypes
import gc
import math
import os
import signal
import threading
import time
import warnings

import numpy as np
import pytest

import triton_c

INC = """
__global__ void inc(float *Z, float *X, int N) {
  int i[BLOCK] = 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Z + i) = *?(m)(X + i) + 100;
}
"""

# Counts its programs: every program adds 1 to C[0].
COUNT = """
__global__ void count(int *C) {
  atomic_add(C, 1);
}
"""

TWO_OUT = """
__global__ void two(float *Y, float *Z, int N) {
  int i[BLOCK] = 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = 1.0;
  *?(m)(Z + i) = 2.0;
}
"""


# -- 1. grids -------------------------------------------------------------------

def test_string_grid_is_one_expression_not_its_characters():
    k = triton_c.kernel(COUNT)
    c = np.zeros(1, np.int32)
    k(c, "128")  # 128 programs (was (1, 2, 8) = 16: the characters)
    assert c[0] == 128
    c[0] = 0
    k(c, grid="cdiv(100, 8), 2")
    assert c[0] == 13 * 2
    c[0] = 0
    k[("4", 3)](c)
    assert c[0] == 12


@pytest.mark.parametrize("grid", [1.5, True, (2.0,), (1, 1, 1, 1), (), "", object(), [None]])
def test_bad_grids_are_type_errors_naming_the_grid(grid):
    k = triton_c.kernel(COUNT)
    c = np.zeros(1, np.int32)
    with pytest.raises(TypeError, match=r"grid="):
        k(c, grid=grid)
    assert c[0] == 0


def test_float_grid_refused_even_after_the_int_grid_was_cached():
    k = triton_c.kernel(COUNT)
    c = np.zeros(1, np.int32)
    k(c, (8,))
    with pytest.raises(TypeError, match=r"8\.0 is a float"):
        k(c, (8.0,))
    assert c[0] == 8


def test_grid_lambda_gets_meta_with_defines_and_scalars():
    k = triton_c.kernel(INC)
    x, z = np.ones(64, np.float32), np.zeros(64, np.float32)
    seen = {}

    def grid(meta):
        seen.update(block=meta["BLOCK"], n=meta["N"], d=meta.d("BLOCK"), a=meta.BLOCK,
                    w=meta["num_warps"], has="BLOCK" in meta)
        return (triton_c.cdiv(meta["N"], meta["BLOCK"]),)

    k(z, x, 64, grid, BLOCK=64)
    assert seen == dict(block=64, n=64, d=64, a=64, w=4, has=True)
    np.testing.assert_array_equal(z, 101)


def test_subscript_launch_and_keyword_parameters():
    k = triton_c.kernel(INC, outputs=["Z"])
    x = np.arange(8, dtype=np.float32)
    z = np.zeros(8, np.float32)
    out = k[(1,)](z, x, N=8, BLOCK=8)
    assert out is z
    np.testing.assert_array_equal(z, x + 100)
    z[:] = 0
    k(X=x, Z=z, N=4, grid=(1,), BLOCK=8)
    np.testing.assert_array_equal(z, np.r_[x[:4] + 100, np.zeros(4)])
    with pytest.raises(TypeError, match=r"multiple values for parameter 'N'"):
        k(z, x, 8, (1,), N=8, BLOCK=8)
    with pytest.raises(TypeError, match=r"missing argument for parameter 'N'"):
        k(z, X=x, grid=(1,), BLOCK=8)
    with pytest.raises(TypeError, match=r"already has a grid"):
        k[(1,)](z, x, 8, grid=(1,), BLOCK=8)


# -- 2. writes: exactly the kernel's stores, never read-only memory ---------------------

def test_overlapping_views_keep_every_output():
    k = triton_c.kernel(INC)
    buf = np.arange(8, dtype=np.float32)
    k(buf[1:], buf[:-1], 7, (1,), BLOCK=8)  # one program: loads, then stores
    np.testing.assert_array_equal(buf, [0, 100, 101, 102, 103, 104, 105, 106])


def test_coverage_warning_of_overlapping_views_names_both():
    # Z = buf[2:10] and X = buf[0:8] overlap: the interpreter counts them as one array of
    # 10 elements, so the warning names both and says the indices are the array's
    # (Z's own unwritten elements, Z[4..7], are buf[6..9]; buf[0..1] is X's alone).
    k = triton_c.kernel(INC)
    buf = np.arange(16, dtype=np.float32)
    with pytest.warns(triton_c.LaunchWarning) as rec:
        k(buf[2:10], buf[0:8], 4, (1,), BLOCK=8)
    msgs = [str(r.message) for r in rec]
    assert any("Z (one array with X): 6 of 10 elements of the array never written (0..1, 6..9)"
               in m for m in msgs), msgs
    with pytest.warns(triton_c.LaunchWarning) as rec:  # one view per array: its own count
        k(np.zeros(8, np.float32), np.zeros(8, np.float32), 4, (1,), BLOCK=8)
    assert any("Z: 4 of 8 elements never written (4..7)" in str(r.message) for r in rec)


def test_one_buffer_as_two_dtypes_keeps_both_stores():
    k = triton_c.kernel("""
    __global__ void both(float *F, int *I) {
      *F = 1.5;
      *(I + 1) = 7;
    }""")
    buf = np.zeros(2, np.float32)
    k(buf, buf.view(np.int32), (1,))
    assert buf[0] == 1.5
    assert buf.view(np.int32)[1] == 7


def test_read_only_output_refused_and_nothing_written():
    k = triton_c.kernel(TWO_OUT)
    y = np.zeros(8, np.float32)
    z = np.zeros(8, np.float32)
    z.flags.writeable = False
    with pytest.raises(ValueError, match=r"argument 'Z' is read-only"):
        k(y, z, 8, (1,), BLOCK=8)
    np.testing.assert_array_equal(y, 0)  # Y's store came first and was undone
    np.testing.assert_array_equal(z, 0)


def test_immutable_bytes_are_never_written():
    k = triton_c.kernel(INC)
    data = bytes(32)
    z = np.frombuffer(data, np.float32)
    with pytest.raises(ValueError, match="read-only"):
        k(z, np.ones(8, np.float32), 8, (1,), BLOCK=8)
    assert data == bytes(32)


def test_read_only_input_is_fine():
    k = triton_c.kernel(INC)
    x = np.arange(8, dtype=np.float32)
    x.flags.writeable = False
    z = np.zeros(8, np.float32)
    k(z, x, 8, (1,), BLOCK=8)
    np.testing.assert_array_equal(z, np.arange(8) + 100)


def test_read_only_memmap(tmp_path):
    path = tmp_path / "x.bin"
    np.arange(8, dtype=np.float32).tofile(path)
    x = np.memmap(path, dtype=np.float32, mode="r", shape=(8,))
    k = triton_c.kernel(INC)
    z = np.zeros(8, np.float32)
    k(z, x, 8, (1,), BLOCK=8)  # read: fine
    np.testing.assert_array_equal(z, np.arange(8) + 100)
    with pytest.raises(ValueError, match="read-only"):
        k(x, z, 8, (1,), BLOCK=8)  # written: refused, no segfault
    np.testing.assert_array_equal(np.fromfile(path, np.float32), np.arange(8))


def test_check_variants_with_read_only_inputs():
    k = triton_c.kernel(INC)
    x = np.arange(64, dtype=np.float32)
    x.flags.writeable = False
    z = np.zeros(64, np.float32)
    k(z, x, 64, lambda m: (1,), BLOCK=[64, 128], check_variants=True)
    np.testing.assert_array_equal(z, np.arange(64) + 100)


def test_trap_leaves_arrays_unchanged_and_state_shows_the_stores():
    k = triton_c.kernel("""
    __global__ void f(float *Y, int N) {
      int i[8] = 0 ... 8;
      *(Y + i) = 5.0;
      *(Y + i + N) = 6.0;
    }""")
    y = np.zeros(12, np.float32)
    with pytest.raises(triton_c.TrapError) as e:
        k(y, 8, (1,))  # the second store runs past the end
    assert e.value.kind == "out_of_bounds"
    np.testing.assert_array_equal(y, 0)
    np.testing.assert_array_equal(e.value.state["Y"], [5] * 8 + [0] * 4)


def test_trap_state_of_a_strided_view():
    k = triton_c.kernel("""
    __global__ void f(float *Y, int s) {
      *Y = 3.0;
      *(Y + s) = 4.0;
      *(Y + 1000) = 1.0;
    }""")
    base = np.zeros((4, 3), np.float32)
    col = base[:, 1]
    with pytest.raises(triton_c.TrapError) as e:
        k(col, 3, (1,))
    np.testing.assert_array_equal(base, 0)
    np.testing.assert_array_equal(e.value.state["Y"], [3, 4, 0, 0])


def test_strided_views_by_their_strides():
    # Triton's habit: pass views and their strides.
    k = triton_c.kernel("""
    __global__ void copy(float *Y, float *X, int sy, int sx) {
      int i[4] = 0 ... 4;
      *(Y + i * sy) = *(X + i * sx) * 2;
    }""")
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    out = np.zeros((4, 4), np.float32)
    k(out[:, 2], a[1], 4, 1, (1,))  # row 1 into column 2
    expect = np.zeros((4, 4), np.float32)
    expect[:, 2] = a[1] * 2
    np.testing.assert_array_equal(out, expect)
    # a reversed view (negative stride): its storage is the whole array
    k(out[0], a[::-1, 0], 1, -4, (1,))
    np.testing.assert_array_equal(out[0], [24, 16, 8, 0])


# -- 3. keywords, defines, caches -------------------------------------------------

DIV = """
__global__ void div(float *Y) {
  *Y = 5 / D;
}
"""


def test_define_cache_tells_2_from_2_0():
    k = triton_c.kernel(DIV)
    y = np.zeros(1, np.float32)
    k(y, (1,), D=2.0)
    assert y[0] == 2.5
    k(y, (1,), D=2)
    assert y[0] == 2.0  # C's integer division


@pytest.mark.parametrize("bad", [None, object(), [None]])
def test_bad_define_values_are_type_errors(bad):
    k = triton_c.kernel(DIV)
    with pytest.raises(TypeError, match=r"define D="):
        k(np.zeros(1, np.float32), (1,), D=bad)


def test_huge_index_scalar_does_not_fit():
    class Big:
        def __index__(self):
            return 2 ** 80

    k = triton_c.kernel(INC)
    with pytest.raises(ValueError, match=r"argument 'N' \(int32\) = .* does not fit"):
        k(np.zeros(8, np.float32), np.zeros(8, np.float32), Big(), (1,), BLOCK=8)


@pytest.mark.parametrize("typo,option", [("max_secnds", "max_seconds"), ("backed", "backend"),
                                         ("num_warp", "num_warps"), ("race_chek", "race_check")])
def test_misspelt_options_are_type_errors(typo, option):
    k = triton_c.kernel(INC)
    z = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=rf"'{typo}'.*did you mean {option}="):
        k(z, z, 8, (1,), BLOCK=8, **{typo: 1})


@pytest.mark.parametrize("v", [float("nan"), -1, 0, float("inf"), "1"])
def test_bad_max_seconds(v):
    k = triton_c.kernel(INC)
    z = np.zeros(8, np.float32)
    with pytest.raises((ValueError, TypeError), match="max_seconds"):
        k(z, z, 8, (1,), BLOCK=8, max_seconds=v)


def test_unused_define_warns_with_did_you_mean():
    k = triton_c.kernel(INC)
    z = np.zeros(8, np.float32)
    with pytest.warns(triton_c.CompileWarning, match=r"BLOKC=.*did you mean BLOCK\?"):
        k(z, z, 8, (1,), BLOCK=8, BLOKC=8)


def test_variant_bomb_refused_before_expanding():
    k = triton_c.kernel(INC)
    z = np.zeros(8, np.float32)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="more than 4096 variants"):
        k(z, z, 8, (1,), BLOCK=list(range(1000)), TYPE=list(range(1000)))
    with pytest.raises(ValueError, match="more than 4096 variants"):
        k(z, z, 8, (1,), BLOCK=list(range(10 ** 6)))
    assert time.perf_counter() - t0 < 60  # (not a timing test: a hang guard)


def test_mistyped_kernel_path_is_not_source(tmp_path):
    with pytest.raises(FileNotFoundError, match="inc.tc"):
        triton_c.kernel(str(tmp_path / "inc.tc"))
    p = tmp_path / "real.tc"
    p.write_text(INC)
    k = triton_c.kernel(str(p))
    z = np.zeros(8, np.float32)
    k(z, z, 8, (1,), BLOCK=8)
    np.testing.assert_array_equal(z, 100)
    k2 = triton_c.kernel(p)  # a PathLike
    k2(z, z, 8, (1,), BLOCK=8)
    np.testing.assert_array_equal(z, 200)


def test_non_utf8_source_bytes_give_compile_error(tmp_path):
    p = tmp_path / "bad.tc"
    p.write_bytes(b"__global__ void f(float *X) {\n  int y = \xff\xfe;\n}\n")
    with pytest.raises(triton_c.CompileError) as e:
        triton_c.kernel(str(p))(np.zeros(1, np.float32), (1,))
    assert "error" in str(e.value)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensorVersioned(ctypes.Structure):  # DLPack 1.0, dlpack.h
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


class Dlpack10:
    """A DLPack 1.0 producer over a float32 NumPy array, written from the DLPack
    header (not by the package): given max_version it exports a versioned capsule
    whose flags carry DLPACK_FLAG_BITMASK_READ_ONLY (1) when `read_only`; without
    max_version a read-only array is refused (BufferError), as NumPy 2 does."""

    def __init__(self, a, read_only):
        self.a, self.read_only, self.keep = a, read_only, []

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, stream=None, max_version=None, **kw):
        a = self.a
        if max_version is None or max_version[0] < 1:
            if self.read_only:
                raise BufferError("cannot export a read-only array without DLPack 1.0")
            return a.__dlpack__()
        shape = (ctypes.c_int64 * a.ndim)(*a.shape)
        strides = (ctypes.c_int64 * a.ndim)(*(st // a.itemsize for st in a.strides))
        mt = _DLManagedTensorVersioned(major=1, minor=0, flags=1 if self.read_only else 0)
        mt.dl_tensor = _DLTensor(data=a.ctypes.data, device=_DLDevice(1, 0), ndim=a.ndim,
                                 dtype=_DLDataType(2, 32, 1), shape=shape, strides=strides)
        self.keep += [shape, strides, mt]
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                       ctypes.c_void_p]
        return new(ctypes.addressof(mt), b"dltensor_versioned", None)


def test_dlpack_read_only_flag_keeps_memory_unwritten():
    # A DLPack 1.0 array marked read-only (a JAX array, NumPy 2's read-only arrays)
    # is read, never written; one not so marked is written in place.
    k = triton_c.kernel(INC)
    x = np.arange(8, dtype=np.float32)
    z = np.zeros(8, np.float32)
    k(z, Dlpack10(x, read_only=True), 8, (1,), BLOCK=8)  # read: fine
    np.testing.assert_array_equal(z, np.arange(8) + 100)
    with pytest.raises(ValueError, match=r"argument 'Z' is read-only"):
        k(Dlpack10(x, read_only=True), z, 8, (1,), BLOCK=8)
    np.testing.assert_array_equal(x, np.arange(8))
    w = np.zeros(8, np.float32)
    k(Dlpack10(w, read_only=False), x, 8, (1,), BLOCK=8)
    np.testing.assert_array_equal(w, np.arange(8) + 100)


def test_dlpack_producer_without_max_version_still_works():
    # An older producer whose __dlpack__ takes no max_version (TypeError) gets the
    # plain call, and its array is written as before DLPack 1.0.
    w = np.zeros(8, np.float32)

    class Old:
        def __dlpack__(self, stream=None):
            return w.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    triton_c.kernel(INC)(Old(), np.arange(8, dtype=np.float32), 8, (1,), BLOCK=8)
    np.testing.assert_array_equal(w, np.arange(8) + 100)


def test_dlpack_capsule_returned_twice_is_refused_not_freed_twice():
    x = np.arange(8, dtype=np.float32)
    cap = x.__dlpack__()

    class Twice:
        def __dlpack__(self, stream=None, **kw):
            return cap

        def __dlpack_device__(self):
            return (1, 0)

    k = triton_c.kernel(INC)
    z = np.zeros(8, np.float32)
    k(z, Twice(), 8, (1,), BLOCK=8)  # the first use consumes the capsule
    np.testing.assert_array_equal(z, np.arange(8) + 100)
    # ... and marks it used, as DLPack consumers must (otherwise a second import of the
    # same capsule made two owners of one tensor: a use after free, which crashed CI).
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    assert get_name(cap) == b"used_dltensor"
    for _ in range(20):
        with pytest.raises(TypeError, match="argument 'X'"):
            k(z, Twice(), 8, (1,), BLOCK=8)
        gc.collect()


# -- 4. warnings, debugging options, asm ----------------------------------------

def test_compiler_warning_reaches_python():
    k = triton_c.kernel("""
    __global__ void f(char *Y) {
      *Y = 300;
    }""")
    with pytest.warns(triton_c.CompileWarning, match="300"):
        k(np.zeros(1, np.int8), (1,))


def test_unwritten_output_warns():
    k = triton_c.kernel(INC)
    z = np.zeros(16, np.float32)
    with pytest.warns(triton_c.LaunchWarning, match=r"Z: 8 of 16 elements never written"):
        k(z, np.zeros(16, np.float32), 8, (1,), BLOCK=8)


RACE = """
__global__ void race(int *C) {
  *C = get_program_id(0);
}
"""


def test_race_check_option():
    k = triton_c.kernel(RACE)
    c = np.zeros(1, np.int32)
    for on in ({}, {"race_check": True}):  # on by default
        with pytest.raises(triton_c.TrapError) as e:
            k(c, (4,), **on)
        assert e.value.kind == "data_race"
        assert c[0] == 0
    k(c, (4,), race_check=False)  # switched off: no trap, one of the stores is left
    assert c[0] in range(4)
    with pytest.raises(TypeError, match="race_check"):
        k(c, (4,), race_check="yes")
    with pytest.raises(ValueError, match="race_check"):
        k(c, (4,), race_check=True, backend="gpu")


def test_race_check_counts_bytes_not_elements():
    # Program p stores byte p of the float X[0] through a char *: four different bytes, no
    # shared memory, no race. Two programs storing one byte race, named by the float holding it.
    k = triton_c.kernel("""
    __global__ void bytes(float *X, int same) {
      int p = get_program_id(0);
      char *b = (char *)X;
      if (same) *(b + (p == 3 ? 2 : p)) = (char)1;
      else *(b + p) = (char)(p + 1);
    }""")
    x = np.zeros(1, np.float32)
    k(x, 0, (4,))
    assert x.view(np.uint8).tolist() == [1, 2, 3, 4]
    with pytest.raises(triton_c.TrapError) as e:
        k(x, 1, (4,))
    assert e.value.kind == "data_race"
    assert "store to X[0] by program (3, 0, 0) races with a store by program (2, 0, 0)" in (
        e.value.message)
    assert x.view(np.uint8).tolist() == [1, 2, 3, 4]  # a trap leaves the array as it was


def test_trace_and_print_go_to_sys_stdout(capsys):
    k = triton_c.kernel("""
    __global__ void f(float *Y) {
      float v = 2.5;
      print("v =", v);
      *Y = v;
    }""")
    y = np.zeros(1, np.float32)
    k(y, (1,))
    assert "v =: array(2.5" in capsys.readouterr().out
    k(y, (1,), trace=True)
    out = capsys.readouterr().out
    assert "store" in out


def test_access_map(tmp_path):
    k = triton_c.kernel(INC)
    z = np.zeros(8, np.float32)
    p = tmp_path / "map.html"
    k(z, z, 8, (1,), BLOCK=8, access_map=str(p))
    assert 'id="access-data"' in p.read_text()
    k(z, z, 8, (1,), BLOCK=8, access_map=str(p))  # its own page: overwritten
    other = tmp_path / "notes.txt"
    other.write_text("mine")
    with pytest.raises(FileExistsError):
        k(z, z, 8, (1,), BLOCK=8, access_map=str(other))
    assert other.read_text() == "mine"
    k(z, z, 8, (1,), BLOCK=8, access_map=True)
    assert 'id="access-data"' in k.last_access_map
    # A file that only mentions the page's marker (this package's own source
    # does) is not an access map: never replaced.
    mention = tmp_path / "mention.py"
    mention.write_text("MARK = b'<script type=\"application/json\" id=\"access-data\">'\n")
    with pytest.raises(FileExistsError, match="is not an access map"):
        k(z, z, 8, (1,), BLOCK=8, access_map=str(mention))
    assert "MARK" in mention.read_text()


def test_immutable_buffers_are_never_written():
    # bytes, a memoryview of them and a read-only mmap are read-only buffers: a
    # store is refused before anything is written (a 1-byte bytes object is
    # shared by the whole interpreter); writable buffers are written in place.
    import mmap
    k = triton_c.kernel("__global__ void k(uint8 *Z) { int i[1] = 0 ... 1; *(Z + i) = (uint8)65; }")
    ro = mmap.mmap(-1, 16, access=mmap.ACCESS_READ)
    for buf in (b"\x00", memoryview(bytes(16)), ro):
        with pytest.raises(ValueError, match="argument 'Z' is read-only"):
            k(buf, (1,))
    assert bytes([0]) == b"\x00" and ro[:1] == b"\x00"
    ba = bytearray(1)
    k(ba, (1,))
    assert ba == bytearray(b"A")
    rd = triton_c.kernel("__global__ void r(uint8 *Z, int *O) { int i[1] = 0 ... 1; *(O + i) = (int)*(Z + i); }")
    o = np.zeros(1, np.int32)
    rd(b"\x07", o, (1,))
    assert o[0] == 7


def test_misspelt_option_raises_on_every_call():
    # The check of unused defines is cached per plan; a call that raised must
    # not mark it checked (the second call took num_warp as a #define).
    k = triton_c.kernel(INC)
    z = np.zeros(8, np.float32)
    for _ in range(2):
        with pytest.raises(TypeError, match="did you mean num_warps="):
            k(z, z, 8, (1,), BLOCK=8, num_warp=8)


def test_asm():
    k = triton_c.kernel(INC)
    with pytest.raises(RuntimeError, match="launch the kernel"):
        k.asm
    z = np.zeros(8, np.float32)
    k(z, z, 8, (1,), BLOCK=8)
    assert "kernel @inc" in k.asm["ir"]
    assert set(k.asm) == {"ir", "llvm", "ptx"}
    with pytest.raises(KeyError):
        k.asm["sass"]


def test_asm_ptx():
    k = triton_c.kernel(INC)
    z = np.zeros(8, np.float32)
    k(z, z, 8, (1,), BLOCK=8)
    try:
        ptx = k.asm["ptx"]
    except RuntimeError as e:  # built without the CUDA toolkit's libdevice
        pytest.skip(str(e))
    assert ".visible .entry inc" in ptx
    assert "define" in k.asm["llvm"]


# -- 5. Ctrl-C -------------------------------------------------------------------

@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signals reach the main thread")
def test_ctrl_c_interrupts_a_long_launch_and_restores_arrays():
    k = triton_c.kernel("""
    __global__ void spin(float *Y, int N) {
      *Y = 1.0;
      float acc = 0;
      for (int i = 0; i < N; i++)
        acc = acc + 1.0;
      *(Y + 1) = acc;
    }""")
    y = np.zeros(2, np.float32)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            k(y, 2 ** 31 - 1, (1,))  # minutes of work
    finally:
        timer.cancel()
    assert time.perf_counter() - t0 < 30  # stopped, not run to the end
    np.testing.assert_array_equal(y, 0)  # the first store was undone


SPIN = """
__global__ void spin(float *Y, int N) {
  *Y = 1.0;
  float acc = 0;
  for (int i = 0; i < N; i++)
    acc = acc + 1.0;
  *(Y + 1) = acc;
}"""


def _sigint_after(seconds):
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signals reach the main thread")
def test_ctrl_c_does_not_cancel_later_launches():
    # One Ctrl-C stops one launch; later launches start with no interrupt pending,
    # whatever SIGINT's handler is then (ignored, as in a worker, or Python's).
    k = triton_c.kernel(SPIN)
    y = np.zeros(2, np.float32)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        timer = _sigint_after(0.3)
        try:
            with pytest.raises(KeyboardInterrupt):
                k(y, 2 ** 31 - 1, (1,))
        finally:
            timer.cancel()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for _ in range(2):
            y[:] = 0
            k(y, 100_000, (1,))
            np.testing.assert_array_equal(y, [1, 100_000])
        signal.signal(signal.SIGINT, signal.default_int_handler)
        y[:] = 0
        k(y, 100_000, (1,))
        np.testing.assert_array_equal(y, [1, 100_000])
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signals reach the main thread")
def test_a_sigint_handler_that_returns_lets_the_launch_finish():
    # Python's convention: the handler decides. It runs during the launch and
    # does not raise, so the launch goes on to the end.
    k = triton_c.kernel(SPIN)
    y = np.zeros(2, np.float32)
    calls = []
    previous = signal.signal(signal.SIGINT, lambda s, f: calls.append(time.perf_counter()))
    try:
        n = 8_000_000  # ~1 s; exact in float32 (< 2**24)
        timer = _sigint_after(0.2)
        try:
            t0 = time.perf_counter()
            k(y, n, (1,))
            t1 = time.perf_counter()
        finally:
            timer.cancel()
    finally:
        signal.signal(signal.SIGINT, previous)
    np.testing.assert_array_equal(y, [1, n])
    assert len(calls) == 1
    if t1 - t0 > 0.5:  # the signal came during the launch: the handler ran then
        assert calls[0] < t1


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signals reach the main thread")
def test_a_sigint_handler_that_raises_stops_the_launch():
    class Stop(Exception):
        pass

    def handler(signum, frame):
        raise Stop("stop")

    k = triton_c.kernel(SPIN)
    y = np.zeros(2, np.float32)
    previous = signal.signal(signal.SIGINT, handler)
    try:
        timer = _sigint_after(0.3)
        t0 = time.perf_counter()
        try:
            with pytest.raises(Stop):
                k(y, 2 ** 31 - 1, (1,))  # minutes of work
        finally:
            timer.cancel()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert time.perf_counter() - t0 < 30  # stopped, not run to the end
    np.testing.assert_array_equal(y, 0)  # the first store was undone
    y[:] = 0
    k(y, 1000, (1,))  # and the next launch runs
    np.testing.assert_array_equal(y, [1, 1000])


# -- 6. testing.assert_close and ops check their inputs ---------------------------

def test_assert_close_dtypes_and_scalars():
    a32 = np.array([1.0, 2.0], np.float32)
    a64 = np.array([1.0, 2.0 + 1e-9], np.float64)
    with pytest.raises(AssertionError, match="dtypes differ: float32 vs float64"):
        triton_c.testing.assert_close(a32, a64)
    triton_c.testing.assert_close(a32, a64, check_dtype=False)
    with pytest.raises(AssertionError, match="1 element"):
        triton_c.testing.assert_close(a32, np.array([1.0, 2.1]), check_dtype=False)
    triton_c.testing.assert_close(np.zeros(3, np.float32), 0.0, check_dtype=False)
    triton_c.testing.assert_close(np.arange(3, dtype=np.int64), [0, 1, 2])
    with pytest.raises(AssertionError, match="shapes differ"):
        triton_c.testing.assert_close(np.zeros(3), np.zeros(4))
    with pytest.raises(TypeError, match="actual"):
        triton_c.testing.assert_close("abc", 1.0)


def test_ops_check_rank_and_dtype():
    with pytest.raises(ValueError, match=r"dot: a must be 2-D, got shape \(2, 3, 4\)"):
        triton_c.ops.dot(np.ones((2, 3, 4), np.float32), np.ones((4, 5), np.float32))
    with pytest.raises(TypeError, match="softmax: x has dtype int32"):
        triton_c.ops.softmax(np.ones((2, 3), np.int32))
    with pytest.raises(TypeError, match="dot: b must be a NumPy array"):
        triton_c.ops.dot(np.ones((2, 3), np.float32), [[1.0]])


def test_triton_only_launch_options_are_named():
    k = triton_c.kernel(INC)
    z = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match="num_ctas=: a launch option of Triton"):
        k(z, z, 8, (1,), BLOCK=8, num_ctas=1)


def test_grid_expressions_for_tuning():
    from triton_c._grid import grid_expressions

    g = lambda m: (triton_c.smin(triton_c.cdiv(m["N"], m["BLOCK"]), 64),)  # noqa: E731
    assert grid_expressions(g, ["BLOCK"], 4, ["N"]) == ["min((cdiv((N), (BLOCK))), 64)"]
    # a grid that reads num_warps cannot become one expression for every num_warps tried
    assert grid_expressions(lambda m: (m["num_warps"],), [], 4) is None
    assert grid_expressions(lambda m: (min(m["N"], 4),), [], 4, ["N"]) is None
    k = triton_c.kernel(COUNT)
    c = np.zeros(1, np.int32)
    k(c, lambda m: (triton_c.smax(m["num_warps"], 2),))  # with numbers it runs
    assert c[0] == 4
