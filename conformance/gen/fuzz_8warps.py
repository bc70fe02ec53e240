#!/usr/bin/env python3
"""Generates conformance/cases/fuzz-8warps.json: the kernels that the GPU fuzz campaign of
2026-12-05 (seed 2026120530, an H100) found wrong at num_warps 8 (right at 4), through the
campaign's num_warps variant. Each case is the reduced kernel with "num_warps": 8 and new
small-integer data (the campaign's "small integers" mode, values -3..3), so every product and
sum is exact and the expected values below are computed here with Python integers,
independently of the implementation.

On the H100 the kernels came out wrong with the module made by ptxas from the PTX
(TC_CUBIN=auto, as triton-fuzz loads sm_90a modules) and right with the driver's JIT (the
runner's default) and at ptxas -O0. In ptxas's SASS the A descriptor of each warpgroup had no
high word (docs/upstream/ptxas-wgmma-desc-hi.md); the backend now builds descriptors from their
32-bit words. Run them through ptxas's modules, with and without the workaround:
  TC_CUBIN=ptxas triton-conformance run conformance/cases/fuzz-8warps.json --backend gpu
  TC_TEST_NO_PTXAS_WORKAROUND=1 TC_CUBIN=ptxas triton-conformance run ... --backend gpu

- kernel 164: the two-stage 128x128x128 wgmma matmul loop, every row of the tile row 0 of A
  (all 128 rows store to Y's row 0, so whichever row wins must hold A[0] @ B); plus the same
  loop with real rows.
- kernel 8589: one 128x16 attention step on wgmma from shared memory (every column of K^T is
  K's row 0), its row max broadcast over the accumulator.
- kernel 27520: one 128x32 attention step with `p @ v` on wgmma (registers), every row of a
  program the program's row of Q.
Run: python3 conformance/gen/fuzz_8warps.py
"""

import random

import util
from util import buf, scalar, out, case

S = util.Suite('fuzz-8warps', 'Kernels the GPU fuzz campaign of 2026-12-05 (seed 2026120530) '
               'found wrong at num_warps 8 with ptxas-made modules (right with the driver JIT; '
               'ptxas dropped the A descriptors\' high word, docs/upstream/ptxas-wgmma-desc-hi.md); '
               'small-integer data, expected values computed exactly by '
               'conformance/gen/fuzz_8warps.py. Show it on a GPU: TC_CUBIN=ptxas '
               'triton-conformance run conformance/cases/fuzz-8warps.json --backend gpu.')
rng = random.Random(2026120530)


def ints(n):
    return [rng.randint(-3, 3) for _ in range(n)]


FEATURES = ['fuzz', 'fuzz.gpu-mismatch', 'num_warps.8', 'dot', 'dot.float16', 'dtype.float16',
            'dtype.float32', 'loop', 'tile.2d']

K164 = """__global__ void fuzz(half *A, half *B, float *Y, int32 M __multipleof(16), int32 N __multipleof(16), int32 K __multipleof(16)) {
  int pm = 0;
  int rm[TM] = 0;
  int rn[TN] = 0 ... TN;
  int rk[TK] = 0 ... TK;
  float c[TM, TN] = 0;
  half *pa[TM, TK] = A + rm[:, newaxis] * K + rk[newaxis, :];
  half *pb[TK, TN] = B + rk[:, newaxis] * N + rn[newaxis, :];
  for (int k = 0; k < K; k += TK) {
    half a[TM, TK] = *pa;
    half b[TK, TN] = *pb;
    c += a @ b;
    pa = pa + TK;
    pb += TK;
  }
  bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);
  float *pY[TM, TN] = Y + rm[:, newaxis] * N + rn[newaxis, :];
  *?(mask) pY = c;
}
"""
S.source('k164', K164)
M, N, K = 64, 128, 128
A = ints(M * K)
B = ints(K * N)
y = [3] * (M * N)
for n in range(N):  # every row of the tile is row 0 of A, stored to Y's row 0
    y[n] = sum(A[k] * B[k * N + n] for k in range(K))
