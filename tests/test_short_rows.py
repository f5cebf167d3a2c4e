"""Register tiles of 8 to 56 rows, multiples of 8 (row kernels,
`kernels/short_rows.mlir`), held padded to one 64-row accumulator block: the
padding rows read the tile's own rows and store nothing (row by row in a tile
that ends in half a warp slab: 8, 24, 40, 56 rows). They used to read and write past the tile
(the layout assumed 64 rows). The interpreter computes the float64 reference;
the barrier simulator and the thread level (both store paths, an edge tile,
the outputs poisoned) must compute what the interpreter does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16

from .conftest import sweep
from .thread_level import assert_close, to_thread_level

SOURCE = Path(__file__).parent / "kernels" / "short_rows.mlir"
ROWS = 100  # no multiple of a tile: the last tile is cut by the bounds

Arrays = list[tuple[tuple[int, ...], type]]


def _softmax(x: np.ndarray) -> list[np.ndarray]:
    m = x.max(1, keepdims=True)
    e = np.exp(x - m)
    return [e / e.sum(1, keepdims=True), m[:, 0]]


CASES: dict[str, tuple[int, Arrays, Arrays, Callable[..., list[np.ndarray]]]] = {
    # kernel: (tile rows, inputs, outputs, float64 reference of the outputs)
    "row_softmax32": (
        32,
        [((ROWS, 64), np.float32)],
        [((ROWS, 64), bfloat16), ((ROWS,), np.float32)],
        _softmax,
    ),
    "rows16_scale": (
        16,
        [((ROWS, 128), bfloat16), ((ROWS,), np.float32)],
        [((ROWS, 128), bfloat16)],
        lambda x, s: [x * s[:, None]],
    ),
    "row_exp_sums32": (
        32,
        [((ROWS, 192), np.float32)],  # whole 64-column steps
        [((ROWS,), np.float32)],
        lambda x: [np.exp(x).sum(1)],
    ),
    "rows48_iota": (
        48,
        [((ROWS, 32), np.float32)],
        [((ROWS, 32), np.float32)],
        lambda x: [x + (np.arange(ROWS) % 48)[:, None]],
    ),
    # tiles ending in half a warp slab
    "row_softmax8": (
        8,
        [((ROWS, 64), np.float32)],
        [((ROWS, 64), bfloat16), ((ROWS,), np.float32)],
        _softmax,
    ),
    "rows24_scale": (
        24,
        [((ROWS, 128), bfloat16), ((ROWS,), np.float32)],
        [((ROWS, 128), bfloat16)],
        lambda x, s: [x * s[:, None]],
    ),
    "row_exp_sums56": (
        56,
        [((ROWS, 192), np.float32)],
        [((ROWS,), np.float32)],
        lambda x: [np.exp(x).sum(1)],
    ),
    "rows40_iota": (
        40,
        [((ROWS, 32), np.float32)],
        [((ROWS, 32), np.float32)],
        lambda x: [x + (np.arange(ROWS) % 40)[:, None]],
    ),
}


def interpreted(kernel: str) -> tuple[list[np.ndarray], int, tuple[int]]:
    """(arguments with the interpreter's outputs, how many are inputs, grid)."""
    rows, inputs, outputs, _ = CASES[kernel]
    rng = np.random.default_rng(11)
    args = [rng.standard_normal(s).astype(d) for s, d in inputs]
    args += [np.full(s, np.nan, d) for s, d in outputs]
    grid = (-(-ROWS // rows),)
    tawa_xdsl.interpret(tawa_xdsl.parse(SOURCE), kernel, *args, grid=grid)
    return args, len(inputs), grid


@pytest.mark.parametrize("kernel", sorted(CASES))
def test_the_interpreter_computes_the_reference(kernel: str) -> None:
    args, inputs, _ = interpreted(kernel)
    expected = CASES[kernel][3](*[a.astype(np.float64) for a in args[:inputs]])
    for got, want in zip(args[inputs:], expected, strict=True):
        assert_close(got, want.astype(got.dtype))


def simulated(
    module, kernel: str, args: list[np.ndarray], inputs: int, grid: tuple[int]
) -> list[np.ndarray]:
    """Each output as `simulate` writes it, the others poisoned alike."""
    args = [a if i < inputs else np.full_like(a, np.nan) for i, a in enumerate(args)]
    tawa_xdsl.simulate(module, kernel, *args, grid=grid)
    return args[inputs:]


@pytest.mark.exhaustive  # tile-level arithmetic: the padding is the thread level's
@pytest.mark.parametrize("kernel", sorted(CASES))
def test_the_barrier_simulator_agrees(kernel: str) -> None:
    args, inputs, grid = interpreted(kernel)
    lowered = tawa_xdsl.apply(tawa_xdsl.parse(SOURCE), "tawa-hopper-pipeline")
    for got, want in zip(
        simulated(lowered, kernel, args, inputs, grid), args[inputs:], strict=True
    ):
        np.testing.assert_array_equal(got, want)


THREAD_LEVEL = [
    ("row_softmax32", ""),  # TMA store (staging masked) and a row vector
    ("rows16_scale", "tma-store=false"),  # a row vector read, bf16 from registers
    # a half slab: each row read at its own address, the staging tile and a
    # row vector stored masked row by row
    ("row_softmax8", ""),
    # stored from registers row by row (FileCheck: lowering/short-rows.mlir)
    ("rows24_scale", "tma-store=false"),
    ("rows48_iota", ""),  # three warps of rows, one of padding
    ("row_exp_sums32", "num-stages=3"),  # loads in a loop, a carried row vector
    ("rows40_iota", "tma-store=false"),
    ("row_exp_sums56", ""),
]


@pytest.mark.parametrize(
    ("kernel", "options"),
    sweep(
        THREAD_LEVEL,
        set(THREAD_LEVEL[:3]),
        lambda c: "-".join(filter(None, c)),
        slow=(),
    ),
)
def test_the_thread_level_agrees(kernel: str, options: str) -> None:
    args, inputs, grid = interpreted(kernel)
    module = to_thread_level(
        tawa_xdsl.parse(SOURCE), f"tawa-hopper-pipeline{{{options}}}"
    )
    for got, want in zip(
        simulated(module, kernel, args, inputs, grid), args[inputs:], strict=True
    ):
        assert_close(got, want)
