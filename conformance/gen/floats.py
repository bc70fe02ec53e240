"""Generate conformance/cases/floats.json.

docs/semantics.md rule 6, for float16, bfloat16,
float32 and float64:

* NaN, inf and -0 through + - * / and % (C fmod);
* min / max are IEEE maxNum / minNum (NaN only when both are NaN, max(-0, +0) = +0);
* comparisons with NaN are false except !=;
* unary minus flips the sign bit (-(+0.0) is -0.0, bit-exact) unlike 0 - x;
* subnormals are kept (no flush to zero);
* fma rounds once; + - * / and sqrt are correctly rounded to the operand type, so
  fp16 / bf16 arithmetic is rounded to fp16 / bf16 after every operation;
* abs / floor / ceil on signed zeros and specials.

All expected values come from common.py's exact (Fraction) model; every output is
compared bit-exactly (any NaN matches any NaN).

Run: python3 conformance/gen/floats.py
"""

import math

import common as C

NAN, INF = math.nan, math.inf

SRC_BIN = """__global__ void k({T} *X, {T} *Y, {T} *Z) {{
  int i[{N}] = 0 ... {N};
  {T} x[{N}] = *(X + i);
  {T} y[{N}] = *(Y + i);
  *(Z + i) = {EXPR};
}}
"""

SRC_UN = """__global__ void k({T} *X, {OUTS}) {{
  int i[{N}] = 0 ... {N};
  {T} x[{N}] = *(X + i);
{STORES}
}}
"""

OPN = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod"}


def pow2(n):
    m = 1
    while m < n:
        m *= 2
    return m


def padded(pairs):
    pairs = list(pairs)
    n = pow2(len(pairs))
    k = 0
    while len(pairs) < n:
        pairs.append(pairs[k])
        k += 1
    return pairs


def binary(name, t, expr, fn, pairs, feats, note):
    pairs = padded([(C.fround(x, t), C.fround(y, t)) for x, y in pairs])
    n = len(pairs)
    want = [fn(x, y) for x, y in pairs]
    return {
        "name": name,
        "description": note,
        "features": ["floats"] + feats + C.dtype_features(t),
        "source": SRC_BIN.format(T=C.CNAME[t], N=n, EXPR=expr),
        "grid": [1],
        "args": [C.buf("X", t, [p[0] for p in pairs]), C.buf("Y", t, [p[1] for p in pairs]),
                 C.zeros("Z", t, n)],
        "expect": {"outputs": {"Z": C.out(want, t)}},
    }


def unary(name, t, xs, outs, feats, note):
    """outs: list of (buffer name, dtype, expression over x, function)."""
    xs = [C.fround(x, t) for x in xs]
    n = pow2(len(xs))
    xs = xs + xs[:n - len(xs)]
    params = ", ".join("%s *%s" % (C.CNAME[ot], on) for on, ot, _, _ in outs)
    stores = "\n".join("  *(%s + i) = %s;" % (on, e) for on, _, e, _ in outs)
    args = [C.buf("X", t, xs)] + [C.zeros(on, ot, n) for on, ot, _, _ in outs]
    expect = {on: C.out([fn(x) for x in xs], ot) for on, ot, _, fn in outs}
    return {
        "name": name,
        "description": note,
        "features": ["floats"] + feats + C.dtype_features(t, *[o[1] for o in outs]),
        "source": SRC_UN.format(T=C.CNAME[t], N=n, OUTS=params, STORES=stores),
        "grid": [1],
        "args": args,
        "expect": {"outputs": expect},
    }


SPECIAL_PAIRS = [(NAN, 1.0), (1.0, NAN), (NAN, NAN), (INF, 1.0), (INF, -INF), (INF, INF),
                 (-INF, 2.0), (2.0, INF), (-0.0, -0.0), (-0.0, 0.0), (0.0, -0.0), (1.0, -1.0),
                 (1.0, 0.0), (-1.0, 0.0), (1.0, -0.0), (0.0, 0.0), (-0.0, 3.0), (INF, 0.0),
                 (-INF, -0.0), (-5.0, 3.0), (5.5, -2.0), (-5.5, 2.0), (-0.0, -1.5), (7.0, 0.5),
                 (-3.0, INF), (3.0, -INF), (0.0, INF), (-0.0, -INF), (1.5, 1.5), (-1.5, -1.5),
                 (6.0, -3.0), (-6.0, 3.0)]


