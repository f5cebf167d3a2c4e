"""split-k and stream-k kernel pairs on the H100, compiled with the default
options, against float64: every slice (split-K) or the sum of the slots
(stream-K, one program per SM) of the f32 workspace, the workspace poisoned
first; and the whole pair, whose reduce kernel reads the f32 partial tiles
through shared memory into registers in the accumulator layout, the output
poisoned too."""

from __future__ import annotations

from pathlib import Path

import pytest

import tawa_xdsl
from tawa_xdsl.dispatch_rules import split_count
from tawa_xdsl.partials import stream_k_slots

from .conftest import rel_err

GEMM = Path(__file__).resolve().parents[2] / "examples" / "gemm.mlir"


def _pair_source(mode: str) -> str:
    return str(tawa_xdsl.apply(tawa_xdsl.parse(GEMM), mode))


def _stream_k_slots(kernel, m: int, n: int, k: int, programs: int) -> int:
    """The workspace slots a stream-K launch of this shape needs, counted in
    the kernel's tiles."""
    bm, bn = kernel.options["block_m"] or 128, kernel.options["block_n"] or 128
    return stream_k_slots(-(-m // bm) * -(-n // bn), -(-k // 64), programs)


def _inputs(torch, m: int, n: int, k: int):
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
    return a, b


@pytest.mark.parametrize("shape", [(128, 128, 8192), (1000, 696, 328)])
def test_split_k_partials(torch, shape) -> None:
    m, n, k = shape
    splits = max(2, split_count(m, n, k, 128, 256, 64))
    kernel = tawa_xdsl.compile(
        _pair_source(f"split-k{{splits={splits}}}"), "gemm_nt_split_k"
    )
    a, b = _inputs(torch, m, n, k)
    ws = torch.full((splits, m, n), float("nan"), device="cuda")
    kernel(a, b, ws)
    torch.cuda.synchronize()
    trips = -(-k // 64)
    for s in range(splits):
        lo, hi = s * trips // splits * 64, (s + 1) * trips // splits * 64
        ref = a[:, lo:hi].double() @ b[:, lo:hi].double().t()
        if lo == hi:
            assert not ws[s].any()
        else:
            assert rel_err(ws[s], ref) < 1e-4


@pytest.mark.parametrize("shape", [(128, 1024, 8192), (1000, 700, 4096)])
@pytest.mark.parametrize("programs", [7, 132])
def test_stream_k_partials(torch, shape, programs) -> None:
    m, n, k = shape
    kernel = tawa_xdsl.compile(_pair_source("stream-k"), "gemm_nt_stream_k")
    slots = _stream_k_slots(kernel, m, n, k, programs)
    a, b = _inputs(torch, m, n, k)
    ws = torch.full((slots, m, n), float("nan"), device="cuda")
    kernel(a, b, ws, grid=(programs,))
    torch.cuda.synchronize()
    assert not ws.isnan().any()
    assert rel_err(ws.sum(0), a.double() @ b.double().t()) < 1e-4


@pytest.mark.parametrize("shape", [(128, 128, 8192), (1000, 700, 4096)])
def test_split_k_pair(torch, shape) -> None:
    m, n, k = shape
    splits = max(2, split_count(m, n, k, 128, 256, 64))
    source = _pair_source(f"split-k{{splits={splits}}}")
    partials = tawa_xdsl.compile(source, "gemm_nt_split_k")
    reduce = tawa_xdsl.compile(source, "gemm_nt_split_k_reduce")
    a, b = _inputs(torch, m, n, k)
    ws = torch.full((splits, m, n), float("nan"), device="cuda")
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    partials(a, b, ws)
    reduce(ws, c)
    torch.cuda.synchronize()
    assert rel_err(c, a.double() @ b.double().t()) < 1e-2


@pytest.mark.parametrize("programs", [7, 132])
def test_stream_k_pair(torch, programs) -> None:
    m, n, k = 1000, 700, 4096
    source = _pair_source("stream-k")
    partials = tawa_xdsl.compile(source, "gemm_nt_stream_k")
    reduce = tawa_xdsl.compile(source, "gemm_nt_stream_k_reduce")
    slots = _stream_k_slots(partials, m, n, k, programs)
    a, b = _inputs(torch, m, n, k)
    ws = torch.full((slots, m, n), float("nan"), device="cuda")
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    partials(a, b, ws, grid=(programs,))
    reduce(ws, c)
    torch.cuda.synchronize()
    assert rel_err(c, a.double() @ b.double().t()) < 1e-2


ACCUMULATE = GEMM.parents[1] / "tests" / "kernels" / "gemm_accumulate.mlir"


@pytest.mark.parametrize("cut", [{"split_k": 3}, {"stream_k": True}], ids=str)
def test_pairs_of_an_initial_accumulator_and_two_stores(torch, cut) -> None:
    """C = A @ B^T + C (the reduce kernel starts its sum from the loaded C)
    and two stores of one accumulator (C and relu into D), split and streamed
    by compile() on a shape the pair runs (tests/test_split_k.py on the CPU)."""
    m, n, k = 256, 256, 8192
    a, b = _inputs(torch, m, n, k)
    product = a.double() @ b.double().t()
    c = torch.randn(m, n, device="cuda").to(torch.bfloat16)
    expected = product + c.double()
    kernel = tawa_xdsl.compile(ACCUMULATE, "gemm_accumulate", **cut)
    kernel(a, b, c)
    torch.cuda.synchronize()
    assert kernel.kernel.contract.split is not None  # the pair ran
    assert rel_err(c, expected) < 1e-2
    c, d = (
        torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        for _ in range(2)
    )
    kernel = tawa_xdsl.compile(ACCUMULATE, "gemm_two_outputs", **cut)
    kernel(a, b, c, d)
    torch.cuda.synchronize()
    assert kernel.kernel.contract.split is not None
    assert rel_err(c, product) < 1e-2
    assert rel_err(d, product.clamp(min=0)) < 1e-2
