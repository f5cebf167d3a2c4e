"""Column reductions (tile.reduce along axis 0, through the consumers' shared
scratch) on the H100, against float64: tests/kernels/column_reductions.mlir at
extents that are not multiples of the tiles (TMA fills the last row tile with
zeros, which the reference pads alike)."""

from __future__ import annotations

from pathlib import Path

import pytest

import tawa_xdsl

from .conftest import rel_err

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
SOURCE = KERNELS / "column_reductions.mlir"


def per_row_tile(torch, x, rows: int):
    """`x` padded with zero rows to whole tiles of `rows`: [tiles, rows, N]."""
    pad = -x.shape[0] % rows
    padded = torch.cat([x, x.new_zeros(pad, x.shape[1])])
    return padded.reshape(-1, rows, x.shape[1])


@pytest.mark.parametrize("consumers", [1, 2])
def test_column_range_of_a_loaded_tile(torch, consumers) -> None:
    x = torch.randn(1000, 328, device="cuda")
    o = torch.full((8, 328), float("nan"), device="cuda")
    tawa_xdsl.compile(SOURCE, "column_range", num_consumers=consumers)(x, o)
    torch.cuda.synchronize()
    tiles = per_row_tile(torch, x.double(), 128)
    ref = tiles.max(1).values - tiles.min(1).values
    assert rel_err(o, ref) < 1e-6


@pytest.mark.parametrize(
    "options",
    [{"persistent": False}, {"persistent": True}, {"ping_pong": True}],
    ids=str,
)
def test_gemm_column_sums(torch, options) -> None:
    a = torch.randn(1000, 328, device="cuda").to(torch.bfloat16)
    b = torch.randn(520, 328, device="cuda").to(torch.bfloat16)
    o = torch.full((8, 520), float("nan"), device="cuda")
    kernel = tawa_xdsl.compile(SOURCE, "gemm_column_sums", **options)
    kernel(a, b, o)
    torch.cuda.synchronize()
    ref = per_row_tile(torch, a.double() @ b.double().t(), 128).sum(1)
    assert rel_err(o, ref) < 1e-5


def test_center_columns(torch) -> None:
    """The mean of each column of a row tile broadcast back and subtracted,
    the tile stored through TMA (its staging tile shares the consumer barrier)."""
    x = torch.randn(1000, 328, device="cuda")
    o = torch.full_like(x, float("nan"))
    tawa_xdsl.compile(SOURCE, "center_columns")(x, o)
    torch.cuda.synchronize()
    tiles = per_row_tile(torch, x.double(), 128)
    ref = (tiles - tiles.sum(1, keepdim=True) / 128).reshape(-1, 328)[:1000]
    assert rel_err(o, ref) < 1e-6


def test_column_max_over_three_warpgroups(torch) -> None:
    x = torch.randn(1000, 328, device="cuda")
    o = torch.full((6, 328), float("nan"), device="cuda")
    tawa_xdsl.compile(SOURCE, "column_max_192")(x, o)
    torch.cuda.synchronize()
    assert rel_err(o, per_row_tile(torch, x.double(), 192).max(1).values) == 0


def test_gemm_with_its_bias_gradient(torch) -> None:
    """The tuned configuration (128 x 256 tiles, persistent): C through TMA,
    the column sums of each row tile beside it."""
    a = torch.randn(1000, 1000, device="cuda").to(torch.bfloat16)
    b = torch.randn(1000, 1000, device="cuda").to(torch.bfloat16)
    c = torch.full((1000, 1000), float("nan"), device="cuda").to(torch.bfloat16)
    d = torch.full((8, 1000), float("nan"), device="cuda")
    tawa_xdsl.compile(SOURCE, "gemm_dbias")(a, b, c, d)
    torch.cuda.synchronize()
    product = a.double() @ b.double().t()
    assert rel_err(c, product) < 1e-2
    assert rel_err(d, per_row_tile(torch, product, 128).sum(1)) < 1e-5


def test_int_columns(torch) -> None:
    """i32 column sums (wrapping, as add.s32 does), maxima and minima."""
    x = torch.randint(
        -(2**31), 2**31 - 1, (1000, 328), device="cuda", dtype=torch.int32
    )
    o = torch.zeros((8, 328), device="cuda", dtype=torch.int32)
    tawa_xdsl.compile(SOURCE, "int_columns")(x, o)
    torch.cuda.synchronize()
    tiles = per_row_tile(torch, x.long(), 128)
    exact = tiles.sum(1) - tiles.max(1).values - tiles.min(1).values
    wrapped = (exact + 2**31) % 2**32 - 2**31
    assert torch.equal(o.long(), wrapped)


