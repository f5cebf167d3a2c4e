"""A stored K x M: `tile.trans` of the A tile of a `tile.dot`. For 16-bit
inputs wgmma reads A from shared memory MN-major (the SS form's imm-trans-a),
with the descriptors B stored K x N takes (`wgmma.SmemOperand`): chunks of M
columns, LBO between them, SBO 8 K rows. tests/kernels/gemm_at.mlir runs at the
thread level against the interpreter and float64 under the tuned pipeline, one
consumer warpgroup (two 64-row blocks each) and ping-pong, and assembles; 8-bit
A stays refused (wgmma reads 8-bit operands K-major only: lowering/refusals.mlir)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.lowering.ptx_target import to_ptx

from .thread_level import assert_close, simulate_output, to_thread_level

SOURCE = (Path(__file__).parent / "kernels" / "gemm_at.mlir").read_text()
PIPELINES = {
    "tuned": "tawa-hopper-pipeline",
    "one-consumer": "tawa-hopper-pipeline{num-consumers=1 tuned=false}",
    "ping-pong": "tawa-hopper-pipeline{num-consumers=2 ping-pong=true tuned=false}",
}


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_a_stored_k_by_m_at_the_thread_level(pipeline) -> None:
    rng = np.random.default_rng(0)
    m, n, k = 200, 296, 136
    a = rng.standard_normal((k, m)).astype(bfloat16)
    b = rng.standard_normal((n, k)).astype(bfloat16)
    c = np.full((m, n), np.nan, bfloat16)
    grid = (2, 3)
    tawa_xdsl.interpret(tawa_xdsl.parse(SOURCE), "gemm_at", a, b, c, grid=grid)
    expected = c.copy()
    module = to_thread_level(tawa_xdsl.parse(SOURCE), PIPELINES[pipeline])
    got = simulate_output(module, "gemm_at", [a, b, c], 2, grid)
    assert_close(got, expected)
    reference = a.astype(np.float64).T @ b.astype(np.float64).T
    assert (
        np.abs(got.astype(np.float64) - reference).max()
        <= np.abs(expected.astype(np.float64) - reference).max()
    )


def test_a_stored_k_by_m_assembles_with_imm_trans_a() -> None:
    ptx = to_ptx(tawa_xdsl.apply(tawa_xdsl.parse(SOURCE), "tawa-hopper-pipeline"))
    wgmmas = [line for line in ptx.splitlines() if "wgmma.mma_async" in line]
    assert wgmmas and all(line.rstrip().endswith(", 1, 1, 1, 0;") for line in wgmmas)
    result = assemble(ptx)
    assert result.ok, result.log[-3000:]
    assert result.remarks == [], result.remarks
