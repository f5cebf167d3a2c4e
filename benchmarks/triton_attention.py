"""Our Triton FlashAttention forward, the Triton peer of the attention benchmark.

Q, K, V, O are [batch * heads, seq, head_dim]. One program per (query block, batch *
head); an online softmax in base 2 over key blocks. Causal attention walks the key
blocks left of the diagonal without a mask, then the diagonal blocks with it.
Grouped-query attention: K and V have fewer heads, [batch * kv_heads, seq,
head_dim], and query head h reads kv head h // group (as FlashAttention-2 does:
the group's programs read the same K/V, through L2).

FP8 (Q, K, V in e4m3 with per-tensor descales, O in bf16), as
examples/attention_fp8.mlir computes it: the descales of Q and K fold into the
score scale and V's multiplies O; P is cast to e4m3 for the second product, its
row's largest at 2^8 (FlashAttention-3's offset; the common factor cancels in
O = acc / l) so that its large values keep 3 mantissa bits. V is read through
its strides: FP8 passes it stored transposed ([BH, D, S], viewed as [BH, S, D]),
keys contiguous, the K-major operand Hopper's FP8 wgmma reads.
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
    stride_vs,
    stride_vd,
    qk_scale,
    MASKED: tl.constexpr,
    CAUSAL: tl.constexpr,
    FP8: tl.constexpr,
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
    if FP8:
        p = tl.math.exp2(s - (m_new - 8.0)[:, None])  # a row's largest at 2^8
    else:
        p = tl.math.exp2(s - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    v = tl.load(
        v_ptr + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd,
        mask=cols[:, None] < seq,
        other=0.0,
    )
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, l_i, m_new


@triton.autotune(configs=CONFIGS, key=["seq", "D", "CAUSAL", "FP8"])
@triton.jit
def _attention(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    sm_scale,
    v_descale,
    seq,
    stride_bh,
    stride_s,
    stride_vbh,
    stride_vs,
    stride_vd,
    group,
    D: tl.constexpr,
    CAUSAL: tl.constexpr,
    FP8: tl.constexpr,
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
    kv = bh // group  # K, V: [batch * kv_heads, seq, D]
    k_base, v_base = k_ptr + kv * stride_bh, v_ptr + kv * stride_vbh
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
                stride_vs,
                stride_vd,
                qk_scale,
                False,
                True,
                FP8,
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
                stride_vs,
                stride_vd,
                qk_scale,
                True,
                True,
                FP8,
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
                stride_vs,
                stride_vd,
                qk_scale,
                True,
                False,
                FP8,
            )
    out = acc * (v_descale / l_i)[:, None]
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
    descales: tuple[float, float, float] = (1.0, 1.0, 1.0),
) -> None:
    """o = softmax(q k^T * sm_scale) v for [batch * heads, seq, head_dim] tensors;
    k and v may have fewer heads (grouped-query attention), q and k one length,
    v any strides. e4m3 q, k, v stand for themselves times `descales` (o bf16)."""
    bh, seq, d = q.shape
    group = bh // k.shape[0]
    assert k.shape == v.shape == (bh // group, seq, d), "K, V: [BH / group, seq, D]"
    dq, dk, dv = descales

    def grid(meta):
        return (triton.cdiv(seq, meta["BM"]), bh)

    _attention[grid](
        q,
        k,
        v,
        o,
        sm_scale * dq * dk,
        dv,
        seq,
        q.stride(0),
        q.stride(1),
        *v.stride(),
        group,
        D=d,
        CAUSAL=causal,
        FP8=q.element_size() == 1,
    )