def special_cases():
    cs = []
    fns = {"+": C.f_add, "-": C.f_sub, "*": C.f_mul, "/": C.f_div, "%": C.f_fmod}
    for t in C.FLOATS:
        for op in ["+", "-", "*", "/", "%"]:
            fn = fns[op]
            cs.append(binary("%s_%s_nan_inf_signed_zero" % (C.SHORT[t], OPN[op]), t,
                             "x %s y" % op, lambda x, y, fn=fn, t=t: fn(x, y, t), SPECIAL_PAIRS,
                             ["float.special", "op." + OPN[op]] +
                             (["op.fmod"] if op == "%" else []),
                             "IEEE specials through %s%s" % (op, " (C fmod)" if op == "%" else "")))
    return cs


MINMAX_PAIRS = [(NAN, 1.0), (1.0, NAN), (NAN, NAN), (-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0),
                (0.0, 0.0), (-INF, 1.0), (INF, NAN), (NAN, -INF), (2.0, 3.0), (-2.0, -3.0),
                (1.0, 1.0), (INF, -INF), (-1.5, NAN), (0.5, -0.0)]


def minmax_cases():
    cs = []
    for t in C.FLOATS:
        cs.append(binary("%s_max_is_maxnum" % C.SHORT[t], t, "max(x, y)", C.f_max, MINMAX_PAIRS,
                         ["float.special", "op.max", "float.maxnum"],
                         "max returns the non-NaN operand; max(-0.0, +0.0) == +0.0"))
        cs.append(binary("%s_min_is_minnum" % C.SHORT[t], t, "min(x, y)", C.f_min, MINMAX_PAIRS,
                         ["float.special", "op.min", "float.maxnum"],
                         "min returns the non-NaN operand; min(-0.0, +0.0) == -0.0"))
    return cs


SRC_CMP = """__global__ void k({T} *X, {T} *Y, bool *LT, bool *LE, bool *GT, bool *GE, bool *EQ, bool *NE) {{
  int i[8] = 0 ... 8;
  {T} x[8] = *(X + i);
  {T} y[8] = *(Y + i);
  *(LT + i) = x < y;
  *(LE + i) = x <= y;
  *(GT + i) = x > y;
  *(GE + i) = x >= y;
  *(EQ + i) = x == y;
  *(NE + i) = x != y;
}}
"""


def compare_cases():
    cs = []
    pairs = [(NAN, 1.0), (1.0, NAN), (NAN, NAN), (-0.0, 0.0), (INF, INF), (-INF, INF),
             (NAN, INF), (1.0, 2.0)]
    names = ["LT", "LE", "GT", "GE", "EQ", "NE"]
    for t in C.FLOATS:
        args = [C.buf("X", t, [p[0] for p in pairs]), C.buf("Y", t, [p[1] for p in pairs])]
        args += [C.zeros(n, "bool", 8) for n in names]
        outs = {n: C.out([C.compare(op, x, y) for x, y in pairs], "bool")
                for n, op in zip(names, C.CMP_OPS)}
        cs.append({
            "name": "%s_compare_nan_is_unordered" % C.SHORT[t],
            "description": "comparisons with NaN are false, except != which is true; -0 == +0",
            "features": ["floats", "float.special", "comparison", "op.lt", "op.le", "op.gt",
                         "op.ge", "op.eq", "op.ne"] + C.dtype_features(t, "bool"),
            "source": SRC_CMP.format(T=C.CNAME[t]),
            "grid": [1],
            "args": args,
            "expect": {"outputs": outs},
        })
    return cs


def negation_cases():
    cs = []
    for t in C.FLOATS:
        xs = [0.0, -0.0, INF, -INF, 1.5, C.min_subnormal(t), C.max_finite(t), -2.0]
        cs.append(unary("%s_neg_flips_sign_bit" % C.SHORT[t], t, xs,
                        [("Z", t, "-x", lambda x: -x),
                         ("W", t, "0 - x", lambda x, t=t: C.f_sub(0.0, x, t))],
                        ["float.special", "float.signed_zero", "op.neg"],
                        "-x flips the sign bit (-(+0.0) is -0.0); 0 - x gives +0.0 for both zeros"))
    return cs


