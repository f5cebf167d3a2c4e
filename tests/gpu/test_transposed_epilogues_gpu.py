"""GEMMs storing an epilogue that reads the accumulator twice, transposed
(tests/kernels/transposed_epilogues.mlir: the dot computed once, as B A^T),
on the H100 against float64, at extents that are not multiples of the tiles,
the output poisoned with NaN; the default (tuned) options and a plain
non-persistent configuration storing from registers."""

from __future__ import annotations

from pathlib import Path

import pytest

import tawa_xdsl

from .conftest import rel_err

SOURCE = Path(__file__).resolve().parents[1] / "kernels" / "transposed_epilogues.mlir"
OPTIONS = [{}, {"tuned": False, "persistent": False, "tma_store": False}]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("kernel", ["gemm_trans_twice", "gemm_trans_silu"])
def test_transposed_epilogue(torch, kernel, options) -> None:
    m, n, k = 1000, 520, 328
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
    dtype = torch.bfloat16 if kernel == "gemm_trans_twice" else torch.float32
    ct = torch.full((n, m), float("nan"), device="cuda").to(dtype)
    tawa_xdsl.compile(SOURCE, kernel, **options)(a, b, ct)
    torch.cuda.synchronize()
    acc = a.double() @ b.double().t()
    if kernel == "gemm_trans_twice":
        ref = acc + acc.clamp(min=0)
    else:
        ref = acc * torch.sigmoid(acc)
    assert rel_err(ct, ref.t()) < 1e-2
