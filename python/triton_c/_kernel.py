"""triton_c.kernel: compile a Triton-C kernel and call it like a function."""

from __future__ import annotations

import ctypes
import difflib
import math
import os
import re
import sys
import warnings
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from . import _arrays as A
from . import _core
from ._grid import GridArg, Opt, _number, _texts, grid_expressions, grid_values

__all__ = ["kernel", "Kernel", "CompileError", "TrapError", "MismatchError", "CompileWarning",
           "LaunchWarning", "BACKENDS"]

BACKENDS = ("interp", "gpu", "compare", "triton")

_environ = os.environ

#: Triton's launch keywords that have no counterpart here (refused by name, not
#: taken as defines).
_TRITON_ONLY_OPTIONS = ("num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid",
                        "stream", "warmup", "num_consumer_groups", "num_buffers_warp_spec")

#: The documented limit of list-valued defines (frontend/Defines.h: kMaxVariants).
MAX_VARIANTS = 4096

#: The keyword arguments a launch takes; every other keyword names a kernel
#: parameter or is a define.
OPTIONS = ("grid", "backend", "num_warps", "num_stages", "key", "check_variants", "max_seconds",
           "threads", "race_check", "trace", "access_map", "rtol", "atol")


class CompileError(Exception):
    """The kernel did not compile; ``str(e)`` is the compiler's clang-style text."""

    def __init__(self, diagnostics: str, defines: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(diagnostics.rstrip("\n"))
        self.diagnostics = diagnostics
        self.defines = list(defines)


class CompileWarning(UserWarning):
    """A compiler warning (``constant 300 to int8 changes its value to 44``), or a
    define the kernel's source never uses."""


class LaunchWarning(UserWarning):
    """Something a launch did that is probably not meant: an output left partly
    unwritten (a grid too small for it)."""


class TrapError(Exception):
    """The kernel trapped (an out-of-bounds access, a failed assert, ...).

    Attributes: ``kind`` ('out_of_bounds', 'division_by_zero', ...), ``message``,
    ``kernel``, ``program`` (the program id tuple, or None for a launch-time
    trap), ``lane`` (flat row-major lane index or None), ``lane_index`` (the
    lane's index in its tile, e.g. ``(4, 0)``, or None), ``file``, ``line``, ``col``,
    ``report`` (the rendered report, also ``str(e)``) and ``state`` (the
    arrays as they were when the kernel stopped, by parameter name). The
    caller's arrays are unchanged.

    >>> try:
    ...     k(x, y, n, (4,), BLOCK=64)  # n = 200: program 3's lanes 8.. are past the end
    ... except triton_c.TrapError as e:
    ...     print(e.kind, e.program, e.lane_index, e.state['Y'].shape)
    out_of_bounds (3, 0, 0) (8,) (200,)
    """

    def __init__(self, d: dict) -> None:
        super().__init__(d["report"].rstrip("\n"))
        self.kind: str = d["kind"]
        self.message: str = d["message"]
        self.kernel: str = d["kernel"]
        self.program: Optional[tuple[int, int, int]] = d["program"]
        self.lane: Optional[int] = d["lane"]
        shape = tuple(d.get("lane_shape", ()))
        self.lane_index: Optional[tuple[int, ...]] = (
            tuple(int(i) for i in np.unravel_index(self.lane, shape))
            if self.lane is not None and shape else None)
        self.file: str = d["file"]
        self.line: int = d["line"]
        self.col: int = d["col"]
        self.report: str = d["report"]
        self.state: dict[str, np.ndarray] = {
            k: A.from_state(*v) for k, v in d.get("state", {}).items()}


class MismatchError(AssertionError):
    """Two backends (or two variants) disagree; ``mismatches`` maps each
    differing buffer to (first flat index, got, want, count, rule)."""

    def __init__(self, what: str, mismatches: dict[str, tuple]) -> None:
        lines = [what]
        for name, (index, got, want, count, rule) in mismatches.items():
            lines.append(f"  {name}: {count} element(s) differ ({rule}); first at flat index "
                         f"{index}: {got} vs {want}")
        super().__init__("\n".join(lines))
        self.mismatches = mismatches


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _stacklevel() -> int:
    """The ``stacklevel`` of a warning raised by the function that calls this:
    the first frame outside the package (the user's line, however many of the
    package's frames are in between: ``k(...)``, ``k[grid](...)``, triton_c.ops)."""
    f = sys._getframe(2)
    level = 2
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PACKAGE_DIR):
        f = f.f_back
        level += 1
    return level


# -- defines -------------------------------------------------------------------

def _define_text(name: str, v: Any) -> str:
    _text("define name", name)
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if not math.isfinite(f):
            raise ValueError(f"define {name}={v!r}: a define must be a finite number")
        return repr(f)
    if isinstance(v, str):
        return _text(f"define {name}", v)
    if A.is_dtype(v):
        try:
            return _core.lang_name(A.dtype_name(v))
        except (TypeError, ValueError):
            raise TypeError(f"define {name}={v!r}: the language has no such dtype") from None
    raise TypeError(f"define {name}={v!r}: expected a number, a string, a bool or a dtype "
                    f"(or a list of them), got {type(v).__name__}")


def _define_specs(defines: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    count = 1
    for name, v in defines.items():
        if isinstance(v, (list, tuple)):
            count *= max(len(v), 1)
            if count > MAX_VARIANTS:
                raise ValueError(f"the list-valued defines give more than {MAX_VARIANTS} "
                                 f"variants (at {name}, a list of {len(v)}); tune fewer values")
    specs = []
    for name, v in defines.items():
        if isinstance(v, (list, tuple)):
            if not v:
                raise ValueError(f"define {name}: empty list")
            specs.append((name, [_define_text(name, x) for x in v]))
        else:
            specs.append((name, [_define_text(name, v)]))
    return specs


def _typed(v: Any) -> Any:
    """A cache key part that tells 2 from 2.0 and True from 1 (the C preprocessor does)."""
    if isinstance(v, (list, tuple)):
        return (list, tuple(_typed(x) for x in v))
    try:
        hash(v)
    except TypeError:
        return (type(v), id(v))
    return (type(v), v)


# -- option checks -------------------------------------------------------------

def _check_backend(backend: Any, cuda: Any) -> str:
    if backend is None:
        env = os.environ.get("TRITON_C_BACKEND", "")
        if env:
            if env not in BACKENDS:
                raise ValueError(f"TRITON_C_BACKEND={env!r}: expected one of {', '.join(BACKENDS)}")
            return env
        return "gpu" if cuda is not None else "interp"
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}: expected one of {', '.join(BACKENDS)}")
    return backend


def _int_option(name: str, v: Any, lo: int, hi: Optional[int] = None) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name}={v!r}: expected an integer")
    v = int(v)
    if v < lo or (hi is not None and v > hi):
        raise ValueError(f"{name}={v}: expected an integer in [{lo}, {hi if hi is not None else 'inf'})"
                         if hi is None else f"{name}={v}: expected an integer in [{lo}, {hi}]")
    return v


def _warps(v: Any) -> list[int]:
    vs = list(v) if isinstance(v, (list, tuple)) else [v]
    if not vs:
        raise ValueError("num_warps: empty list")
    out = []
    for w in vs:
        w = _int_option("num_warps", w, 1, 32)
        if w & (w - 1):
            raise ValueError(f"num_warps={w}: expected a power of two from 1 to 32")
        out.append(w)
    return out


def _stages(v: Any) -> list[int]:
    if v is None:
        return []
    vs = list(v) if isinstance(v, (list, tuple)) else [v]
    if not vs:
        raise ValueError("num_stages: empty list")
    return [_int_option("num_stages", s, 1, 8) for s in vs]


def _seconds(v: Any) -> float:
    if v is None:
        return 0.0
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"max_seconds={v!r}: expected a number of seconds or None")
    f = float(v)
    if not math.isfinite(f) or f <= 0:
        raise ValueError(f"max_seconds={v!r}: expected a positive, finite number of seconds "
                         f"(None: no limit)")
    return f


def _tolerance(name: str, v: Any) -> Optional[float]:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}={v!r}: expected a number")
    f = float(v)
    if not math.isfinite(f) or f < 0:
        raise ValueError(f"{name}={v!r}: expected a non-negative, finite number")
    return f


