"""The worker process of the triton backend (docs/triton.md).

    python -m triton_c.triton_worker [--mode auto|gpu|interpret]

Runs kernels that `tritonc --emit=triton` printed, with Triton on the GPU or
with Triton's interpreter (TRITON_INTERPRET=1, no GPU needed), for the C++
tools (runtime/TritonBackend.cpp), which start it, send it many kernels, and
start a new one after a crash or a hang. The protocol is one JSON object per
line on stdin and stdout:

  worker -> {"ready": true, "mode": "interpret", "triton": "3.6.0", "torch": ..., "device": ...,
             "matmul_drops_nan": false}  (interpret mode: see _matmul_drops_nan)
            or {"ready": false, "error": "the triton backend needs the 'triton' Python package: ..."}
  tool   -> {"source": MODULE_TEXT, "grid": [x, y, z], "num_warps": 4, "num_stages": 3,
             "options": {"enable_fp_fusion": false}  (optional: more launch options),
             "arrays": [{"dtype": "f32", "data": BASE64}, ...],
             "args": [{"array": 0, "offset": ELEMENTS} | {"value": INT}, ...]}
  worker -> {"ok": true, "arrays": [BASE64, ...], "seconds": S}
            or {"ok": false, "error": "..."}

In gpu mode the error of a kernel that Triton's compiler fails on ends with the
MLIR diagnostics the compiling process printed on stderr (an assertion, the
`error:`/`note:` lines that name the failing pass; see _compiler_diagnostics):
Python's own exception says only "PassManager::run failed". What the request
printed on stderr is written on to the worker's stderr after the request.

Scalars arrive as the kernel receives them (floats as their bit pattern, see the
module's scalar_argument). Anything the kernels print goes to stderr, so stdout
carries only the protocol. The module imports nothing heavy unless run.

In gpu mode the compiled kernels' files (every stage of each compile) go to a
directory of this worker's own in /dev/shm, cleared after each request, not to
Triton's cache directory (see _install_cache; TC_TRITON_CACHE=triton keeps Triton's).
"""

import base64
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import sysconfig
import tempfile
import time
import traceback

_MAX_ERROR = 6000
_KEEP_MODULES = 256


def _reply(proto, obj):
    proto.write(json.dumps(obj) + "\n")
    proto.flush()


def _install_cache(triton):
    """Triton's compile cache, cheaper for a stream of kernels that are all different.

    Triton writes every stage of every compile (source, TTIR, TTGIR, LLVM IR, PTX, cubin,
    metadata, a group file) into its cache directory, each through a fresh temporary
    directory, and reads them back: on an overlay file system that is tens of
    milliseconds per kernel, and gigabytes over a campaign whose kernels never repeat.
    Here the kernels' files go to a directory of this worker's own in memory (/dev/shm),
    each written to its final name by a rename in place, and are deleted after each
    request (the compiled kernel stays in Triton's in-process cache); the launcher stubs
    (the .so files Triton builds with the C compiler, one per signature) stay in Triton's
    own cache directory, shared by the workers. The compile itself is the same.
    Returns the directory to clear after each request, or None (a Triton without knobs,
    no /dev/shm, or TC_TRITON_CACHE=triton: Triton's own cache as it is).
    """
    if os.environ.get("TC_TRITON_CACHE") == "triton":
        return None
    try:
        from triton import knobs
        from triton.runtime.cache import FileCacheManager
    except ImportError:
        return None
    if knobs.cache.manager_class is not None:  # the user's own (TRITON_CACHE_MANAGER)
        return None
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    if base is None:
        return None
    for name in os.listdir(base):  # those of workers that were killed
        parts = name.split("-")
        if name.startswith("tc-triton-cache-") and len(parts) > 4 and parts[3].isdigit():
            try:
                os.kill(int(parts[3]), 0)
            except ProcessLookupError:
                stale = os.path.join(base, name)
                if os.path.isdir(stale) and not os.path.islink(stale):
                    shutil.rmtree(stale, ignore_errors=True)
                else:
                    try:
                        os.unlink(stale)
                    except OSError:
                        pass
            except OSError:
                pass
    shared = knobs.cache.dir
    if not shared:
        return None
    mem = tempfile.mkdtemp(prefix="tc-triton-cache-%d-" % os.getpid(), dir=base)
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"

    class WorkerCache(FileCacheManager):
        def __init__(self, key, override=False, dump=False):
            self.mem_dir = None
            if override or dump:
                super().__init__(key, override, dump)
                return
            # As FileCacheManager, but the shared directory of the key is made only
            # when a launcher goes there (its put makes it), not for every kernel.
            self.key = key
            self.cache_dir = os.path.join(shared, key)
            self.lock_path = os.path.join(self.cache_dir, "lock")
            self.mem_dir = os.path.join(mem, key)

        def _make_path(self, filename):
            if self.mem_dir is None or filename.endswith(suffix):
                return os.path.join(self.cache_dir, filename)
            return os.path.join(self.mem_dir, filename)

        def put(self, data, filename, binary=True):
            if self.mem_dir is None or filename.endswith(suffix):
                return super().put(data, filename, binary)
            path = self._make_path(filename)
            tmp = "%s.tmp%d" % (path, os.getpid())
            try:
                os.makedirs(self.mem_dir, exist_ok=True)
                with open(tmp, "wb" if isinstance(data, bytes) else "w") as f:
                    f.write(data if isinstance(data, bytes) else str(data))
                os.replace(tmp, path)
                return path
            except OSError:  # /dev/shm full (a container's is 64 MB) or gone:
                try:         # Triton's own directory, as without this cache
                    os.unlink(tmp)
                except OSError:
                    pass
                mem_dir, self.mem_dir = self.mem_dir, None
                try:
                    return super().put(data, filename, binary)
                finally:
                    self.mem_dir = mem_dir

    knobs.cache.manager_class = WorkerCache
    return mem


