"""The worker process of the triton backend (docs/triton.md).

    python -m triton_c.triton_worker [--mode auto|gpu|interpret]

Runs kernels that `tritonc --emit=triton` printed, with Triton on the GPU or
with Triton's interpreter (TRITON_INTERPRET=1, no GPU needed), for the C++
tools (runtime/TritonBackend.cpp), which start it, send it many kernels, and
start a new one after a crash or a hang. The protocol is one JSON object per
line on stdin and stdout:

  worker -> {"ready": true, "mode": "interpret", "triton": "3.6.0", "torch": ..., "device": ...}
            or {"ready": false, "error": "the triton backend needs the 'triton' Python package: ..."}
  tool   -> {"source": MODULE_TEXT, "grid": [x, y, z], "num_warps": 4, "num_stages": 3,
             "options": {"enable_fp_fusion": false}  (optional: more launch options),
             "arrays": [{"dtype": "f32", "data": BASE64}, ...],
             "args": [{"array": 0, "offset": ELEMENTS} | {"value": INT}, ...]}
  worker -> {"ok": true, "arrays": [BASE64, ...], "seconds": S}
            or {"ok": false, "error": "..."}

Scalars arrive as the kernel receives them (floats as their bit pattern, see the
module's scalar_argument). Anything the kernels print goes to stderr, so stdout
carries only the protocol. The module imports nothing heavy unless run.
"""

import base64
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
import time
import traceback

_MAX_ERROR = 6000
_KEEP_MODULES = 256


def _reply(proto, obj):
    proto.write(json.dumps(obj) + "\n")
    proto.flush()


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


def _context_usable(torch):
    try:
        torch.cuda.synchronize()
        torch.zeros(1, device="cuda").add_(1).item()
        return True
    except Exception:
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
    device = torch.cuda.get_device_name() if mode == "gpu" else "CPU (TRITON_INTERPRET=1)"
    _reply(proto, {"ready": True, "mode": mode, "triton": triton.__version__,
                   "torch": torch.__version__, "python": sys.version.split()[0],
                   "device": device})
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
            reply = worker.run(req)
        except Exception as e:
            reply = {"ok": False, "error": _error_text(e)}
            if mode == "gpu" and not _context_usable(torch):
                # A fault (an illegal address) poisons the CUDA context for good:
                # answer, then end; the tool starts a new worker for the next kernel.
                reply["error"] += " (the CUDA context is lost: this worker ends)"
                _reply(proto, reply)
                return 2
        _reply(proto, reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
