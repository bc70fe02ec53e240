import os

import pytest

import triton_c


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")


def pytest_collection_modifyitems(config, items):
    ok, why = triton_c.cuda_available()
    torch_cuda = False
    try:
        import torch

        torch_cuda = torch.cuda.is_available()
    except ImportError:
        why = why or "PyTorch is not installed"
    if ok and torch_cuda:
        return
    skip = pytest.mark.skip(reason=f"GPU test: {why or 'PyTorch sees no CUDA device'}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _no_backend_env(monkeypatch):
    monkeypatch.delenv("TRITON_C_BACKEND", raising=False)
