"""Arrays as the C++ core takes them, copies, and dtype names."""

from __future__ import annotations

from typing import Any

import numpy as np

try:  # optional: NumPy's bfloat16
    import ml_dtypes  # type: ignore

    BF16_NUMPY: Any = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - depends on the environment
    ml_dtypes = None
    BF16_NUMPY = None


def _torch():
    import sys

    return sys.modules.get("torch")


def is_torch(x: Any) -> bool:
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


def is_cuda(x: Any) -> bool:
    return is_torch(x) and x.is_cuda


def is_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) or is_torch(x) or (
        hasattr(x, "__dlpack__") and not isinstance(x, (int, float, bool)))


def is_numpy_bf16(dt: Any) -> bool:
    return BF16_NUMPY is not None and np.dtype(dt) == np.dtype(BF16_NUMPY)


def for_core(x: Any) -> Any:
    """An argument as the C++ core reads it (arrays share the caller's memory)."""
    tx = type(x)
    if tx is int or tx is float or tx is bool:
        return x
    if tx is np.ndarray:
        if is_numpy_bf16(x.dtype):
            return (x.view(np.uint16), "bfloat16")
        return x
    if is_torch(x):
        torch = _torch()
        if x.is_cuda:
            if x.is_contiguous():  # by device pointer, no DLPack export per launch
                return ("cuda", x.data_ptr(), _torch_name(x.dtype), x.shape, x.get_device())
            return x.detach()  # the core reports the non-contiguous argument by name
        x = x.detach()
        # CPU tensors through NumPy (zero-copy; DLPack in older PyTorch lacks bool/bf16).
        if x.dtype == torch.bfloat16:
            return (x.view(torch.int16).numpy(), "bfloat16")
        return x.numpy()
    if isinstance(x, np.generic):
        return x.item()
    return x


_TORCH_NAMES: dict = {}


def _torch_name(dt: Any) -> str:
    n = _TORCH_NAMES.get(dt)
    if n is None:
        n = _TORCH_NAMES[dt] = str(dt).replace("torch.", "")
    return n


def copy_of(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return np.array(x, copy=True, order="K")
    if is_torch(x):
        return x.detach().clone()
    return x


def to_host(x: Any) -> Any:
    """A host copy of a CUDA tensor (other values unchanged)."""
    if is_cuda(x):
        return x.detach().cpu()
    return x


def write_back(dst: Any, src: Any) -> None:
    """dst[...] = src, for NumPy arrays and tensors (no autograd record)."""
    if isinstance(dst, np.ndarray):
        np.copyto(dst, src)
        return
    torch = _torch()
    with torch.no_grad():
        dst.copy_(src)


def dtype_name(dt: Any) -> str:
    """The language's conformance name of a NumPy/PyTorch dtype ('float32', 'bfloat16')."""
    torch = _torch()
    if torch is not None and isinstance(dt, torch.dtype):
        return str(dt).replace("torch.", "")
    if is_numpy_bf16(dt):
        return "bfloat16"
    return np.dtype(dt).name


def numpy_dtype(name: str) -> Any:
    """The NumPy dtype for a conformance name (bf16: ml_dtypes.bfloat16 or uint16)."""
    if name == "bfloat16":
        return BF16_NUMPY if BF16_NUMPY is not None else np.uint16
    return np.dtype(name)


def from_state(data: bytes, name: str, shape: list[int]) -> np.ndarray:
    return np.frombuffer(data, dtype=numpy_dtype(name)).reshape(shape).copy()


def host_numpy(x: Any) -> Any:
    """A host NumPy view or copy of an array for comparisons (bf16 as a (bits, name) pair)."""
    if is_torch(x):
        x = x.detach().cpu()
    return for_core(x)
