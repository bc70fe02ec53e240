"""Generate conformance/cases/conversions.json.

docs/semantics.md rules 6, 7 and 13:

* every ordered dtype pair (13 x 13) through an explicit cast kernel `(D)x`, with
  values that exercise the rule for that pair: integer wrap (300 -> int8 44), sign
  and zero extension, to-bool as != 0 (256 -> true, NaN -> true), round-to-nearest-
  even ties for every narrowing to a float (int -> half: 2049 -> 2048, 2051 -> 2052;
  double -> float; float/double -> half/bf16; half <-> bf16), overflow to inf,
  subnormals, signed zeros, float -> int truncation toward zero in range;
* float -> int traps (float_to_int_out_of_range) for NaN, infinities and values
  whose truncation does not fit;
* implicit conversions on initialisation, assignment and store; bitcast<T>.

Run: python3 conformance/gen/conversions.py
"""

import math
import struct
from fractions import Fraction

import common as C

N = 32
NAN, INF = math.nan, math.inf

SRC_CAST = """__global__ void k({S} *X, {D} *Z) {{
  int i[{N}] = 0 ... {N};
  {S} x[{N}] = *(X + i);
  *(Z + i) = ({D})x;
}}
"""

GENERIC_INTS = [0, 1, -1, 2, -2, 127, -128, 128, 255, 256, 300, -129, 32767, -32768, 32768,
                65535, 65536, 2 ** 31 - 1, -2 ** 31, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 63 - 1,
                -2 ** 63, 2 ** 64 - 1, 100, -100, 7]


def float_ties(d):
    """Values that test rounding into float format d (exact rationals as floats)."""
    p, emax = C.FORMAT[d]
    s, mx = C.min_subnormal(d), C.max_finite(d)
    ulp_max = 2.0 ** (emax - p + 1)
    return [1.0 + 2.0 ** -p,                     # tie: rounds down to 1 (even)
            1.0 + 3 * 2.0 ** -p,                 # tie: rounds up to 1 + 2^(2-p)
            1.0 + 2.0 ** -p + 2.0 ** -(p + 6),   # just above the tie: rounds up
            1.0 + 2.0 ** -p + 2.0 ** -40,        # just above: no double rounding via float
            1.0 + 2.0 ** -p + 2.0 ** -23,
            -(1.0 + 3 * 2.0 ** -p),
            mx, mx + ulp_max / 2 * 0.5,          # rounds back to max
            mx + ulp_max / 2,                    # tie at the top: rounds to inf
            -(mx + ulp_max),                     # overflow: -inf
            s, s / 2, 3 * s / 2, s * 0.75,       # subnormal ties
            C.min_normal(d), C.min_normal(d) - s,
            1.0 / 3, 0.1]


def int_targets(d):
    lo, hi = C.int_range(d)
    return [hi, hi + 1, lo, lo - 1, -1, 300, 256, hi * 2 + 1, hi // 2 + 1]


def float_target_ints(d):
    p = C.FORMAT[d][0]
    two_p = 2 ** p
    vals = [two_p + 1, two_p + 3, -(two_p + 1), two_p - 1, 2 ** (p + 1) + 2, 2 ** (p + 1) + 6]
    # Just above a tie by 1: converting through binary64 or float first loses the 1 and
    # then rounds the tie to even (double rounding); a direct conversion rounds up.
    for k in (30, 62, 63):
        vals += [2 ** k + 2 ** (k - p) + 1, -(2 ** k + 2 ** (k - p) + 1)]
    if d == "float16":
        vals += [65504, 65519, 65520, 70000, -65520, 2049, 2051]
    if d == "bfloat16":
        vals += [257, 259, 65535]
    vals += [2 ** 31 - 1, 2 ** 63 - 1, 2 ** 64 - 1, -2 ** 63]
    return vals


def representable(v, t):
    """v (int or float) is exactly a value of dtype t."""
    if C.is_float(t):
        if isinstance(v, int):
            try:
                return C.round_exact(Fraction(v), t) == v
            except OverflowError:
                return False
        return C.is_representable(v, t)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v) or v != int(v) or (v == 0 and math.copysign(1, v) < 0):
            return False
        v = int(v)
    lo, hi = C.int_range(t)
    return lo <= v <= hi


