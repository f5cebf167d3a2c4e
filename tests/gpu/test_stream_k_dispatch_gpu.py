"""Stream-K through the dispatcher on the H100: where the rule would stream K
at the tile kernel's rate but does not at the stream-K kernel's measured one,
where `stream_k=True` forces it (issue 16's small-M rows, a wave and a bit of
tiles, an odd shape), a GEMM with an epilogue, and bound launches; each against float64 with
the output poisoned with NaN, twice, bit for bit the same (the sums' grouping
follows the program count, one per SM)."""

from __future__ import annotations

from pathlib import Path

import pytest

import tawa_xdsl
from tawa_xdsl.runtime.driver import sm_count

from .conftest import rel_err
from .test_dispatch_gpu import check_unsplit_with_a_grid, gemm_inputs, residual_inputs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GEMM = EXAMPLES / "gemm.mlir"


def streamed(kernel) -> None:
    """The last call ran the stream-K pair, one program per SM at most."""
    spec = kernel.current
    assert spec.plan.decision.stream_k, kernel.explain()
    assert spec.kernel.name.endswith("_stream_k") and spec.reduce is not None
    assert f"over up to {sm_count()} programs" in spec.origin


def run_twice(torch, kernel, a, b, c, ref) -> None:
    """Two calls, the output poisoned before each: both right, bit for bit."""
    kernel(a, b, c)
    torch.cuda.synchronize()
    first = c.clone()
    assert rel_err(c, ref) < 1e-2
    c.fill_(float("nan"))
    kernel(a, b, c)
    torch.cuda.synchronize()
    assert torch.equal(c, first)


@pytest.mark.parametrize("shape", [(768, 3072, 8192), (1536, 1536, 16384)], ids=str)
def test_a_wave_and_a_bit_runs_unstreamed_by_default(torch, shape) -> None:
    """144 (or 72 and a half) tiles on 132 SMs: streamed they ran at 0.53 and
    0.41 of cuBLAS against 0.66 and 0.65 unsplit (NOTES 3.46); the rule, which
    weighs the stream-K kernel's measured slowdown, keeps them unstreamed."""
    a, b, c, ref = gemm_inputs(torch, *shape)
    kernel = tawa_xdsl.compile(GEMM, "gemm_nt")
    run_twice(torch, kernel, a, b, c, ref)
    assert not kernel.current.plan.decision.stream_k, kernel.explain()
    assert not kernel.options["stream_k"]


@pytest.mark.parametrize(
    "shape",
    [
        (128, 6144, 4096),
        (128, 1024, 8192),
        (999, 3008, 2000),  # odd M, K not a multiple of the K step
        (16, 4096, 14336),
        (768, 3072, 8192),
        (1536, 1536, 16384),
    ],
    ids=str,
)
@pytest.mark.parametrize("layout", ["nt", "nn"])
def test_forced_stream_k_computes_the_product(torch, shape, layout) -> None:
    a, b, c, ref = gemm_inputs(torch, *shape, layout)
    kernel = tawa_xdsl.compile(GEMM, f"gemm_{layout}", stream_k=True)
    run_twice(torch, kernel, a, b, c, ref)
    streamed(kernel)


def test_forced_stream_k_binds_and_never_streams_with_grid(torch) -> None:
    """A bound launch runs both kernels; a call with grid= runs the kernel
    unsplit (stream_k=True or not)."""
    m, n, k = 128, 6144, 4096
    a, b, c, ref = gemm_inputs(torch, m, n, k)
    kernel = tawa_xdsl.compile(GEMM, "gemm_nt", stream_k=True)
    launch = kernel.bind(a, b, c)
    launch()
    launch()
    torch.cuda.synchronize()
    streamed(kernel)
    assert rel_err(c, ref) < 1e-2
    check_unsplit_with_a_grid(torch, kernel, a, b, c, ref)


def test_a_streamed_epilogue_runs_after_the_sum(torch) -> None:
    """gemm_residual_gelu streamed: the reduce kernel runs the whole epilogue
    (scale, bias, GELU, residual) on the sum of the slots."""
    m, n, k = 999, 3008, 2000  # an output TMA can describe: K may be split
    a, b, bias, r, c = residual_inputs(torch, m, n, k)
    kernel = tawa_xdsl.compile(
        EXAMPLES / "gemm_epilogue.mlir", "gemm_residual_gelu", stream_k=True
    )
    kernel(a, b, bias, r, c, 0.5)
    torch.cuda.synchronize()
    streamed(kernel)
    x = 0.5 * (a.double() @ b.double().t()) + bias.double()
    gelu = 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x**3)))
    assert rel_err(c, gelu + r.double()) < 1e-2


def test_the_streamed_partials_kernel_keeps_its_ring_four_deep(torch) -> None:
    """768 x 3072 x 8192 forced: the partials kernel, on the plan's 128 x 256
    tiles, stores its f32 partial tiles from registers, so its ring takes the
    four stages the tuning once gave a staging tile never laid out (two
    stages, NOTES 3.72 and 3.77); the pair stays right."""
    a, b, c, ref = gemm_inputs(torch, 768, 3072, 8192)
    kernel = tawa_xdsl.compile(GEMM, "gemm_nt", stream_k=True)
    run_twice(torch, kernel, a, b, c, ref)
    streamed(kernel)
    options = kernel.current.kernel.options
    assert (options["block_n"], options["num_stages"]) == (256, 4)
