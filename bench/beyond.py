#!/usr/bin/env python3
"""Kernels beyond the four benchmarks: ours (bench/kernels/*.tc through triton-run --bench)
against the same algorithms written in Triton (in this file), in one call on the GPU
machine, with a table of times, GB/s or TFLOP/s and ratios.

    python3 bench/beyond.py --bin dist/bin [--only stencil,cross_entropy,...]
        [--disable-opt LIST] [--no-check] [--json OUT.json] [--log beyond.log]

The kernels (same tile sizes, warps and loop structure on both sides):

  stencil        5-point stencil, fp32 8192 x 8192, 32 x 64 tiles, 4 warps
  cross_entropy  cross-entropy forward, fp32 logits 4096 x 32768, chunks of 1024, 4 warps
  rmsnorm        RMSNorm forward, fp16 4096 x 4096, one row a program, 8 warps
  matmul_masked  relu(A @ B + bias), fp16 4096^3, the tutorial's masked k-tail,
                 128 x 128 x 64 tiles, 8 warps, 3 stages
  colsum         column sums, fp32 8192 x 8192, 32 x 128 tiles, 4 warps
  matmul_int8    A @ B, int8 operands, int32 accumulator, 4096^3, 128 x 128 x 64 tiles,
                 8 warps, 3 stages
  matmul_wide    A @ B, fp16 -> fp32 accumulator -> fp16, 4096^3, the tutorial kernel
                 (examples/matmul.tc) at 128 x 256 x 64 tiles, 8 warps, 3 stages (the
                 tutorial's first autotune config); also cuBLAS (torch's A @ B)
  matmul_persistent  the same product by persistent programs (one per SM) walking the
                 tiles in groups of 8 tile rows, 128 x 256 x 64 tiles, 8 warps, 3 stages
                 (bench/kernels/matmul_persistent.tc; Triton's side is the same loop
                 nest); also cuBLAS
  attention_causal, attention_causal_d128
                 causal FlashAttention-2 forward (examples/attention_causal.tc: the
                 blocks left of the diagonal, then the diagonal blocks masked), fp16,
                 Z=4 H=32 N=4096, D 64 (128 x 64 tiles) and 128 (128 x 32), 8 warps, 3
                 stages; FLOP = 2 Z H N^2 D; also torch's SDPA with is_causal

Method: ours is `triton-run --bench` (median of 100 launches, L2 flushed before each, as
Triton's do_bench does), checked first against the interpreter (`triton-run --compare`)
at a small size of the same kernel and configuration (a mismatch makes the exit status 1;
--no-check skips it). Triton's is `triton.testing.do_bench` (its median, L2 flushed) on
torch CUDA tensors of the same sizes and distributions (the timed matmuls take randn on
both sides: a tensor core's clock depends on the data); without triton, torch or a GPU only
ours is measured.
The ratio is Triton's time over ours (above 1: ours is faster); the cuBLAS column (torch's own
op, where there is one) is its time over ours.
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "bench", "kernels")


# Each kernel: our defines and warps, the launch at full size and at the check's size
# (triton-run arguments), bytes moved or flops, and Triton's side.
def spec_stencil(full=True):
    H, W = (8192, 8192) if full else (100, 200)
    return {
        "src": "stencil.tc", "defines": ["-DBH=32", "-DBW=64", "--num-warps", "4"],
        "args": ["--grid", "cdiv(H, BH), cdiv(W, BW)", "--arg", "H=%d" % H, "--arg", "W=%d" % W,
                 "--arg", "stride=%d" % W, "--arg", "c0=-4.0",
                 "--arg", "X=randn:f32[%d,%d]" % (H, W), "--arg", "O=zeros:f32[%d,%d]" % (H, W)],
        "bytes": 2 * H * W * 4, "size": "%d x %d fp32" % (H, W), "H": H, "W": W,
    }


def spec_cross_entropy(full=True):
    M, N = (4096, 32768) if full else (8, 3000)
    return {
        "src": "cross_entropy.tc", "defines": ["-DBLOCK=1024", "--num-warps", "4"],
        "args": ["--grid", str(M), "--arg", "stride=%d" % N, "--arg", "N=%d" % N,
                 "--arg", "X=randn:f32[%d,%d]" % (M, N),
                 "--arg", "T=randint:0:%d:i32[%d]" % (N - 1, M), "--arg", "L=zeros:f32[%d]" % M],
        "bytes": M * N * 4 + M * 8, "size": "%d x %d fp32" % (M, N), "M": M, "N": N,
    }


def spec_rmsnorm(full=True):
    M, N = (4096, 4096) if full else (8, 4096)
    return {
        "src": "rmsnorm.tc", "defines": ["-DBLOCK=4096", "--num-warps", "8"],
        "args": ["--grid", str(M), "--arg", "stride=%d" % N, "--arg", "N=%d" % N,
                 "--arg", "eps=1e-6", "--arg", "X=randn:f16[%d,%d]" % (M, N),
                 "--arg", "Y=zeros:f16[%d,%d]" % (M, N), "--arg", "W=rand:f16[%d]" % N],
        "bytes": 2 * M * N * 2 + N * 2, "size": "%d x %d fp16" % (M, N), "M": M, "N": N,
    }


def spec_matmul_masked(full=True):
    M = N = K = 4096 if full else 256
    return {
        "src": "matmul_masked.tc",
        "defines": ["-DTM=128", "-DTN=128", "-DTK=64", "--num-warps", "8", "--num-stages", "3"],
        "args": ["--grid", "M / TM, N / TN", "--arg", "M=%d" % M, "--arg", "N=%d" % N,
                 "--arg", "K=%d" % K, "--arg", "lda=%d" % K, "--arg", "ldb=%d" % N,
                 "--arg", "ldc=%d" % N, "--arg", "A=randn:f16[%d,%d]" % (M, K),
                 "--arg", "B=randn:f16[%d,%d]" % (K, N), "--arg", "C=zeros:f16[%d,%d]" % (M, N),
                 "--arg", "bias=randn:f32[%d]" % N],
        "flops": 2 * M * N * K, "size": "%d^3 fp16" % M, "M": M, "N": N, "K": K,
        # fp16 products of randn summed over K in fp32: the order differs
        "tol": ["--rtol", "1e-2", "--atol", "5e-2"],
    }


def spec_colsum(full=True):
    M, N = (8192, 8192) if full else (300, 256)
    return {
        "src": "colsum.tc", "defines": ["-DBM=32", "-DBN=128", "--num-warps", "4"],
        "args": ["--grid", "cdiv(N, BN)", "--arg", "M=%d" % M, "--arg", "N=%d" % N,
                 "--arg", "stride=%d" % N, "--arg", "X=randn:f32[%d,%d]" % (M, N),
                 "--arg", "Y=zeros:f32[%d]" % N],
        "bytes": M * N * 4 + N * 4, "size": "%d x %d fp32" % (M, N), "M": M, "N": N,
    }


def spec_matmul_int8(full=True):
    M = N = K = 4096 if full else 256
    return {
        "src": "matmul_int8.tc",
        "defines": ["-DTM=128", "-DTN=128", "-DTK=64", "--num-warps", "8", "--num-stages", "3"],
        "args": ["--grid", "M / TM, N / TN", "--arg", "M=%d" % M, "--arg", "N=%d" % N,
                 "--arg", "K=%d" % K, "--arg", "lda=%d" % K, "--arg", "ldb=%d" % N,
                 "--arg", "ldc=%d" % N, "--arg", "A=randint:-128:127:i8[%d,%d]" % (M, K),
                 "--arg", "B=randint:-128:127:i8[%d,%d]" % (K, N),
                 "--arg", "C=zeros:i32[%d,%d]" % (M, N)],
        "flops": 2 * M * N * K, "size": "%d^3 int8" % M, "M": M, "N": N, "K": K,
    }


def matmul_inputs(full):
    """The fp16 matmuls' input distribution: small integers for the check (every product
    and sum exact, so it is exact), randn for the timed size, as Triton's and cuBLAS's
    sides get: a tensor core draws less power on small integers (a fifth of them zero)
    and keeps a higher clock (2026-12-06: 4% at 4096^3 on an H100)."""
    return "randn" if full else "randint:-2:2"


def spec_matmul_wide(full=True):
    M = N = K = 4096 if full else 512
    dist = matmul_inputs(full)
    return {
        "src": os.path.join(ROOT, "examples", "matmul.tc"),
        "defines": ["-DTM=128", "-DTN=256", "-DTK=64", "-DTYPE=half", "--num-warps", "8",
                    "--num-stages", "3"],
        "args": ["--grid", "M / TM, N / TN", "--arg", "M=%d" % M, "--arg", "N=%d" % N,
                 "--arg", "K=%d" % K, "--arg", "lda=%d" % K, "--arg", "ldb=%d" % N,
                 "--arg", "ldc=%d" % N, "--arg", "A=%s:f16[%d,%d]" % (dist, M, K),
                 "--arg", "B=%s:f16[%d,%d]" % (dist, K, N),
                 "--arg", "C=zeros:f16[%d,%d]" % (M, N)],
        "flops": 2 * M * N * K, "size": "%d^3 fp16" % M, "M": M, "N": N, "K": K,
    }


def sm_count():
    """The GPU's SM count (torch's device properties), else 132 (H100 SXM and H200)."""
    try:
        import torch
        if torch.cuda.is_available():
            return torch.cuda.get_device_properties(0).multi_processor_count
    except ImportError:
        pass
    return 132


def spec_matmul_persistent(full=True):
    # small: 640 = 5 tile rows of 128, so the last group of 8 tile rows is short
    M, N, K = (4096, 4096, 4096) if full else (640, 512, 640)
    dist = matmul_inputs(full)
    return {
        "src": "matmul_persistent.tc",
        "defines": ["-DTM=128", "-DTN=256", "-DTK=64", "-DGROUP=8", "--num-warps", "8",
                    "--num-stages", "3"],
        "args": ["--grid", str(sm_count() if full else 7), "--arg", "M=%d" % M,
                 "--arg", "N=%d" % N, "--arg", "K=%d" % K, "--arg", "lda=%d" % K,
                 "--arg", "ldb=%d" % N, "--arg", "ldc=%d" % N,
                 "--arg", "A=%s:f16[%d,%d]" % (dist, M, K),
                 "--arg", "B=%s:f16[%d,%d]" % (dist, K, N),
                 "--arg", "C=zeros:f16[%d,%d]" % (M, N)],
        "flops": 2 * M * N * K, "size": "%d^3 fp16" % M, "M": M, "N": N, "K": K,
    }


def spec_attention_causal(full=True, D=64):
    # The attention benchmark's configuration per HEAD_DIM (bench/attention_layernorm.py);
    # small: N = 384, 3 row blocks (the first loop runs 0, 2 and 4 trips at D = 64).
    Z, H, N = (4, 32, 4096) if full else (1, 2, 384)
    BM, BN = (128, 64) if D == 64 else (128, 32)
    shape = "%d,%d,%d,%d" % (Z, H, N, D)
    return {
        "src": os.path.join(ROOT, "examples", "attention_causal.tc"),
        "defines": ["-DBLOCK_M=%d" % BM, "-DBLOCK_N=%d" % BN, "-DHEAD_DIM=%d" % D,
                    "--num-warps", "8", "--num-stages", "3"],
        "args": ["--grid", "N_CTX / BLOCK_M, Z * H", "--arg", "Z=%d" % Z, "--arg", "H=%d" % H,
                 "--arg", "N_CTX=%d" % N, "--arg", "stride_z=%d" % (H * N * D),
                 "--arg", "stride_h=%d" % (N * D), "--arg", "stride_n=%d" % D,
                 "--arg", "sm_scale=%g" % (D ** -0.5),
                 "--arg", "Q=randn:f16[%s]" % shape, "--arg", "K=randn:f16[%s]" % shape,
                 "--arg", "V=randn:f16[%s]" % shape, "--arg", "M=zeros:f32[%d,%d,%d]" % (Z, H, N),
                 "--arg", "Out=zeros:f16[%s]" % shape],
        # half of the non-causal 4 Z H N^2 D (the tutorial's count for causal)
        "flops": 2 * Z * H * N * N * D, "size": "Z=%d H=%d N=%d D=%d fp16" % (Z, H, N, D),
        "Z": Z, "H": H, "N": N, "D": D, "BM": BM, "BN": BN,
        # P rounded to fp16 before P @ V, the GPU's exp2: attention's tolerance
        "tol": ["--atol", "2e-3"],
    }


def spec_attention_causal_d128(full=True):
    return spec_attention_causal(full, 128)


SPECS = {"stencil": spec_stencil, "cross_entropy": spec_cross_entropy, "rmsnorm": spec_rmsnorm,
         "matmul_masked": spec_matmul_masked, "colsum": spec_colsum,
         "matmul_int8": spec_matmul_int8, "matmul_wide": spec_matmul_wide,
         "matmul_persistent": spec_matmul_persistent,
         "attention_causal": spec_attention_causal,
         "attention_causal_d128": spec_attention_causal_d128}


# Kernels with a torch op that computes the same thing (cuBLAS for a plain matmul, SDPA
# with is_causal for causal attention).
TORCH_OPS = {"matmul_wide", "matmul_persistent", "attention_causal", "attention_causal_d128"}


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "timed out after %d s" % timeout
    return p.returncode, p.stdout + p.stderr


def ours(trun, name, extra, check, log):
    """(ok, median ms) of our kernel: --compare at the small size, then --bench."""
    ok = True
    if check:
        s = SPECS[name](False)
        cmd = [trun, os.path.join(KERNELS, s["src"])] + s["defines"] + s["args"] + \
            ["--compare"] + s.get("tol", []) + extra
        rc, text = run(cmd, 900)
        log.write("$ %s\n%s\n" % (" ".join(cmd), text))
        ok = rc == 0
        if not ok:
            print("  %s: ours differs from the interpreter (or failed): %s"
                  % (name, (text.strip().splitlines() or ["?"])[-1]))
    s = SPECS[name](True)
    cmd = [trun, os.path.join(KERNELS, s["src"])] + s["defines"] + s["args"] + ["--bench"] + extra
    rc, text = run(cmd, 900)
    log.write("$ %s\n%s\n" % (" ".join(cmd), text))
    m = re.findall(r"^\s*median\s+([0-9.]+) ms", text, re.M)
    if rc != 0 or not m:
        print("  %s: ours FAILED: %s" % (name, (text.strip().splitlines() or ["?"])[-1]))
        return False, None
    return ok, float(m[-1])


def triton_side():
    """The Triton kernels and a runner per name, or None (no triton, torch or GPU)."""
    try:
        import torch
        import triton
        import triton.language as tl
        if not torch.cuda.is_available():
            return None
    except ImportError:
        return None

    @triton.jit
    def stencil(X, O, H, W, stride, c0, BH: tl.constexpr, BW: tl.constexpr):
        ri = tl.program_id(0) * BH + tl.arange(0, BH)
        rj = tl.program_id(1) * BW + tl.arange(0, BW)
        p = X + ri[:, None] * stride + rj[None, :]
        inb = (ri[:, None] < H) & (rj[None, :] < W)
        xc = tl.load(p, mask=inb, other=0.0)
        xn = tl.load(p - stride, mask=inb & (ri[:, None] >= 1), other=0.0)
        xs = tl.load(p + stride, mask=(ri[:, None] + 1 < H) & (rj[None, :] < W), other=0.0)
        xw = tl.load(p - 1, mask=inb & (rj[None, :] >= 1), other=0.0)
        xe = tl.load(p + 1, mask=(ri[:, None] < H) & (rj[None, :] + 1 < W), other=0.0)
        tl.store(O + ri[:, None] * stride + rj[None, :], c0 * xc + xn + xs + xw + xe, mask=inb)

    @triton.jit
    def cross_entropy(X, T, L, stride, N, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        xr = X + row * stride
        mx = tl.full([], -float("inf"), tl.float32)
        s = tl.full([], 0.0, tl.float32)
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            x = tl.load(xr + cols, mask=cols < N, other=-float("inf"))
            mnew = tl.maximum(mx, tl.max(x, axis=0))
            s = s * tl.exp(mx - mnew) + tl.sum(tl.exp(x - mnew), axis=0)
            mx = mnew
        tl.store(L + row, tl.log(s) + mx - tl.load(xr + tl.load(T + row)))

    @triton.jit
    def rmsnorm(X, Y, W, stride, N, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        m = cols < N
        x = tl.load(X + row * stride + cols, mask=m, other=0.0).to(tl.float32)
        rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
        w = tl.load(W + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(Y + row * stride + cols, (x * rstd * w).to(tl.float16), mask=m)

    @triton.jit
    def matmul_masked(A, B, C, bias, M, N, K, lda, ldb, ldc, TM: tl.constexpr, TN: tl.constexpr,
                      TK: tl.constexpr):
        rm = tl.program_id(0) * TM + tl.arange(0, TM)
        rn = tl.program_id(1) * TN + tl.arange(0, TN)
        rk = tl.arange(0, TK)
        c = tl.zeros((TM, TN), tl.float32)
        pa = A + rm[:, None] * lda + rk[None, :]
        pb = B + rk[:, None] * ldb + rn[None, :]
        for k in range(0, K, TK):
            a = tl.load(pa, mask=rk[None, :] < K - k, other=0.0)
            b = tl.load(pb, mask=rk[:, None] < K - k, other=0.0)
            c += tl.dot(a, b)
            pa += TK
            pb += TK * ldb
        bv = tl.load(bias + rn, mask=rn < N, other=0.0)
        c = tl.maximum(c + bv[None, :], 0.0)
        tl.store(C + rm[:, None] * ldc + rn[None, :], c.to(tl.float16))

    @triton.jit
    def colsum(X, Y, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
        rn = tl.program_id(0) * BN + tl.arange(0, BN)
        rm = tl.arange(0, BM)
        acc = tl.zeros((BM, BN), tl.float32)
        for m0 in range(0, M, BM):
            rows = m0 + rm
            msk = (rows[:, None] < M) & (rn[None, :] < N)
            acc += tl.load(X + rows[:, None] * stride + rn[None, :], mask=msk, other=0.0)
        tl.store(Y + rn, tl.sum(acc, axis=0), mask=rn < N)

    @triton.jit
    def matmul_tile(A, B, C, pm, pn, K, lda, ldb, ldc, TM: tl.constexpr, TN: tl.constexpr,
                    TK: tl.constexpr, ACC: tl.constexpr):
        # The tutorial's loop for tile (pm, pn): ACC accumulates, C's type is stored.
        rm = pm * TM + tl.arange(0, TM)
        rn = pn * TN + tl.arange(0, TN)
        rk = tl.arange(0, TK)
        c = tl.zeros((TM, TN), ACC)
        pa = A + rm[:, None] * lda + rk[None, :]
        pb = B + rk[:, None] * ldb + rn[None, :]
        for k in range(0, K, TK):
            c += tl.dot(tl.load(pa), tl.load(pb))
            pa += TK
            pb += TK * ldb
        tl.store(C + rm[:, None] * ldc + rn[None, :], c.to(C.dtype.element_ty))

    @triton.jit
    def matmul(A, B, C, M, N, K, lda, ldb, ldc, TM: tl.constexpr, TN: tl.constexpr,
               TK: tl.constexpr, ACC: tl.constexpr):
        # One tile a program (matmul_int8, matmul_wide).
        matmul_tile(A, B, C, tl.program_id(0), tl.program_id(1), K, lda, ldb, ldc, TM, TN, TK,
                    ACC)

    @triton.jit
    def matmul_persistent(A, B, C, M, N, K, lda, ldb, ldc, TM: tl.constexpr, TN: tl.constexpr,
                          TK: tl.constexpr, GROUP: tl.constexpr):
        # bench/kernels/matmul_persistent.tc's loop nest: tiles p, p + P, ... in groups.
        programs = tl.num_programs(0)
        tiles_m = M // TM
        tiles_n = N // TN
        per_group = GROUP * tiles_n
        for t in range(tl.program_id(0), tiles_m * tiles_n, programs):
            first_m = t // per_group * GROUP
            group_rows = tl.minimum(tiles_m - first_m, GROUP)
            matmul_tile(A, B, C, first_m + t % per_group % group_rows,
                        t % per_group // group_rows, K, lda, ldb, ldc, TM, TN, TK, tl.float32)

    @triton.jit
    def attention_causal(Q, K, V, sm_scale, Mo, Out, stride_z, stride_h, stride_n, H, N_CTX,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
        # examples/attention_causal.tc's two loops: the blocks left of the diagonal, then
        # the diagonal blocks with the causal mask (the tutorial's stages 1 and 2).
        start_m = tl.program_id(0)
        off_hz = tl.program_id(1)
        off = (off_hz // H).to(tl.int64) * stride_z + (off_hz % H).to(tl.int64) * stride_h
        offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, BLOCK_N)
        offs_d = tl.arange(0, HEAD_DIM)
        q = tl.load(Q + off + offs_m[:, None] * stride_n + offs_d[None, :])
        kt_base = K + off + offs_d[:, None] + offs_n[None, :] * stride_n
        v_base = V + off + offs_n[:, None] * stride_n + offs_d[None, :]
        m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
        acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
        qk_scale = sm_scale * 1.44269504
        diag = start_m * BLOCK_M
        for start_n in range(0, diag, BLOCK_N):
            k = tl.load(kt_base + start_n * stride_n)
            qk = tl.dot(q, k)
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
            alpha = tl.math.exp2(m_i - m_ij)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None]
            acc = tl.dot(p.to(tl.float16), tl.load(v_base + start_n * stride_n), acc)
            m_i = m_ij
        for start_n in range(diag, diag + BLOCK_M, BLOCK_N):
            k = tl.load(kt_base + start_n * stride_n)
            qk = tl.dot(q, k)
            keep = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(keep, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            p = tl.math.exp2(qk - m_ij[:, None])
            alpha = tl.math.exp2(m_i - m_ij)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None]
            acc = tl.dot(p.to(tl.float16), tl.load(v_base + start_n * stride_n), acc)
            m_i = m_ij
        m_i += tl.math.log2(l_i)
        tl.store(Mo + off_hz * N_CTX + offs_m, m_i)
        tl.store(Out + off + offs_m[:, None] * stride_n + offs_d[None, :],
                 (acc / l_i[:, None]).to(tl.float16))

    dev = "cuda"
    cdiv = triton.cdiv

    def launch(name, torch_op=False):
        """Triton's launch of kernel `name`, or with torch_op torch's own op (None: none)."""
        s = SPECS[name](True)
        if torch_op and name not in TORCH_OPS:
            return None
        if name == "stencil":
            H, W = s["H"], s["W"]
            x = torch.randn(H, W, device=dev)
            o = torch.zeros_like(x)
            return lambda: stencil[(cdiv(H, 32), cdiv(W, 64))](x, o, H, W, W, -4.0, BH=32, BW=64,
                                                                num_warps=4)
        if name == "cross_entropy":
            M, N = s["M"], s["N"]
            x = torch.randn(M, N, device=dev)
            t = torch.randint(0, N, (M,), device=dev, dtype=torch.int32)
            loss = torch.zeros(M, device=dev)
            return lambda: cross_entropy[(M,)](x, t, loss, N, N, BLOCK=1024, num_warps=4)
        if name == "rmsnorm":
            M, N = s["M"], s["N"]
            x = torch.randn(M, N, device=dev, dtype=torch.float16)
            y = torch.zeros_like(x)
            w = torch.rand(N, device=dev, dtype=torch.float16)
            return lambda: rmsnorm[(M,)](x, y, w, N, N, 1e-6, BLOCK=4096, num_warps=8)
        if name == "matmul_masked":
            M, N, K = s["M"], s["N"], s["K"]
            a = torch.randn(M, K, device=dev, dtype=torch.float16)
            b = torch.randn(K, N, device=dev, dtype=torch.float16)
            c = torch.zeros(M, N, device=dev, dtype=torch.float16)
            bias = torch.randn(N, device=dev)
            return lambda: matmul_masked[(M // 128, N // 128)](a, b, c, bias, M, N, K, K, N, N,
                                                               TM=128, TN=128, TK=64,
                                                               num_warps=8, num_stages=3)
        if name.startswith("attention_causal"):
            Z, H, N, D = s["Z"], s["H"], s["N"], s["D"]
            q, k, v = (torch.randn(Z, H, N, D, device=dev, dtype=torch.float16)
                       for _ in range(3))
            o = torch.empty_like(q)
            lse = torch.empty(Z, H, N, device=dev)
            scale = D ** -0.5
            if torch_op:
                return lambda: torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, is_causal=True, scale=scale)
            return lambda: attention_causal[(N // s["BM"], Z * H)](
                q, k, v, scale, lse, o, H * N * D, N * D, D, H, N, BLOCK_M=s["BM"],
                BLOCK_N=s["BN"], HEAD_DIM=D, num_warps=8, num_stages=3)
        if name in ("matmul_int8", "matmul_wide", "matmul_persistent"):
            M, N, K = s["M"], s["N"], s["K"]
            if name == "matmul_int8":
                a = torch.randint(-128, 128, (M, K), device=dev, dtype=torch.int8)
                b = torch.randint(-128, 128, (K, N), device=dev, dtype=torch.int8)
                c = torch.zeros(M, N, device=dev, dtype=torch.int32)
                tn, acc = 128, tl.int32
            else:
                a = torch.randn(M, K, device=dev, dtype=torch.float16)
                b = torch.randn(K, N, device=dev, dtype=torch.float16)
                c = torch.zeros(M, N, device=dev, dtype=torch.float16)
                tn, acc = 256, tl.float32
            if torch_op:
                return lambda: torch.matmul(a, b, out=c)
            if name == "matmul_persistent":
                programs = sm_count()
                return lambda: matmul_persistent[(programs,)](a, b, c, M, N, K, K, N, N, TM=128,
                                                              TN=256, TK=64, GROUP=8,
                                                              num_warps=8, num_stages=3)
            return lambda: matmul[(M // 128, N // tn)](a, b, c, M, N, K, K, N, N, TM=128, TN=tn,
                                                       TK=64, ACC=acc, num_warps=8, num_stages=3)
        M, N = s["M"], s["N"]
        x = torch.randn(M, N, device=dev)
        y = torch.zeros(N, device=dev)
        return lambda: colsum[(cdiv(N, 128),)](x, y, M, N, N, BM=32, BN=128, num_warps=4)

    def measure(name, torch_op=False):
        fn = launch(name, torch_op)
        if fn is None:
            return None
        fn()  # compile
        return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")

    return measure, triton.__version__


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                    help="folder of triton-run (default: build/bin)")
    ap.add_argument("--only", default=",".join(SPECS), help="comma-separated kernel names")
    ap.add_argument("--disable-opt", default=None,
                    help="pass --disable-opt LIST to every triton-run of ours (an A/B)")
    ap.add_argument("--no-check", action="store_true", help="skip the --compare checks")
    ap.add_argument("--json", default=None)
    ap.add_argument("--log", default="beyond.log")
    a = ap.parse_args()
    names = [n for n in a.only.split(",") if n]
    unknown = [n for n in names if n not in SPECS]
    if unknown:
        ap.error("--only: unknown kernel %s (known: %s)" % (", ".join(unknown), ", ".join(SPECS)))
    trun = os.path.join(a.bin, "triton-run")
    if not os.path.exists(trun):
        ap.error("--bin: no triton-run in %s" % a.bin)
    rc, text = run([trun, "--check-device"], 60)
    if rc != 0:
        print("beyond: no CUDA device (%s); nothing measured" % text.strip())
        return 4
    extra = ["--disable-opt", a.disable_opt] if a.disable_opt else []
    tri = triton_side()
    print("device: %s; Triton: %s" % (text.strip(), tri[1] if tri else "not available"))
    rows, bad = [], False
    with open(a.log, "w") as log:
        for n in names:
            s = SPECS[n](True)
            ok, ms = ours(trun, n, extra, not a.no_check, log)
            bad = bad or not ok
            tms = cms = None
            if tri:
                try:
                    tms = tri[0](n)
                    cms = tri[0](n, torch_op=True)
                except Exception as e:  # report and go on with the other kernels
                    print("  %s: Triton FAILED: %s" % (n, str(e).splitlines()[0] if str(e) else e))
            rows.append({"kernel": n, "size": s["size"], "ours_ms": ms, "triton_ms": tms,
                         "torch_ms": cms, "bytes": s.get("bytes"), "flops": s.get("flops"),
                         "checked": ok})
    unit = lambda r: "TFLOP/s" if r["flops"] else "GB/s"
    rate = lambda r, ms: None if ms is None else (
        r["flops"] / ms / 1e9 if r["flops"] else r["bytes"] / ms / 1e6)
    print("| kernel | size | ours ms | Triton ms | ours | Triton | Triton/ours time | torch op"
          " (cuBLAS) | torch/ours time |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        o, t = rate(r, r["ours_ms"]), rate(r, r["triton_ms"])
        f = lambda x: "-" if x is None else "%.1f %s" % (x, unit(r))
        ms = lambda x: "-" if x is None else "%.4f" % x
        over = lambda other: "-" if not r["ours_ms"] or not other else "%.2fx" % (
            other / r["ours_ms"])
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["kernel"], r["size"], ms(r["ours_ms"]), ms(r["triton_ms"]), f(o), f(t),
            over(r["triton_ms"]), f(rate(r, r["torch_ms"])), over(r["torch_ms"])))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
