"""Row kernels over register tiles under 64 rows: 16, 32 and 48, and tiles
ending in half a warp slab, 8, 24, 40 and 56 (tests/kernels/short_rows.mlir,
held padded to one 64-row block whose padding rows store nothing) on the H100
against float64, at extents that are not multiples of the tiles, outputs
poisoned with NaN, both store paths."""

from __future__ import annotations

from pathlib import Path

import pytest

import tawa_xdsl

from .conftest import rel_err

SOURCE = Path(__file__).resolve().parents[1] / "kernels" / "short_rows.mlir"
ROWS = 1000


@pytest.mark.parametrize("rows", [32, 8])
@pytest.mark.parametrize("tma_store", [True, False])
def test_row_softmax_of_short_tiles(torch, rows, tma_store) -> None:
    x = torch.randn(ROWS, 64, device="cuda")
    y = torch.full((ROWS, 64), float("nan"), device="cuda").to(torch.bfloat16)
    m = torch.full((ROWS,), float("nan"), device="cuda")
    kernel = tawa_xdsl.compile(SOURCE, f"row_softmax{rows}", tma_store=tma_store)
    kernel(x, y, m)
    torch.cuda.synchronize()
    assert rel_err(y, torch.softmax(x.double(), 1)) < 1e-2
    assert rel_err(m, x.double().max(1).values) == 0


@pytest.mark.parametrize("rows", [16, 24])
@pytest.mark.parametrize("tma_store", [True, False])
def test_rows_of_short_tiles_scaled(torch, rows, tma_store) -> None:
    x = torch.randn(ROWS, 128, device="cuda").to(torch.bfloat16)
    s = torch.randn(ROWS, device="cuda")
    y = torch.full((ROWS, 128), float("nan"), device="cuda").to(torch.bfloat16)
    tawa_xdsl.compile(SOURCE, f"rows{rows}_scale", tma_store=tma_store)(x, s, y)
    torch.cuda.synchronize()
    assert rel_err(y, x.double() * s.double()[:, None]) < 1e-2


@pytest.mark.parametrize("rows", [48, 40])
@pytest.mark.parametrize("tma_store", [True, False])
def test_row_ids_of_short_tiles(torch, rows, tma_store) -> None:
    x = torch.randn(ROWS, 32, device="cuda")
    y = torch.full_like(x, float("nan"))
    tawa_xdsl.compile(SOURCE, f"rows{rows}_iota", tma_store=tma_store)(x, y)
    torch.cuda.synchronize()
    ids = torch.arange(ROWS, device="cuda").double() % rows
    assert rel_err(y, x.double() + ids[:, None]) < 1e-6


@pytest.mark.parametrize("rows", [32, 56])
def test_row_exp_sums_over_a_loop(torch, rows) -> None:
    """Short tiles loaded in a loop over 64-column steps, the row sums carried."""
    x = torch.randn(ROWS, 1024, device="cuda")
    o = torch.full((ROWS,), float("nan"), device="cuda")
    tawa_xdsl.compile(SOURCE, f"row_exp_sums{rows}")(x, o)
    torch.cuda.synchronize()
    assert rel_err(o, x.double().exp().sum(1)) < 1e-5
