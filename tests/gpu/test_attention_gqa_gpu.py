"""Grouped-query attention (examples/attention_gqa.mlir) compiled by tawa-xdsl,
on the H100, against a float64 reference: groups 1, 2, 4, 8 and MQA, head dims
64 and 128, causal and not, sequences that are not block multiples, decoding
(a few queries per head, all heads of a group in one block). Q and O are
[B * HQ, SQ, D], folded to [BHKV, group * SQ, D] (a view) as the kernels take
them. Outputs are poisoned with NaN; tolerance |out - ref| / |ref| < 1e-2."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import tawa_xdsl

from .conftest import rel_err
from .test_attention_gpu import CONFIGS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# batch, kv heads, group, query length, key length
PROBLEMS = {
    "group1": (2, 4, 1, 1000, 1000),
    "group2": (2, 4, 2, 300, 300),
    "group4": (1, 8, 4, 1000, 1000),
    "group8": (2, 2, 8, 2048, 2048),
    "mqa": (2, 1, 16, 300, 300),
    "decode": (4, 8, 8, 5, 4096),
    "long-prompt": (1, 2, 4, 4096, 4096),
}


def gqa_reference(torch, q, k, v, scale: float, causal: bool):
    """float64; query head h reads kv head h // group; query i sees keys 0..i."""
    group = q.shape[0] // k.shape[0]
    k, v = (x.double().repeat_interleave(group, dim=0) for x in (k, v))
    s = (q.double() @ k.transpose(-1, -2)) * scale
    if causal:
        rows, cols = s.shape[-2:]
        mask = torch.ones(rows, cols, device=q.device, dtype=torch.bool).tril()
        s = s.masked_fill(~mask, float("-inf"))
    return s.softmax(-1) @ v


def run_gqa(torch, problem: str, d: int, causal: bool, config: str) -> float:
    batch, kv_heads, group, seq_q, seq_k = PROBLEMS[problem]
    gen = torch.Generator(device="cuda").manual_seed(seq_q * 31 + d + group)
    bhkv = batch * kv_heads

    def randn(heads: int, seq: int):
        return torch.randn(heads, seq, d, device="cuda", generator=gen).bfloat16()

    q, k, v = randn(bhkv * group, seq_q), randn(bhkv, seq_k), randn(bhkv, seq_k)
    o = torch.full_like(q, float("nan"))
    kernel = tawa_xdsl.compile(
        EXAMPLES / "attention_gqa.mlir",
        f"attention_gqa{'_causal' if causal else ''}_d{d}",
        **CONFIGS[config],
    )
    scale = 1 / math.sqrt(d)
    # the caller's side of the contract: the fold, and SQ for the causal mask
    fold = (q.view(bhkv, group * seq_q, d), k, v, o.view(bhkv, group * seq_q, d))
    kernel(*fold, scale, *((seq_q,) if causal else ()))
    torch.cuda.synchronize()
    return rel_err(o, gqa_reference(torch, q, k, v, scale, causal))


@pytest.mark.parametrize("config", ["tuned", "D2-P1", "D3-P2-two-stage"])
@pytest.mark.parametrize("problem", sorted(PROBLEMS))
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [64, 128])
def test_gqa_matches_float64(torch, d, causal, problem, config) -> None:
    assert run_gqa(torch, problem, d, causal, config) < 1e-2
