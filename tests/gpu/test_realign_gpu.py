"""Inputs TMA cannot describe (issue 16 item 4), on the H100: device arrays whose
rows are not 16 bytes apart (K = 999 in bf16, K = 1000 in fp8, N = 777 as B of
an nn GEMM) or whose first element is off a 16-byte boundary (a view one column
in) run through aligned buffers (`runtime.realign`), as do large GEMMs' inputs
off the 32-byte sector grid (K = 1000 bf16), against float64 with the outputs
poisoned; bound launches copy again at every launch. An input passed as the
output's own memory (D = A @ B^T + D) is read from such a copy too."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl

from ..conftest import EXAMPLES
from ..test_fp8 import gemm_case
from .conftest import rel_err
from .test_dispatch_gpu import GEMM, gemm_inputs
from .test_fp8_gpu import device

KERNELS = EXAMPLES.parent / "tests" / "kernels"


def off_grid(torch, x, column: int = 1):
    """`x` as a view `column` elements into the rows of a wider array: its base
    and its row pitch are off the 16-byte grid, its values are `x`'s."""
    wide = torch.zeros(
        *x.shape[:-1], x.shape[-1] + column + 2, dtype=x.dtype, device=x.device
    )
    wide[..., column : column + x.shape[-1]] = x
    return wide[..., column : column + x.shape[-1]]


@pytest.mark.parametrize(
    ("kernel", "shape", "realigned"),
    [
        ("gemm_nt", (300, 500, 999), [0, 1]),  # rows 1998 bytes apart
        ("gemm_nn", (256, 777, 512), [1]),  # B's rows 1554 bytes apart; C too
        ("gemm_nt", (128, 128, 8191), [0, 1]),  # one tile, long K: split
        ("gemm_nt", (2000, 3000, 1000), []),  # off the sector grid: multicast
        ("gemm_nt", (8192, 8192, 1000), []),  # off the sector grid: multicast
        ("gemm_nt", (1000, 1000, 1000), []),  # off the sector grid: 128x128
    ],
    ids=str,
)
def test_unaligned_inputs_compute_the_product(torch, kernel, shape, realigned) -> None:
    a, b, c, ref = gemm_inputs(torch, *shape, kernel[-2:])
    compiled = tawa_xdsl.compile(GEMM, kernel)
    compiled(a, b, c)
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 1e-2, compiled.explain(a, b, c)
    spec = compiled.current
    assert compiled.realigned(spec, compiled._convert((a, b, c), 0)) == realigned


def test_inputs_off_the_sector_grid_copied_where_no_cluster_may_run(torch) -> None:
    """With cluster=1 given the rules cannot multicast rows off the sector
    grid, and 8192 x 8192 x 1000 copies them onto it (the copy pays)."""
    a, b, c, ref = gemm_inputs(torch, 8192, 8192, 1000)
    compiled = tawa_xdsl.compile(GEMM, "gemm_nt", cluster=1)
    compiled(a, b, c)
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 1e-2, compiled.explain(a, b, c)
    assert compiled.realigned(compiled.current, compiled._convert((a, b, c), 0)) == [
        0,
        1,
    ]


def test_views_off_the_grid_are_read_and_rebound(torch) -> None:
    """A and B as views one column into wider arrays (base and pitch off the
    grid); a bound launch copies at each launch, so a change to A between two
    launches shows in the second result."""
    a, b, c, ref = gemm_inputs(torch, 384, 256, 640)
    a_view, b_view = off_grid(torch, a), off_grid(torch, b, column=3)
    compiled = tawa_xdsl.compile(GEMM, "gemm_nt")
    launch = compiled.bind(a_view, b_view, c)
    launch()
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 1e-2
    a_view.mul_(-2)
    c.fill_(float("nan"))
    launch()
    torch.cuda.synchronize()
    assert rel_err(c, -2 * ref) < 1e-2


@pytest.mark.parametrize("kernel", ["attention_d64", "attention_causal_d128"])
def test_attention_on_strided_views(torch, kernel) -> None:
    """Q, K, V and O as views into padded 3-D arrays: outer strides not the
    rows' (one copy per plane), base and pitch off the grid; O is stored from
    registers."""
    d = 64 if kernel.endswith("d64") else 128
    bh, seq = 3, 384
    gen = torch.Generator(device="cuda").manual_seed(11)
    q, k, v = (
        torch.randn(bh, seq, d, device="cuda", generator=gen).bfloat16()
        for _ in range(3)
    )

    def padded_view(x):
        wide = torch.zeros(bh, seq + 5, d + 3, dtype=x.dtype, device="cuda")
        view = wide[:, 2 : seq + 2, 1 : d + 1]
        view.copy_(x)
        return view

    qv, kv, vv = (padded_view(x) for x in (q, k, v))
    o = padded_view(torch.full_like(q, float("nan")))
    compiled = tawa_xdsl.compile(EXAMPLES / "attention.mlir", kernel)
    compiled(qv, kv, vv, o, d**-0.5)
    torch.cuda.synchronize()
    ref = torch.nn.functional.scaled_dot_product_attention(
        q.double(), k.double(), v.double(), is_causal="causal" in kernel
    )
    assert rel_err(o, ref) < 1e-2, compiled.explain(qv, kv, vv, o, d**-0.5)
    assert compiled.options["tma_store"] is False