def _check_options(backend: str, num_warps: Any, num_stages: Any, max_seconds: Any,
                   threads: Any, race_check: Any, trace: Any, access_map: Any, rtol: Any,
                   atol: Any) -> tuple:
    """The launch options checked: (warps, stages, seconds, threads, rtol, atol)."""
    warps = _warps(num_warps)
    stages = _stages(num_stages)
    seconds = _seconds(max_seconds)
    threads = _int_option("threads", threads, 0, 4096)
    rtol, atol = _tolerance("rtol", rtol), _tolerance("atol", atol)
    if access_map is not None and not isinstance(access_map, (bool, str, os.PathLike)):
        raise TypeError(f"access_map={access_map!r}: expected True or a file path")
    if access_map is not None and not isinstance(access_map, bool):
        _check_access_map_path(access_map)
    if access_map is not None and backend != "interp":
        raise ValueError("access_map: the access map is drawn by the interpreter "
                         "(backend='interp')")
    if not isinstance(trace, (bool, np.bool_)):
        raise TypeError(f"trace={trace!r}: expected True or False")
    if race_check is not None and not isinstance(race_check, (bool, np.bool_)):
        raise TypeError(f"race_check={race_check!r}: expected True, False or None (None: on "
                        f"for the interpreter)")
    if race_check and backend in ("gpu", "triton"):
        raise ValueError("race_check: races are checked by the interpreter "
                         "(backend='interp' or 'compare')")
    return warps, stages, seconds, threads, rtol, atol


# How every access-map page starts, and the element that holds its data: a file
# is replaced only when it is such a page (a file that merely mentions the
# marker, like this module, is not).
_ACCESS_HEAD = b'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n<title>access map: '
_ACCESS_MARK = b'<script type="application/json" id="access-data">'


def _check_access_map_path(path: Any) -> None:
    """Before anything runs: the page can be written there, and a file already
    there is an access map (nothing else is overwritten)."""
    p = os.fsdecode(os.fspath(path))
    _text("access_map", p)
    parent = os.path.dirname(os.path.abspath(p))
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"access_map={p!r}: the folder '{parent}' does not exist")
    if os.path.lexists(p):
        try:
            if not os.path.isfile(p):
                raise OSError("not a regular file")
            with open(p, "rb") as f:
                head = f.read(1 << 16)
        except OSError as e:
            raise FileExistsError(f"access_map={p!r}: exists and cannot be read as an access "
                                  f"map ({e}); refusing to overwrite it") from None
        if not head.startswith(_ACCESS_HEAD) or _ACCESS_MARK not in head:
            raise FileExistsError(f"access_map={p!r}: exists and is not an access map; "
                                  f"refusing to overwrite it")
    elif not os.access(parent, os.W_OK):
        raise PermissionError(f"access_map={p!r}: the folder '{parent}' is not writable")


