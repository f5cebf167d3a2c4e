"""A GEMM storing its epilogue transposed (`store(trans(relu(A B^T + bias)))`,
@gemm_trans_out of tests/kernels/gemm_outside4.mlir) cut into a split-K or
stream-K pair: the passes move the transpose up first
(`transforms/transposes.py`), so the reduce kernel stores the summed partials
as they are (before, its epilogue transposed a tile read from the workspace,
which the lowering refuses: "tile.trans of a register tile"); both kernels
lower and the pair computes what the kernel does."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dialects import tile
from tawa_xdsl.kernel import find_kernel
from tawa_xdsl.partials import stream_k_slots

from .test_split_k import _pair, _run_pair
from .test_sweep_kernels import RUNS, _interpreted, _module

KERNEL = "gemm_trans_out"


@pytest.mark.parametrize("mode", ["split-k{splits=3}", "stream-k"])
def test_a_transposed_store_splits(mode: str) -> None:
    module = tawa_xdsl.apply(_module(KERNEL), mode)
    partials, reduce = _pair(module, KERNEL)
    assert not any(isinstance(op, tile.TransOp) for op in reduce.walk())
    for op in partials.walk():  # only loaded tiles are transposed
        if isinstance(op, tile.TransOp):
            assert isinstance(op.source.owner, tile.LoadOp)
    lowered = tawa_xdsl.apply(module.clone(), "tawa-hopper-pipeline{tuned=false}")
    for kernel in (partials, reduce):
        launch = find_kernel(lowered, kernel.sym_name.data).attributes
        assert "nvgpu_async.launch" in launch
    args, expected = _interpreted(KERNEL, seed=7)
    out = RUNS[KERNEL].outputs[0]
    args[out] = np.full_like(args[out], np.nan)
    programs = 5
    tiles, steps = 4, 2  # (200 / 128) x (100 / 64) tiles, K = 72 in steps of 64
    slots = 3 if mode.startswith("split") else stream_k_slots(tiles, steps, programs)
    workspace = np.full((slots, *args[out].shape), np.nan, np.float32)
    _run_pair(module, KERNEL, args, workspace, programs)
    np.testing.assert_array_equal(args[out], expected[out])