def subnormal_cases():
    cs = []
    for t in C.FLOATS:
        s, m = C.min_subnormal(t), C.min_normal(t)
        big = C.fround(m - s, t)  # the largest subnormal
        pairs = [(s, 1.0), (m, 0.5), (s, 0.5), (3 * s, 0.5), (m, 0.25), (big, 2.0), (s, -1.0),
                 (s, 2.0), (m, 1.0 / 1024), (-m, 0.5), (s, s), (5 * s, 0.5)]
        cs.append(binary("%s_mul_keeps_subnormals" % C.SHORT[t], t, "x * y",
                         lambda x, y, t=t: C.f_mul(x, y, t), pairs,
                         ["float.subnormal", "op.mul"],
                         "no flush to zero: products in the subnormal range round to nearest even"))
        pairs = [(s, s), (m, -s), (s, -s), (big, s), (-s, 0.0), (m, -m), (3 * s, -s), (-0.0, s)]
        cs.append(binary("%s_add_keeps_subnormals" % C.SHORT[t], t, "x + y",
                         lambda x, y, t=t: C.f_add(x, y, t), pairs,
                         ["float.subnormal", "op.add"], "sums of subnormals are exact"))
        pairs = [(m, 2.0), (s, 2.0), (3 * s, 2.0), (m, 1024.0), (s, -4.0), (big, 3.0), (1.0, C.max_finite(t)),
                 (-s, 0.5)]
        cs.append(binary("%s_div_keeps_subnormals" % C.SHORT[t], t, "x / y",
                         lambda x, y, t=t: C.f_div(x, y, t), pairs,
                         ["float.subnormal", "op.div"], "quotients in the subnormal range"))
    return cs


def fma_cases():
    cs = []
    for t in C.FLOATS:
        p = C.FORMAT[t][0]
        h = (p + 1) // 2
        a = 1.0 + 2.0 ** -h
        mx = C.max_finite(t)
        triples = [(a, a, -1.0), (a, -a, 1.0), (mx, 2.0, -mx), (-mx, 2.0, mx), (2.0, 3.0, 4.0),
                   (INF, 0.0, 1.0), (-0.0, 1.0, -0.0), (0.0, -1.0, 0.0), (mx, 2.0, -INF),
                   (NAN, 1.0, 1.0), (1.0, 1.0, NAN), (INF, 1.0, -INF), (C.min_normal(t), 0.5, 0.0),
                   (a, a, -(1.0 + 2.0 ** (1 - h))), (3.0, 1.0 / 3, -1.0), (0.1, 10.0, -1.0)]
        triples = [tuple(C.fround(v, t) for v in tr) for tr in triples]
        want = [C.f_fma(x, y, z, t) for x, y, z in triples]
        n = len(triples)
        src = ("__global__ void k({T} *X, {T} *Y, {T} *W, {T} *Z) {{\n  int i[{N}] = 0 ... {N};\n"
               "  {T} x[{N}] = *(X + i);\n  {T} y[{N}] = *(Y + i);\n  {T} w[{N}] = *(W + i);\n"
               "  *(Z + i) = fma(x, y, w);\n}}\n").format(T=C.CNAME[t], N=n)
        cs.append({
            "name": "%s_fma_rounds_once" % C.SHORT[t],
            "description": "fma(a, b, c) rounds a * b + c once: (1 + 2^-%d)^2 - 1 keeps its low "
                           "bit, max * 2 - max does not overflow" % h,
            "features": ["floats", "math.fma", "float.rounding"] + C.dtype_features(t),
            "source": src,
            "grid": [1],
            "args": [C.buf("X", t, [v[0] for v in triples]), C.buf("Y", t, [v[1] for v in triples]),
                     C.buf("W", t, [v[2] for v in triples]), C.zeros("Z", t, n)],
            "expect": {"outputs": {"Z": C.out(want, t)}},
        })
        # x * y + w is two operations, each rounded: no contraction into an fma (Triton
        # contracts by default, enable_fp_fusion; LLVM's fp-contract).
        triples = [(a, a, -1.0), (a, -a, 1.0), (3.0, 1.0 / 3, -1.0), (0.1, 10.0, -1.0),
                   (a, a, -(1.0 + 2.0 ** (1 - h))), (1.0 / 3, 3.0, -1.0), (0.7, 0.7, -0.49),
                   (1.1, 1.1, -1.21)]
        triples = [tuple(C.fround(v, t) for v in tr) for tr in triples]
        want = [C.f_add(C.f_mul(x, y, t), z, t) for x, y, z in triples]
        n = len(triples)
        src = ("__global__ void k({T} *X, {T} *Y, {T} *W, {T} *Z) {{\n  int i[{N}] = 0 ... {N};\n"
               "  {T} x[{N}] = *(X + i);\n  {T} y[{N}] = *(Y + i);\n  {T} w[{N}] = *(W + i);\n"
               "  *(Z + i) = x * y + w;\n}}\n").format(T=C.CNAME[t], N=n)
        cs.append({
            "name": "%s_mul_add_rounds_twice" % C.SHORT[t],
            "description": "x * y + w rounds the product, then the sum (no fma contraction): "
                           "(1 + 2^-%d)^2 - 1 loses its low bit" % h,
            "features": ["floats", "op.mul", "op.add", "float.rounding"] + C.dtype_features(t),
            "source": src,
            "grid": [1],
            "args": [C.buf("X", t, [v[0] for v in triples]), C.buf("Y", t, [v[1] for v in triples]),
                     C.buf("W", t, [v[2] for v in triples]), C.zeros("Z", t, n)],
            "expect": {"outputs": {"Z": C.out(want, t)}},
        })
    return cs


