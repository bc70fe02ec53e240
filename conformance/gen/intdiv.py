"""Generate conformance/cases/intdiv.json.

docs/semantics.md rules 4 and 5:

* run-time integer / and % truncate toward zero, % takes the dividend's sign, for every
  signed and unsigned width;
* when every operand is a compile-time constant: floor division and Python modulo
  (with a warning that does not stop compilation);
* overflow wraps at every width; shifts at the edges (count = width - 1), arithmetic
  >> for signed, logical for unsigned;
* traps: division_by_zero, division_overflow (INT_MIN / -1, INT_MIN % -1),
  shift_out_of_range (count = width, negative count);
* umulhi: the high half of the double-width product, signed for signed dtypes;
* cdiv(a, b) at run time: the exact ceiling of a / b (as folded from constants), for
  negative divisors and next to the type's maximum too.

Run: python3 conformance/gen/intdiv.py
"""

import math
from fractions import Fraction

import common as C

OPN = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "<<": "shl", ">>": "shr"}

SRC = """__global__ void k({T} *X, {T} *Y, {T} *Z) {{
  int i[{N}] = 0 ... {N};
  {T} x[{N}] = *(X + i);
  {T} y[{N}] = *(Y + i);
  *(Z + i) = x {OP} y;
}}
"""


def pad(pairs):
    n = 1
    while n < len(pairs):
        n *= 2
    while len(pairs) < n:
        pairs.append(pairs[len(pairs) % max(1, len(pairs))])
    return pairs


def binop_case(name, t, op, pairs, feats, note):
    pairs = pad(list(pairs))
    n = len(pairs)
    want = [C.int_binop(op, x, y, t) for x, y in pairs]
    return {
        "name": name,
        "description": note,
        "features": ["intdiv", "op." + OPN[op]] + feats + C.dtype_features(t),
        "source": SRC.format(T=C.CNAME[t], N=n, OP=op),
        "grid": [1],
        "args": [C.buf("X", t, [p[0] for p in pairs]), C.buf("Y", t, [p[1] for p in pairs]),
                 C.zeros("Z", t, n)],
        "expect": {"outputs": {"Z": C.out(want, t)}},
    }


def trap_case(name, t, op, pairs, kind, note):
    pairs = pad(list(pairs))
    n = len(pairs)
    trapped = False
    for x, y in pairs:
        try:
            C.int_binop(op, x, y, t)
        except C.Trap as e:
            assert e.kind == kind, (name, e.kind)
            trapped = True
    assert trapped, name
    return {
        "name": name,
        "description": note,
        "features": ["intdiv", "trap", "trap." + kind, "op." + OPN[op]] + C.dtype_features(t),
        "source": SRC.format(T=C.CNAME[t], N=n, OP=op),
        "grid": [1],
        "args": [C.buf("X", t, [p[0] for p in pairs]), C.buf("Y", t, [p[1] for p in pairs]),
                 C.zeros("Z", t, n)],
        "expect": {"trap": {"kind": kind}},
    }


def division_cases():
    cs = []
    for t in C.SIGNED:
        lo, hi = C.int_range(t)
        pairs = [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 3), (1, 2), (-1, 2),
                 (hi, 2), (lo, 2), (lo, 1), (hi, -1), (lo + 1, -1), (lo, -2), (lo, hi), (0, -5)]
        cs.append(binop_case("%s_div_truncates_toward_zero" % C.SHORT[t], t, "/", pairs,
                             ["intdiv.c_rounding"], "C division: -7 / 2 == -3, 7 / -2 == -3"))
        cs.append(binop_case("%s_mod_takes_dividend_sign" % C.SHORT[t], t, "%", pairs,
                             ["intdiv.c_rounding"], "C remainder: -7 % 2 == -1, 7 % -2 == 1"))
    for t in C.UNSIGNED:
        lo, hi = C.int_range(t)
        pairs = [(7, 2), (hi, 2), (hi, hi), (hi - 1, hi), (hi, 1), (1 << (C.WIDTH[t] - 1), 3),
                 (0, 9), (100, 7)]
        cs.append(binop_case("%s_div_unsigned" % C.SHORT[t], t, "/", pairs, ["intdiv.unsigned"],
                             "unsigned division: large values are not negative"))
        cs.append(binop_case("%s_mod_unsigned" % C.SHORT[t], t, "%", pairs, ["intdiv.unsigned"],
                             "unsigned remainder"))
    return cs


