"""Column reductions (tile.reduce along axis 0): the consumer warps' partials
meet in a shared-memory scratch between two consumer barriers
(`nvgpu_async.column_reduce`). The interpreter's column sums and extrema are
numpy's; the barrier simulator's exchange and the thread level's must give
them for any order the warpgroups run in, and without either barrier the
thread level must not (the warpgroups overwrite or read the scratch too early).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import tawa_xdsl
from tawa_xdsl.compiler import CompileOptions, lower
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import ptx
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.kernel import find_kernel
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.lowering.distribute.barriers import CONSUMER_BARRIER
from tawa_xdsl.lowering.ptx_target import kernel_ptx

from .thread_level import assert_close, simulate_output, to_thread_level

SOURCE = Path(__file__).parent / "kernels" / "column_reductions.mlir"


def per_row_tile(x: np.ndarray, rows: int) -> np.ndarray:
    """`x` padded with zero rows (as TMA loads them) to tiles: [tiles, rows, N]."""
    padded = np.concatenate([x, np.zeros((-len(x) % rows, x.shape[1]), x.dtype)])
    return padded.reshape(-1, rows, x.shape[1])


def column_range_case() -> tuple[list[np.ndarray], tuple[int, ...], np.ndarray]:
    """(arguments, grid, float64 reference) of @column_range: 200 x 136, so
    the last row tile is padded and the last column tile partial."""
    x = np.random.default_rng(5).standard_normal((200, 136)).astype(np.float32)
    tiles = per_row_tile(x.astype(np.float64), 128)
    expected = tiles.max(1) - tiles.min(1)
    return [x, np.full(expected.shape, np.nan, np.float32)], (3, 2), expected


def gemm_column_sums_case() -> tuple[list[np.ndarray], tuple[int, ...], np.ndarray]:
    rng = np.random.default_rng(6)
    a = rng.standard_normal((200, 64)).astype(bfloat16)
    b = rng.standard_normal((136, 64)).astype(bfloat16)
    product = a.astype(np.float64) @ b.astype(np.float64).T
    expected = per_row_tile(product, 128).sum(1)
    return [a, b, np.full(expected.shape, np.nan, np.float32)], (2, 2), expected


def center_columns_case() -> tuple[list[np.ndarray], tuple[int, ...], np.ndarray]:
    x = np.random.default_rng(7).standard_normal((200, 136)).astype(np.float32)
    tiles = per_row_tile(x.astype(np.float64), 128)
    centered = tiles - tiles.sum(1, keepdims=True) / 128
    expected = centered.reshape(-1, x.shape[1])[: len(x)]
    return [x, np.full(x.shape, np.nan, np.float32)], (3, 2), expected


def column_max_192_case() -> tuple[list[np.ndarray], tuple[int, ...], np.ndarray]:
    x = np.random.default_rng(8).standard_normal((300, 136)).astype(np.float32)
    expected = per_row_tile(x.astype(np.float64), 192).max(1)
    return [x, np.full(expected.shape, np.nan, np.float32)], (3, 2), expected


def gemm_dbias_case() -> tuple[list[np.ndarray], tuple[int, ...], np.ndarray]:
    rng = np.random.default_rng(9)
    a = rng.standard_normal((200, 128)).astype(bfloat16)
    b = rng.standard_normal((300, 128)).astype(bfloat16)
    product = a.astype(np.float64) @ b.astype(np.float64).T
    expected = per_row_tile(product, 128).sum(1)
    c = np.full(product.shape, np.nan, bfloat16)
    return [a, b, c, np.full(expected.shape, np.nan, np.float32)], (2, 3), expected


def int_columns_case() -> tuple[list[np.ndarray], tuple[int, ...], np.ndarray]:
    """Any i32 values: the column sums wrap."""
    rng = np.random.default_rng(10)
    x = rng.integers(-(2**31), 2**31, size=(200, 136)).astype(np.int32)
    tiles = per_row_tile(x.astype(np.int64), 128)
    exact = tiles.sum(1) - tiles.max(1) - tiles.min(1)
    expected = ((exact + 2**31) % 2**32 - 2**31).astype(np.int32)
    return [x, np.zeros(expected.shape, np.int32)], (3, 2), expected


def bf16_column_sums_case() -> tuple[list[np.ndarray], tuple[int, ...], np.ndarray]:
    """150 x 72: the last row tile has 22 rows, the last column tile 8 columns."""
    x = np.random.default_rng(11).standard_normal((150, 72)).astype(bfloat16)
    expected = per_row_tile(x.astype(np.float64), 128).sum(1)
    return [x, np.full(expected.shape, np.nan, bfloat16)], (2, 2), expected


def f16_column_max_case() -> tuple[list[np.ndarray], tuple[int, ...], np.ndarray]:
    """100 rows in 64-row tiles: the last has 36 rows and 28 of TMA's zeros."""
    x = np.random.default_rng(12).standard_normal((100, 72)).astype(np.float16)
    expected = per_row_tile(x.astype(np.float64), 64).max(1)
    return [x, np.full(expected.shape, np.nan, np.float16)], (2, 2), expected


