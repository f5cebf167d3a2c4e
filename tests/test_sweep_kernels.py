"""Kernels an outside user writes (`tests/kernels/*_sweep.mlir`, from the
second sweep `*_outside.mlir`, from the third `*_outside3.mlir`): GEMMs with two accumulators, vector scales,
mixed output types, folded batches, K loops over tile counts and scalar
offsets, a loaded starting accumulator, A scaled in registers, two outputs,
64 x 64 tiles, the output read as an input (alpha A B^T + beta C), f16 inputs
with a tanh-GELU, a main and a masked remainder K loop, an scf.if in the K
loop; sliding-window, biased, soft-capped, cross (SQ != SK, a key-padding
length), ALiBi (tile.sitofp) and [B, H, S, D] attention; row kernels with no
dot, 2-D elementwise tiles, every grid axis; RMSNorm, LayerNorm, row ranges
(reduce min and max), a two-pass softmax storing in its second loop, loaded
tiles a loop (for, while) carries and updates or a branch yields, a K loop
starting from a loaded accumulator, a B shared by every batch, K steps of
128 and 32, 192 x 96 tiles, fused and sequential MLPs (two dots), math in the
epilogue, two outputs of different dtypes, head dim 192; from the fourth
(`*_outside4.mlir`): a GEMM storing its epilogue transposed, row and column
scales on 64 x 192 tiles, a row softmax epilogue, three outputs on 192 x 64
tiles, a 4-D batched GEMM unfolding its program ids with divsi / remsi, one
tile stored twice, the user's own grid-stride tile loop, a branch on the
program id in the epilogue; attention returning its log-sum-exp, a loaded
key-padding mask, a band without causality; cross-entropy, an i32 / f32
select chain, 256 x 32 row tiles; from the fifth (`*_outside5.mlir`): an
epilogue of a per-row bias, a residual and a scalar into f16 on 64 x 256
tiles, a batch loop around the K loop, 64 x 32 and 256 x 64 tiles, the
running product stored in the K loop, tiles loaded twice, a residual added
after the transpose; LayerNorm's mean and rstd as outputs, a constant tile
stored, a load never used, i32 bit operations, 1-D tiles, num_programs in
the math, one tile stored twice over, overlapping loads, i1 / i64 / f16 /
bf16 scalars, an f16 vector output, a scale picked by tile.extract;
attention at head dim 32 and over 128-key blocks; from the sixth
(`*_outside6.mlir`): a column and a row reduction of one GEMM accumulator, an
FP8 GEMM with a residual and a tile.cmpf clamp, f16 and i32 (tile.fptosi)
outputs of one accumulator, an accumulating GEMM with a column maximum, a
tile.cmpf-masked column sum with an i32 count, an i32 argmax per column; from
the seventh (`*_outside7.mlir`): multi-query attention (one K/V head per
batch, picked by arith.divui of the program id), causal, at head dim 128 on
64-row blocks, returning its log-sum-exp; f16 soft-capped sliding-window
attention; attention at head dim 48 (96-byte rows); a LayerNorm epilogue and a row top-1 (value and i32 index) of a
one-tile-wide GEMM; from the ninth (`*_outside9.mlir`): an e5m2 x e4m3 GEMM
into f16, one accumulator clamped by arith.maximumf / minimumf into an f16
tanh and quantized into a saturating e4m3 output, K tiles walked last to
first on 64 x 128 tiles with K under two tiles; an affine LayerNorm of f16
rows into bf16 on 16-row tiles, a softmax of [B, S, N] rows walked by a loop
stepping by num_programs with arith.divsi / remsi; ALiBi attention at head
dim 32 with each head's slope loaded from a table (tile.extract), a distance
|i - j| from arith.maxsi, not causal.
Each computes its float64 reference in the interpreter, and, lowered through
the Hopper pipeline to the thread level, what the interpreter computes (a
couple of units in the last place; integers exactly), on extents that are not
multiples of the tiles and with few rows; its PTX assembles without a ptxas
remark."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.api import parse_kernel
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dtypes import bfloat16, float8_e4m3fn, float8_e5m2
from tawa_xdsl.kernel import find_kernel
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.lowering.ptx_target import kernel_ptx

from .conftest import rotation, sweep
from .thread_level import assert_close, program_grid, to_thread_level

KERNELS = Path(__file__).parent / "kernels"
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)


@dataclass(frozen=True)
class Run:
    """A kernel of `tests/kernels/<file>`: its arguments (the outputs given as
    their shape and dtype), grid and float64 reference of each output."""

    file: str
    args: tuple[Any, ...]  # (shape, dtype) per array, outputs too; scalars as is
    outputs: tuple[int, ...]
    grid: tuple[int, ...]
    reference: Callable[..., list[np.ndarray]]
    tolerance: float = 0.02  # of the largest reference value (bf16 inputs)
    read: tuple[int, ...] = ()  # outputs the kernel reads first: random too
    given_grid: bool = False  # the stores do not give the grid: calls pass grid=
    whole: bool = False  # whole-number inputs: exact sums, so float-to-int agrees

    def arrays(self, seed: int) -> list[Any]:
        rng = np.random.default_rng(seed)
        made = []
        for i, arg in enumerate(self.args):
            if not isinstance(arg, tuple):
                made.append(arg)
            elif i in self.outputs and i not in self.read:
                made.append(poisoned(np.empty(*arg)))
            else:
                x = rng.standard_normal(arg[0])
                made.append((np.round(4 * x) if self.whole else 0.5 * x).astype(arg[1]))
        return made


def poisoned(a: np.ndarray) -> np.ndarray:
    """An output array of `a`'s shape and dtype that shows what nobody wrote:
    NaN, or for integers the most negative value."""
    if np.issubdtype(a.dtype, np.integer):
        return np.full_like(a, np.iinfo(a.dtype).min)
    return np.full_like(a, np.nan)


def _silu(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.exp(-x))


def _attention(q, k, v, scale, mask=None, bias=None, cap=None) -> np.ndarray:
    s = q @ k.transpose(0, 2, 1) * scale
    if cap is not None:  # logit soft-capping
        s = cap * np.tanh(s / cap)
    if bias is not None:
        s = s + bias
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def _window(sq: int, sk: int, w: int) -> np.ndarray:
    i, j = np.arange(sq)[:, None], np.arange(sk)[None, :]
    return (j <= i) & (j > i - w)


def _band(sq: int, sk: int, w: int) -> np.ndarray:
    i, j = np.arange(sq)[:, None], np.arange(sk)[None, :]
    return np.abs(i - j) < w


def _lse(s: np.ndarray) -> np.ndarray:
    """log sum_j exp(s_ij) over the last axis."""
    top = s.max(-1, keepdims=True)
    return (top + np.log(np.exp(s - top).sum(-1, keepdims=True)))[..., 0]


def _select_chain(x: np.ndarray) -> np.ndarray:
    """x where col % 3 == 0, 2 x where col % 3 == 1, else row - col."""
    i, j = np.indices(x.shape)
    return np.where(j % 3 == 0, x, np.where(j % 3 == 1, 2 * x, i - j))


def _int_bits(shape: tuple[int, ...]) -> np.ndarray:
    """max((((7 row) xor col) and 15) << 1 >> 1, 3) of each element."""
    i, j = np.indices(shape)
    return np.maximum(((7 * i) ^ j) & 15, 3).astype(np.float64)


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def _alibi(bh: int, heads: int, sq: int, sk: int) -> np.ndarray:
    """ALiBi's bias: -slope_h |i - j|, slope_h = 2^(-8 (h + 1) / heads)."""
    slope = 2.0 ** (-8.0 * (np.arange(bh) % heads + 1) / heads)
    distance = np.abs(np.arange(sq)[:, None] - np.arange(sk)[None, :])
    return -slope[:, None, None] * distance


