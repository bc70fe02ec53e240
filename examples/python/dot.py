"""PyTriton's fused-transposition matrix product, with autograd.

    .venv/bin/python examples/python/dot.py

On the reference interpreter for CPU tensors and NumPy arrays; on the GPU
(auto-tuning TM and TN over 32, 64, 128) for CUDA tensors.
"""

import numpy as np
import torch

import triton_c

# NumPy in, NumPy out (forward only).
a = np.random.default_rng(0).standard_normal((64, 48)).astype(np.float32)
b = np.random.default_rng(1).standard_normal((32, 48)).astype(np.float32)
c = triton_c.ops.dot(a, b, transpose_b=True)  # a @ b.T, the transposition fused
triton_c.testing.assert_close(c, (a.astype(np.float64) @ b.T.astype(np.float64)).astype(np.float32),
                              rtol=1e-5, atol=1e-5)
print("numpy: dot(a, b, transpose_b=True) matches a @ b.T, shape", c.shape)

# PyTorch: gradients through the kernel's backward (two more dots).
device = "cuda" if torch.cuda.is_available() and triton_c.cuda_available()[0] else "cpu"
x = torch.randn(40, 24, dtype=torch.float64, device=device, requires_grad=True)
w = torch.randn(24, 16, dtype=torch.float64, device=device, requires_grad=True)
y = triton_c.ops.dot(x, w)
y.sum().backward()
assert torch.allclose(x.grad, torch.ones(40, 16, dtype=torch.float64, device=device) @ w.detach().t())
print(f"torch ({device}): gradcheck",
      torch.autograd.gradcheck(triton_c.ops.dot, (x.detach().requires_grad_(), w.detach().requires_grad_())))