def _text(what: str, s: str) -> str:
    """`s` if it can reach the compiler (UTF-8 text), else a ValueError naming `what`."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"{what}: {s[:40]!r} is not valid text ({e.reason} at {e.start})") \
            from None
    return s


# Option tuples already checked, keyed by their values and their types.
_OPTIONS_SEEN: dict = {}


# -- kernel signatures -----------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d\w*|\S")
_QUALIFIERS = {"const", "restrict", "volatile", "__restrict__", "__restrict"}
_MULTI_TYPE = {"unsigned", "signed", "long", "short", "int", "char", "float", "double", "bool",
               "half", "void"}


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)


def declared_params(text: str, name: str = "") -> Optional[list[str]]:
    """The parameter names of the kernel `name` (or of the only ``__global__``
    function) as the source spells them, before preprocessing; None when the
    declaration cannot be read without expanding macros."""
    text = _strip_comments(text)
    found = []
    for m in re.finditer(r"__global__\s+void\s+([A-Za-z_]\w*)\s*\(", text):
        found.append(m)
    if name:
        found = [m for m in found if m.group(1) == name]
    if len(found) != 1:
        return None
    i, depth = found[0].end(), 1
    start = i
    while i < len(text) and depth:
        depth += text[i] == "("
        depth -= text[i] == ")"
        i += 1
    if depth:
        return None
    params_text = text[start:i - 1]
    parts, depth, cur = [], 0, ""
    for ch in params_text:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        parts.append(cur)
    names = []
    for p in parts:
        toks = _TOKEN.findall(p)
        j = 0
        while j < len(toks) and toks[j] in _QUALIFIERS:
            j += 1
        if j < len(toks) and toks[j] in _MULTI_TYPE:
            while j < len(toks) and (toks[j] in _MULTI_TYPE or toks[j] in _QUALIFIERS):
                j += 1
        elif j < len(toks) and re.match(r"[A-Za-z_]", toks[j]):
            j += 1  # a type name (or a macro such as TYPE)
        while j < len(toks) and (toks[j] == "*" or toks[j] in _QUALIFIERS):
            j += 1
        if j >= len(toks) or not re.match(r"[A-Za-z_]\w*$", toks[j]):
            return None
        names.append(toks[j])
    return names


def _closest(name: str, candidates: Iterable[str], cutoff: float = 0.75) -> str:
    m = difflib.get_close_matches(name, list(candidates), n=1, cutoff=cutoff)
    return m[0] if m else ""


# -- the kernel ------------------------------------------------------------------

class _Plan:
    """What one set of defines compiles to, cached per Kernel."""

    __slots__ = ("specs", "variants", "first", "names", "types", "outputs", "checked")

    def __init__(self, specs, variants, first, names, types, outputs) -> None:
        self.specs = specs
        self.variants = variants
        self.first = first
        self.names = names
        self.types = types
        self.outputs = outputs
        self.checked = False  # unused defines reported


class Kernel:
    """A Triton-C kernel callable from Python (see :func:`kernel`).

    >>> add = triton_c.kernel('examples/vector_add.tc', outputs=['c'])  # add(int N, TYPE *a, ...)
    >>> c = add[(triton_c.cdiv(n, 1024),)](n, a, b, c, SIZE=1024, TYPE='float')
    """

    def __init__(self, src: Union[str, os.PathLike], outputs: Union[str, Sequence[str]] = (), *,
                 name: Optional[str] = None,
                 include_dirs: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]] = ()
                 ) -> None:
        if isinstance(src, os.PathLike):
            path = os.fspath(src)
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if not os.path.isfile(path):
                raise FileNotFoundError(f"src: kernel file '{path}' not found")
            self._path, self._text = path, ""
        elif isinstance(src, str):
            one_line = "\n" not in src and "{" not in src and ";" not in src
            if one_line:  # a path: it must exist (a mistyped path is no source text)
                if not os.path.isfile(src):
                    raise FileNotFoundError(
                        f"src: kernel file '{src}' not found (give the source text, which has "
                        f"a body in braces, or the path of an existing file)")
                self._path, self._text = src, ""
            else:
                self._path, self._text = "", _text("src", src)
        else:
            raise TypeError(f"src: expected Triton-C source text or a path, got "
                            f"{type(src).__name__}")
        self._source_name = self._path or "<kernel>"
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name={name!r}: expected the name of a __global__ function")
        self._kernel_name = _text("name", name or "")
        if isinstance(include_dirs, (str, os.PathLike)):
            include_dirs = [include_dirs]
        if not isinstance(include_dirs, Iterable):
            raise TypeError(f"include_dirs={include_dirs!r}: expected a folder or a list of "
                            f"folders")
        if not isinstance(outputs, (str, Iterable)):
            raise TypeError(f"outputs={outputs!r}: expected a parameter name or a list of them")
        dirs = []
        for d in include_dirs:
            if not isinstance(d, (str, os.PathLike)):
                raise TypeError(f"include_dirs: expected folder paths, got {d!r}")
            dirs.append(_text("include_dirs", os.fsdecode(os.fspath(d))))
        self._include_dirs = dirs
        if isinstance(outputs, str):
            outputs = [outputs]
        outs = []
        for o in outputs:
            if not isinstance(o, str):
                raise TypeError(f"outputs: expected parameter names, got {o!r}")
            outs.append(o)
        self.outputs = outs
        self._compiled: dict[tuple, Any] = {}
        self._idents: dict[int, frozenset] = {}
        self._tuned: dict[tuple, tuple] = {}
        self._plans: dict[tuple, _Plan] = {}
        self._declared: Optional[set] = None
        self._last: Optional[tuple] = None  # (compiled kernel, num_warps) of the last launch
        self._fast: dict[tuple, _FastGpu] = {}  # repeated CUDA launches (see _FastGpu)
        self.last_tune_report: str = ""
        self.last_tune_from_cache: bool = False
        self.last_access_map: str = ""

    # -- compiling ------------------------------------------------------------
    def compile(self, defines: Sequence[tuple[str, str]] = ()) -> Any:
        """Compiles one variant (cached); raises CompileError; compiler warnings
        go to Python's ``warnings`` as :class:`CompileWarning`.

        >>> k.compile([('BLOCK', '128'), ('TYPE', 'float')]).params
        [('X', 'float32*'), ('Y', 'float32*'), ('N', 'int32')]
        """
        key = tuple(defines)
        k = self._compiled.get(key)
        if k is None:
            if isinstance(defines, (str, bytes)) or not all(
                    isinstance(d, tuple) and len(d) == 2 and all(isinstance(x, str) for x in d)
                    for d in key):
                raise TypeError(f"defines={defines!r}: expected a list of (name, value) "
                                f"string pairs, e.g. [('BLOCK', '128')]")
            k, diags = _core.compile(self._text, self._source_name, self._path, list(key),
                                     self._include_dirs, self._kernel_name)
            if k is None:
                raise CompileError(diags, key)
            self._compiled[key] = k
            if diags.strip():
                warnings.warn(diags.rstrip("\n"), CompileWarning, stacklevel=_stacklevel())
            self._last = (k, self._last[1] if self._last else 4)
        return k

    def params(self, **defines: Any) -> list[tuple[str, str]]:
        """The parameters of the first variant: [(name, 'float32*'), ...].

        >>> k.params(TYPE='float', BLOCK=128)
        [('X', 'float32*'), ('Y', 'float32*'), ('N', 'int32')]
        """
        variants = _core.expand_defines(_define_specs(defines))
        return self.compile(variants[0]).params

    def _declared_params(self) -> set:
        if self._declared is None:
            text = self._text
            if self._path:
                try:
                    with open(self._path, encoding="utf-8", errors="replace") as f:
                        text = f.read(4 << 20)
                except OSError:
                    text = ""
            self._declared = set(declared_params(text, self._kernel_name) or ())
        return self._declared

    @property
    def asm(self) -> "Asm":
        """The code of the last launched (or compiled) variant, as Triton's
        ``compiled.asm``: ``k.asm['ir']`` (tile IR), ``k.asm['llvm']`` (LLVM IR)
        and ``k.asm['ptx']`` (PTX for sm_90, as the GPU backend compiles it
        without argument specialisation; a GPU launch compiles it for its
        arguments' classes, whose PTX ``tritonc --specialize`` prints:
        docs/gpu-perf.md, "Argument specialisation").

        >>> z = add(x, y, z, n, (4,), BLOCK=256)
        >>> print(add.asm['ir'].splitlines()[0])
        kernel @add(%X: !ptr<f32>, %Y: !ptr<f32>, %Z: !ptr<f32>, %N: i32) ...
        >>> '.visible .entry add(' in add.asm['ptx']
        True
        """
        if self._last is None:
            raise RuntimeError("Kernel.asm: launch the kernel (or compile a variant with "
                               "k.compile(...)) first; asm shows the last one")
        return Asm(*self._last)

    # -- calling --------------------------------------------------------------
    def __getitem__(self, grid: GridArg) -> Callable[..., Any]:
        """Triton's launch syntax: ``k[grid](args..., DEFINES...)``.

        >>> z = add[(triton_c.cdiv(n, 1024),)](x, y, z, n, BLOCK=1024)
        >>> z = add[lambda meta: (triton_c.cdiv(n, meta['BLOCK']),)](x, y, z, n, BLOCK=1024)
        """
        if not callable(grid) or isinstance(grid, type):
            _texts(grid)  # a bad grid fails here, at the subscript

        def launch(*args: Any, **kwargs: Any) -> Any:
            if "grid" in kwargs:
                raise TypeError("k[grid](...) already has a grid; do not also pass grid=")
            return self(*args, grid=grid, **kwargs)

        launch.__doc__ = self.__call__.__doc__
        return launch

    def __call__(self, *args: Any, grid: Optional[GridArg] = None, backend: Optional[str] = None,
                 num_warps: Union[int, Sequence[int]] = 4,
                 num_stages: Union[int, Sequence[int], None] = None,
                 key: Optional[Sequence[str]] = None, check_variants: bool = False,
                 max_seconds: Optional[float] = None, threads: int = 0,
                 race_check: Optional[bool] = None, trace: bool = False,
                 access_map: Union[None, bool, str, os.PathLike] = None,
                 rtol: Optional[float] = None, atol: Optional[float] = None,
                 **kwargs: Any) -> Any:
        """Runs the kernel; returns the arrays named in ``outputs`` (written in place).

        ``args`` are the kernel's parameters in order (arrays for pointers:
        NumPy arrays, PyTorch tensors, strided views included; numbers for
        scalars), then the grid unless given as ``grid=`` or ``k[grid]``. A
        keyword that names a parameter binds it; any other keyword is a define
        (``-D``): a number, string, bool or dtype, or a list of them (the GPU
        auto-tunes over lists; the interpreter runs the first value, or every
        one with ``check_variants=True``).

        Options: ``backend`` ('interp', 'gpu', 'compare', or 'triton': the kernel
        translated to Triton's DSL and run by Triton; default: 'gpu' for
        CUDA tensors, else 'interp', or $TRITON_C_BACKEND), ``num_warps`` and
        ``num_stages`` (GPU), ``key`` (the arguments the auto-tuner keys on),
        ``max_seconds`` (a wall-clock limit; None: none), ``threads`` (the
        interpreter's; 0: every core), ``race_check`` (the interpreter traps two
        programs touching one element unsynchronised: on by default; ``False``
        switches it off), ``trace`` (print every op's value), ``access_map`` (True: ``k.last_access_map`` holds an HTML page
        of which program touched which element; a path: written there),
        ``rtol``/``atol`` (the tolerance of 'compare' and of variant checks).

        A trap raises :class:`TrapError` and leaves every array as it was;
        Ctrl-C raises KeyboardInterrupt, also leaving them unchanged (a SIGINT
        handler of your own decides: it runs during the launch, which stops
        only if the handler raises; its exception then comes out of the call).

        >>> z = add(x, y, z, n, lambda meta: (triton_c.cdiv(n, meta['BLOCK']),), BLOCK=256)
        >>> z = add(x, y, z, N=n, grid=(4,), BLOCK=256, backend='compare')
        """
        # The repeated CUDA launch of a call made before with the same keywords
        # and options: no Python-side checks (the C++ launcher checks each
        # argument and says when this call needs the full path below).
        fkey: Optional[tuple] = (
            len(args), grid is None, backend, num_warps, num_stages, key, check_variants,
            max_seconds, threads, race_check, trace, access_map, rtol, atol,
            type(num_warps), type(num_stages), type(threads),
            _environ.get("TRITON_C_BACKEND", "") if backend is None else "")
        if kwargs:
            fkey += (tuple(kwargs.items()), tuple(map(type, kwargs.values())))
        fixed_grid = None
        try:
            fe = self._fast.get(fkey) if self._fast else hash(fkey) and None
        except TypeError:  # an unhashable option or define (a list to tune over)
            fe, fkey = None, None
        if fe is not None:
            done, fixed_grid = fe.launch(self, args, args[-1] if fe.grid_in_args else grid)
            if done:
                outs = fe.outputs
                if not outs:
                    return None
                if len(outs) == 1:
                    return args[outs[0]]
                return tuple(args[i] for i in outs)
        grid_in_args = grid is None
        # Keywords: kernel parameters by name, options misspelt, defines.
        declared = self._declared_params() if kwargs else set()
        bound = {k: v for k, v in kwargs.items() if k in declared}
        defines = {k: v for k, v in kwargs.items() if k not in declared}
        for k, v in list(defines.items()):
            if A.is_array(v) and not isinstance(v, (str, bytes)):
                bound[k] = defines.pop(k)  # an array is never a define
        try:
            dkey = tuple((k, _typed(v)) for k, v in defines.items())
            plan = self._plans.get(dkey)
        except TypeError:  # pragma: no cover - _typed makes every key hashable
            dkey, plan = None, None
        if plan is None:
            specs = _define_specs(defines)
            variants = _core.expand_defines(specs)
            first = self.compile(variants[0])
            params = first.params
            names = [n for n, _ in params]
            types = [t for _, t in params]
            for o in self.outputs:
                if o not in names:
                    raise ValueError(f"outputs: kernel '{first.name}' has no parameter named '{o}'")
            plan = _Plan(specs, variants, first, names, types,
                         [names.index(o) for o in self.outputs])
            if dkey is not None:
                if len(self._plans) > 256:
                    self._plans.clear()
                self._plans[dkey] = plan
        names = plan.names
        for k in bound:
            if k not in names:
                raise TypeError(f"kernel '{plan.first.name}' has no parameter named '{k}' "
                                f"(parameters: {', '.join(names)})")
        args = list(args)
        nparams = len(names)
        npos = nparams - len(bound)
        if grid is None:
            if len(args) == npos + 1 or (len(args) > npos and (
                    callable(args[-1]) or isinstance(args[-1], (tuple, list, str)))):
                grid = args.pop()
            else:
                raise TypeError(f"kernel '{plan.first.name}': no grid (give it after the "
                                f"{npos} arguments, as grid=..., or launch with k[grid](...))")
        if bound:
            full: list = []
            pos = iter(args)
            for i, n in enumerate(names):
                if n in bound:
                    if i < len(args):
                        raise TypeError(f"kernel '{plan.first.name}': got multiple values for "
                                        f"parameter '{n}' (by position and by keyword)")
                    full.append(bound[n])
                else:
                    full.append(next(pos, _MISSING))
            if any(a is _MISSING for a in full):
                missing = [n for n, a in zip(names, full) if a is _MISSING]
                raise TypeError(f"kernel '{plan.first.name}': missing argument for parameter "
                                f"'{missing[0]}'")
            args = full + list(pos)
        given = args
        args = list(args)
        # Arrays that only speak DLPack become NumPy arrays or tensors (one export each).
        plain = _plain_types()
        for i, a in enumerate(args):
            if (type(a) not in plain and not isinstance(a, (np.ndarray, int, float, bool))
                    and not A.is_torch(a) and hasattr(a, "__dlpack__")):
                try:
                    args[i] = A.from_dlpack(a)
                except Exception as e:  # noqa: BLE001 - any failure is the argument's
                    what = f"argument '{names[i]}'" if i < len(names) else f"argument {i}"
                    raise TypeError(f"{what}: cannot read its __dlpack__ array: {e}") from None
        cuda = _first_cuda(args)
        backend = _check_backend(backend, cuda)
        okey = (backend, num_warps, num_stages, max_seconds, threads, race_check, trace,
                access_map, rtol, atol)
        okey = (okey, tuple(map(type, okey)))  # True is not 1 here
        try:
            checked = _OPTIONS_SEEN.get(okey)
        except TypeError:  # a list of warps or stages
            checked, okey = None, None
        if check_variants is not False and check_variants is not True and not isinstance(
                check_variants, np.bool_):
            raise TypeError(f"check_variants={check_variants!r}: expected True or False")
        if checked is None:
            checked = _check_options(backend, num_warps, num_stages, max_seconds, threads,
                                     race_check, trace, access_map, rtol, atol)
            if okey is not None and len(_OPTIONS_SEEN) < 1024:
                _OPTIONS_SEEN[okey] = checked
        warps, stages, seconds, threads, rtol, atol = checked
        if key is not None and (isinstance(key, str) or not isinstance(key, Iterable)
                                or not all(isinstance(x, str) for x in key)):
            raise TypeError(f"key={key!r}: expected a list of parameter names")
        if key is not None:  # on every backend, as the GPU's auto-tuner reads it
            missing = [n for n in key if n not in plan.names]
            if missing:
                raise ValueError(f"key: kernel '{plan.first.name}' has no parameter "
                                 f"{missing[0]!r} (parameters: {', '.join(plan.names)})")
        if not plan.checked:
            self._check_defines(plan, defines, grid)
        run = _Run(self, plan, args, grid, warps, stages, key, seconds, threads,
                   backend in ("interp", "compare") if race_check is None else bool(race_check),
                   bool(trace),
                   access_map, rtol, atol)
        run.fixed_grid = fixed_grid
        if backend == "gpu":
            run.gpu(cuda)
            if (fkey is not None and not bound and run.launched is not None
                    and len(plan.variants) == 1 and len(warps) == 1 and len(stages) <= 1
                    and key is None and not check_variants and not seconds and not trace
                    and race_check is None and access_map is None and rtol is None
                    and atol is None and not isinstance(grid, str)):
                self._make_fast(fkey, plan, run, grid_in_args)
        elif backend == "triton":
            run.triton()
        elif backend == "interp":
            run.interp(bool(check_variants))
            if (fkey is not None and not bound and (not check_variants or len(plan.variants) == 1)
                    and access_map is None):
                self._make_fast_interp(fkey, plan, run, grid_in_args)
        else:
            run.compare()
        idx = plan.outputs
        if not idx:
            return None
        if len(idx) == 1:
            return given[idx[0]]
        return tuple(given[i] for i in idx)

    def _check_defines(self, plan: _Plan, defines: Mapping[str, Any], grid: Any) -> None:
        """A define the source never uses: a misspelt option is a TypeError; any
        other a CompileWarning with a did-you-mean (the run tools' rule). The
        plan counts as checked only when no TypeError was raised: a misspelt
        option raises on every call, never becomes a define on the second."""
        if not defines:
            plan.checked = True
            return
        k = plan.first
        used = set(_core.source_identifiers(k))
        if isinstance(grid, str):
            used.update(re.findall(r"[A-Za-z_]\w*", grid))
        elif isinstance(grid, (tuple, list)):
            for g in grid:
                if isinstance(g, str):
                    used.update(re.findall(r"[A-Za-z_]\w*", g))
        for name, v in defines.items():
            if name in used:
                continue
            if name in _TRITON_ONLY_OPTIONS:
                raise TypeError(f"{name}=: a launch option of Triton that triton_c does not "
                                f"support (its options: {', '.join(OPTIONS)})")
            opt = _closest(name, OPTIONS)
            if opt:
                raise TypeError(f"unexpected keyword argument '{name}': not a kernel parameter, "
                                f"not used by the source; did you mean {opt}=?")
            if callable(grid):
                continue  # the grid lambda may use it (meta['NAME'])
            best = _closest(name, used)
            warnings.warn(f"define {name}={v!r} is not used by the kernel's source"
                          + (f"; did you mean {best}?" if best else ""),
                          CompileWarning, stacklevel=_stacklevel())
        plan.checked = True


    def _make_fast(self, fkey: tuple, plan: _Plan, run: "_Run", grid_in_args: bool) -> None:
        """After a full launch on the GPU with CUDA tensors: the launcher that
        repeats it (same keywords and options) with no Python-side checks."""
        torch = sys.modules.get("torch")
        if torch is None or run.launched is None:
            return
        k, nw, ns, device = run.launched
        dtypes: list = []
        for a, t in zip(run.args, plan.types):
            if t.endswith("*"):
                if type(a) is not torch.Tensor or not a.is_cuda:
                    return
                dtypes.append(a.dtype)
            else:
                dtypes.append(None)
        fe = _FastGpu()
        fe.launcher = _core.DeviceLauncher(k, device, nw, ns, dtypes, torch.Tensor, _bump_many())
        fe.device = device
        fe.grid_in_args = grid_in_args
        fe.outputs = plan.outputs
        fe.last = (k, nw)
        fe.defines = {n: _number(v) for n, v in plan.variants[0]}
        fe.scalars = [(n, i) for i, (n, t) in enumerate(zip(plan.names, plan.types))
                      if not t.endswith("*")]
        fe.num_warps = nw
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        fe.stream = raw if raw is not None else (
            lambda d: torch.cuda.current_stream(d).cuda_stream)
        fe.grad = torch.is_grad_enabled
        if len(self._fast) >= 64:
            self._fast.clear()
        self._fast[fkey] = fe


    def _make_fast_interp(self, fkey: tuple, plan: _Plan, run: "_Run",
                          grid_in_args: bool) -> None:
        """After a full launch on the interpreter with C-contiguous, writable
        NumPy arrays: the launch that repeats it (same keywords and options)."""
        arrays = []
        for i, (a, t) in enumerate(zip(run.args, plan.types)):
            if t.endswith("*"):
                if (type(a) is not np.ndarray or not a.flags.c_contiguous
                        or not a.flags.writeable or A.is_numpy_bf16(a.dtype)):
                    return
                arrays.append((i, a.dtype))
        fe = _FastInterp()
        fe.k = plan.first
        fe.plan = plan
        fe.arrays = arrays
        fe.nparams = len(plan.names)
        fe.grid_in_args = grid_in_args
        fe.outputs = plan.outputs
        fe.last = (plan.first, 4)
        fe.defines = {n: _number(v) for n, v in plan.variants[0]}
        fe.scalars = [(n, i) for i, (n, t) in enumerate(zip(plan.names, plan.types))
                      if not t.endswith("*")]
        fe.num_warps = 4
        fe.options = (run.threads, run.seconds, run.race_check, run.trace)
        if len(self._fast) >= 64:
            self._fast.clear()
        self._fast[fkey] = fe


_MISSING = object()
_NUMBERS = (int, float, np.integer, np.floating)


def _scalar_value(a: Any) -> Any:
    """A scalar argument as the grid lambda's ``meta`` sees it: a number as
    itself, a 0-d array or tensor (which the kernel takes as its value) as its
    Python number; None for anything else."""
    if isinstance(a, (_NUMBERS, np.bool_)):
        return a
    shape = getattr(a, "shape", None)
    if shape is not None and len(shape) == 0 and hasattr(a, "item") and not isinstance(a, type):
        try:
            v = a.item()
        except Exception:  # noqa: BLE001 - not a number: the launch says so
            return None
        return v if isinstance(v, (int, float)) else None
    return None


def _grid_of(fe: Any, g: Any, args: tuple) -> Any:
    """The grid of a repeated launch: ``g``, or a lambda's value for the
    variant's defines and the launch's scalars (Opt(...), built faster)."""
    if not callable(g) or type(g) is type:
        return g
    meta = Opt.__new__(Opt)
    d = dict(fe.defines)
    for name, i in fe.scalars:
        a = args[i]
        if name not in d:
            v = a if isinstance(a, _NUMBERS) else _scalar_value(a)
            if v is not None:
                d[name] = v
    meta._defines = d
    meta._num_warps = fe.num_warps
    meta.read_num_warps = False
    return g(meta)


class _FastInterp:
    """A repeated launch on the interpreter with NumPy arrays (see
    Kernel._make_fast_interp): no Python-side checks but the arrays' type,
    dtype, layout and writability."""

    __slots__ = ("k", "plan", "arrays", "nparams", "grid_in_args", "outputs", "last", "defines",
                 "scalars", "num_warps", "options")

    def launch(self, kernel: Kernel, args: tuple, g: Any) -> tuple[bool, Any]:
        for i, d in self.arrays:
            a = args[i]
            if type(a) is not np.ndarray or a.dtype != d:
                return False, None
            f = a.flags
            if not f.c_contiguous or not f.writeable:
                return False, None
        v = _grid_of(self, g, args)
        texts = _texts(v)
        n = self.nparams
        core_args = list(args) if len(args) == n else list(args[:n])
        threads, seconds, race_check, trace = self.options
        res = _core.launch(self.k, "interp", core_args, texts, 4, 0, 0, threads, seconds,
                           race_check, trace, False)
        if (res["status"] == "ok" and not res["warnings"] and not res["output"]
                and res["raised"] is None):
            kernel._last = self.last
            return True, None
        run = _Run(kernel, self.plan, core_args, v, [4], [], None, seconds, threads, race_check,
                   trace, None, None, None)
        run.finish(self.k, res, core_args, 4, True)
        return True, None


class _FastGpu:
    """A repeated launch on the GPU (Kernel._make_fast): the C++ launcher,
    what the grid lambda sees, and where the outputs are."""

    __slots__ = ("launcher", "device", "grid_in_args", "outputs", "last", "defines", "scalars",
                 "num_warps", "stream", "grad")

    def launch(self, kernel: Kernel, args: tuple, g: Any) -> tuple[bool, Any]:
        """(True, None) when launched; else (False, the grid lambda's value or
        None), and the caller takes the full path (with that value as the grid:
        a lambda is called once per launch)."""
        fixed = None
        tg = type(g)
        if tg is tuple or tg is list:
            v = g
        elif tg is int:
            v = (g,)
        elif callable(g) and tg is not type:
            v = fixed = _grid_of(self, g, args)
            if type(v) is int:
                v = (v,)
            elif type(v) is not tuple and type(v) is not list:
                return False, fixed
        else:
            return False, None
        n = len(v)
        if n == 1:
            g0, g1, g2 = v[0], 1, 1
        elif n == 2:
            g0, g1 = v
            g2 = 1
        elif n == 3:
            g0, g1, g2 = v
        else:
            return False, fixed
        if (type(g0) is not int or type(g1) is not int or type(g2) is not int
                or not (0 < g0 < 2147483648 and 0 < g1 < 65536 and 0 < g2 < 65536)):
            return False, fixed
        if self.launcher(args, g0, g1, g2, self.stream(self.device), self.grad()):
            kernel._last = self.last
            return True, None
        return False, fixed


_BUMP_MANY: Any = None


def _bump_many() -> Callable[[tuple], Any]:
    """A function that marks a tuple of tensors modified in place."""
    global _BUMP_MANY
    if _BUMP_MANY is None:
        import torch

        raw = getattr(torch._C, "_increment_version", None)
        try:
            if raw is None:
                raise TypeError
            raw(())  # takes a tuple of tensors (PyTorch >= 2.1)
            _BUMP_MANY = raw
        except (TypeError, RuntimeError):
            def _BUMP_MANY(ts: tuple) -> None:  # noqa: N802
                for t in ts:
                    _bump_version(t)
    return _BUMP_MANY


class Asm(Mapping):
    """``k.asm['ir' | 'llvm' | 'ptx']``: the code of one compiled variant."""

    _KEYS = ("ir", "llvm", "ptx")

    def __init__(self, compiled: Any, num_warps: int) -> None:
        self._k = compiled
        self._warps = num_warps
        self._cache: dict[str, str] = {}

    def __getitem__(self, what: str) -> str:
        if what not in self._KEYS:
            raise KeyError(f"asm[{what!r}]: expected one of {', '.join(self._KEYS)}")
        if what not in self._cache:
            self._cache[what] = _core.asm(self._k, what, self._warps)
        return self._cache[what]

    def __iter__(self):
        return iter(self._KEYS)

    def __len__(self) -> int:
        return len(self._KEYS)


def _buffer_extent(a: Any) -> Optional[tuple]:
    """(memory, lo, hi) of the bytes the C++ core takes as array `a`'s buffer (a
    contiguous array's own bytes, a strided view's whole storage); memory is
    "host" (NumPy arrays, CPU tensors) or a CUDA device. None: not an array,
    or empty."""
    if isinstance(a, np.ndarray):
        if a.size == 0:
            return None
        if a.flags.c_contiguous:
            lo = a.ctypes.data
            return ("host", lo, lo + a.nbytes)
        lo, n = A.numpy_storage(a)
        return ("host", lo, lo + n)
    if A.is_torch(a):
        if a.numel() == 0:
            return None
        memory = str(a.device) if a.is_cuda else "host"
        if a.is_contiguous():
            lo = a.data_ptr()
            return (memory, lo, lo + a.numel() * a.element_size())
        lo, n = A.torch_storage(a)
        return (memory, lo, lo + n)
    return None


def _partial_element(members: list, lo: int, hi: int) -> Optional[int]:
    """The first of `members` (arrays of one memory, its bytes [lo, hi)) that
    starts inside an element of its own dtype counted from lo, or whose union is
    no whole number of its elements: a launch refuses those (runtime/Overlap.h),
    and a tensor could not be made over one copy of the union. None: none."""
    for i, a in enumerate(members):
        size = a.dtype.itemsize if isinstance(a, np.ndarray) else a.element_size()
        start = a.ctypes.data if isinstance(a, np.ndarray) else a.data_ptr()
        if (start - lo) % size or (hi - lo) % size:
            return i
    return None


def _clone_group(members: list, lo: int, hi: int, host: bool, writable: bool) -> list:
    """Copies of arrays of one memory that share one copy of its bytes [lo, hi),
    each at its own offset with its own strides (CUDA tensors on the host when
    `host`). Expects no member at a partial element (_partial_element)."""
    torch = sys.modules.get("torch")
    if A.is_cuda(members[0]):
        # The union's bytes through a member whose storage holds all of them (views
        # of one memory may have storages of their own, e.g. one re-imported through
        # DLPack: its storage starts at its first element, so the union can begin
        # before it).
        for a in members:
            base, n = A.torch_storage(a)
            if base <= lo and hi <= base + n:
                t = a.detach()
                break
        else:
            raise ValueError("CUDA tensors that overlap in memory, none of whose storages "
                             "holds all of them: not supported yet (pass a copy)")
        whole = t.as_strided((n // t.element_size(),), (1,), 0).view(torch.uint8)
        raw_t = whole[lo - base:hi - base].clone()
        if host:
            raw_t = raw_t.cpu()
    else:
        raw = np.frombuffer((ctypes.c_uint8 * (hi - lo)).from_address(lo), dtype=np.uint8).copy()
        raw_t = torch.from_numpy(raw) if torch is not None else None
    out = []
    for a in members:
        if isinstance(a, np.ndarray):
            c = np.ndarray(a.shape, dtype=a.dtype, buffer=raw, offset=a.ctypes.data - lo,
                           strides=a.strides)
            if not writable and not a.flags.writeable:
                c.flags.writeable = False
        else:
            c = raw_t.view(a.dtype).as_strided(a.size(), a.stride(),
                                               (a.data_ptr() - lo) // a.element_size())
        out.append(c)
    return out


def _clone_all(args: Sequence[Any], host: bool, writable: bool = False,
               params: Optional[Sequence[tuple]] = None) -> list:
    """Copies of the arguments (CUDA tensors as host copies when `host`) in which
    arrays whose buffers overlap in the caller's memory (x[0:128] and
    x[64:192]) overlap in the same way: one copy of the union of their bytes,
    each at its own offset. Others as A.clone / A.to_host copy them. Views that
    a launch refuses because one would start inside another's element are
    refused here the same way (ValueError naming both of `params`, the kernel's
    (name, type) pairs), never copied apart: separate copies would run and
    agree on what the caller's overlapping memory does not do."""
    one = (lambda a: A.clone(A.to_host(a), writable=writable)) if host else (
        lambda a: A.clone(a, writable=writable))
    extents = [_buffer_extent(a) for a in args]
    group = list(range(len(args)))

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i, e in enumerate(extents):
        for j in range(i):
            f = extents[j]
            if e is not None and f is not None and e[0] == f[0] and e[1] < f[2] and f[1] < e[2]:
                group[root(i)] = root(j)
    members: dict = {}
    for i, e in enumerate(extents):
        if e is not None:
            members.setdefault(root(i), []).append(i)
    out = list(args)
    for i, a in enumerate(args):
        if A.is_array(a) and len(members.get(root(i), ())) < 2:
            out[i] = one(a)
    for idx in members.values():
        if len(idx) < 2:
            continue
        lo = min(extents[i][1] for i in idx)
        hi = max(extents[i][2] for i in idx)
        bad = _partial_element([args[i] for i in idx], lo, hi)
        if bad is not None:
            def text(i: int) -> str:
                if params is None or i >= len(params):
                    return f"argument {i}"
                return f"argument '{params[i][0]}' ({params[i][1]})"
            raise ValueError(f"{text(idx[bad])} overlaps {text(idx[0 if bad else 1])} in memory "
                             f"at an offset that is not a whole number of its elements: not "
                             f"supported yet (pass a copy)")
        copies = _clone_group([args[i] for i in idx], lo, hi, host, writable)
        for k, i in enumerate(idx):
            out[i] = copies[k]
    return out