def as_src(v, s):
    return float(v) if C.is_float(s) else int(v)


def candidates(s, d):
    """Ordered candidate values of dtype s for the cast s -> d."""
    out = []
    if s == "bool":
        return [0, 1, 1, 0]
    if C.is_int(s):
        if d == "bool":
            pref = [0, 1, 256, -1, 2 ** 32, 2 ** 8, 2 ** 16, C.int_range(s)[0], C.int_range(s)[1], 2]
        elif C.is_int(d):
            pref = int_targets(d)
        else:
            pref = float_target_ints(d)
        for v in pref + GENERIC_INTS:
            if representable(v, s) and v not in out:
                out.append(v)
        return out
    # float source
    if d == "bool":
        pref = [NAN, -0.0, 0.0, C.min_subnormal(s), INF, -INF, 0.5, -1.0, 2.0, -C.min_subnormal(s)]
    elif C.is_int(d):
        lo, hi = C.int_range(d)
        pref = [2.5, -2.5, 0.5, -0.5, -0.0, 0.99, -0.99, float(hi), float(lo), hi + 0.5,
                lo - 0.5, 1e-30, 127.9, -128.9, 255.9, 300.0]
        # the largest value of s below hi + 1 and the smallest above lo - 1: in range
        pref.insert(0, C.largest_below(hi + 1, s))
        pref.insert(1, C.smallest_above(lo - 1, s))
    else:
        pref = [NAN, INF, -INF, -0.0, 0.0, 1.5, -2.75] + float_ties(d)
    for v in pref:
        v = float(v)
        if math.isinf(v) and not (d == "bool" or C.is_float(d)):
            continue
        if not representable(v, s):
            continue
        if C.is_int(d):
            try:
                C.convert(v, s, d)
            except C.Trap:
                continue
        if not any(C.same_value(v, w) for w in out):
            out.append(v)
    return out


def cast_case(s, d):
    vals = candidates(s, d)[:N]
    k = 0
    while len(vals) < N:
        vals.append(vals[k])
        k += 1
    want = [C.convert(v, s, d) for v in vals]
    feats = ["conversions", "conversion.cast"]
    if C.is_float(s) and C.is_float(d) and C.FORMAT[d][0] < C.FORMAT[s][0]:
        feats.append("conversion.float_narrowing")
    if C.is_int(s) and C.is_float(d):
        feats.append("conversion.int_to_float")
    if C.is_float(s) and C.is_int(d):
        feats.append("conversion.float_to_int")
    if C.is_int(s) and C.is_int(d):
        feats.append("conversion.int_to_int")
    if d == "bool":
        feats.append("conversion.to_bool")
    return {
        "name": "cast_%s_to_%s" % (C.SHORT[s], C.SHORT[d]),
        "features": feats + C.dtype_features(s, d),
        "source": SRC_CAST.format(S=C.CNAME[s], D=C.CNAME[d], N=N),
        "grid": [1],
        "args": [C.buf("X", s, vals), C.zeros("Z", d, N)],
        "expect": {"outputs": {"Z": C.out(want, d)}},
    }


def trap_case(name, s, d, bad, note):
    vals = [1.0, 2.0, bad, 0.0]
    for v in vals:
        assert representable(v, s), (name, v)
    try:
        C.convert(bad, s, d)
        raise AssertionError(name + " does not trap")
    except C.Trap as e:
        assert e.kind == "float_to_int_out_of_range"
    return {
        "name": name,
        "description": note,
        "features": ["conversions", "conversion.float_to_int", "trap",
                     "trap.float_to_int_out_of_range"] + C.dtype_features(s, d),
        "source": SRC_CAST.format(S=C.CNAME[s], D=C.CNAME[d], N=4),
        "grid": [1],
        "args": [C.buf("X", s, vals), C.zeros("Z", d, 4)],
        "expect": {"trap": {"kind": "float_to_int_out_of_range"}},
    }


