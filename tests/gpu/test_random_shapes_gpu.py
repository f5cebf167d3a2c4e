"""Shapes and layouts nobody chose: each case draws its extents (log-uniform
from 1 to a few thousand), its kernel and the layout of each operand (a
contiguous array, or a view into wider rows, possibly starting off the 16-byte
grid) from its seed, runs through `compile()`'s dispatcher and is checked
against float64. Every array a view lives in is filled with NaN first: the
product must not read past an input's columns, and the output's frame must
stay NaN outside the view (a kernel writing past its last column corrupts the
caller's neighbouring data silently). A failing case prints its seed and draws. A second set draws the options a
caller may give too: each case runs right or is refused by name."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from xdsl.utils.exceptions import DiagnosticException

import tawa_xdsl
from tawa_xdsl.kernel import KernelArgumentError
from tawa_xdsl.runtime.kernel import ResourceError

from ..conftest import EXAMPLES
from .conftest import rel_err

CASES_PER_KIND = 24


@dataclass
class Draw:
    """One case's random choices, recorded for the failure message."""

    rng: random.Random
    log: list[str] = field(default_factory=list)

    def extent(self, name: str, lo: int, hi: int) -> int:
        value = round(math.exp(self.rng.uniform(math.log(lo), math.log(hi))))
        self.log.append(f"{name}={value}")
        return value

    def choice(self, name: str, options: list[Any]) -> Any:
        value = self.rng.choice(options)
        self.log.append(f"{name}={value}")
        return value


def framed(torch, draw: Draw, name: str, shape: tuple[int, ...], dtype):
    """A NaN-filled array of `shape`, contiguous or a view into rows `extra`
    elements wider starting `offset` elements in; and the frame it lies in."""
    layout = draw.choice(f"{name}.layout", ["contiguous", "contiguous", "view"])
    extra, offset = 0, 0
    if layout == "view":
        extra = draw.choice(f"{name}.extra", [1, 3, 8, 16, 64])
        offset = draw.choice(f"{name}.offset", [0, 0, 1, 8])
    cols = shape[-1]
    frame = torch.full(
        (*shape[:-1], cols + extra + offset), float("nan"), device="cuda", dtype=dtype
    )
    return frame[..., offset : offset + cols], frame


def filled(torch, draw: Draw, name: str, values):
    view, _ = framed(torch, draw, name, tuple(values.shape), values.dtype)
    view.copy_(values)
    return view


def outside_untouched(view, frame) -> bool:
    """Whether every element of `frame` outside `view` is still NaN."""
    written = ~frame.isnan()
    start = (view.data_ptr() - frame.data_ptr()) // view.element_size()
    written[..., start : start + view.shape[-1]] = False
    return not bool(written.any())


def gelu(x):
    return 0.5 * x * (1 + (0.7978845608 * (x + 0.044715 * x**3)).tanh())


def gemm_case(torch, draw: Draw, options: dict[str, Any]):
    """A plain GEMM in either B layout, bf16 or f16."""
    kernel = draw.choice("kernel", ["gemm_nt", "gemm_nn", "gemm_nt_f16", "gemm_nn_f16"])
    dtype = torch.float16 if kernel.endswith("f16") else torch.bfloat16
    m, n, k = (
        draw.extent(d, 1, hi) for d, hi in (("M", 6000), ("N", 6000), ("K", 9000))
    )
    a = filled(torch, draw, "A", torch.randn(m, k, device="cuda").to(dtype))
    b_nk = torch.randn(n, k, device="cuda").to(dtype)
    b = filled(torch, draw, "B", b_nk if "_nt" in kernel else b_nk.t().contiguous())
    c, frame = framed(torch, draw, "C", (m, n), dtype)
    tawa_xdsl.compile(EXAMPLES / "gemm.mlir", kernel, **options)(a, b, c)
    return c, frame, a.double() @ b_nk.double().t(), 1e-2


def epilogue_case(torch, draw: Draw, options: dict[str, Any]):
    """A GEMM with a fused epilogue: scale, bias, activation, residual."""
    kernel = draw.choice(
        "kernel", ["gemm_scale_bias_relu", "gemm_bias_gelu", "gemm_residual_gelu"]
    )
    m, n, k = (
        draw.extent(d, 1, hi) for d, hi in (("M", 5000), ("N", 5000), ("K", 8000))
    )
    bf16 = torch.bfloat16
    a = filled(torch, draw, "A", torch.randn(m, k, device="cuda").to(bf16))
    b = filled(torch, draw, "B", torch.randn(n, k, device="cuda").to(bf16))
    bias = torch.randn(n, device="cuda").to(bf16)
    c, frame = framed(torch, draw, "C", (m, n), bf16)
    alpha = round(draw.rng.uniform(0.1, 2.0), 3)
    acc = a.double() @ b.double().t()
    compiled = tawa_xdsl.compile(EXAMPLES / "gemm_epilogue.mlir", kernel, **options)
    if kernel == "gemm_scale_bias_relu":
        compiled(a, b, bias, c, alpha)
        ref = (alpha * acc + bias.double()).relu()
    elif kernel == "gemm_bias_gelu":
        compiled(a, b, bias, c)
        ref = gelu(acc + bias.double())
    else:
        r = filled(torch, draw, "R", (4 * torch.randn(m, n, device="cuda")).to(bf16))
        compiled(a, b, bias, r, c, alpha)
        ref = gelu(alpha * acc + bias.double()) + r.double()
    return c, frame, ref, 1e-2