def _mqa_causal(q, k, v, scale, heads: int) -> list[np.ndarray]:
    """Causal attention of query head bh on K/V head bh // heads, and the
    log-sum-exp of each query row's scaled logits."""
    k, v = np.repeat(k, heads, 0), np.repeat(v, heads, 0)
    causal = _window(q.shape[1], k.shape[1], k.shape[1])
    s = np.where(causal, scale * q @ k.transpose(0, 2, 1), -np.inf)
    return [_attention(q, k, v, scale, causal), _lse(s)]


def _row_tiles(x: np.ndarray, rows: int) -> np.ndarray:
    """x's tiles of `rows` rows, zeros past its last row: [tiles, rows, ...]."""
    x = np.concatenate([x, np.zeros((-len(x) % rows, *x.shape[1:]))])
    return x.reshape(-1, rows, *x.shape[1:])


def _first_max_rows(x: np.ndarray, rows: int) -> np.ndarray:
    """idx[p, n]: the first row (of x) of the largest x[m, n] in row tile p."""
    return np.stack(
        [
            t.argmax(0) + p * rows
            for p, t in enumerate(np.split(x, range(rows, len(x), rows)))
        ]
    )


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _layernorm(x: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(1, keepdims=True) + eps)


def _rrc(acc, rs, rb, cb) -> list[np.ndarray]:
    """rs acc, and max(tanh z, min(2^z, 2)) of z = rs acc + rb (rows) + cb (columns)."""
    scaled = rs[:, None] * acc
    z = scaled + rb[:, None] + cb
    return [scaled, np.maximum(np.tanh(z), np.minimum(np.exp2(z), 2))]


def _amax(x: np.ndarray) -> np.ndarray:
    return np.abs(x).max(1)


def _power(x: np.ndarray, w: np.ndarray, n: int) -> np.ndarray:
    """x_{i+1} = bf16(x_i w^T), n times (each step rounded as the kernel rounds)."""
    for _ in range(n):
        x = (x @ w.T).astype(bfloat16).astype(np.float64)
    return x


def _alibi_table(q, k, v, o, slopes, scale) -> list[np.ndarray]:
    """Attention biased by -slopes[bh, 0] |i - j| (ALiBi, not causal)."""
    distance = np.abs(np.arange(q.shape[1])[:, None] - np.arange(k.shape[1]))
    return [_attention(q, k, v, scale, bias=-slopes[:, 0, None, None] * distance)]


def _clamp_two(a, b, y, q, lo, hi, s) -> list[np.ndarray]:
    """tanh(min(max(A B^T, lo), hi)), and s A B^T saturated to e4m3's range."""
    acc = a @ b.T
    return [np.tanh(np.clip(acc, lo, hi)), np.clip(s * acc, -448, 448)]


def _layernorm_affine(x, g, b, y, eps) -> list[np.ndarray]:
    return [g * _layernorm(x, eps) + b]


def _math_epilogue(x: np.ndarray) -> np.ndarray:
    return np.log(np.abs(x) + 1) + np.sqrt(np.abs(x) + 1) - np.exp2(-np.abs(x))


BF, FP8, E5M2, I32 = bfloat16, float8_e4m3fn, float8_e5m2, np.dtype(np.int32)
M, N, K = 72, 136, 200
KEYMASK = (np.arange(2 * 100).reshape(2, 100) % 7 != 3).astype(np.float32)
"""A key-padding mask of 1s (keep) and 0s (drop), every seventh key dropped."""
TARGETS = (np.arange(100) * 37 % 150).astype(np.float32)
"""Cross-entropy targets: class indices below 150, as whole f32 values."""
HALVE = Run(
    "rows_outside3.mlir",
    (((100, 130), F32), ((100, 130), F32), 3),
    (1,),
    (2, 3),
    lambda x, y, n: [x * 0.5**n],
    0.0,
)
"""x halved n times in a loop (@halve_loop: scf.for, @halve_while: scf.while)."""