def _clear_cache(mem):
    if mem is None:
        return
    try:
        names = os.listdir(mem)
    except OSError:  # gone: the next compile writes to Triton's directory (WorkerCache.put)
        return
    for name in names:
        shutil.rmtree(os.path.join(mem, name), ignore_errors=True)


def _torch_compat(torch):
    # Triton's interpreter calls Tensor.untyped_storage(), which torch < 2.0
    # (Debian's python3-torch 1.13) names storage().untyped().
    if not hasattr(torch.Tensor, "untyped_storage"):
        torch.Tensor.untyped_storage = lambda self: self.storage().untyped()


class Worker:
    def __init__(self, mode, torch, triton):
        self.mode = mode
        self.torch = torch
        self.triton = triton
        self.dir = tempfile.mkdtemp(prefix="tc-triton-worker-")
        self.modules = {}
        sys.path.insert(0, self.dir)

    def module(self, source):
        key = hashlib.sha256(source.encode()).hexdigest()[:24]
        mod = self.modules.get(key)
        if mod is None:
            # A real file: @triton.jit reads the kernel's source with inspect.
            name = "tc_kernel_" + key
            path = os.path.join(self.dir, name + ".py")
            with open(path, "w") as f:
                f.write(source)
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
            self.modules[key] = mod
            os.unlink(path)  # inspect reads it at the first launch; the module keeps its text
            if len(self.modules) > _KEEP_MODULES:  # the oldest goes (a fuzz campaign's kernels
                old = next(iter(self.modules))      # are all different)
                sys.modules.pop("tc_kernel_" + old, None)
                del self.modules[old]
        return mod

    def run(self, req):
        torch = self.torch
        mod = self.module(req["source"])
        device = "cuda" if self.mode == "gpu" else "cpu"
        tensors = []
        for a in req["arrays"]:
            raw = bytearray(base64.b64decode(a["data"]))
            dt = mod.TORCH_DTYPES[a["dtype"]]
            if len(raw) == 0:
                t = torch.empty(0, dtype=dt)
            else:
                t = torch.frombuffer(raw, dtype=dt).clone()
            tensors.append(t.to(device) if device != "cpu" else t)
        args = []
        for spec, (pname, kind, dtype) in zip(req["args"], mod.PARAMS):
            if kind == "ptr":
                t = tensors[spec["array"]]
                want = mod.TORCH_DTYPES[dtype]
                if t.dtype != want:
                    t = t.view(want)
                off = spec.get("offset", 0)
                args.append(t[off:] if off else t)
            else:
                args.append(spec["value"])
        grid = tuple(req["grid"])
        start = time.perf_counter()
        mod.KERNEL[grid](*args, num_warps=req.get("num_warps", 4),
                         num_stages=req.get("num_stages", 3), **req.get("options", {}))
        if device == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        out = []
        for t in tensors:
            t = t.cpu().contiguous()
            out.append(base64.b64encode(t.view(torch.uint8).numpy().tobytes()).decode()
                       if t.numel() else "")
        return {"ok": True, "arrays": out, "seconds": seconds}


def _compiler_diagnostics(text, limit=2000):
    """The lines of a compile's stderr that say why it failed: LLVM assertions and the
    MLIR `error:`/`note:` lines (the pass that failed), not the module it dumps."""
    keep = [l.strip() for l in text.splitlines()
            if "Assertion `" in l or ": error: " in l or ": note: " in l
            or l.startswith("LLVM ERROR")]
    out = "\n".join(keep)
    return out if len(out) <= limit else out[:limit] + " ..."


class _StderrCapture:
    """Fd 2 (where Triton's C++ passes print) into a file for one request; written on
    to the real stderr afterwards, so nothing the kernel or Triton prints is lost."""

    def __init__(self):
        self.file = tempfile.TemporaryFile()
        self.saved = None
        self.text = ""

    def __enter__(self):
        sys.stderr.flush()
        self.file.seek(0)
        self.file.truncate()
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.saved = None
        self.file.seek(0)
        self.text = self.file.read().decode(errors="replace")
        if self.text:
            try:
                os.write(2, self.text.encode())
            except OSError:
                pass
        return False