def masked_column_max_case() -> tuple[list[np.ndarray], tuple[int, ...], np.ndarray]:
    """Negative values only, so that a zero the last row tile's padding
    contributed would be its maximum: the reference takes the real rows."""
    rng = np.random.default_rng(13)
    x = (-1 - np.abs(rng.standard_normal((150, 40)))).astype(np.float32)
    expected = np.stack([x[:128].max(0), x[128:].max(0)]).astype(np.float64)
    return [x, np.full(expected.shape, np.nan, np.float32)], (2, 2), expected


def short_column_sums40_case() -> tuple[list[np.ndarray], tuple[int, ...], np.ndarray]:
    """100 rows in 40-row tiles: the last has 20 rows and 20 of TMA's zeros."""
    x = np.random.default_rng(14).standard_normal((100, 72)).astype(np.float32)
    expected = per_row_tile(x.astype(np.float64), 40).sum(1)
    return [x, np.full(expected.shape, np.nan, np.float32)], (2, 3), expected


def short_column_max24_case() -> tuple[list[np.ndarray], tuple[int, ...], np.ndarray]:
    """The row ids the padding rows would add (24..63) exceed every real one."""
    x = np.random.default_rng(15).standard_normal((100, 40)).astype(np.float32)
    tiles = per_row_tile(x.astype(np.float64), 24) + np.arange(24)[:, None]
    expected = tiles.max(1)
    return [x, np.full(expected.shape, np.nan, np.float32)], (2, 5), expected


CASES = {
    "column_range": column_range_case,
    "gemm_column_sums": gemm_column_sums_case,
    "center_columns": center_columns_case,
    "column_max_192": column_max_192_case,
    "gemm_dbias": gemm_dbias_case,
    "int_columns": int_columns_case,
    "bf16_column_sums": bf16_column_sums_case,
    "f16_column_max": f16_column_max_case,
    "masked_column_max": masked_column_max_case,
    "short_column_sums40": short_column_sums40_case,
    "short_column_max24": short_column_max24_case,
}


def only(kernel: str) -> ModuleOp:
    """The kernels file with `kernel` alone in it (pipeline options, such as
    a tile width, apply to every kernel of a module)."""
    module = tawa_xdsl.parse(SOURCE)
    for op in list(module.ops):
        if op is not find_kernel(module, kernel):
            op.detach()
    return module


def assert_agrees(got: np.ndarray, expected: np.ndarray) -> None:
    """i32 results exactly; 16-bit floats to one unit of their last place (the
    f32 sums, taken in another order, may round either way); f32 sums to a few
    float32 units of the largest column's terms."""
    if got.dtype == np.int32:
        np.testing.assert_array_equal(got, expected)
    elif got.dtype.itemsize == 2:
        assert_close(got, expected.astype(got.dtype), ulps=1)
    else:
        atol = 1e-6 * np.abs(expected).max()
        np.testing.assert_allclose(got, expected, rtol=0, atol=atol)


def simulated(
    module: ModuleOp,
    kernel: str,
    args: list[np.ndarray],
    grid: tuple[int, ...],
    seed: int = 0,
) -> np.ndarray:
    """The output (the last argument) `simulate` writes, poisoned first: NaN,
    or for i32 a pattern no case computes."""
    if args[-1].dtype != np.int32:
        return simulate_output(module, kernel, args, len(args) - 1, grid, seed)
    args = [*args[:-1], np.full_like(args[-1], 0x5A5A5A5A)]
    tawa_xdsl.simulate(module, kernel, *args, grid=grid, seed=seed)
    return args[-1]


