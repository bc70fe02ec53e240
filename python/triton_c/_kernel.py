"""triton_c.kernel: compile a Triton-C kernel and call it like a function."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Iterable, Optional, Sequence, Union

import numpy as np

from . import _arrays as A
from . import _core
from ._grid import GridArg, grid_expressions, grid_values

__all__ = ["kernel", "CompileError", "TrapError", "MismatchError", "BACKENDS"]

BACKENDS = ("interp", "gpu", "compare")


class CompileError(Exception):
    """The kernel did not compile; ``str(e)`` is the compiler's clang-style text."""

    def __init__(self, diagnostics: str, defines: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(diagnostics.rstrip("\n"))
        self.diagnostics = diagnostics
        self.defines = list(defines)


class TrapError(Exception):
    """The kernel trapped (an out-of-bounds access, a failed assert, ...).

    Attributes: ``kind`` ('out_of_bounds', 'division_by_zero', ...), ``message``,
    ``kernel``, ``program`` (the program id tuple, or None for a launch-time
    trap), ``lane`` (flat row-major lane index or None), ``lane_index`` (the
    lane's index in its tile, e.g. ``(4, 0)``, or None), ``file``, ``line``, ``col``,
    ``report`` (the rendered report, also ``str(e)``) and ``state`` (the
    arrays as they were when the kernel stopped, by parameter name). The
    caller's arrays are unchanged.
    """

    def __init__(self, d: dict) -> None:
        super().__init__(d["report"].rstrip("\n"))
        self.kind: str = d["kind"]
        self.message: str = d["message"]
        self.kernel: str = d["kernel"]
        self.program: Optional[tuple[int, int, int]] = d["program"]
        self.lane: Optional[int] = d["lane"]
        shape = tuple(d.get("lane_shape", ()))
        self.lane_index: Optional[tuple[int, ...]] = (
            tuple(int(i) for i in np.unravel_index(self.lane, shape))
            if self.lane is not None and shape else None)
        self.file: str = d["file"]
        self.line: int = d["line"]
        self.col: int = d["col"]
        self.report: str = d["report"]
        self.state: dict[str, np.ndarray] = {
            k: A.from_state(*v) for k, v in d.get("state", {}).items()}


class MismatchError(AssertionError):
    """Two backends (or two variants) disagree; ``mismatches`` maps each
    differing buffer to (first flat index, got, want, count, rule)."""

    def __init__(self, what: str, mismatches: dict[str, tuple]) -> None:
        lines = [what]
        for name, (index, got, want, count, rule) in mismatches.items():
            lines.append(f"  {name}: {count} element(s) differ ({rule}); first at flat index "
                         f"{index}: {got} vs {want}")
        super().__init__("\n".join(lines))
        self.mismatches = mismatches


def _define_text(name: str, v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, str):
        return v
    try:
        return _core.lang_name(A.dtype_name(v))
    except (TypeError, ValueError):
        raise TypeError(f"define {name}={v!r}: expected a number, a string, a bool or a dtype")


def _define_specs(defines: dict[str, Any]) -> list[tuple[str, list[str]]]:
    specs = []
    for name, v in defines.items():
        if isinstance(v, (list, tuple)):
            if not v:
                raise ValueError(f"define {name}: empty list")
            specs.append((name, [_define_text(name, x) for x in v]))
        else:
            specs.append((name, [_define_text(name, v)]))
    return specs


def _raise_result(status: str, payload: Any) -> None:
    if status == "ok":
        return
    if status == "trap":
        raise TrapError(payload)
    raise RuntimeError(payload)


def _first_cuda(args: Sequence[Any]) -> Any:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    tensor = torch.Tensor
    for a in args:
        if isinstance(a, tensor) and a.is_cuda:
            return a
    return None


def _default_backend(cuda: Any) -> str:
    env = os.environ.get("TRITON_C_BACKEND", "")
    if env:
        if env not in BACKENDS:
            raise ValueError(f"TRITON_C_BACKEND={env!r}: expected one of {', '.join(BACKENDS)}")
        return env
    return "gpu" if cuda is not None else "interp"


def _current_stream(t: Any) -> tuple[int, int]:
    """(device index, raw CUstream of PyTorch's current stream there)."""
    import torch

    device = t.get_device()
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return device, raw(device)
    return device, torch.cuda.current_stream(device).cuda_stream


class Kernel:
    """A Triton-C kernel callable from Python (see :func:`kernel`)."""

    def __init__(self, src: Union[str, os.PathLike], outputs: Sequence[str] = (), *,
                 name: Optional[str] = None, include_dirs: Iterable[str] = ()) -> None:
        text = os.fspath(src)
        self._path = ""
        self._text = ""
        if "\n" not in text and text.endswith((".tc", ".c", ".h")) and os.path.isfile(text):
            self._path = text
            self._source_name = text
        else:
            self._text = text
            self._source_name = "<kernel>"
        self._kernel_name = name or ""
        self._include_dirs = [os.fspath(d) for d in include_dirs]
        self.outputs = list(outputs)
        self._compiled: dict[tuple, Any] = {}
        self._tuned: dict[tuple, tuple] = {}
        self._plans: dict[tuple, tuple] = {}
        self.last_tune_report: str = ""
        self.last_tune_from_cache: bool = False

    # -- compiling ------------------------------------------------------------
    def compile(self, defines: Sequence[tuple[str, str]] = ()) -> Any:
        """Compiles one variant (cached); raises CompileError."""
        key = tuple(defines)
        k = self._compiled.get(key)
        if k is None:
            k, diags = _core.compile(self._text, self._source_name, self._path, list(key),
                                     self._include_dirs, self._kernel_name)
            if k is None:
                raise CompileError(diags, key)
            self._compiled[key] = k
        return k

    def params(self, **defines: Any) -> list[tuple[str, str]]:
        """The parameters of the first variant: [(name, 'float32*'), ...]."""
        variants = _core.expand_defines(_define_specs(defines))
        return self.compile(variants[0]).params

    # -- calling --------------------------------------------------------------
    def __call__(self, *args: Any, grid: Optional[GridArg] = None, backend: Optional[str] = None,
                 num_warps: Union[int, Sequence[int]] = 4,
                 num_stages: Union[int, Sequence[int], None] = None,
                 key: Optional[Sequence[str]] = None, check_variants: bool = False,
                 max_seconds: float = 0.0, threads: int = 0, **defines: Any) -> Any:
        try:
            dkey = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in defines.items())
            plan = self._plans.get(dkey)
        except TypeError:  # an unhashable define value
            dkey, plan = None, None
        if plan is None:
            specs = _define_specs(defines)
            variants = _core.expand_defines(specs)
            first = self.compile(variants[0])
            plan = (specs, variants, first, self._output_indices(first))
            if dkey is not None:
                self._plans[dkey] = plan
        specs, variants, first, outputs = plan
        nparams = len(outputs[0])
        args = list(args)
        if grid is None:
            if len(args) == nparams + 1 or (args and (callable(args[-1]) or
                                                      isinstance(args[-1], (tuple, list)))):
                grid = args.pop()
            else:
                raise TypeError(f"kernel '{first.name}': no grid (give it after the "
                                f"{nparams} arguments, or as grid=...)")
        cuda = _first_cuda(args)
        backend = backend or _default_backend(cuda)
        if backend not in BACKENDS:
            raise ValueError(f"backend={backend!r}: expected one of {', '.join(BACKENDS)}")
        warps = list(num_warps) if isinstance(num_warps, (list, tuple)) else [num_warps]
        stages = ([] if num_stages is None else
                  list(num_stages) if isinstance(num_stages, (list, tuple)) else [num_stages])
        if backend == "gpu":
            self._run_gpu(args, grid, specs, variants, warps, stages, key, max_seconds, cuda)
        elif backend == "interp":
            self._run_interp(args, grid, variants, check_variants, threads, max_seconds)
        else:
            self._run_compare(args, grid, specs, variants, warps, stages, key, threads,
                              max_seconds)
        idx = outputs[1]
        if not idx:
            return None
        if len(idx) == 1:
            return args[idx[0]]
        return tuple(args[i] for i in idx)

    def _output_indices(self, k: Any) -> tuple[list[str], list[int]]:
        """The parameter names and the indices of the outputs among them."""
        names = [n for n, _ in k.params]
        for o in self.outputs:
            if o not in names:
                raise ValueError(f"outputs: kernel '{k.name}' has no parameter named '{o}'")
        return names, [names.index(o) for o in self.outputs]

    def _launch(self, k: Any, backend: str, args: list, grid_texts: list[str], *,
                num_warps: int = 4, num_stages: int = 0, stream: int = 0, threads: int = 0,
                max_seconds: float = 0.0) -> None:
        for_core = A.for_core
        core_args = [for_core(a) for a in args]
        status, payload = _core.launch(k, backend, core_args, grid_texts, num_warps, num_stages,
                                       stream, threads, max_seconds)
        _raise_result(status, payload)

    # -- interpreter ----------------------------------------------------------
    def _run_interp(self, args, grid, variants, check_variants, threads, max_seconds) -> None:
        host = [A.to_host(a) for a in args]
        if not check_variants or len(variants) == 1:
            k = self.compile(variants[0])
            self._launch(k, "interp", host, grid_values(grid, variants[0]), threads=threads,
                         max_seconds=max_seconds)
        else:
            results = []
            for v in variants:
                copies = [A.copy_of(a) for a in host]
                self._launch(self.compile(v), "interp", copies, grid_values(grid, v),
                             threads=threads, max_seconds=max_seconds)
                results.append(copies)
            ref = results[0]
            for v, res in zip(variants[1:], results[1:]):
                mm = _mismatches(self.compile(variants[0]), res, ref)
                if mm:
                    raise MismatchError(f"variant {_describe(v)} disagrees with "
                                        f"{_describe(variants[0])}", mm)
            for h, r in zip(host, ref):
                if A.is_array(h):
                    A.write_back(h, r)
        for a, h in zip(args, host):
            if a is not h:
                A.write_back(a, h)

    # -- GPU ------------------------------------------------------------------
    def _choose_variant(self, args, grid, specs, variants, warps, stages, key, device):
        """The variant to run: the only one, or the auto-tuner's pick for this key."""
        if len(variants) == 1 and len(warps) == 1 and len(stages) <= 1:
            return variants[0], warps[0], (stages[0] if stages else 0)
        k0 = self.compile(variants[0])
        names = [n for n, _ in k0.params]
        if key is not None:
            missing = [n for n in key if n not in names]
            if missing:
                raise ValueError(f"key: kernel '{k0.name}' has no parameter {missing[0]!r}")
            picked = [args[names.index(n)] for n in key]
        else:
            picked = args
        tkey = (tuple((n, tuple(v)) for n, v in specs), tuple(warps), tuple(stages), device,
                tuple(_key_part(a) for a in picked))
        hit = self._tuned.get(tkey)
        if hit is not None:
            return hit
        exprs = grid_expressions(grid, [n for n, _ in specs])
        if exprs is None:
            raise TypeError("auto-tuning needs a grid that the runtime can evaluate per "
                            "variant: use +, -, *, //, %, triton_c.cdiv, min/max on opt.d(...) "
                            "and integers in the grid lambda")
        host = [A.for_core(A.copy_of(A.to_host(a))) for a in args]
        defs, nw, ns, from_cache, report = _core.tune(k0, specs, host, exprs, warps, stages,
                                                      device)
        self.last_tune_report = report
        self.last_tune_from_cache = from_cache
        chosen = (defs, nw, ns)
        self._tuned[tkey] = chosen
        return chosen

    def _run_gpu(self, args, grid, specs, variants, warps, stages, key, max_seconds,
                 cuda=None) -> None:
        device, stream = _current_stream(cuda) if cuda is not None else (0, 0)
        defs, nw, ns = self._choose_variant(args, grid, specs, variants, warps, stages, key,
                                            device)
        k = self.compile(defs)
        self._launch(k, "gpu", args, grid_values(grid, defs, nw), num_warps=nw, num_stages=ns,
                     stream=stream, max_seconds=max_seconds)

    # -- both -----------------------------------------------------------------
    def _run_compare(self, args, grid, specs, variants, warps, stages, key, threads,
                     max_seconds) -> None:
        ref = [A.copy_of(A.to_host(a)) for a in args]
        self._launch(self.compile(variants[0]), "interp", ref, grid_values(grid, variants[0]),
                     threads=threads, max_seconds=max_seconds)
        got = [A.copy_of(a) for a in args]
        self._run_gpu(got, grid, specs, variants, warps, stages, key, max_seconds,
                      _first_cuda(got))
        mm = _mismatches(self.compile(variants[0]), [A.to_host(g) for g in got], ref)
        if mm:
            raise MismatchError("the GPU disagrees with the interpreter", mm)
        for a, r in zip(args, ref):
            if A.is_array(a):
                A.write_back(a, r if not A.is_cuda(a) else r.to(a.device))