def _first_cuda(args: Sequence[Any]) -> Any:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    tensor = torch.Tensor
    for a in args:
        if isinstance(a, tensor) and a.is_cuda:
            return a
    return None


def _current_stream(t: Any) -> tuple[int, int]:
    """(device index, raw CUstream of PyTorch's current stream there)."""
    import torch

    device = t.get_device()
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return device, raw(device)
    return device, torch.cuda.current_stream(device).cuda_stream


def _needs_grad_guard(a: Any) -> bool:
    """A tensor the kernel may not write behind autograd's back: one that
    requires grad while grad mode is on (torch's in-place ops refuse it or
    record it; a kernel can do neither)."""
    torch = sys.modules.get("torch")
    return (torch is not None and isinstance(a, torch.Tensor) and a.requires_grad
            and torch.is_grad_enabled())


def _inference_guard(a: Any) -> bool:
    """An inference tensor (made under torch.inference_mode()) outside
    inference mode: torch refuses every in-place write to it, and so does a
    kernel (a store to it traps before anything is written)."""
    torch = sys.modules.get("torch")
    return (torch is not None and isinstance(a, torch.Tensor) and a.is_inference()
            and not torch.is_inference_mode_enabled())


def _inference_message(name: str) -> str:
    return (f"argument '{name}' is an inference tensor (made under torch.inference_mode()) "
            f"and the kernel stores to it: torch does not allow in-place updates to it outside "
            f"inference mode; call the kernel inside torch.inference_mode() or pass a clone(); "
            f"nothing was written")