def fp8_gemm_case(torch, draw: Draw, options: dict[str, Any]):
    """The per-tensor-scaled FP8 GEMM (K a multiple of 16: 8-bit rows)."""
    m, n = draw.extent("M", 1, 6000), draw.extent("N", 1, 6000)
    k = 16 * draw.extent("K/16", 1, 500)
    fp8 = torch.float8_e4m3fn
    a = torch.randn(m, k, device="cuda").to(fp8)
    b = torch.randn(n, k, device="cuda").to(fp8)
    scale_a, scale_b = (round(draw.rng.uniform(0.5, 2.0), 3) for _ in range(2))
    c, frame = framed(torch, draw, "C", (m, n), torch.bfloat16)
    compiled = tawa_xdsl.compile(
        EXAMPLES / "gemm_fp8.mlir", "gemm_fp8_tensorwise", **options
    )
    compiled(a, b, c, scale_a, scale_b)
    return c, frame, (a.double() @ b.double().t()) * scale_a * scale_b, 1e-2


def attention_reference(torch, q, k, v, scale: float, causal: bool, seq_q: int):
    """softmax(q k^T * scale) v in float64; causal: query row r (position
    r % seq_q) sees keys 0 .. r % seq_q."""
    s = (q.double() @ k.double().transpose(-1, -2)) * scale
    if causal:
        rows = torch.arange(s.shape[-2], device="cuda") % seq_q
        keys = torch.arange(s.shape[-1], device="cuda")
        s = s.masked_fill(rows[:, None] < keys[None, :], float("-inf"))
    return s.softmax(-1) @ v.double()


def attention_case(torch, draw: Draw, options: dict[str, Any]):
    """Attention of any head dim, causal or not, bf16/f16, SQ != SK, with Q, K
    and V possibly views into wider rows (a packed projection's columns)."""
    d = draw.choice("D", [64, 128, 256])
    causal = draw.choice("causal", [False, True])
    dtype = torch.float16 if d < 256 and draw.choice("f16", [False, True]) else None
    dtype = dtype or torch.bfloat16
    bh, sq = draw.extent("BH", 1, 12), draw.extent("SQ", 1, 4000)
    sk = sq if causal else draw.extent("SK", 1, 4000)
    q, k, v = (
        filled(torch, draw, name, torch.randn(bh, s, d, device="cuda").to(dtype))
        for name, s in (("Q", sq), ("K", sk), ("V", sk))
    )
    o, frame = framed(torch, draw, "O", (bh, sq, d), dtype)
    file = {torch.float16: "attention_f16.mlir"}.get(dtype, "attention.mlir")
    file = "attention_d256.mlir" if d == 256 else file
    kernel = f"attention{'_causal' if causal else ''}_d{d}"
    kernel += "_f16" if dtype == torch.float16 else ""
    scale = 1 / math.sqrt(d)
    tawa_xdsl.compile(EXAMPLES / file, kernel, **options)(q, k, v, o, scale)
    return o, frame, attention_reference(torch, q, k, v, scale, causal, sq), 1e-2


def gqa_case(torch, draw: Draw, options: dict[str, Any]):
    """Grouped-query attention, groups 1-8 (7 too), the query folded per kv head."""
    d = draw.choice("D", [64, 128])
    causal = draw.choice("causal", [False, True])
    b, kv_heads = draw.extent("B", 1, 3), draw.extent("HKV", 1, 4)
    group = draw.choice("group", [1, 2, 3, 4, 7, 8])
    sq = draw.extent("SQ", 1, 3000)
    sk = sq if causal else draw.extent("SK", 1, 3000)
    bf16 = torch.bfloat16
    q = torch.randn(b * kv_heads * group, sq, d, device="cuda").to(bf16)
    k, v = (torch.randn(b * kv_heads, sk, d, device="cuda").to(bf16) for _ in "kv")
    o = torch.full_like(q, float("nan"))
    kernel = f"attention_gqa{'_causal' if causal else ''}_d{d}"
    scale = 1 / math.sqrt(d)

    def fold(x):
        return x.view(b * kv_heads, group * sq, d)

    args = (fold(q), k, v, fold(o), scale) + ((sq,) if causal else ())
    tawa_xdsl.compile(EXAMPLES / "attention_gqa.mlir", kernel, **options)(*args)
    k_all, v_all = (x.repeat_interleave(group, 0) for x in (k, v))
    return o, o, attention_reference(torch, q, k_all, v_all, scale, causal, sq), 1e-2


