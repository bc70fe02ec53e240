"""Grid lambdas as grid expressions of the runtime.

A grid lambda (``lambda opt: [cdiv(M, opt.d('TM')), ...]``) is called once with
symbolic defines: ``opt.d('TM')`` is the name ``TM``, and ``+ - * // %``,
``cdiv``, ``min`` and ``max`` build the expression text
(``cdiv(1000, TM)``) that the C++ runtime evaluates for each compiled variant
(the same grid expressions as ``triton-run --grid``). A lambda that needs real
numbers (``math.ceil(M / opt.TM)``) is called with the variant's values
instead; such a grid cannot be auto-tuned.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Optional, Sequence, Union

__all__ = ["cdiv", "Opt", "grid_expressions", "grid_values"]


class Sym:
    """An integer expression over defines (text in the runtime's grid syntax)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Sym({self.text!r})"

    @staticmethod
    def _of(v: Any) -> str:
        if isinstance(v, Sym):
            return f"({v.text})"
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"grid expressions take integers, got {v!r}")
        return f"({v})" if v < 0 else str(v)

    def _bin(self, op: str, other: Any, rev: bool = False) -> "Sym":
        a, b = (self._of(other), self._of(self)) if rev else (self._of(self), self._of(other))
        return Sym(f"{a} {op} {b}")

    def __add__(self, o): return self._bin("+", o)
    def __radd__(self, o): return self._bin("+", o, True)
    def __sub__(self, o): return self._bin("-", o)
    def __rsub__(self, o): return self._bin("-", o, True)
    def __mul__(self, o): return self._bin("*", o)
    def __rmul__(self, o): return self._bin("*", o, True)
    # Grid values are non-negative, where C's truncating division is floor division.
    def __floordiv__(self, o): return self._bin("/", o)
    def __rfloordiv__(self, o): return self._bin("/", o, True)
    def __mod__(self, o): return self._bin("%", o)
    def __rmod__(self, o): return self._bin("%", o, True)

    def __index__(self) -> int:
        raise TypeError("a define is symbolic while the grid is evaluated")

    def __bool__(self) -> bool:
        raise TypeError("a define is symbolic while the grid is evaluated")


