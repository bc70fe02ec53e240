"""Generate conformance/cases/promotion.json.

docs/semantics.md rules 1 and 2:

* the full 13 x 13 tile/tile matrix for + - * / % (fmod on floats), & | ^ << >> on
  integer pairs (and & | ^ on two bools), and the six comparisons (one case per pair
  with six bool outputs);
* tile/constant promotion (a constant of lower or equal kind takes no part; a constant
  of higher kind takes the lowest of int32 < uint32 < int64 < uint64 or float < double
  that holds it), the compile errors for constants that do not fit, and runtime scalars
  (kernel arguments) that follow rule 1.

Each tile/tile case loads two [8] tiles of the operand dtypes and stores the result
into a buffer of the promoted dtype. The eight lanes are picked from pools of values
so that computing in any other dtype (then converting to the promoted dtype on the
store) gives a different output wherever that can be observed: the script evaluates
every alternative dtype and greedily picks lanes that tell them apart.

Run: python3 conformance/gen/promotion.py
"""

import math
import random
import sys
from fractions import Fraction

import common as C

LANES = 8

OP_NAMES = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "&": "and",
            "|": "or", "^": "xor", "<<": "shl", ">>": "shr"}
CMP_NAMES = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}

INT_POOL = [0, 1, -1, 2, -2, 3, 7, -7, 5, 100, -100, 127, -128, 128, 200, 255, 256, 257,
            1000, -1000, 2048, 2049, 2050, 2051, 32767, -32768, 32768, 40000, 65535, 65536, 70000,
            16777216, 16777217, -16777217, 2 ** 31 - 1, -2 ** 31, 2 ** 31, 3000000000, 2 ** 32 - 1,
            2 ** 32, 2 ** 53, 2 ** 53 + 1, 2 ** 62 + 1, 2 ** 63 - 1, -2 ** 63, 2 ** 63, 2 ** 64 - 1]
FLOAT_POOL = [0.5, 1.0, 1.5, -2.5, 2.75, 0.1, 1.0 / 3, -7.25, 1 + 2.0 ** -10, 1 + 2.0 ** -8,
              1 + 2.0 ** -20, 1 + 2.0 ** -30, 1 - 2.0 ** -40, 3.0, -1.0, 100.25, 257.0, 2049.0, 65504.0, 1e5, 16777217.0,
              3e9, 2.0 ** 40 + 1, 3e38, 1e300, 2.0 ** -20, 1e-30, 1e-300, 2.0]
SHIFT_POOL = [0, 1, 3, 4, 7, 8, 15, 16, 31, 32, 63]


def pool(t):
    if t == "bool":
        return [1, 0]
    if C.is_int(t):
        lo, hi = C.int_range(t)
        return [v for v in INT_POOL if lo <= v <= hi]
    vals = []
    for v in FLOAT_POOL:
        r = C.fround(v, t)
        if math.isinf(r) or r == 0:
            continue
        if not any(C.same_value(r, w) for w in vals):
            vals.append(r)
    return vals


def try_eval(fn):
    try:
        return fn()
    except C.Trap as e:
        return ("trap", e.kind)


_CONV = {}


def fconv(v, src, dst):
    """C.convert, memoised (keys keep -0.0 apart from 0.0); float sources use fround_fast."""
    key = (src, dst, repr(v))
    r = _CONV.get(key)
    if r is None:
        try:
            if C.is_float(src) and C.is_float(dst):
                r = C.fround_fast(v, dst)
            else:
                r = C.convert(v, src, dst)
        except C.Trap as e:
            r = ("trap", e.kind)
        _CONV[key] = r
    if isinstance(r, tuple):
        raise C.Trap(r[1])
    return r


def fast_binop(op, x, a, y, b, q):
    """C.binop_in through binary64 arithmetic (see common.fast_float_binop)."""
    cx, cy = fconv(x, a, q), fconv(y, b, q)
    if op in C.CMP_OPS:
        return C.compare(op, cx, cy)
    if q == "bool":
        return C.convert(C.int_binop(op, cx, cy, "int32"), "int32", "bool")
    if C.is_float(q):
        if op not in ("+", "-", "*", "/", "%"):
            raise C.Trap("no float " + op)  # an alternative that would not even compile
        return C.fast_float_binop(op, cx, cy, q)
    return C.int_binop(op, cx, cy, q)


