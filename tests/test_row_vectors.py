"""Vectors (one value per row of a tile, a row reduction; or per column)
computed and stored from registers. Found by the outside-user sweep: a
reduction of a loaded tile read the tile in its result's (row) layout, a
vector could not be stored from registers ('nvgpu_async.store_global: stores of
accumulator-layout tiles are supported'), a vector with no row or column
context had 'no layout constraints', a 1 x N tile crashed the TMA store
path, and a loaded tile could not be stored as it is. The thread level must compute what the interpreter computes, every
element inside written and nothing outside (edge tiles).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16

from .thread_level import simulate_output, to_thread_level

KERNELS = Path(__file__).parent / "kernels"

CASES = {  # kernel: (inputs, output, grid, tolerance relative to the largest)
    "row_sums": ([(200, 64, np.float32)], (200, np.float32), (2,), 1e-6),  # sums
    "row_sums_column": ([(200, 64, np.float32)], (200, 1, np.float32), (2,), 1e-6),
    "gemm_row_max": (
        [(200, 136, bfloat16), (128, 136, bfloat16)],
        (200, bfloat16),
        (2,),
        0.0,
    ),
    "vector_exp": ([(200, bfloat16)], (200, bfloat16), (2,), 0.0),
    "row_of_matrix": ([(100, np.float32)], (3, 100, np.float32), (3,), 1e-6),  # exp
    "copy": ([(100, 128, bfloat16)], (100, 128, bfloat16), (2,), 0.0),
    "vector_copy": ([(200, np.float32)], (200, np.float32), (2,), 0.0),
}
FILES = {"copy": "copies.mlir", "vector_copy": "copies.mlir"}


@pytest.mark.parametrize("kernel", sorted(CASES))
@pytest.mark.parametrize("options", ["", "num-consumers=1 tma-store=false"])
def test_row_vector_at_the_thread_level(kernel: str, options: str) -> None:
    shapes, (*out_shape, out_dtype), grid, tolerance = CASES[kernel]
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal(s[:-1]).astype(s[-1]) for s in shapes]
    args = [*inputs, np.full(out_shape, np.nan, out_dtype)]  # edge tiles: 200 of 256
    source = KERNELS / FILES.get(kernel, "row_vectors.mlir")
    tawa_xdsl.interpret(tawa_xdsl.parse(source), kernel, *args, grid=grid)
    expected = args[-1].astype(np.float64)
    assert not np.isnan(expected).any()
    module = to_thread_level(
        tawa_xdsl.parse(source), f"tawa-hopper-pipeline{{{options}}}"
    )
    got = simulate_output(module, kernel, args, len(args) - 1, grid)
    np.testing.assert_allclose(
        got.astype(np.float64), expected, atol=tolerance * np.abs(expected).max()
    )
