"""Row softmax (forward and backward kernels) as an autograd op, and a trap as an exception.

    .venv/bin/python examples/python/softmax.py
"""

import numpy as np
import torch

import triton_c

x = torch.randn(8, 100, dtype=torch.float64, requires_grad=True)  # 100: not a power of two
y = triton_c.ops.softmax(x)
triton_c.testing.assert_close(y.detach(), torch.softmax(x.detach(), dim=1))
print("softmax matches torch.softmax; gradcheck:",
      torch.autograd.gradcheck(triton_c.ops.softmax, (x,)))

# A kernel that reads past its input: the interpreter reports where, the
# caller's output array is left as it was.
oob = triton_c.kernel("""
__global__ void shift(float *X, float *Y, int N) {
  int i[16] = 0 ... 16;
  *(Y + i) = *(X + i + 1);
}
""")
src, dst = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
try:
    oob(src, dst, 16, (1,))
except triton_c.TrapError as e:
    print(e)
    print(f"kind={e.kind} program={e.program} lane={e.lane} line={e.line}; dst untouched:",
          not dst.any())
