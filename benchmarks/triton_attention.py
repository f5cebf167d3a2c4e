"""Our Triton FlashAttention forward, the Triton peer of the attention benchmark.

Q, K, V, O are [batch * heads, seq, head_dim]. One program per (query block, batch *
head); an online softmax in base 2 over key blocks. Causal attention walks the key
blocks left of the diagonal without a mask, then the diagonal blocks with it.
Grouped-query attention: K and V have fewer heads, [batch * kv_heads, seq,
head_dim], and query head h reads kv head h // group (as FlashAttention-2 does:
the group's programs read the same K/V, through L2).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

CONFIGS = [
    triton.Config({"BM": 128, "BN": 64}, num_stages=3, num_warps=8),
    triton.Config({"BM": 128, "BN": 128}, num_stages=2, num_warps=8),
    triton.Config({"BM": 128, "BN": 64}, num_stages=2, num_warps=4),
    triton.Config({"BM": 64, "BN": 64}, num_stages=3, num_warps=4),
]


@triton.jit
def _block(
    acc,
    l_i,
    m_i,
    q,
    k_ptr,
    v_ptr,
    start,
    offs_m,
    offs_n,
    offs_d,
    seq,
    stride_s,
    qk_scale,
    MASKED: tl.constexpr,
    CAUSAL: tl.constexpr,
):
    cols = start + offs_n
    k = tl.load(
        k_ptr + cols[None, :] * stride_s + offs_d[:, None],
        mask=cols[None, :] < seq,
        other=0.0,
    )
    s = tl.dot(q, k) * qk_scale
    if MASKED:
        keep = cols[None, :] < seq
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        s = tl.where(keep, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    p = tl.math.exp2(s - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    v = tl.load(
        v_ptr + cols[:, None] * stride_s + offs_d[None, :],
        mask=cols[:, None] < seq,
        other=0.0,
    )
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, l_i, m_new


@triton.autotune(configs=CONFIGS, key=["seq", "D", "CAUSAL"])
@triton.jit
def _attention(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    sm_scale,
    seq,
    stride_bh,
    stride_s,
    group,
    D: tl.constexpr,
    CAUSAL: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
):
    pid_m, bh = tl.program_id(0), tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, D)
    base = bh * stride_bh
    q = tl.load(
        q_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :],
        mask=offs_m[:, None] < seq,
        other=0.0,
    )
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    qk_scale = sm_scale * 1.44269504
    kv_base = (bh // group) * stride_bh  # K, V: [batch * kv_heads, seq, D]
    k_base, v_base = k_ptr + kv_base, v_ptr + kv_base
    if CAUSAL:
        for start in range(0, pid_m * BM, BN):
            acc, l_i, m_i = _block(
                acc,
                l_i,
                m_i,
                q,
                k_base,
                v_base,
                start,
                offs_m,
                offs_n,
                offs_d,
                seq,
                stride_s,
                qk_scale,
                False,
                True,
            )
        for start in range(pid_m * BM, tl.minimum((pid_m + 1) * BM, seq), BN):
            acc, l_i, m_i = _block(
                acc,
                l_i,
                m_i,
                q,
                k_base,
                v_base,
                start,
                offs_m,
                offs_n,
                offs_d,
                seq,
                stride_s,
                qk_scale,
                True,
                True,
            )
    else:
        for start in range(0, seq, BN):
            acc, l_i, m_i = _block(
                acc,
                l_i,
                m_i,
                q,
                k_base,
                v_base,
                start,
                offs_m,
                offs_n,
                offs_d,
                seq,
                stride_s,
                qk_scale,
                True,
                False,
            )
    out = acc / l_i[:, None]
    tl.store(
        o_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :],
        out.to(o_ptr.dtype.element_ty),
        mask=offs_m[:, None] < seq,
    )


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    sm_scale: float,
    causal: bool,
) -> None:
    """o = softmax(q k^T * sm_scale) v for [batch * heads, seq, head_dim] tensors;
    k and v may have fewer heads (grouped-query attention), q and k one length."""
    bh, seq, d = q.shape
    group = bh // k.shape[0]
    assert k.shape == v.shape == (bh // group, seq, d), "K, V: [BH / group, seq, D]"

    def grid(meta):
        return (triton.cdiv(seq, meta["BM"]), bh)

    _attention[grid](
        q,
        k,
        v,
        o,
        sm_scale,
        seq,
        q.stride(0),
        q.stride(1),
        group,
        D=d,
        CAUSAL=causal,
    )
