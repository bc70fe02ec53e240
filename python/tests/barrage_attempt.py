"""One attempt of the Python package's hostile-input barrage (see test_barrage.py).

    python barrage_attempt.py SEED INDEX [--print]

Generates attempt INDEX of the barrage seeded SEED (deterministic: the same seed
and index give the same Python code), runs it in this process under an
address-space limit, and prints one line of JSON:

    {"seed": S, "index": I, "category": C, "code": "...", "outcome": "ok" |
     "raised", "exc": "TypeError", "message": "...", "violations": [...]}

``--print`` prints the attempt's code (a self-contained snippet, given
``from barrage_attempt import *``) instead of running it.

An attempt is Python code in two parts: ``setup`` (a kernel, arrays, what to
check) and ``call`` (the one hostile call). The harness snapshots the bytes of
every array the setup lists in ``WATCH`` (the whole memory the array is part of,
so a write next to a view is seen too), runs the call, and then checks:
  - an exception is of an allowed class (TypeError, ValueError, CompileError,
    TrapError, FileNotFoundError, ...), not a non-Python error escaping
    (nanobind's "incompatible function arguments", std::bad_cast, UnicodeDecodeError,
    SystemError, MemoryError, AttributeError, ...);
  - an exception for a bad parameter names it (``NAMES``: one of the words);
  - after any exception every watched array is exactly as it was;
  - after a normal return ``check()`` (the correct result, computed in NumPy on
    the bytes: nothing but the kernel's stores changed) holds; a call that
    must raise (``MUST_RAISE``) did;
  - read-only memory (``RO``) never changes;
  - an error message does not echo a file's content beyond one line (``SECRET``).
The parent (test_barrage.py) adds: no signal, no hang (timeout), no memory bomb.
"""

from __future__ import annotations

import json
import os
import random
import resource
import sys
import tempfile
import traceback

# -- hostile objects (the attempts' code refers to them by name) --------------------


class Hostile(Exception):
    """Raised by the barrage's own misbehaving objects: propagating it is fine."""


