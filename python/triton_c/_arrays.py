"""Arrays as the C++ core takes them: zero-copy descriptors, storage, clones, dtype names."""

from __future__ import annotations

import ctypes
from typing import Any, Optional

import numpy as np

try:  # optional: NumPy's bfloat16
    import ml_dtypes  # type: ignore

    BF16_NUMPY: Any = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - depends on the environment
    ml_dtypes = None
    BF16_NUMPY = None

try:  # NumPy 2
    from numpy.lib.array_utils import byte_bounds as _byte_bounds  # type: ignore
except ImportError:  # NumPy 1
    _byte_bounds = np.byte_bounds  # type: ignore[attr-defined]


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


def from_dlpack(x: Any) -> Any:
    """A NumPy array (CPU) or torch tensor (CUDA) for an object that only has
    ``__dlpack__``: its capsule is taken exactly once, by NumPy or PyTorch."""
    device = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
    if device == 1:  # kDLCPU: read-only where a DLPack 1.0 capsule says so
        from . import _core

        a = _core.dlpack_to_numpy(x)
        if a is None:
            raise TypeError("its __dlpack__ gave no usable array")
        return a
    torch = _torch()
    if torch is None:
        import torch  # noqa: F811 - a CUDA DLPack object needs PyTorch
    return torch.utils.dlpack.from_dlpack(x)


def _numpy_root(x: np.ndarray) -> np.ndarray:
    root = x
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root


def numpy_storage(x: np.ndarray) -> tuple[int, int]:
    """(address, bytes) of the memory a NumPy view is part of: the extent of the
    array at the root of its chain of bases."""
    lo, hi = _byte_bounds(_numpy_root(x))
    return lo, hi - lo


def _torch_storage_nbytes(t: Any) -> int:
    f = getattr(t, "untyped_storage", None)
    return int(f().nbytes()) if f is not None else int(t.storage().nbytes())


def torch_storage(t: Any) -> tuple[int, int]:
    """(address, bytes) of a tensor's storage."""
    return t.data_ptr() - t.storage_offset() * t.element_size(), _torch_storage_nbytes(t)


def _numpy_desc(x: np.ndarray, readonly: bool, torch_tensor: Any = None) -> Any:
    bf16 = is_numpy_bf16(x.dtype)
    c = x.flags.c_contiguous
    if c and not readonly and not bf16:
        return x
    if bf16:
        x = x.view(np.uint16)
    if c:
        storage, nbytes = 0, 0
    elif torch_tensor is not None:
        storage, nbytes = torch_storage(torch_tensor)
    else:
        storage, nbytes = numpy_storage(x)
    return ("host", x, "bfloat16" if bf16 else "", storage, nbytes, readonly)


def for_core(x: Any, readonly: Optional[bool] = None) -> Any:
    """An argument as the C++ core reads it. Arrays share the caller's memory:
    a C-contiguous writable NumPy array as itself, anything else as a
    descriptor (``("host", array, dtype name, storage address, storage bytes,
    read-only)``, ``("cuda", data_ptr, dtype name, shape, device)``).
    ``readonly`` overrides the array's own flag."""
    tx = type(x)
    if tx is int or tx is float or tx is bool:
        return x
    if tx is np.ndarray or isinstance(x, np.ndarray):
        return _numpy_desc(x, (not x.flags.writeable) if readonly is None else readonly)
    if is_torch(x):
        torch = _torch()
        if x.is_cuda:  # by device pointer (the view's own: strides are the kernel's business)
            return ("cuda", x.data_ptr(), _torch_name(x.dtype), x.shape, x.get_device())
        t = x.detach()
        # CPU tensors through NumPy (zero-copy; DLPack in older PyTorch lacks bool/bf16).
        n = t.view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.numpy()
        d = _numpy_desc(n, bool(readonly), t)
        if type(d) is tuple and t.dtype == torch.bfloat16:
            d = ("host", d[1], "bfloat16", d[3], d[4], d[5])
        elif t.dtype == torch.bfloat16:
            d = ("host", n, "bfloat16", 0, 0, bool(readonly))
        return d
    if isinstance(x, np.generic):
        return x.item()
    if not hasattr(x, "__dlpack__"):
        # Any other buffer (bytes, bytearray, memoryview, mmap, array.array): as
        # a NumPy view of its memory that keeps its read-only flag, so a store
        # to an immutable object (a bytes, a read-only mmap) is refused, never
        # written in place.
        try:
            mv = memoryview(x)
        except TypeError:
            return x
        n = np.asarray(mv)
        return _numpy_desc(n, mv.readonly or bool(readonly))
    return x


