"""Our Triton GEMM, the Triton peer of the benchmark: C = A @ B^T with B stored
N x K, or C = A @ B with B stored K x N (the kernel reads B through its strides);
16-bit floats, or e4m3 with scales (C = (A @ B^T) scaled, bf16 output).

A grouped-raster tile loop with `tl.dot`, autotuned over the configurations that
Triton's own H100 results favour (128x256 tiles with 8 warps, 128x128 with 4),
with K steps of 128 bytes (64 16-bit elements, 128 e4m3). The FP8 scalings are
gemm_fp8.mlir's: per tensor and row-wise scales multiply the f32 accumulator in
the epilogue (the products summed over all of K in the tensor cores'
accumulator, Triton's default on SM90, as tawa's kernels do); block scales
(DeepSeek-V3: A per 1 x 128 group along K, B per 128 x 128 block) scale each
128-wide K step's product, computed into a fresh accumulator, before adding it
to the f32 sum (promotion). B is read K-major for FP8 (B stored N x K), the only
layout Hopper's FP8 wgmma reads.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


def configs(bk: int) -> list[triton.Config]:
    """The four configurations, with K steps of `bk` elements."""
    return [
        triton.Config(
            {"BM": bm, "BN": bn, "BK": bk, "GROUP": 8},
            num_stages=stages,
            num_warps=warps,
        )
        for bm, bn, stages, warps in (
            (128, 256, 3, 8),
            (128, 256, 4, 8),
            (128, 128, 4, 4),
            (256, 128, 3, 8),
        )
    ]


SCALINGS = {"": 0, "tensor": 1, "row": 2, "block": 3}
"""The kernel's SCALING: none (16-bit inputs), or gemm_fp8.mlir's (fp8.groups)."""
SCALE_BLOCK = 128
"""Block scaling's K (and B's N) block: one K step of the FP8 configurations."""


@triton.jit
def _gemm(
    a,
    b,
    c,
    scale_a,
    scale_b,
    M,
    N,
    K,
    sam,
    sak,
    sbn,
    sbk,
    scm,
    scn,
    ssa0,
    ssa1,
    ssb0,
    ssb1,
    SCALING: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    GROUP: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    per_group = GROUP * tiles_n
    first_m = (pid // per_group) * GROUP
    rows = min(tiles_m - first_m, GROUP)
    pm = first_m + (pid % per_group) % rows
    pn = (pid % per_group) // rows
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ta = tl.load(
            a + om[:, None] * sam + (k0 + ok)[None, :] * sak,
            mask=(om[:, None] < M) & ((k0 + ok)[None, :] < K),
            other=0.0,
        )
        tb = tl.load(
            b + (k0 + ok)[:, None] * sbk + on[None, :] * sbn,
            mask=((k0 + ok)[:, None] < K) & (on[None, :] < N),
            other=0.0,
        )
        if SCALING == 3:  # block: scale_a [K / 128, M], scale_b [N / 128, K / 128]
            kb = k0 // BK  # BK is the scale block (SCALE_BLOCK) for e4m3
            sa = tl.load(scale_a + kb * ssa0 + om * ssa1, mask=om < M, other=0.0)
            sb = tl.load(
                scale_b + (on // BK) * ssb0 + kb * ssb1, mask=on < N, other=0.0
            )
            acc += tl.dot(ta, tb) * (sa[:, None] * sb[None, :])
        else:
            acc = tl.dot(ta, tb, acc)
    if SCALING == 1:  # tensor: one scale each
        acc = acc * (tl.load(scale_a) * tl.load(scale_b))
    if SCALING == 2:  # row: scale_a [M], scale_b [N]
        sa = tl.load(scale_a + om * ssa0, mask=om < M, other=0.0)
        sb = tl.load(scale_b + on * ssb0, mask=on < N, other=0.0)
        acc = acc * (sa[:, None] * sb[None, :])
    tl.store(
        c + om[:, None] * scm + on[None, :] * scn,
        acc.to(c.dtype.element_ty),
        mask=(om[:, None] < M) & (on[None, :] < N),
    )


# one kernel, tuned apart per element size (sbk: B's layout)
KEY = ["M", "N", "K", "sbk", "SCALING"]
_gemm_16 = triton.autotune(configs=configs(64), key=KEY)(_gemm)
_gemm_fp8 = triton.autotune(configs=configs(SCALE_BLOCK), key=KEY)(_gemm)


def two_strides(t: torch.Tensor) -> tuple[int, int]:
    """A scale tensor's strides, a vector's second (never read) 0."""
    return (*t.stride(), 0)[:2]


def gemm(
    a: torch.Tensor,
    b: torch.Tensor,
    c: torch.Tensor,
    layout: str = "nt",
    scales: tuple[torch.Tensor, torch.Tensor] | None = None,
    scaling: str = "",
) -> None:
    """c = a @ b.T for b [N, K] (`layout` nt), c = a @ b for b [K, N] (nn); a is
    [M, K], c [M, N], any 16-bit float type. For e4m3 a and b (nt), `scales` =
    (scale_a, scale_b) laid out as fp8.ScaledGemm's under `scaling` and c bf16."""
    (m, k), n = a.shape, c.shape[1]
    sbn, sbk = b.stride() if layout == "nt" else reversed(b.stride())
    scale_a, scale_b = scales or (c, c)  # unread without a scaling
    kernel = _gemm_fp8 if a.element_size() == 1 else _gemm_16

    def grid(meta):
        return (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)

    kernel[grid](
        a,
        b,
        c,
        scale_a,
        scale_b,
        m,
        n,
        k,
        a.stride(0),
        a.stride(1),
        sbn,
        sbk,
        c.stride(0),
        c.stride(1),
        *two_strides(scale_a),
        *two_strides(scale_b),
        SCALING=SCALINGS[scaling],
    )