class BadIndex:
    """__index__ returning `v` (an int, a huge int, a str, ...) or raising."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        if self.v == "raise":
            raise Hostile("__index__ raised")
        return self.v

    def __repr__(self):
        return f"BadIndex({self.v!r})"


class BadFloat:
    def __init__(self, v):
        self.v = v

    def __float__(self):
        if self.v == "raise":
            raise Hostile("__float__ raised")
        return self.v

    def __repr__(self):
        return f"BadFloat({self.v!r})"


class BadInt:
    def __init__(self, v):
        self.v = v

    def __int__(self):
        if self.v == "raise":
            raise Hostile("__int__ raised")
        return self.v

    def __repr__(self):
        return f"BadInt({self.v!r})"


class BadDlpack:
    """An object with __dlpack__ that misbehaves in one of several ways."""

    _shared_caps: dict = {}

    def __init__(self, how, dtype="float32", n=8):
        self.how, self.dtype, self.n = how, dtype, n
        import numpy as np
        self.base = np.arange(n).astype(dtype)

    def __dlpack__(self, stream=None, **kw):
        how = self.how
        if how == "raise":
            raise Hostile("__dlpack__ raised")
        if how == "none":
            return None
        if how == "int":
            return 12345
        if how == "str":
            return "capsule"
        if how == "twice":  # the same capsule every time
            cap = BadDlpack._shared_caps.get(id(self))
            if cap is None:
                cap = BadDlpack._shared_caps[id(self)] = self.base.__dlpack__()
            return cap
        if how == "used":  # a capsule that NumPy already consumed
            cap = self.base.__dlpack__()
            import numpy as np
            np.from_dlpack(_Cap(cap))
            return cap
        if how == "other-capsule":
            import ctypes
            f = ctypes.pythonapi.PyCapsule_New
            f.restype = ctypes.py_object
            f.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
            return f(id(self), b"not_dltensor", None)
        return self.base.__dlpack__()

    def __dlpack_device__(self):
        how = self.how
        if how == "device-raise":
            raise Hostile("__dlpack_device__ raised")
        if how == "device-cuda":
            return (2, 0)
        if how == "device-short":
            return ()
        if how == "device-str":
            return ("cpu", 0)
        if how == "device-weird":
            return (99, 7)
        return (1, 0)

    def __repr__(self):
        return f"BadDlpack({self.how!r}, {self.dtype!r}, {self.n})"


class _Cap:
    def __init__(self, cap):
        self.cap = cap

    def __dlpack__(self, stream=None, **kw):
        return self.cap

    def __dlpack_device__(self):
        return (1, 0)


class WeirdArray:
    """Looks like an array to duck typing (shape, dtype, __array__) but is not one."""

    def __init__(self, how):
        self.how = how
        self.shape = (8,)
        self.dtype = "float32"

    def __array__(self, dtype=None):
        if self.how == "raise":
            raise Hostile("__array__ raised")
        import numpy as np
        return np.zeros(8, np.float32)

    def __len__(self):
        return 8

    def __repr__(self):
        return f"WeirdArray({self.how!r})"


def grid_raises(meta):
    raise Hostile("grid lambda raised")


def grid_junk(v):
    """A grid lambda returning `v`."""
    def g(meta):
        return v
    g.__qualname__ = f"grid_junk({v!r})"
    return g


# -- memory snapshots ---------------------------------------------------------------------

def _np():
    import numpy as np
    return np


def raw(obj):
    """The bytes of the whole memory `obj` is part of (NumPy root array, torch
    storage, bytes object)."""
    np = _np()
    if isinstance(obj, (bytes, bytearray)):
        return bytes(obj)
    if isinstance(obj, np.ndarray):
        root = obj
        while isinstance(root.base, np.ndarray):
            root = root.base
        if isinstance(root, np.memmap) or not root.flags.c_contiguous:
            return bytes(np.ascontiguousarray(root).view(np.uint8).reshape(-1))
        b = root.base
        if isinstance(b, (bytes, bytearray)):
            return bytes(b)
        return root.view(np.uint8).reshape(-1).tobytes() if root.size else b""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        if obj.device.type != "cpu" or obj.is_sparse or obj.is_quantized:
            return None
        t = obj.detach()
        try:
            st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage().untyped()
            n = st.nbytes()
            full = torch.empty(0, dtype=torch.uint8).set_(st, 0, (n,), (1,)) if n else None
            return full.numpy().tobytes() if n else b""
        except Exception:  # noqa: BLE001 - a tensor without bytes to watch
            return None
    return None


def as_np(x):
    """NumPy view of an array argument (torch: its .numpy())."""
    np = _np()
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        t = x.detach()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy()
        return t.numpy()
    return np.asarray(x)


# -- kernels ---------------------------------------------------------------------------------

INC = """
__global__ void inc(TYPE *Z, TYPE *X, int N) {
  int i[BLOCK] = 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Z + i) = *?(m)(X + i) + 100;
}
"""

INCF = """
__global__ void inc(float *Z, float *X, int N) {
  int i[BLOCK] = 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Z + i) = *?(m)(X + i) + 100;
}
"""

COUNT = """
__global__ void count(int *C) {
  atomic_add(C, 1);
}
"""

SCALAR = """
__global__ void s(T *Y, T v) {
  *Y = v;
}
"""

STRIDED = """
__global__ void copy(float *Y, float *X, int sy, int sx) {
  int i[4] = 0 ... 4;
  *(Y + i * sy) = *(X + i * sx) * 2;
}
"""

TRAP = """
__global__ void t(float *Y, int *I, int N, int D) {
  int i[8] = 0 ... 8;
  *(Y + i) = 5.0;
  *(I + i) = 7;
  if (MODE == 0) { *(Y + i + N) = 6.0; }
  else { *I = 10 / D; }
}
"""

BOTH = """
__global__ void both(float *F, int *I) {
  *F = 1.5;
  *(I + 1) = 7;
}
"""

# -- value pools ----------------------------------------------------------------------------

DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
TORCH_DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16",
                "float32", "float64", "complex64"]

# Hostile values for any argument slot: (expression, needs torch).
ANY_VALUES = (
    [f"np.zeros(8, np.{d})" for d in DTYPES]
    + ["np.zeros(8, np.bool_)", "np.zeros(8, 'U3')", "np.zeros(8, object)", "np.zeros(8, 'V4')",
       "np.zeros(8, 'datetime64[s]')", "np.zeros(8, '>f4')", "np.zeros(8, '>i4')",
       "np.zeros((), np.float32)", "np.float32(3)", "np.int32(8)", "np.zeros(0, np.float32)",
       "np.zeros((2, 0, 3), np.float32)", "np.zeros((4, 4), np.float32)",
       "np.zeros((4, 4), np.float32).T", "np.zeros(16, np.float32)[::2]",
       "np.zeros(16, np.float32)[::-1]", "np.broadcast_to(np.float32(1), (8,))",
       "np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (8,), (0,))",
       "np.frombuffer(bytearray(36), np.float32, 8, 1)",  # misaligned
       "np.ma.masked_array(np.zeros(8, np.float32))", "np.matrix(np.zeros((1, 8), np.float32))",
       "np.zeros(8, np.float32).view(np.recarray)",
       "np.zeros(2**20, np.float32)",
       "2**31", "-2**31 - 1", "2**63", "2**64", "2**80", "-1", "0", "8", "True", "False",
       "float('nan')", "float('inf')", "-float('inf')", "1e300", "-0.0", "3.5", "1+2j",
       "None", "b'abcd'", "bytearray(32)", "memoryview(bytearray(32))", "'abc'", "''",
       "'8'", "[1.0, 2.0]", "[[1, 2], [3]]", "[]", "()", "{}", "{'a': 1}", "object()",
       "np.float64('nan')", "np.int64(2**62)", "np.uint64(2**64 - 1)", "np.bool_(True)",
       "decimal.Decimal('1.5')", "fractions.Fraction(1, 3)", "range(8)", "slice(0, 8)",
       "Ellipsis", "int", "np.float32", "print", "lambda: 0",
       "BadIndex(8)", "BadIndex(2**80)", "BadIndex(-2**80)", "BadIndex('raise')",
       "BadIndex('8')", "BadIndex(None)", "BadIndex(8.0)", "BadFloat(1.0)", "BadFloat('raise')",
       "BadFloat(float('nan'))", "BadFloat('x')", "BadInt(8)", "BadInt('raise')",
       "BadDlpack('ok')", "BadDlpack('raise')", "BadDlpack('none')", "BadDlpack('int')",
       "BadDlpack('str')", "BadDlpack('twice')", "BadDlpack('used')",
       "BadDlpack('other-capsule')", "BadDlpack('device-raise')", "BadDlpack('device-cuda')",
       "BadDlpack('device-short')", "BadDlpack('device-str')", "BadDlpack('device-weird')",
       "BadDlpack('ok', 'int32')", "BadDlpack('ok', 'float32', 0)", "BadDlpack('ok', 'bool')",
       "WeirdArray('ok')", "WeirdArray('raise')"])
TORCH_VALUES = (
    [f"torch.zeros(8, dtype=torch.{d})" for d in TORCH_DTYPES]
    + ["torch.zeros(8, requires_grad=True)", "torch.nn.Parameter(torch.zeros(8))",
       "torch.zeros(16)[::2]", "torch.zeros(8).expand(2, 8)[0]", "torch.zeros(1).expand(8)",
       "torch.zeros(8, device='meta')", "torch.tensor(3.0)", "torch.zeros(8).to_sparse()",
       "torch.zeros(8, dtype=torch.complex64).conj()", "torch.zeros(0)",
       "torch.quantize_per_tensor(torch.zeros(8), 0.1, 0, torch.quint8)",
       "torch.zeros(4, 4).t()", "torch.zeros(8).flip(0)", "torch.tensor(8)",
       "torch.zeros(8, dtype=torch.float32).neg()"])

GRIDS = [
    "'128'", "'cdiv(8, 8)'", "'abc'", "''", "' '", "'1, 2, 3, 4'", "'(((('", "'1e9'",
    "'2147483648'", "'-1'", "'0'", "'1/0'", "'cdiv(1, 0)'", "'x' * 100000", "'\\xff'",
    "'\\u00e9'", "'\\udcff'", "'1;2'", "'N'", "'BLOCK'", "'__import__(\"os\")'",
    "1.5", "True", "False", "None", "0", "-1", "1", "2**31", "2**31 - 1", "2**63", "2**80",
    "(2.0,)", "(1.5,)", "(True,)", "(None,)", "(-1,)", "(0,)", "(0, 1)", "(1, 0, 1)",
    "(2**31,)", "(2**31 - 1, 2**31 - 1)", "(65536, 65536, 65536)", "(1, 1, 1, 1)", "()", "[]",
    "[1]", "[[1]]", "((1,),)", "(np.int64(1),)", "(np.float32(1),)", "(BadIndex(1),)",
    "(BadIndex(2**80),)", "(BadIndex('raise'),)", "(BadIndex('1'),)", "('1',)", "('x',)",
    "({'a': 1},)", "(object(),)", "object()", "b'1'", "bytearray(b'1')", "{1}", "{1: 1}",
    "range(1)", "iter([1])", "np.array([1])", "np.array(1)", "np.array([[1]])",
    "grid_raises", "grid_junk(None)", "grid_junk('1')", "grid_junk((1.5,))", "grid_junk(())",
    "grid_junk((1, 1, 1, 1))", "grid_junk((-1,))", "grid_junk(object())", "grid_junk(7)",
    "grid_junk([BadIndex('raise')])", "grid_junk((2**80,))", "grid_junk(grid_junk(1))",
    "lambda: (1,)", "lambda a, b: (1,)", "lambda m: (m['NOPE'],)", "lambda m: (m.NOPE,)",
    "lambda m: (m.d(None),)", "lambda m: (m['BLOCK'] / 8,)", "lambda m: (m['BLOCK'] // 0,)",
    "lambda m: (m['BLOCK'] % 0,)", "lambda m: (triton_c.cdiv(m['BLOCK'], 0),)",
    "lambda m: (int(m['BLOCK']),)", "lambda m: (m['BLOCK'] if m['BLOCK'] else 1,)",
    "lambda m: (m['BLOCK'] - 100,)", "lambda m: (m['BLOCK'] * 2**40,)",
    "lambda m: (m['num_warps'],)", "lambda m: (m['N'],)", "lambda m: [m.get('X', 1)]",
    "lambda m: (sys.exit(3),)", "lambda m: (1 for _ in m)",
    "print", "int", "len",
]

OPTIONS = [
    "max_secnds=1", "backed='gpu'", "num_warp=4", "race_chek=True", "treads=2", "max_second=1",
    "check_variant=True", "acces_map=True", "rtl=1", "grd=(1,)", "Backend='interp'",
    "max_seconds=float('nan')", "max_seconds=-1", "max_seconds=0", "max_seconds=float('inf')",
    "max_seconds='1'", "max_seconds=True", "max_seconds=[1]", "max_seconds=1e-300",
    "max_seconds=1e300", "max_seconds=BadFloat(1.0)", "max_seconds=np.float64('nan')",
    "threads=-1", "threads=2**31", "threads=2**80", "threads=1.5", "threads='2'", "threads=None",
    "threads=True", "threads=np.int8(2)", "threads=BadIndex(2)", "threads=4096", "threads=4097",
    "num_warps=3", "num_warps=0", "num_warps=-4", "num_warps=64", "num_warps=[]",
    "num_warps=[4, 3]", "num_warps='4'", "num_warps=4.0", "num_warps=None", "num_warps=2**80",
    "num_stages=0", "num_stages=-1", "num_stages=9", "num_stages=[]", "num_stages='2'",
    "num_stages=2.5", "backend='x'", "backend='GPU'", "backend=None", "backend=1",
    "backend=''", "backend='interp\\x00'", "backend=b'interp'", "backend='gpu'",
    "backend='compare'", "key='N'", "key=[1]", "key=['NOPE']", "key=5", "key=None",
    "check_variants='yes'", "check_variants=object()", "rtol=-1", "rtol=float('nan')",
    "rtol='x'", "atol=float('inf')", "atol=True", "access_map=5", "access_map=b'x'",
    "access_map=object()", "access_map='/proc/self/mem'", "access_map='/etc/passwd'",
    "access_map='/nonexistent/dir/map.html'", "access_map=''", "race_check='no'",
    "race_check=object()", "trace=object()", "grid=None",
]

DEFINES = [
    "BLOCK=None", "BLOCK=object()", "BLOCK=[None]", "BLOCK=[]", "BLOCK=()", "BLOCK=[[8]]",
    "BLOCK={}", "BLOCK={8}", "BLOCK=b'8'", "BLOCK=bytearray(b'8')", "BLOCK=8.0", "BLOCK=8.5",
    "BLOCK=float('nan')", "BLOCK=float('inf')", "BLOCK=-8", "BLOCK=0", "BLOCK=3", "BLOCK=2**31",
    "BLOCK=2**63", "BLOCK=2**80", "BLOCK=-2**80", "BLOCK=True", "BLOCK=np.int64(8)",
    "BLOCK=np.float32(8)", "BLOCK=BadIndex(8)", "BLOCK=BadFloat(8.0)", "BLOCK=1+2j",
    "BLOCK=list(range(10**6))", "BLOCK=list(range(5000))", "BLOCK=[8] * 5000",
    "BLOCK=[8, 16], EXTRA=list(range(3000))", "BLOCK=[8] * 100, EXTRA=[1] * 100",
    "BLOCK=np.float32", "BLOCK=np.dtype('V4')", "BLOCK=np.dtype('U3')", "BLOCK=object",
    "BLOCK=torch.float32", "BLOCK=torch.bfloat16", "BLOCK=torch.complex64",
    "BLOCK='8'", "BLOCK=''", "BLOCK=' '", "BLOCK='8 +'", "BLOCK='8)'", "BLOCK='8; }'",
    "BLOCK='8\\n#include \"/etc/passwd\"'", "BLOCK='8 /*'", "BLOCK='8 //'", "BLOCK='\"'",
    "BLOCK='\\''", "BLOCK='#'", "BLOCK='##'", "BLOCK='8\\\\'", "BLOCK='8\\x00'",
    "BLOCK='\\u00e9'", "BLOCK='\\U0001F600'", "BLOCK='\\udcff'", "BLOCK='\\udcff\\udcfe'",
    "BLOCK='8' + ' ' * 10**6", "BLOCK='(' * 10000 + '8' + ')' * 10000",
    "BLOCK='x' * (10**7)", "BLOCK='BLOCK'", "BLOCK='TYPE'", "BLOCK='__LINE__'",
    "BLOCK='8', TYPE='int'", "BLOCK=8, TYPE=None", "BLOCK=8, TYPE=np.float64",
    "BLOCK=8, TYPE='float; int'", "BLOCK=8, TYPE='\\xff'", "BLOCK=8, TYPE=5",
    "BLOCK=8, **{'': 1}", "BLOCK=8, **{'1X': 1}", "BLOCK=8, **{'A B': 1}",
    "BLOCK=8, **{'A=B': 1}", "BLOCK=8, **{'\\u00e9': 1}", "BLOCK=8, **{'\\udcff': 1}",
    "BLOCK=8, **{'__global__': 1}", "BLOCK=8, **{'int': 1}", "BLOCK=8, **{'float': 'int'}",
    "BLOCK=8, **{'defined': 1}", "BLOCK=8, **{'__FILE__': 1}", "BLOCK=8, **{'x' * 100000: 1}",
    "BLOCK=8, **{'Z': 1}", "BLOCK=8, **{'N': 'x'}", "BLOCK=8, BLOKC=8", "BLOCK=8, Block=8",
]

SOURCES = [
    ("garbage", "'@#$%^&*() { ; }'"),
    ("garbage", "'{' * 100000 + ';'"),
    ("garbage", "'__global__ void f(float *X) {' + '\\x00' * 100 + '}'"),
    ("garbage", "'__global__ void f(float *X) { *X = \\u00e9; }'"),
    ("garbage", "'__global__ void f(float *X) { *X = \\udcff; }'"),
    ("garbage", "'__global__ void f(float *X) { *X = 1; } \\n' * 10000"),
    ("garbage", "'__global__ void f(float *X) {}' + '\\n__global__ void f(float *X) {}'"),
    ("garbage", "'__global__ void f(' + 'float *X, ' * 100000 + 'float *Y) { *Y = 1; }'"),
    ("garbage", "'__global__ void f(float *X) { *X = ' + '-' * 100000 + '1; }'"),
    ("garbage", "'__global__ void f(float *X) { ' + 'if (1) ' * 100000 + '*X = 1; }'"),
    ("garbage", "'#define F(' + ', '.join('a%d' % i for i in range(100000)) + ') 1\\n"
                "__global__ void f(float *X) { *X = 1; }'"),
    ("garbage", "'#define M(x) M(x) M(x)\\n__global__ void f(float *X) { *X = M(1); }'"),
    ("garbage", "''.join('#define M%d M%d M%d\\n' % (i, i + 1, i + 1) for i in range(40)) + "
                "'__global__ void f(float *X) { *X = M0; }'"),
    ("garbage", "'#define A(x) x\\n__global__ void f(float *X) { *X = ' + 'A(' * 20000 + '1' "
                "+ ')' * 20000 + '; }'"),
    ("garbage", "'// ' + 'x' * (5 << 20) + '\\n__global__ void f(float *X) { *X = 1; }'"),
    ("garbage", "'#define HUGE ' + '1 + ' * 500000 + '1\\n__global__ void f(float *X) "
                "{ *X = HUGE; }'"),
    ("garbage", "'#if ' + '(' * 100000 + '1' + ')' * 100000 + '\\n#endif\\n{;'"),
    ("garbage", "'#if 1\\n' * 100000 + '{;'"),
    ("garbage", "'#error ' + 'x' * 100000 + '\\n{;'"),
    ("garbage", "'#pragma once\\n#line 0 \"\\\\xff\"\\n__global__ void f(float *X) { *X = q; }'"),
    ("garbage", "'__global__ void f(float *X) { *X = \"\\\\xff\\\\xfe\"; }'"),
    ("include", "'#include \"/etc/passwd\"\\n__global__ void f(float *X) { *X = 1; }'"),
    ("include", "'#include </etc/passwd>\\n__global__ void f(float *X) { *X = 1; }'"),
    ("include", "'#include \"/proc/self/environ\"\\n__global__ void f(float *X) { *X = 1; }'"),
    ("include", "'#include \"/proc/self/cmdline\"\\n__global__ void f(float *X) { *X = 1; }'"),
    ("include", "'#include \"/dev/zero\"\\n__global__ void f(float *X) { *X = 1; }'"),
    ("include", "'#include \"/dev/urandom\"\\n__global__ void f(float *X) { *X = 1; }'"),
    ("include", "'#include \"/\"\\n__global__ void f(float *X) { *X = 1; }'"),
    ("include", "'#include \"../../../../../../etc/hostname\"\\n__global__ void f(float *X) "
                "{ *X = 1; }'"),
    ("include", "'#include \"SECRET_FILE\"\\n__global__ void f(float *X) { *X = 1; }'"),
    ("include", "'#include \"' + 'a/' * 5000 + 'b.h\"\\n__global__ void f(float *X) { *X = 1; }'"),
    ("include", "'#include \"\\\\xff.h\"\\n__global__ void f(float *X) { *X = 1; }'"),
    ("include", "'#include SECRET_MACRO\\n__global__ void f(float *X) { *X = 1; }'"),
    ("cwd-include", "'#include \"good.h\"\\n__global__ void f(float *X) { *X = ONE; }'"),
    ("cwd-include", "'#include \"./good.h\"\\n__global__ void f(float *X) { *X = ONE; }'"),
    ("secret-include", "'#include \"secret.h\"\\n__global__ void f(float *X) { *X = 1; }'"),
    ("path", "'/nonexistent/k.tc'"), ("path", "'k.tc'"), ("path", "''"), ("path", "' '"),
    ("path", "'/'"), ("path", "'/dev/null'"), ("path", "'/dev/zero'"), ("path", "'/etc'"),
    ("path", "'/etc/passwd'"), ("path", "'/proc/self/environ'"), ("path", "'\\x00'"),
    ("path", "'a\\x00b.tc'"), ("path", "'\\udcff.tc'"), ("path", "'x' * 5000 + '.tc'"),
    ("path", "pathlib.Path('/nonexistent.tc')"), ("path", "pathlib.Path('/etc/passwd')"),
    ("path", "pathlib.Path('/dev/zero')"), ("path", "b'/etc/passwd'"), ("path", "None"),
    ("path", "5"), ("path", "object()"), ("path", "['{;']"), ("path", "BAD_UTF8_FILE"),
    ("path", "pathlib.Path(BAD_UTF8_FILE)"), ("path", "BIG_FILE"), ("path", "FIFO_FILE"),
    ("path", "DIR_FILE"), ("path", "SECRET_FILE"),
]
SOURCE_KWARGS = ["", ", name=5", ", name=''", ", name='nope'", ", name='\\udcff'",
                 ", include_dirs=5", ", include_dirs=[None]", ", include_dirs='/etc'",
                 ", include_dirs=['/nonexistent']", ", include_dirs=[b'/etc']",
                 ", outputs=5", ", outputs=[None]", ", outputs='NOPE'", ", outputs=['X', 'NOPE']"]


# -- generation -------------------------------------------------------------------------------

class Attempt:
    def __init__(self, category, setup, call, torch=False):
        self.category, self.setup, self.call, self.torch = category, setup, call, torch

    def code(self):
        return self.setup.rstrip() + "\n# -- the call --\n" + self.call + "\n"


def _inc_setup(rng, zdt="float32", n=8, block=8):
    return (f"k = triton_c.kernel(INC, outputs=['Z'])\n"
            f"Z0 = np.zeros({n}, np.{zdt})\n"
            f"X0 = np.arange({n}, dtype=np.{zdt})\n"
            f"WATCH = dict(Z=Z0, X=X0)\n")


def gen_args(rng):
    """A hostile value in one argument slot of inc(Z, X, N), or a wrong count."""
    torch = rng.random() < 0.3
    pool = ANY_VALUES + (TORCH_VALUES if torch else [])
    slot = rng.choice(["Z", "X", "N", "count", "keyword"])
    setup = ("k = triton_c.kernel(INCF, outputs=['Z'])\n"
             "Z = np.zeros(8, np.float32)\nX = np.arange(8, dtype=np.float32)\nN = 8\n")
    torch = torch or False
    if slot == "count":
        v = rng.choice(pool)
        how = rng.choice(["missing", "extra", "extra2", "none", "only_grid", "extra_before"])
        call = {"missing": "k(Z, X, (1,), BLOCK=8)",
                "extra": f"k(Z, X, N, {v}, (1,), BLOCK=8)",
                "extra2": f"k(Z, X, N, (1,), {v}, BLOCK=8)",
                "none": "k(BLOCK=8)",
                "only_grid": "k((1,), BLOCK=8)",
                "extra_before": f"k({v}, Z, X, N, (1,), BLOCK=8)"}[how]
        setup += "NAMES = ['argument', 'grid', 'parameter', \"'Z'\", \"'X'\", \"'N'\"]\n"
        setup += "MUST_RAISE = True\n"
    elif slot == "keyword":
        v = rng.choice(pool)
        name = rng.choice(["Z", "X", "N", "z", "n", "grid", "args", "self", "kwargs"])
        setup += f"V = {v}\n"
        call = rng.choice([f"k(Z, X, N, (1,), BLOCK=8, {name}=V)",
                           f"k(Z, X, grid=(1,), BLOCK=8, {name}=V)",
                           f"k[(1,)](Z, X, BLOCK=8, {name}=V)"])
        if name == "grid":
            call = "k(Z, X, N, BLOCK=8, grid=V)"
        setup += f"NAMES = [{name!r}, 'grid', 'argument', 'parameter', 'define', 'BLOCK']\n"
    else:
        v = rng.choice(pool)
        args = {"Z": "Z", "X": "X", "N": "N"}
        args[slot] = "V"
        setup += f"V = {v}\n"
        call = f"k({args['Z']}, {args['X']}, {args['N']}, (1,), BLOCK=8)"
        setup += f"NAMES = [\"'{slot}'\", 'argument {'ZXN'.index(slot)}']\n"
    setup += "WATCH = dict(Z=Z, X=X)\n"
    # A correct result: whatever the slots held, Z must hold X + 100 where the
    # call returned, computed from the arrays as they are after the call.
    setup += ("def check():\n"
              "    return inc_result(CALL_ARGS)\n")
    return Attempt("args", setup, call, torch or "torch." in call)


def gen_grid(rng):
    g = rng.choice(GRIDS)
    setup = ("k = triton_c.kernel(COUNT)\nC = np.zeros(1, np.int32)\nWATCH = dict(C=C)\n"
             "NAMES = ['grid']\n")
    form = rng.choice(["pos", "kw", "sub", "pos", "kw"])
    extra = ", max_seconds=2" + rng.choice(["", "", ", BLOCK=8", ", N=8", ", threads=1"])
    if form == "pos":
        call = f"k(C, {g}{extra})"
    elif form == "kw":
        call = f"k(C, grid={g}{extra})"
    else:
        call = f"k[{g}](C{extra})"
    setup += f"G = {g}\n"
    if callable_text(g):
        setup = setup.replace("NAMES = ['grid']\n", "")
    call = call.replace(g, "G", 1) if False else call
    setup += "def check():\n    return count_result(C, G)\n"
    return Attempt("grid", setup, call, "torch." in g)


def callable_text(g):
    """Whether grid text g is a callable of the user's own (its errors are its own)."""
    return g.startswith(("lambda", "grid_raises", "print", "int", "len"))


