"""The documentation's examples run as written.

- Every ``>>>`` example in the docstrings of the public API (the package, ``kernel``,
  ``Kernel`` and its methods, ``TrapError``, ``Opt``, ``empty``, ``ops``, ``testing``)
  runs under doctest, each docstring in a namespace holding the names its prose
  assumes (``n``, ``a``, ``add``, ...); where the example computes something, its
  result is then checked against NumPy.
- The Python blocks of docs/from-triton-python.md run in order in one namespace, as the
  document says they do (blocks marked ``# needs a CUDA GPU`` and Triton's own
  ``import triton`` blocks skipped; the ``backend='triton'`` block only when the
  ``triton`` package is installed).
"""

import doctest
import importlib
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import triton_c

ROOT = Path(__file__).resolve().parents[2]

ADD = '''
__global__ void add(float *X, float *Y, float *Z, int N) {
  int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Z + i) = *?(m)(X + i) + *?(m)(Y + i);
}'''

COPY = '''
__global__ void copy(TYPE *X, TYPE *Y, int N) {
  int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
  bool m[BLOCK] = i < N;
  *?(m)(Y + i) = *?(m)(X + i);
}'''

UNMASKED_COPY = '''
__global__ void copy(float *X, float *Y, int N) {
  int i[BLOCK] = get_program_id(0) * BLOCK + 0 ... BLOCK;
  *(Y + i) = *(X + i);
}'''


def _vectors(n):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    return x, y


def _setup(name):
    """(namespace, check) for the docstring `name`: the names its examples use,
    and a function that checks the namespace after they ran (expected values
    from NumPy)."""
    g = {"np": np, "triton_c": triton_c}
    check = None
    if name in ("triton_c._kernel.Kernel.__call__", "triton_c._kernel.Kernel.__getitem__",
                "triton_c._kernel.Kernel.asm"):
        n = 1000
        x, y = _vectors(n)
        g.update(n=n, x=x, y=y, z=np.zeros(n, np.float32),
                 add=triton_c.kernel(ADD, outputs=["Z"]))

        def check(g):
            np.testing.assert_array_equal(g["z"], x + y)
    elif name == "triton_c._kernel.Kernel":
        n = 5000
        a, b = _vectors(n)
        g.update(n=n, a=a, b=b, c=np.zeros(n, np.float32))
        os.chdir(ROOT)  # (the example's path is relative to the repository)

        def check(g):
            np.testing.assert_array_equal(g["c"], a + b)
    elif name in ("triton_c._kernel.Kernel.compile", "triton_c._kernel.Kernel.params"):
        g["k"] = triton_c.kernel(COPY)
    elif name == "triton_c._kernel.TrapError":
        n = 200
        x, _ = _vectors(n)
        y = np.zeros(n, np.float32)
        g.update(n=n, x=x, y=y, k=triton_c.kernel(UNMASKED_COPY))

        def check(g):
            assert not g["y"].any()  # the caller's array: unchanged
    elif name == "triton_c._kernel.kernel":
        M = N = 64
        K = 32
        rng = np.random.default_rng(2)
        a = rng.standard_normal((M, K)).astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)
        g.update(src=(ROOT / "examples" / "matmul.tc").read_text(), a=a, b=b,
                 c=np.zeros((M, N), np.float32), M=M, N=N, K=K, lda=K, ldb=N, ldc=N)

        def check(g):
            np.testing.assert_allclose(g["c"], a @ b, rtol=1e-4, atol=1e-4)
    elif name == "triton_c.empty":
        g.update(M=3, N=5, a=np.zeros((2, 2), np.float16))

        def check(g):
            assert g["c"].shape == (3, 5) and g["c"].dtype == np.float16
    elif name == "triton_c._grid.Opt":
        g["N"] = 1000

        def check(g):
            assert g["grid"](triton_c.Opt({"BLOCK": 128})) == (8,)
    elif name in ("triton_c.ops", "triton_c.ops.dot", "triton_c.testing.do_bench"):
        rng = np.random.default_rng(3)
        a = rng.standard_normal((32, 32)).astype(np.float32)
        b = rng.standard_normal((32, 32)).astype(np.float32)
        x = rng.standard_normal((4, 50)).astype(np.float32)
        g.update(a=a, b=b, x=x)
        if name == "triton_c.ops":
            def check(g):
                np.testing.assert_allclose(g["c"], a.T @ b, rtol=1e-4, atol=1e-4)
                e = np.exp(x - x.max(axis=1, keepdims=True))
                np.testing.assert_allclose(g["y"], e / e.sum(axis=1, keepdims=True),
                                           rtol=1e-5, atol=1e-6)
        elif name == "triton_c.ops.dot":
            def check(g):
                np.testing.assert_allclose(g["c"], a @ b.T, rtol=1e-4, atol=1e-4)
    elif name == "triton_c.ops.softmax":
        torch = pytest.importorskip("torch")
        g["torch"] = torch

        def check(g):
            assert g["y"].shape == (4, 100) and g["y"].requires_grad
            np.testing.assert_allclose(g["y"].detach().sum(dim=1).numpy(), np.ones(4))
    elif name == "triton_c.testing.assert_close":
        rng = np.random.default_rng(4)
        a = rng.standard_normal((8, 8))
        b = rng.standard_normal((8, 8))
        y64 = rng.standard_normal(10)
        g.update(a=a, b=b, c=a @ b, y64=y64, y32=y64.astype(np.float32),
                 z=np.zeros(4, np.float32))
    return g, check


