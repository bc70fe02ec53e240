"""The kernels of bench/beyond.py (bench/kernels/: stencil, cross-entropy, RMSNorm, masked
matmul with bias and ReLU, column sums, persistent matmul) on the interpreter at small sizes, against NumPy
references computed here (float64), including the edges each kernel masks."""

import os

import numpy as np
import pytest

import triton_c

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "kernels")


def kernel(name, outputs):
    return triton_c.kernel(os.path.join(KERNELS, name + ".tc"), outputs=outputs)


@pytest.mark.parametrize("H,W,BH,BW", [(40, 72, 16, 32), (32, 64, 32, 64), (7, 9, 16, 16)])
def test_stencil(H, W, BH, BW):
    rng = np.random.default_rng(H * W)
    stride = W + 3
    x = rng.standard_normal((H, stride)).astype(np.float32)
    o = np.zeros_like(x)
    c0 = -4.0
    kern = kernel("stencil", ["O"])
    with pytest.warns(triton_c.LaunchWarning, match="never written"):  # the padding columns
        kern(x, o, H, W, stride, c0, ((H + BH - 1) // BH, (W + BW - 1) // BW), BH=BH, BW=BW)
    xp = np.zeros((H + 2, W + 2))
    xp[1:-1, 1:-1] = x[:, :W]
    want = c0 * xp[1:-1, 1:-1] + xp[:-2, 1:-1] + xp[2:, 1:-1] + xp[1:-1, :-2] + xp[1:-1, 2:]
    assert np.abs(o[:, :W] - want).max() < 1e-5


@pytest.mark.parametrize("M,N,BLOCK", [(5, 300, 128), (3, 64, 64), (2, 1000, 256)])
def test_cross_entropy(M, N, BLOCK):
    rng = np.random.default_rng(N)
    x = (3.0 * rng.standard_normal((M, N))).astype(np.float32)
    t = rng.integers(0, N, M).astype(np.int32)
    loss = np.zeros(M, np.float32)
    kernel("cross_entropy", ["L"])(x, t, loss, N, N, (M,), BLOCK=BLOCK)
    x64 = x.astype(np.float64)
    mx = x64.max(axis=1)
    want = np.log(np.exp(x64 - mx[:, None]).sum(axis=1)) + mx - x64[np.arange(M), t]
    assert np.abs(loss - want).max() < 1e-4


@pytest.mark.parametrize("M,N,BLOCK", [(4, 300, 512), (3, 64, 64)])
def test_rmsnorm(M, N, BLOCK):
    rng = np.random.default_rng(N)
    x = rng.standard_normal((M, N)).astype(np.float16)
    w = rng.random(N).astype(np.float16)
    y = np.zeros_like(x)
    kernel("rmsnorm", ["Y"])(x, y, w, N, N, 1e-6, (M,), BLOCK=BLOCK)
    x64 = x.astype(np.float64)
    want = x64 / np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + 1e-6) * w.astype(np.float64)
    # |y| below 8: one fp16 rounding is at most 2^-8
    assert np.abs(y.astype(np.float64) - want).max() < 4e-3


@pytest.mark.parametrize("M,N,K,TM,TN,TK", [(64, 64, 40, 32, 32, 16), (32, 32, 64, 32, 32, 32),
                                            (48, 32, 24, 16, 16, 16), (32, 16, 7, 16, 16, 16)])
def test_matmul_masked(M, N, K, TM, TN, TK):
    rng = np.random.default_rng(M + N + K)
    # small integers and halves: every product and sum is exact in fp32
    a = (rng.integers(-4, 5, (M, K)) / 2).astype(np.float16)
    b = (rng.integers(-4, 5, (K, N)) / 2).astype(np.float16)
    bias = rng.integers(-8, 9, N).astype(np.float32)
    c = np.zeros((M, N), np.float16)
    kernel("matmul_masked", ["C"])(a, b, c, bias, M, N, K, K, N, N, (M // TM, N // TN),
                                   TM=TM, TN=TN, TK=TK)
    want = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0.0)
    assert np.array_equal(c.astype(np.float64), want.astype(np.float16).astype(np.float64))


@pytest.mark.parametrize("M,N,BM,BN", [(100, 200, 16, 64), (64, 128, 32, 128)])
def test_colsum(M, N, BM, BN):
    rng = np.random.default_rng(M * N)
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = np.zeros(N, np.float32)
    kernel("colsum", ["Y"])(x, y, M, N, N, ((N + BN - 1) // BN,), BM=BM, BN=BN)
    assert np.abs(y - x.astype(np.float64).sum(axis=0)).max() < 1e-4


@pytest.mark.parametrize("M,N,K,TM,TN,TK,GROUP,programs",
                         [(80, 64, 48, 16, 16, 16, 2, 3),   # 5 tile rows: a short last group
                          (32, 64, 32, 16, 32, 16, 4, 1),   # one program for every tile
                          (32, 32, 16, 16, 16, 16, 8, 9)])  # more programs than tiles
def test_matmul_persistent(M, N, K, TM, TN, TK, GROUP, programs):
    rng = np.random.default_rng(M + N + K + programs)
    a = (rng.integers(-4, 5, (M, K)) / 2).astype(np.float16)
    b = (rng.integers(-4, 5, (K, N)) / 2).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)  # every tile must be written, once
    kernel("matmul_persistent", ["C"])(a, b, c, M, N, K, K, N, N, (programs,), TM=TM, TN=TN,
                                       TK=TK, GROUP=GROUP)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.array_equal(c.astype(np.float64), want.astype(np.float16).astype(np.float64))