def gen_options(rng):
    opts = []
    for o in rng.sample(OPTIONS, rng.choice([1, 1, 1, 2])):
        if o.split("=")[0] not in [x.split("=")[0] for x in opts]:
            opts.append(o)
    setup = ("k = triton_c.kernel(INCF, outputs=['Z'])\n"
             "Z = np.zeros(8, np.float32)\nX = np.arange(8, dtype=np.float32)\nN = 8\n"
             "WATCH = dict(Z=Z, X=X)\n")
    names = []
    for o in opts:
        key = o.split("=")[0]
        names.append(key)
    setup += f"NAMES = {names!r}\n"
    setup += "def check():\n    return inc_result(CALL_ARGS)\n"
    call = f"k(Z, X, N, (1,), BLOCK=8, {', '.join(opts)})"
    return Attempt("options", setup, call, False)


def gen_defines(rng):
    d = rng.choice(DEFINES)
    kernel = rng.choice(["INC", "INCF"])
    setup = (f"k = triton_c.kernel({kernel}, outputs=['Z'])\n"
             "Z = np.zeros(8, np.float32)\nX = np.arange(8, dtype=np.float32)\nN = 8\n"
             "WATCH = dict(Z=Z, X=X)\n"
             "NAMES = ['BLOCK', 'TYPE', 'define', 'error', 'EXTRA', 'variants', 'keyword', "
             "'parameter', 'Z', 'N']\n"
             "def check():\n    return inc_result(CALL_ARGS)\n"
             "BLOCK_VARIES['yes'] = True\n")
    if kernel == "INC" and "TYPE" not in d:
        d += ", TYPE='float'"
    call = rng.choice([f"k(Z, X, N, (1,), {d})", f"k(Z, X, N, lambda m: (1,), {d})"])
    return Attempt("defines", setup, call, "torch." in d)


