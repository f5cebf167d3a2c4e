"""GEMMs with swapped operands (`swap_ab=True`: C^T = B A^T on the weight
rows, A's few rows on wgmma's N side, the output stored transposed from
registers) on the H100 against float64, outputs poisoned with NaN: bf16 and
f16, B stored N x K (nt) and K x N (nn), with and without a bias, at M of
1 to 100 and an N that is not a multiple of the tiles; and FP8 (e4m3, nt)."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl

from ..conftest import EXAMPLES
from ..test_fp8 import gemm_case
from ..test_swap_operands import bias_gemm
from .conftest import rel_err
from .test_fp8_gpu import run_on_gpu

N, K = 4000, 1032  # an edge tile of N; K a partial step


def operands(torch, m: int, dtype, nn: bool):
    a = torch.randn(m, K, device="cuda").to(dtype)
    b = torch.randn(N, K, device="cuda").to(dtype)
    stored = b.t().contiguous() if nn else b
    return a, b, stored


@pytest.mark.parametrize("m", [1, 16, 64, 100])
@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_a_swapped_gemm(torch, dtype: str, layout: str, m: int) -> None:
    torch_dtype = torch.bfloat16 if dtype == "bf16" else torch.float16
    kernel = f"gemm_{layout}" + ("_f16" if dtype == "f16" else "")
    a, b, stored = operands(torch, m, torch_dtype, layout == "nn")
    c = torch.full((m, N), float("nan"), device="cuda").to(torch_dtype)
    gemm = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", kernel, swap_ab=True)
    gemm(a, stored, c)
    torch.cuda.synchronize()
    assert "swap-ab: operands swapped" in gemm.explain()
    assert rel_err(c, a.double() @ b.double().t()) < 1e-2


@pytest.mark.parametrize("m", [1, 16, 64, 100])
@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_a_swapped_gemm_with_a_bias(torch, dtype: str, layout: str, m: int) -> None:
    torch_dtype = torch.bfloat16 if dtype == "bf16" else torch.float16
    a, b, stored = operands(torch, m, torch_dtype, layout == "nn")
    bias = torch.randn(N, device="cuda").to(torch_dtype)
    c = torch.full((m, N), float("nan"), device="cuda").to(torch_dtype)
    source = bias_gemm(dtype, nn=layout == "nn")
    tawa_xdsl.compile(source, "gemm_bias", swap_ab=True)(a, stored, bias, c)
    torch.cuda.synchronize()
    assert rel_err(c, a.double() @ b.double().t() + bias.double()) < 1e-2


@pytest.mark.parametrize("m", [16, 100])
@pytest.mark.parametrize("kernel", ["gemm_fp8_tensorwise", "gemm_fp8_rowwise"])
def test_a_swapped_fp8_gemm(torch, kernel: str, m: int) -> None:
    """e4m3 A and B (both K-major), bf16 output, per-tensor or row-wise scales
    (A's row scales a column vector of the swapped accumulator)."""
    case = gemm_case(kernel, (m, N, K), seed=0)
    got = run_on_gpu(torch, EXAMPLES / "gemm_fp8.mlir", case, swap_ab=True)
    err = np.abs(got - case.reference).max() / np.abs(case.reference).max()
    assert err < 1e-2, err


@pytest.mark.parametrize("shape", [(1, 4096, 4096), (8, 4096, 4096), (16, 6144, 4096)])
def test_the_rules_swap_a_decode_gemm(torch, shape: tuple[int, int, int]) -> None:
    """Rows the shape rules swap by default (no option given): the swapped
    kernel they pick, uncut, against float64 on a NaN-poisoned output."""
    m, n, k = shape
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
    c = torch.full((m, n), float("nan"), device="cuda").to(torch.bfloat16)
    gemm = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt")
    gemm(a, b, c)
    torch.cuda.synchronize()
    assert "swap-ab: the wave model predicts" in gemm.explain()
    assert rel_err(c, a.double() @ b.double().t()) < 1e-2
