"""An outside user's GEMMs (tests/kernels/gemm_user.mlir) with the options the
sweep of issue 16 found refused, on the H100, against float64: block_n=256
next to a bias and a residual (the epilogue's tiles in one slot), ping_pong=True
at few rows (128-row tiles the two warpgroups share) and num_stages=8 on a
batched NN GEMM (64x128 tiles, the deepest ring that fits)."""

from __future__ import annotations

from pathlib import Path

import pytest

import tawa_xdsl

from .conftest import rel_err

USER = Path(__file__).parent.parent / "kernels" / "gemm_user.mlir"


@pytest.mark.parametrize("shape", [(1000, 2000, 1000), (3001, 4999, 520)], ids=str)
def test_a_wide_tile_next_to_a_bias_and_a_residual(torch, shape) -> None:
    m, n, k = shape
    gen = torch.Generator(device="cuda").manual_seed(3)
    a = torch.randn(m, k, device="cuda", generator=gen).half()
    b = torch.randn(k, n, device="cuda", generator=gen).half()
    bias = torch.randn(n, device="cuda", generator=gen).half()
    r = (4 * torch.randn(m, n, device="cuda", generator=gen)).half()
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    kernel = tawa_xdsl.compile(USER, "nn_f16_bias_res", block_n=256)
    kernel(a, b, bias, r, c)
    torch.cuda.synchronize()
    ref = a.double() @ b.double() + bias.double() + r.double()
    assert rel_err(c, ref) < 1e-2
    assert kernel.options["block_n"] == 256


@pytest.mark.parametrize(
    ("name", "options", "batch"),
    [
        ("bgemm_nn", {"num_stages": 8}, 3),
        ("bgemm_nn", {"ping_pong": True}, 3),
    ],
    ids=["stages8", "ping_pong"],
)
def test_a_batched_gemm_with_the_options_given(torch, name, options, batch) -> None:
    m, n, k = 16, 6144, 4096
    gen = torch.Generator(device="cuda").manual_seed(4)
    a = torch.randn(batch, m, k, device="cuda", generator=gen).bfloat16()
    b = torch.randn(batch, k, n, device="cuda", generator=gen).bfloat16()
    c = torch.full((batch, m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel = tawa_xdsl.compile(USER, name, **options)
    kernel(a, b, c)
    torch.cuda.synchronize()
    assert rel_err(c, a.double() @ b.double()) < 1e-2
    for option, value in options.items():
        assert kernel.options[option] == value