def fp8_attention_case(torch, draw: Draw, options: dict[str, Any]):
    """FP8 attention (V passed transposed, SK a multiple of 16) with descales,
    against float64 on the dequantized inputs."""
    d = draw.choice("D", [64, 128, 256])
    causal = draw.choice("causal", [False, True])
    bh, sk = draw.extent("BH", 1, 12), 16 * draw.extent("SK/16", 1, 250)
    sq = min(draw.extent("SQ", 1, 4000), sk) if causal else draw.extent("SQ", 1, 4000)
    fp8 = torch.float8_e4m3fn
    q, k, v = (torch.randn(bh, s, d, device="cuda").to(fp8) for s in (sq, sk, sk))
    descales = [round(draw.rng.uniform(0.5, 2.0), 3) for _ in range(3)]
    o, frame = framed(torch, draw, "O", (bh, sq, d), torch.bfloat16)
    kernel = f"attention{'_causal' if causal else ''}_d{d}_fp8"
    scale = 1 / math.sqrt(d)
    compiled = tawa_xdsl.compile(EXAMPLES / "attention_fp8.mlir", kernel, **options)
    compiled(q, k, v.transpose(1, 2).contiguous(), o, scale, *descales)
    q64, k64, v64 = (x.double() * s for x, s in zip((q, k, v), descales, strict=True))
    # P is rounded to e4m3 for the second product (3 mantissa bits: up to 6%
    # per probability), and O, a weighted sum of random V, keeps that relative
    # error rather than averaging it away: 2.3-3.6% was measured over these
    # draws with and without options alike, so 5e-2 (a wrong mask or scale
    # is off by far more)
    ref = attention_reference(torch, q64, k64, v64, scale, causal, sq)
    return o, frame, ref, 5e-2


KINDS = {
    "gemm": gemm_case,
    "epilogue": epilogue_case,
    "fp8_gemm": fp8_gemm_case,
    "attention": attention_case,
    "gqa": gqa_case,
    "fp8_attention": fp8_attention_case,
}


OPTION_MENU: dict[str, list[Any]] = {
    "num_stages": [1, 2, 3, 4, 6],
    "mma_depth": [1, 2],
    "block_m": [64, 128],
    "block_n": [64, 128, 192, 256],
    "block_k": [32, 64, 128],
    "persistent": [True, False],
    "group_m": [1, 4, 8],
    "tma_store": [True, False],
    "ping_pong": [True, False],
    "cluster": [1, 2],
    "reverse_x": [True, False],
    "stream_k": [True, False],
    "split_k": [1, 2, 3, 5],
    "num_consumers": [1, 2],
    "dynamic_tiles": [True, False],
    "longest_first": [True, False],
    "two_stage": [True, False],
    "outer_stages": [1, 2, 3],
}
"""The `compile()` options a caller may give, with values of each kind."""


def drawn_options(draw: Draw) -> dict[str, Any]:
    names = draw.rng.sample(sorted(OPTION_MENU), draw.rng.randint(1, 4))
    return {n: draw.choice(n, OPTION_MENU[n]) for n in names}


def check_case(torch, draw: Draw, kind: str, options: dict[str, Any]) -> None:
    out, frame, ref, tolerance = KINDS[kind](torch, draw, options)
    torch.cuda.synchronize()
    drawn = " ".join(draw.log)
    assert rel_err(out, ref) < tolerance, drawn
    assert outside_untouched(out, frame), f"wrote outside the output view: {drawn}"


@pytest.mark.parametrize("seed", range(CASES_PER_KIND))
@pytest.mark.parametrize("kind", list(KINDS))
def test_random_shapes_and_layouts_compute_the_reference(torch, kind, seed) -> None:
    torch.manual_seed(seed)
    check_case(torch, Draw(random.Random(f"{kind}-{seed}")), kind, {})


@pytest.mark.parametrize("seed", range(CASES_PER_KIND // 2))
@pytest.mark.parametrize("kind", list(KINDS))
def test_random_options_compute_the_reference_or_are_refused_by_name(
    torch, kind, seed
) -> None:
    """One to four options a caller may give, drawn at random, on a random
    case: the kernel computes the reference, or the call is refused with a
    diagnostic located in the kernel's file or naming an option given (a
    combination the pipeline does not build, shared memory or registers
    that do not fit) — never an internal error or a wrong answer."""
    draw = Draw(random.Random(f"options-{kind}-{seed}"))
    torch.manual_seed(seed)
    options = drawn_options(draw)
    try:
        check_case(torch, draw, kind, options)
    except (DiagnosticException, KernelArgumentError, ResourceError) as refused:
        message = str(refused)
        assert "internal error" not in message.lower(), " ".join(draw.log)
        assert ".mlir:" in message or any(name in message for name in options), (
            f"{message} ({' '.join(draw.log)})"
        )
