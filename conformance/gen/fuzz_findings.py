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
Run: python3 conformance/gen/fuzz_findings.py
"""

import math
import random
from decimal import Decimal, getcontext
from fractions import Fraction

import util
from util import buf, scalar, out, case

S = util.Suite('fuzz-findings', 'Findings of the GPU fuzz campaigns of 2026-11-26/28 (seeds '
               '20261126, 20261128), reduced; expected values computed by '
               'conformance/gen/fuzz_findings.py from the language rules. Run on the GPU with '
               '`triton-conformance run conformance/cases/fuzz-findings.json --backend gpu`.')
rng = random.Random(20261126)


def wrap32(v):
    return util.wrap(v, 'int32')


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

S.write(util.out_path('fuzz-findings.json'))