def outcome(op, x, a, y, b, q, p):
    """Value stored into a p buffer when the operation is computed in dtype q."""
    return try_eval(lambda: fconv(fast_binop(op, x, a, y, b, q), q, p))


def cmp_outcome(x, a, y, b, q):
    return try_eval(lambda: tuple(fast_binop(op, x, a, y, b, q) for op in C.CMP_OPS))


def exact_outcome(op, x, a, y, b, p):
    """The expected value with the exact (Fraction) model; must agree with outcome()."""
    if op == "cmp":
        return tuple(C.binop_in(o, x, a, y, b, p) for o in C.CMP_OPS)
    return C.binop_in(op, x, a, y, b, p)


def differs(u, v):
    if isinstance(u, tuple) or isinstance(v, tuple):
        return u != v
    return not C.same_value(u, v)


def pick_lanes(cands, alternatives, rng):
    """Greedy: each candidate is (x, y, expected, set_of_alternatives_told_apart).

    Aims to tell every alternative dtype apart twice; then fills the remaining lanes
    with simple values (pool order) and a few random ones."""
    need = {q: 2 for q in alternatives}
    chosen, used = [], set()
    while len(chosen) < LANES:
        best, best_gain = None, 0
        for idx, c in enumerate(cands):
            if idx in used:
                continue
            gain = sum(need[q] for q in c[3])
            if gain > best_gain:
                best, best_gain = idx, gain
        if best is None:
            break
        used.add(best)
        chosen.append(cands[best])
        for q in cands[best][3]:
            need[q] = max(0, need[q] - 1)
    rest = [i for i in range(len(cands)) if i not in used]
    head, tail = rest[:2], rest[2:]
    rng.shuffle(tail)
    for i in head + tail:
        if len(chosen) >= LANES:
            break
        chosen.append(cands[i])
    while len(chosen) < LANES:
        chosen.append(chosen[len(chosen) % len(chosen)])
    missed = [q for q in alternatives if not any(q in c[3] for c in chosen)]
    return chosen, missed


MAX_CANDS = 160


def sample_pairs(xs, ys, rng):
    """All pairs when few; else the simplest 40 and a random sample of the rest."""
    pairs = [(x, y) for x in xs for y in ys]
    if len(pairs) <= MAX_CANDS:
        return pairs
    pairs.sort(key=lambda p: xs.index(p[0]) + ys.index(p[1]))
    head, tail = pairs[:40], pairs[40:]
    # Pairs of nearly equal values tell conversions apart (16777217 vs 16777216.0).
    near = []
    for x in xs:
        for y in sorted(ys, key=lambda y: abs(float(x) - float(y)))[:2]:
            near.append((x, y))
    for y in ys:
        for x in sorted(xs, key=lambda x: abs(float(x) - float(y)))[:2]:
            near.append((x, y))
    chosen = head + [p for p in near if p not in head]
    rest = [p for p in tail if p not in chosen]
    return chosen + rng.sample(rest, max(0, min(len(rest), MAX_CANDS - len(chosen))))


def binary_candidates(op, a, b, p, rng):
    xs, ys = pool(a), pool(b)
    if op in ("<<", ">>"):
        lo, hi = C.int_range(b)
        ys = [v for v in SHIFT_POOL if lo <= v <= hi]
    cands = []
    alts = [q for q in C.DTYPES if q != p]
    for x, y in sample_pairs(xs, ys, rng):
        if True:
            if op in ("/", "%") and y == 0:
                continue
            want = outcome(op, x, a, y, b, p, p)
            if isinstance(want, tuple):
                continue  # traps in the promoted type: not a valid lane
            told = frozenset(q for q in alts if differs(outcome(op, x, a, y, b, q, p), want))
            cands.append((x, y, want, told))
    return cands, alts