def gen_source(rng):
    kind, expr = rng.choice(SOURCES)
    kw = rng.choice(SOURCE_KWARGS) if rng.random() < 0.3 else ""
    setup = ("Z = np.zeros(8, np.float32)\nWATCH = dict(Z=Z)\n"
             "NAMES = ['src', 'error', 'name', 'include_dirs', 'outputs', 'kernel']\n"
             "CHECK_SECRET = True\n")
    if kind == "cwd-include":  # text kernels have no include folder (not the cwd)
        setup += "MUST_RAISE = 'CompileError'\n"
    if kind == "secret-include":
        kw = ", include_dirs=[TMPDIR]"
    call = f"triton_c.kernel({expr}{kw})(Z, (1,))"
    if rng.random() < 0.15:  # on a thread with a small stack (the compiler's recursion)
        size = rng.choice([256 << 10, 512 << 10, 1 << 20])
        setup += ("import threading\n"
                  f"threading.stack_size({size})\n"
                  "def on_thread(f):\n"
                  "    box = []\n"
                  "    def run():\n"
                  "        try:\n"
                  "            f()\n"
                  "        except BaseException as e:\n"
                  "            box.append(e)\n"
                  "    t = threading.Thread(target=run)\n"
                  "    t.start()\n"
                  "    t.join()\n"
                  "    if box:\n"
                  "        raise box[0]\n")
        call = f"on_thread(lambda: {call})"
    return Attempt("source", setup, call, False)