def _public_docstrings():
    mods = ["triton_c", "triton_c._kernel", "triton_c._grid", "triton_c.function",
            "triton_c.ops", "triton_c.testing"]
    finder = doctest.DocTestFinder(exclude_empty=True)
    out = {}
    for m in mods:
        for t in finder.find(importlib.import_module(m)):
            if t.examples:
                out[t.name] = t
    return out


DOCSTRINGS = _public_docstrings()


def test_public_docstrings_have_examples():
    # (the parametrised test below runs each; this guards against finding none)
    assert {"triton_c", "triton_c._kernel.Kernel", "triton_c._kernel.kernel",
            "triton_c._kernel.Kernel.__call__"} <= set(DOCSTRINGS)


def _needs_gpu(source):
    return "backend='compare'" in source or "backend='gpu'" in source


@pytest.mark.parametrize("name", sorted(DOCSTRINGS))
def test_docstring_examples_run(name, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    test = DOCSTRINGS[name]
    g, check = _setup(name)
    cuda, _ = triton_c.cuda_available()
    try:
        import torch

        cuda = cuda and torch.cuda.is_available()
    except ImportError:
        cuda = False
    examples = [e for e in test.examples if cuda or not _needs_gpu(e.source)]
    if any("asm['ptx']" in e.source for e in examples):
        probe = triton_c.kernel(ADD)
        probe(np.zeros(1, np.float32), np.zeros(1, np.float32), np.zeros(1, np.float32), 1,
              (1,), BLOCK=1)
        try:
            probe.asm["ptx"]
        except RuntimeError:  # built without the CUDA toolkit's libdevice
            examples = [e for e in examples if "asm['ptx']" not in e.source]
    t = doctest.DocTest(examples, g, test.name, test.filename, test.lineno, test.docstring)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    result = runner.run(t, out=report.append, clear_globs=False)
    assert result.failed == 0, "".join(report)
    if check is not None:
        check(t.globs)


# -- docs/from-triton-python.md ------------------------------------------------------

def _python_blocks(path, after):
    """The ```python blocks of a Markdown file after the text `after`, in order
    (indented ones dedented), each with its first line's number."""
    text = path.read_text(encoding="utf-8")
    start = text.index(after)
    out = []
    for m in re.finditer(r"^( *)```python\n(.*?)^\1```", text, flags=re.S | re.M):
        if m.start() < start:
            continue
        indent, body = len(m.group(1)), m.group(2)
        line = text.count("\n", 0, m.start()) + 2
        out.append((line, "\n".join(l[indent:] for l in body.splitlines())))
    return out


def test_from_triton_python_blocks_run_in_order_in_one_session(monkeypatch, tmp_path):
    doc = ROOT / "docs" / "from-triton-python.md"
    # The document's promise, and the blocks it covers (those below it).
    blocks = _python_blocks(doc, "Every block below that does not start with `# needs a CUDA GPU`")
    assert len(blocks) > 10
    monkeypatch.chdir(tmp_path)  # (a block writes add-map.html)
    try:
        import triton  # noqa: F401
        have_triton = True
    except ImportError:
        have_triton = False
    ns = {"__name__": "__doc_session__"}
    ran = 0
    for line, src in blocks:
        if src.lstrip().startswith("# needs a CUDA GPU"):
            continue  # the doc's mark for GPU-only blocks
        if re.search(r"^\s*import .*\btriton\b(?!_c)", src, flags=re.M):
            continue  # Triton's side of a comparison (needs a GPU and Triton)
        if "backend='triton'" in src and not have_triton:
            continue  # needs the triton package
        try:
            exec(compile(src, f"{doc}:{line}", "exec"), ns)
        except Exception as e:  # noqa: BLE001 - report which block
            raise AssertionError(f"{doc.name}, the block at line {line} failed: "
                                 f"{type(e).__name__}: {e}") from e
        ran += 1
    assert ran > 10
