"""Every plan the shape rules make for the example GEMMs lowers: each kernel at
shapes of few rows, about a wave of tiles, short K and odd extents is
specialized as a call would specialize it (the split or stream pair included)
on the CPU, to PTX. A rule that picks a tile the lowering refuses was found
only on the GPU before (64x96 tiles for an e4m3 output, NOTES 3.47)."""

from __future__ import annotations

import pytest

from tawa_xdsl.compiler import CompileOptions
from tawa_xdsl.dispatch import Dispatcher
from tawa_xdsl.examples import path

from .conftest import sweep

KERNELS = [
    ("gemm.mlir", "gemm_nt"),
    ("gemm.mlir", "gemm_nn"),
    ("gemm.mlir", "gemm_nn_f16"),
    ("gemm_epilogue.mlir", "gemm_scale_bias_relu"),
    ("gemm_epilogue.mlir", "gemm_bias_gelu"),
    ("gemm_epilogue.mlir", "gemm_residual_gelu"),
    ("gemm_fp8.mlir", "gemm_fp8_tensorwise"),
    ("gemm_fp8.mlir", "gemm_fp8_e4m3_e5m2"),
    ("gemm_fp8.mlir", "gemm_fp8_e4m3_out"),
    ("gemm_fp8.mlir", "gemm_fp8_rowwise"),
]
"""The example GEMMs whose extents are M, N and K alone (the block-scaled ones
also name their scales' blocks, and their tiles are not resized)."""

SHAPES = [
    (16, 6144, 4096),
    (128, 4096, 4096),
    (256, 256, 16384),
    (512, 6144, 4096),
    (768, 3072, 8192),
    (1000, 1000, 1000),
    (2000, 3000, 1024),
]

CASES = [(f, k, s) for f, k in KERNELS for s in SHAPES]
FAST = {
    (f, k, s)
    for f, k in KERNELS
    for s in SHAPES
    if s in {(16, 6144, 4096), (512, 6144, 4096)}
}


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("TAWA_XDSL_CACHE_DIR", str(tmp_path))


@pytest.mark.parametrize(
    ("file", "kernel", "shape"),
    sweep(CASES, FAST, lambda c: f"{c[1]}-{'x'.join(map(str, c[2]))}"),
)
def test_every_plan_lowers(file: str, kernel: str, shape: tuple[int, int, int]) -> None:
    d = Dispatcher(path(file).read_text(), kernel, CompileOptions())
    m, n, k = shape
    spec = d.for_shape(M=m, N=n, K=k)
    assert spec.kernel.ptx.strip()
    assert spec.plan.options.block_n in (0, spec.kernel.options["block_n"])
    if spec.plan.decision.split_k > 1 or spec.plan.decision.stream_k:
        assert spec.reduce is not None and spec.reduce.ptx.strip()


ATTENTION = [
    ("attention.mlir", "attention_d64", 64),
    ("attention.mlir", "attention_causal_d64", 64),
    ("attention.mlir", "attention_causal_d128", 128),
    ("attention_d256.mlir", "attention_causal_d256", 256),
    ("attention_fp8.mlir", "attention_causal_d128_fp8", 128),
    ("attention_fp8.mlir", "attention_d256_fp8", 256),
]
SEQUENCES = [(64, 512), (16, 1024), (8, 4096), (1, 16384)]
"""(batch x heads, sequence): short causal rows (their own rules), the FP8
causal walk's window, and one wave or fewer of query blocks."""

ATTENTION_CASES = [(f, k, d, s) for f, k, d in ATTENTION for s in SEQUENCES]
ATTENTION_FAST = {c for c in ATTENTION_CASES if c[3] == (64, 512)}


@pytest.mark.parametrize(
    ("file", "kernel", "head_dim", "rows"),
    sweep(ATTENTION_CASES, ATTENTION_FAST, lambda c: f"{c[1]}-{c[3][0]}x{c[3][1]}"),
)
def test_every_attention_plan_lowers(
    file: str, kernel: str, head_dim: int, rows: tuple[int, int]
) -> None:
    d = Dispatcher(path(file).read_text(), kernel, CompileOptions())
    bh, seq = rows
    spec = d.for_shape(BH=bh, SQ=seq, SK=seq, D=head_dim)
    assert spec.kernel.ptx.strip() and spec.reduce is None