def gen_nesting(rng):
    """Deep nesting of one construct, on the main thread or a small-stack thread."""
    n = rng.choice([100, 240, 1000, 5000, 50000])
    what = rng.choice(["parens", "unary", "blocks", "ifs", "pp-if", "macro-arg", "calls"])
    body = {"parens": "'*X = ' + '(' * N + '1' + ')' * N + ';'",
            "unary": "'*X = ' + '-' * N + '1;'",
            "blocks": "'{' * N + '*X = 1;' + '}' * N",
            "ifs": "'if (1) ' * N + '*X = 1;'",
            "pp-if": "'\\n' + '#if 1\\n' * N + '*X = 1;\\n' + '#endif\\n' * N",
            "macro-arg": "'*X = ' + 'A(' * N + '1' + ')' * N + ';'",
            "calls": "'*X = ' + 'min(' * N + '1' + ', 1)' * N + ';'"}[what]
    setup = ("Z = np.zeros(8, np.float32)\nWATCH = dict(Z=Z)\n"
             f"N = {n}\n"
             f"SRC = '#define A(x) x\\n__global__ void f(float *X) {{ ' + {body} + ' }}'\n"
             "import threading\n"
             "def on_thread(f):\n"
             "    box = []\n"
             "    def run():\n"
             "        try:\n"
             "            f()\n"
             "        except BaseException as e:\n"
             "            box.append(e)\n"
             "    t = threading.Thread(target=run)\n"
             "    t.start()\n"
             "    t.join()\n"
             "    if box:\n"
             "        raise box[0]\n")
    size = rng.choice([0, 256 << 10, 512 << 10, 1 << 20, 64 << 10])
    if size:
        setup += f"threading.stack_size({size})\n"
        call = "on_thread(lambda: triton_c.kernel(SRC)(Z, (1,)))"
    else:
        call = "triton_c.kernel(SRC)(Z, (1,))"
    return Attempt(f"nesting:{what}", setup, call, False)


def gen_memory(rng):
    """Read-only outputs, overlapping, strided and misaligned views, torch views;
    the whole arena's bytes are checked against a NumPy model of the kernel."""
    case = rng.choice(["readonly", "overlap", "strided", "misaligned", "twodtypes", "torch",
                       "readonly", "overlap", "strided"])
    if case == "readonly":
        how = rng.choice(["flags", "bytes", "memmap", "torch_ro", "broadcast", "ro_view"])
        mk = {"flags": "Zr = np.zeros(8, np.float32); Zr.flags.writeable = False",
              "bytes": "DATA = bytes(32); Zr = np.frombuffer(DATA, np.float32)",
              "memmap": "Zr = np.memmap(RO_FILE, dtype=np.float32, mode='r', shape=(8,))",
              "torch_ro": "_a = np.zeros(8, np.float32); _a.flags.writeable = False\n"
                          "import warnings; warnings.simplefilter('ignore')\n"
                          "Zr = torch.from_numpy(_a)",
              "broadcast": "Zr = np.broadcast_to(np.zeros(1, np.float32), (8,))",
              "ro_view": "_b = np.zeros(16, np.float32); _b.flags.writeable = False; "
                         "Zr = _b[4:12]"}[how]
        other = rng.choice(["Y = np.zeros(8, np.float32)", "Y = Zr"])
        if how == "torch_ro":
            # PyTorch has no read-only tensors: torch.from_numpy of a read-only array
            # (torch warns then) is writable to torch's own in-place ops and so to
            # kernels (a documented limitation); what must hold is that the call runs.
            setup = (f"k = triton_c.kernel(TWO_OUT)\n{mk}\n{other}\n"
                     "WATCH = dict(Y=Y, Zr=Zr)\n")
        else:
            setup = (f"k = triton_c.kernel(TWO_OUT)\n{mk}\n{other}\n"
                     "WATCH = dict(Y=Y, Zr=Zr)\nRO = [Zr]\nMUST_RAISE = True\n"
                     "NAMES = [\"'Z'\", 'read-only', \"'Y'\"]\n")
        call = rng.choice(["k(Y, Zr, 8, (1,), BLOCK=8)", "k(Zr, Y, 8, (1,), BLOCK=8)"])
        if "Y = Zr" in other:
            call = "k(Zr, Zr, 8, (1,), BLOCK=8)"
        return Attempt("memory:readonly", setup, call, how == "torch_ro")
    arena = rng.choice([64, 96, 128])
    setup = (f"k = triton_c.kernel(INCF)\n"
             f"A = np.random.default_rng({rng.randrange(1 << 30)}).standard_normal({arena})"
             f".astype(np.float32)\n")
    if case == "overlap":
        zo, xo = rng.randrange(0, 16), rng.randrange(0, 16)
        n, block = rng.randrange(0, 24), rng.choice([8, 16, 32])
        setup += f"Zv = A[{zo}:]\nXv = A[{xo}:]\n"
        call = f"k(Zv, Xv, {n}, (1,), BLOCK={block})"
        setup += f"EXPECT_ARENA = model_inc(A, {zo}, {xo}, {n}, {block})\n"
    elif case == "strided":
        zs, xs = rng.choice([1, 2, 3, -1, -2]), rng.choice([1, 2, 3, -1, -2])
        zo, xo = rng.randrange(0, arena), rng.randrange(0, arena)
        zstart, xstart = zo, xo
        zsl = f"A[{zstart}::{zs}]" if zs > 0 else f"A[{zstart}::{zs}]"
        xsl = f"A[{xstart}::{xs}]"
        n = rng.randrange(0, 12)
        setup += f"Zv = {zsl}\nXv = {xsl}\n"
        call = f"k(Zv, Xv, {n}, (1,), BLOCK=16)"
        setup += f"EXPECT_ARENA = model_inc(A, {zo}, {xo}, {n}, 16)\n"
        if rng.random() < 0.5:  # by strides
            setup = setup.replace("triton_c.kernel(INCF)", "triton_c.kernel(STRIDED)")
            setup = setup.replace(f"EXPECT_ARENA = model_inc(A, {zo}, {xo}, {n}, 16)\n",
                                  f"EXPECT_ARENA = model_strided(A, {zo}, {xo}, {zs}, {xs})\n")
            call = f"k(Zv, Xv, {zs}, {xs}, (1,))"
    elif case == "misaligned":
        off = rng.choice([1, 2, 3])
        setup = ("k = triton_c.kernel(INCF)\n"
                 f"B = bytearray(range(256)) * 2\nA = np.frombuffer(B, np.uint8)\n"
                 f"Zv = A[{off}:{off} + 64].view(np.float32)\n"
                 f"Xv = A[{off + 128}:{off + 192}].view(np.float32)\n"
                 f"EXPECT_BYTES = model_inc_bytes(bytes(B), {off}, {off + 128}, 8)\n")
        call = "k(Zv, Xv, 8, (1,), BLOCK=8)"
        setup += "WATCH = dict(A=A)\n"
        return Attempt("memory:misaligned", setup, call, False)
    elif case == "twodtypes":
        setup = ("k = triton_c.kernel(BOTH)\nbuf = np.zeros(2, np.float32)\n"
                 "EXPECT_BYTES = np.array([1.5, 0], np.float32).tobytes()[:4] + "
                 "np.int32(7).tobytes()\n")
        call = rng.choice(["k(buf, buf.view(np.int32), (1,))",
                           "k(buf[:1], buf.view(np.int32), (1,))",
                           "k(torch.from_numpy(buf), torch.from_numpy(buf.view(np.int32)), (1,))"])
        setup += "WATCH = dict(buf=buf)\nA = buf\n"
        return Attempt("memory:twodtypes", setup, call, "torch" in call)
    else:  # torch views of one storage
        zo, xo = rng.randrange(0, 16), rng.randrange(0, 16)
        n = rng.randrange(0, 16)
        setup += ("T = torch.from_numpy(A)\n"
                  f"Zv = T[{zo}:]\nXv = T[{xo}:]\n"
                  f"EXPECT_ARENA = model_inc(A, {zo}, {xo}, {n}, 16)\n")
        call = f"k(Zv, Xv, {n}, (1,), BLOCK=16)"
        setup += "WATCH = dict(A=A)\n"
        return Attempt("memory:torch", setup, call, True)
    setup += "WATCH = dict(A=A)\n"
    return Attempt(f"memory:{case}", setup, call, False)