RUNS = {
    "gemm_swiglu": Run(
        "gemm_sweep.mlir",
        (((M, K), BF), ((N, K), BF), ((N, K), BF), ((M, N), BF)),
        (3,),
        (2, 3),
        lambda a, g, u, c: [_silu(a @ g.T) * (a @ u.T)],
    ),
    "gemm_rowscale_colbias": Run(
        "gemm_sweep.mlir",
        (
            ((130, 72), BF),
            ((200, 72), BF),
            ((130,), F32),
            ((200,), F32),
            ((130, 200), F32),
        ),
        (4,),
        (2, 2),
        lambda a, b, s, bias, c: [s[:, None] * (a @ b.T) + bias],
    ),
    "gemm_nn_f16out": Run(
        "gemm_sweep.mlir",
        (((70, 136), BF), ((136, 200), BF), ((70, 200), F32), ((70, 200), F16)),
        (3,),
        (2, 2),
        lambda a, b, r, c: [a @ b + r],
    ),
    "bgemm_stride": Run(
        "gemm_sweep.mlir",
        (((3 * 80, 72), BF), ((3, 70, 72), BF), ((3, 80, 70), BF), 80),
        (2,),
        (2, 2, 3),
        lambda a, b, c, s: [
            np.stack([a[i * s : (i + 1) * s] @ b[i].T for i in range(3)])
        ],
    ),
    "gemm_ktiles": Run(
        "gemm_sweep.mlir",
        (((70, 320), BF), ((72, 320), BF), ((70, 72), F32), 1, 4),
        (2,),
        (2, 2),
        lambda a, b, c, t0, t1: [a[:, 64:256] @ b[:, 64:256].T],
    ),
    "gemm_kstep": Run(
        "gemm_sweep.mlir",
        (((70, 330), BF), ((72, 330), BF), ((70, 72), F32), 1, 2),
        (2,),
        (2, 2),
        lambda a, b, c, k0, st: [
            sum(
                a[:, k : k + 64] @ b[:, k : k + 64].T
                for k in range(64 * k0, a.shape[1], 64 * st)
            )
        ],
    ),
    "gemm_accum": Run(
        "gemm_sweep.mlir",
        (((70, 136), BF), ((72, 136), BF), ((70, 72), F32), ((70, 72), BF), 0.5),
        (3,),
        (2, 2),
        lambda a, b, c0, c, beta: [a @ b.T + beta * c0],
    ),
    "gemm_scaled_a": Run(
        "gemm_sweep.mlir",
        (((70, 136), BF), ((72, 136), BF), ((70, 72), F32), 0.375),
        (2,),
        (2, 2),
        lambda a, b, c, s: [(a * s) @ b.T],
    ),
    "gemm_two_outputs": Run(
        "gemm_sweep.mlir",
        (((100, 72), BF), ((120, 72), BF), ((100, 120), BF), ((100,), F32)),
        (2, 3),
        (2,),
        lambda a, b, c, rs: [a @ b.T, (a @ b.T).sum(1)],
    ),
    "gemm_64x64": Run(
        "gemm_sweep.mlir",
        (((5, 24), BF), ((130, 24), BF), ((5, 130), BF)),  # few rows, short K
        (2,),
        (1, 3),
        lambda a, b, c: [a @ b.T],
    ),
    "attention_window": Run(
        "attention_sweep.mlir",
        (((2, 200, 64), BF),) * 4 + (0.125, 70),
        (3,),
        (4, 2),
        lambda q, k, v, o, sc, w: [_attention(q, k, v, sc, _window(200, 200, int(w)))],
    ),
    "attention_bias": Run(
        "attention_sweep.mlir",
        (
            ((2, 100, 64), BF),
            ((2, 140, 64), BF),
            ((2, 140, 64), BF),
            ((2, 100, 140), F32),
            ((2, 100, 64), BF),
            0.125,
        ),
        (4,),
        (2, 2),
        lambda q, k, v, b, o, sc: [_attention(q, k, v, sc, bias=b)],
    ),
    "row_softmax": Run(
        "rows_sweep.mlir",
        (((100, 72), F32), ((100, 72), F32)),
        (1,),
        (2,),
        lambda x, y: [_softmax(x)],
        1e-6,
    ),
    "row_sum_loop": Run(
        "rows_sweep.mlir",
        (((100, 200), BF), ((100,), F32)),
        (1,),
        (2,),
        lambda x, o: [x.sum(1)],
        1e-6,
    ),
    "gemm_alpha_beta": Run(
        "gemm_outside.mlir",
        (((M, K), BF), ((N, K), BF), ((M, N), F32), 1.5, -0.25),
        (2,),
        (2, 2),
        lambda a, b, c, alpha, beta: [alpha * (a @ b.T) + beta * c],
        read=(2,),
    ),
    "gemm_gelu_f16": Run(
        "gemm_outside.mlir",
        (((M, K), F16), ((N, K), F16), ((M, N), F32)),
        (2,),
        (2, 2),
        lambda a, b, c: [_gelu_tanh(a @ b.T)],
    ),
    "gemm_klimit": Run(
        "gemm_outside.mlir",
        (((M, K), BF), ((N, K), BF), ((M, N), F32), 150),
        (2,),
        (2, 2),
        lambda a, b, c, n: [a[:, :n] @ b[:, :n].T],
    ),
    "gemm_skip": Run(
        "gemm_outside.mlir",
        (((M, 330), BF), ((N, 330), BF), ((M, N), BF), 64, 192),
        (2,),
        (2, 2),
        lambda a, b, c, lo, hi: [a[:, :lo] @ b[:, :lo].T + a[:, hi:] @ b[:, hi:].T],
    ),
    "attention_softcap": Run(
        "attention_outside.mlir",
        (((2, 100, 64), BF),) * 4 + (0.5, 5.0),
        (3,),
        (2, 2),
        lambda q, k, v, o, sc, cap: [_attention(q, k, v, sc, cap=cap)],
    ),
    "attention_alibi": Run(
        "attention_outside.mlir",
        (((6, 100, 64), BF),) * 4 + (0.125, 3),
        (3,),
        (2, 6),
        lambda q, k, v, o, sc, h: [
            _attention(q, k, v, sc, bias=_alibi(6, h, 100, 100))
        ],
    ),
    "attention_cross": Run(
        "attention_outside.mlir",
        (
            ((2, 70, 64), BF),
            ((2, 150, 64), BF),
            ((2, 150, 64), BF),
            ((2, 70, 64), BF),
            0.125,
            101,
        ),
        (3,),
        (2, 2),
        lambda q, k, v, o, sc, kv: [_attention(q, k[:, :kv], v[:, :kv], sc)],
    ),
    "attention_bhsd": Run(
        "attention_outside.mlir",
        (((2, 3, 70, 64), BF),) * 4 + (0.125,),
        (3,),
        (2, 3, 2),
        lambda q, k, v, o, sc: [
            _attention(*(x.reshape(6, 70, 64) for x in (q, k, v)), sc).reshape(q.shape)
        ],
    ),
    "silu_mul": Run(
        "rows_outside.mlir",
        (((M, 100), BF), ((M, 100), BF), ((M, 100), BF)),
        (2,),
        (2, 2),
        lambda x, g, y: [_silu(x) * g],
    ),
    "grid3_axpy": Run(
        "rows_outside.mlir",
        (((3, M, N), F32), ((3, M, N), F32), ((3, M, N), F32)),
        (2,),
        (2, 2, 3),
        lambda a, x, y: [a * np.arange(1, 4)[:, None, None] + x],
        1e-6,
    ),
    "rmsnorm": Run(
        "rows_outside3.mlir",
        (((100, 128), BF), ((128,), F32), ((100, 128), BF), 1e-5),
        (2,),
        (2,),
        lambda x, w, y, eps: [x / np.sqrt((x * x).mean(1, keepdims=True) + eps) * w],
    ),
    "layernorm": Run(
        "rows_outside3.mlir",
        (((100, 100), F32), ((100,), F32), ((100,), F32), ((100, 100), F32), 1e-5),
        (3,),
        (2,),
        lambda x, g, b, y, eps: [_layernorm(x, eps) * g + b],
        1e-5,
    ),
    "row_range": Run(
        "rows_outside3.mlir",
        (((100, 200), F32), ((100,), F32)),
        (1,),
        (2,),
        lambda x, o: [x.max(1) - x.min(1)],
        1e-6,
    ),
    "softmax_2pass": Run(
        "rows_outside3.mlir",
        (((100, 200), F32), ((100, 200), F32)),
        (1,),
        (2,),
        lambda x, y: [_softmax(x)],
        1e-5,
    ),
    "halve_loop": HALVE,
    "halve_while": HALVE,  # the same loop as scf.while
    "scale_unless": Run(
        "rows_outside3.mlir",
        (((100, 130), F32), ((100, 130), F32), 0),
        (1,),
        (2, 3),
        lambda x, y, flag: [x if flag else 2 * x],
        0.0,
    ),
    "store_carried": Run(
        "rows_outside3.mlir",
        (((100, 130), F32), ((100, 130), F32), ((100, 130), F32), 3),
        (1, 2),
        (2, 3),
        lambda x, y, z, n: [x, n * x],
        1e-6,
    ),
    "pick_loaded": Run(
        "rows_outside3.mlir",
        (((100, 130), F32), ((100, 130), F32), ((100, 130), F32), 0),
        (2,),
        (2, 3),
        lambda a, b, y, flag: [a if flag else b],
        0.0,
    ),
    "pick_bf16": Run(
        "rows_outside3.mlir",
        (((100, 130), BF), ((100, 130), BF), ((100, 130), F32), 0),
        (2,),
        (2, 3),
        lambda a, b, y, flag: [b if flag else a],
        0.0,
    ),
    "store_in_if": Run(
        "rows_outside3.mlir",
        (((100, 130), F32), ((100, 130), F32), 1),
        (1,),
        (2, 3),
        lambda x, y, flag: [x],
        0.0,
    ),
    "repeat_rows": Run(
        "rows_outside3.mlir",
        (((100, 130), F32), ((3, 100, 130), F32)),
        (1,),
        (2, 3),
        lambda x, y: [np.stack([x] * 3)],
        0.0,
    ),
    "gemm_acc_init": Run(
        "gemm_outside3.mlir",
        (((M, K), BF), ((N, K), BF), ((M, N), F32), ((M, N), F32)),
        (3,),
        (1, 2),
        lambda a, b, c, d: [c + a @ b.T],
    ),
    "bgemm_shared_b": Run(
        "gemm_outside3.mlir",
        (((2, 130, 72), BF), ((140, 72), BF), ((2, 130, 140), BF)),
        (2,),
        (2, 2, 2),
        lambda a, b, c: [a @ b.T],
    ),
    "gemm_k128": Run(
        "gemm_outside3.mlir",
        (((130, K), BF), ((N, K), BF), ((130, N), F32)),
        (2,),
        (2, 2),
        lambda a, b, c: [a @ b.T],
    ),
    "gemm_k32_nn": Run(
        "gemm_outside3.mlir",
        (((130, 72), BF), ((72, N), BF), ((130, N), BF)),
        (2,),
        (2, 2),
        lambda a, b, c: [a @ b],
    ),
    "gemm_192x96": Run(
        "gemm_outside3.mlir",
        (((K, 72), BF), ((100, 72), BF), ((K, 100), BF)),
        (2,),
        (2, 2),
        lambda a, b, c: [a @ b.T],
    ),
    "mlp_fused": Run(
        "gemm_outside3.mlir",
        (((K, 128), BF), ((K, 128), BF), ((K, 128), BF), ((K, 128), BF)),
        (3,),
        (2,),
        lambda x, w1, w2, y: [np.maximum(x @ w1.T, 0) @ w2],
    ),
    "mlp_seq": Run(
        "gemm_outside3.mlir",
        (((K, K), BF), ((128, K), BF), ((128, N), BF), ((K, N), BF)),
        (3,),
        (2, 2),
        lambda a, w1, w2, y: [np.maximum(a @ w1.T, 0) @ w2],
    ),
    "gemm_math": Run(
        "gemm_outside3.mlir",
        (((100, N), BF), ((140, N), BF), ((140,), F32), ((100, 140), F32)),
        (3,),
        (2, 2),
        lambda a, b, bias, c: [_math_epilogue(a @ b.T) + np.floor(4 * bias)],
        1e-5,
    ),
    "gemm_two_dtypes": Run(
        "gemm_outside3.mlir",
        (((K, N), BF), ((140, N), BF), ((K, 140), F16), ((K, 140), F32), 0.5),
        (2, 3),
        (2, 2),
        lambda a, b, c16, c32, s: [a @ b.T, s * (a @ b.T)],
    ),
    "power_iter": Run(
        "gemm_outside3.mlir",
        (((100, 64), BF), ((64, 64), BF), ((100, 64), BF), 3),
        (2,),
        (2,),
        lambda x, w, y, n: [_power(x, w, n)],
    ),
    "attention_d192": Run(
        "attention_outside3.mlir",
        (((2, 150, 192), BF),) * 4 + (0.1,),
        (3,),
        (2, 2),
        lambda q, k, v, o, sc: [_attention(q, k, v, sc)],
    ),
    "gemm_trans_out": Run(
        "gemm_outside4.mlir",
        (((200, 72), BF), ((100, 72), BF), ((100,), F32), ((100, 200), BF)),
        (3,),
        (2, 2),
        lambda a, b, bias, ct: [np.maximum(a @ b.T + bias, 0).T],
    ),
    "gemm_rc_scale": Run(
        "gemm_outside4.mlir",
        (
            ((100, 72), BF),
            ((200, 72), BF),
            ((100,), F32),
            ((200,), F32),
            ((100, 200), F32),
        ),
        (4,),
        (2, 2),
        lambda a, b, sa, sb, c: [sa[:, None] * sb * (a @ b.T)],
    ),
    "gemm_softmax": Run(
        "gemm_outside4.mlir",
        (((130, K), BF), ((100, K), BF), ((130, 100), BF), 0.3),
        (2,),
        (2,),
        lambda a, b, p, s: [_softmax(s * (a @ b.T))],
    ),
    "gemm_three_out": Run(
        "gemm_outside4.mlir",
        (((K, 72), BF), ((50, 72), BF), ((K, 50), BF), ((K, 50), F16), ((K,), F32)),
        (2, 3, 4),
        (2,),
        lambda a, b, c, r, mx: [a @ b.T, np.maximum(a @ b.T, 0), (a @ b.T).max(1)],
    ),
    "bgemm_4d": Run(
        "gemm_outside4.mlir",
        (((2, 3, 130, 72), BF), ((2, 3, 140, 72), BF), ((2, 3, 130, 140), BF), 3),
        (2,),
        (4, 6),
        lambda a, b, c, h: [a @ b.transpose(0, 1, 3, 2)],
        given_grid=True,
    ),
    "gemm_store_twice": Run(
        "gemm_outside4.mlir",
        (((M, K), BF), ((N, K), BF), ((M, N), BF), ((M, N), BF)),
        (2, 3),
        (1, 2),
        lambda a, b, c, d: [a @ b.T, a @ b.T],
    ),
    "gemm_grid_stride": Run(
        "gemm_outside4.mlir",
        (((300, 72), BF), ((200, 72), BF), ((300, 200), BF)),
        (2,),
        (4,),  # 6 tiles over 4 programs: two walk two tiles each
        lambda a, b, c: [a @ b.T],
        given_grid=True,
    ),
    "gemm_bias_first_row": Run(
        "gemm_outside4.mlir",
        (((200, 72), BF), ((200, 72), BF), ((200,), F32), ((200, 200), F32)),
        (3,),
        (2, 2),
        lambda a, b, bias, c: [
            a @ b.T + np.where(np.arange(200) < 128, 1, 0)[:, None] * bias
        ],
    ),
    "attention_lse": Run(
        "attention_outside4.mlir",
        (((2, 100, 64), BF),) * 4 + (((2, 100), F32), 0.125),
        (3, 4),
        (2, 2),
        lambda q, k, v, o, lse, sc: [
            _attention(q, k, v, sc),
            _lse(q @ k.transpose(0, 2, 1) * sc),
        ],
    ),
    "attention_keymask": Run(
        "attention_outside4.mlir",
        (((2, 100, 64), BF),) * 3 + (KEYMASK, ((2, 100, 64), BF), 0.125),
        (4,),
        (2, 2),
        lambda q, k, v, km, o, sc: [_attention(q, k, v, sc, (km != 0)[:, None, :])],
    ),
    "attention_band": Run(
        "attention_outside4.mlir",
        (((2, 200, 64), BF),) * 4 + (0.125, 50),
        (3,),
        (4, 2),
        lambda q, k, v, o, sc, w: [_attention(q, k, v, sc, _band(200, 200, int(w)))],
    ),
    "xent": Run(
        "rows_outside4.mlir",
        (((100, 150), F32), TARGETS, ((100,), F32)),
        (2,),
        (2,),
        lambda x, t, loss: [_lse(x) - x[np.arange(100), t.astype(int)]],
        1e-5,
    ),
    "select_chain": Run(
        "rows_outside4.mlir",
        (((100, 130), F32), ((100, 130), F32)),
        (1,),
        (2, 3),
        lambda x, y: [_select_chain(x)],
        0.0,
    ),
    "rows_256x32": Run(
        "rows_outside4.mlir",
        (((300, 70), F32), ((300, 70), F32), ((3, 300), F32)),
        (1, 2),
        (2, 3),
        lambda x, y, s: [
            x + np.arange(70)[None, :] // 32,
            np.stack([x[:, j : j + 32].sum(1) for j in (0, 32, 64)]),
        ],
        1e-6,
    ),
    "gemm_epi_mix": Run(
        "gemm_outside5.mlir",
        (
            ((M, K), BF),
            ((300, K), BF),
            ((M,), F32),
            ((M, 300), BF),
            ((M, 300), F16),
            0.75,
        ),
        (4,),
        (2, 2),
        lambda a, b, bias, r, c, alpha: [alpha * (a @ b.T) + bias[:, None] + r],
    ),
    "gemm_batch_sum": Run(
        "gemm_outside5.mlir",
        (((3, M, K), BF), ((3, N, K), BF), ((M, N), F32)),
        (2,),
        (1, 2),
        lambda a, b, c: [(a @ b.transpose(0, 2, 1)).sum(0)],
    ),
    "gemm_64x32": Run(
        "gemm_outside5.mlir",
        (((M, K), BF), ((70, K), BF), ((M, 70), F32)),
        (2,),
        (2, 3),
        lambda a, b, c: [a @ b.T],
    ),
    "gemm_256x64": Run(
        "gemm_outside5.mlir",
        (((300, K), BF), ((N, K), BF), ((300, N), BF)),
        (2,),
        (2, 3),
        lambda a, b, c: [a @ b.T],
    ),
    "gemm_prefix": Run(
        "gemm_outside5.mlir",
        (((70, K), BF), ((100, K), BF), ((4, 70, 100), F32)),
        (2,),
        (2, 2),
        lambda a, b, p: [
            np.stack([a[:, : 64 * (j + 1)] @ b[:, : 64 * (j + 1)].T for j in range(4)])
        ],
    ),
    "gemm_load_twice": Run(
        "gemm_outside5.mlir",
        (((70, K), BF), ((100, K), BF), ((70, 100), F32)),
        (2,),
        (2, 2),
        lambda a, b, c: [2 * (a @ b.T)],
    ),
    "gemm_trans_res": Run(
        "gemm_outside5.mlir",
        (((200, 72), BF), ((100, 72), BF), ((100, 200), BF), ((100, 200), BF)),
        (3,),
        (2, 2),
        lambda a, b, r, ct: [np.maximum(a @ b.T, 0).T + r],
    ),
    "layernorm_stats": Run(
        "rows_outside5.mlir",
        (((100, 150), F32), ((100, 150), F16), ((100,), F32), ((100,), F32), 1e-5),
        (1, 2, 3),
        (2,),
        lambda x, y, mean, rstd, eps: [
            _layernorm(x, eps),
            x.mean(1),
            1 / np.sqrt(x.var(1) + eps),
        ],
        1e-3,
    ),
    "fill": Run(
        "rows_outside5.mlir",
        (((100, 130), F32),),
        (0,),
        (2, 3),
        lambda y: [np.full(y.shape, 1.5)],
        0.0,
    ),
    "unused_load": Run(
        "rows_outside5.mlir",
        (((100, 130), F32),) * 3,
        (2,),
        (2, 3),
        lambda x, z, y: [2 * x],
        0.0,
    ),
    "int_bits": Run(
        "rows_outside5.mlir",
        (((100, 130), F32),),
        (0,),
        (2, 3),
        lambda y: [_int_bits(y.shape)],
        0.0,
    ),
    "axpb_1d": Run(
        "rows_outside5.mlir",
        (((1000,), F32), ((1000,), F32)),
        (1,),
        (4,),
        lambda x, y: [2 * x + 1],
        1e-6,
    ),
    "nprog": Run(
        "rows_outside5.mlir",
        (((100, 130), F32), ((100, 130), F32)),
        (1,),
        (2, 3),
        lambda x, y: [x + 2 + 10 * 3],
        1e-6,
    ),
    "overwrite": Run(
        "rows_outside5.mlir",
        (((100, 130), F32), ((100, 130), F32)),
        (1,),
        (2, 3),
        lambda x, y: [2 * x],
        0.0,
    ),
    "overlap_sum": Run(
        "rows_outside5.mlir",
        (((100, 200), F32), ((100,), F32)),
        (1,),
        (2,),
        lambda x, o: [sum(x[:, n : n + 64].sum(1) for n in range(0, 200, 32))],
        1e-6,
    ),
    "scalars": Run(
        "rows_outside5.mlir",
        (((100, 130), F32), ((100, 130), F32), True, 7, np.float16(1.5), 0.25),
        (1,),
        (2, 3),
        lambda x, y, flag, n, h, s: [x * h + n if flag else x - s],
        1e-6,
    ),
    "rowmax_f16": Run(
        "rows_outside5.mlir",
        (((100, 130), F32), ((100,), F16)),
        (1,),
        (2,),
        lambda x, o: [np.maximum(x.max(1), 0)],
        1e-3,
    ),
    "block_scale": Run(
        "rows_outside5.mlir",
        (((100, 130), F32), ((2, 4), F32), ((100, 130), F32)),
        (2,),
        (2, 3),
        lambda x, s, y: [x * np.repeat(s[:, 0], 64)[:100, None]],
        1e-6,
    ),
    "attention_d32": Run(
        "attention_outside5.mlir",
        (((2, 100, 32), BF),) * 4 + (0.18,),
        (3,),
        (2, 2),
        lambda q, k, v, o, sc: [_attention(q, k, v, sc)],
    ),
    "attention_kv128": Run(
        "attention_outside5.mlir",
        (
            ((2, 100, 64), BF),
            ((2, 150, 64), BF),
            ((2, 150, 64), BF),
            ((2, 100, 64), F32),
            0.125,
        ),
        (3,),
        (2, 2),
        lambda q, k, v, o, sc: [_attention(q, k, v, sc)],
    ),
    "gemm_col_row": Run(
        "gemm_outside6.mlir",
        (((200, K), BF), ((N, K), BF), ((200, N), BF), ((2, N), F32), ((2, 200), F32)),
        (2, 3, 4),
        (2, 2),
        lambda a, b, c, col, row: [
            a @ b.T,
            _row_tiles(a @ b.T, 128).sum(1),
            _row_tiles(b @ a.T, 128).max(1),
        ],
    ),
    "fp8_res_clamp": Run(
        "gemm_outside6.mlir",
        (
            ((200, 256), FP8),
            ((N, 256), FP8),
            ((200, N), BF),
            ((200, N), BF),
            0.5,
            0.25,
            0.6,
        ),
        (3,),
        (2, 2),
        lambda a, b, r, c, sa, sb, lim: [np.clip(sa * sb * (a @ b.T) + r, -lim, lim)],
    ),
    "gemm_f16_i32": Run(
        "gemm_outside6.mlir",
        (((200, K), BF), ((N, K), BF), ((200, N), F16), ((200, N), I32)),
        (2, 3),
        (2, 3),
        lambda a, b, c, q: [a @ b.T, np.trunc(a @ b.T / 4)],
        0.0,
        whole=True,
    ),
    "gemm_acc_colmax": Run(
        "gemm_outside6.mlir",
        (((200, K), BF), ((N, K), BF), ((200, N), F32), ((2, N), F32)),
        (2, 3),
        (2, 2),
        lambda a, b, c, cmax: [a @ b.T + c, _row_tiles(a @ b.T + c, 128).max(1)],
        1e-5,
        read=(2,),
    ),
    "masked_colsum": Run(
        "rows_outside6.mlir",
        (((200, 150), F32), ((2, 150), F32), ((2, 150), I32), 0.1),
        (1, 2),
        (3, 2),
        lambda x, s, cnt, thr: [
            _row_tiles(np.where(x > thr, x, 0), 128).sum(1),
            _row_tiles(x > thr, 128).sum(1),
        ],
        1e-6,
    ),
    "argmax_columns": Run(
        "rows_outside6.mlir",
        (((200, 150), I32), ((2, 150), I32)),
        (1,),
        (3, 2),
        lambda x, idx: [_first_max_rows(x, 128)],
        0.0,
        whole=True,
    ),
    "attention_causal_d192": Run(
        "attention_outside3.mlir",
        (((2, 150, 192), BF),) * 4 + (0.1,),
        (3,),
        (2, 2),
        lambda q, k, v, o, sc: [_attention(q, k, v, sc, _window(150, 150, 150))],
    ),
    "attention_mqa_causal": Run(
        "attention_outside7.mlir",
        (
            ((3, 70, 128), BF),
            ((1, 70, 128), BF),
            ((1, 70, 128), BF),
            ((3, 70, 128), BF),
            ((3, 70), F32),
            0.1,
            3,
        ),
        (3, 4),
        (2, 3),
        lambda q, k, v, o, lse, sc, h: _mqa_causal(q, k, v, sc, h),
    ),
    "attention_softcap_window": Run(
        "attention_outside7.mlir",
        (((2, 150, 64), F16),) * 4 + (0.5, 5.0, 70),
        (3,),
        (3, 2),
        lambda q, k, v, o, sc, cap, w: [
            _attention(q, k, v, sc, _window(150, 150, int(w)), cap=cap)
        ],
    ),
    "attention_d48": Run(
        "attention_outside7.mlir",
        (((1, 100, 48), BF),) * 4 + (0.2,),
        (3,),
        (2, 1),
        lambda q, k, v, o, sc: [_attention(q, k, v, sc)],
    ),
    "gemm_layernorm": Run(
        "gemm_outside7.mlir",
        (
            ((130, 200), BF),
            ((100, 200), BF),
            ((100,), F32),
            ((100,), F32),
            ((130, 100), BF),
            1e-5,
        ),
        (4,),
        (3,),
        lambda a, b, w, bias, y, eps: [_layernorm(a @ b.T, eps) * w + bias],
    ),
    "gemm_top1": Run(
        "gemm_outside7.mlir",
        (((200, 136), BF), ((100, 136), BF), ((200,), F32), ((200,), I32)),
        (2, 3),
        (2,),
        lambda a, b, top, idx: [(a @ b.T).max(1), (a @ b.T).argmax(1)],
        0.0,
        whole=True,
    ),
    "gemm_gated_a": Run(
        "gemm_outside8.mlir",
        (((M, K), BF), ((M, K), BF), ((N, K), BF), ((M, N), F32)),
        (3,),
        (1, 2),
        lambda x, g, b, c: [(x * g) @ b.T],
    ),
    "gemm_two_a": Run(
        "gemm_outside8.mlir",
        (((M, K), BF), ((M, K), BF), ((N, K), BF), ((M, N), F32)),
        (3,),
        (1, 2),
        lambda x1, x2, b, c: [x1 @ b.T + x2 @ b.T],
    ),
    "gemm_rrc": Run(
        "gemm_outside8.mlir",
        (
            ((200, K), BF),
            ((N, K), BF),
            ((200,), F32),
            ((200,), F32),
            ((N,), F32),
            ((200, N), F32),
            ((200, N), BF),
        ),
        (5, 6),
        (2, 2),
        lambda a, b, rs, rb, cb, c32, c16: _rrc(a @ b.T, rs, rb, cb),
    ),
    "gemm_kpair": Run(
        "gemm_outside8.mlir",
        (((200, 330), BF), ((N, 330), BF), ((200, N), F32), 1, 300),
        (2,),
        (4,),  # 2 row tiles x 2 column tiles, unfolded by divsi / remsi
        lambda a, b, c, k0, kend: [
            sum(
                a[:, k : k + 128] @ b[:, k : k + 128].T
                for k in range(128 * k0, kend, 128)
            )
        ],
        given_grid=True,
    ),
    "gemm_col_major_e4m3": Run(
        "gemm_outside8.mlir",
        (((200, K), BF), ((N, K), BF), ((200, N), FP8), 4.0),
        (2,),
        (4,),  # 2 row tiles x 2 column tiles, column-major
        lambda a, b, c8, s: [s * (a @ b.T)],
        0.07,  # e4m3's half step is a sixteenth of the value
        given_grid=True,
    ),
    "gemm_w8a": Run(
        "gemm_outside8.mlir",
        (((N, K), np.dtype(np.int8)), ((200, K), BF), ((N,), F32), ((N, 200), F32)),
        (3,),
        (2, 2),
        lambda w, x, ws, ct: [ws[:, None] * (w @ x.T)],
        whole=True,  # int8 weights of a few units
    ),
    "rowquant_fp8": Run(
        "rows_outside8.mlir",
        (((100, 112), BF), ((100, 112), FP8), ((100,), F32)),
        (1, 2),
        (2,),
        lambda x, q, s: [x / (np.abs(x).max(1, keepdims=True) / 448), _amax(x) / 448],
        0.04,  # e4m3's half step near 448 is 16
    ),
    "lse_tiles": Run(
        "rows_outside8.mlir",
        (((100, 200), F32), ((100,), F32), 1, 4, 2),
        (1,),
        (2,),
        lambda x, o, t0, t1, ts: [
            _lse(
                np.concatenate([x[:, 64 * t : 64 * t + 64] for t in range(1, 4, 2)], 1)
            )
        ],
        1e-6,
    ),
    "attention_d16": Run(
        "attention_outside8.mlir",
        (
            ((2, 100, 16), BF),
            ((2, 150, 16), BF),
            ((2, 150, 16), BF),
            ((2, 100, 16), BF),
            ((2, 150), F32),
            0.3,
        ),
        (3,),
        (2, 2),
        lambda q, k, v, o, kb, sc: [_attention(q, k, v, sc, bias=kb[:, None, :])],
    ),
    "gemm_e5m2_e4m3_f16": Run(
        "gemm_outside9.mlir",
        (((7, 144), E5M2), ((129, 144), FP8), ((7, 129), F16), 0.75),
        (2,),
        (1, 2),  # 7 rows, a 1-column edge tile, a partial second K tile
        lambda a, b, c, s: [s * (a @ b.T)],
    ),
    "gemm_clamp_two": Run(
        "gemm_outside9.mlir",
        (
            ((129, 40), BF),
            ((144, 40), BF),
            ((129, 144), F16),
            ((129, 144), FP8),
            -1.5,
            2.0,
            200.0,
        ),
        (2, 3),
        (2, 2),  # K under one tile; most of s A B^T past e4m3's 448
        _clamp_two,
        0.07,  # e4m3's half step is a sixteenth of the value
    ),
    "gemm_rev_k": Run(
        "gemm_outside9.mlir",
        (((65, 200), BF), ((257, 200), BF), ((257,), F32), ((65, 257), F32)),
        (3,),
        (2, 3),  # one-row and one-column edge tiles
        lambda a, b, bias, c: [a @ b.T + bias],
    ),
    "layernorm_affine": Run(
        "rows_outside9.mlir",
        (((63, 255), F16), ((255,), F32), ((255,), F32), ((63, 255), BF), 1e-5),
        (3,),
        (4,),
        _layernorm_affine,
    ),
    "softmax_strided": Run(
        "rows_outside9.mlir",
        (((3, 65, 127), F32), ((3, 65, 127), F16)),
        (1,),
        (5,),  # 6 row tiles over 5 programs: the first walks two
        lambda x, y: [_softmax(x)],
        given_grid=True,
    ),
    "attention_alibi_d32": Run(
        "attention_outside9.mlir",
        (
            ((2, 65, 32), BF),
            ((2, 257, 32), BF),
            ((2, 257, 32), BF),
            ((2, 65, 32), BF),
            ((2, 4), F32),
            0.25,
        ),
        (3,),
        (2, 2),
        _alibi_table,
    ),
}