@pytest.mark.parametrize("kernel", ["gemm_fp8_tensorwise", "gemm_fp8_rowwise"])
def test_fp8_rows_of_1000_bytes(torch, kernel) -> None:
    """K = 1000 in e4m3: rows 1000 bytes apart (8 off the grid)."""
    case = gemm_case(kernel, (256, 384, 1000), seed=3)
    args = [device(torch, x) for x in case.fresh()]
    out = args[case.out]
    out.fill_(float("nan"))
    tawa_xdsl.compile(EXAMPLES / "gemm_fp8.mlir", kernel)(*args)
    torch.cuda.synchronize()
    got = out.cpu().double().numpy()
    err = np.abs(got - case.reference).max() / np.abs(case.reference).max()
    assert err < 1e-2, err


@pytest.mark.parametrize(
    "shape",
    [(512, 768, 1024), (128, 128, 8192)],  # one kernel; K split (reduce reads R)
    ids=str,
)
def test_a_residual_added_in_place(torch, shape) -> None:
    """D = A @ B^T + D, R passed as D itself (cuBLAS's beta * C in place): R
    is read from a copy made before each launch, so every tile adds the old
    D; a bound launch copies again, so a second launch adds the product
    twice."""
    m, n, k = shape
    a, b, _, product = gemm_inputs(torch, m, n, k)
    d = torch.randn(m, n, device="cuda").bfloat16()
    before = d.double()
    compiled = tawa_xdsl.compile(KERNELS / "gemm_residual.mlir", "gemm_residual")
    assert "r: shares memory with c" in compiled.explain(a, b, d, d)
    compiled(a, b, d, d)
    torch.cuda.synchronize()
    assert rel_err(d, product + before) < 1e-2
    launch = compiled.bind(a, b, d, d)
    d.copy_(before)
    launch()
    launch()
    torch.cuda.synchronize()
    assert rel_err(d, 2 * product + before) < 2e-2


def framed(torch, rows: int, cols: int, dtype, pitch: int):
    """A NaN-filled rows x pitch array and its first `cols` columns: rows on the
    16-byte grid (pitch a multiple of 8 elements), the view's rows ending off it."""
    frame = torch.full((rows, pitch), float("nan"), device="cuda", dtype=dtype)
    return frame, frame[:, :cols]


@pytest.mark.parametrize(
    ("kernel", "shape"),
    [
        ("gemm_nt", (300, 685, 512)),  # one row of tiles per SM
        ("gemm_nt", (1, 685, 64)),  # one row
        ("gemm_nn", (200, 1001, 1003)),  # B and C end mid-granule, K too
        ("gemm_nt", (4096, 4091, 4093)),  # large: every plan's store path
    ],
    ids=str,
)
def test_views_ending_mid_granule_are_written_and_read_exactly(
    torch, kernel, shape
) -> None:
    """Every operand a view of the first columns of a wider NaN-filled array
    whose rows lie on the 16-byte grid: TMA describes each, but its store would
    write the rest of the view's last 16-byte granule (columns N .. up to the
    next multiple of 8), so C is stored from registers; the inputs' NaN past
    their last column must not reach the product, and C's frame stays NaN
    outside the view."""
    m, n, k = shape
    pad = lambda cols: -(-cols // 8) * 8 + 8  # noqa: E731
    a_ref, b_ref, _, ref = gemm_inputs(torch, m, n, k, kernel[-2:])
    _, a = framed(torch, m, k, torch.bfloat16, pad(k))
    _, b = framed(torch, *b_ref.shape, torch.bfloat16, pad(b_ref.shape[1]))
    a.copy_(a_ref)
    b.copy_(b_ref)
    c_frame, c = framed(torch, m, n, torch.bfloat16, pad(n))
    compiled = tawa_xdsl.compile(GEMM, kernel)
    compiled(a, b, c)
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 1e-2, compiled.explain(a, b, c)
    assert c_frame[:, n:].isnan().all(), compiled.explain(a, b, c)
