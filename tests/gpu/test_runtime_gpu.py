"""The runtime takes numpy and cupy arrays as well as torch tensors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_numpy_arrays_are_copied_in_and_out(torch) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((300, 256)).astype(bfloat16)
    b = rng.standard_normal((200, 256)).astype(bfloat16)
    c = np.full((300, 200), np.nan, dtype=bfloat16)
    tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt")(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    out = c.astype(np.float64)
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-2


def test_cupy_arrays(torch) -> None:
    cupy = pytest.importorskip("cupy")
    a = cupy.random.standard_normal((256, 128), dtype=cupy.float32).astype(cupy.float16)
    b = cupy.random.standard_normal((384, 128), dtype=cupy.float32).astype(cupy.float16)
    c = cupy.full((256, 384), cupy.nan, dtype=cupy.float16)
    tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt_f16")(a, b, c)
    cupy.cuda.Device().synchronize()
    ref = a.astype(cupy.float64) @ b.astype(cupy.float64).T
    err = float(cupy.linalg.norm(c.astype(cupy.float64) - ref) / cupy.linalg.norm(ref))
    assert err < 1e-2


def test_register_budgets_reach_the_jit(torch) -> None:
    """Causal head-dim-256 attention with the two-stage overlap fits 240 registers
    per consumer thread (the default) but spills at 200: the driver JIT sees the
    budget we ask for, and allow_spills runs the spilling kernel anyway."""
    gen = torch.Generator(device="cuda").manual_seed(5)
    q, k, v = (
        torch.randn(2, 256, 256, device="cuda", generator=gen).to(torch.bfloat16)
        for _ in range(3)
    )
    source = EXAMPLES / "attention_d256.mlir"
    options = dict(num_stages=2, mma_depth=1, two_stage=True, tuned=False)
    tight = dict(producer_registers=24, consumer_registers=200)
    with pytest.raises(tawa_xdsl.runtime.ResourceError, match="spills"):
        tawa_xdsl.compile(source, "attention_causal_d256", **options, **tight).load()
    ref = torch.nn.functional.scaled_dot_product_attention(
        q.double(), k.double(), v.double(), is_causal=True
    )
    for extra in ({}, dict(tight, allow_spills=True)):
        o = torch.full_like(q, float("nan"))
        kernel = tawa_xdsl.compile(source, "attention_causal_d256", **options, **extra)
        kernel(q, k, v, o, 1 / 16)
        torch.cuda.synchronize()
        err = float((o.double() - ref).norm() / ref.norm())
        assert err < 1e-2