def cmp_candidates(a, b, p, rng):
    cands = []
    alts = [q for q in C.DTYPES if q != p]
    for x, y in sample_pairs(pool(a), pool(b), rng):
        if True:
            want = cmp_outcome(x, a, y, b, p)
            told = frozenset(q for q in alts if differs(cmp_outcome(x, a, y, b, q), want))
            cands.append((x, y, want, told))
    return cands, alts


SRC_BIN = """__global__ void k({A} *X, {B} *Y, {P} *Z) {{
  int i[8] = 0 ... 8;
  {A} x[8] = *(X + i);
  {B} y[8] = *(Y + i);
  *(Z + i) = x {OP} y;
}}
"""

SRC_CMP = """__global__ void k({A} *X, {B} *Y, bool *LT, bool *LE, bool *GT, bool *GE, bool *EQ, bool *NE) {{
  int i[8] = 0 ... 8;
  {A} x[8] = *(X + i);
  {B} y[8] = *(Y + i);
  *(LT + i) = x < y;
  *(LE + i) = x <= y;
  *(GT + i) = x > y;
  *(GE + i) = x >= y;
  *(EQ + i) = x == y;
  *(NE + i) = x != y;
}}
"""

REPORT = []


def binary_case(op, a, b, rng):
    p = C.promote(a, b)
    cands, alts = binary_candidates(op, a, b, p, rng)
    lanes, missed = pick_lanes(cands, alts, rng)
    for c in lanes:
        assert not differs(exact_outcome(op, c[0], a, c[1], b, p), c[2]), (op, a, b, c)
    REPORT.append((OP_NAMES[op], a, b, p, missed))
    src = SRC_BIN.format(A=C.CNAME[a], B=C.CNAME[b], P=C.CNAME[p], OP=op)
    feats = ["promotion", "promotion.tile_tile", "op." + OP_NAMES[op]] + \
        C.dtype_features(a, b, p)
    return {
        "name": "%s_%s_%s_to_%s" % (C.SHORT[a], OP_NAMES[op], C.SHORT[b], C.SHORT[p]),
        "features": feats,
        "source": src,
        "grid": [1],
        "args": [C.buf("X", a, [c[0] for c in lanes]), C.buf("Y", b, [c[1] for c in lanes]),
                 C.zeros("Z", p, LANES)],
        "expect": {"outputs": {"Z": C.out([c[2] for c in lanes], p)}},
    }


def cmp_case(a, b, rng):
    p = C.promote(a, b)
    cands, alts = cmp_candidates(a, b, p, rng)
    lanes, missed = pick_lanes(cands, alts, rng)
    for c in lanes:
        assert exact_outcome("cmp", c[0], a, c[1], b, p) == c[2], (a, b, c)
    REPORT.append(("cmp", a, b, p, missed))
    names = ["LT", "LE", "GT", "GE", "EQ", "NE"]
    outs = {}
    for k, n in enumerate(names):
        outs[n] = C.out([c[2][k] for c in lanes], "bool")
    args = [C.buf("X", a, [c[0] for c in lanes]), C.buf("Y", b, [c[1] for c in lanes])]
    args += [C.zeros(n, "bool", LANES) for n in names]
    feats = ["promotion", "promotion.tile_tile", "comparison"] + \
        ["op." + CMP_NAMES[o] for o in C.CMP_OPS] + C.dtype_features(a, b, p, "bool")
    return {
        "name": "%s_cmp_%s_in_%s" % (C.SHORT[a], C.SHORT[b], C.SHORT[p]),
        "features": feats,
        "source": SRC_CMP.format(A=C.CNAME[a], B=C.CNAME[b]),
        "grid": [1],
        "args": args,
        "expect": {"outputs": outs},
    }


# ----------------------------------------------------------------------------
# tile / constant promotion (rule 2) and runtime scalars
# ----------------------------------------------------------------------------

SRC_LIT = """__global__ void k({A} *X, {W} *Z) {{
  int i[4] = 0 ... 4;
  {A} x[4] = *(X + i);
  *(Z + i) = {EXPR};
}}
"""


