"""cuBLAS FP8 GEMM through torch, the vendor peer of `gemm.py --dtype fp8`:
C (bf16) = (A @ B^T) scaled, on the operands and scales of fp8.ScaledGemm.

Which scalings this torch reaches is found at run time, once per scaling: each
way of calling cuBLAS is tried on a small problem and checked against its
float64 reference, and the first that runs and is right is kept. Per tensor and
row-wise go through `torch._scaled_mm` (row-wise since torch 2.5, on SM90).
Block scales (A per 1 x 128, B per 128 x 128; SM90, torch built with CUDA 12.9
or later) go through `torch.nn.functional.scaled_mm`, which names the recipes
(ScalingType.BlockWise1x128 and BlockWise128x128), or else `torch._scaled_mm`,
which infers them from the scales' shapes and strides. A scaling that no way
takes raises Unsupported with each way's reason; the benchmark records it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from common import rel_err
from fp8 import ScaledGemm, scaled_gemm

FAST_ACCUM = True
"""use_fast_accum for per-tensor and row-wise scales: the products are summed
over all of K in the tensor cores' accumulator, as tawa's kernels and our Triton
GEMM (Triton's default on SM90) do; cuBLAS's default promotes the partial sums
to f32 every few K steps instead, more precise and slower. Block scaling
promotes every 128 K in all three."""

Call = Callable[[ScaledGemm], Any]


class Unsupported(Exception):
    """No way of calling cuBLAS with these scales works in this torch."""


def _tensorwise(g: ScaledGemm) -> Any:
    import torch

    return torch._scaled_mm(
        g.a,
        g.b.t(),  # column-major K x N: the layout cuBLAS's FP8 kernels take
        scale_a=g.scale_a.reshape(()),
        scale_b=g.scale_b.reshape(()),
        out_dtype=torch.bfloat16,
        use_fast_accum=FAST_ACCUM,
    )


def _rowwise(g: ScaledGemm) -> Any:
    import torch

    return torch._scaled_mm(
        g.a,
        g.b.t(),
        scale_a=g.scale_a.view(-1, 1),  # M x 1
        scale_b=g.scale_b.view(1, -1),  # 1 x N
        out_dtype=torch.bfloat16,
        use_fast_accum=FAST_ACCUM,
    )


# Block scales: A's M x K/128 scales outer-dim-major (strides 1, M) and B's, for
# the K x N operand, K/128 x N/128 with strides 1, K/128 (K/128 a multiple of 4):
# the transposes of what gemm_fp8_blockwise takes, no copy.


def _blockwise(g: ScaledGemm) -> Any:
    import torch
    import torch.nn.functional as F

    return F.scaled_mm(
        g.a,
        g.b.t(),
        g.scale_a.t(),
        F.ScalingType.BlockWise1x128,
        g.scale_b.t(),
        F.ScalingType.BlockWise128x128,
        output_dtype=torch.bfloat16,
    )


def _blockwise_inferred(g: ScaledGemm) -> Any:
    import torch

    return torch._scaled_mm(
        g.a,
        g.b.t(),
        scale_a=g.scale_a.t(),
        scale_b=g.scale_b.t(),
        out_dtype=torch.bfloat16,
    )


WAYS: dict[str, list[tuple[str, Call]]] = {
    "tensor": [("torch._scaled_mm", _tensorwise)],
    "row": [("torch._scaled_mm", _rowwise)],
    "block": [
        ("torch.nn.functional.scaled_mm", _blockwise),
        ("torch._scaled_mm", _blockwise_inferred),
    ],
}


@functools.cache
def way(scaling: str) -> tuple[str, Call | None]:
    """(name, call) of the first way that is right on a small problem, or (the
    reasons none is, None)."""
    import torch

    probe = scaled_gemm(scaling, 256, 384, 512)  # K / 128 = 4: no scale padding
    reasons = []
    for name, call in WAYS[scaling]:
        try:
            out = call(probe)
            torch.cuda.synchronize()
        except Exception as e:  # an old torch refuses in many ways
            first = (str(e).strip().splitlines() or [""])[0][:120]
            reasons.append(f"{name}: {type(e).__name__}: {first}")
            continue
        err = rel_err(out, probe.reference)
        if err < 1e-2:
            return name, call
        reasons.append(f"{name}: wrong, relative error {err:.1e}")
    return f"torch {torch.__version__}: " + "; ".join(reasons), None


def scaled_mm(g: ScaledGemm, scaling: str) -> Any:
    """C (bf16) by cuBLAS; Unsupported where this torch has no way."""
    name, call = way(scaling)
    if call is None:
        raise Unsupported(name)
    return call(g)


def describe() -> str:
    """Which way each scaling takes here, for the run's log."""
    return ", ".join(
        f"{s}: {name if call else 'unsupported (' + name + ')'}"
        for s in WAYS
        for name, call in [way(s)]
    )