SPIN = """
__global__ void spin(float *Y, int N) {
  *Y = 1.0;
  float acc = 0;
  for (int i = 0; i < N; i++)
    acc = acc + 1.0;
  *(Y + 1) = acc;
}
"""


def gen_stop(rng):
    """A long kernel stopped by Ctrl-C (SIGINT) or by max_seconds: a clean
    KeyboardInterrupt / TrapError, arrays as they were."""
    how = rng.choice(["sigint", "seconds", "sigint", "seconds"])
    layout = rng.choice(["Y = np.zeros(2, np.float32)", "Y = np.zeros(8, np.float32)[::3]",
                         "Y = torch.zeros(2)"])
    grid = rng.choice(["(1,)", "(2**31 - 1,)", "(4, 4)"])
    threads = rng.choice(["", ", threads=1", ", threads=2"])
    delay = rng.choice([0.05, 0.3, 1.0])
    setup = (f"k = triton_c.kernel(SPIN)\n{layout}\nWATCH = dict(Y=Y)\n")
    if how == "sigint":
        # (a process started in the background of a shell ignores SIGINT: Python's handler back)
        setup += ("import threading, signal\n"
                  "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
                  f"threading.Timer({delay}, os.kill, (os.getpid(), signal.SIGINT)).start()\n"
                  "MUST_RAISE = 'KeyboardInterrupt'\n")
        call = f"k(Y, 2**31 - 1, {grid}{threads})"
    else:
        setup += "MUST_RAISE = 'TrapError'\n"
        call = f"k(Y, 2**31 - 1, {grid}, max_seconds={delay}{threads})"
    return Attempt(f"stop:{how}", setup, call, "torch" in layout)


def gen_trap(rng):
    mode = rng.choice([0, 1])
    layout = rng.choice(["plain", "views", "torch", "strided"])
    if layout == "plain":
        setup = "Y = np.zeros(8, np.float32) + 3\nI = np.arange(8, dtype=np.int32)\n"
    elif layout == "views":
        setup = ("A = np.arange(64, dtype=np.float32)\nY = A[8:16]\n"
                 "I = A[32:40].view(np.int32)\n")
    elif layout == "strided":
        setup = ("A = np.arange(64, dtype=np.float32)\nY = A[0:16:2]\n"
                 "I = np.arange(16, dtype=np.int32)[::2]\n")
    else:
        setup = ("Y = torch.full((8,), 3.0)\nI = torch.arange(8, dtype=torch.int32)\n")
    n = rng.choice([8, 100, 10 ** 6, -9, 2 ** 31 - 9]) if mode == 0 else 0
    d = 0 if mode == 1 else 1
    threads = rng.choice(["", ", threads=1", ", threads=2"])
    setup = ("k = triton_c.kernel(TRAP)\n" + setup + "WATCH = dict(Y=Y, I=I)\n"
             "MUST_RAISE = 'TrapError'\n")
    call = f"k(Y, I, {n}, {d}, (1,), MODE={mode}{threads})"
    if layout == "strided" and mode == 0 and n == 8:
        setup = setup.replace("MUST_RAISE = 'TrapError'\n", "")  # inside the storage
    if mode == 0 and n == 8 and layout in ("views",):
        setup = setup.replace("MUST_RAISE = 'TrapError'\n", "")
    if mode == 0 and n == -9:
        setup = setup.replace("MUST_RAISE = 'TrapError'\n", "")
    return Attempt("trap", setup, call, layout == "torch")


def gen_scalar(rng):
    t, dt, vals = rng.choice([
        ("char", "int8", ["127", "-128", "128", "-129", "300", "2**80", "BadIndex(5)", "3.0",
                          "True", "np.int64(200)", "np.uint8(255)", "float('nan')"]),
        ("unsigned char", "uint8", ["255", "256", "-1", "np.int8(-1)"]),
        ("short", "int16", ["32767", "32768", "-32769"]),
        ("int", "int32", ["2**31 - 1", "2**31", "-2**31", "-2**31 - 1", "BadIndex(2**31)",
                          "np.uint32(2**32 - 1)", "np.float32(3)", "3.5", "1e10"]),
        ("unsigned", "uint32", ["2**32 - 1", "2**32", "-1"]),
        ("long", "int64", ["2**63 - 1", "2**63", "-2**63", "-2**63 - 1", "np.uint64(2**64 - 1)",
                           "BadIndex(2**63)", "BadIndex(-2**63)"]),
        ("unsigned long", "uint64", ["2**64 - 1", "2**64", "-1", "np.int64(-1)"]),
        ("bool", "bool_", ["True", "False", "0", "1", "2", "-1", "np.bool_(True)", "0.5"]),
        ("half", "float16", ["65504.0", "65520.0", "1e10", "float('nan')", "float('inf')",
                             "-0.0", "1e-8", "2**80", "np.float64(1e5)"]),
        ("float", "float32", ["3.4e38", "3.5e38", "1e300", "float('nan')", "float('-inf')",
                              "1e-46", "2**200", "BadFloat(1.5)", "BadFloat(1e300)", "10**400",
                              "np.float64(1e39)", "np.longdouble(1.5)"]),
        ("double", "float64", ["1.7976931348623157e308", "float('nan')", "10**400",
                               "2**1023", "np.float16(2)", "BadFloat('raise')", "decimal.Decimal('0.1')"]),
    ])
    v = rng.choice(vals)
    setup = (f"k = triton_c.kernel(SCALAR, outputs=['Y'])\nY = np.zeros(1, np.{dt})\n"
             f"WATCH = dict(Y=Y)\nNAMES = [\"'v'\"]\n"
             f"def check():\n    return scalar_result(Y, V, {dt!r})\n")
    setup += f"V = {v}\n"
    call = f"k(Y, V, (1,), T={t!r})"
    return Attempt("scalar", setup, call, False)


GENERATORS = [(gen_args, 30), (gen_grid, 15), (gen_options, 12), (gen_defines, 12),
              (gen_source, 12), (gen_memory, 12), (gen_trap, 8), (gen_scalar, 8),
              (gen_stop, 4), (gen_nesting, 5)]


def generate(seed, index):
    rng = random.Random(f"{seed}/{index}")
    total = sum(w for _, w in GENERATORS)
    r = rng.randrange(total)
    for g, w in GENERATORS:
        if r < w:
            return g(rng)
        r -= w
    raise AssertionError


# -- models and result checks (run inside the attempt's namespace) -------------------

TWO_OUT = """
__global__ void two(float *Y, float *Z, int N) {
  int i[BLOCK] = 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = 1.0;
  *?(m)(Z + i) = 2.0;
}
"""


