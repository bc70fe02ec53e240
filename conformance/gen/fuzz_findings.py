#!/usr/bin/env python3
"""Generates conformance/cases/fuzz-findings.json: the four findings of the GPU fuzz campaigns
of 2026-11-26 and 2026-11-28 (seeds 20261126 and 20261128), each as its reduced kernel with the
expected outputs computed here from the language's rules (docs/semantics.md), not by the
interpreter.

- Kernels 896 and 2615: `min(min(a, -b), c)` gave `min(a, b, c)` on the GPU: ptxas fuses the
  two mins into one VIMNMX3 and drops the negation (docs/upstream/ptxas-vimnmx3-neg.md).
- Kernel 13157: rsqrt of the smallest subnormals, through a loop's `max` accumulator. The GPU
  does not flush them (2^-149 -> 2^74.5, within rsqrtf's 2 ULPs); the finding was the
  generator's: the ULP-bounded value reached `%`. The case checks the value before it.
- Kernel 9893: `acc = acc + (sin(x) + (v <= x))` in a loop; the finding was the generator's
  (the inexact sum, cancelled and truncated to an integer). The case checks the sum.
- Seeds 20261207/20261208 (campaigns of 2026-11-27): kernel 109221, `(a - b) + (a - (p ? b :
  c))` in fp16 gave 4 instead of 2: ptxas pairs the two subtractions into one HADD2 after a
  predicated in-place select (docs/upstream/ptxas-hadd2-select.md), with the pattern itself on
  fp16/bf16 tiles; kernel 23167, a bool loop accumulator stored under an unsigned comparison
  of `bool - uint32` (the store was skipped on an H100 with the driver JIT); kernel 121146,
  `min(1 - x, 0)` to f64 (the difference under a min that the VIMNMX workaround hides).
- Seed 20261310 (2026-11-27), kernel 58417: `umulhi(r1, x0) * x1` in a do-while loop gave
  -1998779392 instead of 0: ptxas rewrites hi(x * y) * c in a loop as x * hi(y * c)
  (docs/upstream/ptxas-mul-hi-loop.md), with the pattern itself for int32, uint32 and the
  high word of an int64 product.
- Seed 20261320 (2026-11-27): kernels 35709 and 154083, `(-x) >> 1` (ptxas folds it into a
  LEA.HI with a negated operand, docs/upstream/ptxas-lea-hi-neg.md); kernel 88674,
  `(p ? i : 0) & x` in an unrolled loop and its remainder loop (ptxas computes the LOP3 mask in
  the first loop only, docs/upstream/ptxas-lop3-mask-loop.md); kernel 156135, an int8 from a
  float used around a loop (ptxas re-reads a stale upper half, docs/upstream/ptxas-f2i16-remat.md).
- Seed 20261401 (2026-11-27): kernel 101762, `v4 - (double)v4` for a bf16 v4 of 2^32 stored to
  f16 (LLVM's InstCombine narrows to half, docs/upstream/llvm-instcombine-bf16-half.md); kernel
  56097, `cdiv(rn, 3) - (x1 % (S | 1))` in 64 bits (ptxas's IMAD.HI carry,
  docs/upstream/ptxas-imad-hi-sub.md).
- Seed 20261601 (2026-11-27, two H200s): kernel 248931, `umulhi` of a 64-bit quotient in a loop
  aborted the compile (LLVM's loop strength reduction wrote an i128 division,
  docs/upstream/llvm-nvptx-lsr-i128-udiv.md); kernel 14778, `umulhi` of int32 minus an int64
  (the signed form of the IMAD.HI carry); kernel 139394, `bitcast<double>(-S) > 0` (ptxas folds
  the integer neg into a float negation, docs/upstream/ptxas-neg-bits-setp.md), with the pattern
  itself for every float width, and the same fold of an integer abs.
- Seeds 20261801 and 20261811 (2026-11-28, one H100): kernel 59412,
  `min(bitcast<float>(b % 3), 1.0)` of a bool b, and kernel 125084, `(double)` of a bool's
  bits as a float (ptxas reads the bits 1 of a bool-valued register used as a float as the
  number 1, docs/upstream/ptxas-bool-bits-float.md), with the pattern itself for every float
  width and the rewritten compare with 1.0 on any bits.
- Seed 20261821 (2026-11-28, one H100): kernel 180, `max(max(~x, -(x << 1)), ~~x)` (InstCombine's
  `x * -2` under two maxes: ptxas's VIMNMX3 drops the neg, docs/upstream/ptxas-vimnmx3-neg.md),
  with the pattern for negated shifts and products.
- Seed 2026120506 (2026-12-05, one H200): kernel 64714, a bf16 to int64 to uint64 to half stored
  to f64 (LLVM's InstCombine widens an integer cast to half it takes as exact, past half's range,
  docs/upstream/llvm-instcombine-int-half-range.md), with the pattern for every 32/64-bit
  integer type.
- Seed 2026120530 (2026-12-05, one H100): kernel 4428, `(x - x * 5) << 7` in int16 compared with
  an int (ptxas sign-extends a `neg.s16` operand before it negates,
  docs/upstream/ptxas-neg16-sext.md), with the pattern on int16 and int8 tiles.
Run: python3 conformance/gen/fuzz_findings.py
"""

import math
import random
from decimal import Decimal, getcontext
from fractions import Fraction

import util
from util import buf, scalar, out, case

S = util.Suite('fuzz-findings', 'Findings of the GPU fuzz campaigns of 2026-11-26/28 (seeds '
               '20261126, 20261128) and 2026-11-27 (seeds 20261207, 20261208, 20261310, 20261320, 20261401, '
               '20261601) and 2026-11-28 (seeds 20261801, 20261811, 20261821) and 2026-12-05 (seeds '
               '2026120506, 2026120530), '
               'reduced; expected values computed by '
               'conformance/gen/fuzz_findings.py from the language rules. Run on the GPU with '
               '`triton-conformance run conformance/cases/fuzz-findings.json --backend gpu`.')
rng = random.Random(20261126)


def wrap32(v):
    return util.wrap(v, 'int32')


def finding_source(key, text, sig):
    """Adds a finding's reduced kernel as source `key`; the suite's description lists its
    signature, by which later campaigns know the finding."""
    S.source(key, text)
    S.description += '\nfuzz-signature: ' + sig


def add_finding(seed, kernel, sig, name, c):
    """Adds case `c` of the reduced kernel of a campaign finding; the first of its cases (name
    '') carries the finding's signature, by which later campaigns know it."""
    if not name:
        c['description'] = ('The reduced kernel of seed %d kernel %d with its data.\n'
                            'fuzz-signature: %s' % (seed, kernel, sig))
    S.add(c)