def _module(kernel: str):
    path = KERNELS / RUNS[kernel].file
    return parse_kernel(path.read_text(), kernel, str(path))


def _interpreted(kernel: str, seed: int) -> tuple[list[Any], list[Any]]:
    """The arguments of `seed`, and the same after the interpreter ran."""
    run = RUNS[kernel]
    args = run.arrays(seed)
    done = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    tawa_xdsl.interpret(_module(kernel), kernel, *done, grid=run.grid)
    return args, done


@pytest.mark.parametrize("kernel", sorted(RUNS))
def test_the_interpreter_computes_the_reference(kernel: str) -> None:
    run = RUNS[kernel]
    args, done = _interpreted(kernel, seed=3)
    wide = [a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args]
    for out, expected in zip(run.outputs, run.reference(*wide), strict=True):
        got = done[out].astype(np.float64)
        assert not np.isnan(got).any()
        assert np.abs(got - expected).max() <= run.tolerance * np.abs(expected).max()


CONFIGS = {
    "tuned": "",
    "stages1": "tuned=false num-stages=1 mma-depth=1",
    "persistent": "persistent=true num-stages=2",
    "dynamic": "persistent=true dynamic-tiles=true",
    "register-stores": "tma-store=false",
    "two-stage": "num-stages=3 mma-depth=2 two-stage=true",
    "cluster": "cluster=2",
}
NO_CLUSTER = {  # nothing shared
    "attention_mqa_causal",
    "attention_softcap_window",
    "masked_colsum",
    "argmax_columns",
    "layernorm_stats",
    "fill",
    "unused_load",
    "int_bits",
    "axpb_1d",
    "nprog",
    "overwrite",
    "overlap_sum",
    "scalars",
    "rowmax_f16",
    "block_scale",
    "attention_band",
    "bgemm_4d",
    "gemm_grid_stride",
    "rows_256x32",
    "select_chain",
    "attention_window",
    "attention_causal_d192",
    "row_range",
    "softmax_2pass",
    "halve_loop",
    "halve_while",
    "scale_unless",
    "store_carried",
    "pick_loaded",
    "pick_bf16",
    "store_in_if",
    "repeat_rows",
    "row_softmax",
    "row_sum_loop",
    "silu_mul",
    "grid3_axpy",
    "xent",  # i32 targets read per row: its loads all follow program_id(x)
    "gemm_kpair",  # tiles unfolded from one program id: no load provably shared
    "gemm_col_major_e4m3",
    "rowquant_fp8",
    "lse_tiles",
    "softmax_strided",
}
TMA_STORED = {"gemm_alpha_beta", "gemm_acc_colmax"}
"""Kernels that store a tensor they load: only through TMA, with the loads'
tensor map (not from registers, nor at a dynamic tile's coordinates, which
TMA cannot prove aligned; tests/filecheck/lowering/refusals.mlir)."""
FP8_STORED = {"gemm_col_major_e4m3", "rowquant_fp8", "gemm_clamp_two"}
"""Kernels with an 8-bit output: stored through TMA only (not from registers,
nor at a dynamic tile's coordinates)."""
NO_TWO_STAGE = {"gemm_acc_colmax"}
"""A 128 x 128 f32 tile loaded and stored through TMA: with the two-stage
overlap's slots no shared memory is left to stage the store (refused at it)."""
CASES = [
    (k, c)
    for k in sorted(RUNS)
    for c in CONFIGS
    if not (c == "cluster" and k in NO_CLUSTER)
    and not (c == "two-stage" and k in NO_TWO_STAGE)
    and not (c in ("register-stores", "dynamic") and k in TMA_STORED | FP8_STORED)
    and not (c in ("persistent", "dynamic") and RUNS[k].given_grid)
]
"""(A kernel whose grid the caller gives cannot be made persistent: the pass
counts its tiles from the stores, and says so at the store.)"""
LATE = {
    k
    for k, run in RUNS.items()
    if run.file.endswith(
        (
            "_outside5.mlir",
            "_outside6.mlir",
            "_outside7.mlir",
            "_outside8.mlir",
            "_outside9.mlir",
        )
    )
}
"""The fifth to ninth sweeps' kernels: each runs its tuned
configuration (its other configurations only under `--exhaustive`; CI's time
is spent)."""
SPARED = {
    k
    for k, run in RUNS.items()
    if run.file.endswith(("_outside6.mlir", "_outside7.mlir"))
}
FAST = {(k, "tuned") for k in sorted(set(RUNS) - SPARED)} | {
    ("gemm_col_row", "tuned"),  # a column and a row reduction of one accumulator
    ("argmax_columns", "tuned"),  # i32 column reductions, cmpi down the rows
}
"""Every kernel's tuned configuration, but of the sixth sweep's only two and
none of the seventh's (CI's time is spent; the others under `--exhaustive`,
and all on the GPU)."""
ROTATED = rotation(
    sorted(set(RUNS) - LATE)[1::2], [c for c in CONFIGS if c != "tuned"], 1
)
"""CI's slow tier: every other kernel of the earlier sweeps (those CI does not
assemble with ptxas) under one of the other configurations in turn, every
configuration reached by several kernels (the whole grid runs under
`--exhaustive`)."""
ASSEMBLED = {
    *sorted(set(RUNS) - LATE)[::2],
    "gemm_64x32",  # wgmma n = 32
    "axpb_1d",  # 1-D tiles of 256
    "attention_d32",  # 64-byte rows in both dots
    "gemm_e5m2_e4m3_f16",  # .e5m2.e4m3 wgmmas into an f16 output
}
"""The kernels CI assembles (all under `--exhaustive`)."""


