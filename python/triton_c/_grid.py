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

from typing import Any, Callable, Mapping, Sequence, Union

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
    """What a grid lambda receives: the compile options of one variant.

    ``opt.d('TM')`` (PyTriton's spelling) or ``opt.TM`` gives the define's value;
    ``opt.num_warps`` the number of warps.
    """

    def __init__(self, defines: Mapping[str, Any], num_warps: int = 4) -> None:
        self._defines = dict(defines)
        self.num_warps = num_warps

    def d(self, name: str) -> Any:
        if name not in self._defines:
            raise KeyError(f"the grid uses define '{name}', which the kernel was not given")
        return self._defines[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.d(name)


GridArg = Union[Callable[[Opt], Sequence[Any]], Sequence[Union[int, str]], int]


_TUPLE_TEXTS: dict = {}


def _texts(values: Any) -> list[str]:
    if type(values) is tuple:
        try:
            hit = _TUPLE_TEXTS.get(values)
        except TypeError:
            hit = None
        if hit is not None:
            return hit
        out = _texts(list(values))
        if len(_TUPLE_TEXTS) < 4096 and all(type(v) in (int, str) for v in values):
            _TUPLE_TEXTS[values] = out
        return out
    if isinstance(values, (int, Sym)) and not isinstance(values, bool):
        values = [values]
    out = []
    for v in values:
        if isinstance(v, Sym):
            out.append(v.text)
        elif isinstance(v, str):
            out.append(v)
        elif isinstance(v, int) and not isinstance(v, bool):
            out.append(str(v))
        elif hasattr(v, "__index__"):
            out.append(str(v.__index__()))
        else:
            raise TypeError(f"grid: expected integers or expressions, got {v!r}")
    return out


def grid_expressions(grid: GridArg, define_names: Sequence[str], num_warps: int = 4):
    """The grid as expression texts, or None when the lambda needs numbers."""
    if not callable(grid):
        return _texts(grid)
    try:
        return _texts(grid(Opt({n: Sym(n) for n in define_names}, num_warps)))
    except TypeError:
        return None


def _number(text: str) -> Any:
    try:
        return int(text, 0)
    except ValueError:
        return text


def grid_values(grid: GridArg, defines: Sequence[tuple[str, str]], num_warps: int = 4):
    """The grid for one variant, calling a lambda with the variant's values."""
    if not callable(grid):
        return _texts(grid)
    return _texts(grid(Opt({k: _number(v) for k, v in defines}, num_warps)))
