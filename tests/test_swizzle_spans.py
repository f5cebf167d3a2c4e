"""Matrix tiles whose rows 128-byte swizzle chunks do not divide, moved and
read in chunks of a narrower span. Attention at every head dim wgmma takes: a 16-bit head dim of 80 or 96 (Phi and others) has
rows of 160 or 192 bytes, which TMA moves and wgmma reads in chunks of the
widest swizzle span dividing them (`target.swizzle_span`: five 32-byte or three
64-byte chunks; P V reads V MN-major in those chunks). The bf16 kernels of
`attention_d80_d96.mlir` run at the thread level in
`test_thread_sim_examples.py` and assemble in `test_lowering.py`, the e4m3 one
in `test_fp8.py`; here the f16 kernels, the class (every multiple of 16 up to
256 lowers), what stays refused, and an epilogue tile of such rows read from
its slot into registers (a residual 80 or 96 wide)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.examples.make_attention import FP8, kernel
from tawa_xdsl.target import swizzle_span

from .conftest import EXAMPLES
from .test_thread_sim_examples import F16, _attention, check_example
from .thread_level import assert_close, simulate_output, to_thread_level

RESIDUAL = Path(__file__).parent / "kernels" / "gemm_residual.mlir"


def _kernel(d: int, dtype: str, causal: bool) -> tuple[str, str]:
    """(name, MLIR text) of the example template's kernel at head dim `d`
    (64-key blocks past 128, as `attention_d256.mlir` walks them)."""
    text = kernel(d, dtype, causal, 128, 64 if d > 128 else 128)
    name = text.split("@", 1)[1].split("(", 1)[0]
    return name, text


def test_every_wgmma_k_has_a_swizzle_span() -> None:
    """A K extent wgmma takes (16-bit: multiples of 16; 8-bit: of 32) always
    has a span, the widest dividing the row: 128-byte chunks where they fit."""
    for d in range(16, 257, 16):
        span = swizzle_span(2 * d)
        assert span is not None and (2 * d) % span == 0
        assert span == max(s for s in (32, 64, 128) if (2 * d) % s == 0)
    assert [swizzle_span(2 * d) for d in (64, 80, 96, 128)] == [128, 32, 64, 128]
    assert swizzle_span(96) == 32  # e4m3 head dim 96
    assert swizzle_span(2 * 72) is None  # 144 bytes: no span, no k16 step either


@pytest.mark.slow
@pytest.mark.parametrize("d", range(16, 257, 16))
def test_every_head_dim_of_16_to_256_lowers(d) -> None:
    """Causal bf16 attention at each multiple of 16 lowers to the thread level
    (past 128, two stages of 64-key blocks, as head dim 256 runs)."""
    name, text = _kernel(d, "bf16", True)
    options = "num-stages=2 mma-depth=1" if d > 128 else ""
    module = to_thread_level(
        tawa_xdsl.parse(text), f"tawa-hopper-pipeline{{{options}}}"
    )
    assert tawa_xdsl.kernel.find_kernel(module, name) is not None


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [80, 96])
def test_f16_head_dims_80_and_96_at_the_thread_level(d, causal) -> None:
    """As compile() lowers them: lane by lane against the interpreter, and as
    close to float64 as the interpreter is."""
    name, text = _kernel(d, "f16", causal)
    module = to_thread_level(tawa_xdsl.parse(text), "tawa-hopper-pipeline")
    run = _attention("", d, causal, F16)
    check_example(name, "", module=module, run=run, source=text)


@pytest.mark.parametrize(
    ("d", "dtype", "message"),
    [
        (72, "bf16", "K = 72: wgmma needs a multiple of 16 for bf16 inputs"),
        (80, FP8, "K = 80: wgmma needs a multiple of 32 for f8E4M3FN inputs"),
    ],
)
def test_head_dims_wgmma_cannot_step_through_are_refused(d, dtype, message) -> None:
    """A head dim that is not a whole number of wgmma K steps (16 elements of
    16 bits, 32 of 8 bits: e4m3 head dim 80) is refused at the product, located."""
    _, text = _kernel(d, dtype, False)
    with pytest.raises(OpDiagnostic, match=message) as refused:
        tawa_xdsl.apply(tawa_xdsl.parse(text), "tawa-hopper-pipeline")
    assert "tile.dot" in str(refused.value)


@pytest.mark.parametrize("bn", [80, 96])
def test_a_residual_of_narrow_chunks_is_read_into_registers(bn) -> None:
    """`gemm_residual` resized to BN = 80 or 96: the residual tile, 160 or 192
    bytes a row, lands in 32- or 64-byte chunks, and each thread reads its pairs
    back through that swizzle (the piece XOR the row's bits above the span:
    g >> 2 or g >> 1, not g) into the accumulator layout."""
    shape = f"tile-shape{{block-n={bn}}}"
    rng = np.random.default_rng(bn)
    m, n, k = 200, 296, 136
    args = [
        rng.standard_normal(s).astype(bfloat16) for s in ((m, k), (n, k), (m, n))
    ] + [np.full((m, n), np.nan, bfloat16)]
    grid = (2, -(-n // bn))
    source = RESIDUAL.read_text()
    shaped = tawa_xdsl.apply(tawa_xdsl.parse(source), shape)
    tawa_xdsl.interpret(shaped, "gemm_residual", *args, grid=grid)
    expected = args[3].copy()
    module = to_thread_level(tawa_xdsl.parse(source), f"{shape},tawa-hopper-pipeline")
    got = simulate_output(module, "gemm_residual", args, 3, grid)
    assert_close(got, expected)
    a, b, r = (x.astype(np.float64) for x in args[:3])
    assert np.abs(got.astype(np.float64) - (a @ b.T + r)).max() < 0.25


@pytest.mark.parametrize("bn", [80, 96])
def test_b_stored_k_by_n_in_narrow_chunks(bn) -> None:
    """`gemm_nn` resized to BN = 80 or 96: B (stored K x N) is read MN-major in
    32- or 64-byte chunks while A's rows are whole 128-byte chunks, each
    operand walked with its own span."""
    shape = f"tile-shape{{block-n={bn}}}"
    rng = np.random.default_rng(bn)
    m, n, k = 200, 296, 136
    a = rng.standard_normal((m, k)).astype(bfloat16)
    b = rng.standard_normal((k, n)).astype(bfloat16)
    args = [a, b, np.full((m, n), np.nan, bfloat16)]
    grid = (2, -(-n // bn))
    source = (EXAMPLES / "gemm.mlir").read_text()
    shaped = tawa_xdsl.apply(tawa_xdsl.parse(source), shape)
    tawa_xdsl.interpret(shaped, "gemm_nn", *args, grid=grid)
    expected = args[2].copy()
    # untuned: the tuned shape rules would widen B's tiles back to 256
    spec = f"{shape},tawa-hopper-pipeline{{tuned=false}}"
    lowered = tawa_xdsl.apply(tawa_xdsl.parse(source), spec)
    assert f"x64x{bn}xbf16>" in str(lowered)  # B's ring: K x BN slots
    module = tawa_xdsl.apply(lowered, "distribute-fragments")
    assert_close(simulate_output(module, "gemm_nn", args, 2, grid), expected)