def trap_cases():
    cs = []
    for s in C.FLOATS:
        for d in C.INTS:
            lo, hi = C.int_range(d)
            # the smallest value of s >= hi + 1 (inf when s has none)
            up = C.round_directed(Fraction(hi + 1), s, up=True)
            cs.append(trap_case("cast_%s_to_%s_above_max_traps" % (C.SHORT[s], C.SHORT[d]), s, d,
                                up, "%r does not fit %s" % (up, d)))
            if C.is_signed(d):
                dn = C.round_directed(Fraction(lo - 1), s, up=False)
            else:
                dn = -1.0
            cs.append(trap_case("cast_%s_to_%s_below_min_traps" % (C.SHORT[s], C.SHORT[d]), s, d,
                                dn, "%r does not fit %s (truncation toward zero)" % (dn, d)))
            cs.append(trap_case("cast_%s_to_%s_nan_traps" % (C.SHORT[s], C.SHORT[d]), s, d, NAN,
                                "NaN converted to an integer traps"))
        cs.append(trap_case("cast_%s_to_i32_inf_traps" % C.SHORT[s], s, "int32", INF,
                            "inf converted to an integer traps"))
        cs.append(trap_case("cast_%s_to_u32_neg_inf_traps" % C.SHORT[s], s, "uint32", -INF,
                            "-inf converted to an integer traps"))
    return cs