def observe_dtype(p):
    """A buffer dtype that holds every value of p exactly (to see the result type)."""
    if C.is_float(p):
        return "float64"
    if p == "uint64":
        return "uint64"
    return "int64"


def const_type(value):
    """The dtype a constant of higher kind takes (rule 2)."""
    if isinstance(value, int):
        for t in ("int32", "uint32", "int64", "uint64"):
            lo, hi = C.int_range(t)
            if lo <= value <= hi:
                return t
        raise ValueError(value)
    r = C.fround(value, "float32")
    return "float32" if not math.isinf(r) else "float64"


def literal_result_type(a, value):
    kc = 2 if isinstance(value, float) else 1
    if kc <= C.kind_of(a):
        return a
    return C.promote(a, const_type(value))


def const_to(value, p):
    """The constant converted to dtype p (exact decimal -> RNE for floats)."""
    if C.is_float(p):
        return C.round_exact(Fraction(value), p)
    return int(value)


def lit_case(name, a, xs, op, text, value, note, commuted=False):
    """x OP constant (or constant OP x), stored into a wide buffer that shows the type."""
    p = literal_result_type(a, value)
    w = observe_dtype(p)
    cv = const_to(value, p)
    want = []
    for x in xs:
        cx = C.convert(x, a, p)
        if op in C.CMP_OPS:
            r = C.compare(op, cv, cx) if commuted else C.compare(op, cx, cv)
            want.append(r)
            continue
        lhs, rhs = (cv, cx) if commuted else (cx, cv)
        if C.is_float(p):
            r = C.float_binop(op, lhs, rhs, p)
        elif p == "bool":
            r = C.convert(C.int_binop(op, lhs, rhs, "int32"), "int32", "bool")
        else:
            r = C.int_binop(op, lhs, rhs, p)
        want.append(C.convert(r, p, w))
    if op in C.CMP_OPS:
        w = "bool"
    expr = ("%s %s x" % (text, op)) if commuted else ("x %s %s" % (op, text))
    feats = ["promotion", "promotion.tile_constant", "op." + (OP_NAMES.get(op) or CMP_NAMES[op])]
    feats += C.dtype_features(a, p, w)
    return {
        "name": name,
        "description": note + " (result dtype %s)" % p,
        "features": feats,
        "source": SRC_LIT.format(A=C.CNAME[a], W=C.CNAME[w], EXPR=expr),
        "grid": [1],
        "args": [C.buf("X", a, xs), C.zeros("Z", w, 4)],
        "expect": {"outputs": {"Z": C.out(want, w)}},
    }


def lit_error(name, a, expr, message, note):
    src = SRC_LIT.format(A=C.CNAME[a], W=C.CNAME[a], EXPR=expr)
    return {
        "name": name,
        "description": note,
        "features": ["promotion", "promotion.tile_constant", "diagnostic",
                     "diag.err_sema_const_negative_unsigned" if "negative" in message
                     else "diag.err_sema_const_no_fit"] + C.dtype_features(a),
        "source": src,
        "grid": [1],
        "args": [C.buf("X", a, [1, 2, 3, 4] if a != "bool" else [1, 0, 1, 0]), C.zeros("Z", a, 4)],
        "expect": {"compile_error": {"message": message, "line": 4}},
    }


