"""FlashAttention forward compiled by tawa-xdsl, on the H100, against a float64
softmax-attention reference: head dims 64, 80, 96, 128 and 256, causal and not,
bf16 and f16, batch x heads in the grid, sequence lengths that are not block multiples.
Outputs are poisoned with NaN before each run; tolerance |out - ref| / |ref| < 1e-2."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import tawa_xdsl
from tawa_xdsl.diagnostics import DiagnosticException
from tawa_xdsl.examples import make_attention

from .conftest import rel_err

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXACT = dict(num_consumers=2, tuned=False)
CONFIGS = {  # name: compile options (none: the tuned defaults)
    "tuned": {},
    "tuned-ping-pong": dict(ping_pong=True),
    "tuned-cluster": dict(cluster=2),
    "reversed-cluster": dict(reverse_x=True, cluster=2, persistent=False),
    "D2-P1": dict(num_stages=2, mma_depth=1, **EXACT),
    "D3-P2": dict(num_stages=3, mma_depth=2, **EXACT),
    "D2-P1-two-stage": dict(num_stages=2, mma_depth=1, two_stage=True, **EXACT),
    "D3-P2-two-stage": dict(num_stages=3, mma_depth=2, two_stage=True, **EXACT),
}


def attention_reference(torch, q, k, v, scale: float, causal: bool):
    s = (q.double() @ k.double().transpose(-1, -2)) * scale
    if causal:
        seq = q.shape[-2]
        mask = torch.ones(seq, seq, device=q.device, dtype=torch.bool).tril()
        s = s.masked_fill(~mask, float("-inf"))
    return s.softmax(-1) @ v.double()


def run_attention(
    torch,
    file,
    kernel,
    batch_heads,
    seq,
    d,
    dtype,
    causal,
    config,
    sharpness: float = 1.0,
    ramp: float = 0.0,
    text: str | None = None,
):
    """Relative error against float64 on random inputs; `sharpness` multiplies
    the softmax scale, `ramp` adds ramp * key index to K with Q positive, so
    scores grow along the keys. `text` (MLIR) replaces the example `file`."""
    options = CONFIGS[config]
    gen = torch.Generator(device="cuda").manual_seed(seq * 31 + d)
    q, k, v = (
        torch.randn(batch_heads, seq, d, device="cuda", generator=gen) for _ in range(3)
    )
    if ramp:
        q = q.abs()
        k = k + ramp * torch.arange(seq, device="cuda")[None, :, None]
    q, k, v = (x.to(dtype) for x in (q, k, v))
    o = torch.full_like(q, float("nan"))
    compiled = tawa_xdsl.compile(text or EXAMPLES / file, kernel, **options)
    scale = sharpness / math.sqrt(d)
    compiled(q, k, v, o, scale)
    torch.cuda.synchronize()
    return rel_err(o, attention_reference(torch, q, k, v, scale, causal))


def example_kernel(torch, dtype: str, d: int, causal: bool):
    """The example file, kernel name and torch dtype of one attention kernel."""
    file = "attention.mlir" if dtype == "bf16" else "attention_f16.mlir"
    kernel = f"attention{'_causal' if causal else ''}_d{d}" + (
        "_f16" if dtype == "f16" else ""
    )
    return file, kernel, torch.bfloat16 if dtype == "bf16" else torch.float16


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("seq", [128, 300, 1000, 4096])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_attention_matches_float64(torch, dtype, d, causal, seq, config) -> None:
    file, kernel, torch_dtype = example_kernel(torch, dtype, d, causal)
    batch_heads = 6 if seq <= 1000 else 2
    if causal and "cluster" in CONFIGS[config]:
        # the key loop ends at the query block: the pass says there is nothing to
        # share (compile() refuses the cluster given at once)
        with pytest.raises(DiagnosticException, match="nothing to multicast"):
            run_attention(
                torch, file, kernel, batch_heads, seq, d, torch_dtype, causal, config
            )
        return
    assert (
        run_attention(
            torch, file, kernel, batch_heads, seq, d, torch_dtype, causal, config
        )
        < 1e-2
    )


@pytest.mark.parametrize(
    "scores", [dict(sharpness=12.0), dict(ramp=0.02)], ids=["sharp", "growing"]
)
@pytest.mark.parametrize("seq", [300, 4096])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_running_max_moves(torch, dtype, d, causal, seq, scores) -> None:
    """The examples' running max moves in steps of 8 (log2 units) and the PTX
    skips rescaling O when no row of a warp moved. Sharp scores move it by
    large jumps; scores growing along the keys (by more than 8 per key block)
    move it at every block, so every warp takes the multiply it usually skips."""
    file, kernel, torch_dtype = example_kernel(torch, dtype, d, causal)
    err = run_attention(
        torch, file, kernel, 2, seq, d, torch_dtype, causal, "tuned", **scores
    )
    assert err < 1e-2


@pytest.mark.parametrize("config", ["tuned", "D2-P1", "D2-P1-two-stage"])
@pytest.mark.parametrize("seq", [300, 2048])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_head_dim_256(torch, causal, seq, config) -> None:
    kernel = f"attention{'_causal' if causal else ''}_d256"
    err = run_attention(
        torch,
        "attention_d256.mlir",
        kernel,
        4,
        seq,
        256,
        torch.bfloat16,
        causal,
        config,
    )
    assert err < 1e-2


@pytest.mark.parametrize("config", ["tuned", "D2-P1", "D3-P2-two-stage"])
@pytest.mark.parametrize("seq", [300, 4096])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [80, 96])
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_head_dims_80_and_96(torch, dtype, d, causal, seq, config) -> None:
    """Rows of 160 and 192 bytes: Q, K and V moved by TMA and read by wgmma in
    32- and 64-byte swizzle chunks (V MN-major in them). bf16 from
    attention_d80_d96.mlir, f16 the same template's kernel."""
    kernel = f"attention{'_causal' if causal else ''}_d{d}"
    text = None
    if dtype == "f16":
        text = make_attention.kernel(d, "f16", causal, 128, 128)
        kernel += "_f16"
    torch_dtype = torch.bfloat16 if dtype == "bf16" else torch.float16
    err = run_attention(
        torch,
        "attention_d80_d96.mlir",
        kernel,
        6 if seq <= 1000 else 2,
        seq,
        d,
        torch_dtype,
        causal,
        config,
        text=text,
    )
    assert err < 1e-2


def test_a_kernel_that_does_not_fit_is_refused(torch) -> None:
    """Head dim 256 with one consumer warpgroup cannot hold its tiles in registers."""
    compiled = tawa_xdsl.compile(
        EXAMPLES / "attention_d256.mlir",
        "attention_d256",
        num_stages=2,
        mma_depth=1,
        num_consumers=1,
        tuned=False,
    )
    with pytest.raises(
        tawa_xdsl.runtime.ResourceError, match="does not fit the register budget"
    ):
        compiled.kernel.load()