def rounding_cases():
    cs = []
    for t in C.FLOATS:
        p = C.FORMAT[t][0]
        big = 2.0 ** p  # adding 1 is a tie that rounds to even
        pairs = [(big, 1.0), (big + 2, 1.0), (1.0, 2.0 ** -p), (1.0, 3 * 2.0 ** -p), (-big, -1.0),
                 (1.0, 2.0 ** -(p + 1)), (big, 3.0), (0.1, 0.2)]
        cs.append(binary("%s_add_chain_rounds_each_step" % C.SHORT[t], t, "x + y + y",
                         lambda x, y, t=t: C.f_add(C.f_add(x, y, t), y, t), pairs,
                         ["float.rounding", "op.add"],
                         "each + is rounded to the type: 2^%d + 1 + 1 == 2^%d" % (p, p)))
        pairs = [(1.0, 3.0), (2.0, 3.0), (1.0, 10.0), (-7.0, 3.0), (1.0, 7.0), (22.0, 7.0),
                 (C.max_finite(t), 0.5), (1.0, 1.0 + 2.0 ** (1 - p))]
        cs.append(binary("%s_div_correctly_rounded" % C.SHORT[t], t, "x / y",
                         lambda x, y, t=t: C.f_div(x, y, t), pairs,
                         ["float.rounding", "op.div"], "x / y rounded once to the type"))
        a = 1.0 + 2.0 ** (1 - p)
        pairs = [(a, a), (a, -a), (1.0 / 3, 3.0), (0.1, 0.1), (C.max_finite(t), 2.0),
                 (1.0 + 2.0 ** -((p + 1) // 2), 1.0 + 2.0 ** -((p + 1) // 2)), (1.5, 1.5),
                 (-C.max_finite(t), 1.0 + 2.0 ** (1 - p))]
        cs.append(binary("%s_mul_correctly_rounded" % C.SHORT[t], t, "x * y",
                         lambda x, y, t=t: C.f_mul(x, y, t), pairs,
                         ["float.rounding", "op.mul"], "x * y rounded once to the type; "
                                                       "overflow gives inf"))
        xs = [2.0, 3.0, 0.5, -0.0, -1.0, INF, C.min_subnormal(t), C.max_finite(t), 10.0, 0.0,
              C.min_normal(t), 1.0 + 2.0 ** (1 - p), NAN, -INF, 1e-3, 1.0 / 3]
        cs.append(unary("%s_sqrt_correctly_rounded" % C.SHORT[t], t, xs,
                        [("Z", t, "sqrt(x)", lambda x, t=t: C.f_sqrt(x, t))],
                        ["float.rounding", "math.sqrt", "float.special"],
                        "sqrt is correctly rounded; sqrt(-0.0) == -0.0; sqrt(-1) is NaN"))
    # The example of docs/semantics.md section 6.
    cs.append(binary("f16_2048_plus_1_is_2048", "float16", "x + y",
                     lambda x, y: C.f_add(x, y, "float16"), [(2048.0, 1.0), (2048.0, 3.0),
                                                             (2050.0, 1.0), (1.0, 2048.0)],
                     ["float.rounding", "op.add"], "(half)2048 + (half)1 == 2048 (tie to even)"))
    cs.append(binary("bf16_256_plus_1_is_256", "bfloat16", "x + y",
                     lambda x, y: C.f_add(x, y, "bfloat16"), [(256.0, 1.0), (256.0, 3.0),
                                                              (258.0, 1.0), (1.0, 256.0)],
                     ["float.rounding", "op.add"], "bf16 sums are rounded to bf16"))
    return cs


def fmod_cases():
    """fmod is exact even when the quotient is huge."""
    cs = []
    for t in C.FLOATS:
        mx = C.max_finite(t)
        pairs = [(mx, 3.0), (mx, 0.1), (-mx, 7.0), (mx, C.min_subnormal(t)),
                 (1e30, 3.0), (C.min_normal(t), C.min_subnormal(t) * 3), (123.5, 0.75),
                 (-1e30, 0.1)]
        cs.append(binary("%s_fmod_exact_large_quotient" % C.SHORT[t], t, "x % y",
                         lambda x, y, t=t: C.f_fmod(x, y, t), pairs,
                         ["op.mod", "op.fmod", "float.rounding"],
                         "x % y is C fmod, exact even for quotients beyond 2^p"))
    return cs


def misc_math_cases():
    cs = []
    for t in C.FLOATS:
        xs = [-0.0, 0.0, -0.5, 0.5, -INF, INF, NAN, -1.5, 2.5, -C.min_subnormal(t), 1.0, -1.0,
              C.max_finite(t), -2.75, 0.25, -3.0]

        def fl(x):
            if math.isnan(x) or math.isinf(x) or x == 0:
                return x
            r = float(math.floor(x))
            return -0.0 if r == 0 and x < 0 else r

        def ce(x):
            if math.isnan(x) or math.isinf(x) or x == 0:
                return x
            r = float(math.ceil(x))
            return -0.0 if r == 0 and x < 0 else r

        cs.append(unary("%s_abs_floor_ceil_specials" % C.SHORT[t], t, xs,
                        [("A", t, "abs(x)", lambda x: abs(x) if not math.isnan(x) else x),
                         ("F", t, "floor(x)", fl), ("Cc", t, "ceil(x)", ce)],
                        ["float.special", "float.signed_zero", "math.abs", "math.floor",
                         "math.ceil"],
                        "abs clears the sign bit; floor(-0.0) == -0.0; ceil(-0.5) == -0.0"))
    return cs


def exp2_exact(x, t):
    """2^x rounded to t: exact for integral x (ldexp), else through binary64's pow (error
    below a binary64 ulp; the cases' ulp tolerance covers a double rounding)."""
    if math.isnan(x):
        return x
    if x == -INF:
        return 0.0
    if x == INF or x > 1100:
        return INF
    if x < -1100:
        return 0.0
    if x == math.floor(x):
        return C.fround(math.ldexp(1.0, int(x)), t)
    return C.fround(2.0 ** x, t)


def exp2_tile_cases():
    """exp2 of a whole tile (8 values a thread on 4 warps) around -126, where fp32 results turn
    subnormal (libdevice's exp2f, FTZ off, handles them around a flush-to-zero MUFU.EX2:
    docs/gpu-numerics.md): one case keeps every value at or above -126 (-126 itself, -0,
    subnormal inputs, NaN, overflow to inf), one puts values below -126 in a few threads only
    (-126.5 .. -150, -inf: subnormal results and zero)."""
    cs = []
    n = 1024
    for t in ["float32", "float16", "bfloat16"]:
        sub = C.min_subnormal(t)
        base = [((k * 37) % 97 - 60) * 0.375 for k in range(n)]  # -22.5 .. 13.5
        fast = list(base)
        for k, v in enumerate([-126.0, -125.5, -0.0, 0.0, sub, -sub, NAN, 127.5, 128.0, -100.25,
                               0.1, -1e-3, 3.0, -64.0, 15.0, -15.0]):
            fast[k * 61 % n] = v
        slow = list(fast)
        below = [-126.5, -127.0, -130.25, -140.0, -149.0, -149.5, -150.0, -200.0, -INF]
        for k, v in enumerate(below):
            slow[(k * 113 + 5) % n] = v
        ulp = 3 if t == "float32" else 2
        for name, xs, what in [("fast", fast, "every value at or above -126"),
                               ("below_126", slow, "values below -126 in a few threads")]:
            c = unary("%s_exp2_tile_%s" % (C.SHORT[t], name), t, xs,
                      [("Z", t, "exp2(x)", lambda x, t=t: exp2_exact(x, t))],
                      ["math.exp2", "float.subnormal", "float.special"],
                      "exp2 of a 1024-element tile, %s (subnormal results: "
                      "docs/gpu-numerics.md)" % what)
            c["expect"]["outputs"]["Z"]["compare"] = {"ulp": ulp}
            cs.append(c)
    return cs


def exp2_max_cases():
    """exp2(max(x, c)) (option exp2-range): with c >= -126 the operand is never below -126
    nor NaN, and the GPU computes exp2 with `ex2.approx.ftz.f32` alone; with c = -127 it
    keeps libdevice's exp2f, whose results below 2^-126 are subnormal. x spans -inf, values
    below -126, NaN (max gives c), -126 itself and the exp2_tile cases' range."""
    cs = []
    n = 1024
    for t in ["float32", "float16", "bfloat16"]:
        xs = [((k * 37) % 97 - 60) * 0.375 for k in range(n)]  # -22.5 .. 13.5
        for k, v in enumerate([-126.0, -125.5, -126.5, -127.0, -127.5, -130.25, -149.0,
                               -150.0, -200.0, -INF, NAN, -0.0, 0.0, 127.5, 128.0, INF,
                               C.min_subnormal(t), -C.min_subnormal(t), -64.0, 15.0]):
            xs[(k * 113 + 5) % n] = v
        ulp = 3 if t == "float32" else 2
        outs = []
        for on, c in [("Z", -126.0), ("Y", -125.5), ("W", -127.0)]:
            outs.append((on, t, "exp2(max(x, (%s)%r))" % (C.CNAME[t], c),
                         lambda x, t=t, c=c: exp2_exact(c if math.isnan(x) else max(x, c), t)))
        cs_t = unary("%s_exp2_of_max" % C.SHORT[t], t, xs, outs,
                     ["math.exp2", "math.max", "float.subnormal", "float.special"],
                     "exp2(max(x, c)) for c = -126, -125.5 (the GPU's exponent instruction "
                     "alone, option exp2-range) and -127 (libdevice's exp2f: 2^-127 is "
                     "subnormal); NaN x gives c")
        for on, _, _, _ in outs:
            cs_t["expect"]["outputs"][on]["compare"] = {"ulp": ulp}
        cs.append(cs_t)
    return cs


SRC_ROWDIV = """__global__ void k(float *X, float *D, float *Z) {{
  int r[{M}] = 0 ... {M};
  int c[{N}] = 0 ... {N};
  float x[{M}, {N}] = *(X + r[:, newaxis] * {N} + c[newaxis, :]);
  float d[{M}] = *(D + r);
  *(Z + r[:, newaxis] * {N} + c[newaxis, :]) = x / d[:, newaxis];
}}
"""


def shared_divisor_cases():
    """x / d[:, newaxis] on fp32: each thread divides several elements by one row's d, which
    the GPU backend computes with d's reciprocal and two fused corrections while every
    operand of the thread's group is in [2^-63, 2^63) in magnitude, and with div.rn
    otherwise (docs/gpu-numerics.md). Both must give the correctly rounded quotient."""
    import random
    rng = random.Random(20261205)
    M, N = 32, 64
    t = "float32"

    def sig(hard):
        if hard == 0:
            return 1 + rng.getrandbits(23) / 2.0 ** 23
        if hard == 1:  # significands near 2
            return 2 - (1 + rng.getrandbits(8)) / 2.0 ** 23
        if hard == 2:  # near 1
            return 1 + rng.getrandbits(8) / 2.0 ** 23
        return 1.5 + (rng.getrandbits(8) - 128) / 2.0 ** 23

    def normal(lo=-63, hi=62):
        v = math.ldexp(sig(rng.randrange(4)), rng.randint(lo, hi))
        return -v if rng.random() < 0.5 else v

    top = math.ldexp(2 - 2.0 ** -23, 62)  # the largest float below 2^63
    corners = [2.0 ** -63, -2.0 ** -63, top, -top, 1.0, -1.0]
    cs = []
    # Every operand in the fast path's range, the corners included.
    d = [corners[i % len(corners)] if i < 12 else normal() for i in range(M)]
    x = []
    for i in range(M):
        for j in range(N):
            if j < 6 and i % 3 == 0:
                x.append(corners[j])
            elif j < 8:
                x.append(normal(-63, -60) if j == 6 else normal(59, 62))
            else:
                x.append(normal())
    cs.append(("f32_div_row_shared_divisor_in_range", x, d,
               "x / d[:, newaxis] with every operand in [2^-63, 2^63): significands near 1, "
               "1.5 and 2, quotients down to 2^-126 and up to 2^126"))
    # Specials in some rows and some divisors: those groups take div.rn.
    sub = 2.0 ** -140
    specials = [0.0, -0.0, INF, -INF, NAN, sub, -sub, 2.0 ** -64, 2.0 ** 63, -2.0 ** 100,
                2.0 ** -100, C.max_finite(t), C.min_normal(t)]
    d2 = []
    for i in range(M):
        d2.append(specials[i % len(specials)] if i % 4 == 1 else normal())
    x2 = []
    for i in range(M):
        for j in range(N):
            if i % 4 == 2 and j % 5 == 0:
                x2.append(specials[(i + j) % len(specials)])
            else:
                x2.append(normal() if i % 8 != 3 else normal(-80, 80))
    cs.append(("f32_div_row_shared_divisor_specials", x2, d2,
               "x / d[:, newaxis] with zeros, subnormals, infinities, NaN and values outside "
               "[2^-63, 2^63) in some rows of x and some d: their threads' quotients go "
               "through div.rn, the others through the reciprocal"))
    out = []
    for name, xs, ds, note in cs:
        xs = [C.fround(v, t) for v in xs]
        ds = [C.fround(v, t) for v in ds]
        want = [C.f_div(xs[k], ds[k // N], t) for k in range(M * N)]
        out.append({
            "name": name,
            "description": note,
            "features": ["floats", "op.div", "float.special", "float.subnormal"] +
                        C.dtype_features(t),
            "source": SRC_ROWDIV.format(M=M, N=N),
            "grid": [1],
            "args": [C.buf("X", t, xs), C.buf("D", t, ds), C.zeros("Z", t, M * N)],
            "expect": {"outputs": {"Z": C.out(want, t)}},
        })
    return out


def copy_cases():
    """Loads and stores move bits unchanged: subnormals, -0.0, infinities."""
    cs = []
    for t in C.FLOATS:
        s, m = C.min_subnormal(t), C.min_normal(t)
        xs = [s, -s, m - s if C.is_representable(m - s, t) else s, -0.0, INF, -INF, m,
              C.max_finite(t)]
        cs.append(unary("%s_copy_keeps_subnormal_bits" % C.SHORT[t], t, xs,
                        [("Z", t, "x", lambda x: x)], ["float.subnormal", "memory"],
                        "a load and a store keep subnormals and signed zeros bit for bit"))
    return cs


def main():
    cases = special_cases() + minmax_cases() + compare_cases() + negation_cases() + \
        subnormal_cases() + copy_cases() + fma_cases() + fmod_cases() + rounding_cases() + misc_math_cases() + exp2_tile_cases() + \
        exp2_max_cases() + shared_divisor_cases()
    C.write_suite("floats.json", "floats",
                  "docs/semantics.md rule 6: IEEE specials, maxNum, NaN comparisons, sign of "
                  "zero, subnormals, fma, correct rounding for half, bf16, float and double. "
                  "Generated by conformance/gen/floats.py.", cases)


if __name__ == "__main__":
    main()
