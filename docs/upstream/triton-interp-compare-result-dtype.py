#!/usr/bin/env python3
"""Triton's interpreter (TRITON_INTERPRET=1): the result of a comparison keeps the operands'
dtype instead of int1, which shows once a scalar comparison is broadcast to a tile.

Needs only torch and triton; no GPU. Run:

    TRITON_INTERPRET=1 python3 triton-interp-compare-result-dtype.py

Prints one line per check with the value Triton gave and the value expected (the comparison
is a boolean: a broadcast True is True in every lane, True.to(float32) is 1.0), and exits
with status 1 when any check is wrong.
"""
import os
import sys

import torch
import triton
import triton.language as tl

if os.environ.get("TRITON_INTERPRET") != "1":
    sys.exit("run with TRITON_INTERPRET=1 (this is about Triton's interpreter)")

# torch < 2.0 (e.g. Debian's 1.13) names Tensor.untyped_storage() storage().untyped().
if not hasattr(torch.Tensor, "untyped_storage"):
    torch.Tensor.untyped_storage = lambda self: self.storage().untyped()


@triton.jit
def as_mask(X, Y, on):
    # A scalar comparison broadcast to the tile, used as a store mask.
    i = tl.arange(0, 8)
    m = tl.broadcast_to(on > 0, [8])
    tl.store(Y + i, tl.load(X + i) + 1, mask=m)


@triton.jit
def as_value(S, Y):
    # A scalar comparison (of a loaded bfloat16 scalar) broadcast to the tile and converted.
    i = tl.arange(0, 8)
    s = tl.load(S)
    c = tl.broadcast_to(s > 0, [8])
    tl.store(Y + i, c.to(tl.float32))


@triton.jit
def and_tile(S, Y):
    # A scalar comparison of floats broadcast to the tile and and-ed with a tile comparison.
    i = tl.arange(0, 8)
    s = tl.load(S)
    c = tl.broadcast_to(s > 0, [8]) & (i < 4)
    tl.store(Y + i, c.to(tl.float32))


def check(what, run, expected):
    try:
        got = run()
    except Exception as e:  # the interpreter raises for some of them
        got = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:100])
    ok = got == expected
    print("%-46s got %s\n%-46s expected %s  %s" % (what, got, "", expected, "ok" if ok else "WRONG"))
    return ok


def run_as_mask():
    x = torch.arange(8, dtype=torch.int32)
    y = torch.full((8,), -5, dtype=torch.int32)
    as_mask[(1,)](x, y, 1)
    return y.tolist()


def run_as_value():
    y = torch.full((8,), -5.0)
    as_value[(1,)](torch.tensor([3.0], dtype=torch.bfloat16), y)
    return y.tolist()


def run_and_tile():
    y = torch.full((8,), -5.0)
    and_tile[(1,)](torch.tensor([3.0]), y)
    return y.tolist()


print("triton", triton.__version__, "torch", torch.__version__)
results = [
    check("int32: store mask broadcast_to(on > 0)", run_as_mask, [1, 2, 3, 4, 5, 6, 7, 8]),
    check("bf16: broadcast_to(s > 0).to(float32)", run_as_value, [1.0] * 8),
    check("fp32: broadcast_to(s > 0) & (i < 4)", run_and_tile, [1.0] * 4 + [0.0] * 4),
]
sys.exit(0 if all(results) else 1)
