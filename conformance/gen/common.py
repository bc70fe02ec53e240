"""Shared model of Triton-C numerics for the conformance case generators.

Python 3 standard library only. Every expected value in the generated suites is
computed here, independently of the C++ implementation, from docs/semantics.md:

* integers are Python ints, wrapped explicitly to the type's width;
* floating-point values are Python floats (every float16, bfloat16, float32 and
  float64 value is exactly a binary64 value); arithmetic in a format is done
  exactly with fractions.Fraction and rounded once to that format with
  round-to-nearest-even (our own rounding, valid for every format, subnormals
  and overflow included);
* bool is 0 / 1.

A value that traps is signalled with the Trap exception (kind = the trap name).
"""

import json
import math
import os
import struct
from fractions import Fraction

# ----------------------------------------------------------------------------
# dtypes
# ----------------------------------------------------------------------------

# Conformance names, in DType.h order.
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]

# The spelling of each dtype in Triton-C source.
CNAME = {"bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
         "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
         "float16": "half", "bfloat16": "bf16", "float32": "float", "float64": "double"}

# Short spelling used in case names.
SHORT = {"bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
         "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
         "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64"}

WIDTH = {"bool": 1, "int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16,
         "uint32": 32, "uint64": 64, "float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}

# Float formats: (precision in bits including the implicit one, emax).
FORMAT = {"float16": (11, 15), "bfloat16": (8, 127), "float32": (24, 127), "float64": (53, 1023)}


class Trap(Exception):
    """A run-time trap of the reference semantics."""

    def __init__(self, kind):
        super().__init__(kind)
        self.kind = kind


def kind_of(t):
    """Promotion kind: 0 bool, 1 integral, 2 floating."""
    if t == "bool":
        return 0
    return 2 if t in FLOATS else 1


def is_int(t):
    return t in INTS


def is_signed(t):
    return t in SIGNED


def is_float(t):
    return t in FLOATS


def int_range(t):
    if t == "bool":
        return 0, 1
    w = WIDTH[t]
    if is_signed(t):
        return -(1 << (w - 1)), (1 << (w - 1)) - 1
    return 0, (1 << w) - 1


def wrap(v, t):
    """Two's complement wrap of the integer v to integer type t."""
    w = WIDTH[t]
    v &= (1 << w) - 1
    if is_signed(t) and v >= 1 << (w - 1):
        v -= 1 << w
    return v


def promote(a, b):
    """docs/semantics.md rule 1 (tile/tile promotion)."""
    ka, kb = kind_of(a), kind_of(b)
    if ka != kb:
        return a if ka > kb else b
    if a == b:
        return a
    if WIDTH[a] != WIDTH[b]:
        return a if WIDTH[a] > WIDTH[b] else b
    if ka == 2:
        return "float16"  # same width, float16 vs bfloat16
    return a if a in UNSIGNED else b  # same width, different signedness


# ----------------------------------------------------------------------------
# floating point
# ----------------------------------------------------------------------------

def max_finite(fmt):
    p, emax = FORMAT[fmt]
    return float((2 ** p - 1) * Fraction(2) ** (emax - p + 1))


def min_subnormal(fmt):
    p, emax = FORMAT[fmt]
    return float(Fraction(2) ** (1 - emax - p + 1))


def min_normal(fmt):
    p, emax = FORMAT[fmt]
    return float(Fraction(2) ** (1 - emax))


def _floor_log2(x):
    """floor(log2(x)) for a positive Fraction x."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    elif Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


def round_exact(x, fmt, negative_zero=False):
    """Round the exact rational x to format fmt (RNE, overflow to inf).

    Returns a Python float. A zero result carries the sign of x (or
    negative_zero when x itself is 0)."""
    if x == 0:
        return -0.0 if negative_zero else 0.0
    p, emax = FORMAT[fmt]
    emin = 1 - emax
    sign = -1 if x < 0 else 1
    ax = -x if x < 0 else x
    e = max(_floor_log2(ax), emin)
    ulp = Fraction(2) ** (e - p + 1)
    q = ax / ulp
    n = q.numerator // q.denominator
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    v = n * ulp
    if v > Fraction(max_finite(fmt)):
        return math.copysign(math.inf, sign)
    if v == 0:
        return -0.0 if sign < 0 else 0.0
    return math.copysign(float(v), sign)


def round_directed(x, fmt, up):
    """The smallest value of fmt >= x (up) or the largest <= x (down), x rational.

    Beyond the largest finite value: inf when rounding away, else the largest finite."""
    p, emax = FORMAT[fmt]
    emin = 1 - emax
    mx = Fraction(max_finite(fmt))
    if x == 0:
        return 0.0
    ax = abs(x)
    e = max(_floor_log2(ax), emin)
    ulp = Fraction(2) ** (e - p + 1)
    q = ax / ulp
    n = q.numerator // q.denominator
    exact = n == q
    away = (x > 0) == up  # rounding the magnitude up
    if away and not exact:
        n += 1
    v = n * ulp
    if v > mx:
        return math.copysign(math.inf if away else float(mx), float(x))
    return math.copysign(float(v), float(x))


def largest_below(x, fmt):
    """The largest value of fmt strictly below the rational x."""
    return round_directed(Fraction(x) - Fraction(1, 2 ** 2200), fmt, up=False)


def smallest_above(x, fmt):
    """The smallest value of fmt strictly above the rational x."""
    return round_directed(Fraction(x) + Fraction(1, 2 ** 2200), fmt, up=True)


def is_representable(v, fmt):
    if math.isnan(v) or math.isinf(v) or v == 0:
        return True
    return round_exact(Fraction(v), fmt) == v


def fround(v, fmt):
    """Convert a Python float (any double) to format fmt, RNE."""
    if math.isnan(v) or math.isinf(v):
        return v
    if v == 0:
        return v
    return round_exact(Fraction(v), fmt)


def fround_fast(v, fmt):
    """fround for a double v without fractions (frexp / ldexp / round-half-even).

    Every step is exact: scaling by a power of two and Python's round() of a double
    (which rounds halves to even). Cross-checked against fround in self_check()."""
    if math.isnan(v) or math.isinf(v) or v == 0 or fmt == "float64":
        return v
    p, emax = FORMAT[fmt]
    emin = 1 - emax
    m, e = math.frexp(abs(v))  # abs(v) = m * 2^e, m in [0.5, 1)
    exp = max(e - 1, emin)
    shift = exp - p + 1
    n = round(math.ldexp(abs(v), -shift))
    r = math.ldexp(float(n), shift)
    if r > max_finite(fmt):
        r = math.inf
    return math.copysign(r, v)


def fast_float_binop(op, x, y, fmt):
    """float_binop through binary64 arithmetic, then one rounding to fmt.

    Rounding an exact binary64 result of + - * / of fmt values to fmt equals rounding
    the exact result, because binary64 has at least 2p + 2 bits for every narrower
    format (double rounding is innocuous). Specials follow IEEE via Python floats."""
    if op in ("/", "%") and (y == 0 or math.isinf(x) or math.isinf(y) or
                             math.isnan(x) or math.isnan(y)):
        return f_div(x, y, fmt) if op == "/" else f_fmod(x, y, fmt)
    if op == "+":
        r = x + y
    elif op == "-":
        r = x - y
    elif op == "*":
        r = x * y
    elif op == "/":
        r = x / y
    elif op == "%":
        r = math.fmod(x, y)
    else:
        raise ValueError(op)
    return fround_fast(r, fmt)


def _signbit(v):
    return math.copysign(1.0, v) < 0


def f_add(a, b, fmt):
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if math.isinf(a) or math.isinf(b):
        if math.isinf(a) and math.isinf(b) and (a > 0) != (b > 0):
            return math.nan
        return a if math.isinf(a) else b
    s = Fraction(a) + Fraction(b)
    if s == 0:
        both_neg = _signbit(a) and _signbit(b) and a == 0 and b == 0
        return -0.0 if both_neg else 0.0
    return round_exact(s, fmt)


def f_sub(a, b, fmt):
    return f_add(a, -b, fmt)


def f_mul(a, b, fmt):
    if math.isnan(a) or math.isnan(b):
        return math.nan
    neg = _signbit(a) != _signbit(b)
    if math.isinf(a) or math.isinf(b):
        if a == 0 or b == 0:
            return math.nan
        return -math.inf if neg else math.inf
    return round_exact(Fraction(a) * Fraction(b), fmt, negative_zero=neg)


def f_div(a, b, fmt):
    if math.isnan(a) or math.isnan(b):
        return math.nan
    neg = _signbit(a) != _signbit(b)
    if math.isinf(a):
        if math.isinf(b):
            return math.nan
        return -math.inf if neg else math.inf
    if math.isinf(b):
        return -0.0 if neg else 0.0
    if b == 0:
        if a == 0:
            return math.nan
        return -math.inf if neg else math.inf
    return round_exact(Fraction(a) / Fraction(b), fmt, negative_zero=neg)


def f_fmod(a, b, fmt):
    """C fmod: exact; the result has the sign of a."""
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0:
        return math.nan
    if math.isinf(b) or a == 0:
        return a
    fa, fb = Fraction(a), Fraction(b)
    q = fa / fb
    t = q.numerator // q.denominator if q >= 0 else -((-q.numerator) // q.denominator)
    r = fa - t * fb
    if r == 0:
        return math.copysign(0.0, a)
    return round_exact(r, fmt)  # exact: fmod is always representable


def f_fma(a, b, c, fmt):
    """a * b + c rounded once."""
    if math.isnan(a) or math.isnan(b) or math.isnan(c):
        return math.nan
    pneg = _signbit(a) != _signbit(b)
    if math.isinf(a) or math.isinf(b):
        if a == 0 or b == 0:
            return math.nan
        pinf = -math.inf if pneg else math.inf
        if math.isinf(c) and (c > 0) != (pinf > 0):
            return math.nan
        return pinf
    if math.isinf(c):
        return c
    s = Fraction(a) * Fraction(b) + Fraction(c)
    if s == 0:
        prod_zero = a == 0 or b == 0
        if prod_zero and c == 0:
            return -0.0 if (pneg and _signbit(c)) else 0.0
        return 0.0
    return round_exact(s, fmt)


def f_sqrt(a, fmt):
    if math.isnan(a) or a < 0:
        return math.nan
    if a == 0 or math.isinf(a):
        return a
    p, emax = FORMAT[fmt]
    x = Fraction(a)
    # The result lies in [2^(e), 2^(e+1)) with e = floor(log2(x)) // 2.
    e = _floor_log2(x) // 2
    ulp = Fraction(2) ** (e - p + 1)
    f = x / (ulp * ulp)
    n = math.isqrt(f.numerator // f.denominator)  # floor(sqrt(f))
    # sqrt of a representable number is never exactly halfway.
    if f > (Fraction(2 * n + 1, 2)) ** 2:
        n += 1
    return round_exact(n * ulp, fmt)


def f_max(a, b):
    """IEEE maxNum; max(-0, +0) = +0."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == 0 and b == 0:
        return 0.0 if not (_signbit(a) and _signbit(b)) else -0.0
    return a if a > b else b


def f_min(a, b):
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == 0 and b == 0:
        return -0.0 if (_signbit(a) or _signbit(b)) else 0.0
    return a if a < b else b


# ----------------------------------------------------------------------------
# conversions (rule 13, rule 7)
# ----------------------------------------------------------------------------

def convert(v, src, dst):
    """Convert value v of dtype src to dtype dst (C conversions, rule 13)."""
    if dst == "bool":
        if is_float(src):
            return 0 if (not math.isnan(v) and v == 0) else 1
        return 0 if v == 0 else 1
    if is_float(dst):
        if is_float(src):
            return fround(v, dst)
        return round_exact(Fraction(v), dst)
    # integer destination
    if is_float(src):
        if math.isnan(v) or math.isinf(v):
            raise Trap("float_to_int_out_of_range")
        t = math.trunc(Fraction(v))
        lo, hi = int_range(dst)
        if t < lo or t > hi:
            raise Trap("float_to_int_out_of_range")
        return int(t)
    return wrap(int(v), dst)


def same_value(a, b):
    """Bit equality with any NaN matching any NaN (the 'exact' comparison)."""
    if isinstance(a, float) or isinstance(b, float):
        fa, fb = float(a), float(b)
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        return fa == fb and _signbit(fa) == _signbit(fb)
    return a == b


# ----------------------------------------------------------------------------
# arithmetic in a promoted type
# ----------------------------------------------------------------------------

def int_binop(op, x, y, t):
    """op on integers x, y already of integer type t; traps per rules 4 and 5."""
    w = WIDTH[t]
    if op == "+":
        return wrap(x + y, t)
    if op == "-":
        return wrap(x - y, t)
    if op == "*":
        return wrap(x * y, t)
    if op in ("/", "%"):
        if y == 0:
            raise Trap("division_by_zero")
        lo, _ = int_range(t)
        if is_signed(t) and x == lo and y == -1:
            raise Trap("division_overflow")
        q = abs(x) // abs(y)
        if (x < 0) != (y < 0):
            q = -q
        if op == "/":
            return wrap(q, t)
        return wrap(x - q * y, t)
    if op == "&":
        return wrap(x & y, t)
    if op == "|":
        return wrap(x | y, t)
    if op == "^":
        return wrap(x ^ y, t)
    if op in ("<<", ">>"):
        if y < 0 or y >= w:
            raise Trap("shift_out_of_range")
        if op == "<<":
            return wrap(x << y, t)
        if is_signed(t):
            return x >> y  # Python >> on ints is arithmetic
        return (x & ((1 << w) - 1)) >> y
    raise ValueError(op)


def float_binop(op, x, y, t):
    if op == "+":
        return f_add(x, y, t)
    if op == "-":
        return f_sub(x, y, t)
    if op == "*":
        return f_mul(x, y, t)
    if op == "/":
        return f_div(x, y, t)
    if op == "%":
        return f_fmod(x, y, t)
    raise ValueError(op)


CMP_OPS = ["<", "<=", ">", ">=", "==", "!="]


def compare(op, x, y):
    """Comparison of two values of one type (ordered except !=)."""
    if op == "<":
        return int(x < y)
    if op == "<=":
        return int(x <= y)
    if op == ">":
        return int(x > y)
    if op == ">=":
        return int(x >= y)
    if op == "==":
        return int(x == y)
    if op == "!=":
        return int(x != y)
    raise ValueError(op)


def binop_in(op, x, tx, y, ty, p):
    """Convert x (dtype tx) and y (dtype ty) to p and apply op there.

    Returns the result as a value of p (bool for comparisons). Two bools are
    computed in int32 and converted back to bool (docs/semantics.md section 1)."""
    cx, cy = convert(x, tx, p), convert(y, ty, p)
    if op in CMP_OPS:
        return compare(op, cx, cy)
    if p == "bool":
        return convert(int_binop(op, cx, cy, "int32"), "int32", "bool")
    if is_float(p):
        return float_binop(op, cx, cy, p)
    return int_binop(op, cx, cy, p)


# ----------------------------------------------------------------------------
# JSON helpers
# ----------------------------------------------------------------------------

def jvalue(v, t):
    """A value of dtype t as conformance/FORMAT.md spells it."""
    if is_float(t):
        v = float(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v == 0:
            return "-0.0" if _signbit(v) else 0
        if v == int(v) and abs(v) < 2 ** 64:
            return int(v)  # exact: the runner converts integers without rounding
        return v  # repr round-trips binary64 exactly
    return int(v)


def jvalues(vs, t):
    return [jvalue(v, t) for v in vs]


def buf(name, t, data):
    return {"name": name, "dtype": t, "shape": [len(data)], "data": jvalues(data, t)}


def zeros(name, t, n):
    return {"name": name, "dtype": t, "shape": [n], "fill": 0}


def out(data, t):
    return {"data": jvalues(data, t), "compare": "exact"}


def dtype_features(*ts):
    seen = []
    for t in ts:
        f = "dtype." + t
        if f not in seen:
            seen.append(f)
    return seen


def write_suite(fname, suite, description, cases, sources=None):
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "cases", fname)
    doc = {"format": "triton-conformance/1", "suite": suite, "description": description}
    if sources:
        doc["sources"] = sources
    doc["cases"] = cases
    names = set()
    for c in cases:
        assert c["name"] not in names, "duplicate case name " + c["name"]
        names.add(c["name"])
    with open(path, "w") as f:
        f.write(format_suite(doc))
        f.write("\n")
    print("%s: %d cases" % (os.path.normpath(path), len(cases)))


def format_suite(doc):
    """JSON with one line per argument / output so the files stay readable."""
    lines = ["{"]
    keys = [k for k in doc if k != "cases"]
    for k in keys:
        lines.append("  %s: %s," % (json.dumps(k), json.dumps(doc[k])))
    lines.append('  "cases": [')
    for i, c in enumerate(doc["cases"]):
        lines.append(format_case(c) + ("," if i + 1 < len(doc["cases"]) else ""))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines)