def overflow_cases():
    cs = []
    for t in C.INTS:
        lo, hi = C.int_range(t)
        w = C.WIDTH[t]
        add = [(hi, 1), (lo, -1 if C.is_signed(t) else 0), (hi, hi), (lo, lo), (hi, 0), (1, 2),
               (lo, hi), (hi, 2)]
        cs.append(binop_case("%s_add_wraps" % C.SHORT[t], t, "+", add, ["overflow"],
                             "two's complement wrap of +"))
        sub = [(lo, 1), (0, 1), (hi, lo), (lo, hi), (0, hi), (5, 7), (hi, -1 if C.is_signed(t)
                                                                        else hi), (0, lo)]
        cs.append(binop_case("%s_sub_wraps" % C.SHORT[t], t, "-", sub, ["overflow"],
                             "two's complement wrap of -"))
        half = 1 << (w // 2)
        mul = [(half, half), (hi, 2), (hi, hi), (lo, -1 if C.is_signed(t) else 3), (lo, lo),
               (half + 1, half - 1), (3, 5), (hi, 3)]
        cs.append(binop_case("%s_mul_wraps" % C.SHORT[t], t, "*", mul, ["overflow"],
                             "two's complement wrap of *"))
    return cs


SRC_NEG = """__global__ void k({T} *X, {T} *Z) {{
  int i[4] = 0 ... 4;
  {T} x[4] = *(X + i);
  *(Z + i) = -x;
}}
"""


def negation_cases():
    cs = []
    for t in C.INTS:
        lo, hi = C.int_range(t)
        xs = [lo, hi, 1, 0]
        want = [C.wrap(-x, t) for x in xs]
        cs.append({
            "name": "%s_neg_wraps" % C.SHORT[t],
            "description": "-INT_MIN == INT_MIN; unsigned negation is modulo 2^w",
            "features": ["intdiv", "overflow", "op.neg"] + C.dtype_features(t),
            "source": SRC_NEG.format(T=C.CNAME[t]),
            "grid": [1],
            "args": [C.buf("X", t, xs), C.zeros("Z", t, 4)],
            "expect": {"outputs": {"Z": C.out(want, t)}},
        })
    return cs


def shift_cases():
    cs = []
    for t in C.INTS:
        lo, hi = C.int_range(t)
        w = C.WIDTH[t]
        top = w - 1
        shl = [(1, top), (hi, 1), (-1 if C.is_signed(t) else hi, top), (3, top - 1), (hi, top),
               (1, 0), (lo, 0), (5, 2)]
        cs.append(binop_case("%s_shl_edges" % C.SHORT[t], t, "<<", shl, ["shift", "shift.edge"],
                             "<< with count 0 and width - 1; bits shifted out are lost"))
        shr = [(lo, top), (-1 if C.is_signed(t) else hi, top), (hi, top), (lo, 1), (hi, 1),
               (-8 if C.is_signed(t) else hi - 7, 1), (-1 if C.is_signed(t) else 1, 0), (lo + 1, top - 1)]
        kind = "shift.arithmetic" if C.is_signed(t) else "shift.logical"
        cs.append(binop_case("%s_shr_edges" % C.SHORT[t], t, ">>", shr, ["shift", "shift.edge", kind],
                             ">> is %s for %s" % ("arithmetic" if C.is_signed(t) else "logical", t)))
    return cs


def trap_cases():
    cs = []
    for t in C.INTS:
        cs.append(trap_case("%s_div_by_zero_traps" % C.SHORT[t], t, "/",
                            [(7, 1), (7, 0), (1, 1), (3, 2)], "division_by_zero",
                            "integer division by zero"))
        cs.append(trap_case("%s_mod_by_zero_traps" % C.SHORT[t], t, "%",
                            [(7, 1), (7, 3), (0, 0), (3, 2)], "division_by_zero",
                            "integer remainder by zero"))
    for t in C.SIGNED:
        lo, _ = C.int_range(t)
        cs.append(trap_case("%s_min_div_minus_one_traps" % C.SHORT[t], t, "/",
                            [(lo, 1), (lo, -1), (5, -1), (lo, 2)], "division_overflow",
                            "INT_MIN / -1 overflows"))
        cs.append(trap_case("%s_min_mod_minus_one_traps" % C.SHORT[t], t, "%",
                            [(lo, 1), (5, -1), (lo, -1), (lo, 2)], "division_overflow",
                            "INT_MIN % -1 is a trap too"))
    for t in C.INTS:
        w = C.WIDTH[t]
        cs.append(trap_case("%s_shl_by_width_traps" % C.SHORT[t], t, "<<",
                            [(1, 1), (1, w), (1, 0), (1, w - 1)], "shift_out_of_range",
                            "<< by the width"))
        cs.append(trap_case("%s_shr_by_width_traps" % C.SHORT[t], t, ">>",
                            [(1, 1), (1, 0), (1, w - 1), (1, w)], "shift_out_of_range",
                            ">> by the width"))
    for t in C.SIGNED:
        cs.append(trap_case("%s_shl_negative_count_traps" % C.SHORT[t], t, "<<",
                            [(1, 1), (1, -1), (1, 0), (1, 2)], "shift_out_of_range",
                            "<< by a negative count"))
        cs.append(trap_case("%s_shr_negative_count_traps" % C.SHORT[t], t, ">>",
                            [(8, 1), (8, 2), (8, -1), (8, 0)], "shift_out_of_range",
                            ">> by a negative count"))
    # A literal count takes no part in promotion: int8 << 8 is an int8 shift by 8.
    cs.append({
        "name": "i8_shl_literal_8_traps",
        "description": "x << 8 on an int8 tile: the constant takes no part (rule 2), so the "
                       "shift is in int8 and 8 >= the width",
        "features": ["intdiv", "trap", "trap.shift_out_of_range", "op.shl", "promotion"] +
        C.dtype_features("int8"),
        "source": "__global__ void k(int8 *X, int8 *Z) {\n  int i[4] = 0 ... 4;\n"
                  "  int8 x[4] = *(X + i);\n  *(Z + i) = x << 8;\n}\n",
        "grid": [1],
        "args": [C.buf("X", "int8", [1, 2, 3, 4]), C.zeros("Z", "int8", 4)],
        "expect": {"trap": {"kind": "shift_out_of_range"}},
    })
    cs.append({
        "name": "u16_shr_literal_15_logical",
        "description": "x >> 15 on a uint16 tile stays uint16 (logical)",
        "features": ["intdiv", "shift", "shift.logical", "op.shr", "promotion"] +
        C.dtype_features("uint16"),
        "source": "__global__ void k(uint16 *X, uint16 *Z) {\n  int i[4] = 0 ... 4;\n"
                  "  uint16 x[4] = *(X + i);\n  *(Z + i) = x >> 15;\n}\n",
        "grid": [1],
        "args": [C.buf("X", "uint16", [65535, 32768, 32767, 1]), C.zeros("Z", "uint16", 4)],
        "expect": {"outputs": {"Z": C.out([1, 1, 0, 0], "uint16")}},
    })
    # A large count in an unsigned type (e.g. -1 converted) traps as well.
    cs.append(trap_case("u32_shr_by_huge_count_traps", "uint32", ">>",
                        [(1, 1), (1, 4294967295), (1, 0), (1, 2)], "shift_out_of_range",
                        ">> by 2^32 - 1"))
    return cs


def floor_div(a, b):
    return a // b  # Python: floor division


def py_mod(a, b):
    return a % b  # Python: sign of the divisor


SRC_CONST = """__global__ void k(int *Z) {{
{BODY}
}}
"""


def const_cases():
    """All-constant / and %: floor division and Python modulo (with a warning)."""
    cs = []
    exprs = [("7 / -2", floor_div(7, -2), "floor division: 7 / -2 == -4 (C: -3)"),
             ("-7 / 2", floor_div(-7, 2), "floor division: -7 / 2 == -4"),
             ("-7 / -2", floor_div(-7, -2), "-7 / -2 == 3 as in C"),
             ("7 / 2", floor_div(7, 2), "7 / 2 == 3"),
             ("-6 / 3", floor_div(-6, 3), "exact: -2"),
             ("-1 / 3", floor_div(-1, 3), "-1 / 3 == -1 (C: 0)"),
             ("7 % -2", py_mod(7, -2), "Python modulo: 7 % -2 == -1 (C: 1)"),
             ("-7 % 2", py_mod(-7, 2), "Python modulo: -7 % 2 == 1 (C: -1)"),
             ("-7 % -2", py_mod(-7, -2), "-7 % -2 == -1 as in C"),
             ("-1 % 3", py_mod(-1, 3), "-1 % 3 == 2"),
             ("(-7 / 2) * 2 + (-7 % 2)", floor_div(-7, 2) * 2 + py_mod(-7, 2),
              "floor division and Python modulo agree: q * b + r == a"),
             ("-2147483647 / 2", floor_div(-2147483647, 2), "large constant")]
    body = []
    want = []
    for j, (e, v, _) in enumerate(exprs):
        body.append("  int c%d = %s;" % (j, e))
        body.append("  *(Z + %d) = c%d;" % (j, j))
        want.append(v)
    n = 16
    want += [0] * (n - len(want))
    cs.append({
        "name": "const_div_mod_floor_python",
        "description": "every operand a constant: floor division and Python modulo; the "
                       "warnings do not stop compilation. " +
                       "; ".join(d for _, _, d in exprs),
        "features": ["intdiv", "intdiv.constant", "op.div", "op.mod", "warning"] +
        C.dtype_features("int32"),
        "source": SRC_CONST.format(BODY="\n".join(body)),
        "grid": [1],
        "args": [C.zeros("Z", "int32", n)],
        "expect": {"outputs": {"Z": C.out(want, "int32")}},
    })
    for e, v, d in exprs[:10]:
        name = "const_" + e.replace(" ", "").replace("-", "m").replace("/", "_div_").replace(
            "%", "_mod_")
        cs.append({
            "name": name,
            "description": d,
            "features": ["intdiv", "intdiv.constant", "op.div" if "/" in e else "op.mod"] +
            C.dtype_features("int32"),
            "source": "__global__ void k(int *Z) {\n  *Z = %s;\n}\n" % e,
            "grid": [1],
            "args": [C.zeros("Z", "int32", 1)],
            "expect": {"outputs": {"Z": C.out([v], "int32")}},
        })
    # Macros expanding to constants are constants too.
    cs.append({
        "name": "const_macro_floor_div",
        "description": "a macro that expands to a constant is a constant: A / B with A=-7, B=2 is -4",
        "features": ["intdiv", "intdiv.constant", "op.div", "preprocessor"] +
        C.dtype_features("int32"),
        "source": "#define A (-7)\n#define B 2\n__global__ void k(int *Z) {\n  *Z = A / B;\n"
                  "  *(Z + 1) = A % B;\n}\n",
        "grid": [1],
        "args": [C.zeros("Z", "int32", 2)],
        "expect": {"outputs": {"Z": C.out([floor_div(-7, 2), py_mod(-7, 2)], "int32")}},
    })
    # A constant sub-expression inside a tile expression is folded with the same rule.
    xs = [10, -10, 0, 3]
    cs.append({
        "name": "const_subexpr_in_tile_expr_floor_div",
        "description": "(-7 / 2) is an all-constant sub-expression: -4, so x + (-7 / 2) == x - 4",
        "features": ["intdiv", "intdiv.constant", "op.div"] + C.dtype_features("int32"),
        "source": "__global__ void k(int *X, int *Z) {\n  int i[4] = 0 ... 4;\n"
                  "  int x[4] = *(X + i);\n  *(Z + i) = x + (-7 / 2);\n}\n",
        "grid": [1],
        "args": [C.buf("X", "int32", xs), C.zeros("Z", "int32", 4)],
        "expect": {"outputs": {"Z": C.out([x + floor_div(-7, 2) for x in xs], "int32")}},
    })
    # A variable is not a constant: run-time C rounding even though the value is known.
    cs.append({
        "name": "variable_div_is_not_constant",
        "description": "a variable is a runtime scalar: a / 2 with a = -7 truncates (-3), "
                       "a % 2 is -1",
        "features": ["intdiv", "intdiv.c_rounding", "op.div", "op.mod"] +
        C.dtype_features("int32"),
        "source": "__global__ void k(int *Z) {\n  int a = -7;\n  int b = 2;\n  *Z = a / b;\n"
                  "  *(Z + 1) = a % b;\n}\n",
        "grid": [1],
        "args": [C.zeros("Z", "int32", 2)],
        "expect": {"outputs": {"Z": C.out([-3, -1], "int32")}},
    })
    cs.append({
        "name": "scalar_arg_div_truncates",
        "description": "kernel arguments are run-time values: C rounding",
        "features": ["intdiv", "intdiv.c_rounding", "op.div", "op.mod"] +
        C.dtype_features("int32"),
        "source": "__global__ void k(int a, int b, int *Z) {\n  *Z = a / b;\n"
                  "  *(Z + 1) = a % b;\n}\n",
        "grid": [1],
        "args": [{"name": "a", "dtype": "int32", "value": 7},
                 {"name": "b", "dtype": "int32", "value": -2}, C.zeros("Z", "int32", 2)],
        "expect": {"outputs": {"Z": C.out([-3, 1], "int32")}},
    })
    # Errors: constant division by zero.
    for e, what in [("7 / 0", "division"), ("7 % 0", "remainder")]:
        cs.append({
            "name": "const_%s_by_zero_is_error" % what,
            "description": "a constant division by zero is a compile error",
            "features": ["intdiv", "intdiv.constant", "diagnostic",
                         "diag.err_sema_const_div_zero"],
            "source": "__global__ void k(int *Z) {\n  *Z = %s;\n}\n" % e,
            "grid": [1],
            "args": [C.zeros("Z", "int32", 1)],
            "expect": {"compile_error": {"message": "by zero in constant expression", "line": 2}},
        })
    return cs


SRC_MIXED = """__global__ void k(int32 *X, uint32 *Y, uint32 *Z, uint32 *R) {
  int i[4] = 0 ... 4;
  int32 x[4] = *(X + i);
  uint32 y[4] = *(Y + i);
  *(Z + i) = x / y;
  *(R + i) = x % y;
}
"""


def mixed_cases():
    xs, ys = [-7, 7, -1, -2147483648], [2, 2, 3, 7]
    q = [C.int_binop("/", C.convert(x, "int32", "uint32"), y, "uint32") for x, y in zip(xs, ys)]
    r = [C.int_binop("%", C.convert(x, "int32", "uint32"), y, "uint32") for x, y in zip(xs, ys)]
    return [{
        "name": "mixed_signedness_div_is_unsigned",
        "description": "int32 / uint32 promotes to uint32 (rule 1): -7 / 2u == 2147483644",
        "features": ["intdiv", "promotion", "op.div", "op.mod"] +
        C.dtype_features("int32", "uint32"),
        "source": SRC_MIXED,
        "grid": [1],
        "args": [C.buf("X", "int32", xs), C.buf("Y", "uint32", ys), C.zeros("Z", "uint32", 4),
                 C.zeros("R", "uint32", 4)],
        "expect": {"outputs": {"Z": C.out(q, "uint32"), "R": C.out(r, "uint32")}},
    }]


def no_c_promotion_cases():
    """Unlike C, narrow integers are not promoted to int: results wrap in their own type
    and only then convert to the wider buffer (rule 1 and rule 13)."""
    cs = []
    specs = [("u8_add_wraps_before_wide_store", "uint8", "x + y", [200, 255, 1, 128],
              [100, 1, 2, 128], lambda x, y: C.wrap(x + y, "uint8")),
             ("i8_mul_wraps_before_wide_store", "int8", "x * y", [16, -128, 100, 3],
              [16, -1, 2, 5], lambda x, y: C.wrap(x * y, "int8")),
             ("u8_bitnot_stays_u8", "uint8", "~x", [0, 255, 1, 170], [0, 0, 0, 0],
              lambda x, y: C.wrap(~x, "uint8")),
             ("u8_neg_stays_u8", "uint8", "-x", [1, 0, 255, 128], [0, 0, 0, 0],
              lambda x, y: C.wrap(-x, "uint8")),
             ("u16_sub_wraps_before_wide_store", "uint16", "x - y", [0, 5, 65535, 1],
              [1, 7, 65535, 2], lambda x, y: C.wrap(x - y, "uint16")),
             ("i16_shl_wraps_before_wide_store", "int16", "x << y", [1, 3, -1, 255],
              [15, 14, 15, 8], lambda x, y: C.int_binop("<<", x, y, "int16"))]
    for name, t, e, xs, ys, fn in specs:
        want = [fn(x, y) for x, y in zip(xs, ys)]
        cs.append({
            "name": name,
            "description": "%s on %s computes in %s (no promotion to int as in C); the "
                           "int32 store then extends the wrapped value" % (e, t, t),
            "features": ["intdiv", "overflow", "promotion"] + C.dtype_features(t, "int32"),
            "source": ("__global__ void k({T} *X, {T} *Y, int32 *Z) {{\n  int i[4] = 0 ... 4;\n"
                       "  {T} x[4] = *(X + i);\n  {T} y[4] = *(Y + i);\n  *(Z + i) = {E};\n}}\n"
                       ).format(T=C.CNAME[t], E=e),
            "grid": [1],
            "args": [C.buf("X", t, xs), C.buf("Y", t, ys), C.zeros("Z", "int32", 4)],
            "expect": {"outputs": {"Z": C.out(want, "int32")}},
        })
    return cs


SRC_MULHI = """__global__ void k({T} *X, {T} *Y, {T} *Z) {{
  int i[{N}] = 0 ... {N};
  {T} x[{N}] = *(X + i);
  {T} y[{N}] = *(Y + i);
  *(Z + i) = umulhi(x, y);
}}
"""


SRC_CDIV = """__global__ void k({T} *X, {T} *Y, {T} *Z) {{
  int i[{N}] = 0 ... {N};
  *(Z + i) = cdiv(*(X + i), *(Y + i));
}}
"""


def cdiv_cases():
    """cdiv(a, b) = ceil(a / b) exactly (Fraction), never (a + b - 1) / b."""
    cs = []
    for t in C.INTS:
        lo, hi = C.int_range(t)
        pairs = [(7, 2), (6, 3), (0, 5), (1, hi), (hi, hi - 1), (hi, 2), (hi - 1, hi), (hi, 1)]
        if C.is_signed(t):
            pairs += [(-7, 2), (7, -2), (-7, -2), (-8, 2), (23, -2), (lo, 2), (lo + 1, -1),
                      (lo, hi), (hi, lo), (-1, lo), (lo, lo)]
        pairs = pad(pairs)
        n = len(pairs)
        want = [C.wrap(math.ceil(Fraction(x, y)), t) for x, y in pairs]
        assert all(math.ceil(Fraction(x, y)) == w for (x, y), w in zip(pairs, want)), t
        cs.append({
            "name": "cdiv_%s_exact_ceiling" % C.SHORT[t],
            "description": "cdiv on %s at run time: ceil(a / b) exactly, as folded from constants "
                           "(cdiv(hi, hi - 1) == 2, cdiv(23, -2) == -11)" % t,
            "features": ["intdiv", "builtin.cdiv"] + C.dtype_features(t),
            "source": SRC_CDIV.format(T=C.CNAME[t], N=n),
            "grid": [1],
            "args": [C.buf("X", t, [p[0] for p in pairs]), C.buf("Y", t, [p[1] for p in pairs]),
                     C.zeros("Z", t, n)],
            "expect": {"outputs": {"Z": C.out(want, t)}},
        })
    return cs


def umulhi_cases():
    """umulhi(x, y): the high half of the exact double-width product (Python's >> floors,
    so a negative product's high half is the signed one)."""
    cs = []
    for t in ["int32", "int64", "uint32", "uint64"]:  # umulhi takes 32- and 64-bit integers
        w = C.WIDTH[t]
        lo, hi = C.int_range(t)
        vals = [0, 1, 2, 3, hi, hi - 1, lo, lo + 1, hi // 3, 1 << (w // 2)]
        if C.is_signed(t):
            vals += [-1, -2, -3, -(1 << (w // 2))]
        pairs = [(x, y) for x in vals for y in vals][:64]
        pairs = pad(pairs)
        n = len(pairs)
        want = [C.wrap((x * y) >> w, t) for x, y in pairs]
        cs.append({
            "name": "umulhi_%s_high_half" % t,
            "description": "umulhi on %s: the high %d bits of the %d-bit product, %s" %
                           (t, w, 2 * w, "signed" if C.is_signed(t) else "unsigned"),
            "features": ["intdiv", "op.umulhi"] + C.dtype_features(t),
            "source": SRC_MULHI.format(T=C.CNAME[t], N=n),
            "grid": [1],
            "args": [C.buf("X", t, [p[0] for p in pairs]), C.buf("Y", t, [p[1] for p in pairs]),
                     C.zeros("Z", t, n)],
            "expect": {"outputs": {"Z": C.out(want, t)}},
        })
    return cs


def main():
    cases = division_cases() + mixed_cases() + const_cases() + overflow_cases() + \
        negation_cases() + no_c_promotion_cases() + shift_cases() + trap_cases() + \
        umulhi_cases() + cdiv_cases()
    C.write_suite("intdiv.json", "intdiv",
                  "docs/semantics.md rules 4 and 5: integer division and remainder, constant "
                  "floor division, wrapping overflow, shifts and the integer traps. Generated by "
                  "conformance/gen/intdiv.py.", cases)


if __name__ == "__main__":
    main()
