# Triton 3.6 interpreter bug: an atomic whose value operand is a broadcast tile writes garbage
# (docs/upstream/triton-interp-atomic-broadcast-value.md). TRITON_INTERPRET=1 python3 THIS.py: every run
# must print "wrong in 0 of 20 runs" (Triton 3.9.0 does; 3.6.0 is wrong in 20 of 20).
import torch, triton, triton.language as tl
if not hasattr(torch.Tensor, "untyped_storage"):
    torch.Tensor.untyped_storage = lambda self: self.storage().untyped()
@triton.jit
def kernel(Y, N, OP: tl.constexpr):
    r = tl.arange(0, 8)
    z = tl.broadcast_to(tl.program_id(0) + tl.zeros([1], tl.int32), [8])  # a broadcast 0
    if OP == 0:
        tl.atomic_xor(Y + r, z, mask=r < N)
    elif OP == 1:
        tl.atomic_add(Y + r, z, mask=r < N)
    else:
        tl.atomic_xor(Y + r, z)
for op in (0, 1, 2):
    bad = 0
    for trial in range(20):
        y = torch.full((8,), 3, dtype=torch.int32)
        kernel[(1,)](y, 5, op)
        bad += y.tolist() != [3] * 8
    print(["atomic_xor, masked", "atomic_add, masked", "atomic_xor, no mask"][op], ": wrong in", bad, "of 20 runs; last y =", y.tolist())