def literal_cases():
    cs = []
    L = lit_case
    cs.append(L("u8_add_const_3_stays_u8", "uint8", [254, 253, 1, 255], "+", "3", 3,
                "uint8 + 3: the constant takes no part, the sum wraps in uint8"))
    cs.append(L("i8_add_const_100_stays_i8", "int8", [100, 27, 28, -128], "+", "100", 100,
                "int8 + 100 wraps in int8"))
    cs.append(L("i8_mul_const_2_stays_i8", "int8", [64, 100, -65, 3], "*", "2", 2,
                "int8 * 2 wraps in int8"))
    cs.append(L("u16_sub_const_1_stays_u16", "uint16", [0, 1, 65535, 2], "-", "1", 1,
                "uint16 - 1 wraps in uint16"))
    cs.append(L("i16_add_const_4_0_to_f32", "int16", [1, -3, 32767, 7], "+", "4.0", 4.0,
                "(int16, 4.0) -> float"))
    cs.append(L("i16_add_const_0_1_to_f32", "int16", [1, -3, 32767, 100], "+", "0.1", 0.1,
                "int16 + 0.1 is computed in float, not double"))
    cs.append(L("i32_add_const_0_5_to_f32", "int32", [16777217, 1, -16777219, 3], "+", "0.5",
                0.5, "int32 + 0.5 -> float: 16777217 rounds to 16777216 first"))
    cs.append(L("u32_add_const_0_5_to_f32", "uint32", [16777217, 4294967295, 0, 3], "+", "0.5",
                0.5, "uint32 + 0.5 -> float"))
    cs.append(L("i64_add_const_0_5_to_f32", "int64", [2 ** 40 + 1, 1, -(2 ** 40 + 3), 3], "+",
                "0.5", 0.5, "int64 + 0.5 -> float (the lowest float type that holds 0.5)"))
    cs.append(L("i32_add_const_1e39_to_f64", "int32", [1, 16777217, -5, 2147483647], "+",
                "1e39", 1e39, "int32 + 1e39 -> double: 1e39 does not fit float"))
    cs.append(L("u8_add_const_3_5_to_f32", "uint8", [250, 0, 1, 255], "+", "3.5", 3.5,
                "uint8 + 3.5 -> float"))
    cs.append(L("u8_add_const_neg_0_5_to_f32", "uint8", [1, 0, 255, 2], "+", "-0.5", -0.5,
                "uint8 + -0.5 -> float: a negative float constant meets no unsigned type"))
    cs.append(L("bool_add_const_3_to_i32", "bool", [1, 0, 1, 0], "+", "3", 3,
                "bool + 3 -> int32"))
    cs.append(L("bool_add_const_neg2_to_i32", "bool", [1, 0, 1, 0], "+", "-2", -2,
                "bool + -2 -> int32"))
    cs.append(L("bool_add_const_2147483647_to_i32", "bool", [1, 0, 1, 0], "+", "2147483647",
                2147483647, "bool + 2147483647 -> int32 (wraps for true)"))
    cs.append(L("bool_add_const_2p31_to_u32", "bool", [1, 0, 1, 0], "+", "2147483648",
                2147483648, "bool + 2147483648 -> uint32 (2^31 does not fit int32)"))
    cs.append(L("bool_add_const_u32max_to_u32", "bool", [1, 0, 1, 0], "+", "4294967295",
                4294967295, "bool + 4294967295 -> uint32 (wraps for true)"))
    cs.append(L("bool_add_const_2p32_to_i64", "bool", [1, 0, 1, 0], "+", "4294967296",
                4294967296, "bool + 4294967296 -> int64"))
    cs.append(L("bool_add_const_2p63_to_u64", "bool", [1, 0, 1, 0], "+", "9223372036854775808",
                2 ** 63, "bool + 2^63 -> uint64"))
    cs.append(L("bool_add_const_0_1_to_f32", "bool", [1, 0, 1, 0], "+", "0.1", 0.1,
                "bool + 0.1 -> float"))
    cs.append(L("f16_add_const_0_1_stays_f16", "float16", [1.0, 2048.0, -0.5, 0.25], "+", "0.1",
                0.1, "half + 0.1 stays half (the constant takes no part)"))
    cs.append(L("bf16_add_const_0_1_stays_bf16", "bfloat16", [1.0, 256.0, -0.5, 0.25], "+",
                "0.1", 0.1, "bf16 + 0.1 stays bf16"))
    cs.append(L("f32_add_const_0_1_stays_f32", "float32", [1.0, 16777216.0, -0.5, 0.25], "+",
                "0.1", 0.1, "float + 0.1 stays float (not double)"))
    cs.append(L("f64_add_const_0_1_stays_f64", "float64", [1.0, 2.0 ** 53, -0.5, 0.25], "+",
                "0.1", 0.1, "double + 0.1"))
    cs.append(L("f16_add_const_1_stays_f16", "float16", [2048.0, 1.0, -1.0, 65504.0], "+", "1", 1,
                "half + 1: the integer constant takes no part"))
    cs.append(L("f16_add_const_70000_is_inf", "float16", [1.0, -1.0, 0.5, 100.0], "+", "70000",
                70000, "half + 70000: the constant rounds to inf (a warning, not an error)"))
    cs.append(L("f32_add_const_1e300_is_inf", "float32", [1.0, -1.0, 0.5, 100.0], "+", "1e300",
                1e300, "float + 1e300 stays float: the constant becomes inf"))
    cs.append(L("bf16_add_const_16777217_stays_bf16", "bfloat16", [0.0, 1.0, 2.0, -1.0], "+",
                "16777217", 16777217, "bf16 + 16777217 stays bf16"))
    cs.append(L("i8_div_const_2_truncates", "int8", [-7, 7, -128, 127], "/", "2", 2,
                "int8 / 2 is C division in int8 (not all operands constant)"))
    cs.append(L("i8_mod_const_3_c_sign", "int8", [-7, 7, -128, 127], "%", "3", 3,
                "int8 % 3 takes the dividend's sign"))
    cs.append(L("u8_shr_const_1_logical", "uint8", [255, 128, 1, 254], ">>", "1", 1,
                "uint8 >> 1 is logical in uint8"))
    cs.append(L("i8_shr_const_1_arith", "int8", [-128, -1, 127, -3], ">>", "1", 1,
                "int8 >> 1 is arithmetic in int8"))
    cs.append(L("i8_shl_const_4_wraps", "int8", [15, 8, -1, 1], "<<", "4", 4,
                "int8 << 4 wraps in int8"))
    cs.append(L("u8_lt_const_3_compares_in_u8", "uint8", [0, 2, 3, 255], "<", "3", 3,
                "uint8 < 3"))
    cs.append(L("i8_eq_const_neg1", "int8", [-1, 1, 127, -128], "==", "-1", -1, "int8 == -1"))
    cs.append(L("i16_lt_const_0_5_in_f32", "int16", [0, 1, -1, 32767], "<", "0.5", 0.5,
                "int16 < 0.5 compares in float"))
    cs.append(L("const_100_sub_u8_stays_u8", "uint8", [101, 0, 100, 255], "-", "100", 100,
                "100 - uint8 wraps in uint8", commuted=True))
    cs.append(L("const_1_0_div_i32_in_f32", "int32", [3, -7, 16777217, 1], "/", "1.0", 1.0,
                "1.0 / int32 -> float", commuted=True))
    cs.append(L("u64_add_const_1_stays_u64", "uint64", [2 ** 64 - 1, 0, 2 ** 63, 5], "+", "1", 1,
                "uint64 + 1 wraps in uint64"))
    cs.append(L("i64_add_const_u32max_stays_i64", "int64", [1, -1, 2 ** 63 - 4294967295, 0], "+",
                "4294967295", 4294967295, "int64 + 4294967295 stays int64"))
    cs.append(L("i32_mul_const_macro_expr", "int32", [1, -1, 3, 1000], "*", "(2 + 3 * 4)", 14,
                "a constant expression takes part like a literal"))
    # Constants written with suffixes: literals are untyped, suffixes ignored.
    cs.append(L("u8_add_const_3u_stays_u8", "uint8", [254, 253, 1, 255], "+", "3u", 3,
                "literal suffixes are ignored: uint8 + 3u stays uint8"))
    cs.append(L("i16_add_const_1_5f_to_f32", "int16", [1, 2, -3, 32767], "+", "1.5f", 1.5,
                "int16 + 1.5f -> float"))
    # Errors.
    E = lit_error
    cs.append(E("u8_add_const_300_does_not_fit", "uint8", "x + 300", "does not fit",
                "uint8 + 300: constant 300 does not fit in uint8"))
    cs.append(E("u8_add_const_300_message", "uint8", "x + 300", "constant 300 does not fit in uint8",
                "the full message names the constant and the type"))
    cs.append(E("i8_add_const_128_does_not_fit", "int8", "x + 128", "does not fit",
                "int8 + 128 does not fit"))
    cs.append(E("i8_sub_const_neg129_does_not_fit", "int8", "x - (-129)", "does not fit",
                "-129 does not fit int8"))
    cs.append(E("i16_add_const_40000_does_not_fit", "int16", "x + 40000", "does not fit",
                "int16 + 40000"))
    cs.append(E("i32_add_const_2p31_does_not_fit", "int32", "x + 2147483648", "does not fit",
                "int32 + 2^31: the constant is of the same kind, so it must fit int32"))
    cs.append(E("i64_add_const_2p63_does_not_fit", "int64", "x + 9223372036854775808",
                "does not fit", "int64 + 2^63"))
    cs.append(E("u8_add_const_2p32_does_not_fit", "uint8", "x + 4294967296", "does not fit",
                "uint8 + 2^32"))
    cs.append(E("u16_mul_const_macro_does_not_fit", "uint16", "x * (65535 + 1)", "does not fit",
                "a constant expression that does not fit"))
    cs.append(E("u8_eq_const_300_does_not_fit", "uint8", "x == 300", "does not fit",
                "comparisons promote like arithmetic: 300 does not fit uint8"))
    cs.append(E("u32_add_const_neg1_negative", "uint32", "x + -1", "negative constant",
                "uint32 + -1: negative constant meets unsigned type"))
    cs.append(E("u32_add_const_neg1_message", "uint32", "x + -1",
                "negative constant -1 cannot meet unsigned type uint32", "the full message"))
    cs.append(E("u8_add_const_neg1_negative", "uint8", "x + -1", "negative constant",
                "uint8 + -1"))
    cs.append(E("u64_mul_const_neg2_negative", "uint64", "x * -2", "negative constant",
                "uint64 * -2"))
    cs.append(E("u16_lt_const_neg1_negative", "uint16", "x < -1", "negative constant",
                "uint16 < -1"))
    return cs