@pytest.mark.parametrize(
    ("kernel", "config"),
    sweep(CASES, FAST, lambda c: f"{c[0]}-{c[1]}", slow=ROTATED),
)
def test_the_thread_level_computes_what_the_interpreter_does(
    kernel: str, config: str
) -> None:
    run = RUNS[kernel]
    args, expected = _interpreted(kernel, seed=5)
    module = to_thread_level(
        _module(kernel), f"tawa-hopper-pipeline{{{CONFIGS[config]}}}"
    )
    got = [
        poisoned(a)
        if i in run.outputs and i not in run.read
        else a.copy()
        if i in run.read
        else a
        for i, a in enumerate(args)
    ]
    grid = program_grid(module, kernel, run.grid)
    if grid == run.grid and config == "cluster":  # whole clusters, as launched
        grid = (-(-grid[0] // 2) * 2, *grid[1:])
    # exact .approx math: a few ulps is tighter than ex2 / tanh.approx err
    tawa_xdsl.simulate(module, kernel, *got, grid=grid, seed=1, exact_math=True)
    for out in run.outputs:  # f32 sums in another order: a few f32 ulps
        assert_close(
            got[out], expected[out], bits=20 if got[out].dtype == F32 else None
        )


@pytest.mark.parametrize(
    ("kernel",),
    sweep(
        [(k,) for k in sorted(RUNS)],
        set(),
        lambda c: c[0],
        slow={(k,) for k in ASSEMBLED},
    ),
)
def test_the_ptx_assembles(kernel: str) -> None:
    lowered = tawa_xdsl.apply(_module(kernel), "tawa-hopper-pipeline")
    result = assemble(kernel_ptx(find_kernel(lowered, kernel)))
    assert result.ok, result.log[-3000:]
    assert result.remarks == [] and not result.spills, result.log[-3000:]


def test_ping_pong_given_to_a_kernel_without_a_loop_of_dots() -> None:
    """ping_pong takes turns on the MMAs of a loop: given to a kernel with no
    tile.dot in an scf.for it is refused at the kernel, saying so (it was
    refused for its tile rows, advising 128-row tiles, which could not help,
    or, with 128-row tiles, only after lowering)."""
    path = KERNELS / "rows_outside4.mlir"
    with pytest.raises(OpDiagnostic) as refused:
        tawa_xdsl.compile(path, "xent", ping_pong=True).explain(M=4096, V=32000)
    message = str(refused.value)
    lines = path.read_text().splitlines()  # the kernel's line, header aside
    line = next(i for i, s in enumerate(lines, 1) if s.startswith("func.func @xent("))
    assert message.startswith(f"{path}:{line}:1: error:")
    assert "no scf.for of @xent holds a tile.dot: drop ping_pong" in message
    assert "128-row" not in message


def test_ping_pong_with_a_block_m_the_kernel_does_not_name() -> None:
    """block_m=128 given with ping_pong to a kernel of 64-row tiles naming no
    BM is refused for the name (tile-shape), not told to "give 128-row tiles"
    while block_m=128 was given (the ping-pong check read the tiles before
    tile-shape's refusal ran)."""
    path = KERNELS / "gemm_outside9.mlir"
    with pytest.raises(OpDiagnostic) as refused:
        tawa_xdsl.compile(
            path, "gemm_rev_k", ping_pong=True, num_consumers=2, block_m=128
        )
    message = str(refused.value)
    assert "tile-shape: @gemm_rev_k does not name BM" in message
    assert "block-m=128 given" in message
    assert "give 128-row tiles" not in message
