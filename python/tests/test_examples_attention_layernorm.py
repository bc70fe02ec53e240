"""examples/attention.tc (FlashAttention-2 forward), examples/layernorm.tc and layernorm_row.tc (LayerNorm
forward) on the interpreter, small sizes, against float64 NumPy references computed here."""

import os

import numpy as np
import pytest

import triton_c

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def attention_reference(q, k, v, sm_scale, causal=False):
    """softmax(sm_scale * Q K^T) V and the row's log2-sum-exp2 of the scaled scores; with
    `causal` row i attends to keys 0 .. i only."""
    n = q.shape[-2]
    s = (q.astype(np.float64) @ np.swapaxes(k, -1, -2).astype(np.float64)) * sm_scale
    if causal:
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    mx = s.max(axis=-1, keepdims=True)
    e = np.exp(s - mx)
    den = e.sum(axis=-1, keepdims=True)
    return (e / den) @ v.astype(np.float64), (mx[..., 0] + np.log(den[..., 0])) / np.log(2.0)


@pytest.mark.parametrize("Z,H,N,D,BM,BN", [(1, 2, 128, 32, 32, 16), (2, 1, 64, 64, 64, 32),
                                           (1, 1, 96, 16, 32, 32)])
def test_attention_matches_numpy(Z, H, N, D, BM, BN):
    rng = np.random.default_rng(N + D)
    q, k, v = (rng.normal(0.0, 0.5, (Z, H, N, D)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    m = np.zeros((Z, H, N), np.float32)
    kern = triton_c.kernel(os.path.join(EXAMPLES, "attention.tc"), outputs=["Out", "M"])
    sm_scale = 0.5
    kern(q, k, v, sm_scale, m, o, H * N * D, N * D, D, Z, H, N, (N // BM, Z * H),
         BLOCK_M=BM, BLOCK_N=BN, HEAD_DIM=D)
    ref, lse = attention_reference(q, k, v, sm_scale)
    # P is rounded to fp16 before P @ V (as in the tutorial): a relative error of about
    # 2^-11 per term; the outputs are below 2 in magnitude
    assert np.abs(o.astype(np.float64) - ref).max() < 2e-3
    assert np.abs(m.astype(np.float64) - lse).max() < 1e-4
    # a wrong scale or a missed block changes the result far beyond the tolerance
    other, _ = attention_reference(q, k, v, 0.6)
    assert np.abs(other - ref).max() > 1e-2


@pytest.mark.parametrize("Z,H,N,D,BM,BN", [(1, 2, 128, 32, 32, 16), (2, 1, 64, 64, 64, 32),
                                           (1, 1, 96, 16, 32, 32)])
def test_attention_causal_matches_numpy(Z, H, N, D, BM, BN):
    rng = np.random.default_rng(3 * N + D)
    q, k, v = (rng.normal(0.0, 0.5, (Z, H, N, D)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    m = np.zeros((Z, H, N), np.float32)
    kern = triton_c.kernel(os.path.join(EXAMPLES, "attention_causal.tc"), outputs=["Out", "M"])
    kern(q, k, v, 0.5, m, o, H * N * D, N * D, D, Z, H, N, (N // BM, Z * H),
         BLOCK_M=BM, BLOCK_N=BN, HEAD_DIM=D)
    ref, lse = attention_reference(q, k, v, 0.5, causal=True)
    assert np.abs(o.astype(np.float64) - ref).max() < 2e-3
    assert np.abs(m.astype(np.float64) - lse).max() < 1e-4
    # the first row attends to its own key alone: Out = V's first row, exactly in fp16
    assert (o[:, :, 0, :] == v[:, :, 0, :]).all()
    # without the mask (every key) the result is far from it
    full, _ = attention_reference(q, k, v, 0.5)
    assert np.abs(full - ref).max() > 1e-2


def test_attention_large_scores_stay_finite():
    # scores of several hundred: exp would overflow without the running maximum
    rng = np.random.default_rng(7)
    Z, H, N, D = 1, 1, 64, 32
    q, k, v = (rng.normal(0.0, 4.0, (Z, H, N, D)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    m = np.zeros((Z, H, N), np.float32)
    kern = triton_c.kernel(os.path.join(EXAMPLES, "attention.tc"), outputs=["Out", "M"])
    kern(q, k, v, 1.0, m, o, H * N * D, N * D, D, Z, H, N, (N // 32, Z * H),
         BLOCK_M=32, BLOCK_N=16, HEAD_DIM=D)
    ref, lse = attention_reference(q, k, v, 1.0)
    assert np.isfinite(o).all()
    assert np.abs(o.astype(np.float64) - ref).max() < 2e-2  # |v| up to ~16: fp16 rounding
    assert np.abs(m.astype(np.float64) - lse).max() / np.abs(lse).max() < 1e-5


@pytest.mark.parametrize("source,M,N,stride,BLOCK", [
    ("layernorm.tc", 8, 300, 304, 128), ("layernorm.tc", 4, 1024, 1024, 1024),
    ("layernorm.tc", 3, 40, 48, 64),
    # one pass over X: the row in one tile (N <= BLOCK)
    ("layernorm_row.tc", 8, 300, 304, 512), ("layernorm_row.tc", 3, 40, 48, 64)])
def test_layernorm_matches_numpy(source, M, N, stride, BLOCK):
    rng = np.random.default_rng(N)
    xs = (-2.3 + 0.5 * rng.standard_normal((M, stride))).astype(np.float16)
    x = xs[:, :N]
    w = rng.random(N).astype(np.float16)
    b = rng.random(N).astype(np.float16)
    y = np.zeros_like(xs)
    mean = np.zeros(M, np.float32)
    rstd = np.zeros(M, np.float32)
    kern = triton_c.kernel(os.path.join(EXAMPLES, source), outputs=["Y", "Mean", "Rstd"])
    if N == stride:
        kern(xs, y, w, b, mean, rstd, stride, N, 1e-5, (M,), BLOCK=BLOCK)
    else:  # the padding columns of Y are never written, and the launch says so
        with pytest.warns(triton_c.LaunchWarning, match="never written"):
            kern(xs, y, w, b, mean, rstd, stride, N, 1e-5, (M,), BLOCK=BLOCK)
    x64 = x.astype(np.float64)
    m64 = x64.mean(axis=1)
    v64 = ((x64 - m64[:, None]) ** 2).mean(axis=1)
    r64 = 1.0 / np.sqrt(v64 + 1e-5)
    y64 = (x64 - m64[:, None]) * r64[:, None] * w.astype(np.float64) + b.astype(np.float64)
    # y is below 4 in magnitude: one fp16 rounding is at most 2^-10
    assert np.abs(y[:, :N].astype(np.float64) - y64).max() < 2e-3
    assert not y[:, N:].any()  # columns past N are never written
    assert np.abs(mean - m64).max() < 1e-5
    assert (np.abs(rstd - r64) / r64).max() < 1e-5


def test_layernorm_row_refuses_a_row_longer_than_its_tile():
    """layernorm_row.tc keeps the row in one tile: N > BLOCK traps through its assert."""
    kern = triton_c.kernel(os.path.join(EXAMPLES, "layernorm_row.tc"),
                           outputs=["Y", "Mean", "Rstd"])
    x = np.zeros((2, 104), np.float16)
    w = np.ones(104, np.float16)
    with pytest.raises(triton_c.TrapError, match="N <= BLOCK"):
        kern(x, np.zeros_like(x), w, w, np.zeros(2, np.float32), np.zeros(2, np.float32),
             104, 100, 1e-5, (2,), BLOCK=64)