SRC_SCALAR = """__global__ void k({A} *X, {S} s, {W} *Z) {{
  int i[4] = 0 ... 4;
  {A} x[4] = *(X + i);
  *(Z + i) = x {OP} s;
}}
"""


def scalar_arg_cases():
    """Kernel arguments are runtime scalars: 0-d tiles that follow rule 1."""
    cs = []
    for a, s, sv, op, xs in [("uint8", "int32", 3, "+", [254, 253, 1, 255]),
                             ("int8", "uint8", 1, "+", [-2, -1, 127, 0]),
                             ("int16", "float32", 0.1, "+", [1, -3, 32767, 100]),
                             ("int32", "bfloat16", 1.0, "+", [257, 1, 16777217, -3]),
                             ("float16", "bfloat16", 1.0, "+", [2048.0, 0.5, 1.0, -1.0]),
                             ("uint16", "int64", -1, "+", [0, 1, 65535, 7]),
                             ("int32", "uint32", 2, "/", [-8, 8, -1, 7]),
                             ("float32", "float64", 0.1, "+", [1.0, 16777216.0, -0.5, 3.0])]:
        p = C.promote(a, s)
        w = observe_dtype(p)
        sv = C.fround(sv, s) if C.is_float(s) else sv
        want = [C.convert(C.binop_in(op, x, a, sv, s, p), p, w) for x in xs]
        cs.append({
            "name": "%s_%s_scalar_arg_%s_to_%s" % (C.SHORT[a], OP_NAMES[op], C.SHORT[s], C.SHORT[p]),
            "description": "a kernel argument is a 0-d tile: (%s tile, %s argument) -> %s" % (a, s, p),
            "features": ["promotion", "promotion.runtime_scalar", "op." + OP_NAMES[op]] +
            C.dtype_features(a, s, p, w),
            "source": SRC_SCALAR.format(A=C.CNAME[a], S=C.CNAME[s], W=C.CNAME[w], OP=op),
            "grid": [1],
            "args": [C.buf("X", a, xs), {"name": "s", "dtype": s, "value": C.jvalue(sv, s)},
                     C.zeros("Z", w, 4)],
            "expect": {"outputs": {"Z": C.out(want, w)}},
        })
    return cs


