"""Kernels the compiler once refused or degraded (issue 14.3), compiled with the
default options and run on the H100 against float64 references: an i32 key-block
counter on 64-row attention tiles (one consumer warpgroup), two K loops into
separate accumulators, scf.while and scf.if in the epilogue, and a grid that
follows from a scalar (rows per program), persistent by default. Extents are not
multiples of the tiles; device rows keep the 16-byte pitches TMA needs (other
pitches run through the staging copy, `runtime/realign.py`, tested in
test_realign_gpu.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import tawa_xdsl

from .conftest import rel_err

KERNELS = Path(__file__).resolve().parents[1] / "kernels"


def randn(torch, *shape: int):
    return torch.randn(*shape, device="cuda").to(torch.bfloat16)


@pytest.mark.parametrize("seq", [64, 448, 4096])
def test_attention_with_an_i32_counter(torch, seq) -> None:
    """Base-2 softmax of Q K^T over `seq` keys (a multiple of 64)."""
    q, k, v = (randn(torch, 3, seq, 64) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    kernel = tawa_xdsl.compile(KERNELS / "attention_i32.mlir", "attention_i32")
    assert kernel.options["num_consumers"] == 1
    kernel(q, k, v, o, seq // 64)
    torch.cuda.synchronize()
    s = (q.double() @ k.double().transpose(-1, -2)) * math.log(2)
    assert rel_err(o, s.softmax(-1) @ v.double()) < 1e-2


@pytest.mark.parametrize("size", [(1000, 696, 328, 136), (4096, 4096, 1024, 1024)])
def test_two_k_loops_into_separate_accumulators(torch, size) -> None:
    m, n, k1, k2 = size
    a1, b1, a2, b2 = (
        randn(torch, m, k1),
        randn(torch, n, k1),
        randn(torch, m, k2),
        randn(torch, n, k2),
    )
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel = tawa_xdsl.compile(KERNELS / "gemm_two_loops.mlir", "gemm_two_loops")
    kernel(a1, b1, a2, b2, c)
    torch.cuda.synchronize()
    ref = a1.double() @ b1.double().t() + a2.double() @ b2.double().t()
    assert rel_err(c, ref) < 1e-2


@pytest.mark.parametrize(("halvings", "negate"), [(0, 0), (3, 1)])
def test_while_and_if_in_the_epilogue(torch, halvings, negate) -> None:
    a, b = randn(torch, 1000, 328), randn(torch, 696, 328)
    c = torch.full((1000, 696), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel = tawa_xdsl.compile(KERNELS / "gemm_while.mlir", "gemm_while")
    kernel(a, b, c, halvings, negate)
    torch.cuda.synchronize()
    ref = (a.double() @ b.double().t()) / 2**halvings * (-1 if negate else 1)
    assert rel_err(c, ref) < 1e-2


@pytest.mark.parametrize("rows", [64, 192])
def test_grid_from_a_scalar(torch, rows) -> None:
    """Each program computes `rows` rows; the launch (persistent by default)
    reads the tile count off the scalar."""
    a, b = randn(torch, 1000, 328), randn(torch, 696, 328)
    c = torch.full((1000, 696), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel = tawa_xdsl.compile(KERNELS / "gemm_rows.mlir", "gemm_rows")
    assert kernel.options["persistent"]
    kernel(a, b, c, rows)
    torch.cuda.synchronize()
    assert rel_err(c, a.double() @ b.double().t()) < 1e-2