def test_bf16_column_sums(torch) -> None:
    """A bf16 tile reduced in f32 (extended, summed, rounded once)."""
    x = torch.randn(1000, 328, device="cuda").to(torch.bfloat16)
    o = torch.full((8, 328), float("nan"), device="cuda").to(torch.bfloat16)
    tawa_xdsl.compile(SOURCE, "bf16_column_sums")(x, o)
    torch.cuda.synchronize()
    ref = per_row_tile(torch, x.double(), 128).sum(1)
    assert rel_err(o, ref) < 1e-2


def test_f16_column_max_of_64_row_tiles(torch) -> None:
    """One consumer warpgroup; the last row tile is 40 rows and 24 of TMA's
    zeros, which take part (tile.load reads them as 0)."""
    x = torch.randn(1000, 328, device="cuda").to(torch.float16)
    o = torch.full((16, 328), float("nan"), device="cuda").to(torch.float16)
    tawa_xdsl.compile(SOURCE, "f16_column_max")(x, o)
    torch.cuda.synchronize()
    assert rel_err(o, per_row_tile(torch, x.double(), 64).max(1).values) == 0


def test_masked_column_max_leaves_out_the_rows_past_the_end(torch) -> None:
    """Negative values only: the last row tile's maxima are of its 104 real
    rows, not the 0 of TMA's padding, which the kernel selects away."""
    x = -1 - torch.randn(1000, 328, device="cuda").abs()
    o = torch.full((8, 328), float("nan"), device="cuda")
    tawa_xdsl.compile(SOURCE, "masked_column_max")(x, o)
    torch.cuda.synchronize()
    ref = torch.stack([t.max(0).values for t in x.double().split(128)])
    assert rel_err(o, ref) < 1e-6


@pytest.mark.parametrize(
    "options",
    [
        # 40 columns: five 8-column groups through the scratch, C from registers
        {"block_n": 40},
        # 192x192 over three warpgroups (whose stages tests/test_tuning.py
        # checks): spilled 1024 bytes a thread, refused at load, until each
        # thread totalled only its own column of the scratch
        {"block_m": 192, "block_n": 192},
    ],
    ids=str,
)
def test_gemm_with_its_bias_gradient_in_other_tiles(torch, options) -> None:
    a = torch.randn(1000, 1000, device="cuda").to(torch.bfloat16)
    b = torch.randn(1000, 1000, device="cuda").to(torch.bfloat16)
    c = torch.full((1000, 1000), float("nan"), device="cuda").to(torch.bfloat16)
    rows = options.get("block_m", 128)
    d = torch.full((-(-1000 // rows), 1000), float("nan"), device="cuda")
    tawa_xdsl.compile(SOURCE, "gemm_dbias", **options)(a, b, c, d)
    torch.cuda.synchronize()
    product = a.double() @ b.double().t()
    assert rel_err(c, product) < 1e-2
    assert rel_err(d, per_row_tile(torch, product, rows).sum(1)) < 1e-5


def test_column_sums_of_40_row_tiles(torch) -> None:
    """A tile held padded to one 64-row block (its last warp half padding):
    the padding rows, copies of the tile's rows, are not summed again."""
    x = torch.randn(1000, 328, device="cuda")
    o = torch.full((25, 328), float("nan"), device="cuda")
    tawa_xdsl.compile(SOURCE, "short_column_sums40")(x, o)
    torch.cuda.synchronize()
    assert rel_err(o, per_row_tile(torch, x.double(), 40).sum(1)) < 1e-5


def test_column_max_of_24_row_tiles(torch) -> None:
    """max over x + row id: the padding rows' ids (24..63) would win."""
    x = torch.randn(1000, 328, device="cuda")
    o = torch.full((42, 328), float("nan"), device="cuda")
    tawa_xdsl.compile(SOURCE, "short_column_max24")(x, o)
    torch.cuda.synchronize()
    ids = torch.arange(24, device="cuda").double()[:, None]
    ref = (per_row_tile(torch, x.double(), 24) + ids).max(1).values
    assert rel_err(o, ref) < 1e-6