SRC_SCALAR_CONST = """{PRE}__global__ void k({A} *X, {PARAMS}int64 *Z) {{
  int i[4] = 0 ... 4;
  {A} x[4] = *(X + i);
{BODY}  *(Z + i) = {EXPR};
}}
"""


def constness_cases():
    """What is a constant: literals and macros are; variables and arguments are not."""
    cs = []
    specs = [
        ("macro_constant_takes_no_part", "#define C 3\n", "", "", "x + C", [254, 253, 1, 0],
         "uint8", "uint8", 3, "a macro that expands to a literal is a constant: uint8 + C stays uint8"),
        ("variable_is_a_runtime_scalar", "", "", "  int c = 3;\n", "x + c", [254, 253, 1, 0],
         "uint8", "int32", 3, "a variable is a 0-d int32 tile: uint8 + c is int32"),
        ("argument_is_a_runtime_scalar", "", "int c, ", "", "x + c", [254, 253, 1, 0],
         "uint8", "int32", 3, "a kernel argument is a 0-d int32 tile: uint8 + c is int32"),
        ("int8_argument_plus_literal_stays_int8", "", "int8 s, ", "", "s + 1 + x",
         [0, 1, -1, 100], "int8", "int8", None,
         "an int8 argument plus the literal 1 is int8 (the literal takes no part): 127 + 1 wraps"),
    ]
    for name, pre, params, body, expr, xs, a, p, cval, note in specs:
        args = [C.buf("X", a, xs)]
        if name.startswith("int8_argument"):
            sval = 127
            args.append({"name": "s", "dtype": "int8", "value": sval})
            want = [C.wrap(C.wrap(sval + 1, "int8") + x, "int8") for x in xs]
        else:
            if params:
                args.append({"name": "c", "dtype": "int32", "value": cval})
            want = [C.wrap(C.convert(x, a, p) + cval, p) for x in xs]
        args.append(C.zeros("Z", "int64", 4))
        cs.append({
            "name": name,
            "description": note,
            "features": ["promotion", "promotion.tile_constant", "promotion.runtime_scalar"] +
            C.dtype_features(a, p, "int64"),
            "source": SRC_SCALAR_CONST.format(PRE=pre, A=C.CNAME[a], PARAMS=params, BODY=body,
                                              EXPR=expr),
            "grid": [1],
            "args": args,
            "expect": {"outputs": {"Z": C.out(want, "int64")}},
        })
    return cs


def main():
    rng = random.Random(20240517)
    cases = []
    for op in ["+", "-", "*", "/", "%"]:
        for a in C.DTYPES:
            for b in C.DTYPES:
                cases.append(binary_case(op, a, b, rng))
    for op in ["&", "|", "^", "<<", ">>"]:
        for a in C.INTS:
            for b in C.INTS:
                cases.append(binary_case(op, a, b, rng))
    for op in ["&", "|", "^"]:
        cases.append(binary_case(op, "bool", "bool", rng))
    for a in C.DTYPES:
        for b in C.DTYPES:
            cases.append(cmp_case(a, b, rng))
    cases += literal_cases()
    cases += scalar_arg_cases()
    cases += constness_cases()
    C.write_suite("promotion.json", "promotion",
                  "docs/semantics.md rules 1 and 2: tile/tile promotion for every ordered dtype "
                  "pair and operator, tile/constant promotion and its errors, runtime scalars. "
                  "Generated by conformance/gen/promotion.py.", cases)
    if "-v" in sys.argv:
        for op, a, b, p, missed in REPORT:
            print("%-4s %-8s %-8s -> %-8s not told apart from: %s" % (op, a, b, p, " ".join(missed)))


if __name__ == "__main__":
    main()
