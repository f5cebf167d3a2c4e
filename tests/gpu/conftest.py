"""Skip every test here unless a Hopper GPU, cuda-python and torch are present."""

from __future__ import annotations

import pytest

from tawa_xdsl.runtime import gpu_available


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if "tests/gpu/" in str(item.fspath):
            item.add_marker(pytest.mark.gpu)


@pytest.fixture(scope="session")
def torch():
    torch = pytest.importorskip(
        "torch", reason="the GPU tests use torch for inputs and references"
    )
    if not gpu_available() or not torch.cuda.is_available():
        pytest.skip("needs a Hopper GPU (sm_90) with cuda-python")
    return torch


def rel_err(out, ref) -> float:
    """|out - ref| / |ref| in float64; an unwritten (NaN) output fails it."""
    diff = (out.double() - ref).norm()
    return float(diff / ref.norm())
