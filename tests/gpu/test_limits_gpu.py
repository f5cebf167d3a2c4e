"""Shapes at the limits on the H100: K = 0 (inputs read through stand-in
tensor maps: the output is the epilogue of a zero product, every plan),
empty outputs (nothing launched), and outputs past 4 GiB stored from
registers and through TMA (a 32-bit row offset would wrap onto the first
rows). Outputs start poisoned with NaN. tests/test_limits.py checks the same
on the CPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GEMM = EXAMPLES / "gemm.mlir"
EPILOGUE = EXAMPLES / "gemm_epilogue.mlir"

PLANS = {
    "rules": {},
    "plain-grid": {"persistent": False},
    "registers": {"tma_store": False, "persistent": False},
    "64-rows": {"block_m": 64},
    "split-k": {"split_k": 3},
    "stream-k": {"stream_k": True},
}


def _nan(torch, *shape):
    return torch.full(shape, float("nan"), device="cuda", dtype=torch.bfloat16)


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize("m", [1, 300])
def test_k_zero_gemm_stores_zeros(torch, plan: str, m: int) -> None:
    """C = A @ B^T with K = 0 is zeros, as cuBLAS gives, in every plan."""
    a = torch.empty(m, 0, device="cuda", dtype=torch.bfloat16)
    b = torch.empty(520, 0, device="cuda", dtype=torch.bfloat16)
    c = _nan(torch, m, 520)
    gemm = tawa_xdsl.compile(GEMM, "gemm_nt", **PLANS[plan])
    gemm(a, b, c)
    torch.cuda.synchronize()
    assert int(torch.count_nonzero(c)) == 0, gemm.explain(a, b, c)


def test_k_zero_epilogue_is_applied(torch) -> None:
    """K = 0 through the epilogue: relu(alpha * 0 + bias) in every row."""
    bias = torch.randn(300, device="cuda").bfloat16()
    a = torch.empty(200, 0, device="cuda", dtype=torch.bfloat16)
    b = torch.empty(300, 0, device="cuda", dtype=torch.bfloat16)
    c = _nan(torch, 200, 300)
    gemm = tawa_xdsl.compile(EPILOGUE, "gemm_scale_bias_relu")
    gemm(a, b, bias, c, 0.5)
    torch.cuda.synchronize()
    assert torch.equal(c, torch.relu(bias).expand(200, 300))


def test_k_zero_host_arrays(torch) -> None:
    """Host (numpy) arrays at K = 0: staged, launched, copied back as zeros."""
    a, b = np.empty((130, 0), bfloat16), np.empty((70, 0), bfloat16)
    c = np.full((130, 70), np.nan, bfloat16)
    tawa_xdsl.compile(GEMM, "gemm_nt")(a, b, c)
    assert not c.astype(np.float32).any()


@pytest.mark.parametrize(("m", "n"), [(0, 512), (512, 0)])
def test_empty_outputs_launch_nothing(torch, m: int, n: int) -> None:
    """M or N = 0: nothing is launched (a persistent kernel would get a grid
    of zero programs); the call and a bound launcher return."""
    a = torch.randn(m, 256, device="cuda").bfloat16()
    b = torch.randn(n, 256, device="cuda").bfloat16()
    c = _nan(torch, m, n)
    gemm = tawa_xdsl.compile(GEMM, "gemm_nt")
    gemm(a, b, c)
    gemm.bind(a, b, c)()
    torch.cuda.synchronize()
    assert c.shape == (m, n)


@pytest.mark.parametrize("n", [2049, 2048], ids=["registers", "tma"])
def test_output_past_4_gib(torch, n: int) -> None:
    """An output of more than 2^32 bytes (2^20 + 64 rows of N bf16): with N =
    2049 its rows are off TMA's grid and it is stored from registers, row
    offsets reaching 2^31 elements; with N = 2048 through TMA. The rows past
    the 4 GiB mark and the first rows (where a wrapped offset would land) hold
    the product; nothing is left NaN."""
    m, k = 2**20 + 64, 64
    gen = torch.Generator(device="cuda").manual_seed(n)
    a = torch.randn(m, k, device="cuda", generator=gen).bfloat16()
    b = torch.randn(n, k, device="cuda", generator=gen).bfloat16()
    c = _nan(torch, m, n)
    assert c.numel() * 2 > 2**32
    gemm = tawa_xdsl.compile(GEMM, "gemm_nt")
    gemm(a, b, c)
    torch.cuda.synchronize()
    assert gemm.options["tma_store"] is (n % 8 == 0)
    assert not bool(torch.isnan(c).any())
    for rows in (slice(0, 256), slice(2**32 // (2 * n) - 128, None)):
        ref = a[rows].double() @ b.double().t()
        err = float((c[rows].double() - ref).norm() / ref.norm())
        assert err < 1e-2, (rows, err)


def test_grid_past_cuda_y_limit_runs_persistent(torch) -> None:
    """70000 tiles along y (CUDA launches at most 65535 there): the
    dispatcher plans the kernel persistent, one program per SM walking every
    tile; each tile is doubled, none left poisoned (tests/test_limits.py
    checks the plan and the walk on the CPU)."""
    x = torch.randn(70000 * 64, 64, device="cuda").to(torch.bfloat16)
    out = torch.full_like(x, float("nan"))
    kernel = tawa_xdsl.compile(
        Path(__file__).resolve().parents[1] / "kernels" / "double_tiles.mlir",
        "double_tiles",
    )
    kernel(x, out)
    torch.cuda.synchronize()
    assert kernel.options["persistent"] is True
    assert torch.equal(out, (2 * x.float()).to(torch.bfloat16))