def cdiv(a: Any, b: Any) -> Any:
    """Ceiling division: ``cdiv(1000, 64) == 16`` (also inside grid lambdas)."""
    if isinstance(a, Sym) or isinstance(b, Sym):
        return Sym(f"cdiv({Sym._of(a)}, {Sym._of(b)})")
    return -(-a // b)


def _min_max(name: str, a: Any, b: Any) -> Any:
    if isinstance(a, Sym) or isinstance(b, Sym):
        return Sym(f"{name}({Sym._of(a)}, {Sym._of(b)})")
    return min(a, b) if name == "min" else max(a, b)


def smin(a: Any, b: Any) -> Any:
    """min() that also works inside grid lambdas."""
    return _min_max("min", a, b)


def smax(a: Any, b: Any) -> Any:
    """max() that also works inside grid lambdas."""
    return _min_max("max", a, b)


class Opt:
    """What a grid lambda receives: the compile options of one variant and the
    scalar arguments of the launch.

    PyTriton's ``opt.d('TM')``, attribute access ``opt.TM`` and Triton's
    ``meta['TM']`` all give a define's value (and ``meta['N']`` a scalar
    argument's); ``opt.num_warps`` the number of warps.

    >>> grid = lambda meta: (triton_c.cdiv(N, meta['BLOCK']),)
    """

    def __init__(self, defines: Mapping[str, Any], num_warps: int = 4,
                 scalars: Optional[Mapping[str, Any]] = None) -> None:
        self._defines = dict(scalars or {})
        self._defines.update(defines)
        self._num_warps = num_warps
        self.read_num_warps = False  # whether the grid asked for num_warps

    @property
    def num_warps(self) -> int:
        """The number of warps of the launch."""
        self.read_num_warps = True
        return self._num_warps

    def d(self, name: str) -> Any:
        """The value of define (or scalar argument) ``name``."""
        if name not in self._defines:
            raise KeyError(f"the grid uses '{name}', which is neither a define given to the "
                           f"kernel nor a scalar argument")
        return self._defines[name]

    def __getitem__(self, name: str) -> Any:
        if name == "num_warps":
            return self.num_warps
        return self.d(name)

    def __contains__(self, name: object) -> bool:
        return name in self._defines or name == "num_warps"

    def get(self, name: str, default: Any = None) -> Any:
        """``meta.get('BLOCK', 128)``, as on a dict."""
        return self[name] if name in self else default

    def keys(self):
        return list(self._defines) + ["num_warps"]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.d(name)


GridArg = Union[Callable[[Opt], Sequence[Any]], Sequence[Union[int, str]], int, str]


def _split_top(text: str) -> list[str]:
    """'cdiv(N, B), 4' -> ['cdiv(N, B)', '4'] (commas inside parentheses kept)."""
    t = text.strip()
    if t.startswith("(") and t.endswith(")"):
        depth = 0
        whole = True
        for i, ch in enumerate(t):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(t) - 1:
                whole = False
                break
        if whole:
            t = t[1:-1]
    parts, depth, cur = [], 0, ""
    for ch in t:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    parts.append(cur.strip())
    return parts


def _bad_grid(values: Any, why: str) -> TypeError:
    return TypeError(f"grid={values!r}: {why}; expected a tuple or list of 1 to 3 integers "
                     f"(or grid expressions such as 'cdiv(N, BLOCK)'), one integer, one "
                     f"expression string, or a callable taking the launch's options "
                     f"(lambda meta: (triton_c.cdiv(N, meta['BLOCK']),))")


_TUPLE_TEXTS: dict = {}


def _is_bool(v: Any) -> bool:
    """A bool, NumPy's bool_ or a bool tensor: no grid size (True is not 1 here)."""
    if isinstance(v, bool):
        return True
    dt = getattr(v, "dtype", None)
    return dt is not None and not isinstance(v, type) and str(dt) in ("bool", "torch.bool")


def _texts(values: Any) -> list[str]:
    tv = type(values)
    if tv is tuple and all(type(v) is int for v in values):
        hit = _TUPLE_TEXTS.get(values)
        if hit is not None:
            return hit
        out = _texts(list(values))
        if len(_TUPLE_TEXTS) < 4096:
            _TUPLE_TEXTS[values] = out
        return out
    if isinstance(values, type) or (hasattr(values, "shape") and hasattr(values, "dtype")
                                    and len(values.shape) != 0):
        raise _bad_grid(values, f"a {type(values).__name__} is no grid")
    if isinstance(values, str):
        # One grid expression list, as `--grid` takes it: never iterated character by character.
        try:
            values.encode("ascii")
        except UnicodeEncodeError:
            raise _bad_grid(values, "a grid expression is ASCII text") from None
        parts = _split_top(values)
        if not values.strip() or any(not p for p in parts):
            raise _bad_grid(values, "an empty grid expression")
        values = parts
    elif isinstance(values, (Sym, int)) and not _is_bool(values):
        values = [values]
    elif hasattr(values, "__index__") and not isinstance(values, float) and not _is_bool(values):
        values = [values]
    elif not isinstance(values, (tuple, list)):
        raise _bad_grid(values, f"a {type(values).__name__} is no grid")
    if not 1 <= len(values) <= 3:
        raise _bad_grid(values, f"{len(values)} dimensions")
    out = []
    for v in values:
        if isinstance(v, Sym):
            out.append(v.text)
        elif isinstance(v, str):
            if not v.strip():
                raise _bad_grid(values, "an empty grid expression")
            try:
                v.encode("ascii")
            except UnicodeEncodeError:
                raise _bad_grid(values, "a grid expression is ASCII text") from None
            out.append(v)
        elif _is_bool(v) or isinstance(v, float):
            raise _bad_grid(values, f"{v!r} is a {type(v).__name__}, not an integer")
        elif isinstance(v, int):
            out.append(str(int(v)))
        elif hasattr(v, "__index__"):
            out.append(str(v.__index__()))
        else:
            raise _bad_grid(values, f"{v!r} is not an integer")
    return out


def grid_expressions(grid: GridArg, define_names: Sequence[str], num_warps: int = 4,
                     scalar_names: Sequence[str] = ()):
    """The grid as expression texts, or None when the lambda needs numbers or
    reads num_warps (the runtime evaluates the texts for every num_warps tried)."""
    if not callable(grid):
        return _texts(grid)
    opt = Opt({n: Sym(n) for n in define_names}, num_warps, {n: Sym(n) for n in scalar_names})
    try:
        texts = _texts(grid(opt))
    except (TypeError, KeyError):
        return None
    return None if opt.read_num_warps else texts


# C's literals, as the kernel's preprocessor reads a define's text (frontend/ParseLiteral.cpp).
_INT_SUFFIX = r"(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)?"
_C_INT = re.compile(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)" + _INT_SUFFIX)
_C_FLOAT = re.compile(r"(?:(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                      r"|[0-9]+[eE][+-]?[0-9]+)[fF]?")
_C_HEX_FLOAT = re.compile(r"0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+"
                          r"[fF]?")


def _number(text: str) -> Any:
    """A define's text as the grid lambda sees it: the number the kernel sees
    (C's literals: ``'010'`` is octal 8, ``'0x10'`` 16, ``'1e3'`` 1000.0, an
    optional sign before them), else the text itself."""
    t = text.strip()
    sign, body = 1, t
    if body[:1] in "+-" and body[:1]:
        sign, body = (-1 if body[0] == "-" else 1), body[1:].lstrip()
    m = _C_INT.fullmatch(body)
    if m:
        digits = m.group(1)
        if digits[:2] in ("0x", "0X"):
            return sign * int(digits[2:], 16)
        if digits[:2] in ("0b", "0B"):
            return sign * int(digits[2:], 2)
        if len(digits) > 1 and digits[0] == "0":
            return sign * int(digits[1:], 8)
        return sign * int(digits)
    if _C_FLOAT.fullmatch(body):
        return sign * float(body.rstrip("fF"))
    if _C_HEX_FLOAT.fullmatch(body):
        return sign * float.fromhex(body.rstrip("fF"))
    return text


def grid_values(grid: GridArg, defines: Sequence[tuple[str, str]], num_warps: int = 4,
                scalars: Optional[Mapping[str, Any]] = None):
    """The grid for one variant, calling a lambda with the variant's values."""
    if not callable(grid) or isinstance(grid, type):
        return _texts(grid)
    return _texts(grid(Opt({k: _number(v) for k, v in defines}, num_warps, scalars)))
