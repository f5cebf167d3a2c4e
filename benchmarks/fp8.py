"""FP8 inputs for the benchmarks, made as an FP8 producer makes them, and what
they stand for: each group of a tensor (the whole tensor, a row, a 1 x 128 group,
a 128 x 128 block) scaled so its largest magnitude is e4m3's largest (448), then
cast; its descale (largest / 448) multiplies it back. The kernels are checked
against float64 computed from these dequantized values, so the error measured
is the kernel's (accumulation, P cast to e4m3, bf16 output), not the inputs'
quantization. torch is imported by the callers (this runs on the GPU only)."""

from __future__ import annotations

from typing import Any, NamedTuple

E4M3_MAX = 448.0
BLOCK = 128
"""DeepSeek-V3's scale block: A per 1 x BLOCK group, B per BLOCK x BLOCK block."""


def quantize(x: Any, rows: int, cols: int) -> tuple[Any, Any]:
    """`x` [R, C] cast to e4m3 per group of `rows` x `cols` (edge groups partial):
    (values [R, C], descales [ceil(R / rows), ceil(C / cols)] in f32)."""
    import torch
    import torch.nn.functional as F

    r, c = x.shape
    padded = F.pad(x.float(), (0, -c % cols, 0, -r % rows))
    groups = padded.view(padded.shape[0] // rows, rows, padded.shape[1] // cols, cols)
    amax = groups.abs().amax(dim=(1, 3)).clamp(min=1e-12)
    descale = amax / E4M3_MAX
    values = (groups / descale[:, None, :, None]).to(torch.float8_e4m3fn)
    return values.view(padded.shape)[:r, :c].contiguous(), descale


def per_tensor(x: Any) -> tuple[Any, float]:
    """`x` (any shape) cast to e4m3 with one descale: (values, descale)."""
    flat = x.reshape(-1, x.shape[-1])
    values, descale = quantize(flat, *flat.shape)
    return values.view(x.shape), float(descale)


def dequantize(values: Any, descale: Any, rows: int, cols: int) -> Any:
    """The float64 values `quantize(x, rows, cols)` stands for."""
    r, c = values.shape
    scale = descale.double()  # a group spanning a whole dimension broadcasts
    if rows < r:
        scale = scale.repeat_interleave(rows, 0)[:r]
    if cols < c:
        scale = scale.repeat_interleave(cols, 1)[:, :c]
    return values.double() * scale


REFERENCE_BYTES = 1 << 30
"""Float64 scores computed at once by `attention_reference` (at 16k tokens the
whole score tensor is 32 GiB)."""


def attention_reference(q: Any, k: Any, v: Any, sm_scale: float, causal: bool) -> Any:
    """softmax(q k^T * sm_scale) v in float64 over [..., S, D] tensors (the causal
    mask lets query i see keys 0..i), a few heads at a time; kept in f32."""
    import torch

    *lead, seq, d = q.shape
    q3, k3, v3 = (x.reshape(-1, seq, d) for x in (q, k, v))
    heads = max(1, REFERENCE_BYTES // (8 * seq * seq))
    mask = torch.ones(seq, seq, device=q.device, dtype=torch.bool).tril()
    out = torch.empty(q3.shape, device=q.device, dtype=torch.float32)
    for h in range(0, q3.shape[0], heads):
        part = slice(h, h + heads)
        s = q3[part].double() @ k3[part].double().transpose(1, 2) * sm_scale
        if causal:
            s.masked_fill_(~mask, float("-inf"))
        out[part] = (s.softmax(-1) @ v3[part].double()).float()
    return out.view(*lead, seq, d)


def groups(scaling: str, m: int, n: int, k: int) -> tuple[tuple[int, int], ...]:
    """The (rows, cols) of A's and of B's scale groups under gemm_fp8.mlir's
    scalings: per tensor, per row (of A and of B), DeepSeek-V3's blocks."""
    return {
        "tensor": ((m, k), (n, k)),
        "row": ((1, k), (1, k)),
        "block": ((1, BLOCK), (BLOCK, BLOCK)),
    }[scaling]


class ScaledGemm(NamedTuple):
    """C = (A @ B^T) scaled: the e4m3 operands, their descales laid out as the
    kernels of gemm_fp8.mlir take them, and what C should be."""

    a: Any
    """[M, K] e4m3"""
    b: Any
    """[N, K] e4m3"""
    scale_a: Any
    """tensor: [1, 1]; row: [M]; block: [K / 128, M] (transposed: one K block's
    scales of 128 rows are one TMA box)"""
    scale_b: Any
    """tensor: [1, 1]; row: [N]; block: [N / 128, K / 128]"""
    reference: Any
    """[M, N] f32: the float64 product of the dequantized operands"""


def scaled_gemm(scaling: str, m: int, n: int, k: int) -> ScaledGemm:
    """Random operands quantized under `scaling`, and their reference."""
    import torch

    (ra, ca), (rb, cb) = groups(scaling, m, n, k)
    a, scale_a = quantize(torch.randn(m, k, device="cuda"), ra, ca)
    b, scale_b = quantize(torch.randn(n, k, device="cuda"), rb, cb)
    reference = dequantize(a, scale_a, ra, ca) @ dequantize(b, scale_b, rb, cb).t()
    if scaling == "row":
        scale_a, scale_b = scale_a.view(-1), scale_b.view(-1)
    if scaling == "block":
        scale_a = scale_a.t().contiguous()
    return ScaledGemm(a, b, scale_a, scale_b, reference.float())