_PLAIN: set = {np.ndarray, int, float, bool}
_PLAIN_WITH_TORCH = False


def _plain_types() -> set:
    """Argument types that need no DLPack import (torch's, once torch is loaded)."""
    global _PLAIN_WITH_TORCH
    if not _PLAIN_WITH_TORCH:
        torch = sys.modules.get("torch")
        if torch is not None:
            _PLAIN.update({torch.Tensor, torch.nn.Parameter})
            _PLAIN_WITH_TORCH = True
    return _PLAIN


_INCREMENT: Any = None
_TORCH_NAMES = A._TORCH_NAMES  # torch dtype -> the language's dtype name


def _bump_version(t: Any) -> None:
    """Marks a tensor modified in place, as an in-place op does (autograd then
    refuses a backward that saved it before)."""
    global _INCREMENT
    if _INCREMENT is None:
        import torch

        raw = getattr(torch._C, "_increment_version", None)
        graph = getattr(getattr(torch.autograd, "graph", None), "increment_version", None)
        if graph is not None:
            _INCREMENT = graph
            if raw is not None:  # graph's own body, without its Python layer
                try:
                    raw((t,))
                    _INCREMENT = lambda x: raw((x,))  # noqa: E731
                    return
                except TypeError:
                    pass
        elif raw is not None:
            _INCREMENT = raw
        else:
            def _INCREMENT(x: Any) -> None:  # noqa: N802 - older PyTorch
                with torch.no_grad():  # an in-place op that touches no element
                    x.as_strided((0,), (1,), x.storage_offset()).zero_()
    _INCREMENT(t)


