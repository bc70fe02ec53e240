"""triton_c.function: PyTriton's autograd class.

    class _square(triton_c.function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x
        @staticmethod
        def backward(ctx, dy):
            (x,) = ctx.saved_tensors
            return 2 * x * dy
    square = _square.apply

With PyTorch tensors ``apply`` is a ``torch.autograd.Function``'s apply
(gradients flow through ``backward``); with NumPy arrays it runs ``forward``
only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["function"]


class _NumpyCtx:
    """The ctx of a forward-only (NumPy) call."""

    def __init__(self) -> None:
        self.saved_tensors: tuple = ()
        self.needs_input_grad: tuple = ()

    def save_for_backward(self, *xs: Any) -> None:
        self.saved_tensors = xs

    def mark_dirty(self, *xs: Any) -> None:
        pass

    def mark_non_differentiable(self, *xs: Any) -> None:
        pass


class _Meta(type):
    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)
        cls._torch_fn = None


class function(metaclass=_Meta):
    """Base class of custom ops: static ``forward(ctx, ...)`` and ``backward(ctx, dy)``."""

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError("triton_c.function subclasses define forward(ctx, ...)")

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError("triton_c.function subclasses define backward(ctx, dy)")

    @classmethod
    def _torch_function(cls):
        if cls._torch_fn is None:
            import torch

            cls._torch_fn = type(cls.__name__, (torch.autograd.Function,), {
                "forward": staticmethod(cls.forward),
                "backward": staticmethod(cls.backward),
                "__doc__": cls.__doc__,
            })
        return cls._torch_fn

    @classmethod
    def apply(cls, *args: Any) -> Any:
        import sys

        torch = sys.modules.get("torch")
        if torch is not None and any(isinstance(a, torch.Tensor) for a in args):
            return cls._torch_function().apply(*args)
        return cls.forward(_NumpyCtx(), *args)
