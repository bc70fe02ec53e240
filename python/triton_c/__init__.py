"""triton_c: Triton-C kernels from Python, on the reference interpreter or an NVIDIA GPU.

PyTriton's host API (the original Triton-C's Python API) on NumPy arrays and PyTorch tensors:

>>> import numpy as np, triton_c
>>> add = triton_c.kernel('''
... __global__ void add(float *X, float *Y, float *Z, int N) {
...   int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
...   bool m[BLOCK] = i < N;
...   *?(m)(Z + i) = *?(m)(X + i) + *?(m)(Y + i);
... }''', outputs=['Z'])
>>> x = np.arange(1000, dtype=np.float32)
>>> z = add(x, x, np.empty_like(x), 1000, lambda opt: [triton_c.cdiv(1000, opt.BLOCK)], BLOCK=128)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Optional, Sequence

if TYPE_CHECKING:  # the names below are imported on first use (PEP 562)
    from . import ops, testing
    from ._grid import Opt, cdiv, smax, smin
    from ._kernel import (BACKENDS, CompileError, CompileWarning, Kernel, LaunchWarning,
                          MismatchError, TrapError, kernel)

# The class triton_c.function shadows its own submodule: imported now (it is
# light), so that a later import of the submodule cannot rebind the name.
from .function import function  # noqa: E402

# Imported on first use, so that `import triton_c._cli` (the console scripts)
# loads neither NumPy nor the C++ core.
_LAZY = {
    "kernel": "._kernel", "Kernel": "._kernel", "CompileError": "._kernel",
    "TrapError": "._kernel", "MismatchError": "._kernel", "CompileWarning": "._kernel",
    "LaunchWarning": "._kernel", "BACKENDS": "._kernel", "Opt": "._grid", "cdiv": "._grid",
    "smin": "._grid", "smax": "._grid",
    "ops": None, "testing": None,
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'triton_c' has no attribute '{name}'")
    mod = _LAZY[name]
    value = (importlib.import_module("." + name, __name__) if mod is None else
             getattr(importlib.import_module(mod, __name__), name))
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))

__all__ = ["kernel", "Kernel", "function", "CompileError", "TrapError", "MismatchError",
           "CompileWarning", "LaunchWarning", "cdiv", "smin", "smax", "empty", "shape",
           "cuda_available", "ops", "testing", "Opt", "BACKENDS"]

__version__ = "0.1.0"


def shape(x: Any) -> tuple:
    """The shape of an array or tensor as a tuple: ``M, K = triton_c.shape(a)``."""
    return tuple(int(d) for d in x.shape)


def empty(shape: Sequence[int], dtype: Any = None, like: Any = None) -> Any:
    """An uninitialised array: a torch tensor when ``dtype`` is a torch dtype or ``like``
    is a tensor (on ``like``'s device), else a NumPy array.

    >>> c = triton_c.empty([M, N], dtype=a.dtype, like=a)
    """
    import numpy as np

    from . import _arrays as A

    if isinstance(shape, (int, np.integer)):
        shape = [shape]
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
            raise TypeError(f"empty: shape={list(shape)!r}: expected non-negative integers")
    shape = [int(d) for d in shape]
    if A.is_torch(like) or (dtype is not None and type(dtype).__module__ == "torch"):
        import torch

        if dtype is None:
            dtype = like.dtype
        if not isinstance(dtype, torch.dtype):
            dtype = getattr(torch, A.dtype_name(dtype))
        device = like.device if A.is_torch(like) else None
        return torch.empty(shape, dtype=dtype, device=device)
    import numpy as np

    if dtype is None:
        dtype = like.dtype if like is not None else np.float32
    if isinstance(dtype, str) and dtype == "bfloat16":
        # ml_dtypes' bfloat16 when installed, else uint16 holding the bit patterns
        dtype = A.numpy_dtype("bfloat16")
    return np.empty(shape, dtype=dtype)


def cuda_available() -> tuple[bool, str]:
    """(True, '') when the GPU backend can run here, else (False, why).

    >>> ok, why = triton_c.cuda_available()
    """
    from . import _core

    ok, why = _core.cuda_available()
    return ok, why
