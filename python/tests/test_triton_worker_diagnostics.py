"""The triton backend's worker: what it says when Triton's compiler fails (gpu mode).

Triton's Python error is only "PassManager::run failed"; the compiler's C++ passes print
the reason (an LLVM assertion, the MLIR pass that failed) on the process's stderr. The
worker captures fd 2 for each request (_StderrCapture) and appends those lines to the
error (_compiler_diagnostics), which is what triton-fuzz recognises known Triton bugs by
(fuzz/TritonOracle.h, tritonKnownBug; tests/unit/TritonKnownBugTest.cpp holds the
texts). Checked with the two reproducers of docs/upstream compiled for sm_90 offline (no
GPU needed): on Triton 3.6 they fail with the assertions of the two known bugs; a kernel
that Triton refuses in Python gives no compiler lines.
"""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

triton = pytest.importorskip("triton", reason="the 'triton' package is not installed "
                             "(scripts/setup.sh installs it)")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# This tree's worker (an installed triton_c may be older), as the C++ tools run it.
_spec = importlib.util.spec_from_file_location(
    "tc_triton_worker_under_test", os.path.join(ROOT, "python", "triton_c", "triton_worker.py"))
_worker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_worker)
_compiler_diagnostics = _worker._compiler_diagnostics

SCRIPT = textwrap.dedent(r"""
    import importlib.util, json, os, sys
    import triton, triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton_c.triton_worker import _StderrCapture, _compiler_diagnostics, _error_text

    def load(name):
        spec = importlib.util.spec_from_file_location(
            name.replace("-", "_"), os.path.join(sys.argv[1], "docs", "upstream", name + ".py"))
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        return m

    @triton.jit
    def refused(X):
        tl.store(X + tl.arange(0, 3), 1.0)  # arange's range must be a power of two

    cw = load("triton-coalesce-dead-while")
    fd = load("triton-fp64-dot-narrow-operand")
    jobs = {
        "coalesce": lambda: triton.compile(
            ASTSource(cw.dead_while_load, {"X": "*i64", "Y": "*i64", "K": "i32"}, {}),
            target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}),
        "fp64dot": lambda: fd.compile_one("fp16", "fp64", 16, 16, 16),
        "refused": lambda: triton.compile(ASTSource(refused, {"X": "*fp32"}, {}),
                                          target=GPUTarget("cuda", 90, 32)),
    }
    out = {}
    cap = _StderrCapture()
    for name, job in jobs.items():
        err = ""
        try:
            with cap:
                job()
        except Exception as e:
            err = _error_text(e)
        out[name] = {"error": err, "diag": _compiler_diagnostics(cap.text),
                     "captured": len(cap.text)}
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    if tuple(int(x) for x in triton.__version__.split(".")[:2]) >= (3, 9):
        pytest.skip("Triton %s has neither bug (both fixed in 3.9.0)" % triton.__version__)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    env.pop("TRITON_INTERPRET", None)
    script = tmp_path_factory.mktemp("diag") / "compile_known_bugs.py"  # @jit needs a file
    script.write_text(SCRIPT)
    r = subprocess.run([sys.executable, str(script), ROOT], capture_output=True, text=True,
                       env=env, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def test_fp64_dot_narrow_operand_diagnostic(results):
    res, _ = results
    f = res["fp64dot"]
    assert "PassManager::run failed" in f["error"]
    assert "Currently fp64 don't support largeK MMA" in f["diag"]
    assert "Pipeline failed while executing [`ConvertTritonGPUToLLVM`" in f["diag"]


def test_coalesce_dead_while_diagnostic(results):
    res, _ = results
    f = res["coalesce"]
    assert "PassManager::run failed" in f["error"]
    assert "Assertion `idx < size()' failed" in f["diag"]
    assert "Pipeline failed while executing [`TritonGPUCoalesce`" in f["diag"]
    # Only the lines that say why, not the module Triton dumps (thousands of characters).
    assert len(f["diag"]) < 1500 < f["captured"]


def test_other_error_has_no_compiler_lines(results):
    res, _ = results
    f = res["refused"]
    assert f["error"] and "PassManager" not in f["error"]
    assert f["diag"] == ""


def test_captured_text_goes_on_to_stderr(results):
    # What the compiles printed is not lost: the worker writes it on after each request.
    _, stderr = results
    assert "Currently fp64 don't support largeK MMA" in stderr
    assert "TritonGPUCoalesce" in stderr


def test_compiler_diagnostics_filter():
    text = ("module {\n  %0 = tt.load %p : tensor<4x!tt.ptr<i64>>\n}\n"
            "python: x.cpp:1: f(): Assertion `a' failed.\n"
            "k.py:3:0: error: Failures have been detected\n"
            "k.py:3:0: note: Pipeline failed while executing [`P` on 'builtin.module']\n")
    assert _compiler_diagnostics(text).splitlines() == [
        "python: x.cpp:1: f(): Assertion `a' failed.",
        "k.py:3:0: error: Failures have been detected",
        "k.py:3:0: note: Pipeline failed while executing [`P` on 'builtin.module']"]
    assert _compiler_diagnostics("") == ""
    assert _compiler_diagnostics("x: error: " + "y" * 5000, limit=100).endswith(" ...")
