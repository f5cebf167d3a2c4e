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
from tawa_xdsl.dtypes import bfloat16, float8_e4m3fn

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


NARROW = {"bf16": bfloat16, "f16": np.float16, "f8E4M3FN": float8_e4m3fn}
BROADCASTS = {  # the body that makes %r, a 64 x 128 tile of the type, from %a
    # a row maximum rounded to the type, broadcast along the row
    "row": """  %af = arith.extf %a : tensor<64x128x{t}> to tensor<64x128xf32>
  %mx = tile.reduce max %af, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
  %mn = arith.truncf %mx : tensor<64xf32> to tensor<64x{t}>
  %me = tile.expand_dims %mn, axis = 1 : tensor<64x{t}> -> tensor<64x1x{t}>
  %r = tile.broadcast %me : tensor<64x1x{t}> -> tensor<64x128x{t}>""",
    # a column maximum rounded to the type, broadcast down the column
    "column": """  %af = arith.extf %a : tensor<64x128x{t}> to tensor<64x128xf32>
  %mx = tile.reduce max %af, axis = 0 : tensor<64x128xf32> -> tensor<128xf32>
  %mn = arith.truncf %mx : tensor<128xf32> to tensor<128x{t}>
  %me = tile.expand_dims %mn, axis = 0 : tensor<128x{t}> -> tensor<1x128x{t}>
  %r = tile.broadcast %me : tensor<1x128x{t}> -> tensor<64x128x{t}>""",
    # a row vector rounded to the type and widened back before its broadcast
    "round_trip": """  %af = arith.extf %a : tensor<64x128x{t}> to tensor<64x128xf32>
  %mx = tile.reduce max %af, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
  %mn = arith.truncf %mx : tensor<64xf32> to tensor<64x{t}>
  %mw = arith.extf %mn : tensor<64x{t}> to tensor<64xf32>
  %me = tile.expand_dims %mw, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %mb = tile.broadcast %me : tensor<64x1xf32> -> tensor<64x128xf32>
  %r = arith.truncf %mb : tensor<64x128xf32> to tensor<64x128x{t}>""",
}


def broadcast_kernel(body: str, t: str) -> str:
    d = f"!tile.desc<?x?x{t}, box = [64, 128]>"
    return f"""
func.func @k(%x: {d}, %o: {d}) attributes {{tile.kernel}} {{
  %c0 = arith.constant 0 : index
  %a = tile.load %x[%c0, %c0] : {d} -> tensor<64x128x{t}>
{body.format(t=t)}
  tile.store %r, %o[%c0, %c0] : tensor<64x128x{t}> -> {d}
  func.return
}}"""


@pytest.mark.parametrize(
    ("shape", "t"),
    [("row", "bf16"), ("column", "f16"), ("row", "f8E4M3FN"), ("round_trip", "bf16")],
)
def test_a_narrow_vector_broadcast_at_the_thread_level(shape: str, t: str) -> None:
    """A 16- or 8-bit vector holds its elements in pairs (a row vector's rows
    r and r + 8 in one register): its broadcast goes through f32 registers
    (element maps picked pair registers as elements: rows r + 8 read row r's
    value, a column vector was an internal error), and a row vector of one
    pair register is no splat (widened back, both rows read row r)."""
    source = broadcast_kernel(BROADCASTS[shape], t)
    rng = np.random.default_rng(0)
    x = (4 * rng.standard_normal((64, 128))).astype(NARROW[t])
    expected = np.zeros_like(x)
    tawa_xdsl.interpret(tawa_xdsl.parse(source), "k", x, expected, grid=(1,))
    module = to_thread_level(tawa_xdsl.parse(source), "tawa-hopper-pipeline")
    got = simulate_output(module, "k", [x, np.zeros_like(x)], 1, (1,))
    np.testing.assert_array_equal(got.astype(np.float32), expected.astype(np.float32))