_TORCH_NAMES: dict = {}


def _torch_name(dt: Any) -> str:
    n = _TORCH_NAMES.get(dt)
    if n is None:
        n = _TORCH_NAMES[dt] = str(dt).replace("torch.", "")
    return n


def clone(x: Any, writable: bool = True) -> Any:
    """A copy with the same layout: a strided view is copied with the whole
    storage it is part of, so that its strides and the bytes around it mean
    the same in the copy. ``writable=False`` keeps a read-only NumPy array so."""
    if isinstance(x, np.ndarray):
        if x.flags.c_contiguous or x.size == 0:
            c = np.array(x, copy=True, order="C")
        else:
            lo, nbytes = numpy_storage(x)
            raw = np.frombuffer((ctypes.c_uint8 * nbytes).from_address(lo), dtype=np.uint8).copy()
            c = np.ndarray(x.shape, dtype=x.dtype, buffer=raw, offset=x.ctypes.data - lo,
                           strides=x.strides)
        if not writable and not x.flags.writeable:
            c.flags.writeable = False
        return c
    if is_torch(x):
        t = x.detach()
        if t.is_contiguous() or t.numel() == 0:
            return t.clone(memory_format=_torch().contiguous_format)
        n = _torch_storage_nbytes(t) // t.element_size()
        full = t.as_strided((n,), (1,), 0).clone()
        return full.as_strided(t.size(), t.stride(), t.storage_offset())
    return x


def to_host(x: Any) -> Any:
    """A host copy of a CUDA tensor with the same layout (other values unchanged)."""
    if is_cuda(x):
        t = x.detach()
        if t.is_contiguous():
            return t.cpu()
        n = _torch_storage_nbytes(t) // t.element_size()
        full = t.as_strided((n,), (1,), 0).cpu()
        return full.as_strided(t.size(), t.stride(), t.storage_offset())
    return x


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class _Memory:
    """Bytes at an address as NumPy reads them (``__array_interface__``),
    keeping alive the object that owns them."""

    def __init__(self, address: int, nbytes: int, owner: Any, readonly: bool) -> None:
        self.__array_interface__ = {"data": (address, readonly), "shape": (nbytes,),
                                    "typestr": "|u1", "version": 3}
        self.owner = owner


def _extent(x: Any) -> tuple[int, int, int, bool]:
    """(data pointer, lo, hi, whole) of the bytes [lo, hi) the C++ core takes as
    array `x`'s buffer: a C-contiguous array's own bytes (whole: False), a
    strided view's whole storage from the view's element alignment, in whole
    elements (whole: True)."""
    if isinstance(x, np.ndarray):
        ptr, es = x.ctypes.data, x.dtype.itemsize
        if x.flags.c_contiguous or x.size == 0:
            return ptr, ptr, ptr + x.nbytes, False
        lo, n = numpy_storage(x)
    else:
        ptr, es = x.data_ptr(), x.element_size()
        if x.is_contiguous() or x.numel() == 0:
            return ptr, ptr, ptr + x.numel() * es, False
        lo, n = torch_storage(x)
    skew = (ptr - lo) % es
    return ptr, lo + skew, lo + skew + (n - skew) // es * es, True


