"""The shape rules' GEMM plans, for any problem: a tile shape the model has a
rate for and the kernel's loads and stores can take, a K split only where the
programs stay within one wave and every slice keeps `MIN_SLICE_ITERATIONS`
iterations, and a persistent grid exactly when the programs exceed a wave."""

from __future__ import annotations

import functools

from hypothesis import given
from hypothesis import strategies as st

from tawa_xdsl.compiler import CompileOptions
from tawa_xdsl.dispatch import Dispatcher
from tawa_xdsl.dispatch_rules import MIN_SLICE_ITERATIONS, SWAP_AB_MAX_M, swap_block_m
from tawa_xdsl.examples import path
from tawa_xdsl.heuristics import GEMM_RATES
from tawa_xdsl.target import SM_COUNT

KERNELS = {
    ("gemm.mlir", "gemm_nt"): 32,
    # B stored K x N is loaded in rows BN wide (the swizzled TMA path: whole
    # 128-byte rows of bf16)
    ("gemm.mlir", "gemm_nn"): 64,
    # an e4m3 output is stored through TMA only: whole 128-byte rows
    ("gemm_fp8.mlir", "gemm_fp8_e4m3_out"): 128,
    ("gemm_fp8.mlir", "gemm_fp8_rowwise"): 32,
}
"""The kernels, and what their tile widths must be a multiple of."""


@functools.cache
def dispatcher(file: str, kernel: str) -> Dispatcher:
    return Dispatcher(path(file).read_text(), kernel, CompileOptions())


extents = st.integers(1, 20000)


@given(st.sampled_from(sorted(KERNELS)), extents, extents, st.integers(16, 40000))
def test_every_gemm_plan_keeps_the_rules(kernel, m: int, n: int, k: int) -> None:
    d = dispatcher(*kernel)
    plan = d.plan(d.key_for(M=m, N=n, K=k))
    problem = plan.key.problem
    options = plan.options
    sizes = {
        name: size
        for name, size in (("BM", options.block_m), ("BN", options.block_n))
        if size
    }
    bm, bn = (d.structure.block(a, sizes) for a in (d.structure.rows, d.structure.cols))
    if options.swap_ab:  # weighed at few rows: 64 weight rows, M rounded up to 8
        rows = problem["M"]
        assert rows <= SWAP_AB_MAX_M and (bm, bn) == (swap_block_m(rows), 64)
    else:
        assert (bm, bn) in GEMM_RATES
        assert bn % KERNELS[kernel] == 0
    tiles = d.structure.tiles(problem, sizes)
    splits = plan.decision.split_k
    assert tiles is not None
    if splits > 1:
        assert tiles * splits <= SM_COUNT
        assert d.structure.iterations(problem, sizes) // splits >= MIN_SLICE_ITERATIONS
    if not plan.decision.stream_k:
        assert options.persistent == (tiles * splits > SM_COUNT)
