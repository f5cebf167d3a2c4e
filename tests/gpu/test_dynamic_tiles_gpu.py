"""persistent{dynamic=true} on the H100: causal attention (head dims 64 and
128, batch x heads 16, sequence 1024) and GEMMs take their tiles from the tile
counter (`atom.global.inc` on a module-scope `.global`), against float64, the
output poisoned with NaN before each launch. Each compiled kernel is launched
three times in a row: the counter must be back at zero after every launch, or
the next one skips tiles (left NaN). Launches on two streams at once share the
counter too: the runtime orders each after the last (`Kernel.counts_tiles`).
The tuned attention walk (`heuristics.ATTENTION_WALK`) takes the counter by
default at short key lengths: its plans are checked here as the rules pick
them."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import tawa_xdsl

from .conftest import rel_err
from .test_attention_gpu import attention_reference

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DYNAMIC = dict(persistent=True, longest_first=True, dynamic_tiles=True)
LAUNCHES = 3


@pytest.mark.parametrize("d", [64, 128])
def test_causal_attention_takes_its_tiles_from_the_counter(torch, d) -> None:
    # at head dim 128 a double-buffered Q does not fit next to the K/V ring
    options = DYNAMIC | (dict(outer_stages=1) if d == 128 else {})
    compiled = tawa_xdsl.compile(
        EXAMPLES / "attention.mlir", f"attention_causal_d{d}", **options
    )
    launch_attention(torch, compiled, (16, 1024, d), causal=True, seed=d)


def launch_attention(
    torch, compiled, shape: tuple[int, int, int], causal: bool, seed: int
) -> None:
    """`LAUNCHES` launches of `compiled` on random bf16 Q, K, V of `shape`, each
    output poisoned first and checked against float64."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q, k, v = (
        torch.randn(*shape, device="cuda", generator=gen).to(torch.bfloat16)
        for _ in range(3)
    )
    scale = 1 / math.sqrt(shape[-1])
    ref = attention_reference(torch, q, k, v, scale, causal=causal)
    for _ in range(LAUNCHES):
        o = torch.full_like(q, float("nan"))
        compiled(q, k, v, o, scale)
        torch.cuda.synchronize()
        assert rel_err(o, ref) < 1e-2


@pytest.mark.parametrize(
    "size", [(4096, 4096, 512), (1000, 520, 300), (128, 256, 64)], ids=str
)
def test_gemm_takes_its_tiles_from_the_counter(torch, size) -> None:
    """More tiles than SMs, a few, one."""
    m, n, k = size
    compiled = tawa_xdsl.compile(  # one kernel: no split-K or stream-K pair
        EXAMPLES / "gemm.mlir",
        "gemm_nt",
        persistent=True,
        dynamic_tiles=True,
        split_k=1,
        stream_k=False,
    )
    gen = torch.Generator(device="cuda").manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda", generator=gen).to(torch.bfloat16)
    ref = a.double() @ b.double().t()
    for _ in range(LAUNCHES):
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        compiled(a, b, c)
        torch.cuda.synchronize()
        assert rel_err(c, ref) < 1e-2


def test_launches_on_two_streams_take_turns_with_the_counter(torch) -> None:
    """Eight launches alternating between two streams, none waited for in
    between, each into its own poisoned output: without the ordering two
    launches in flight at once draw each other's tickets and leave tiles NaN."""
    m, n, k = 4096, 4096, 1024
    compiled = tawa_xdsl.compile(
        EXAMPLES / "gemm.mlir",
        "gemm_nt",
        persistent=True,
        dynamic_tiles=True,
        split_k=1,
        stream_k=False,
    )
    gen = torch.Generator(device="cuda").manual_seed(7)
    a = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda", generator=gen).to(torch.bfloat16)
    ref = a.double() @ b.double().t()
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    outputs = [
        torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        for _ in range(8)
    ]
    torch.cuda.synchronize()
    for i, c in enumerate(outputs):
        compiled(a, b, c, stream=streams[i % 2].cuda_stream)
    torch.cuda.synchronize()
    for c in outputs:
        assert rel_err(c, ref) < 1e-2


WALKED = [  # more query blocks of 128 rows than SMs (else no walk: one wave)
    ("attention.mlir", "attention_causal_d128", 128, 64, 512, True),
    ("attention.mlir", "attention_causal_d128", 128, 16, 2048, True),
    ("attention.mlir", "attention_d128", 128, 64, 512, False),
    ("attention.mlir", "attention_causal_d64", 64, 32, 1024, True),
    ("attention.mlir", "attention_d64", 64, 16, 2048, False),
    ("attention_d80_d96.mlir", "attention_causal_d96", 96, 64, 512, True),
    ("attention_d80_d96.mlir", "attention_causal_d80", 80, 32, 1024, True),
]


@pytest.mark.parametrize(
    ("file", "kernel", "d", "bh", "seq", "causal"),
    WALKED,
    ids=[f"{k}-{bh}x{s}" for _, k, _, bh, s, _ in WALKED],
)
def test_the_tuned_attention_walk_computes_the_reference(
    torch, file, kernel, d, bh, seq, causal
) -> None:
    compiled = tawa_xdsl.compile(EXAMPLES / file, kernel)
    launch_attention(torch, compiled, (bh, seq, d), causal=causal, seed=seq + d)
    assert compiled.options["dynamic_tiles"], "the rules did not pick the walk"
