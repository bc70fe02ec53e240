"""backend='triton': a kernel run through its translation to Triton's Python DSL.

The C++ core prints the kernel as a module with a ``@triton.jit`` kernel and a
launcher (``tritonc --emit=triton``, docs/triton.md). Here that module is
loaded once per compiled variant and mode, and called with torch tensors:
Triton on the GPU for CUDA tensors, Triton's interpreter (TRITON_INTERPRET=1)
for host arrays. NumPy arrays become tensors that share their memory.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from typing import Any

import numpy as np

from . import _arrays as A
from . import _core

_MODULES: dict = {}
_DIR: list = []


def import_triton() -> tuple[Any, Any]:
    """(torch, triton), or an ImportError that says how to install them."""
    try:
        import torch
    except ImportError as e:
        raise ImportError(f"backend='triton' needs PyTorch ('torch'): {e}") from None
    from .triton_worker import _torch_compat

    _torch_compat(torch)
    try:
        import triton
        import triton.language  # noqa: F401
    except ImportError as e:
        raise ImportError(f"backend='triton' needs the 'triton' Python package: {e} (install "
                          f"it with {sys.executable} -m pip install triton)") from None
    return torch, triton


def module(k: Any, num_warps: int, gpu: bool) -> Any:
    """The translated module of compiled kernel ``k`` (loaded once per mode)."""
    code, error = _core.triton_module(k, num_warps)
    if error:
        raise ValueError(f"backend='triton': kernel '{k.name}': {error}")
    key = (hashlib.sha256(code.encode()).hexdigest()[:24], gpu)
    mod = _MODULES.get(key)
    if mod is not None:
        return mod
    if not _DIR:
        _DIR.append(tempfile.mkdtemp(prefix="triton-c-triton-"))
    name = f"triton_c_kernel_{key[0]}_{'gpu' if gpu else 'interp'}"
    path = os.path.join(_DIR[0], name + ".py")
    with open(path, "w", encoding="utf-8") as f:  # @triton.jit reads the source file
        f.write(code)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    # Triton decides at @triton.jit whether a kernel is interpreted.
    old = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "0" if gpu else "1"
    try:
        spec.loader.exec_module(mod)
    finally:
        if old is None:
            del os.environ["TRITON_INTERPRET"]
        else:
            os.environ["TRITON_INTERPRET"] = old
    _MODULES[key] = mod
    return mod


def as_tensor(torch: Any, a: Any, name: str, may_store: bool, gpu: bool) -> Any:
    """A pointer argument as the launcher takes it: a tensor on the mode's device."""
    if A.is_torch(a):
        if a.is_cuda != gpu:
            raise TypeError(f"argument '{name}': backend='triton' runs CUDA tensors on the GPU "
                            f"and host arrays on Triton's interpreter; this call mixes both")
        return a.detach()
    if gpu:
        raise TypeError(f"argument '{name}': backend='triton' runs CUDA tensors on the GPU "
                        f"and host arrays on Triton's interpreter; this call mixes both")
    if not isinstance(a, np.ndarray):
        raise TypeError(f"argument '{name}' expects an array (NumPy or PyTorch), got "
                        f"{type(a).__name__}")
    if not a.flags.writeable:
        if may_store:
            raise ValueError(f"argument '{name}' is read-only (its array is not writeable) but "
                             f"the kernel may store to it; nothing was written")
        a = a.copy()  # read only: a copy the kernel cannot change anything through
    if A.is_numpy_bf16(a.dtype):
        a = a.view(np.int16)  # the launcher views it as bfloat16
    elif a.dtype.kind == "u" and a.dtype.itemsize > 1:
        a = a.view(np.dtype(f"i{a.dtype.itemsize}"))  # the same width, as the launcher wants
    if any(s < 0 for s in a.strides):
        raise ValueError(f"argument '{name}': a view with a negative stride cannot be passed "
                         f"to Triton; pass a copy")
    return torch.from_numpy(a)