def model_inc(A, zo, xo, n, block):
    """inc on a float32 arena: one program loads X[0:min(n, block)] then stores Z;
    None when it runs out of the arena (a trap is expected)."""
    np = _np()
    m = max(0, min(n, block))
    if xo + m > A.size or zo + m > A.size:
        return None
    out = A.copy()
    out[zo:zo + m] = A[xo:xo + m] + np.float32(100)
    return out


def model_strided(A, zo, xo, zs, xs):
    np = _np()
    out = A.copy()
    zi = [zo + i * zs for i in range(4)]
    xi = [xo + i * xs for i in range(4)]
    if any(j < 0 or j >= A.size for j in zi + xi):
        return None
    vals = A[xi] * np.float32(2)
    for j, v in zip(zi, vals):
        out[j] = v
    return out


def model_inc_bytes(B, zoff, xoff, n):
    np = _np()
    out = bytearray(B)
    x = np.frombuffer(B[xoff:xoff + 4 * n], np.float32) + np.float32(100)
    out[zoff:zoff + 4 * n] = x.astype(np.float32).tobytes()
    return bytes(out)


def inc_result(call_args):
    """After a normal return of inc(Z, X, N, ...): Z (a float32 array) holds X + 100
    on the first N elements (N an integer the slot's value converts to)."""
    np = _np()
    Z, X, N = call_args[0], call_args[1], call_args[2]
    Z, X = (getattr(a, "base", a) if isinstance(a, BadDlpack) else a for a in (Z, X))
    z, x = as_np(Z), as_np(X)
    if z.dtype != np.float32 or x.dtype != np.float32:
        return f"ran with Z as {z.dtype}, X as {x.dtype}: expected float32 arrays or a TypeError"
    try:
        n = int(N.__index__()) if hasattr(N, "__index__") else None
    except Exception:  # noqa: BLE001
        n = None
    if n is None and isinstance(N, (float, np.floating)) and float(N).is_integer():
        n = int(N)  # an integral float for an int parameter: documented as accepted
    if n is None:
        return f"ran with N={N!r}: expected an integer or a TypeError"
    if not -2**31 <= n < 2**31:
        return f"ran with N={N!r} (= {n}), which does not fit int32: expected a ValueError"
    m = max(0, min(n, 8))
    src = X0_SNAPSHOT["X"] if X is X0_SNAPSHOT.get("obj") else x
    if not src.flags.c_contiguous:
        return None
    want = src.reshape(-1)[:m] + np.float32(100)
    got = z.reshape(-1)[:m] if z.flags.c_contiguous else None
    if got is None or np.array_equal(got, want):
        return None
    # A define may have changed BLOCK (BLOCK=True is 1): a written prefix, the rest untouched.
    for j in range(m):
        if np.array_equal(got[:j], want[:j]) and not got[j:].any():
            if BLOCK_VARIES.get("yes"):
                return None
    return f"Z[:{m}] = {got.tolist()}, expected X + 100 = {want.tolist()}"


BLOCK_VARIES: dict = {}


X0_SNAPSHOT: dict = {}


def expected_programs(g):
    """The number of programs a grid means, where it is plain (None: unknown)."""
    np = _np()
    if callable(g) and not isinstance(g, type):
        try:
            g = g(_FakeMeta())
        except Exception:  # noqa: BLE001
            return None
    if isinstance(g, str):
        try:
            parts = [int(p) for p in g.split(",")]
        except ValueError:
            return None
    elif isinstance(g, (tuple, list)):
        parts = list(g)
    else:
        return None
    if not 1 <= len(parts) <= 3:
        return "bad"
    n = 1
    for p in parts:
        if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, np.integer, str)):
            return "bad"
        if isinstance(p, str):
            try:
                p = int(p)
            except ValueError:
                return None
        n *= int(p)
    return n


class _FakeMeta:
    def __getitem__(self, k):
        return {"BLOCK": 8, "N": 8, "num_warps": 4}[k]

    def get(self, k, d=None):
        return d

    def d(self, k):
        return self[k]

    def __getattr__(self, k):
        raise KeyError(k)

    def __iter__(self):
        return iter(())


def count_result(C, g):
    """After a normal return of count(C) with grid g: C[0] is its program count."""
    want = expected_programs(g)
    if want == "bad":
        return f"grid {g!r} ran {int(C[0])} programs: expected a TypeError naming the grid"
    if want is not None and int(C[0]) != want:
        return f"grid {g!r} ran {int(C[0])} programs, expected {want}"
    return None


def scalar_result(Y, V, dt):
    """Y[0] == V in dtype dt (V fits: the call must raise where it does not)."""
    np = _np()
    import math
    y = Y[0]
    v = V
    if isinstance(v, (BadFloat,)):
        v = float(v)
    if isinstance(v, BadIndex):
        v = v.__index__()
    if dt.startswith("float"):
        if isinstance(v, float) and math.isnan(v) or (isinstance(v, np.floating) and np.isnan(v)):
            return None if np.isnan(y) else f"stored {y!r} for NaN"
        fv = float(v)
        want = np.array(fv, dtype=np.float64).astype(dt)
        if math.isfinite(fv) and not np.isfinite(want):
            return f"{V!r} does not fit {dt} but stored {y!r} (expected a ValueError)"
        if y != want and not (np.isnan(y) and np.isnan(want)):
            return f"stored {y!r}, expected {want!r}"
        return None
    if isinstance(v, (float, np.floating)) and not float(v).is_integer():
        return f"a float {V!r} for an integer parameter ran (stored {y!r})"
    iv = int(v)
    info = np.iinfo(dt) if dt != "bool_" else None
    if dt == "bool_":
        if iv not in (0, 1):
            return f"{V!r} stored as bool {y!r} (expected a ValueError)"
        return None if bool(y) == bool(iv) else f"stored {y!r}, expected {bool(iv)}"
    if not info.min <= iv <= info.max:
        return f"{V!r} does not fit {dt} but stored {y!r} (expected a ValueError)"
    return None if int(y) == iv else f"stored {int(y)}, expected {iv}"


# -- running ---------------------------------------------------------------------------------

ALLOWED = {"TypeError", "ValueError", "CompileError", "TrapError", "FileNotFoundError",
           "KeyboardInterrupt", "IsADirectoryError", "OverflowError", "Hostile",
           "FileExistsError", "NotADirectoryError", "PermissionError"}
# Raised by the package itself with a message of its own (checked by pattern).
CONDITIONAL = {
    "RuntimeError": ("no CUDA device", "CUDA", "requires grad", "cuda", "GPU", "libcuda"),
    "KeyError": ("the grid uses",),
    "ZeroDivisionError": (),  # raised by a grid lambda's own arithmetic (Python's)
    "SystemExit": (),  # sys.exit in a grid lambda: the user's own
    "MismatchError": (),
    "IsADirectoryError": (),
}
# Messages that mean a C++/binding error escaped, whatever the class.
LEAKS = ("incompatible function arguments", "std::", "bad_cast", "bad_alloc", "nanobind",
         "Invoked with types", "basic_string", "vector::", "stoi", "stol", "stod")

SECRET = "barrage-secret-line-1\nbarrage-secret-line-2-MUST-NOT-ECHO\n"


def _prepare_files(tmp):
    files = {}
    p = os.path.join(tmp, "bad_utf8.tc")
    with open(p, "wb") as f:
        f.write(b"__global__ void f(float *X) {\n  *X = \xff\xfe\xc3(;\n  \xed\xa0\x80\n}\n")
    files["BAD_UTF8_FILE"] = p
    p = os.path.join(tmp, "big.tc")
    with open(p, "wb") as f:
        f.write(b"// " + b"x" * (5 << 20) + b"\n__global__ void f(float *X) { *X = 1; }\n")
    files["BIG_FILE"] = p
    p = os.path.join(tmp, "fifo.tc")
    os.mkfifo(p)
    files["FIFO_FILE"] = p
    p = os.path.join(tmp, "dir.tc")
    os.mkdir(p)
    files["DIR_FILE"] = p
    p = os.path.join(tmp, "secret.h")
    with open(p, "w") as f:
        f.write(SECRET)
    files["SECRET_FILE"] = p
    files["SECRET_MACRO"] = '"' + p + '"'
    with open(os.path.join(tmp, "good.h"), "w") as f:
        f.write("#define ONE 1\n")
    files["TMPDIR"] = tmp
    p = os.path.join(tmp, "ro.bin")
    with open(p, "wb") as f:
        f.write(bytes(32))
    files["RO_FILE"] = p
    return files


