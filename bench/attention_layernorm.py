#!/usr/bin/env python3
"""FlashAttention-2 forward and LayerNorm forward: ours (examples/attention.tc,
examples/layernorm.tc and layernorm_row.tc through triton-run --bench) against Triton's tutorial kernels
(triton_attention.py and triton_layernorm.py, given by their folder) in one call on the
GPU machine, with a table of TFLOP/s or GB/s and ratios.

    python3 bench/attention_layernorm.py --bin dist/bin --triton-dir DIR [--tune]
        [--Z 4] [--H 32] [--nctx 1024,4096] [--dims 64,128] [--M 4096] [--Ns 1024,4096,8192]
        [--only attention|layernorm] [--disable-opt LIST] [--json OUT.json]

DIR holds triton_attention.py and triton_layernorm.py (Triton 3.x, torch); they run
with this script's Python. Without --triton-dir only our side is measured.

Method (the same as the Triton scripts'): FLOP = 4 Z H N^2 D for attention,
bytes = 2 M N 2 (read X, write Y) for LayerNorm. Our "cold" figure is triton-run --bench
(median of 100 launches, L2 flushed before each: do_bench's method), "hot" is
--bench --no-flush-l2 (Triton's scripts' "hot"). Ours is checked first against the
interpreter (triton-run --compare) at small sizes of the same kernels and configuration;
a mismatch makes the exit status 1.

Our configuration is fixed per shape: attention (BLOCK_M, BLOCK_N, num_warps) =
(128, 64, 8) for D=64 and (128, 32, 8) for D=128 with 3 stages (Triton's "plain-fixed"
rows use the same); LayerNorm BLOCK = next_pow2(N), num_warps = min(max(BLOCK / 256, 1), 8)
as the tutorial launches it; the one-pass layernorm_row.tc (the row kept in registers, X read
once) with up to 16 warps, its columns "one pass" in the table. --tune also auto-tunes ours over the tutorial's attention
space (BLOCK_M 64/128, BLOCK_N 32/64, warps 4/8, stages 2/3/4). --disable-opt LIST passes
`--disable-opt LIST` to every triton-run of ours (an A/B of one optimisation: run once
with --triton-dir, once with --disable-opt and without it).

--ln-warps LIST (e.g. 1,2,4,8) also sweeps LayerNorm's num_warps, the one launch parameter
the tutorial fixes by a rule (BLOCK / 256): ours (both kernels, cold) and, with
--triton-dir, Triton's tutorial kernel at the same warps (imported from
triton_layernorm.py, do_bench in this process, checked against torch's layer_norm), in a
table of its own: each side's best warps against the other's.

LayerNorm's ceiling: the device's copy bandwidth, measured in the same call on the same
bytes (read M x N fp16, write M x N fp16) with torch's `copy_` (a device-to-device copy;
cold: L2 flushed before each of 100 copies, median) when torch with CUDA is importable,
and with a plain Triton-C copy kernel (bench/kernels/copy.tc, triton-run --bench).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The attention check's tolerance: P is rounded to fp16 before P @ V, and the GPU's exp2
# (ex2.approx) differs from the interpreter's in the last bits, which can flip that
# rounding: up to 2^-11 of max|V| (about 4 for randn) in an output element.
ATTN_TOL = ("--atol", "2e-3")
FIXED = {64: (128, 64, 8), 128: (128, 32, 8)}  # HEAD_DIM -> (BLOCK_M, BLOCK_N, num_warps)


def next_pow2(n):
    p = 1
    while p < n:
        p *= 2
    return p


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "timed out after %d s" % timeout
    return p.returncode, p.stdout + p.stderr


def attn_args(Z, H, N, D):
    return ["--grid", "N_CTX / BLOCK_M, Z * H", "--arg", "Z=%d" % Z, "--arg", "H=%d" % H,
            "--arg", "N_CTX=%d" % N, "--arg", "stride_z=%d" % (H * N * D),
            "--arg", "stride_h=%d" % (N * D), "--arg", "stride_n=%d" % D,
            "--arg", "sm_scale=1.3",
            "--arg", "Q=randn:f16[Z,H,N_CTX,%d]" % D, "--arg", "K=randn:f16[Z,H,N_CTX,%d]" % D,
            "--arg", "V=randn:f16[Z,H,N_CTX,%d]" % D, "--arg", "M=zeros:f32[Z,H,N_CTX]",
            "--arg", "Out=zeros:f16[Z,H,N_CTX,%d]" % D]


def attn_defines(D, tune):
    if tune:
        return ["-DBLOCK_M=[64,128]", "-DBLOCK_N=[32,64]", "-DHEAD_DIM=%d" % D,
                "--num-warps", "4,8", "--num-stages", "2,3,4"]
    bm, bn, w = FIXED[D]
    return ["-DBLOCK_M=%d" % bm, "-DBLOCK_N=%d" % bn, "-DHEAD_DIM=%d" % D,
            "--num-warps", str(w), "--num-stages", "3"]


def ln_args(M, N):
    return ["--grid", str(M), "--arg", "N=%d" % N, "--arg", "stride=%d" % N,
            "--arg", "eps=1e-5", "--arg", "X=randn:f16[%d,%d]" % (M, N),
            "--arg", "Y=zeros:f16[%d,%d]" % (M, N), "--arg", "W=rand:f16[N]",
            "--arg", "B=rand:f16[N]", "--arg", "Mean=zeros:f32[%d]" % M,
            "--arg", "Rstd=zeros:f32[%d]" % M]


def ln_defines(N, max_warps=8):
    """BLOCK = next_pow2(N) and the tutorial's warps (BLOCK / 256, 1 to 8). The one-pass
    layernorm_row.tc keeps the row in registers and takes up to 16 (8192 columns on 8 warps
    took 123 registers, on 16: 63)."""
    block = next_pow2(N)
    return ["-DBLOCK=%d" % block, "--num-warps", str(min(max(block // 256, 1), max_warps))]


def bench_ours(trun, src, defines, args, extra, log):
    """Median ms of triton-run --bench (cold: L2 flushed; hot: --no-flush-l2)."""
    out = {}
    for mode, flag in (("cold", []), ("hot", ["--no-flush-l2"])):
        cmd = [trun, src] + defines + args + ["--bench"] + flag + extra
        rc, text = run(cmd, 900)
        log.write("$ %s\n%s\n" % (" ".join(cmd), text))
        m = re.findall(r"^\s*median\s+([0-9.]+) ms", text, re.M)
        out[mode] = float(m[-1]) if rc == 0 and m else None
        if out[mode] is None:
            print("  ours FAILED (%s): %s" % (mode, text.strip().splitlines()[-1:] or "?"))
    return out


def torch_copy_ms(M, N, reps=100):
    """Median ms of torch's device-to-device copy of an M x N fp16 tensor, L2 flushed
    before each copy (None without torch or CUDA)."""
    try:
        import torch
        if not torch.cuda.is_available():
            return None
    except ImportError:
        return None
    x = torch.randn(M, N, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    flush = torch.empty(256 * 1024 * 1024, device="cuda", dtype=torch.int8)
    for _ in range(10):
        y.copy_(x)
    times = []
    for _ in range(reps):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        y.copy_(x)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def check_ours(trun, src, defines, args, log, tol=()):
    cmd = [trun, src] + defines + args + ["--compare"] + list(tol)
    rc, text = run(cmd, 900)
    log.write("$ %s\n%s\n" % (" ".join(cmd), text))
    return rc == 0, text.strip().splitlines()[-1] if text.strip() else ""


def triton_side(script, extra, log):
    if script is None:
        return []
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        jpath = f.name
    cmd = [sys.executable, script, "--json", jpath] + extra
    rc, text = run(cmd, 1800)
    log.write("$ %s\n%s\n" % (" ".join(cmd), text))
    print(text.rstrip())
    rows = []
    if os.path.exists(jpath):
        try:
            with open(jpath) as f:
                rows = json.load(f)
        except ValueError:
            rows = []
        os.unlink(jpath)
    if rc != 0:
        print("  (%s exited with %d)" % (os.path.basename(script), rc))
    return rows


def triton_layernorm_warps(script, M, N, warps, eps=1e-5):
    """GB/s of Triton's tutorial kernel (imported from `script`) at each of `warps`,
    do_bench (L2 flushed), the tutorial's inputs; checked against torch's layer_norm.
    {} when Triton or CUDA is missing."""
    try:
        import importlib.util
        import torch
        import triton
        if not torch.cuda.is_available():
            return {}
    except ImportError:
        return {}
    spec = importlib.util.spec_from_file_location("triton_layernorm", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    dt = torch.float16
    w_ = torch.rand((N, ), dtype=dt, device="cuda")
    b_ = torch.rand((N, ), dtype=dt, device="cuda")
    x = -2.3 + 0.5 * torch.randn((M, N), dtype=dt, device="cuda")
    y = torch.empty_like(x)
    mean = torch.empty((M, ), dtype=torch.float32, device="cuda")
    rstd = torch.empty((M, ), dtype=torch.float32, device="cuda")
    block, _ = mod.launch_config(x)
    ref = torch.nn.functional.layer_norm(x, (N, ), w_, b_, eps)
    out = {}
    for w in warps:
        fn = lambda: mod.layer_norm_fwd(x, w_, b_, eps, y, mean, rstd, block, w)
        fn()
        if not torch.allclose(y, ref, atol=1e-2, rtol=0):
            out[w] = None
            continue
        ms = triton.testing.do_bench(fn)
        out[w] = 2.0 * M * N * 2 * 1e-6 / ms
    return out


def layernorm_warps(a, trun, src, row_src, ours_opt, tscript, Ns, warps, table, rows, log,
                    ceilings=None):
    """The --ln-warps sweep: ours (both kernels, cold) and Triton's at each num_warps;
    `ceilings` (N -> GB/s, the copy ceiling of the main table) adds ours best / ceiling."""
    print("== layernorm: num_warps sweep %s" % warps)
    ok_all = True
    table.append("")
    table.append("| LayerNorm fp16 M=%d, num_warps | %s | ours best (kernel, warps) | "
                 "Triton best (warps) | ours best / Triton best | ours best / Triton at the "
                 "tutorial's warps | ours best / copy ceiling |"
                 % (a.M, " | ".join("w=%d ours / one pass / Triton" % w for w in warps)))
    table.append("|---|%s---|---|---|---|---|" % ("---|" * len(warps)))
    for N in Ns:
        block = next_pow2(N)
        gb = lambda ms: None if not ms else 2.0 * a.M * N * 2 * 1e-6 / ms
        cells, best = [], (None, None, None)
        theirs = triton_layernorm_warps(tscript, a.M, N, warps) if tscript else {}
        for w in warps:
            got = []
            for name, s in (("three passes", src), ("one pass", row_src)):
                if name == "three passes" and w > 8:
                    got.append(None)
                    continue
                d = ["-DBLOCK=%d" % block, "--num-warps", str(w)] + ours_opt
                ms = bench_ours(trun, s, d, ln_args(a.M, N), ["--bytes", "2*%d*N*2" % a.M], log)
                g = gb(ms["cold"])
                got.append(g)
                if g and (best[0] is None or g > best[0]):
                    best = (g, name, w)
            cells.append("%s / %s / %s" % (fmt(got[0]), fmt(got[1]), fmt(theirs.get(w))))
            print("  N=%-5d warps=%-2d ours %s, one pass %s, Triton %s"
                  % (N, w, fmt(got[0]), fmt(got[1]), fmt(theirs.get(w))))
        if best[0] is not None and not a.no_check:
            s = src if best[1] == "three passes" else row_src
            ok, last = check_ours(trun, s, ["-DBLOCK=%d" % block, "--num-warps", str(best[2])]
                                  + ours_opt, ln_args(64, N), log)
            ok_all &= ok
            print("  check ours' best (%s, %d warps) N=%d (M=64) vs the interpreter: %s  %s"
                  % (best[1], best[2], N, "OK" if ok else "FAIL", last))
        tb = max(((g, w) for w, g in theirs.items() if g), default=(None, None))
        tut = theirs.get(min(max(block // 256, 1), 8))
        table.append("| N=%d | %s | %s | %s | %s | %s | %s |" % (
            N, " | ".join(cells),
            "-" if best[0] is None else "%s (%s, %d)" % (fmt(best[0]), best[1], best[2]),
            "-" if tb[0] is None else "%s (%d)" % (fmt(tb[0]), tb[1]),
            ratio(best[0], tb[0]), ratio(best[0], tut),
            ratio(best[0], (ceilings or {}).get(N))))
        rows.append(dict(kernel="layernorm_fwd_fp16_best_warps", provider="triton-c", M=a.M, N=N,
                         GBps=best[0], variant=best[1], num_warps=best[2]))
        if tb[0] is not None:
            rows.append(dict(kernel="layernorm_fwd_fp16_best_warps", provider="triton", M=a.M,
                             N=N, GBps=tb[0], num_warps=tb[1]))
    return ok_all


def fmt(x, nd=1):
    return "-" if x is None else ("%.*f" % (nd, x))


def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else "%.2fx" % (a / b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                    help="folder of triton-run (default: build/bin)")
    ap.add_argument("--triton-dir", default=None,
                    help="folder of triton_attention.py and triton_layernorm.py")
    ap.add_argument("--examples", default=os.path.join(ROOT, "examples"))
    ap.add_argument("--Z", type=int, default=4)
    ap.add_argument("--H", type=int, default=32)
    ap.add_argument("--nctx", default="1024,4096")
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--M", type=int, default=4096)
    ap.add_argument("--Ns", default="1024,4096,8192")
    ap.add_argument("--only", choices=["attention", "layernorm"], default=None)
    ap.add_argument("--tune", action="store_true", help="also auto-tune our attention")
    ap.add_argument("--no-check", action="store_true", help="skip the --compare checks")
    ap.add_argument("--disable-opt", default=None,
                    help="pass --disable-opt LIST to every triton-run of ours (an A/B)")
    ap.add_argument("--ln-warps", default=None,
                    help="also sweep LayerNorm's num_warps over LIST (e.g. 1,2,4,8), ours and Triton's")
    ap.add_argument("--json", default=None)
    ap.add_argument("--log", default="attention_layernorm.log")
    a = ap.parse_args()
    try:
        ln_warps = [int(w) for w in a.ln_warps.split(",")] if a.ln_warps else []
    except ValueError:
        sys.exit("attention_layernorm.py: --ln-warps: a comma-separated list of integers, not %r"
                 % a.ln_warps)
    if any(w not in (1, 2, 4, 8, 16) for w in ln_warps):
        sys.exit("attention_layernorm.py: --ln-warps: each of 1, 2, 4, 8, 16 (got %s)" % a.ln_warps)
    trun = os.path.join(a.bin, "triton-run")
    ours_opt = ["--disable-opt", a.disable_opt] if a.disable_opt else []
    if not os.access(trun, os.X_OK):
        sys.exit("attention_layernorm.py: %s not found (--bin)" % trun)
    rc, text = run([trun, "--check-device"], 120)
    if rc != 0:
        print(text.strip())
        sys.exit("attention_layernorm.py: no CUDA device (triton-run --check-device: %d)" % rc)
    print(text.strip())
    scripts = {}
    for k in ("attention", "layernorm"):
        s = os.path.join(a.triton_dir, "triton_%s.py" % k) if a.triton_dir else None
        if s and not os.path.isfile(s):
            sys.exit("attention_layernorm.py: %s not found (--triton-dir)" % s)
        scripts[k] = s
    log = open(a.log, "w")
    ok_all = True
    table, rows = [], []
    dims = [int(d) for d in a.dims.split(",")]
    nctx = [int(n) for n in a.nctx.split(",")]
    Ns = [int(n) for n in a.Ns.split(",")]

    if a.only in (None, "attention"):
        src = os.path.join(a.examples, "attention.tc")
        print("== attention: ours")
        if not a.no_check:
            for D in dims:
                ok, last = check_ours(trun, src, attn_defines(D, False) + ours_opt,
                                      attn_args(1, 2, 256, D), log, ATTN_TOL)
                ok_all &= ok
                print("  check ours D=%d (Z=1 H=2 N=256) vs the interpreter: %s  %s"
                      % (D, "OK" if ok else "FAIL", last))
        ours = {}
        for D in dims:
            for N in nctx:
                flops = ["--flops", "4*Z*H*N_CTX*N_CTX*%d" % D]
                ours[(N, D, "fixed")] = bench_ours(trun, src, attn_defines(D, False) + ours_opt,
                                                   attn_args(a.Z, a.H, N, D), flops, log)
                if a.tune:
                    ours[(N, D, "tuned")] = bench_ours(trun, src, attn_defines(D, True) + ours_opt,
                                                       attn_args(a.Z, a.H, N, D), flops, log)
                print("  N_CTX=%-5d D=%-3d %s" % (N, D, ours[(N, D, "fixed")]))
        print("== attention: Triton")
        trows = triton_side(scripts["attention"],
                            ["--Z", str(a.Z), "--H", str(a.H), "--nctx", a.nctx, "--dims", a.dims,
                             "--providers", "plain-fixed,plain-tuned,sdpa"], log)
        theirs = {(r["N_CTX"], r["HEAD_DIM"], r["provider"]): r for r in trows}
        table.append("| attention fp16 Z=%d H=%d | ours cold TFLOP/s | ours hot | Triton plain-fixed "
                     "(do_bench / hot) | Triton plain-tuned (do_bench / hot) | torch SDPA "
                     "(do_bench) | ours/Triton fixed (cold, hot) | ours/Triton tuned (cold) | "
                     "ours/SDPA |" % (a.Z, a.H))
        table.append("|---|---|---|---|---|---|---|---|---|")
        for D in dims:
            for N in nctx:
                tf = lambda ms: None if not ms else 4.0 * a.Z * a.H * N * N * D * 1e-9 / ms
                o = ours[(N, D, "fixed")]
                best = o
                if a.tune and (N, D, "tuned") in ours:
                    t = ours[(N, D, "tuned")]
                    if t["cold"] and (not o["cold"] or t["cold"] < o["cold"]):
                        best = t
                oc, oh = tf(best["cold"]), tf(best["hot"])
                fx = theirs.get((N, D, "plain-fixed"), {})
                tu = theirs.get((N, D, "plain-tuned"), {})
                sd = theirs.get((N, D, "sdpa"), {})
                table.append("| N=%d D=%d | %s | %s | %s / %s | %s / %s | %s | %s, %s | %s | %s |" % (
                    N, D, fmt(oc), fmt(oh), fmt(fx.get("TFLOPs")), fmt(fx.get("TFLOPs_hot")),
                    fmt(tu.get("TFLOPs")), fmt(tu.get("TFLOPs_hot")), fmt(sd.get("TFLOPs")),
                    ratio(oc, fx.get("TFLOPs")), ratio(oh, fx.get("TFLOPs_hot")),
                    ratio(oc, tu.get("TFLOPs")), ratio(oc, sd.get("TFLOPs"))))
                rows.append(dict(kernel="attn_fwd_fp16", provider="triton-c", Z=a.Z, H=a.H,
                                 N_CTX=N, HEAD_DIM=D, TFLOPs=oc, TFLOPs_hot=oh,
                                 tuned=best is not o))
        rows += trows

    if a.only in (None, "layernorm"):
        src = os.path.join(a.examples, "layernorm.tc")
        row_src = os.path.join(a.examples, "layernorm_row.tc")
        print("== layernorm: ours (layernorm.tc: the tutorial's three passes; layernorm_row.tc: one)")
        if not a.no_check:
            for N in Ns:
                for name, s, d in (("", src, ln_defines(N)), (" one pass", row_src, ln_defines(N, 16))):
                    ok, last = check_ours(trun, s, d + ours_opt, ln_args(64, N), log)
                    ok_all &= ok
                    print("  check ours%s N=%d (M=64) vs the interpreter: %s  %s"
                          % (name, N, "OK" if ok else "FAIL", last))
        ours, row, copy, ceilings = {}, {}, {}, {}
        copy_src = os.path.join(ROOT, "bench", "kernels", "copy.tc")
        for N in Ns:
            ours[N] = bench_ours(trun, src, ln_defines(N) + ours_opt, ln_args(a.M, N),
                                 ["--bytes", "2*%d*N*2" % a.M], log)
            print("  N=%-5d %s" % (N, ours[N]))
            row[N] = bench_ours(trun, row_src, ln_defines(N, 16) + ours_opt, ln_args(a.M, N),
                                ["--bytes", "2*%d*N*2" % a.M], log)
            print("  N=%-5d one pass %s" % (N, row[N]))
            # The copy ceiling: the same bytes through torch's copy_ and our copy kernel.
            copy[N] = {"torch": torch_copy_ms(a.M, N)}
            copy[N].update({"ours-" + k: v for k, v in bench_ours(
                trun, copy_src, ["-DBLOCK=4096", "--num-warps", "8"] + ours_opt,
                ["--grid", str(a.M * N // 4096),
                 "--arg", "X=randn:f16[%d,%d]" % (a.M, N), "--arg", "Y=zeros:f16[%d,%d]" % (a.M, N)],
                ["--bytes", str(2 * a.M * N * 2)], log).items()})
            print("  copy N=%-5d %s" % (N, copy[N]))
        print("== layernorm: Triton")
        trows = triton_side(scripts["layernorm"], ["--M", str(a.M), "--Ns", a.Ns], log)
        theirs = {(r["N"], r["provider"]): r for r in trows}
        table.append("")
        table.append("| LayerNorm fp16 M=%d | ours cold GB/s | ours hot | Triton (do_bench / hot) | "
                     "torch (do_bench / hot) | ours/Triton (cold, hot) | ours/torch (cold) | "
                     "copy: torch copy_ / ours (cold GB/s) | ours/copy ceiling (cold) | "
                     "ours one pass cold GB/s | one pass/copy ceiling |" % a.M)
        table.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for N in Ns:
            gb = lambda ms: None if not ms else 2.0 * a.M * N * 2 * 1e-6 / ms
            oc, oh = gb(ours[N]["cold"]), gb(ours[N]["hot"])
            tr = theirs.get((N, "triton"), {})
            to = theirs.get((N, "torch"), {})
            ct, co = gb(copy[N]["torch"]), gb(copy[N].get("ours-cold"))
            ceiling = max([c for c in (ct, co) if c] or [None]) if (ct or co) else None
            ceilings[N] = ceiling
            rc_ = gb(row[N]["cold"])
            table.append("| N=%d | %s | %s | %s / %s | %s / %s | %s, %s | %s | %s / %s | %s | %s | %s |" % (
                N, fmt(oc), fmt(oh), fmt(tr.get("GBps")), fmt(tr.get("GBps_hot")),
                fmt(to.get("GBps")), fmt(to.get("GBps_hot")), ratio(oc, tr.get("GBps")),
                ratio(oh, tr.get("GBps_hot")), ratio(oc, to.get("GBps")), fmt(ct), fmt(co),
                ratio(oc, ceiling), fmt(rc_), ratio(rc_, ceiling)))
            rows.append(dict(kernel="layernorm_fwd_fp16", provider="triton-c", M=a.M, N=N,
                             GBps=oc, GBps_hot=gb(ours[N]["hot"])))
            rows.append(dict(kernel="layernorm_row_fwd_fp16", provider="triton-c", M=a.M, N=N,
                             GBps=rc_, GBps_hot=gb(row[N]["hot"])))
        rows += trows
        if ln_warps:
            ok_all &= layernorm_warps(a, trun, src, row_src, ours_opt, scripts["layernorm"],
                                      Ns, ln_warps, table, rows, log, ceilings)

    print()
    print("\n".join(table))
    print("\n(log of every command: %s)" % a.log)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    sys.exit(0 if ok_all else 1)


if __name__ == "__main__":
    main()