def implicit_cases():
    """Rule 13: initialisation, assignment and stores convert like casts."""
    cs = []

    def case(name, src, t_in, t_out, xs, note, feats):
        want = [C.convert(C.convert(x, t_in, t_mid), t_mid, t_out) for x, t_mid in
                zip(xs, [MID[name]] * len(xs))]
        cs.append({
            "name": name,
            "description": note,
            "features": ["conversions", "conversion.implicit"] + feats +
            C.dtype_features(t_in, MID[name], t_out),
            "source": src,
            "grid": [1],
            "args": [C.buf("X", t_in, xs), C.zeros("Z", t_out, len(xs))],
            "expect": {"outputs": {"Z": C.out(want, t_out)}},
        })

    MID = {}
    MID["store_int32_into_int8_wraps"] = "int8"
    case("store_int32_into_int8_wraps",
         "__global__ void k(int32 *X, int8 *Z) {\n  int i[4] = 0 ... 4;\n  int32 x[4] = *(X + i);\n"
         "  *(Z + i) = x;\n}\n", "int32", "int8", [300, -129, 127, 65535],
         "a store converts to the pointee type: 300 -> 44", ["memory.store"])
    MID["store_float_into_int32_truncates"] = "int32"
    case("store_float_into_int32_truncates",
         "__global__ void k(float *X, int32 *Z) {\n  int i[4] = 0 ... 4;\n  float x[4] = *(X + i);\n"
         "  *(Z + i) = x;\n}\n", "float32", "int32", [2.5, -2.5, -0.5, 1e9],
         "a store of float into int32 truncates toward zero", ["memory.store"])
    MID["store_double_into_half_rounds_even"] = "float16"
    case("store_double_into_half_rounds_even",
         "__global__ void k(double *X, half *Z) {\n  int i[4] = 0 ... 4;\n  double x[4] = *(X + i);\n"
         "  *(Z + i) = x;\n}\n", "float64", "float16", [2049.0, 2051.0, 65520.0, 1.0 + 2.0 ** -11],
         "a store of double into half rounds to nearest even", ["memory.store"])
    MID["init_uint8_from_int32_wraps"] = "uint8"
    case("init_uint8_from_int32_wraps",
         "__global__ void k(int32 *X, int32 *Z) {\n  int i[4] = 0 ... 4;\n  int32 x[4] = *(X + i);\n"
         "  uint8 y[4] = x;\n  *(Z + i) = y;\n}\n", "int32", "int32", [-1, 256, 300, 255],
         "initialising a uint8 tile wraps; storing it back zero-extends", ["declaration"])
    MID["init_bool_from_int_is_nonzero"] = "bool"
    case("init_bool_from_int_is_nonzero",
         "__global__ void k(int32 *X, int32 *Z) {\n  int i[4] = 0 ... 4;\n  int32 x[4] = *(X + i);\n"
         "  bool b[4] = x;\n  *(Z + i) = b;\n}\n", "int32", "int32", [256, 0, -1, 2],
         "initialising a bool tile is != 0 (256 -> true)", ["declaration", "conversion.to_bool"])
    MID["assign_int16_from_float_truncates"] = "int16"
    case("assign_int16_from_float_truncates",
         "__global__ void k(float *X, int32 *Z) {\n  int i[4] = 0 ... 4;\n  float x[4] = *(X + i);\n"
         "  int16 y[4] = 0;\n  y = x;\n  *(Z + i) = y;\n}\n", "float32", "int32",
         [-3.9, 3.9, 32767.5, -32768.5],
         "assignment converts: float -> int16 truncates toward zero", ["assignment"])
    MID["init_int8_sign_extends"] = "int8"
    case("init_int8_sign_extends",
         "__global__ void k(int8 *X, int64 *Z) {\n  int i[4] = 0 ... 4;\n  int8 x[4] = *(X + i);\n"
         "  int64 y[4] = x;\n  *(Z + i) = y;\n}\n", "int8", "int64", [-1, -128, 127, 0],
         "int8 -> int64 sign-extends", ["declaration"])
    MID["store_uint16_into_int64_zero_extends"] = "uint16"
    case("store_uint16_into_int64_zero_extends",
         "__global__ void k(uint16 *X, int64 *Z) {\n  int i[4] = 0 ... 4;\n  uint16 x[4] = *(X + i);\n"
         "  *(Z + i) = x;\n}\n", "uint16", "int64", [65535, 32768, 1, 0],
         "uint16 -> int64 zero-extends", ["memory.store"])
    MID["store_int8_into_uint32_sign_extends"] = "int8"
    case("store_int8_into_uint32_sign_extends",
         "__global__ void k(int8 *X, uint32 *Z) {\n  int i[4] = 0 ... 4;\n  int8 x[4] = *(X + i);\n"
         "  *(Z + i) = x;\n}\n", "int8", "uint32", [-1, -128, 127, 0],
         "int8 -> uint32 extends by the source's signedness: -1 -> 4294967295", ["memory.store"])
    MID["compound_assign_converts_back"] = "int8"
    return cs


def compound_case():
    xs = [100, 127, -128, 50]
    want = [C.wrap(x + 100, "int8") for x in xs]
    return [{
        "name": "compound_assign_int8_wraps",
        "description": "x += 100 on an int8 tile computes in int8 (the constant takes no part)",
        "features": ["conversions", "conversion.implicit", "assignment.compound"] +
        C.dtype_features("int8"),
        "source": "__global__ void k(int8 *X, int8 *Z) {\n  int i[4] = 0 ... 4;\n"
                  "  int8 x[4] = *(X + i);\n  x += 100;\n  *(Z + i) = x;\n}\n",
        "grid": [1],
        "args": [C.buf("X", "int8", xs), C.zeros("Z", "int8", 4)],
        "expect": {"outputs": {"Z": C.out(want, "int8")}},
    }, {
        "name": "compound_assign_int_plus_float_truncates",
        "description": "y += 0.75 on an int32 tile computes in float and converts back "
                       "(truncation toward zero)",
        "features": ["conversions", "conversion.implicit", "assignment.compound"] +
        C.dtype_features("int32"),
        "source": "__global__ void k(int32 *X, int32 *Z) {\n  int i[4] = 0 ... 4;\n"
                  "  int32 y[4] = *(X + i);\n  y += 0.75;\n  *(Z + i) = y;\n}\n",
        "grid": [1],
        "args": [C.buf("X", "int32", [1, -1, 0, -2]), C.zeros("Z", "int32", 4)],
        "expect": {"outputs": {"Z": C.out([math.trunc(C.f_add(float(v), 0.75, "float32"))
                                           for v in [1, -1, 0, -2]], "int32")}},
    }]