def interpreted(kernel: str) -> tuple[list[np.ndarray], tuple[int, ...], np.ndarray]:
    """(arguments, grid, the interpreter's output) of `kernel`'s case."""
    args, grid, _ = CASES[kernel]()
    args = [a.copy() for a in args]
    tawa_xdsl.interpret(only(kernel), kernel, *args, grid=grid)
    return args, grid, args[-1]


@pytest.mark.parametrize(
    "kernel",
    [
        "column_range",
        "gemm_column_sums",
        "int_columns",
        "bf16_column_sums",  # in f32, rounded once
        "masked_column_max",
        "short_column_sums40",
        "short_column_max24",
    ],
)
def test_the_interpreter_reduces_columns(kernel: str) -> None:
    _, _, expected = CASES[kernel]()
    _, _, got = interpreted(kernel)
    assert_agrees(got, expected)


@pytest.mark.parametrize(
    ("kernel", "seed"),
    [
        ("column_range", 0),
        ("column_range", 1),
        ("int_columns", 0),
        # extended, reduced in f32, rounded back: exact (the thread level
        # runs a 16-bit tile in CI)
        pytest.param("f16_column_max", 0, marks=pytest.mark.exhaustive),
        # under 64 rows: each warp reduces its rows of the tile only
        pytest.param("short_column_max24", 0, marks=pytest.mark.exhaustive),
    ],
)
def test_the_barrier_simulator_exchanges_through_the_scratch(
    kernel: str, seed: int
) -> None:
    """Extrema and i32 sums are exact in any order, so bit for bit."""
    args, grid, expected = interpreted(kernel)
    lowered = tawa_xdsl.apply(only(kernel), "tawa-hopper-pipeline")
    got = simulated(lowered, kernel, args, grid, seed)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    ("kernel", "options"),
    [
        ("column_range", ""),
        ("gemm_column_sums", "num-consumers=1 persistent=true"),
        ("center_columns", ""),  # broadcast back, stored through TMA staging
        ("column_max_192", ""),  # three consumer warpgroups
        # the tuned configuration of a fused GEMM and bias gradient: C
        # through TMA, 256 columns (64 per thread) through the scratch
        ("gemm_dbias", "block-n=256 persistent=true num-stages=3"),
        # one warpgroup, 192 columns: threads 0-63 total two columns each
        ("gemm_dbias", "block-n=192 num-consumers=1"),
        ("int_columns", ""),  # i32: max.s32, min.s32, add.s32 (wrapping)
        ("bf16_column_sums", ""),  # extended to f32, the sums rounded to bf16
        ("masked_column_max", ""),  # the padding rows selected away
        ("f16_column_max", ""),  # 64 rows: one warpgroup, the last tile padded
        # under 64 rows: the padding rows masked out, row by row in a half slab
        ("short_column_max24", ""),
        pytest.param("short_column_sums40", "", marks=pytest.mark.exhaustive),
        # 40 columns, five 8-column groups: C stored from registers (the GPU
        # tests run it)
        pytest.param(
            "gemm_dbias", "block-n=40 persistent=true", marks=pytest.mark.exhaustive
        ),
    ],
)
def test_column_reductions_at_the_thread_level(kernel: str, options: str) -> None:
    args, grid, expected = interpreted(kernel)
    module = to_thread_level(only(kernel), f"tawa-hopper-pipeline{{{options}}}")
    got = simulated(module, kernel, args, grid)
    assert_agrees(got, expected)


def consumer_barriers(module: ModuleOp, kernel: str) -> list[ptx.BarOp]:
    return [
        op
        for op in find_kernel(module, kernel).walk()
        if isinstance(op, ptx.BarOp)
        and isinstance(imm := op.barrier.owner, ptx.ImmOp)
        and imm.values() == (CONSUMER_BARRIER,)
    ]