class _Run:
    """One call of a kernel: its arguments, grid and options, on one backend."""

    __slots__ = ("k", "plan", "args", "grid", "warps", "stages", "key", "seconds", "threads",
                 "race_check", "trace", "access_map", "rtol", "atol", "guarded", "fixed_grid",
                 "launched")

    def __init__(self, kernel: Kernel, plan: _Plan, args: list, grid: Any, warps: list,
                 stages: list, key: Any, seconds: float, threads: int, race_check: bool,
                 trace: bool, access_map: Any, rtol: Optional[float],
                 atol: Optional[float]) -> None:
        self.k = kernel
        self.plan = plan
        self.args = args
        self.grid = grid
        self.warps = warps
        self.stages = stages
        self.key = key
        self.seconds = seconds
        self.threads = threads
        self.race_check = race_check
        self.trace = trace
        self.access_map = access_map
        self.rtol = rtol
        self.atol = atol
        self.guarded = False  # guard() saw a tensor that autograd watches
        self.fixed_grid: Any = None  # the grid lambda's value, when already called
        self.launched: Optional[tuple] = None  # gpu(): (kernel, num_warps, num_stages, device)

    def scalars(self) -> dict:
        out = {}
        for n, a, t in zip(self.plan.names, self.args, self.plan.types):
            if not t.endswith("*"):
                v = _scalar_value(a)
                if v is not None:
                    out[n] = v
        return out

    def grid_texts(self, defines: Sequence[tuple[str, str]], num_warps: int = 4) -> list[str]:
        g = self.grid if self.fixed_grid is None else self.fixed_grid
        if not callable(g) or isinstance(g, type):  # (no scalars to gather: the hot path)
            return _texts(g)
        return grid_values(g, defines, num_warps, self.scalars())

    def guard(self, args: list) -> list:
        """The core's view of each argument; tensors that autograd watches are
        read-only for the kernel (a store to one traps before it writes). When
        `args` are copies of the caller's arguments (check_variants, compare,
        CUDA tensors on the interpreter), whether autograd watches one is the
        caller's own tensor's business (a copy requires no grad): the copy is
        read-only as the caller's tensor would be."""
        out = []
        self.guarded = False
        torch = sys.modules.get("torch")
        tensor = torch.Tensor if torch is not None else None
        grad = torch is not None and torch.is_grad_enabled()
        originals = self.args if args is not self.args and torch is not None else None
        for i, a in enumerate(args):
            ta = type(a)
            if ta is int or ta is float:
                out.append(a)
                continue
            if originals is not None and i < len(originals) and (
                    _needs_grad_guard(originals[i]) or _inference_guard(originals[i])):
                self.guarded = True
                try:
                    out.append(A.for_core(a, readonly=True))
                except (TypeError, ValueError, RuntimeError) as e:
                    name = self.plan.names[i] if i < len(self.plan.names) else str(i)
                    raise TypeError(f"argument '{name}': cannot be passed to the kernel: "
                                    f"{e}") from None
                continue
            if ta is tensor and a.is_cuda and not (grad and a.requires_grad) and not (
                    a.is_inference() and not torch.is_inference_mode_enabled()):
                # the common GPU argument, described by its data pointer (no DLPack export)
                name = _TORCH_NAMES.get(a.dtype) or A._torch_name(a.dtype)
                out.append(("cuda", a.data_ptr(), name, a.shape, a.get_device()))
                continue
            try:
                if ta is np.ndarray:
                    out.append(A.for_core(a))
                elif _needs_grad_guard(a) or _inference_guard(a):
                    self.guarded = True
                    out.append(A.for_core(a, readonly=True))
                else:
                    out.append(A.for_core(a))
            except (TypeError, ValueError, RuntimeError) as e:
                name = self.plan.names[i] if i < len(self.plan.names) else str(i)
                raise TypeError(f"argument '{name}': cannot be passed to the kernel: {e}") from None
        return out

    def launch(self, k: Any, backend: str, args: list, grid_texts: list[str], *,
               num_warps: int = 4, num_stages: int = 0, stream: int = 0,
               caller: bool = True) -> dict:
        core_args = self.guard(args)
        if backend == "gpu" and self.guarded:
            # CUDA tensors autograd watches (the caller's: `args` may be copies):
            # refused if a store may reach them (the GPU cannot trap at the first
            # store as the interpreter does).
            for i, a in enumerate(args):
                o = self.args[i] if i < len(self.args) else a
                if A.is_cuda(a) and _needs_grad_guard(o) and k.may_store[i]:
                    raise RuntimeError(_grad_message(self.plan.names[i]))
                if A.is_cuda(a) and _inference_guard(o) and k.may_store[i]:
                    raise RuntimeError(_inference_message(self.plan.names[i]))
        try:
            res = _core.launch(k, backend, core_args, grid_texts, num_warps, num_stages,
                               stream, self.threads, self.seconds, self.race_check, self.trace,
                               bool(self.access_map) and backend == "interp")
        except ValueError as e:
            # The read-only one may be read-only only for the kernel: say which.
            why = [f"'{n}' requires grad (read-only for kernels while grad mode is on)"
                   if _needs_grad_guard(a) else
                   f"'{n}' is an inference tensor (read-only outside inference mode)"
                   for n, a in zip(self.plan.names, self.args)
                   if _needs_grad_guard(a) or _inference_guard(a)]
            if self.guarded and why and "one of them is read-only" in str(e):
                raise ValueError(f"{e}; here {'; '.join(why)}") from None
            raise
        return self.finish(k, res, args, num_warps, caller)

    def finish(self, k: Any, res: dict, args: Sequence[Any], num_warps: int,
               caller: bool) -> dict:
        """What a launch's result means for the caller: output printed,
        warnings, versions bumped, or the exception of a trap or an error."""
        self.k._last = (k, num_warps)
        out = res["output"]
        if out:
            sys.stdout.write(out)
        status = res["status"]
        if status == "ok":
            for w in res["warnings"]:
                warnings.warn(w, LaunchWarning, stacklevel=_stacklevel())
        if res["access_map"] is not None:
            self.write_access_map(res["access_map"])
        if status == "ok":
            if caller:
                torch = sys.modules.get("torch")
                if torch is not None:
                    for n, a in zip(self.plan.names, args):
                        if n in res["written"] and isinstance(a, torch.Tensor):
                            _bump_version(a)
            if res["raised"] is not None:
                # A SIGINT handler raised as the launch finished: its results stand.
                raise res["raised"]
            return res
        if status == "interrupted":
            raise KeyboardInterrupt("the kernel was interrupted; every array is as it was")
        if status == "trap":
            t = res["trap"]
            m = re.search(r"(?:store|atomic) to '([^']+)'.*, a read-only array", t["message"])
            if t["kind"] == "invalid_launch" and m:
                name = m.group(1)
                # (the caller's own argument: `args` may be copies of them)
                a = self.args[self.plan.names.index(name)] if name in self.plan.names else None
                if a is not None and _needs_grad_guard(a):
                    raise RuntimeError(_grad_message(name))
                if a is not None and _inference_guard(a):
                    raise RuntimeError(_inference_message(name))
                raise ValueError(f"argument '{name}' is read-only (its array is not writeable) "
                                 f"but the kernel stores to it at line {t['line']}; nothing "
                                 f"was written")
            raise TrapError(t)
        raise RuntimeError(res["error"])

    def write_access_map(self, html: str) -> None:
        self.k.last_access_map = html
        if isinstance(self.access_map, bool):
            return
        path = os.fsdecode(os.fspath(self.access_map))
        _check_access_map_path(path)  # (again: the kernel ran in between)
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(html)
        except OSError as e:
            raise OSError(f"access_map={path!r}: cannot write the page: {e}") from None

    # -- interpreter ----------------------------------------------------------
    def interp(self, check_variants: bool) -> None:
        variants = self.plan.variants
        if not check_variants or len(variants) == 1:
            k = self.plan.first
            cuda = [i for i, a in enumerate(self.args) if A.is_cuda(a)]
            if not cuda:  # the caller's own memory
                self.launch(k, "interp", self.args, self.grid_texts(variants[0]))
                return
            # CUDA tensors on the interpreter: host copies (overlapping views of one
            # tensor as one copy), then what changed goes back.
            before, work = list(self.args), list(self.args)
            copies = _clone_all([self.args[i] for i in cuda], host=True, writable=True,
                                params=[self.plan.first.params[i] for i in cuda])
            for i, c in zip(cuda, copies):
                before[i] = A.to_host(self.args[i])
                work[i] = c
            self.launch(k, "interp", work, self.grid_texts(variants[0]))
            for i in cuda:
                if A.apply_changes(self.args[i], before[i], work[i]):
                    _bump_version(self.args[i])
            return
        before = [A.clone(A.to_host(a), writable=False) for a in self.args]
        results = []
        for v in variants:
            copies = _clone_all(self.args, host=True, params=self.plan.first.params)
            self.launch(self.k.compile(v), "interp", copies, self.grid_texts(v), caller=False)
            results.append(copies)
        ref = results[0]
        for v, res in zip(variants[1:], results[1:]):
            mm = _mismatches(self.plan.first, res, ref, self.args, self.rtol, self.atol)
            if mm:
                raise MismatchError(f"variant {_describe(v)} disagrees with "
                                    f"{_describe(variants[0])}", mm)
        self.apply(before, ref)

    def apply(self, before: list, after: list) -> None:
        """Writes into the caller's arrays what the kernel changed (bit-wise)."""
        torch = sys.modules.get("torch")
        for a, b, r in zip(self.args, before, after):
            if A.is_array(a) and a is not r and A.apply_changes(a, b, r):
                if torch is not None and isinstance(a, torch.Tensor):
                    _bump_version(a)

    # -- GPU ------------------------------------------------------------------
    def choose_variant(self, device: int) -> tuple:
        """The variant to run: the only one, or the auto-tuner's pick for this key."""
        plan, warps, stages = self.plan, self.warps, self.stages
        variants, specs = plan.variants, plan.specs
        if len(variants) == 1 and len(warps) == 1 and len(stages) <= 1:
            return variants[0], warps[0], (stages[0] if stages else 0)
        names = plan.names
        if self.key is not None:
            missing = [n for n in self.key if n not in names]
            if missing:
                raise ValueError(f"key: kernel '{plan.first.name}' has no parameter "
                                 f"{missing[0]!r}")
            picked = [self.args[names.index(n)] for n in self.key]
        else:
            picked = self.args
        tkey = (tuple((n, tuple(v)) for n, v in specs), tuple(warps), tuple(stages), device,
                tuple(_key_part(a) for a in picked))
        hit = self.k._tuned.get(tkey)
        if hit is not None:
            return hit
        scalar_names = [n for n, t in zip(names, plan.types) if not t.endswith("*")]
        exprs = grid_expressions(self.grid, [n for n, _ in specs], 4, scalar_names)
        if exprs is None:
            raise TypeError("auto-tuning needs a grid that the runtime can evaluate per "
                            "variant: use +, -, *, //, %, triton_c.cdiv, triton_c.smin and "
                            "triton_c.smax on meta[...] and integers in the grid lambda (not "
                            "meta['num_warps'], not Python's min/max)")
        host = [A.for_core(c, readonly=False)
                for c in _clone_all(self.args, host=True, writable=True,
                                     params=self.plan.first.params)]
        defs, nw, ns, from_cache, report = _core.tune(plan.first, specs, host, exprs, warps,
                                                      stages, device)
        self.k.last_tune_report = report
        self.k.last_tune_from_cache = from_cache
        chosen = (defs, nw, ns)
        self.k._tuned[tkey] = chosen
        return chosen

    def gpu(self, cuda: Any = None, args: Optional[list] = None, caller: bool = True) -> None:
        args = self.args if args is None else args
        device, stream = _current_stream(cuda) if cuda is not None else (0, 0)
        defs, nw, ns = self.choose_variant(device)
        k = self.k.compile(defs)
        self.launch(k, "gpu", args, self.grid_texts(defs, nw), num_warps=nw, num_stages=ns,
                    stream=stream, caller=caller)
        self.launched = (k, nw, ns, device)

    # -- both -----------------------------------------------------------------
    # -- Triton ---------------------------------------------------------------
    def triton(self) -> None:
        """The kernel's translation to Triton's Python DSL (docs/triton.md), run
        by Triton on the GPU for CUDA tensors, by Triton's interpreter
        otherwise, on the caller's arrays."""
        from . import _triton

        if self.seconds or self.trace:
            raise ValueError("backend='triton' takes neither max_seconds nor trace (Triton "
                             "runs the kernel; the interpreter has both)")
        torch, _ = _triton.import_triton()
        plan = self.plan
        if len(plan.variants) > 1 or len(self.warps) > 1 or len(self.stages) > 1:
            raise ValueError("backend='triton' runs one variant: give one value for each "
                             "define, num_warps and num_stages (Triton's own auto-tuner is "
                             "not driven from here)")
        defs = plan.variants[0]
        nw = self.warps[0]
        ns = self.stages[0] if self.stages else 3
        k = self.k.compile(defs)
        gpu = any(A.is_cuda(a) for a in self.args)
        mod = _triton.module(k, nw, gpu)
        grad = torch.is_grad_enabled()
        call, written = [], []
        for a, t, n, store in zip(self.args, plan.types, plan.names, k.may_store):
            if not t.endswith("*"):
                call.append(a)
                continue
            if store and grad and isinstance(a, torch.Tensor) and a.requires_grad:
                raise RuntimeError(_grad_message(n))
            if store and _inference_guard(a):
                raise RuntimeError(_inference_message(n))
            call.append(_triton.as_tensor(torch, a, n, store, gpu))
            if store and isinstance(a, torch.Tensor):
                written.append(a)
        g = _core.eval_grid(k, self.grid_texts(defs, nw), self.scalars())
        mod.launch(g, *call, num_warps=nw, num_stages=ns)
        self.k._last = (k, nw)
        for a in written:
            _bump_version(a)

    def compare(self) -> None:
        # Both runs get copies in which overlapping views of one array overlap
        # as in the caller's memory (one copy of their union).
        before = [A.clone(A.to_host(a), writable=False) for a in self.args]
        ref = _clone_all(self.args, host=True, params=self.plan.first.params)
        v0 = self.plan.variants[0]
        self.launch(self.plan.first, "interp", ref, self.grid_texts(v0), caller=False)
        got = _clone_all(self.args, host=False, params=self.plan.first.params)
        self.gpu(_first_cuda(got), got, caller=False)
        mm = _mismatches(self.plan.first, [A.to_host(g) for g in got], ref, self.args,
                         self.rtol, self.atol)
        if mm:
            raise MismatchError("the GPU disagrees with the interpreter", mm)
        self.apply(before, ref)