def _context_usable(torch):
    try:
        torch.cuda.synchronize()
        torch.zeros(1, device="cuda").add_(1).item()
        return True
    except Exception:
        return False


def _matmul_drops_nan():
    """Whether NumPy's matmul here loses a NaN or an infinity multiplied by zero.

    Triton's interpreter computes tl.dot as np.matmul, whose BLAS decides the
    arithmetic: the reference BLAS (Debian's libblas3) skips a zero multiplicand
    in some operand layouts, so NaN * 0 and inf * 0 add nothing instead of NaN.
    Checked against np.einsum (NumPy's own loops) on the layouts the interpreter
    passes (a permuted operand is a transposed view).

    >>> isinstance(_matmul_drops_nan(), bool)
    True
    """
    import numpy as np
    a = np.zeros((4, 4), np.float32)
    a[:, 1:] = np.nan
    b = np.zeros((4, 4), np.float32)
    b[1:, :] = np.inf
    with np.errstate(invalid="ignore"):
        for x, y in ((a.T, a), (a, a.T), (a.T, a.T), (a, a), (b, b.T), (b.T, b)):
            want = np.isnan(np.einsum("ik,kj->ij", x, y))
            if not np.array_equal(np.isnan(np.matmul(x, y)), want):
                return True
    return False


def _error_text(e):
    text = "".join(traceback.format_exception_only(type(e), e)).strip()
    if len(text) > _MAX_ERROR:
        text = text[:_MAX_ERROR] + " ..."
    return text


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    mode = "auto"
    if len(argv) == 2 and argv[0] == "--mode" and argv[1] in ("auto", "gpu", "interpret"):
        mode = argv[1]
    elif argv:
        sys.stderr.write("usage: python -m triton_c.triton_worker [--mode auto|gpu|interpret]\n")
        return 3
    # The protocol keeps the real stdout; everything else printed goes to stderr.
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if mode == "interpret":
        os.environ["TRITON_INTERPRET"] = "1"
    try:
        import torch
    except ImportError as e:
        _reply(proto, {"ready": False,
                       "error": "the triton backend needs PyTorch ('torch') in %s: %s"
                                % (sys.executable, e)})
        return 1
    if mode == "auto":
        mode = "gpu" if torch.cuda.is_available() else "interpret"
        if mode == "interpret":
            os.environ["TRITON_INTERPRET"] = "1"
    if mode == "gpu" and not torch.cuda.is_available():
        _reply(proto, {"ready": False,
                       "error": "the triton backend's gpu mode needs a CUDA device that torch "
                                "%s sees (torch.cuda.is_available() is False)" % torch.__version__})
        return 1
    _torch_compat(torch)
    try:
        import triton
        import triton.language  # noqa: F401
    except ImportError as e:
        _reply(proto, {"ready": False,
                       "error": "the triton backend needs the 'triton' Python package: %s "
                                "(install it with %s -m pip install triton)" % (e, sys.executable)})
        return 1
    try:
        worker = Worker(mode, torch, triton)
    except Exception as e:  # a Triton that cannot start here
        _reply(proto, {"ready": False, "error": "Triton %s does not start: %s"
                                                % (triton.__version__, _error_text(e))})
        return 1
    cache = _install_cache(triton) if mode == "gpu" else None
    try:
        return _serve(proto, worker, mode, torch, triton, cache)
    finally:
        if cache is not None:
            shutil.rmtree(cache, ignore_errors=True)


def _serve(proto, worker, mode, torch, triton, cache):
    device = torch.cuda.get_device_name() if mode == "gpu" else "CPU (TRITON_INTERPRET=1)"
    _reply(proto, {"ready": True, "mode": mode, "triton": triton.__version__,
                   "torch": torch.__version__, "python": sys.version.split()[0],
                   "device": device,
                   "matmul_drops_nan": mode != "gpu" and _matmul_drops_nan()})
    capture = _StderrCapture() if mode == "gpu" else None
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError as e:
            _reply(proto, {"ok": False, "error": "bad request: %s" % e})
            continue
        try:
            if capture is None:
                reply = worker.run(req)
            else:
                with capture:
                    reply = worker.run(req)
        except Exception as e:
            reply = {"ok": False, "error": _error_text(e)}
            diag = _compiler_diagnostics(capture.text) if capture is not None else ""
            if diag:
                reply["error"] += "\nTriton's compiler printed:\n" + diag
            if mode == "gpu" and not _context_usable(torch):
                # A fault (an illegal address) poisons the CUDA context for good:
                # answer, then end; the tool starts a new worker for the next kernel.
                reply["error"] += " (the CUDA context is lost: this worker ends)"
                _reply(proto, reply)
                return 2
        _reply(proto, reply)
        _clear_cache(cache)  # after the answer: off the tool's path
    return 0


if __name__ == "__main__":
    sys.exit(main())