def test_the_partials_barrier_is_needed() -> None:
    """Without the barrier between the warps' partials and the columns'
    totals, the thread level reads partials that are not there yet (NaN
    poison or garbage)."""
    args, grid, expected = interpreted("column_range")
    module = to_thread_level(only("column_range"), "tawa-hopper-pipeline")
    bars = consumer_barriers(module, "column_range")
    assert len(bars) == 6  # three per reduction
    bars[1].detach()
    bars[1].erase()
    got = simulate_output(module, "column_range", args, 1, grid)
    assert not np.allclose(got, expected, atol=0.1, equal_nan=False)


def test_each_scratch_exchange_is_fenced_by_a_consumer_barrier() -> None:
    """The order the other two barriers give (the thread simulator runs each
    warpgroup until it blocks, so it never lets one read a total before
    another wrote it, nor write the next partials under a late reader): per
    reduction, a barrier (the previous readers are done), the partials
    written, a barrier, each column's total read and written, a barrier, the
    totals read."""
    module = to_thread_level(only("column_range"), "tawa-hopper-pipeline")
    bars = consumer_barriers(module, "column_range")
    steps = [
        "bar" if op in bars else f"{op.name[4:]}"
        for op in find_kernel(module, "column_range").walk()
        if op in bars
        or (isinstance(op, ptx.LoadOp | ptx.StoreOp) and op.space.data == "shared")
    ]
    exchange = ["bar", "st", "bar", "ld", "st", "bar", "ld"]
    first = steps.index("bar")
    assert steps[first : first + 7] == exchange, steps
    rest = steps[first + 7 :]
    second = rest.index("bar")
    assert rest[second : second + 7] == exchange, steps


@pytest.mark.parametrize("kernel", ["column_range", "gemm_column_sums"])
def test_column_reductions_assemble_without_remarks(kernel: str) -> None:
    lowered = tawa_xdsl.apply(only(kernel), "tawa-hopper-pipeline")
    result = assemble(kernel_ptx(find_kernel(lowered, kernel)))
    assert result.ok, result.log[-3000:]
    assert result.remarks == [], result.remarks
    assert not result.spills, result.log[-3000:]


@pytest.mark.parametrize(
    "tiles",
    [
        # three warpgroups: every thread read all 12 warps' rows of its 48
        # columns, which ptxas loaded at once (1024 bytes spilled a thread)
        {"block_m": 192, "block_n": 192},
        # 160 columns: each of 40 elements stored through an address of its own
        {"block_m": 192, "block_n": 160},
        {"block_m": 128, "block_n": 256, "block_k": 64},  # 604 bytes
    ],
    ids=str,
)
def test_a_wide_column_reduction_does_not_spill(tiles: dict[str, int]) -> None:
    """@gemm_dbias at tiles whose accumulator fills the registers: the
    column reduction after the main loop fits beside it (one launch, not
    persistent: 36 tiles of 1000 x 1000)."""
    kernel = tawa_xdsl.compile(SOURCE, "gemm_dbias", **tiles)
    result = assemble(kernel.for_shape(M=1000, N=1000, K=1000).ptx)
    assert result.ok, result.log[-3000:]
    if result.tool != "ptxas":
        pytest.skip("nvJitLink ignores setmaxnreg: its spills differ")
    assert not result.spills, result.log[-3000:]


@pytest.mark.parametrize(
    ("given", "stages"),
    [
        # three warpgroups reduce 192 columns (9 KiB of scratch): six stages
        # left the C tile's TMA staging no room, so C went from registers
        ({"block_m": 192, "block_n": 192, "block_k": 32}, 5),
        # two slots of 192x128 + 256x128 tiles and the scratch overflowed
        # (refused at lowering), where one slot fits
        ({"block_m": 192, "block_n": 256, "block_k": 128, "num_consumers": 1}, 1),
    ],
)
def test_the_tuned_stages_leave_room_for_the_column_scratch(
    given: dict[str, int], stages: int
) -> None:
    """`tuning` counts the scratch as the lowering lays it out
    (`kernel_plan.column_scratch_bytes`): the stages it picks fit, with C
    stored through TMA."""
    module = only("gemm_dbias")
    options = CompileOptions(**given).resolve(find_kernel(module, "gemm_dbias"))
    assert options.num_stages == stages
    lower(module, options)
    assert any(isinstance(op, nv.TMAStoreOp) for op in module.walk())
