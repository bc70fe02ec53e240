# Triton interpreter bug: a scalar float comparison broadcast into a mask (docs/upstream/triton-interp-scalar-compare-splat.md).
# TRITON_INTERPRET=1 python3 triton-interp-scalar-compare-splat.py   (expected output: [0, 1, 2, 3])
import torch, triton, triton.language as tl
if not hasattr(torch.Tensor, "untyped_storage"):  # torch < 2.0
    torch.Tensor.untyped_storage = lambda self: self.storage().untyped()

@triton.jit
def kernel(Y, X, N):
    r = tl.arange(0, 4)
    x = tl.load(X)              # a float32 scalar
    keep = x < 1.5              # int1 scalar
    tl.store(Y + r, r, mask=(r < N) & keep)

y = torch.zeros(4, dtype=torch.int32)
x = torch.zeros(1, dtype=torch.float32)
kernel[(1,)](y, x, 4)
print(y.tolist())