def _grad_message(name: str) -> str:
    return (f"argument '{name}' is a tensor that requires grad and the kernel writes it: "
            f"autograd cannot see a kernel's stores (as torch refuses an in-place op on a "
            f"leaf that requires grad); write into a tensor that does not require grad, run "
            f"the kernel under torch.no_grad(), or wrap it in a triton_c.function")


def _key_part(a: Any) -> Any:
    if A.is_array(a):
        return ("array", tuple(a.shape), A.dtype_name(a.dtype))
    return ("scalar", type(a), a)


def _describe(v: Sequence[tuple[str, str]]) -> str:
    return " ".join(f"{k}={x}" for k, x in v) or "(no defines)"


def _mismatches(k: Any, got: list, want: list, like: Sequence[Any], rtol: Optional[float] = None,
                atol: Optional[float] = None) -> dict[str, tuple]:
    """The buffers that differ, compared over all a launch may write (A.span of
    the caller's array in `like`: a strided view's whole storage, flat indices
    into it)."""
    out = {}
    for (name, ty), g, w, a in zip(k.params, got, want, like):
        if not ty.endswith("*"):
            continue
        if A.is_array(a) and A.is_array(g) and A.is_array(w):
            g, w = A.span(g, a), A.span(w, a)
        r = _core.compare(A.host_numpy(g), A.host_numpy(w), rtol, atol)
        if r is not None:
            out[name] = r
    return out