def format_case(c):
    parts = []
    for k, v in c.items():
        if k == "args":
            inner = ",\n".join("        " + json.dumps(a) for a in v)
            parts.append('      "args": [\n%s\n      ]' % inner)
        else:
            parts.append("      %s: %s" % (json.dumps(k), json.dumps(v)))
    return "    {\n" + ",\n".join(parts) + "\n    }"


def half_bits(v):
    """float16 bits of v via struct (used only to cross-check round_exact)."""
    return struct.unpack("<H", struct.pack("<e", v))[0]


def self_check():
    """Cross-check the rounding model against struct's binary16 / binary32."""
    import random
    rng = random.Random(1)
    for _ in range(20000):
        v = rng.uniform(-70000, 70000) * 2.0 ** rng.randint(-30, 0)
        try:
            ref = struct.unpack("<e", struct.pack("<e", v))[0]
        except OverflowError:
            ref = math.copysign(math.inf, v)
        assert same_value(fround(v, "float16"), ref), v
        ref32 = struct.unpack("<f", struct.pack("<f", v))[0]
        assert same_value(fround(v, "float32"), ref32), v
    # ties: struct must round 2049 -> 2048 and 2051 -> 2052
    assert struct.unpack("<e", struct.pack("<e", 2049.0))[0] == 2048.0
    assert struct.unpack("<e", struct.pack("<e", 2051.0))[0] == 2052.0
    assert fround(2049.0, "float16") == 2048.0 and fround(2051.0, "float16") == 2052.0
    assert fround(257.0, "bfloat16") == 256.0 and fround(259.0, "bfloat16") == 260.0
    for _ in range(5000):
        a, b = rng.uniform(-1e10, 1e10), rng.uniform(-1e3, 1e3)
        assert same_value(f_add(a, b, "float64"), a + b)
        assert same_value(f_mul(a, b, "float64"), a * b)
        assert same_value(f_div(a, b, "float64"), a / b)
        assert same_value(f_fmod(a, b, "float64"), math.fmod(a, b))
        assert same_value(f_sqrt(abs(a), "float64"), math.sqrt(abs(a)))
    for fmt in FORMAT:
        for _ in range(20000):
            v = rng.choice([rng.uniform(-1, 1) * 2.0 ** rng.randint(-160, 140),
                            float(rng.randint(-2 ** 30, 2 ** 30)) * 2.0 ** rng.randint(-150, 110),
                            (rng.randint(0, 2 ** 12) + 0.5) * 2.0 ** rng.randint(-140, 110)])
            assert same_value(fround_fast(v, fmt), fround(v, fmt)), (v, fmt)
        for _ in range(5000):
            x = fround(rng.uniform(-100, 100) * 2.0 ** rng.randint(-20, 20), fmt)
            y = fround(rng.uniform(-100, 100) * 2.0 ** rng.randint(-20, 20), fmt)
            for op in "+-*/%":
                assert same_value(fast_float_binop(op, x, y, fmt), float_binop(op, x, y, fmt))
    assert f_sqrt(2.0, "float32") == struct.unpack("<f", struct.pack("<f", math.sqrt(2.0)))[0]


if __name__ == "__main__":
    self_check()
    print("common.py self-check ok")