def bits_of(v, t):
    if t == "float16":
        return C.half_bits(v)
    if t == "bfloat16":
        return struct.unpack("<I", struct.pack("<f", v))[0] >> 16  # exact: v is a bf16 value
    if t == "float32":
        return struct.unpack("<I", struct.pack("<f", v))[0]
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def bitcast_cases():
    cs = []
    for f, i in [("float32", "int32"), ("float32", "uint32"), ("float16", "int16"),
                 ("float16", "uint16"), ("bfloat16", "int16"), ("bfloat16", "uint16"),
                 ("float64", "int64"), ("float64", "uint64")]:
        xs = [1.0, -0.0, INF, -2.5, C.min_subnormal(f), C.max_finite(f), 0.1, -INF]
        xs = [C.fround(x, f) for x in xs]
        want = [C.wrap(bits_of(x, f), i) for x in xs]
        cs.append({
            "name": "bitcast_%s_to_%s" % (C.SHORT[f], C.SHORT[i]),
            "description": "bitcast<T> reinterprets the bits (no conversion)",
            "features": ["conversions", "bitcast"] + C.dtype_features(f, i),
            "source": ("__global__ void k({F} *X, {I} *Z) {{\n  int i[8] = 0 ... 8;\n"
                       "  {F} x[8] = *(X + i);\n  *(Z + i) = bitcast<{I}>(x);\n}}\n").format(
                           F=C.CNAME[f], I=C.CNAME[i]),
            "grid": [1],
            "args": [C.buf("X", f, xs), C.zeros("Z", i, 8)],
            "expect": {"outputs": {"Z": C.out(want, i)}},
        })
        # and back: the integer bits of a NaN payload survive
        ints = want[:]
        cs.append({
            "name": "bitcast_%s_to_%s" % (C.SHORT[i], C.SHORT[f]),
            "description": "bitcast<T> back to the float type gives the same values",
            "features": ["conversions", "bitcast"] + C.dtype_features(i, f),
            "source": ("__global__ void k({I} *X, {F} *Z) {{\n  int i[8] = 0 ... 8;\n"
                       "  {I} x[8] = *(X + i);\n  *(Z + i) = bitcast<{F}>(x);\n}}\n").format(
                           F=C.CNAME[f], I=C.CNAME[i]),
            "grid": [1],
            "args": [C.buf("X", i, ints), C.zeros("Z", f, 8)],
            "expect": {"outputs": {"Z": C.out(xs, f)}},
        })
    return cs