c = case('seed2026120530_kernel164_8warps', FEATURES + ['matmul.two_stages', 'matmul.wgmma'],
         source_ref='k164', defines={'TM': 128, 'TN': 128, 'TK': 128}, grid=[1, 1, 1],
         args=[buf('A', 'float16', [M, K], A), buf('B', 'float16', [K, N], B),
               buf('Y', 'float32', [M, N], fill=3), scalar('M', 'int32', M),
               scalar('N', 'int32', N), scalar('K', 'int32', K)],
         expect=util.expect_outputs(Y=out(y, 'float32', 'exact')))
c['num_warps'] = 8
S.add(c)

# The same loop with real rows (rm = 0 ... TM), two trips: Y = A @ B.
K164R = K164.replace("int rm[TM] = 0;", "int rm[TM] = 0 ... TM;")
assert K164R != K164
S.source('k164rows', K164R)
M, N, K = 128, 128, 256
A = ints(M * K)
B = ints(K * N)
# the loop advances pb by TK (not TK * N): trip t reads rows t*TK.. of B shifted by t*TK columns
y = []
for m in range(M):
    for n in range(N):
        acc = 0
        for t in range(K // 128):
            for kk in range(128):
                acc += A[m * K + t * 128 + kk] * B[kk * N + n + t * 128]
        y.append(acc)
c = case('seed2026120530_kernel164_8warps_rows', FEATURES + ['matmul.two_stages', 'matmul.wgmma'],
         source_ref='k164rows', defines={'TM': 128, 'TN': 128, 'TK': 128}, grid=[1, 1, 1],
         args=[buf('A', 'float16', [M, K], A), buf('B', 'float16', [K + 1, N], B + [0] * N),
               buf('Y', 'float32', [M, N], fill=3), scalar('M', 'int32', M),
               scalar('N', 'int32', N), scalar('K', 'int32', K)],
         expect=util.expect_outputs(Y=out(y, 'float32', 'exact')))
c['num_warps'] = 8
S.add(c)

K8589 = """__global__ void fuzz(half *Q, half *K, half *V, float *Y, int32 M, int32 N, int32 ld __multipleof(8), int32 H) {
  int rm[BM] = 1;
  int rn[BN] = 0;
  int rd[HD] = 0 ... HD;
  int oq = 0;
  int ok = 0;
  bool mq[BM, HD] = (rm[:, newaxis] < M) && (rd[newaxis, :] < HD);
  half *pq[BM, HD] = Q + oq + rm[:, newaxis] * ld + rd[newaxis, :];
  half q[BM, HD] = *pq;
  float acc[BM, HD] = 0;
  for (int n0 = 0; n0 < N; n0 += BN) {
    half *pk[HD, BN] = K + ok + rd[:, newaxis] + (n0 + rn[newaxis, :]) * ld;
    half kt[HD, BN] = *pk;
    float s[BM, BN] = q @ kt;
    float sm[BM, BN] = s;
    float mij[BM] = sm[:, max];
    float alpha[BM] = mij;
    acc = alpha[:, newaxis];
  }
  float *py[BM, HD] = Y + oq + rm[:, newaxis] * ld + rd[newaxis, :];
  *?(mq) py = acc;
}
"""
S.source('k8589', K8589)
Q = ints(64 * 40)
Kt = ints(16 * 40)
V = ints(16 * 40)
y = [3] * (64 * 40)
best = sum(Q[1 * 40 + d] * Kt[0 * 40 + d] for d in range(32))  # every column of K^T is K's row 0
for d in range(32):
    y[1 * 40 + d] = best
c = case('seed2026120530_kernel8589_8warps', FEATURES + ['attention', 'reduce.max'],
         source_ref='k8589', defines={'BM': 128, 'BN': 16, 'HD': 32}, grid=[1, 1, 1],
         args=[buf('Q', 'float16', [1, 64, 40], Q), buf('K', 'float16', [1, 16, 40], Kt),
               buf('V', 'float16', [1, 16, 40], V), buf('Y', 'float32', [1, 64, 40], fill=3),
               scalar('M', 'int32', 64), scalar('N', 'int32', 16), scalar('ld', 'int32', 40),
               scalar('H', 'int32', 1)],
         expect=util.expect_outputs(Y=out(y, 'float32', 'exact')))
c['num_warps'] = 8
S.add(c)

K27520 = """__global__ void fuzz(half *Q, half *K, half *V, float *L, float *Y, int32 M, int32 N, int32 ld __multipleof(8), int32 H, float scale) {
  int pm = get_program_id(0);
  int ph = 0;
  int rm[BM] = pm;
  int rn[BN] = 0 ... BN;
  int rd[HD] = 0 ... HD;
  int oq = 0;
  int ok = 0;
  bool mq[BM, HD] = (rm[:, newaxis] < M) && (rd[newaxis, :] < HD);
  half *pq[BM, HD] = Q + oq + rm[:, newaxis] * ld + rd[newaxis, :];
  half q[BM, HD] = *pq;
  float mi[BM] = 0;
  float acc[BM, HD] = 0;
  for (int n0 = 0; n0 < N; n0 += BN) {
    half *pk[HD, BN] = K + ok + rd[:, newaxis] + (n0 + rn[newaxis, :]) * ld;
    half *pv[BN, HD] = V + ok + (n0 + rn[:, newaxis]) * ld + rd[newaxis, :];
    bool cn[BN] = n0 + rn < N;
    bool mk[HD, BN] = (rd[:, newaxis] < HD) && cn[newaxis, :];
    half kt[HD, BN] = *pk;
    float s[BM, BN] = q @ kt;
    float sm[BM, BN] = s;
    float mij[BM] = sm[:, max];
    float p[BM, BN] = sm;
    float alpha[BM] = mij;
    bool mv[BN, HD] = cn[:, newaxis] && (rd[newaxis, :] < HD);
    half v[BN, HD] = mv ? *pv : 0;
    acc = acc * alpha[:, newaxis] + (half)p @ v;
  }
  float *py[BM, HD] = Y + oq + rm[:, newaxis] * ld + rd[newaxis, :];
  *?(mq) py = acc;
}
"""
S.source('k27520', K27520)
Q = ints(128 * 40)
Kt = ints(32 * 40)
V = ints(32 * 40)
y = [3] * (128 * 40)
for pm in range(2):  # program pm: every row is Q's row pm, stored to Y's row pm
    s = [sum(Q[pm * 40 + d] * Kt[j * 40 + d] for d in range(32)) for j in range(32)]
    assert all(abs(v) <= 2048 for v in s)  # exact in half
    for d in range(32):
        y[pm * 40 + d] = sum(s[j] * V[j * 40 + d] for j in range(32))
c = case('seed2026120530_kernel27520_8warps', FEATURES + ['attention', 'dot.register_operand'],
         source_ref='k27520', defines={'BM': 128, 'BN': 32, 'HD': 32}, grid=[2, 1, 1],
         args=[buf('Q', 'float16', [1, 128, 40], Q), buf('K', 'float16', [1, 32, 40], Kt),
               buf('V', 'float16', [1, 32, 40], V), buf('L', 'float32', [1, 128], fill=3),
               buf('Y', 'float32', [1, 128, 40], fill=3), scalar('M', 'int32', 128),
               scalar('N', 'int32', 32), scalar('ld', 'int32', 40), scalar('H', 'int32', 1),
               scalar('scale', 'float32', 1.0)],
         expect=util.expect_outputs(Y=out(y, 'float32', 'exact'),
                                    L=out([3] * 128, 'float32', 'exact')))
c['num_warps'] = 8
S.add(c)

S.write(util.out_path('fuzz-8warps.json'))
