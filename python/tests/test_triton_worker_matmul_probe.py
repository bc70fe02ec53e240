"""The triton backend's worker: its check of NumPy's matmul (interpret mode).

Triton's interpreter computes tl.dot as np.matmul, and with the reference BLAS (Debian's
libblas3) a NaN or infinity multiplied by zero adds nothing in some operand layouts. The
worker says so in its ready message ("matmul_drops_nan"), and triton-fuzz then sets aside
differences of `@` kernels whose reference values are NaN or infinite there
(fuzz/TritonOracle.h, tritonDotNanDivergence). The check compares np.matmul with NumPy's
own loops (np.einsum): here it is run against a matmul that drops NaN * 0 and one that
does not.
"""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
_spec = importlib.util.spec_from_file_location(
    "tc_triton_worker_probe_under_test", os.path.join(ROOT, "python", "triton_c", "triton_worker.py"))
_worker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_worker)


def _dropping_matmul(x, y):
    """A matmul that skips zero multiplicands, as the reference BLAS's loops do."""
    out = np.zeros((x.shape[0], y.shape[1]), np.result_type(x, y))
    for i in range(x.shape[0]):
        for j in range(y.shape[1]):
            for k in range(x.shape[1]):
                if x[i, k] != 0 and y[k, j] != 0:
                    out[i, j] += x[i, k] * y[k, j]
    return out


def test_probe_sees_a_matmul_that_drops_nan(monkeypatch):
    monkeypatch.setattr(np, "matmul", _dropping_matmul)
    assert _worker._matmul_drops_nan() is True


def test_probe_passes_an_ieee_matmul(monkeypatch):
    monkeypatch.setattr(np, "matmul", lambda x, y: np.einsum("ik,kj->ij", x, y))
    assert _worker._matmul_drops_nan() is False


def test_ready_message_says_it_in_interpret_mode():
    pytest.importorskip("triton", reason="the 'triton' package is not installed "
                        "(scripts/setup.sh installs it)")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    p = subprocess.run([sys.executable, "-m", "triton_c.triton_worker", "--mode", "interpret"],
                       input="", capture_output=True, text=True, env=env, timeout=120)
    ready = json.loads(p.stdout.splitlines()[0])
    assert ready["ready"] is True, ready
    assert ready["matmul_drops_nan"] is _worker._matmul_drops_nan()