def kernel(src: Union[str, os.PathLike], outputs: Union[str, Sequence[str]] = (), *,
           name: Optional[str] = None,
           include_dirs: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]] = ()
           ) -> Kernel:
    """Compiles Triton-C source (text, or the path of an existing ``.tc`` file) into a callable.

    >>> k = triton_c.kernel(src, outputs=['C'])
    >>> grid = lambda opt: [triton_c.cdiv(M, opt.d('TM')), triton_c.cdiv(N, opt.d('TN'))]
    >>> c = k(a, b, c, M, N, K, lda, ldb, ldc, grid, TM=64, TN=64, TK=8, TYPE='float')
    >>> c = k[grid](a, b, c, M, N, K, lda=K, ldb=N, ldc=N, TM=64, TN=64, TK=8, TYPE='float')

    Arguments follow the kernel's parameters (or name them by keyword), then
    the grid (or ``grid=``, or ``k[grid](...)``): a lambda over the launch's
    options (``opt.d('TM')``, ``meta['TM']``), a tuple of integers or grid
    expressions (``'cdiv(N, SIZE)'``). Other keywords are macros (``-D``):
    numbers, strings, bools (0/1), dtypes (their type name); lists auto-tune
    on the GPU and on the interpreter run the first value (``check_variants=True``
    runs every variant and raises MismatchError if they disagree). The call
    returns the arrays named in ``outputs``, written in place. Includes
    resolve against the kernel file's folder and ``include_dirs``.
    """
    return Kernel(src, outputs, name=name, include_dirs=include_dirs)
