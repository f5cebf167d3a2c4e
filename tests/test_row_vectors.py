"""Row vectors (one value per row of a tile: a row reduction) computed and
stored from registers. Found by the outside-user sweep: a reduction of a loaded
tile read the tile in its result's (row) layout, and a row vector could not be
stored from registers ('nvgpu_async.store_global: stores of accumulator-layout
tiles are supported'). The thread level must compute what the interpreter
computes, every row inside written and nothing outside (200 rows: an edge tile).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16

from .thread_level import simulate_output, to_thread_level

KERNELS = Path(__file__).parent / "kernels"

CASES = {  # kernel: (inputs, output type, tolerance relative to the largest)
    "row_sums": ([(200, 64, np.float32)], np.float32, 1e-6),  # f32 sums, any order
    "gemm_row_max": ([(200, 136, bfloat16), (128, 136, bfloat16)], bfloat16, 0.0),
}


@pytest.mark.parametrize("kernel", sorted(CASES))
@pytest.mark.parametrize("options", ["", "num-consumers=1"])
def test_row_vector_at_the_thread_level(kernel: str, options: str) -> None:
    shapes, out_dtype, tolerance = CASES[kernel]
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal(s[:-1]).astype(s[-1]) for s in shapes]
    args = [*inputs, np.full(200, np.nan, out_dtype)]
    grid = (2,)  # the second tile's rows 200..255 are outside
    source = KERNELS / "row_vectors.mlir"
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
