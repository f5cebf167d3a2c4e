"""Every plan the shape rules make for the example GEMMs lowers: each kernel at
shapes of few rows, about a wave of tiles, short K and odd extents is
specialized as a call would specialize it (the split or stream pair included)
on the CPU, to PTX. A rule that picks a tile the lowering refuses was found
only on the GPU before (64x96 tiles for an e4m3 output, NOTES 3.47)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tawa_xdsl.compiler import CompileOptions, describe
from tawa_xdsl.dispatch import Dispatcher
from tawa_xdsl.examples import path

from .conftest import rotation, sweep

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


pytestmark = pytest.mark.usefixtures("fresh_cache")


SLOW_CASES = {
    (f, k, s)
    for (f, k), s in rotation(
        KERNELS, [s for s in SHAPES if (KERNELS[0][0], KERNELS[0][1], s) not in FAST], 1
    )
}
"""CI's slow tier: each kernel at one of the other shapes in turn, every shape
reached (all of them under `--exhaustive`)."""


@pytest.mark.parametrize(
    ("file", "kernel", "shape"),
    sweep(CASES, FAST, lambda c: f"{c[1]}-{'x'.join(map(str, c[2]))}", slow=SLOW_CASES),
)
def test_every_plan_lowers(file: str, kernel: str, shape: tuple[int, int, int]) -> None:
    d = Dispatcher(path(file).read_text(), kernel, CompileOptions())
    m, n, k = shape
    spec = d.for_shape(M=m, N=n, K=k)
    assert spec.kernel.ptx.strip()
    assert spec.plan.options.block_n in (0, spec.kernel.options["block_n"])
    if spec.plan.decision.split_k > 1 or spec.plan.decision.stream_k:
        assert spec.reduce is not None and spec.reduce.ptx.strip()


USER = Path(__file__).parent / "kernels" / "gemm_user.mlir"
USER_KERNELS = ["nn_f16_bias_res", "bgemm_nn", "fp8_bias_e4m3"]
"""An outside user's GEMMs: NN f16 with a bias and a residual, a batched NN
GEMM (B on grid z), an FP8 GEMM with a bias and an e4m3 output."""

GIVEN = [
    {},
    {"ping_pong": True},
    {"num_stages": 6},
    {"block_n": 256},
    {"split_k": 3},
    {"stream_k": True},
    {"cluster": 2},
    {"tuned": False},
]
"""Options an outside user gives: each plan the rules make around them, the
call with grid= (unsplit) included, lowers (the sweep of issue 16 found
ping_pong=True and num_stages=8 overflowing shared memory on tiles the rules
chose, and block_n=256 next to a bias and a residual by 64 bytes)."""

USER_CASES = [
    (k, tuple(g.items()), s) for k in USER_KERNELS for g in GIVEN for s in SHAPES
]
USER_FAST = {c for c in USER_CASES if c[2] == (16, 6144, 4096)}
USER_CI = {
    (k, g, shape)
    for (k, g), shape in rotation(
        sorted({(k, g) for k, g, _ in USER_CASES}), SHAPES[1:], 2
    )
}
"""CI: each kernel and option set on two more shapes in turn, every shape
reached (all of them under `--exhaustive`)."""


@pytest.mark.parametrize(
    ("kernel", "given", "shape"),
    sweep(
        USER_CASES,
        USER_FAST,
        lambda c: (
            f"{c[0]}-{'-'.join(f'{k}={v}' for k, v in c[1]) or 'rules'}"
            f"-{'x'.join(map(str, c[2]))}"
        ),
        slow=USER_CI,
    ),
)
def test_every_plan_of_a_users_gemm_lowers(
    kernel: str, given: tuple[tuple[str, object], ...], shape: tuple[int, int, int]
) -> None:
    d = Dispatcher(USER.read_text(), kernel, CompileOptions(**dict(given)))
    extents = dict(zip("MNK", shape, strict=True))
    if kernel == "bgemm_nn":
        extents["B"] = 3
    spec = d.for_shape(**extents)
    assert spec.kernel.ptx.strip()
    assert d.for_shape(split=False, **extents).reduce is None
    ran = describe(spec.plan.options.as_dict())
    assert f"options {ran} (" in d.explain(**extents)


ATTENTION = [
    ("attention.mlir", "attention_d64", 64),
    ("attention.mlir", "attention_causal_d64", 64),
    ("attention.mlir", "attention_causal_d128", 128),
    ("attention_d80_d96.mlir", "attention_causal_d80", 80),
    ("attention_d80_d96.mlir", "attention_d96", 96),
    ("attention_d256.mlir", "attention_causal_d256", 256),
    ("attention_fp8.mlir", "attention_causal_d128_fp8", 128),
    ("attention_fp8.mlir", "attention_causal_d96_fp8", 96),
    ("attention_fp8.mlir", "attention_d256_fp8", 256),
    # V as stored: a staging buffer next to the ring
    ("attention_fp8_v.mlir", "attention_causal_d256_fp8_v", 256),
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