def _key_part(a: Any) -> Any:
    if A.is_array(a):
        return ("array", tuple(a.shape), A.dtype_name(a.dtype))
    return ("scalar", a)


def _describe(v: Sequence[tuple[str, str]]) -> str:
    return " ".join(f"{k}={x}" for k, x in v) or "(no defines)"


def _mismatches(k: Any, got: list, want: list) -> dict[str, tuple]:
    out = {}
    for (name, ty), g, w in zip(k.params, got, want):
        if not ty.endswith("*"):
            continue
        r = _core.compare(A.host_numpy(g), A.host_numpy(w))
        if r is not None:
            out[name] = r
    return out


def kernel(src: Union[str, os.PathLike], outputs: Sequence[str] = (), *,
           name: Optional[str] = None, include_dirs: Iterable[str] = ()) -> Kernel:
    """Compiles Triton-C source (text or a path to a ``.tc`` file) into a callable.

    >>> k = triton_c.kernel(src, outputs=['C'])
    >>> grid = lambda opt: [triton_c.cdiv(M, opt.d('TM')), triton_c.cdiv(N, opt.d('TN'))]
    >>> c = k(a, b, c, M, N, K, lda, ldb, ldc, grid, TM=64, TN=64, TK=8, TYPE='float')

    Arguments follow the kernel's parameters, then the grid (or ``grid=``): a
    lambda over the compile options, a tuple of integers or grid expressions
    (``'cdiv(N, SIZE)'``). Keywords are macros (``-D``): numbers, strings, bools
    (0/1), dtypes (their type name); lists auto-tune on the GPU and on the
    interpreter run the first value (``check_variants=True`` runs every variant
    and raises MismatchError if they disagree). The call returns the arrays
    named in ``outputs``, written in place.
    """
    return Kernel(src, outputs, name=name, include_dirs=include_dirs)


def _now() -> float:
    return time.perf_counter()