def span(x: Any, like: Any = None) -> Any:
    """Array `x`'s buffer as the C++ core takes it (every element a launch may
    write): a C-contiguous array itself; a strided view's whole storage as a
    1-D array of its dtype sharing its memory. With `like` (an array of which
    `x` is a copy with the same layout, as clone and to_host make): the bytes
    of `x` that correspond to `like`'s buffer."""
    like = x if like is None else like
    ptr, lo, hi, whole = _extent(like)
    if not whole:
        return x
    if isinstance(x, np.ndarray):
        start = x.ctypes.data + (lo - ptr)
        xlo, xn = numpy_storage(x)
        if start < xlo or start + (hi - lo) > xlo + xn:
            raise ValueError("span: the copy does not hold the array's buffer")
        raw = np.asarray(_Memory(start, hi - lo, x, not x.flags.writeable))
        return raw.view(x.dtype)
    es = x.element_size()
    base = x.data_ptr() - x.storage_offset() * es
    off = x.data_ptr() + (lo - ptr) - base
    if off < 0 or off % es or base + off + (hi - lo) > base + _torch_storage_nbytes(x):
        raise ValueError("span: the copy does not hold the array's buffer")
    return x.detach().as_strided(((hi - lo) // es,), (1,), off // es)


def apply_changes(dst: Any, before: Any, after: Any) -> bool:
    """dst's buffer (span: a strided view's whole storage, every element a
    launch may write) takes after's bits where they differ from before's (so
    that only what a kernel stored reaches dst); whether any did. `before` and
    `after` are copies of dst with its layout (clone, to_host)."""
    dst, before, after = span(dst), span(before, dst), span(after, dst)
    if isinstance(dst, np.ndarray):
        size = dst.dtype.itemsize
        b = np.asarray(before).view(_UINT[size])
        a = np.asarray(after).view(_UINT[size])
        m = a != b
        if not m.any():
            return False
        dst[m] = np.asarray(after)[m]
        return True
    torch = _torch()
    ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    size = dst.element_size()
    a, b = after.to(dst.device), before.to(dst.device)
    m = a.view(ints[size]) != b.view(ints[size])
    if not bool(m.any()):
        return False
    with torch.no_grad():
        dst[m] = a[m]
    return True


def dtype_name(dt: Any) -> str:
    """The language's conformance name of a NumPy/PyTorch dtype ('float32', 'bfloat16')."""
    torch = _torch()
    if torch is not None and isinstance(dt, torch.dtype):
        return str(dt).replace("torch.", "")
    if dt is None:
        raise TypeError("None is not a dtype")
    if (isinstance(dt, str) and dt == "bfloat16") or is_numpy_bf16(dt):
        return "bfloat16"  # (NumPy has no such name without ml_dtypes)
    return np.dtype(dt).name


def is_dtype(v: Any) -> bool:
    """Whether `v` names a dtype (a NumPy or PyTorch dtype or a NumPy scalar type)."""
    torch = _torch()
    if torch is not None and isinstance(v, torch.dtype):
        return True
    if isinstance(v, np.dtype):
        return True
    return isinstance(v, type) and issubclass(v, np.generic)


def numpy_dtype(name: str) -> Any:
    """The NumPy dtype for a conformance name (bf16: ml_dtypes.bfloat16 or uint16)."""
    if name == "bfloat16":
        return BF16_NUMPY if BF16_NUMPY is not None else np.uint16
    return np.dtype(name)


def from_state(data: bytes, name: str, shape: list[int], strides: Optional[list[int]] = None,
               origin: int = 0) -> np.ndarray:
    """An array of a trap's state: the buffer's bytes seen through the view."""
    dt = numpy_dtype(name)
    if strides is None:
        n = int(np.prod(shape)) if shape else 1
        return np.frombuffer(data, dtype=dt, count=n, offset=origin).reshape(shape).copy()
    # The view over a private copy of the buffer's bytes, not the view copied
    # out: a broadcast (stride-0) view of 4 bytes may span exabytes.
    raw = np.frombuffer(bytearray(data), dtype=np.uint8)
    return np.ndarray(tuple(shape), dtype=dt, buffer=raw, offset=origin, strides=tuple(strides))


def host_numpy(x: Any) -> Any:
    """A host NumPy view or copy of an array for comparisons (bf16 as a (bits, name) pair)."""
    if is_torch(x):
        x = x.detach().cpu()
        if x.dtype == _torch().bfloat16:
            return ("host", x.contiguous().view(_torch().int16).numpy(), "bfloat16", 0, 0, False)
        return np.ascontiguousarray(x.numpy())
    if isinstance(x, np.ndarray):
        if is_numpy_bf16(x.dtype):
            return ("host", np.ascontiguousarray(x).view(np.uint16), "bfloat16", 0, 0, False)
        return np.ascontiguousarray(x)
    return x
