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
from xdsl.utils.exceptions import DiagnosticException

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


TWO_DOTS_STORED_TRANSPOSED = """
func.func @pv_t(%q: !tile.desc<?x?xbf16, box = [64, 64]>,
    %k: !tile.desc<?x?xbf16, box = [64, 64]>, %v: !tile.desc<?x?xbf16, box = [64, 64]>,
    %o: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %keys = tile.dim %k, 0 : !tile.desc<?x?xbf16, box = [64, 64]>
  %m0 = arith.muli %pid, %c64 : index
  %q_t = tile.load %q[%m0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %acc_f = scf.for %n = %c0 to %keys step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %k_t = tile.load %k[%n, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %v_t = tile.load %v[%n, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %k_tt = tile.trans %k_t : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %p = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xbf16>
    %acc_new = tile.dot %p, %v_t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %acc_new : tensor<64x64xf32>
  }
  %o_t = tile.trans %acc_f : tensor<64x64xf32> -> tensor<64x64xf32>
  %o_n = arith.negf %o_t : tensor<64x64xf32>
  tile.store %o_n, %o[%c0, %m0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
"""


def test_a_refused_transpose_names_the_op_the_user_wrote() -> None:
    """(P V)^T of a loop of two dots, negated (read by other than a store,
    which writes a register tile transposed), cannot move up (P is computed,
    no loaded tile); the refusal names the dot at fault, as without the two-stage
    overlap, whose scf.if peeling the loop's first iteration it named: an op
    the kernel does not have."""
    module = tawa_xdsl.parse(TWO_DOTS_STORED_TRANSPOSED)
    with pytest.raises(DiagnosticException) as refused:
        tawa_xdsl.apply(module, "tawa-hopper-pipeline{two-stage=true}")
    message = str(refused.value)
    assert "tile.trans: convert-aref-to-nvgpu-async: a register tile" in message
    assert "%acc_new is a tile.dot of other operands than A as loaded" in message
    assert "scf.if" not in message