def _namespace(tmp):
    import decimal
    import fractions
    import pathlib

    import numpy as np

    import triton_c
    ns = dict(globals())
    ns.update(np=np, triton_c=triton_c, decimal=decimal, fractions=fractions, pathlib=pathlib,
              sys=sys, os=os)
    ns.update(_prepare_files(tmp))
    return ns


def _call_args(call):
    """The positional arguments of the call's k(...) (an expression list)."""
    return call


def run_attempt(att, tmp):
    import warnings
    ns = _namespace(tmp)
    if att.torch:
        import torch
        ns["torch"] = torch
    ns["torch"] = ns.get("torch") or _LazyTorch()
    warnings.simplefilter("ignore")
    os.chdir(tmp)
    exec(compile(att.setup, "<setup>", "exec"), ns)
    watch = ns.get("WATCH", {})
    before = {n: raw(a) for n, a in watch.items()}
    ro = ns.get("RO", [])
    ro_before = [raw(a) for a in ro]
    data = ns.get("DATA")
    data_before = bytes(bytearray(data)) if data is not None else None
    if "X" in watch:
        X0_SNAPSHOT["X"] = as_np(watch["X"]).copy()
        X0_SNAPSHOT["obj"] = watch["X"]
    # Capture the call's arguments for checks: rewrite k(...) into a capture.
    captured = {}

    def capture(*args, **kwargs):
        captured["args"], captured["kwargs"] = args, kwargs
    out = {"category": att.category, "code": att.code(), "violations": []}
    v = out["violations"]
    exc = None
    try:
        exec(compile(att.call, "<call>", "exec"), ns)
        out["outcome"] = "ok"
    except BaseException as e:  # noqa: BLE001 - classified below
        exc = e
        out["outcome"] = "raised"
        out["exc"] = type(e).__name__
        try:
            msg = str(e)
        except Exception as e2:  # noqa: BLE001
            msg = f"<str() raised {type(e2).__name__}>"
        out["message"] = msg[:2000]
        out["traceback"] = "".join(traceback.format_exception(type(e), e, e.__traceback__))[-3000:]
    # -- checks
    if exc is not None:
        name = type(exc).__name__
        msg = out["message"]
        if any(s in msg for s in LEAKS):
            v.append(f"a C++/binding error escaped: {name}: {msg[:300]}")
        elif name in ALLOWED:
            pass
        elif name in CONDITIONAL and (not CONDITIONAL[name]
                                      or any(s in msg for s in CONDITIONAL[name])):
            if name in ("ZeroDivisionError", "SystemExit") and "lambda" not in att.call:
                v.append(f"unexpected exception class {name}: {msg[:300]}")
        else:
            v.append(f"unexpected exception class {name}: {msg[:300]}")
        if name == "MemoryError":
            v.append("MemoryError: memory blow-up")
        names = ns.get("NAMES")
        if (names and name in ("TypeError", "ValueError") and not any(s in msg for s in names)
                and "Hostile" not in out.get("traceback", "")):
            v.append(f"the {name} names none of {names}: {msg[:300]}")
        for n, a in watch.items():
            now = raw(a)
            if before[n] is not None and now != before[n]:
                v.append(f"{name} raised but array {n} changed (the call must leave every "
                         f"array as it was)")
    else:
        must = ns.get("MUST_RAISE")
        if must:
            v.append(f"returned normally; expected {must if isinstance(must, str) else 'an error'}")
        chk = ns.get("check")
        expect_arena = ns.get("EXPECT_ARENA", "unset")
        expect_bytes = ns.get("EXPECT_BYTES")
        if expect_arena is None:
            v.append("returned normally but the kernel accesses memory outside its arrays' "
                     "storage (expected a TrapError)")
        elif not isinstance(expect_arena, str):
            got = raw(ns["A"])
            want = expect_arena.tobytes()
            if got != want:
                diff = [i // 4 for i in range(len(want)) if got[i] != want[i]]
                v.append(f"the arena differs from the model at float index(es) "
                         f"{sorted(set(diff))[:12]}")
        if expect_bytes is not None:
            got = raw(ns["A"])
            if got != expect_bytes:
                diff = [i for i in range(len(expect_bytes)) if got[i] != expect_bytes[i]]
                v.append(f"bytes differ from the model at byte offset(s) {diff[:12]}")
        if chk is not None:
            try:
                ca = _grab_args(att, ns)
                ns["CALL_ARGS"] = ca
                msg = chk()
            except Exception as e:  # noqa: BLE001
                msg = None if isinstance(e, _NoArgs) else f"check() raised {type(e).__name__}: {e}"
            if msg:
                v.append(msg)
    for a, b in zip(ro, ro_before):
        if b is not None and raw(a) != b:
            v.append("read-only memory was written")
    if data_before is not None and bytes(bytearray(data)) != data_before:
        v.append("an immutable bytes object was written")
    if ns.get("CHECK_SECRET") and exc is not None:
        if "barrage-secret-line-2" in out.get("message", ""):
            v.append("the error echoes an included file beyond its first line")
        passwd = [ln for ln in out.get("message", "").splitlines()
                  if ln.count(":") >= 6 and ("/bin/" in ln or "/sbin/" in ln or "/usr/" in ln)]
        if len(passwd) > 1:  # the line that failed is fine; more is a leak
            v.append(f"the error echoes {len(passwd)} lines of /etc/passwd")
    if len(out.get("message", "")) > 1 << 20:
        v.append(f"the error message is {len(out['message'])} characters long")
    out.pop("traceback", None) if not v else None
    return out


class _NoArgs(Exception):
    pass


class _LazyTorch:
    def __getattr__(self, name):
        import torch
        return getattr(torch, name)


def _grab_args(att, ns):
    """Re-evaluates the call's argument list with k replaced by a recorder (the
    values the call got; the expression has no side effects but objects)."""
    call = att.call
    if not call.startswith("k("):
        raise _NoArgs()
    got = {}

    def rec(*args, **kwargs):
        got["args"] = args
        got["kwargs"] = kwargs
    ns2 = dict(ns)
    ns2["k"] = rec
    exec(compile(call, "<args>", "exec"), ns2)
    args = list(got["args"])
    kwargs = got["kwargs"]
    for i, n in enumerate(["Z", "X", "N"]):
        if n in kwargs:
            args.insert(i, kwargs[n])
    if len(args) < 3:
        raise _NoArgs()
    return args


def limit_memory(limit_bytes):
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    except (ValueError, OSError):
        pass


def main(argv):
    seed, index = int(argv[1]), int(argv[2])
    att = generate(seed, index)
    if "--print" in argv:
        print(f"# seed {seed} attempt {index} ({att.category})")
        print("from barrage_attempt import *\nimport numpy as np, triton_c")
        print(att.code())
        return 0
    limit = int(os.environ.get("TRITON_C_BARRAGE_AS", str(4 << 30)))
    limit_memory(limit)
    with tempfile.TemporaryDirectory(prefix="tc-barrage-") as tmp:
        try:
            out = run_attempt(att, tmp)
        except BaseException as e:  # noqa: BLE001 - the setup itself failed
            out = {"category": att.category, "code": att.code(), "outcome": "harness",
                   "violations": [f"harness error {type(e).__name__}: {e}"],
                   "traceback": traceback.format_exc()[-3000:]}
    out.update(seed=seed, index=index)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    out["maxrss_mib"] = ru.ru_maxrss // 1024
    sys.stdout.write("\nBARRAGE-RESULT " + json.dumps(out) + "\n")
    sys.stdout.flush()
    os._exit(0)  # no interpreter teardown (a bad object's finaliser is the attempt's business)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