def named_cases():
    """The examples the brief and docs/semantics.md name, as small separate cases."""
    cs = []
    for name, s, d, xs, note in [
            ("int_2049_to_half_is_2048", "int32", "float16", [2049, 2051, 2050, 2053],
             "2049 -> 2048 and 2051 -> 2052 (ties to even)"),
            ("int_300_to_int8_is_44", "int32", "int8", [300, -300, 128, 44],
             "integers wrap to narrower types: 300 -> 44"),
            ("uint8_255_9_and_minus_0_5", "float32", "uint8", [255.9, -0.5, 0.5, 254.5],
             "(uint8)255.9 == 255, (uint8)-0.5 == 0"),
            ("nan_to_bool_is_true", "float32", "bool", [NAN, -0.0, 0.0, 1e-45],
             "to bool is != 0: NaN is true, -0.0 is false"),
            ("f32_to_bf16_rounds_not_truncates", "float32", "bfloat16",
             [1.0 + 2.0 ** -8 + 2.0 ** -20, 1.0 + 3 * 2.0 ** -8, 1.0 + 2.0 ** -8,
              -(1.0 + 2.0 ** -8 + 2.0 ** -9)],
             "float -> bf16 rounds to nearest even (Triton's interpreter truncates)"),
            ("i64_to_f32_rounds_once", "int64", "float32",
             [2 ** 62 + 2 ** 38 + 1, -(2 ** 62 + 2 ** 38 + 1), 2 ** 62 + 2 ** 38, 2 ** 53 + 1],
             "2^62 + 2^38 + 1 rounds up to 2^62 + 2^39 (through double it would tie to 2^62)"),
            ("u64_to_f32_rounds_once", "uint64", "float32",
             [2 ** 63 + 2 ** 39 + 1, 2 ** 64 - 1, 2 ** 63 + 2 ** 39, 2 ** 63 + 2 ** 40 + 2 ** 39],
             "uint64 -> float rounds once"),
            ("i32_to_bf16_rounds_once", "int32", "bfloat16",
             [2 ** 30 + 2 ** 22 + 1, 2 ** 30 + 2 ** 22, -(2 ** 30 + 2 ** 22 + 1), 257],
             "2^30 + 2^22 + 1 -> bf16 rounds up (through float it would tie to 2^30)"),
            ("i64_to_bf16_rounds_once", "int64", "bfloat16",
             [2 ** 60 + 2 ** 52 + 1, 2 ** 60 + 2 ** 52, 2 ** 60 + 2 ** 53 + 2 ** 52, 259],
             "int64 -> bf16 rounds once"),
            ("f64_to_bf16_rounds_once", "float64", "bfloat16",
             [1.0 + 2.0 ** -8 + 2.0 ** -40, 1.0 + 2.0 ** -8, -(1.0 + 2.0 ** -8 + 2.0 ** -40),
              1.0 + 3 * 2.0 ** -8],
             "1 + 2^-8 + 2^-40 -> bf16 rounds up (through float it would tie to 1)"),
            ("f64_to_f16_rounds_once", "float64", "float16",
             [1.0 + 2.0 ** -11 + 2.0 ** -40, 1.0 + 2.0 ** -11, 2049.0 + 2.0 ** -30, 2051.0],
             "1 + 2^-11 + 2^-40 -> half rounds up (through float it would tie to 1)"),
            ("f64_to_f32_ties_to_even", "float64", "float32",
             [1.0 + 2.0 ** -24, 1.0 + 3 * 2.0 ** -24, 16777217.0, 16777219.0],
             "double -> float ties round to even")]:
        want = [C.convert(C.fround(x, s) if C.is_float(s) else x, s, d) for x in xs]
        xs = [C.fround(x, s) if C.is_float(s) else x for x in xs]
        cs.append({
            "name": name,
            "description": note,
            "features": ["conversions", "conversion.cast"] + C.dtype_features(s, d),
            "source": SRC_CAST.format(S=C.CNAME[s], D=C.CNAME[d], N=4),
            "grid": [1],
            "args": [C.buf("X", s, xs), C.zeros("Z", d, 4)],
            "expect": {"outputs": {"Z": C.out(want, d)}},
        })
    return cs


def main():
    cases = []
    for s in C.DTYPES:
        for d in C.DTYPES:
            cases.append(cast_case(s, d))
    cases += named_cases() + implicit_cases() + compound_case() + bitcast_cases() + trap_cases()
    C.write_suite("conversions.json", "conversions",
                  "docs/semantics.md rules 6, 7 and 13: every dtype pair through a cast, "
                  "rounding ties, wrap, extension, to-bool, float-to-int traps, implicit "
                  "conversions and bitcast. Generated by conformance/gen/conversions.py.", cases)


if __name__ == "__main__":
    main()