# ---- kernel 896: do { i++; acc = min(acc, min(i, -rm)); } while (i < K)
K896 = """__global__ void fuzz(int32 *Y, int32 N, int32 K) {
  int pm = get_program_id(0);
  int rm[TS] = pm * TS + 0 ... TS;
  bool mask[TS] = rm < N;
  int32 *pY[TS] = Y + rm;
  int32 acc1[TS] = 0;
  int i2 = 0;
  do { i2++; acc1 = min(acc1, min(i2, (-rm))); } while (i2 < K);
  *?(mask) pY = acc1;
}
"""
S.source('k896', K896)
for ts, n, k in [(2, 2, 0), (8, 13, 0), (8, 13, 3), (16, 40, 9), (4, 7, 17)]:
    grid = -(-n // ts)
    y = []
    for rm in range(grid * ts):
        if rm >= n:
            continue
        acc, i = 0, 0
        while True:
            i += 1
            acc = min(acc, min(i, -rm))
            if not i < k:
                break
        y.append(acc)
    S.add(case('seed20261126_kernel896_min_neg_ts%d_n%d_k%d' % (ts, n, k),
               ['fuzz', 'fuzz.gpu-mismatch', 'loop.do', 'op.minmax', 'op.neg', 'dtype.int32'],
               source_ref='k896', defines={'TS': ts}, grid=[grid],
               args=[buf('Y', 'int32', n, fill=3), scalar('N', 'int32', n),
                     scalar('K', 'int32', k)],
               expect=util.expect_outputs(Y=out(y, 'int32', 'exact'))))

# ---- kernel 2615: min(min((uint8)mask, -rm), (uint8)(x0 - mask)) to half
K2615 = """__global__ void fuzz(bool *X0, half *Y, int32 N, int32 C) {
  int pm = get_program_id(0);
  int rm[TS] = pm * TS + 0 ... TS;
  bool mask[TS] = rm < N;
  bool *pX0[TS] = X0 + rm;
  bool x0[TS] = mask ? *pX0 : 0;
  uint8 x1[TS] = mask;
  half *pY[TS] = Y + rm;
  int32 v0[TS] = (-rm);
  uint8 acc1[TS] = (x0 - x1);
  int32 w6[TS] = 0;
  if (C > 0) { } else { w6 = min(min(x1, v0), acc1); }
  *?(mask) pY = w6;
}
"""
S.source('k2615', K2615)
for ts, n, c, xs in [(2, 2, 0, [0, 0]), (8, 11, 0, None), (8, 11, 1, None), (32, 70, 0, None)]:
    if xs is None:
        xs = [rng.randint(0, 1) for _ in range(n)]
    grid = -(-n // ts)
    y = []
    for rm in range(n):
        x0, x1, v0 = xs[rm], 1, -rm
        acc1 = util.wrap(x0 - x1, 'uint8')           # bool - uint8 -> uint8, wraps
        w6 = 0 if c > 0 else min(min(x1, v0), acc1)  # uint8/int32 -> int32
        y.append(util.f16(w6))
    S.add(case('seed20261128_kernel2615_min_neg_ts%d_n%d_c%d' % (ts, n, c),
               ['fuzz', 'fuzz.gpu-mismatch', 'if', 'op.minmax', 'op.neg', 'dtype.uint8',
                'dtype.bool', 'dtype.float16'],
               source_ref='k2615', defines={'TS': ts}, grid=[grid],
               args=[buf('X0', 'bool', n, xs), buf('Y', 'float16', n, fill=3),
                     scalar('N', 'int32', n), scalar('C', 'int32', c)],
               expect=util.expect_outputs(Y=out(y, 'float16', 'exact'))))

# ---- the ptxas pattern itself: min/max of three loaded tiles, one (or two) negated
K3 = """__global__ void minmax3(TYPE *A, TYPE *B, TYPE *C, TYPE *Y, int32 N) {
  int rm[TS] = get_program_id(0) * TS + 0 ... TS;
  bool mask[TS] = rm < N;
  TYPE a[TS] = *?(mask) (A + rm);
  TYPE b[TS] = *?(mask) (B + rm);
  TYPE c[TS] = *?(mask) (C + rm);
  TYPE *pY[TS] = Y + rm;
  *?(mask) pY = EXPR;
}
"""
S.source('k3', K3)
EXPRS = {
    'min_neg_b': ('min(min(a, -b), c)', lambda a, b, c: min(min(a, -b), c)),
    'max_neg_b': ('max(max(a, -b), c)', lambda a, b, c: max(max(a, -b), c)),
    'min_neg_ab': ('min(min(-a, -b), c)', lambda a, b, c: min(min(-a, -b), c)),
    'max_min_neg': ('max(c, min(a, -b))', lambda a, b, c: max(c, min(a, -b))),
}
for ty in ['int32', 'int64', 'int16']:
    for name, (text, fn) in EXPRS.items():
        n = 45
        lo, hi = -50, 50
        a = [rng.randint(lo, hi) for _ in range(n)]
        b = [rng.randint(lo, hi) for _ in range(n)]
        c = [rng.randint(lo, hi) for _ in range(n)]
        y = [util.wrap(fn(a[i], b[i], c[i]), ty) for i in range(n)]
        S.add(case('ptxas_vimnmx3_%s_%s' % (name, ty),
                   ['fuzz', 'op.minmax', 'op.neg', 'dtype.' + ty],
                   source_ref='k3', defines={'TS': 16, 'TYPE': ty.replace('int', 'int'),
                                             'EXPR': text},
                   grid=[3],
                   args=[buf('A', ty, n, a), buf('B', ty, n, b), buf('C', ty, n, c),
                         buf('Y', ty, n, fill=3), scalar('N', 'int32', n)],
                   expect=util.expect_outputs(Y=out(y, ty, 'exact'))))

# ---- kernel 13157: rsqrt of the smallest subnormals (no flush to zero)
getcontext().prec = 60


def rsqrt_f32(x):
    """1/sqrt(x) for a positive float x, rounded to float32 (to nearest even)."""
    d = Decimal(1) / Decimal(Fraction(x).numerator / Decimal(Fraction(x).denominator)).sqrt()
    return util.f32(Fraction(d))


def bits_f32(i):
    import struct
    return struct.unpack('<f', struct.pack('<I', i))[0]


K13157 = """__global__ void fuzz(int32 *X, float *Y, float *Z, int32 M, int32 K) {
  int rm[TM] = 0 ... TM;
  bool mask[TM] = rm < M;
  float acc5[TM] = 0;
  for (int i6 = K; i6 > 0; i6 -= 1) {
    acc5 = max(acc5, rsqrt(bitcast<float>(i6)));
  }
  int32 x[TM] = *?(mask) (X + rm);
  *?(mask) (Y + rm) = acc5;
  *?(mask) (Z + rm) = rsqrt(bitcast<float>(x));
}
"""
xbits = [1, 2, 3, 4, 7, 0x100, 0x400000, 0x7fffff, 0x800000, 0x3f800000]
for k in [1, 2, 3]:
    acc = 0.0
    for i in range(k, 0, -1):
        acc = max(acc, rsqrt_f32(bits_f32(i)))
    z = [rsqrt_f32(bits_f32(b)) for b in xbits]
    m = len(xbits)
    S.add(case('seed20261128_kernel13157_rsqrt_subnormal_k%d' % k,
               ['fuzz', 'fuzz.gpu-mismatch', 'op.math', 'op.bitcast', 'loop.down',
                'input.subnormal', 'dtype.float32'],
               source=K13157, defines={'TM': 16}, grid=[1],
               args=[buf('X', 'int32', m, xbits), buf('Y', 'float32', m, fill=3),
                     buf('Z', 'float32', m, fill=3), scalar('M', 'int32', m),
                     scalar('K', 'int32', k)],
               expect=util.expect_outputs(Y=out([acc] * m, 'float32', {'ulp': 2}),
                                          Z=out(z, 'float32', {'ulp': 2}))))

# ---- kernel 9893: acc = acc + (sin(x) + (v <= x)) in a loop, in double
K9893 = """__global__ void fuzz(double *X0, double *Y, int32 N, int32 K, bf16 S) {
  int pm = get_program_id(0);
  int rm[TS] = pm * TS + 0 ... TS;
  bool mask[TS] = rm < N;
  double *pX0[TS] = X0 + rm;
  double x0[TS] = *?(mask) pX0;
  bf16 v0[TS] = max(S, S);
  double acc1[TS] = x0;
  int i2 = 0;
  do {
    i2++;
    acc1 = acc1 + (sin(((double)(*?(mask) pX0))) + (v0 <= x0));
  } while (i2 < K);
  *?(mask) (Y + rm) = acc1;
}
"""
for k, s in [(3, 2.0), (1, -1.5), (5, 0.5)]:
    n = 37
    xs = [rng.randint(-8192, 8192) / 1024.0 for _ in range(n)]
    y = []
    for x in xs:
        acc = x
        for _ in range(max(k, 1)):
            acc = acc + (math.sin(x) + (1.0 if util.bf16(s) <= x else 0.0))
        y.append(acc)
    S.add(case('seed20261126_kernel9893_sin_loop_k%d' % k,
               ['fuzz', 'fuzz.gpu-mismatch', 'op.math', 'loop.do', 'load.poison',
                'dtype.float64', 'dtype.bfloat16'],
               source=K9893, defines={'TS': 16}, grid=[3],
               args=[buf('X0', 'float64', n, xs), buf('Y', 'float64', n, fill=3),
                     scalar('N', 'int32', n), scalar('K', 'int32', k),
                     scalar('S', 'bfloat16', s)],
               expect=util.expect_outputs(Y=out(y, 'float64', {'rtol': 1e-13, 'atol': 1e-13}))))

# ---- Findings of the campaigns of seeds 20261207/20261208 (reduced; still failing on an H100
# with the driver JIT of 2026-11-27 before the workaround, or found by an older build).
rng2 = random.Random(20261207)

# kernel 109221: half `%` and `select(acc4 < v0, v2, v3)`; ptxas pairs (x0 - v2) and
# (x0 - select(...)) into one HADD2 after a predicated in-place select and reads the select's
# result for v2 (docs/upstream/ptxas-hadd2-select.md): 4 instead of 2.
K109221 = """__global__ void fuzz(int32 *Y, int32 N) {
  int rm[TS] = 0;
  bool mask[TS] = rm < N;
  half x0[TS] = mask;
  int32 *pY[TS] = Y + rm;
  half v0[TS] = x0;
  half v1[TS] = 1;
  half v2[TS] = ((x0) % ((v1 + x0)));
  half v3[TS] = (-v0);
  half acc4[TS] = v2;
  *?(mask) pY = (((x0 - v2)) - (select(acc4 < v0, v2, v3) + (-v0)));
}
"""
for ts, n in [(1, 1), (1, 0), (4, 1)]:
    y = [3]
    if n > 0:  # every lane stores element 0, all the same value
        x0 = v0 = 1.0
        v2 = util.f16(math.fmod(x0, util.f16(1.0 + x0)))  # 1 % 2 = 1 (C fmod)
        v3 = -v0
        sel = v2 if v2 < v0 else v3
        y = [int(util.f16(util.f16(x0 - v2) - util.f16(sel + -v0)))]  # half -> int32 truncates
    S.add(case('seed20261207_kernel109221_half_select_ts%d_n%d' % (ts, n),
               ['fuzz', 'fuzz.gpu-mismatch', 'op.select', 'op.mod.float', 'op.neg',
                'cast.float_to_int', 'dtype.float16', 'dtype.int32'],
               source=K109221, defines={'TS': ts}, grid=[1],
               args=[buf('Y', 'int32', 1, fill=3), scalar('N', 'int32', n)],
               expect=util.expect_outputs(Y=out(y, 'int32', 'exact'))))

# The pattern itself, on loaded fp16/bf16 tiles: (a - b) + (a - select(b < a, b, -c)).
KHSEL = """__global__ void halfsel(TYPE *A, TYPE *B, TYPE *C, TYPE *Y, int32 N) {
  int rm[TS] = get_program_id(0) * TS + 0 ... TS;
  bool mask[TS] = rm < N;
  TYPE a[TS] = *?(mask) (A + rm);
  TYPE b[TS] = *?(mask) (B + rm);
  TYPE c[TS] = *?(mask) (C + rm);
  *?(mask) (Y + rm) = (a - b) + (a - select(b < a, b, -c));
}
"""
S.source('khsel', KHSEL)
for ty, tname, rnd in [('float16', 'half', util.f16), ('bfloat16', 'bf16', util.bf16)]:
    for ts in [1, 16]:
        n = 45
        a = [rng2.randint(-16, 16) / 4.0 for _ in range(n)]
        b = [rng2.randint(-16, 16) / 4.0 for _ in range(n)]
        c = [rng2.randint(-16, 16) / 4.0 for _ in range(n)]
        y = []
        for i in range(n):
            s = b[i] if b[i] < a[i] else -c[i]
            y.append(rnd(rnd(a[i] - b[i]) + rnd(a[i] - s)))
        S.add(case('ptxas_hadd2_select_%s_ts%d' % (ty, ts),
                   ['fuzz', 'op.select', 'op.sub', 'op.neg', 'dtype.' + ty],
                   source_ref='khsel', defines={'TS': ts, 'TYPE': tname}, grid=[-(-n // ts)],
                   args=[buf('A', ty, n, a), buf('B', ty, n, b), buf('C', ty, n, c),
                         buf('Y', ty, n, fill=3), scalar('N', 'int32', n)],
                   expect=util.expect_outputs(Y=out(y, ty, 'exact'))))

# kernel 23167: a bool loop accumulator acc3 = acc3 + (~rb) (bool + int -> int32, then != 0:
# each trip flips it), stored under `(int32)x1 < (r1 - x1)`: bool - uint32 is uint32 and the
# comparison unsigned, so 0 - 1 wraps to 0xffffffff and the store happens (the GPU skipped it).
K23167 = """__global__ void fuzz(bool *X0, int32 *Y, int32 B, int32 M, int32 N, int32 K) {
  int rb[TB] = 0;
  int rm[TM] = 0;
  int rn[TN] = 0;
  bool mask[TB, TM, TN] = (rb[:, newaxis, newaxis] < B) && (rm[newaxis, :, newaxis] < M) && (rn[newaxis, newaxis, :] < N);
  bool *pX0[TB, TM, TN] = X0 + rb[:, newaxis, newaxis] * (M * N) + rm[newaxis, :, newaxis] * N + rn[newaxis, newaxis, :];
  bool x0[TB, TM, TN] = mask ? *pX0 : 0;
  uint32 x1[TB, TM, TN] = mask;
  int32 *pY[TB, TM, TN] = Y + rb[:, newaxis, newaxis] * (M * N) + rm[newaxis, :, newaxis] * N + rn[newaxis, newaxis, :];
  float v0[TB, TM, TN] = ((x1) % (x0 - 2.0));
  bool r1[TM, TN] = x0[|, :, :];
  bool acc3[TB, TM, TN] = (x0 + x0);
  for (int i4 = 0; i4 < K; i4++) {
    acc3 = acc3 + (~(rb[:, newaxis, newaxis]));
  }
  *?(((int32)(x1) < (r1[newaxis, :, :] - x1))) pY = acc3;
}
"""
for xv, k, bmn in [(0, 1, 1), (0, 0, 1), (0, 2, 1), (0, 3, 1), (1, 1, 1), (0, 1, 0)]:
    mask = 1 if bmn > 0 else 0
    x0 = xv if mask else 0
    x1 = mask                                  # uint32
    r1 = x0                                    # or over an axis of one
    acc3 = (x0 + x0) != 0
    for _ in range(k):
        acc3 = (int(acc3) + ~0) != 0           # ~rb with rb = 0 is -1
    store = x1 < util.wrap(r1 - x1, 'uint32')  # int32 vs uint32: unsigned
    y = [int(acc3)] if store else [3]
    S.add(case('seed20261208_kernel23167_bool_acc_x%d_k%d_b%d' % (xv, k, bmn),
               ['fuzz', 'fuzz.gpu-mismatch', 'loop', 'op.not', 'op.cmp', 'reduce.or',
                'store.data_mask', 'dtype.bool', 'dtype.uint32', 'tile.3d'],
               source=K23167, defines={'TB': 1, 'TM': 1, 'TN': 1}, grid=[1, 1, 1],
               args=[buf('X0', 'bool', [1, 1, 1], [xv]), buf('Y', 'int32', [1, 1, 1], fill=3),
                     scalar('B', 'int32', bmn), scalar('M', 'int32', 1),
                     scalar('N', 'int32', 1), scalar('K', 'int32', k)],
               expect=util.expect_outputs(Y=out(y, 'int32', 'exact'))))

# kernel 121146: min(r1 - x0, 0) stored to f64 (r1 = 1): a difference under a min, the
# pattern the widened VIMNMX workaround hides (a - x as a + (~x + 1)); -1 instead of 0 on an
# H100 before it.
K121146 = """__global__ void fuzz(int8 *X0, double *Y, int32 N) {
  int rm[TS] = 0;
  bool mask[TS] = rm < N;
  int8 *pX0[TS] = X0 + rm;
  int8 x0[TS] = *pX0;
  double *pY[TS] = Y + rm;
  int32 kc[TS] = 1;
  int32 r1 = kc[min];
  int32 acc2[TS] = 0;
  *?(mask) pY = (min((r1 - x0), (acc2)));
}
"""
for ts, xv in [(2, 0), (2, 5), (2, -3), (1, 1), (8, -128)]:
    y = [float(min(1 - xv, 0))]
    S.add(case('seed20261207_kernel121146_min_diff_ts%d_x%d' % (ts, xv),
               ['fuzz', 'fuzz.gpu-mismatch', 'op.minmax', 'op.sub', 'reduce.min',
                'dtype.int8', 'dtype.float64'],
               source=K121146, defines={'TS': ts}, grid=[1],
               args=[buf('X0', 'int8', 1, [xv]), buf('Y', 'float64', 1, fill=3),
                     scalar('N', 'int32', 1)],
               expect=util.expect_outputs(Y=out(y, 'float64', 'exact'))))

# Seed 20261310 (campaign of 2026-11-27), kernel 58417: `umulhi(r1, x0) * x1` in a do-while
# loop, r1 an int8 max over an axis, stored to f64: an H100 stored -1998779392 where 0 is
# right. ptxas rewrites hi(x * y) * c, with y and c the same on each trip, as x * hi(y * c)
# before the loop, the sign word of c read from the stack pointer
# (docs/upstream/ptxas-mul-hi-loop.md). Every element of the tile reads X0[0], X1[0] and
# stores Y[0] (rb, rm, rn are 0); K <= 0 (the loop runs once: i3 never changes).
SIG58417 = ('gpu-mismatch|f64|addptr,and,broadcast,cast,cmp_lt,condition,constant,expand_dims,'
            'load,min,mul,reduce.max,return,splat,store,umulhi,while,yield')
K58417 = """__global__ void fuzz(int32 *X0, int8 *X1, double *Y, int32 B, int32 M, int32 N, int32 K) {
  int rb[TB] = 0;
  int rm[TM] = 0;
  int rn[TN] = 0;
  bool mask[TB, TM, TN] = (rb[:, newaxis, newaxis] < B) && (rm[newaxis, :, newaxis] < M) && (rn[newaxis, newaxis, :] < N);
  int32 *pX0[TB, TM, TN] = X0 + rb[:, newaxis, newaxis] * (M * N) + rm[newaxis, :, newaxis] * N + rn[newaxis, newaxis, :];
  int32 x0[TB, TM, TN] = *pX0;
  int8 *pX1[TB, TM, TN] = X1 + rb[:, newaxis, newaxis] * (M * N) + rm[newaxis, :, newaxis] * N + rn[newaxis, newaxis, :];
  int8 x1[TB, TM, TN] = mask ? *pX1 : 1;
  double *pY[TB, TM, TN] = Y + rb[:, newaxis, newaxis] * (M * N) + rm[newaxis, :, newaxis] * N + rn[newaxis, newaxis, :];
  int8 r1[TB, TN] = x1[:, max, :];
  float acc2[TB, TM, TN] = 0;
  int i3 = 0;
  do {
    acc2 = min(acc2, (float)((umulhi(r1[:, newaxis, :], x0) * (x1))));
  } while (i3 < K);
  *?(mask) pY = acc2;
}
"""
finding_source('k58417', K58417, SIG58417)
for x0, x1, bmn, name in [(41, 97, 1, ''), (-2000000000, 100, 1, '_neg'),
                          (-2**31, -128, 1, '_min'), (2**31 - 1, 127, 1, '_max'),
                          (41, 97, 0, '_masked')]:
    mask = bmn > 0
    x1v = x1 if mask else 1                      # int8 under the mask, else 1
    r1 = x1v                                     # max over TM of equal values
    hi = (r1 * x0) >> 32                         # int8 -> int32, signed high half
    v = float(util.f32(float(wrap32(hi * x1v))))  # int32 product wraps, then to float
    acc2 = min(0.0, v)
    y = [acc2] if mask else [3.0]
    c = case('seed20261310_kernel58417_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'loop.do', 'op.umulhi', 'op.mul', 'op.minmax',
              'reduce.max', 'load.masked', 'cast', 'dtype.int8', 'dtype.int32',
              'dtype.float32', 'dtype.float64', 'tile.3d'],
             source_ref='k58417', defines={'TB': 1, 'TM': 2, 'TN': 2}, grid=[1, 1, 1],
             args=[buf('X0', 'int32', [1, 1, 1], [x0]), buf('X1', 'int8', [1, 1, 1], [x1]),
                   buf('Y', 'float64', [1, 1, 1], fill=3.0), scalar('B', 'int32', bmn),
                   scalar('M', 'int32', 1), scalar('N', 'int32', 1), scalar('K', 'int32', 0)],
             expect=util.expect_outputs(Y=out(y, 'float64', 'exact')))
    add_finding(20261310, 58417, SIG58417, name, c)

# The pattern itself: acc += umulhi(a, b) * c over K trips, b and c loaded before the loop,
# for int32 (signed high half) and uint32; and the high word of an int64 product,
# (int32)((a * b) >> 32) * c, which takes the 64-bit path of the workaround.
KMULHI = """__global__ void mulhiloop(TYPE *A, TYPE *B, TYPE *C, TYPE *Y, int32 N, int32 K) {
  int rm[TS] = get_program_id(0) * TS + 0 ... TS;
  bool mask[TS] = rm < N;
  TYPE b[TS] = *?(mask) (B + rm);
  TYPE c[TS] = *?(mask) (C + rm);
  TYPE acc[TS] = 0;
  for (int i = 0; i < K; i++) {
    TYPE a[TS] = *?(mask) (A + i * N + rm);
    acc = acc + umulhi(a, b) * c;
  }
  *?(mask) (Y + rm) = acc;
}
"""
S.source('kmulhi', KMULHI)
rng3 = random.Random(20261310)
for ty in ['int32', 'uint32']:
    lo, hi_ = (-2**31, 2**31 - 1) if ty == 'int32' else (0, 2**32 - 1)
    for ts, n, k in [(16, 45, 3), (1, 5, 2)]:
        a = [rng3.randint(lo, hi_) for _ in range(n * k)]
        b = [rng3.randint(lo, hi_) for _ in range(n)]
        c = [rng3.randint(-1000, 1000) % (2**32) if ty == 'uint32' else rng3.randint(-1000, 1000)
             for _ in range(n)]
        c = [util.wrap(v, ty) for v in c]
        y = []
        for j in range(n):
            acc = 0
            for i in range(k):
                acc = util.wrap(acc + util.wrap(((a[i * n + j] * b[j]) >> 32) * c[j], ty), ty)
            y.append(acc)
        S.add(case('ptxas_mul_hi_loop_%s_ts%d_k%d' % (ty, ts, k),
                   ['fuzz', 'loop', 'op.umulhi', 'op.mul', 'dtype.' + ty],
                   source_ref='kmulhi', defines={'TS': ts, 'TYPE': ty}, grid=[-(-n // ts)],
                   args=[buf('A', ty, n * k, a), buf('B', ty, n, b), buf('C', ty, n, c),
                         buf('Y', ty, n, fill=3), scalar('N', 'int32', n),
                         scalar('K', 'int32', k)],
                   expect=util.expect_outputs(Y=out(y, ty, 'exact'))))

KHI64 = """__global__ void hi64loop(int64 *A, int64 *B, int32 *C, int32 *Y, int32 N, int32 K) {
  int rm[TS] = get_program_id(0) * TS + 0 ... TS;
  bool mask[TS] = rm < N;
  int64 b[TS] = *?(mask) (B + rm);
  int32 c[TS] = *?(mask) (C + rm);
  int32 acc[TS] = 0;
  for (int i = 0; i < K; i++) {
    int64 a[TS] = *?(mask) (A + i * N + rm);
    acc = acc + (int32)((a * b) >> 32) * c;
  }
  *?(mask) (Y + rm) = acc;
}
"""
for ts, n, k in [(16, 45, 3)]:
    a = [rng3.randint(-2**63, 2**63 - 1) for _ in range(n * k)]
    b = [rng3.randint(-2**40, 2**40) for _ in range(n)]
    c = [rng3.randint(-1000, 1000) for _ in range(n)]
    y = []
    for j in range(n):
        acc = 0
        for i in range(k):
            hi = wrap32(util.wrap(a[i * n + j] * b[j], 'int64') >> 32)  # int64 wraps; >> is ashr
            acc = wrap32(acc + wrap32(hi * c[j]))
        y.append(acc)
    S.add(case('ptxas_mul_hi_loop_int64_ts%d_k%d' % (ts, k),
               ['fuzz', 'loop', 'op.mul', 'op.shift', 'cast', 'dtype.int64', 'dtype.int32'],
               source=KHI64, defines={'TS': ts}, grid=[-(-n // ts)],
               args=[buf('A', 'int64', n * k, a), buf('B', 'int64', n, b),
                     buf('C', 'int32', n, c), buf('Y', 'int32', n, fill=3),
                     scalar('N', 'int32', n), scalar('K', 'int32', k)],
               expect=util.expect_outputs(Y=out(y, 'int32', 'exact'))))

# Seed 20261320 (campaign of 2026-11-27), kernel 35709: `x0 + ((-rm) >> 1)` exchanged into an
# int64: an H100 stored 0 where -1 is right. ptxas folds `(0 - x) >> 1` into
# `LEA.HI.SX32 d, -x, a, 0x1f`, which negates after the shift ((-1) >> 1 became 0, not -1);
# codegen hides a negation or difference that a right shift takes as `~x + 1`
# (tests/lit/gpu/fuzz-neg-shift.tc). `>>` of a signed int is arithmetic: Python's >> floors.
SIG35709 = ('gpu-mismatch|i64|add,addptr,atomic_rmw.xchg,cast,cmp_lt,constant,get_program_id,'
            'load,neg,return,shr,splat')
K35709 = """__global__ void fuzz(uint8 *X0, int64 *Y, int32 N) {
  int pm = get_program_id(0);
  int rm[TS] = pm;
  bool mask[TS] = rm < N;
  uint8 *pX0[TS] = X0 + rm;
  uint8 x0[TS] = mask ? *pX0 : 0;
  int64 *pY[TS] = Y + rm;
  uint8 v2[TS] = x0;
  int32 v3[TS] = (-(rm));
  int32 w11[TS] = v2;
  atomic_xchg(pY, (int64)((w11 + ((v3 >> 1)))), mask);
}
"""
finding_source('k35709', K35709, SIG35709)
rng4 = random.Random(20261320)
for x0, n, name in [([0, 92], 2, ''), ([255, 0, 7, 200, 1], 5, '_5'), ([9, 9, 9], 2, '_masked')]:
    g = len(x0)
    y = [x0[i] + ((-i) >> 1) if i < n else 3 for i in range(g)]
    c = case('seed20261320_kernel35709_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'atomic', 'atomic.xchg', 'op.neg', 'op.shift', 'cast',
              'dtype.uint8', 'dtype.int32', 'dtype.int64', 'grid.multi'],
             source_ref='k35709', defines={'TS': 1}, grid=[g, 1, 1],
             args=[buf('X0', 'uint8', g, x0), buf('Y', 'int64', g, fill=3),
                   scalar('N', 'int32', n)],
             expect=util.expect_outputs(Y=out(y, 'int64', 'exact')))
    add_finding(20261320, 35709, SIG35709, name, c)

# Seed 20261320, kernel 154083: the same ptxas fold as kernel 35709, `(-rn) >> 1` inside a min
# with `S % x2`, stored to f16 (the GPU stored 1 where 0 is right). rm is 1, rn the program id
# along axis 1 (one program along axis 0, so no two programs store the same element).
SIG154083 = ('gpu-mismatch|f16|add,addptr,and,cast,cmp_lt,constant,get_program_id,load,min,mul,'
             'neg,rem,return,shr,splat,store')
K154083 = """__global__ void fuzz(float *X2, half *Y, int32 M, int32 N, bool S) {
  int pn = get_program_id(1);
  int rm[TM] = 1;
  int rn[TN] = pn;
  bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);
  float *pX2[TM, TN] = X2 + rm[:, newaxis] * N + rn[newaxis, :];
  float x2[TM, TN] = *pX2;
  half *pY[TM, TN] = Y + rm[:, newaxis] * N + rn[newaxis, :];
  int32 v0[TM, TN] = (-rn[newaxis, :]);
  float v4[TM, TN] = min(((S % (x2))), ((v0 >> 1) + rm[:, newaxis]));
  *?(mask) pY = v4;
}
"""
finding_source('k154083', K154083, SIG154083)
for x2, sv, n, name in [([1.0, 2.0, 3.0, -2.0], 1, 2, ''), ([5.0, 5.0, 4.0, 7.0, 2.0, -3.0], 1, 3, '_n3'),
                        ([1.0, 1.0, 2.0, 2.0], 0, 2, '_s0')]:
    y = [3.0] * len(x2)
    for pn in range(n):
        r = math.fmod(float(sv), x2[1 * n + pn])      # bool S as 0/1, C fmod
        y[1 * n + pn] = min(r, float(((-pn) >> 1) + 1))  # >> of a signed int floors
    c = case('seed20261320_kernel154083_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'op.neg', 'op.shift', 'op.mod.float', 'op.minmax',
              'dtype.float32', 'dtype.float16', 'dtype.bool', 'grid.2d'],
             source_ref='k154083', defines={'TM': 1, 'TN': 1}, grid=[1, n, 1],
             args=[buf('X2', 'float32', [2, n], x2), buf('Y', 'float16', [2, n], fill=3.0),
                   scalar('M', 'int32', 2), scalar('N', 'int32', n), scalar('S', 'bool', sv)],
             expect=util.expect_outputs(Y=out(y, 'float16', 'exact')))
    add_finding(20261320, 154083, SIG154083, name, c)

# The pattern on tiles: a negation and a difference shifted right, arithmetic (int32) and
# logical (uint32).
KNEGSHIFT = """__global__ void negshift(TYPE *A, TYPE *X, TYPE *Y, int32 N) {
  int rm[TS] = get_program_id(0) * TS + 0 ... TS;
  bool mask[TS] = rm < N;
  TYPE x[TS] = *?(mask) (X + rm);
  TYPE a[TS] = *?(mask) (A + rm);
  *?(mask) (Y + rm) = ((0 - x) >> 1) + ((a - x) >> 3);
}
"""
S.source('knegshift', KNEGSHIFT)
for ty in ['int32', 'uint32']:
    n, ts = 45, 16
    lo, hi_ = (-1000, 1000)
    xs = [util.wrap(rng4.randint(lo, hi_), ty) for _ in range(n)]
    as_ = [util.wrap(rng4.randint(lo, hi_), ty) for _ in range(n)]
    def shr(v, k):  # v already wrapped to ty: >> is arithmetic for int32, logical for uint32
        return v >> k
    y = [util.wrap(shr(util.wrap(-xs[i], ty), 1) + shr(util.wrap(as_[i] - xs[i], ty), 3), ty)
         for i in range(n)]
    S.add(case('ptxas_neg_shift_%s' % ty, ['fuzz', 'op.neg', 'op.sub', 'op.shift', 'dtype.' + ty],
               source_ref='knegshift', defines={'TS': ts, 'TYPE': ty}, grid=[-(-n // ts)],
               args=[buf('A', ty, n, as_), buf('X', ty, n, xs), buf('Y', ty, n, fill=3),
                     scalar('N', 'int32', n)],
               expect=util.expect_outputs(Y=out(y, ty, 'exact'))))

# Seed 20261320, kernel 88674: `acc8 += (v7 * i9) & (x0 ^ v6)` for i9 below K, v7 and v6 true
# (read from a slice), stored to bf16: an H100 stored 0 where 1 is right (K = 2, x0 even).
# LLVM unrolls the loop by 8 with a remainder loop; ptxas ands each `(p ? i : 0) & x` with a
# mask it computes in the unrolled loop only, which the remainder loop, run alone when K < 8,
# reads undefined (docs/upstream/ptxas-lop3-mask-loop.md); codegen moves the select below the
# and (tests/lit/gpu/fuzz-select-and-loop.tc). `x0 ^ v6` is int8 ^ bool: both promote to int
# (x0 sign-extended), so the sum is sum(i & (x0 ^ 1)); below 256, so exact in bf16.
SIG88674 = ('gpu-mismatch|bf16|add,addptr,and,cast,cmp_lt,condition,constant,extract_slice,'
            'insert_slice,load,mul,return,splat,store,undef,while,xor,yield')
K88674 = """__global__ void fuzz(int8 *X0, bf16 *Y, int32 B, int32 M, int32 N, int32 K) {
  int rb[TB] = 0;
  int rm[TM] = 0;
  int rn[TN] = 0;
  bool mask[TB, TM, TN] = (rb[:, newaxis, newaxis] < B) && (rm[newaxis, :, newaxis] < M) && (rn[newaxis, newaxis, :] < N);
  int8 *pX0[TB, TM, TN] = X0 + rb[:, newaxis, newaxis] * (M * N) + rm[newaxis, :, newaxis] * N + rn[newaxis, newaxis, :];
  bf16 *pY[TB, TM, TN] = Y + rb[:, newaxis, newaxis] * (M * N) + rm[newaxis, :, newaxis] * N + rn[newaxis, newaxis, :];
  bool sb1[2, TB, TM, TN];
  sb1[1, :, :, :] = 1;
  int si2 = 1;
  bool v3[TB, TM, TN] = sb1[si2, :, :, :];
  bool v5[TB, TM, TN] = v3;
  bool v6[TB, TM, TN] = v5;
  bool v7[TB, TM, TN] = v6;
  int64 acc8[TB, TM, TN] = 0;
  for (int i9 = 0; i9 < K; i9++) {
    acc8 = acc8 + (int64)(((v7 * i9) & ((*pX0) ^ v6)));
  }
  *?(mask) pY = (acc8);
}
"""
finding_source('k88674', K88674, SIG88674)
for x0, k, name in [(0, 2, ''), (6, 5, '_k5'), (-3, 7, '_k7'), (1, 3, '_odd'), (-128, 9, '_k9'),
                    (2, 12, '_k12'), (5, 8, '_k8'), (4, 0, '_k0')]:
    y = sum(i & (x0 ^ 1) for i in range(k))
    assert 0 <= y < 256
    c = case('seed20261320_kernel88674_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'slices', 'op.and', 'op.xor', 'loop', 'cast',
              'dtype.int8', 'dtype.int64', 'dtype.bfloat16'],
             source_ref='k88674', defines={'TB': 1, 'TM': 1, 'TN': 1}, grid=[1, 1, 1],
             args=[buf('X0', 'int8', [1, 1, 1], [x0]), buf('Y', 'bfloat16', [1, 1, 1], fill=3.0),
                   scalar('B', 'int32', 1), scalar('M', 'int32', 1), scalar('N', 'int32', 1),
                   scalar('K', 'int32', k)],
             expect=util.expect_outputs(Y=out([float(y)], 'bfloat16', 'exact')))
    add_finding(20261320, 88674, SIG88674, name, c)

# The pattern on tiles: and, or and xor of a zero-arm select in a loop, 32 and 64 bits, trip
# counts below, at and above the unroll factor.
KSELLOGIC = """__global__ void selandloop(TYPE *X, bool *C, TYPE *Y, int32 N, int32 K) {
  int rm[TS] = get_program_id(0) * TS + 0 ... TS;
  bool mask[TS] = rm < N;
  TYPE x[TS] = *?(mask) (X + rm);
  bool c[TS] = *?(mask) (C + rm);
  TYPE acc[TS] = 0;
  for (int i = 0; i < K; i++) {
    acc = acc + ((c ? i : 0) & x) + ((c ? i + 1 : 0) | x) + (x ^ (c ? i + 2 : 0));
  }
  *?(mask) (Y + rm) = acc;
}
"""
S.source('ksellogic', KSELLOGIC)
for ty in ['int32', 'int64']:
    for k in [3, 9]:
        n, ts = 37, 16
        xs = [rng4.randint(-(1 << 20), 1 << 20) for _ in range(n)]
        cs = [rng4.randint(0, 1) for _ in range(n)]
        y = []
        for xv, cv in zip(xs, cs):
            acc = 0
            for i in range(k):
                acc += ((i if cv else 0) & xv) + ((i + 1 if cv else 0) | xv) + (xv ^ (i + 2 if cv else 0))
            y.append(util.wrap(acc, ty))
        S.add(case('ptxas_select_logic_loop_%s_k%d' % (ty, k),
                   ['fuzz', 'op.and', 'op.or', 'op.xor', 'op.select', 'loop', 'dtype.' + ty,
                    'dtype.bool'],
                   source_ref='ksellogic', defines={'TS': ts, 'TYPE': ty}, grid=[-(-n // ts)],
                   args=[buf('X', ty, n, xs), buf('C', 'bool', n, cs), buf('Y', ty, n, fill=3),
                         scalar('N', 'int32', n), scalar('K', 'int32', k)],
                   expect=util.expect_outputs(Y=out(y, ty, 'exact'))))

# Seed 20261401, kernel 101762: `bf16 v4 = x2 + ~x2` (x2 = 1, so 2^32), then `v4 - (double)v4`
# stored to f16 gave NaN where 0 is right: LLVM 19's InstCombine narrows fptrunc(fsub(fpext a,
# fpext b)) to half for bf16 a, b, and 2^32 is inf in half (docs/upstream/
# llvm-instcombine-bf16-half.md); codegen widens a bf16 through its bits.
SIG101762 = 'gpu-mismatch|f16|add,cast,cmp_lt,constant,not,return,splat,store,sub'
K101762 = """__global__ void fuzz(half *Y, int32 N) {
  int rm[TS] = 0;
  bool mask[TS] = rm < N;
  uint32 x2[TS] = mask;
  half *pY[TS] = Y + rm;
  bf16 v0[TS] = (~x2);
  bf16 v4[TS] = ((x2) + (v0));
  *?(mask) pY = ((v4 - (double)(v4)));
}
"""
finding_source('k101762', K101762, SIG101762)
for n, name in [(1, ''), (0, '_n0')]:
    # n = 1: v4 = bf16(1 + bf16(2^32 - 2)) = 2^32 and v4 - v4 = 0; n = 0: nothing is stored.
    c = case('seed20261401_kernel101762_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'cast', 'op.not', 'op.sub', 'dtype.bfloat16',
              'dtype.float16', 'dtype.float64', 'dtype.uint32'],
             source_ref='k101762', defines={'TS': 1}, grid=[1, 1, 1],
             args=[buf('Y', 'float16', 1, fill=3.0), scalar('N', 'int32', n)],
             expect=util.expect_outputs(Y=out([0.0 if n else 3.0], 'float16', 'exact')))
    add_finding(20261401, 101762, SIG101762, name, c)

# The pattern on loaded tiles: bf16 operands widened to f64 (-, /) and f32 (*), the result
# stored to f16. Operands of 8 significant bits beyond half's range; the exact difference and
# product fit half; the quotient is rounded to f64, then to half, as the source asks.
KBF16WIDEN = """__global__ void narrow(bf16 *A, bf16 *B, bf16 *C, half *Y, int32 N) {
  int rm[TS] = get_program_id(0) * TS + 0 ... TS;
  bool mask[TS] = rm < N;
  bf16 a[TS] = *?(mask) (A + rm);
  bf16 b[TS] = *?(mask) (B + rm);
  bf16 c[TS] = *?(mask) (C + rm);
  *?(mask) (Y + rm) = (double)a - (double)b;
  *?(mask) (Y + N + rm) = (double)a / (double)b;
  *?(mask) (Y + 2 * N + rm) = (float)a * (float)c;
}
"""
S.source('kbf16widen', KBF16WIDEN)
rng5 = random.Random(20261401)
n, ts = 41, 16
av, bv, cv = [], [], []
for i in range(n):
    e = rng5.randint(17, 40)                       # a in 2^17 .. 2^48: inf in half
    m = rng5.randint(128, 255)
    a = m * 2.0 ** (e - 7)
    if e <= 19:                                    # a - b = k * 2^(e - 7) <= 3 * 2^12 fits half
        b = (m - rng5.randint(0, 3)) * 2.0 ** (e - 7)
    else:
        b = rng5.randint(128, 255) * 2.0 ** (e - 7 - rng5.randint(0, 2))
        if abs(a - b) > 60000:
            b = a
    c = rng5.randint(128, 255) * 2.0 ** (-(e - 7) - 7 - rng5.randint(0, 7))  # a * c in [1, 508]
    av.append(a)
    bv.append(b)
    cv.append(c)
y = [util.f16(a - b) for a, b in zip(av, bv)]    # exact in f64
y += [util.f16(a / b) for a, b in zip(av, bv)]    # Python's / is f64 division, rounded once
y += [util.f16(a * c) for a, c in zip(av, cv)]    # exact in f32 (16 significant bits)
assert all(math.isfinite(v) for v in y)
S.add(case('bf16_widen_sub_div_double_mul_float_to_half',
           ['fuzz', 'cast', 'op.sub', 'op.div.float', 'op.mul', 'dtype.bfloat16', 'dtype.float16',
            'dtype.float64', 'dtype.float32'],
           source_ref='kbf16widen', defines={'TS': ts}, grid=[-(-n // ts)],
           args=[buf('A', 'bfloat16', n, av), buf('B', 'bfloat16', n, bv),
                 buf('C', 'bfloat16', n, cv), buf('Y', 'float16', 3 * n, fill=3.0),
                 scalar('N', 'int32', n)],
           expect=util.expect_outputs(Y=out(y, 'float16', 'exact'))))

# Seed 20261320, kernel 156135: `v6 = (int8)min(max(max(kc, x0), -100), 100)` used before a K loop
# of divisions and in an if/else after it; the atomic_cas compared with the wrong value (an H100
# left Y = 3 where 55 is right). ptxas rematerialises the 16-bit cvt.rzi after the loop and reads a
# stale upper half (docs/upstream/ptxas-f2i16-remat.md); codegen converts through 32 bits.
# Semantics here: x0 = X0 where (row < M, col < N) else 2; dd5 = 1.5 + sum over the 8 columns of
# x0 * 3 (only column 0 is in N = 1, the others are 2) = 43.5 + 3 * x0; K = 0 or C <= 2 leaves the
# loop's sum unused by the C <= 2 branch.
SIG156135 = ('gpu-mismatch|i16|add,addptr,and,atomic_cas,broadcast,cast,cmp_ge,cmp_gt,cmp_lt,'
             'condition,constant,div,dot,expand_dims,get_program_id,if,load,max,min,mul,or,range,'
             'return,select,splat,sub,while,yield')
K156135 = """__global__ void fuzz(uint32 *X0, int16 *Y, int32 M, int32 N, int32 K, int32 C) {
  int pm = get_program_id(0);
  int pn = get_program_id(1);
  int rm[TM] = pm * TM + 0 ... TM;
  int rn[TN] = pn * TN + 0 ... TN;
  bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);
  uint32 *pX0[TM, TN] = X0 + rm[:, newaxis] * N + rn[newaxis, :];
  uint32 x0[TM, TN] = mask ? *pX0 : 2;
  int16 *pY[TM, TN] = Y + rm[:, newaxis] * N + rn[newaxis, :];
  float kc[TM, TN] = 3;
  uint32 v0[TM, TN] = x0;
  float da1[TM, TN] = (float)(x0);
  float dw2[TM, TN] = kc;
  float ds3[TN] = dw2[max, :];
  float db4[TN, TN] = ds3[newaxis, :];
  float dd5[TM, TN] = 1.5;
  dd5 += da1 @ db4;
  int8 v6[TM, TN] = (int8)min(max(max(kc, v0), -100), 100);
  int8 v7[TM, TN] = (v6 | 1);
  float v8[TM, TN] = dd5;
  float acc9[TM, TN] = (float)(v0);
  for (int i10 = 0; i10 < K; i10++) {
    acc9 = acc9 + ((v8 / v7) - min(i10, rm[:, newaxis]));
  }
  float w11[TM, TN] = (v7 - v8);
  if (C > 2) {
    w11 = (acc9 - (uint32)(v6));
  } else {
    w11 = (float)((kc >= v6));
  }
  atomic_cas(pY, (int16)(select((x0 - w11) < min(v6, kc), 3, 5)), (int16)min(max((w11 + max(max((dd5 + 2), (v7 - v8)), (v8 - 5))), -1000), 1000), mask);
}
"""
finding_source('k156135', K156135, SIG156135)


def k156135_y(x0, c, y0):
    """One element of kernel 156135 for K = 0, or any K when c <= 2 (x0 small and non-negative)."""
    v6 = int(min(max(max(3.0, float(x0)), -100.0), 100.0))   # int8, in range
    v7 = v6 | 1
    dd5 = 43.5 + 3 * x0
    if c > 2:
        w11 = float(x0) - float(v6)                           # acc9 = (float)x0 when K = 0
    else:
        w11 = 1.0 if 3.0 >= v6 else 0.0
    cmp = 3 if (x0 - w11) < min(float(v6), 3.0) else 5
    val = math.trunc(min(max(w11 + max(max(dd5 + 2, v7 - dd5), dd5 - 5), -1000.0), 1000.0))
    return val if y0 == cmp else y0


for x0s, y0s, k, cv, name in [([3] * 9, [3] * 9, 0, 2, ''),
                               ([0, 1, 2, 3, 4, 0, 1, 2, 3], [3, 3, 3, 3, 5, 3, 3, 3, 3], 0, 2, '_mix'),
                               ([0] * 9, [3] * 9, 0, 2, '_x0'),
                               ([3] * 9, [5] * 9, 0, 3, '_c3'),
                               ([2, 3, 9, 1, 0, 3, 3, 7, 3], [3, 3, 5, 3, 3, 5, 3, 5, 3], 2, 2, '_k2')]:
    y = [k156135_y(x, cv, y0) for x, y0 in zip(x0s, y0s)]
    c = case('seed20261320_kernel156135_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'atomic', 'atomic.cas', 'dot', 'reduce', 'cast', 'loop',
              'if', 'dtype.uint32', 'dtype.int16', 'dtype.int8', 'dtype.float32'],
             source_ref='k156135', defines={'TM': 4, 'TN': 8}, grid=[3, 1, 1],
             args=[buf('X0', 'uint32', [9, 1], x0s), buf('Y', 'int16', [9, 1], y0s),
                   scalar('M', 'int32', 9), scalar('N', 'int32', 1), scalar('K', 'int32', k),
                   scalar('C', 'int32', cv)],
             expect=util.expect_outputs(Y=out(y, 'int16', 'exact')))
    add_finding(20261320, 156135, SIG156135, name, c)

# The pattern on tiles: every float to every 8/16-bit integer, from f32 and f16 (in range).
KNARROWCVT = """__global__ void narrowcvt(FROM *X, int8 *A, uint8 *B, int16 *C, uint16 *D, int32 N) {
  int rm[TS] = get_program_id(0) * TS + 0 ... TS;
  bool mask[TS] = rm < N;
  FROM x[TS] = *?(mask) (X + rm);
  *?(mask) (A + rm) = (int8)(x - 128);
  *?(mask) (B + rm) = (uint8)x;
  *?(mask) (C + rm) = (int16)(x * 100 - 20000);
  *?(mask) (D + rm) = (uint16)(x * 200);
}
"""
S.source('knarrowcvt', KNARROWCVT)
for fty in ['float32', 'float16']:
    n, ts = 45, 16
    xs = [rng4.randint(0, 255 * 4) / 4 for _ in range(n)]   # 0 .. 255 in quarters: exact in f16
    def rd(v):  # the arithmetic above in the source type, rounded once
        return util.round_to(v, fty)
    a = [math.trunc(rd(x - 128)) for x in xs]
    b_ = [math.trunc(x) for x in xs]
    cc = [math.trunc(rd(rd(x * 100) - 20000)) for x in xs]
    d = [math.trunc(rd(x * 200)) for x in xs]
    assert all(-128 <= v <= 127 for v in a) and all(-32768 <= v <= 32767 for v in cc)
    assert all(0 <= v <= 65535 for v in d)
    S.add(case('ptxas_f2i_narrow_%s' % fty, ['fuzz', 'cast', 'dtype.' + fty, 'dtype.int8',
                                              'dtype.uint8', 'dtype.int16', 'dtype.uint16'],
               source_ref='knarrowcvt', defines={'TS': ts, 'FROM': {'float32': 'float', 'float16': 'half'}[fty]}, grid=[-(-n // ts)],
               args=[buf('X', fty, n, xs), buf('A', 'int8', n, fill=3), buf('B', 'uint8', n, fill=3),
                     buf('C', 'int16', n, fill=3), buf('D', 'uint16', n, fill=3),
                     scalar('N', 'int32', n)],
               expect=util.expect_outputs(A=out(a, 'int8', 'exact'), B=out(b_, 'uint8', 'exact'),
                                          C=out(cc, 'int16', 'exact'),
                                          D=out(d, 'uint16', 'exact'))))

# Seed 20261401, kernel 56097: `cdiv(rn, 3) - (x1 % (S | 1))` stored to int64 gave -2^32 where 0
# is right: ptxas fuses mul.hi.u32 (the division by 3), cvt.u64.u32 and sub.s64 into an IMAD.HI
# whose carry is wrong when the subtrahend's low word is 0 (docs/upstream/ptxas-imad-hi-sub.md);
# codegen writes zext(mul.hi) - b as ~(~zext(mul.hi) + b). int32 - uint64 is uint64 (wraps),
# stored to int64.
SIG56097 = ('gpu-mismatch|i64|add,addptr,and,cast,cmp_lt,constant,div,get_program_id,load,mul,or,'
            'rem,return,splat,store,sub')
K56097 = """__global__ void fuzz(uint16 *X1, int64 *Y, int32 M, int32 N, uint64 S) {
  int pn = get_program_id(1);
  int rm[TM] = 0;
  int rn[TN] = pn;
  bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);
  uint16 *pX1[TM, TN] = X1 + rm[:, newaxis] * N + rn[newaxis, :];
  uint16 x1[TM, TN] = *pX1;
  int64 *pY[TM, TN] = Y + rm[:, newaxis] * N + rn[newaxis, :];
  *?(mask) pY = ((cdiv((rn[newaxis, :]), 3) - (x1 % ((S) | 1))));
}
"""
finding_source('k56097', K56097, SIG56097)
for x1, sv, name in [([0], 0, ''), ([7], 0, '_x7'), ([0], 0xFFFFFFFF00000000, '_shigh'),
                     ([0, 5, 12, 7, 9, 65535], 2, '_s2'), ([0, 5, 12, 7, 9, 65535], 4, '_s4')]:
    n = len(x1)
    y = [util.wrap(-(-pn // 3) - (x % (sv | 1)), 'int64') for pn, x in enumerate(x1)]
    c = case('seed20261401_kernel56097_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'op.cdiv', 'op.mod.int', 'op.sub', 'cast',
              'dtype.uint16', 'dtype.uint64', 'dtype.int64', 'grid.2d'],
             source_ref='k56097', defines={'TM': 1, 'TN': 1}, grid=[1, n, 1],
             args=[buf('X1', 'uint16', [1, n], x1), buf('Y', 'int64', [1, n], fill=3),
                   scalar('M', 'int32', 1), scalar('N', 'int32', n), scalar('S', 'uint64', sv)],
             expect=util.expect_outputs(Y=out(y, 'int64', 'exact')))
    add_finding(20261401, 56097, SIG56097, name, c)

# The pattern on tiles: a quotient by 3 and umulhi, each minus an int64 whose low word is often 0.
KHISUB = """__global__ void hisub(uint32 *U, int64 *B, int64 *Y, int32 N) {
  int rm[TS] = get_program_id(0) * TS + 0 ... TS;
  uint32 u[TS] = *(U + rm);
  int64 b[TS] = *(B + rm);
  *(Y + rm) = ((u & 131071) / 3) - b;
  *(Y + N + rm) = umulhi(u, 2654435769) - b;
}
"""
S.source('khisub', KHISUB)
n, ts = 64, 16
us = [rng4.randint(0, (1 << 32) - 1) for _ in range(n)]
bs = [rng4.randint(-5, 5) << 32 if i % 2 == 0 else rng4.randint(-(1 << 40), 1 << 40)
      for i in range(n)]
y = [((u & 131071) // 3) - b for u, b in zip(us, bs)]
y += [((u * 2654435769) >> 32) - b for u, b in zip(us, bs)]
S.add(case('ptxas_imad_hi_sub64', ['fuzz', 'op.div.int', 'op.umulhi', 'op.sub', 'dtype.uint32',
                                    'dtype.int64'],
           source_ref='khisub', defines={'TS': ts}, grid=[n // ts],
           args=[buf('U', 'uint32', n, us), buf('B', 'int64', n, bs),
                 buf('Y', 'int64', 2 * n, fill=3), scalar('N', 'int32', n)],
           expect=util.expect_outputs(Y=out(y, 'int64', 'exact'))))

# ---- Seed 20261601 (campaign of 2026-11-27, two H200s)
rng6 = random.Random(20261601)


def float_of_bits(bits, dtype):
    """The float whose `dtype` encoding is the unsigned integer `bits`."""
    import struct
    if dtype == 'float64':
        return struct.unpack('<d', struct.pack('<Q', bits))[0]
    if dtype == 'float32':
        return struct.unpack('<f', struct.pack('<I', bits))[0]
    if dtype == 'float16':
        return struct.unpack('<e', struct.pack('<H', bits))[0]
    return struct.unpack('<f', struct.pack('<I', bits << 16))[0]  # bfloat16


def neg_bits(v, width):
    """The bits of the integer negation -v in `width` bits (two's complement)."""
    return (-v) % (1 << width)


# Kernel 248931: `umulhi(q, rm)` of a 64-bit quotient in a loop made the GPU backend abort
# (`LLVM ERROR: Undefined external symbol ""`): umulhi of 64-bit integers was an i128 product,
# and LLVM 19's loop strength reduction rewrote zext(a / b) as an i128 division, which NVPTX
# cannot lower (docs/upstream/llvm-nvptx-lsr-i128-udiv.md). umulhi of 64-bit integers is now
# mul.hi.s64/u64. The kernel is the original (a fault is not reduced).
SIG248931 = ('gpu-fault|u64|add,addptr,and,cast,cmp_eq,cmp_gt,condition,constant,div,'
             'get_program_id,if,load,max,min,mul,or,range,rem,return,splat,store,sub,umulhi,'
             'while,xor,yield')
K248931 = """__global__ void fuzz(int64 *X0, uint64 *Y, int32 N, int32 K, int32 C, bf16 S) {
  int pm = get_program_id(0);
  int rm[TS] = pm * TS + 0 ... TS;
  bool mask[TS] = rm < N;
  int64 *pX0[TS] = X0 + rm;
  int64 x0[TS] = *pX0;
  uint64 *pY[TS] = Y + rm;
  uint64 v0[TS] = ((x0 + x0) / (((uint64)(x0) & 7) | 1));
  uint64 v1[TS] = ((x0 + x0) / (((uint64)(x0) & 7) | 1));
  float acc2[TS] = (rm + 1.5);
  int64 *q4[TS] = pX0;
  int o5 = 0;
  for (int i3 = K; i3 > 0; i3 -= 1) {
    if (i3 == 1) continue;
    bool mq6[TS] = (rm + o5) < N;
    acc2 = max(acc2, (float)((umulhi(((x0 + x0) / (((uint64)(x0) & 7) | 1)), rm) + i3)));
    q4 += 2;
    o5 += 2;
  }
  int32 w7[TS] = (rm % 5);
  if (C > 0) {
    w7 = (int32)min(max(((bf16)(x0) - (S + acc2)), -1000), 1000);
  }
  *pY = (uint64)min(max((w7 + ((S + 5) + 7)), 0), 1000);
}
"""
finding_source('k248931', K248931, SIG248931)


def k248931_y(x0s, k, c, s):
    """The kernel's Y by the language's rules: int64 + int64 divided by a uint64 is an unsigned
    division of the wrapped sum; umulhi of uint64 is the unsigned high half; bf16 + float is
    float; bf16 + int is bf16 (rounded after each operation); conversions to integers
    truncate."""
    m64 = 1 << 64
    ys = []
    for rm, x0 in enumerate(x0s):
        q = ((2 * x0) % m64) // (((x0 % m64) & 7) | 1)
        acc = util.f32(rm + 1.5)
        for i3 in range(k, 0, -1):
            if i3 == 1:
                continue
            acc = max(acc, util.f32((((q * (rm % m64)) >> 64) + i3) % m64))
        w7 = rm % 5
        if c > 0:
            d = util.f32(util.bf16(x0) - util.f32(s + acc))
            w7 = int(min(max(d, -1000.0), 1000.0))  # int() truncates toward zero
        t = util.bf16(util.bf16(util.bf16(s + 5) + 7) + w7)
        ys.append(int(min(max(t, 0.0), 1000.0)))
    return ys


for x0s, k, name in [([-3, 3, -4, -1, -4, 1, -1, 3], 2, ''),
                     ([-3, 3, -4, -1, -4, 1, -4, -3], 4, '_k4'),
                     ([rng6.randint(-9, 9) for _ in range(16)], 5, '_k5')]:
    n = len(x0s)
    c = case('seed20261601_kernel248931_gpu-fault' + name,
             ['fuzz', 'fuzz.gpu-fault', 'op.umulhi', 'op.div.int', 'loop', 'loop.continue',
              'dtype.int64', 'dtype.uint64', 'dtype.bfloat16', 'dtype.float32'],
             source_ref='k248931', defines={'TS': 4}, grid=[n // 4],
             args=[buf('X0', 'int64', n, x0s), buf('Y', 'uint64', n, fill=3),
                   scalar('N', 'int32', n), scalar('K', 'int32', k), scalar('C', 'int32', 1),
                   scalar('S', 'bfloat16', -1.25)],
             expect=util.expect_outputs(Y=out(k248931_y(x0s, k, 1, -1.25), 'uint64', 'exact')))
    add_finding(20261601, 248931, SIG248931, name, c)

# Kernel 14778: `umulhi(rm - 1, rm - 1) - (int64)x1` of int32 factors (the signed high half:
# 0 for -1 * -1) stored through float to uint32 gave 0 where 1 is right: ptxas fuses
# mul.hi.s32, cvt.u64.u32 and sub.s64 into an IMAD.HI whose carry is wrong when the
# subtrahend's low word is 0, as for mul.hi.u32 (docs/upstream/ptxas-imad-hi-sub.md).
SIG14778 = ('gpu-mismatch|u32|addptr,cast,cmp_lt,constant,get_program_id,load,return,splat,'
            'store,sub,umulhi,xor')
K14778 = """int32 h0(uint16 p0[TS], int32 p1[TS]) {
  return umulhi(p1, p1);
}
__global__ void fuzz(float *X1, uint32 *Y, int32 N) {
  int pm = get_program_id(0);
  int rm[TS] = pm;
  bool mask[TS] = rm < N;
  int8 x0[TS] = 1;
  float *pX1[TS] = X1 + rm;
  float x1[TS] = *pX1;
  uint16 x2[TS] = 0;
  uint32 *pY[TS] = Y + rm;
  float v2[TS] = (x0 ^ (h0((x2), (rm - 1)) - (int64)(x1)));
  *?(mask) pY = v2;
}
"""
finding_source('k14778', K14778, SIG14778)
for x1, name in [([0.0], ''), ([-5.0], '_x-5'), ([0.0, -5.0, -4.0, -4096.0], '_grid4')]:
    n = len(x1)
    y = []
    for rm, x in enumerate(x1):
        hi = ((rm - 1) * (rm - 1)) >> 32                     # signed high half of int32 * int32
        v = 1 ^ util.wrap(hi - int(x), 'int64')              # int8 ^ int64 is int64
        y.append(int(util.f32(v)))                           # float, then to uint32 (truncates)
    c = case('seed20261601_kernel14778_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'op.umulhi', 'op.sub', 'helper', 'cast',
              'dtype.int32', 'dtype.int64', 'dtype.float32', 'dtype.uint32'],
             source_ref='k14778', defines={'TS': 1}, grid=[n],
             args=[buf('X1', 'float32', n, x1), buf('Y', 'uint32', n, fill=3),
                   scalar('N', 'int32', n)],
             expect=util.expect_outputs(Y=out(y, 'uint32', 'exact')))
    add_finding(20261601, 14778, SIG14778, name, c)

# Kernel 139394: `bitcast<double>(-S) > 0` (as `(S ^ S) < bitcast<double>(-S)`) was false on an
# H200 for S = -2, whose -S = 2 is the bits of the smallest subnormal: ptxas folds the integer
# neg.s64 into the DSETP's float negation modifier (`0 < -x`), which differs where x's bits or
# -x's are a NaN (docs/upstream/ptxas-neg-bits-setp.md). The atomic_cas then compared with 5,
# not 3, and did not swap.
SIG139394 = ('gpu-mismatch|f64|atomic_cas,bitcast,cast,cmp_lt,constant,neg,return,select,'
             'splat,xor')
K139394 = """bf16 h6(int64 p0[TS], bf16 p1[TS]) {
  return (p1);
}
__global__ void fuzz(double *Y, int32 N, int64 S) {
  int rm[TS] = 0;
  bool mask[TS] = rm < N;
  double *pY[TS] = Y + rm;
  atomic_cas(pY, (double)(select((S ^ S) < bitcast<double>((-S)), 3, 5)), (double)(S), mask);
}
"""
finding_source('k139394', K139394, SIG139394)
for sv, name in [(-2, ''), (-1, '_s-1'), (2, '_s2'), (0, '_s0'), (-(1 << 63), '_smin'),
                 (-(1 << 52), '_s-2p52')]:
    cmp = 3.0 if 0.0 < float_of_bits(neg_bits(sv, 64), 'float64') else 5.0
    y = float(sv) if cmp == 3.0 else 3.0          # Y holds 3.0: swapped to (double)S when equal
    c = case('seed20261601_kernel139394_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'atomic', 'atomic.cas', 'op.bitcast', 'op.neg',
              'op.select', 'dtype.int64', 'dtype.float64'],
             source_ref='k139394', defines={'TS': 1}, grid=[1],
             args=[buf('Y', 'float64', 1, [3.0]), scalar('N', 'int32', 1),
                   scalar('S', 'int64', sv)],
             expect=util.expect_outputs(Y=out([y], 'float64', 'exact')))
    add_finding(20261601, 139394, SIG139394, name, c)

# The pattern itself, every float width: the bits of the negation of a kernel parameter (a
# uniform register, where ptxas folds it) compared with 0. Without the workaround ptxas writes
# FSETP/DSETP/HSETP2 with a negated operand for each compare here.
KNEGBITS = """__global__ void negbits(int32 A, int32 D, int16 B, int16 E, int64 C, int32 *Y) {
  *Y = (bitcast<float>(-A) > 0) + 2 * (bitcast<half>(-B) > 0) + 4 * (bitcast<bf16>(-E) < 0) +
       8 * (bitcast<double>(-C) >= 0) + 16 * (bitcast<float>(-D) != 0);
}
"""
S.source('knegbits', KNEGBITS)
for v32, v16, v64, name in [
        (-2, -2, -2, 'm2'), (-1, -1, -1, 'm1'), (1, 1, 1, '1'), (2, 2, 2, '2'), (0, 0, 0, '0'),
        (-(1 << 31), -(1 << 15), -(1 << 63), 'min'),
        (-0x7F800001, -0x7C01, -0x7FF0000000000001, 'nan_bits'),
        (-0x7F800000, -0x7C00, -0x7FF0000000000000, 'inf_bits'),
        (-0x3F800000, -0x3C00, -0x3FF0000000000000, 'minus_one_bits'),
        (0x3F800000, 0x3C00, 0x3FF0000000000000, 'one_bits')]:
    y = int(float_of_bits(neg_bits(v32, 32), 'float32') > 0) + \
        2 * int(float_of_bits(neg_bits(v16, 16), 'float16') > 0) + \
        4 * int(float_of_bits(neg_bits(v16, 16), 'bfloat16') < 0) + \
        8 * int(float_of_bits(neg_bits(v64, 64), 'float64') >= 0) + \
        16 * int(float_of_bits(neg_bits(v32, 32), 'float32') != 0)  # NaN: false, except !=
    S.add(case('ptxas_neg_bits_setp_' + name,
               ['fuzz', 'op.bitcast', 'op.neg', 'op.cmp', 'scalar.param', 'dtype.int16',
                'dtype.int32', 'dtype.int64', 'dtype.float16', 'dtype.bfloat16', 'dtype.float32',
                'dtype.float64'],
               source_ref='knegbits', grid=[1],
               args=[scalar('A', 'int32', v32), scalar('D', 'int32', v32),
                     scalar('B', 'int16', v16), scalar('E', 'int16', v16),
                     scalar('C', 'int64', v64), buf('Y', 'int32', 1, fill=3)],
               expect=util.expect_outputs(Y=out([y], 'int32', 'exact'))))

# The same fold for an integer abs: ptxas takes it as the compare's float |x| modifier.
KABSBITS = """__global__ void absbits(int32 A, int16 B, int16 E, int64 C, int32 *Y) {
  *Y = (bitcast<float>(abs(A)) > 0) + 2 * (bitcast<half>(abs(B)) > 0) +
       4 * (bitcast<bf16>(abs(E)) >= 0) + 8 * (bitcast<double>(abs(C)) > 0);
}
"""
S.source('kabsbits', KABSBITS)


def abs_bits(v, width):
    """The bits of the integer abs(v) in `width` bits (abs(MIN) == MIN)."""
    return abs(v) % (1 << width)


for v32, v16, v64, name in [
        (-2, -2, -2, 'm2'), (-1, -1, -1, 'm1'), (2, 2, 2, '2'), (0, 0, 0, '0'),
        (-(1 << 31), -(1 << 15), -(1 << 63), 'min'),
        (-0x7F800001, -0x7C01, -0x7FF0000000000001, 'nan_bits'),
        (-0x3F800000, -0x3C00, -0x3FF0000000000000, 'minus_one_bits')]:
    y = int(float_of_bits(abs_bits(v32, 32), 'float32') > 0) + \
        2 * int(float_of_bits(abs_bits(v16, 16), 'float16') > 0) + \
        4 * int(float_of_bits(abs_bits(v16, 16), 'bfloat16') >= 0) + \
        8 * int(float_of_bits(abs_bits(v64, 64), 'float64') > 0)  # NaN: false
    S.add(case('ptxas_abs_bits_setp_' + name,
               ['fuzz', 'op.bitcast', 'op.abs', 'op.cmp', 'scalar.param', 'dtype.int16',
                'dtype.int32', 'dtype.int64', 'dtype.float16', 'dtype.bfloat16', 'dtype.float32',
                'dtype.float64'],
               source_ref='kabsbits', grid=[1],
               args=[scalar('A', 'int32', v32), scalar('B', 'int16', v16),
                     scalar('E', 'int16', v16), scalar('C', 'int64', v64),
                     buf('Y', 'int32', 1, fill=3)],
               expect=util.expect_outputs(Y=out([y], 'int32', 'exact'))))

# Seed 20261801 (2026-11-28, one H100), kernel 59412: `min(bitcast<float>(b % 3), 1.0)` for a
# bool b loaded as true (the bits 1, the smallest subnormal), stored to int8, gave 1, not 0:
# ptxas takes a register whose bits are a bool's (a phi of `selp 1, 0`) for a bool where a float
# uses it; here a compare with 1.0 (the min's tie test) became `!= 0`
# (docs/upstream/ptxas-bool-bits-float.md).
SIG59412 = ('gpu-mismatch|i8|addptr,and,bitcast,cast,cmp_gt,cmp_lt,constant,if,load,min,mul,rem,'
            'return,select,splat,store,yield')
K59412 = """bool h2(uint32 p0[TM, TN], bool p1[TM, TN]) {
  bool t[TM, TN] = p1;
  return t;
}
float h7(float p0[TM, TN], int32 p1[TM, TN]) {
  return (p0);
}
__global__ void fuzz(bool *X0, int8 *Y, int32 M, int32 N, int32 C) {
  int rm[TM] = 0;
  int rn[TN] = 1;
  bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);
  bool *pX0[TM, TN] = X0 + rm[:, newaxis] * N + rn[newaxis, :];
  bool x0[TM, TN] = mask ? *pX0 : 0;
  int8 *pY[TM, TN] = Y + rm[:, newaxis] * N + rn[newaxis, :];
  float v0[TM, TN] = 1;
  bool v1[TM, TN] = where(v0 < x0, x0, x0);
  bool v3[TM, TN] = h2((uint32)(v1), x0);
  float w6[TM, TN] = 0;
  if (C > 0) {
  } else {
    w6 = min(bitcast<float>((v3 % 3)), v0);
  }
  *?(mask) pY = w6;
}
"""
finding_source('k59412', K59412, SIG59412)
for x0s, c, name in [([0, 1], 0, ''), ([1, 0], 0, '_x0'), ([1, 1], 1, '_c1'), ([0, 0], 0, '_x00')]:
    # The program writes Y[1] (rm = 0, rn = 1): bool % 3 is an int32, its bits a float, the
    # min with 1.0 that float (a subnormal or 0), then truncated to int8; Y[0] keeps its 3.
    # The reduced kernel ran on a grid of [1, 2, 1], whose two programs both store Y[1] (a
    # race the interpreter reports); one program shows the bug the same.
    w6 = 0.0 if c > 0 else min(float_of_bits(x0s[1] % 3, 'float32'), 1.0)
    c = case('seed20261801_kernel59412_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'op.bitcast', 'op.minmax', 'op.mod.int', 'cast',
              'cast.float_to_int', 'dtype.bool', 'dtype.int8', 'dtype.float32', 'helper',
              'tile.2d', 'store.masked'],
             source_ref='k59412', defines={'TM': 1, 'TN': 1}, grid=[1],
             args=[buf('X0', 'bool', [1, 2], x0s), buf('Y', 'int8', [1, 2], fill=3),
                   scalar('M', 'int32', 1), scalar('N', 'int32', 2), scalar('C', 'int32', c)],
             expect=util.expect_outputs(Y=out([3, int(w6)], 'int8', 'exact')))
    add_finding(20261801, 59412, SIG59412, name, c)

# Seed 20261811 (2026-11-28, one H100), kernel 125084: `bitcast<float>((x2 >= 1.0) & 1) < acc`
# with acc = 1.0 after a loop of float mins was false for x2 = 1: ptxas turned the cvt.f64.f32 of
# the bool's bits into a select of the double 1.0 (the bits 1 read as the number 1).
SIG125084 = ('gpu-mismatch|u8|add,addptr,and,bitcast,cast,cmp_ge,cmp_lt,condition,constant,'
             'get_program_id,load,min,mul,return,splat,store,while,yield')
K125084 = """__global__ void fuzz(uint8 *X2, uint8 *Y, int32 M, int32 N, int32 K) {
  int pm = get_program_id(0);
  int rm[TM] = pm;
  int rn[TN] = 0;
  uint8 *pX2[TM, TN] = X2 + rm[:, newaxis] * N + rn[newaxis, :];
  uint8 x2[TM, TN] = *pX2;
  uint8 *pY[TM, TN] = Y + rm[:, newaxis] * N + rn[newaxis, :];
  float v0[TM, TN] = 1;
  float v3[TM, TN] = bitcast<float>(((x2 >= v0) & 1));
  double acc4[TM, TN] = 1;
  int i5 = 0;
  do {
    i5++;
    acc4 = min(acc4, (double)(x2));
  } while (i5 < K);
  *?((v3 < acc4)) pY = 0;
}
"""
finding_source('k125084', K125084, SIG125084)
for x2s, k, name in [([0, 1], 0, ''), ([1, 0, 2, 1], 9, '_k9'), ([5, 1, 0, 255], 3, '_k3')]:
    ys = []
    for x2 in x2s:
        v3 = float_of_bits(int(x2 >= 1.0) & 1, 'float32')   # the bits 0 or 1: 0.0 or 2^-149
        acc = 1.0
        for _ in range(max(k, 1)):                           # do-while: at least one trip
            acc = min(acc, float(x2))                        # no NaN, no signed zeros here
        ys.append(0 if v3 < acc else 3)                      # float < double compares in double
    n = len(x2s)
    c = case('seed20261811_kernel125084_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'op.bitcast', 'op.minmax', 'op.cmp', 'loop',
              'loop.do_while', 'cast', 'dtype.uint8', 'dtype.float32', 'dtype.float64',
              'store.masked', 'tile.2d'],
             source_ref='k125084', defines={'TM': 1, 'TN': 1}, grid=[n],
             args=[buf('X2', 'uint8', [n, 1], x2s), buf('Y', 'uint8', [n, 1], fill=3),
                   scalar('M', 'int32', n), scalar('N', 'int32', 1), scalar('K', 'int32', k)],
             expect=util.expect_outputs(Y=out(ys, 'uint8', 'exact')))
    add_finding(20261811, 125084, SIG125084, name, c)

# Seed 20261821 (2026-11-28, one H100), kernel 180: `max(max(~x, -(x << 1)), ~~x)` gave 2 for
# x = 1, not 1: InstCombine writes `-(x << 1)` as `x * -2`, NVPTX that as shl and neg.s32, and
# ptxas fused the two maxes into one VIMNMX3 and dropped the neg (docs/upstream/ptxas-vimnmx3-neg.md;
# the workaround matched only `0 - x` until then).
SIG180 = ('gpu-mismatch|u64|addptr,and,cast,cmp_lt,constant,get_program_id,max,mul,neg,not,'
          'return,shl,splat,store')
K180 = """__global__ void fuzz(uint64 *Y, int32 M, int32 N) {
  int pm = get_program_id(0);
  int rm[TM] = pm;
  int rn[TN] = 0;
  bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);
  uint64 *pY[TM, TN] = Y + rm[:, newaxis] * N + rn[newaxis, :];
  int32 v3[TM, TN] = ((rm[:, newaxis]) << 1);
  *?(mask) pY = (max(max((~(rm[:, newaxis])), (-v3)), (~(~rm[:, newaxis]))));
}
"""
finding_source('k180', K180, SIG180)
for n, name in [(2, ''), (5, '_grid5')]:
    y = [util.wrap(max(max(~r, -(r << 1)), r), 'uint64') for r in range(n)]  # int32 max, then to uint64
    c = case('seed20261821_kernel180_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'op.minmax', 'op.neg', 'op.not', 'op.shl', 'cast',
              'dtype.int32', 'dtype.uint64', 'tile.2d', 'store.masked'],
             source_ref='k180', defines={'TM': 1, 'TN': 1}, grid=[n],
             args=[buf('Y', 'uint64', [n, 1], fill=3), scalar('M', 'int32', n),
                   scalar('N', 'int32', 1)],
             expect=util.expect_outputs(Y=out(y, 'uint64', 'exact')))
    add_finding(20261821, 180, SIG180, name, c)

# The pattern on loaded tiles: a negated shift, product or quotient (InstCombine's `x * -C`,
# `x / -C`) under two min/max, for int32 and int64. Unmasked loads: behind a mask the product reaches the min
# through a phi, which ptxas does not fuse. Without the workaround the int32 shifts come out
# as `VIMNMX3 (a, b << k, c)`; a product by -3 is an IMAD by -3 (right either way).
K180T = """__global__ void negmul3(TYPE *A, TYPE *B, TYPE *C, TYPE *Y) {
  int rm[TS] = get_program_id(0) * TS + 0 ... TS;
  TYPE a[TS] = *(A + rm);
  TYPE b[TS] = *(B + rm);
  TYPE c[TS] = *(C + rm);
  *(Y + rm) = EXPR;
}
"""
S.source('k180t', K180T)
rng180 = random.Random(20261821)


def tdiv(a, b):
    """Integer division truncating toward zero (the language's `/` on integers)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


EXPRS180 = {
    'max_neg_shl_b': ('max(max(a, -(b << 1)), c)', lambda a, b, c: max(max(a, -(b << 1)), c)),
    'min_neg_mul3_b': ('min(min(a, -(b * 3)), c)', lambda a, b, c: min(min(a, -(b * 3)), c)),
    'max_neg_shl4_b': ('max(c, max(a, -(b << 4)))', lambda a, b, c: max(c, max(a, -(b << 4)))),
    # InstCombine's `b / -2` for `-(b / 2)`: NVPTX's shift-based division and a neg.
    'max_neg_div2_b': ('max(max(a, -(b / 2)), c)', lambda a, b, c: max(max(a, -tdiv(b, 2)), c)),
    'min_div_m4_b': ('min(min(a, b / -4), c)', lambda a, b, c: min(min(a, tdiv(b, -4)), c)),
}
for ty in ['int32', 'int64']:
    for name, (text, fn) in EXPRS180.items():
        n = 48
        a = [rng180.randint(-50, 50) for _ in range(n)]
        b = [rng180.randint(-50, 50) for _ in range(n)]
        c = [rng180.randint(-50, 50) for _ in range(n)]
        y = [util.wrap(fn(a[i], b[i], c[i]), ty) for i in range(n)]
        S.add(case('ptxas_vimnmx3_%s_%s' % (name, ty),
                   ['fuzz', 'op.minmax', 'op.neg', 'op.mul', 'op.shl', 'dtype.' + ty],
                   source_ref='k180t', defines={'TS': 16, 'TYPE': ty, 'EXPR': text}, grid=[3],
                   args=[buf('A', ty, n, a), buf('B', ty, n, b), buf('C', ty, n, c),
                         buf('Y', ty, n, fill=3)],
                   expect=util.expect_outputs(Y=out(y, ty, 'exact'))))

# The pattern itself, every float width: a bool, through a branch (a phi of 0 and `selp 1, 0`
# for ptxas), compared with 1.0 as a float's bits. Without the workaround ptxas tests the f16,
# bf16 and f32 compares `!= 0`: 3 instead of 4 for X = 1, C = 1.
KBOOLONE = """__global__ void boolone(bool *X, int32 C, int32 *Y) {
  int32 b = 0;
  if (C > 0) {
    b = *X;
  }
  *Y = (bitcast<float>(b) == 1.0) + 2 * (bitcast<half>((int16)b) == 1.0) +
       4 * (bitcast<bf16>((int16)b) != 1.0) + 8 * (bitcast<double>((int64)b) == 1.0);
}
"""
S.source('kboolone', KBOOLONE)
for x, c in [(1, 1), (0, 1), (1, 0)]:
    b = x if c > 0 else 0
    y = int(float_of_bits(b, 'float32') == 1.0) + 2 * int(float_of_bits(b, 'float16') == 1.0) + \
        4 * int(float_of_bits(b, 'bfloat16') != 1.0) + 8 * int(float_of_bits(b, 'float64') == 1.0)
    S.add(case('ptxas_bool_eq_one_x%d_c%d' % (x, c),
               ['fuzz', 'op.bitcast', 'op.cmp', 'if', 'dtype.bool', 'dtype.int16', 'dtype.int32',
                'dtype.int64', 'dtype.float16', 'dtype.bfloat16', 'dtype.float32',
                'dtype.float64'],
               source_ref='kboolone', grid=[1],
               args=[buf('X', 'bool', 1, [x]), scalar('C', 'int32', c),
                     buf('Y', 'int32', 1, fill=3)],
               expect=util.expect_outputs(Y=out([y], 'int32', 'exact'))))

# The rewritten compares on any bits, the unordered forms included (`x < 1 || x > 1` is
# InstCombine's `one`, its negation `ueq`): equal only to 1.0's own bits, NaN unordered.
KUNORD = """__global__ void unordered(int32 *I, int64 *L, int32 *Y) {
  int32 i = *I;
  int64 l = *L;
  float f = bitcast<float>(i);
  double d = bitcast<double>(l);
  *Y = (f < 1.0 || f > 1.0) + 2 * (!(f < 1.0) && !(f > 1.0)) + 4 * (d < 1.0 || d > 1.0) +
       8 * (!(d < 1.0) && !(d > 1.0));
}
"""
S.source('kunord', KUNORD)
for i32, i64, name in [(0x3F800000, 0x3FF0000000000000, 'one'), (1, 1, 'subnormal1'),
                       (0, 0, 'zero'), (0x3F800001, 0x3FF0000000000001, 'one_ulp_up'),
                       (0x3F7FFFFF, 0x3FEFFFFFFFFFFFFF, 'one_ulp_down'),
                       (0xBF800000, 0xBFF0000000000000, 'minus_one'),
                       (0x7FC00000, 0x7FF8000000000000, 'nan'),
                       (0xFF800001, 0xFFF0000000000001, 'neg_nan'),
                       (0x7F800000, 0x7FF0000000000000, 'inf')]:
    f = float_of_bits(i32, 'float32')
    d = float_of_bits(i64, 'float64')
    y = int(f < 1.0 or f > 1.0) + 2 * int(not (f < 1.0) and not (f > 1.0)) + \
        4 * int(d < 1.0 or d > 1.0) + 8 * int(not (d < 1.0) and not (d > 1.0))
    S.add(case('bits_cmp_one_unordered_' + name,
               ['fuzz', 'op.bitcast', 'op.cmp', 'op.not', 'dtype.int32', 'dtype.int64',
                'dtype.float32', 'dtype.float64', 'float.nan'],
               source_ref='kunord', grid=[1],
               args=[buf('I', 'int32', 1, [util.wrap(i32, 'int32')]),
                     buf('L', 'int64', 1, [util.wrap(i64, 'int64')]),
                     buf('Y', 'int32', 1, fill=3)],
               expect=util.expect_outputs(Y=out([y], 'int32', 'exact'))))

# Seed 2026120506 (2026-12-05, one H200), kernel 64714: a bf16 converted to int64, its bits as
# uint64, converted to half and stored to f64. -100 gives 2^64 - 100, inf in half; the GPU
# stored 2^64 - 100: LLVM 19's InstCombine folds `fpext (uitofp x to half)` into `uitofp x to
# double` when x has at most 11 significant bits (here: an fptosi of a bf16), forgetting half's
# range (docs/upstream/llvm-instcombine-int-half-range.md); codegen converts 32/64-bit integers
# with an inline cvt.rn.
SIG64714 = 'gpu-mismatch|f64|addptr,and,bitcast,cast,cmp_lt,constant,load,mul,return,splat,store'
K64714 = """__global__ void fuzz(bf16 *X0, double *Y, int32 M, int32 N) {
  int rm[TM] = 0;
  int rn[TN] = 0;
  bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);
  bf16 *pX0[TM, TN] = X0 + rm[:, newaxis] * N + rn[newaxis, :];
  bf16 x0[TM, TN] = *pX0;
  double *pY[TM, TN] = Y + rm[:, newaxis] * N + rn[newaxis, :];
  half v0[TM, TN] = bitcast<uint64>((int64)(x0));
  *?(mask) pY = v0;
}
"""
finding_source('k64714', K64714, SIG64714)
for x, name in [(-100.0, ''), (98304.0, '_beyond_half'), (200.0, '_fits'), (-0.5, '_zero')]:
    u = util.wrap(int(x), 'uint64')                 # truncation toward zero, then the bits
    c = case('seed2026120506_kernel64714_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'cast', 'op.bitcast', 'dtype.bfloat16',
              'dtype.int64', 'dtype.uint64', 'dtype.float16', 'dtype.float64'],
             source_ref='k64714', defines={'TM': 1, 'TN': 1}, grid=[1, 1, 1],
             args=[buf('X0', 'bfloat16', [1, 1], [x]), buf('Y', 'float64', [1, 1], fill=3.0),
                   scalar('M', 'int32', 1), scalar('N', 'int32', 1)],
             expect=util.expect_outputs(Y=out([util.f16(u)], 'float64', 'exact')))
    add_finding(2026120506, 64714, SIG64714, name, c)

# The pattern on every 32/64-bit integer type: `x << SH` keeps at most 8 significant bits (SH =
# width - 8), which InstCombine takes as exact in half, so it widened the conversion (stored as
# f32 and f64) and formed it from `(half)(float)v`. Beyond 65504 the half is inf; SH = 4 fits.
KINTHALF = """__global__ void range(TYPE *X, float *Y, double *Z, int32 N) {
  int rm[TS] = get_program_id(0) * TS + 0 ... TS;
  bool mask[TS] = rm < N;
  TYPE x[TS] = *?(mask) (X + rm);
  half h[TS] = x << SH;
  *?(mask) (Y + rm) = h;
  *?(mask) (Y + N + rm) = (half)(float)(x << SH);
  *?(mask) (Z + rm) = (half)(double)(x << SH);
}
"""
S.source('kinthalf', KINTHALF)
rng6 = random.Random(2026120506)
for ty, bits in [('int32', 32), ('uint32', 32), ('int64', 64), ('uint64', 64)]:
    for sh in (bits - 8, 4):
        n, ts = 37, 16
        lo = -128 if ty.startswith('int') else 0
        xs = [0, 1, 255 if lo == 0 else -1, 127] + [rng6.randint(lo, lo + 255) for _ in range(n - 4)]
        vs = [util.wrap(x << sh, ty) for x in xs]
        y = [util.f16(v) for v in vs] + [util.f16(util.f32(v)) for v in vs]
        z = [util.f16(v) for v in vs]
        assert sh == 4 or any(math.isinf(v) for v in z)
        S.add(case('int_to_half_range_%s_sh%d' % (ty, sh),
                   ['fuzz', 'cast', 'op.shift', 'dtype.' + ty, 'dtype.float16', 'dtype.float32',
                    'dtype.float64'],
                   source_ref='kinthalf', defines={'TS': ts, 'TYPE': ty, 'SH': sh},
                   grid=[-(-n // ts)],
                   args=[buf('X', ty, n, xs), buf('Y', 'float32', 2 * n, fill=3.0),
                         buf('Z', 'float64', n, fill=3.0), scalar('N', 'int32', n)],
                   expect=util.expect_outputs(Y=out(y, 'float32', 'exact'),
                                              Z=out(z, 'float64', 'exact'))))

# Seed 2026120530 (2026-12-05, one H100), kernel 4428: `(x - x * 5) << 7` in int16 compared with
# an int read 1 where 0 is right for x = 64. InstCombine writes the product as `x * -512`,
# NVPTX as `neg.s16 (shl.b16 x, 9)`; ptxas sign-extends the operand before it negates where a
# signed 16-bit read follows (cvt.s32.s16, setp.s16, div.s16, ...), so -(-32768) became +32768
# (docs/upstream/ptxas-neg16-sext.md); codegen rewrites each `neg.s16` of the PTX as
# `sub.u16 d, 0, a` (tests/lit/gpu/fuzz-neg16-sext.tc). v0 wraps to int16 on assignment;
# `rm < v0` compares ints.
SIG4428 = ('gpu-mismatch|u16|addptr,cast,cmp_gt,cmp_lt,constant,get_program_id,if,load,mul,'
           'return,shl,splat,store,sub,yield')
K4428 = """__global__ void fuzz(int16 *X0, uint16 *Y, int32 N, int32 C) {
  int pm = get_program_id(0);
  int rm[TS] = pm;
  bool mask[TS] = rm < N;
  int16 *pX0[TS] = X0 + rm;
  int16 x0[TS] = *pX0;
  uint16 *pY[TS] = Y + rm;
  int16 v0[TS] = (((x0) - (x0 * 5)) << 7);
  int16 w1[TS] = 0;
  if (C > 0) {
  } else {
    w1 = (rm < v0);
  }
  *?(mask) pY = w1;
}
"""
finding_source('k4428', K4428, SIG4428)
for x0, n, cflag, name in [([0] * 8 + [64], 9, 0, ''),
                           ([64, -64, 0, 1, -1, 63, 65, 192, -192, 32767, -32768, 3], 12, 0, '_values'),
                           ([64, 64, 64], 3, 1, '_c_positive'), ([64, -1, 64], 2, 0, '_masked')]:
    g = len(x0)
    y = []
    for i in range(g):
        if i >= n:
            y.append(3)
            continue
        v0 = util.wrap((x0[i] - x0[i] * 5) << 7, 'int16')
        y.append(0 if cflag > 0 else (1 if i < v0 else 0))
    c = case('seed2026120530_kernel4428_gpu-mismatch' + name,
             ['fuzz', 'fuzz.gpu-mismatch', 'op.neg', 'op.shift', 'op.mul', 'cast', 'if',
              'dtype.int16', 'dtype.uint16', 'grid.multi'],
             source_ref='k4428', defines={'TS': 1}, grid=[g, 1, 1],
             args=[buf('X0', 'int16', g, x0), buf('Y', 'uint16', g, fill=3),
                   scalar('N', 'int32', n), scalar('C', 'int32', cflag)],
             expect=util.expect_outputs(Y=out(y, 'uint16', 'exact')))
    add_finding(2026120530, 4428, SIG4428, name, c)

# The pattern on loaded tiles: an int16 negation widened to int32, divided in int16 by a
# run-time divisor, and an int8 negation widened (8-bit values use the same 16-bit registers).
KNEG16 = """__global__ void widen(int16 *X, int32 *Y) {
  int r[TS] = 0 ... TS;
  int16 x[TS] = *(X + r);
  int16 n[TS] = -x;
  int32 w[TS] = n;
  *(Y + r) = w;
}

__global__ void divide(int16 *X, int16 *Y, int16 D) {
  int r[TS] = 0 ... TS;
  int16 x[TS] = *(X + r);
  int16 n[TS] = -x;
  *(Y + r) = n / D;
}

__global__ void widen8(int8 *X, int32 *Y) {
  int r[TS] = 0 ... TS;
  int8 x[TS] = *(X + r);
  int8 n[TS] = -x;
  int32 w[TS] = n;
  *(Y + r) = w;
}
"""
S.source('kneg16', KNEG16)
rng30 = random.Random(2026120530)
ts = 64
xs16 = [-32768, 32767, -32767, 0, 1, -1, 256, -256] + [rng30.randint(-32768, 32767) for _ in range(ts - 8)]
xs8 = [-128, 127, -127, 0, 1, -1, 64, -64] + [rng30.randint(-128, 127) for _ in range(ts - 8)]
S.add(case('neg16_widen', ['fuzz', 'op.neg', 'cast', 'dtype.int16', 'dtype.int32'],
           source_ref='kneg16', kernel='widen', defines={'TS': ts}, grid=[1],
           args=[buf('X', 'int16', ts, xs16), buf('Y', 'int32', ts, fill=3)],
           expect=util.expect_outputs(Y=out([util.wrap(-x, 'int16') for x in xs16], 'int32', 'exact'))))
for d in (3, -7):
    S.add(case('neg16_divide_by_%s' % str(d).replace('-', 'minus'),
               ['fuzz', 'op.neg', 'op.div', 'dtype.int16'],
               source_ref='kneg16', kernel='divide', defines={'TS': ts}, grid=[1],
               args=[buf('X', 'int16', ts, xs16), buf('Y', 'int16', ts, fill=3),
                     scalar('D', 'int16', d)],
               expect=util.expect_outputs(
                   Y=out([util.wrap(tdiv(util.wrap(-x, 'int16'), d), 'int16') for x in xs16],
                         'int16', 'exact'))))
S.add(case('neg8_widen', ['fuzz', 'op.neg', 'cast', 'dtype.int8', 'dtype.int32'],
           source_ref='kneg16', kernel='widen8', defines={'TS': ts}, grid=[1],
           args=[buf('X', 'int8', ts, xs8), buf('Y', 'int32', ts, fill=3)],
           expect=util.expect_outputs(Y=out([util.wrap(-x, 'int8') for x in xs8], 'int32', 'exact'))))

S.write(util.out_path('fuzz-findings.json'))
