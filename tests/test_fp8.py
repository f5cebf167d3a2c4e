"""FP8 above the thread level (issue 17), on the CPU.

- The interpreter's casts into 8-bit floats round to nearest even and saturate
  like `cvt.rn.satfinite` (checked against values written out by hand).
- The FP8 GEMMs of examples/gemm_fp8.mlir (per-tensor, mixed e4m3/e5m2, e4m3
  output, row-wise, DeepSeek-V3 block scales) and the FP8 attention of
  examples/attention_fp8.mlir match float64 references computed from the
  dequantized FP8 inputs, on sizes that are not tile multiples; the attention
  error is reported next to the bf16 kernel's on the same inputs.
- Warp-specialized (aref simulator) and lowered to nvgpu_async (barrier
  simulator, tawa-hopper-pipeline with several options and the tuned defaults),
  every FP8 kernel computes bit for bit what the interpreter computes.
- At the thread level (as compile() lowers them) each runs lane by lane in the
  thread simulator, and ptxas assembles each with no remark and no spill
  (tests/filecheck/lowering/fp8-ptx.mlir checks the PTX).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.rewriter import InsertPoint, Rewriter

import tawa_xdsl
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import ptx
from tawa_xdsl.dtypes import bfloat16, cast, float8_e4m3fn, float8_e5m2
from tawa_xdsl.grid import decode_rules, infer_grid, recorded_grid_rule
from tawa_xdsl.interp.barrier_sim import Hazard
from tawa_xdsl.interp.reference import make_interpreter
from tawa_xdsl.kernel import cluster_size, find_kernel
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.lowering.ptx_target import kernel_ptx
from tawa_xdsl.pipelines import TawaHopperPipeline
from tawa_xdsl.transforms.persistent import PERSISTENT_ATTR
from tawa_xdsl.tuning import default_options

from .conftest import EXAMPLES, example_module, sweep
from .thread_level import assert_close, program_grid, to_thread_level

GEMM = EXAMPLES / "gemm_fp8.mlir"
ATTENTION = EXAMPLES / "attention_fp8.mlir"
BLOCK = 128  # the DeepSeek-V3 scale block
E4M3_MAX = 448.0

# ------------------------------------------------------------ saturating casts

CASTS = """
func.func @casts(%x: tensor<16xf32>, %h: tensor<16xbf16>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xbf16>) {
  %e4 = arith.truncf %x : tensor<16xf32> to tensor<16xf8E4M3FN>
  %e5 = arith.truncf %x : tensor<16xf32> to tensor<16xf8E5M2>
  %h4 = arith.truncf %h : tensor<16xbf16> to tensor<16xf8E4M3FN>
  %x4 = arith.extf %e4 : tensor<16xf8E4M3FN> to tensor<16xf32>
  %x5 = arith.extf %e5 : tensor<16xf8E5M2> to tensor<16xf32>
  %y4 = arith.extf %h4 : tensor<16xf8E4M3FN> to tensor<16xf32>
  %b5 = arith.extf %e5 : tensor<16xf8E5M2> to tensor<16xbf16>
  func.return %x4, %x5, %y4, %b5 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xbf16>
}
"""

INF, NAN = float("inf"), float("nan")
# input, e4m3 (max 448, 3 mantissa bits, subnormals from 2^-9), e5m2 (max 57344,
# 2 mantissa bits, subnormals from 2^-16); ties go to the even mantissa
CAST_TABLE = [
    (0.0, 0.0, 0.0),
    (-1.5, -1.5, -1.5),
    (17.0, 16.0, 16.0),  # tie: 16 (even) and 18; e5m2: 16 and 20
    (19.0, 20.0, 20.0),  # tie: 18 and 20 (even)
    (448.0, 448.0, 448.0),
    (464.0, 448.0, 448.0),  # e4m3: half way to a 480 it lacks: saturates
    (1.0e6, 448.0, 57344.0),  # beyond either range: saturates
    (-1.0e6, -448.0, -57344.0),
    (61440.0, 448.0, 57344.0),  # e5m2: tie of 57344 and 65536 (past its max)
    (INF, 448.0, 57344.0),  # satfinite: infinities saturate too
    (-INF, -448.0, -57344.0),
    (NAN, NAN, NAN),
    (2.0**-10, 0.0, 2.0**-10),  # e4m3: half its smallest subnormal, tie to 0
    (3 * 2.0**-11, 2.0**-9, 3 * 2.0**-11),
    (2.0**-17, 0.0, 0.0),  # e5m2: half its smallest subnormal
    (0.1, 0.1015625, 0.09375),
]


def test_casts_into_fp8_round_to_nearest_even_and_saturate() -> None:
    module = tawa_xdsl.parse(CASTS)
    interpreter, _ = make_interpreter(module)
    x = np.array([row[0] for row in CAST_TABLE], dtype=np.float32)
    e4, e5, from_bf16, e5_bf16 = interpreter.call_op("casts", (x, x.astype(bfloat16)))
    expected4 = np.array([row[1] for row in CAST_TABLE], dtype=np.float32)
    expected5 = np.array([row[2] for row in CAST_TABLE], dtype=np.float32)
    np.testing.assert_array_equal(e4, expected4)
    np.testing.assert_array_equal(e5, expected5)
    bf16_input = x.astype(bfloat16).astype(np.float32)
    np.testing.assert_array_equal(
        from_bf16[bf16_input == x], expected4[bf16_input == x]
    )
    assert from_bf16[x == 0.1][0] == 0.1015625  # bf16(0.1) rounds to the same e4m3
    np.testing.assert_array_equal(e5_bf16.astype(np.float32), expected5)  # exact


def cast_kernel(src: str, dst: str) -> str:
    """y = dst(x) of a 64 x 128 tile (arith.truncf or arith.extf)."""
    op = "arith.extf" if dst in ("bf16", "f16") else "arith.truncf"
    d = "!tile.desc<?x?x{}, box = [64, 128]>"
    return f"""
func.func @cast(%x: {d.format(src)}, %o: {d.format(dst)}) attributes {{tile.kernel}} {{
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : {d.format(src)} -> tensor<64x128x{src}>
  %y = {op} %t : tensor<64x128x{src}> to tensor<64x128x{dst}>
  tile.store %y, %o[%c0, %c0] : tensor<64x128x{dst}> -> {d.format(dst)}
  func.return
}}"""


NARROW = {"bf16": bfloat16, "f16": np.float16}
EIGHT = {"f8E4M3FN": float8_e4m3fn, "f8E5M2": float8_e5m2}


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        ("bf16", "f8E4M3FN"),
        ("f16", "f8E5M2"),
        ("f8E4M3FN", "bf16"),
        ("f8E5M2", "f16"),
        ("f8E4M3FN", "f16"),
    ],
)
def test_casts_between_16_and_8_bit_tiles_at_the_thread_level(src, dst) -> None:
    """A 16-bit tile truncated into fp8 goes through f32 (exact, then the
    saturating pair conversion: it was an internal error, the conversion
    given the packed pairs), and an fp8 tile extended to bf16 or f16 is
    packed back into pairs (its f32 values were typed as pairs: e4m3 1.0
    stored as bf16 read 0): the table's values, as the interpreter gives."""
    column = 1 if "f8E4M3FN" in (src, dst) else 2  # the table's e4m3 or e5m2
    x = np.zeros((64, 128), np.float32)
    table = np.array([row[0] for row in CAST_TABLE], np.float32)
    x[0, : len(table)], x[1, : len(table)] = table, -table
    if src in EIGHT:  # the table's results, which the format holds
        picked = np.array([row[column] for row in CAST_TABLE])
        x[0, : len(table)], x[1, : len(table)] = picked, -picked
    with np.errstate(over="ignore"):  # 1e6 is inf in f16
        x = x.astype({**NARROW, **EIGHT}[src])
    expected = np.zeros((64, 128), {**NARROW, **EIGHT}[dst])
    tawa_xdsl.interpret(tawa_xdsl.parse(cast_kernel(src, dst)), "cast", x, expected)
    if src in NARROW:  # the table's rows whose input the 16-bit type holds
        held = x[0, : len(table)].astype(np.float32) == table
        rows = np.array([row[column] for row in CAST_TABLE], np.float32)
        np.testing.assert_array_equal(
            expected[0, : len(table)].astype(np.float32)[held], rows[held]
        )
    module = to_thread_level(
        tawa_xdsl.parse(cast_kernel(src, dst)), "tawa-hopper-pipeline"
    )
    got = np.zeros_like(expected)
    tawa_xdsl.simulate(module, "cast", x, got, grid=(1,))
    np.testing.assert_array_equal(got.astype(np.float32), expected.astype(np.float32))
    lowered = tawa_xdsl.apply(tawa_xdsl.parse(cast_kernel(src, dst)), TUNED)
    assert assemble(kernel_ptx(find_kernel(lowered, "cast"))).ok


# ------------------------------------------------------------------- helpers


def quantize(x: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, float]:
    """`x` scaled into the format's range and cast (saturating), as an FP8
    producer does per tensor: (values, descale)."""
    descale = float(np.abs(x).max()) / float(ml_dtypes.finfo(dtype).max)
    return cast(x / descale, dtype), descale


def f64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def rel_error(got: np.ndarray, ref: np.ndarray) -> float:
    """Largest error over the largest reference value."""
    return float(np.abs(f64(got) - ref).max() / np.abs(ref).max())


def rel_l2(got: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(f64(got) - ref) / np.linalg.norm(ref))


def launch_grid(kernel: func.FuncOp, args: list[Any]) -> tuple[int, ...]:
    """The grid a launch of `kernel` (at any level) needs for these arguments:
    one program per output tile; a persistent kernel gets half as many programs
    as tiles, so each walks several."""
    if PERSISTENT_ATTR in kernel.attributes:
        x, y, z = infer_grid(decode_rules(kernel.attributes[PERSISTENT_ATTR]), args)
        return (max(1, x * y * z // 2),)
    x, y, z = infer_grid(recorded_grid_rule(kernel), args)
    size = cluster_size(kernel)
    return -(-x // size) * size, y, z


@dataclass(frozen=True)
class Case:
    """One kernel's arguments (the output at `out`), and the float64 result its
    dequantized inputs give."""

    kernel: str
    args: list[Any]
    out: int
    reference: np.ndarray

    def fresh(self) -> list[Any]:
        """The arguments with a new output array full of NaN."""
        args = list(self.args)
        args[self.out] = np.full_like(self.args[self.out], np.nan)
        return args


def run(runner: Callable[..., None], module: Any, case: Case, **kw: Any) -> np.ndarray:
    args = case.fresh()
    kernel = find_kernel(module, case.kernel)
    runner(module, case.kernel, *args, grid=launch_grid(kernel, args), **kw)
    return args[case.out]


def interpreted(path: Path, case: Case) -> np.ndarray:
    return run(tawa_xdsl.interpret, example_module(path.name, case.kernel), case)


def assert_bitwise_equal(got: np.ndarray, expected: np.ndarray) -> None:
    view = np.uint8 if got.dtype.itemsize == 1 else np.uint16
    assert np.array_equal(got.view(view), expected.view(view))


# ---------------------------------------------------------------------- GEMM

SHAPES = [(200, 300, 330), (128, 256, 640)]  # edge tiles in M, N and K; whole tiles


def gemm_case(kernel: str, shape: tuple[int, int, int], seed: int) -> Case:
    """FP8 operands (B in e5m2 for the mixed kernel) whose casts saturated about
    1% outliers at the format's largest value, with per-tensor, row-wise or
    block scales."""
    m, n, k = shape
    rng = np.random.default_rng(seed)

    def operand(rows: int, dtype: np.dtype = float8_e4m3fn) -> np.ndarray:
        x = rng.standard_normal((rows, k)) * 64
        x[rng.random(x.shape) < 0.01] *= 1e4  # outliers, beyond either range
        return cast(x, dtype)

    a = operand(m)
    b = operand(n, float8_e5m2 if kernel == "gemm_fp8_e4m3_e5m2" else float8_e4m3fn)
    product = f64(a) @ f64(b).T
    out = np.empty((m, n), dtype=bfloat16)
    if kernel in ("gemm_fp8_tensorwise", "gemm_fp8_e4m3_e5m2"):
        sa, sb = 0.5, 0.003
        return Case(kernel, [a, b, out, sa, sb], 2, product * sa * sb)
    if kernel == "gemm_fp8_e4m3_out":
        # scale_c chosen so that about a tenth of the outputs saturate at 448
        sa, sb = 0.5, 0.25
        sc = float(np.quantile(np.abs(product), 0.9)) * sa * sb / E4M3_MAX
        out = np.empty((m, n), dtype=float8_e4m3fn)
        return Case(kernel, [a, b, out, sa, sb, sc], 2, product * (sa * sb / sc))
    if kernel == "gemm_fp8_rowwise":
        sa = rng.uniform(0.5, 2, m).astype(np.float32)
        sb = rng.uniform(0.5, 2, n).astype(np.float32)
        return Case(kernel, [a, b, sa, sb, out], 4, product * np.outer(sa, sb))
    assert kernel.startswith("gemm_fp8_blockwise")
    kb, nb = -(-k // BLOCK), -(-n // BLOCK)
    scale_a = rng.uniform(0.5, 2, (m, kb)).astype(np.float32)  # per 1 x 128
    scale_b = rng.uniform(0.5, 2, (nb, kb)).astype(np.float32)  # per 128 x 128
    a_real = f64(a) * np.repeat(scale_a, BLOCK, axis=1)[:, :k]
    b_real = f64(b) * np.kron(scale_b, np.ones((BLOCK, BLOCK)))[:n, :k]
    # scale_a goes in transposed, K/128 x M (see the example's header)
    args = [a, b, np.ascontiguousarray(scale_a.T), scale_b, out]
    return Case(kernel, args, 4, a_real @ b_real.T)


GEMM_KERNELS = [
    "gemm_fp8_tensorwise",
    "gemm_fp8_e4m3_e5m2",
    "gemm_fp8_e4m3_out",
    "gemm_fp8_rowwise",
    "gemm_fp8_blockwise",
    "gemm_fp8_blockwise_overlap",
]


def assert_e4m3_output(
    got: np.ndarray, reference: np.ndarray, slack: float = 0.0
) -> None:
    """Within half an e4m3 step of the reference (relative 2^-4, absolute 2^-10
    among subnormals), and exactly +-448 wherever the reference is past e4m3's
    range: the f32 accumulation may round a value near a midpoint either way.
    `slack` (a fraction of 448) widens both for a sum that is itself inexact:
    Hopper's FP8 tensor cores accumulate with fewer bits than f32, an error
    that scales with the terms, not with a result that cancels near zero."""
    got = f64(got)
    saturated = np.abs(reference) > E4M3_MAX * (1 + slack)
    assert saturated.mean() > 0.05, "the case should saturate some outputs"
    np.testing.assert_array_equal(
        got[saturated], np.sign(reference[saturated]) * E4M3_MAX
    )
    inside = np.abs(reference) <= E4M3_MAX
    tolerance = np.maximum(
        np.abs(reference[inside]) * 2.0**-4 * 1.001 + slack * E4M3_MAX, 2.0**-10
    )
    assert np.all(np.abs(got[inside] - reference[inside]) <= tolerance)


GEMM_CASES = [
    (k, shape, seed) for k in GEMM_KERNELS for shape in SHAPES for seed in (0, 1)
]


@pytest.mark.parametrize(
    ("kernel", "shape", "seed"),
    sweep(
        GEMM_CASES,
        [c for c in GEMM_CASES if c[1:] == (SHAPES[0], 0)],
        lambda c: f"{c[0]}-{'x'.join(map(str, c[1]))}-{c[2]}",
    ),
)
def test_fp8_gemm_matches_the_dequantized_reference(kernel, shape, seed) -> None:
    case = gemm_case(kernel, shape, seed)
    got = interpreted(GEMM, case)
    if kernel == "gemm_fp8_e4m3_out":
        assert_e4m3_output(got, case.reference)
    else:
        assert rel_error(got, case.reference) < 1e-2  # bf16 output: about 2^-9


@pytest.mark.parametrize("kernel", ["gemm_fp8_blockwise", "gemm_fp8_blockwise_overlap"])
@pytest.mark.parametrize("block", [1, 2])
def test_block_scales_are_applied_per_k_block(kernel, block) -> None:
    """One K block's scales scale only its own partial product: scaling block j
    of A's scales by 2 changes C by exactly A_j B_j^T (dequantized) once more
    (the overlapping kernel: the second and the first block of an iteration)."""
    case = gemm_case(kernel, (128, 128, 512), 3)
    base = f64(interpreted(GEMM, case))
    doubled = list(case.args)
    scale_a_t = case.args[2].copy()
    scale_a_t[block] *= 2  # K block `block`, every row
    doubled[2] = scale_a_t
    twice = f64(interpreted(GEMM, Case(case.kernel, doubled, case.out, case.reference)))
    a, b, scale_b = f64(case.args[0]), f64(case.args[1]), case.args[3]
    cols = slice(block * BLOCK, (block + 1) * BLOCK)
    part = (a[:, cols] * case.args[2][block][:, None]) @ (
        b[:, cols] * scale_b[0, block]
    ).T
    np.testing.assert_allclose(
        twice - base, part, rtol=2e-2, atol=2e-2 * np.abs(part).max()
    )


# --------------------------------------------------------------- attention

ATTENTION_KERNELS = [
    f"attention{causal}_d{d}_fp8"
    for d in (64, 96, 128, 256)
    for causal in ("", "_causal")
]
BF16_ATTENTION = {
    64: "attention.mlir",
    96: "attention_d80_d96.mlir",
    128: "attention.mlir",
    256: "attention_d256.mlir",
}


def attention_reference(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, sm_scale: float, causal: bool
) -> np.ndarray:
    s = np.einsum("bqd,bkd->bqk", q, k) * sm_scale
    if causal:
        sq, sk = s.shape[1:]
        s = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bqk,bkd->bqd", p / p.sum(-1, keepdims=True), v)


def attention_case(
    kernel: str, seed: int, bh: int = 1, sq: int = 150, sk: int = 300
) -> tuple[Case, tuple[np.ndarray, ...]]:
    """Q, K, V quantized per tensor to e4m3 (V passed transposed, D x SK); the
    reference and the dequantized inputs the bf16 kernel gets."""
    d = int(kernel.split("_d")[1].split("_")[0])
    rng = np.random.default_rng(seed)
    (q, dq), (k, dk), (v, dv) = (
        quantize(rng.standard_normal((bh, s, d)), float8_e4m3fn) for s in (sq, sk, sk)
    )
    real = tuple(f64(x) * s for x, s in ((q, dq), (k, dk), (v, dv)))
    sm_scale = d**-0.5
    reference = attention_reference(*real, sm_scale, "causal" in kernel)
    v_t = np.ascontiguousarray(v.transpose(0, 2, 1))
    out = np.empty((bh, sq, d), dtype=bfloat16)
    case = Case(kernel, [q, k, v_t, out, sm_scale, dq, dk, dv], 3, reference)
    return case, real


@pytest.mark.parametrize("kernel", ATTENTION_KERNELS)
def test_fp8_attention_matches_the_dequantized_reference(kernel) -> None:
    """e4m3's 3 mantissa bits on P cost about 10x the bf16 kernel's error on the
    same (dequantized) inputs: measured relative L2 error 2.4e-2 to 2.9e-2 for
    FP8 against 3.0e-3 to 4.2e-3 for bf16 (largest error over largest value:
    2.8e-2 to 4.5e-2 against 2.9e-3 to 7.5e-3)."""
    case, real = attention_case(kernel, seed=0)
    got = interpreted(ATTENTION, case)
    bf16_path = EXAMPLES / BF16_ATTENTION[case.args[0].shape[-1]]
    bf16_case = Case(
        kernel.removesuffix("_fp8"),
        [*(x.astype(bfloat16) for x in real), case.args[3], case.args[4]],
        3,
        case.reference,
    )
    bf16 = interpreted(bf16_path, bf16_case)
    assert rel_l2(bf16, case.reference) < 6e-3
    assert rel_l2(got, case.reference) < 3.5e-2
    assert rel_error(got, case.reference) < 6e-2


# ------------------------------------------------ warp-specialized and lowered


def hopper(**options: Any) -> str:
    """The Hopper pipeline with these options and the static defaults."""
    return str(TawaHopperPipeline(tuned=False, **options).pipeline_pass_spec())


TUNED = "tawa-hopper-pipeline"
"""What `tawa_xdsl.compile` runs: the tuned defaults, resolved per kernel (they
take every pass above the thread level: tile-shape, persistent or reverse-grid,
cooperative, the pipeline, two-stage for attention)."""


@functools.cache
def expected(path: Path, case_of: Callable[[str, int], Case], kernel: str, seed: int):
    """The case and what the interpreter computes for it (read-only), once per
    test process: every lowering of a kernel is compared with it."""
    case = case_of(kernel, seed)
    out = interpreted(path, case)
    out.flags.writeable = False
    return case, out


def assert_lowered_agrees(
    path: Path, case_of: Callable[[str, int], Case], kernel: str, spec: str, seeds: int
) -> None:
    case, reference = expected(path, case_of, kernel, 5)
    module = tawa_xdsl.apply(example_module(path.name, kernel), spec)
    for seed in range(seeds):
        assert_bitwise_equal(
            run(tawa_xdsl.simulate, module, case, seed=seed), reference
        )


def gemm_level_case(kernel: str, seed: int) -> Case:
    return gemm_case(kernel, SHAPES[0], seed)


def attention_level_case(kernel: str, seed: int) -> Case:
    return attention_case(kernel, seed)[0]


GEMM_SPECS = {
    "aref": "aref-partition,pipeline{num-stages=3 mma-depth=2}",
    "s2": hopper(num_stages=2, mma_depth=1),
    "persistent": hopper(num_stages=4, mma_depth=2, num_consumers=2, persistent=True),
    "pingpong-cluster": hopper(
        num_stages=3, mma_depth=1, num_consumers=2, ping_pong=True, cluster=2
    ),
    "tuned": TUNED,
}
GEMM_LEVELS = [(k, s) for k in GEMM_KERNELS for s in GEMM_SPECS]
SMALLER_RING = {
    # two K blocks a slot (66576 bytes): four stages do not fit, two do
    ("gemm_fp8_blockwise_overlap", "persistent"): hopper(
        num_stages=2, mma_depth=2, num_consumers=2, persistent=True
    ),
}


@pytest.mark.parametrize(
    ("kernel", "spec"),
    # the fast tier: each kernel as compile() lowers it, one at the aref level
    sweep(
        GEMM_LEVELS,
        [c for c in GEMM_LEVELS if c[1] == "tuned"] + [("gemm_fp8_blockwise", "aref")],
        "-".join,
    ),
)
def test_fp8_gemm_at_every_level_computes_what_the_interpreter_does(
    kernel, spec
) -> None:
    spec = SMALLER_RING.get((kernel, spec), GEMM_SPECS[spec])
    assert_lowered_agrees(GEMM, gemm_level_case, kernel, spec, seeds=2)


ATTENTION_SPECS = {
    "aref": "aref-partition,pipeline{num-stages=2 mma-depth=1 two-stage=true}",
    "plain": hopper(num_stages=2, mma_depth=1, num_consumers=2),
    "two-stage": hopper(num_stages=2, mma_depth=1, num_consumers=2, two_stage=True),
    "tuned": TUNED,
}
ATTENTION_LEVELS = [(k, s) for k in ATTENTION_KERNELS for s in ATTENTION_SPECS]


@pytest.mark.parametrize(
    ("kernel", "spec"),
    sweep(ATTENTION_LEVELS, [c for c in ATTENTION_LEVELS if c[1] == "tuned"], "-".join),
)
def test_fp8_attention_at_every_level_computes_what_the_interpreter_does(
    kernel, spec
) -> None:
    assert_lowered_agrees(
        ATTENTION, attention_level_case, kernel, ATTENTION_SPECS[spec], seeds=1
    )


# --------------------------------------------------------------- thread level


def thread_case(kernel: str, seed: int) -> Case:
    """Extents off the tiles, rows of 16-byte multiples as the runtime needs."""
    if kernel.startswith("gemm"):
        return gemm_case(kernel, (200, 304, 512), seed)
    return attention_case(kernel, seed, sk=304)[0]


THREAD_LEVEL = [
    *((k, GEMM) for k in GEMM_KERNELS),
    *((k, ATTENTION) for k in ATTENTION_KERNELS),
]
FAST_THREAD_LEVEL = {
    "gemm_fp8_blockwise",
    "gemm_fp8_blockwise_overlap",
    "attention_causal_d64_fp8",
    "attention_d96_fp8",  # 96-byte rows: three 32-byte swizzle chunks
}


@pytest.mark.parametrize(
    ("kernel", "path"),
    sweep(
        THREAD_LEVEL,
        [c for c in THREAD_LEVEL if c[0] in FAST_THREAD_LEVEL],
        lambda c: c[0],
    ),
)
def test_fp8_kernels_at_the_thread_level_compute_what_the_interpreter_does(
    kernel, path
) -> None:
    """As compile() lowers them (8-bit wgmma, the quad byte moves that turn P
    into an A operand, 64-byte swizzle at head dim 64, a block scale read out of
    its TMA box, saturating e4m3 stores): lane by lane in the thread simulator,
    to the units in the last place its own summation order allows (an e4m3
    output to one e4m3 step where the f32 sum rounds across a midpoint)."""
    case, reference = expected(path, thread_case, kernel, 5)
    module = to_thread_level(example_module(path.name, kernel), TUNED)
    got = run(tawa_xdsl.simulate, module, case)
    if got.dtype == float8_e4m3fn:
        assert_close(got, reference, ulps=1, bits=4)
    else:
        assert_close(got, reference, ulps=4 if path == ATTENTION else 2)


RESIDUAL = """
func.func @gemm_fp8_residual(%a: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.dims = ["N", "K"]},
    %r: !tile.desc<?x?xf8E5M2, box = [128, 128]> {tile.dims = ["M", "N"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c128 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tbt = tile.trans %tb : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %res_t = tile.load %r[%m0, %n0] : !tile.desc<?x?xf8E5M2, box = [128, 128]> -> tensor<128x128xf8E5M2>
  %res_f = arith.extf %res_t : tensor<128x128xf8E5M2> to tensor<128x128xf32>
  %sum = arith.addf %acc, %res_f : tensor<128x128xf32>
  %out = arith.truncf %sum : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}
"""


def test_an_odd_number_of_k_blocks_at_the_thread_level() -> None:
    """The overlapping block-scaled GEMM takes two K blocks an iteration: with
    an odd count the last iteration's second block lies wholly past K, and its
    TMA boxes (tiles and A's scales) read zeros, so it adds nothing. B's scale
    rows (5 K blocks, 20 bytes) are padded to 32 bytes, as the runtime needs."""
    kernel = "gemm_fp8_blockwise_overlap"
    case = gemm_case(kernel, (200, 304, 640), 5)
    scale_b = case.args[3]
    padded = np.zeros((scale_b.shape[0], 8), np.float32)
    padded[:, : scale_b.shape[1]] = scale_b
    args = list(case.args)
    args[3] = padded[:, : scale_b.shape[1]]
    case = Case(kernel, args, case.out, case.reference)
    reference = interpreted(GEMM, case)
    assert rel_error(reference, case.reference) < 1e-2
    module = to_thread_level(example_module(GEMM.name, kernel), TUNED)
    assert_close(run(tawa_xdsl.simulate, module, case), reference, ulps=2)


def test_an_fp8_tile_read_into_registers_and_widened() -> None:
    """A kernel none of the examples is: an e5m2 residual loaded through TMA,
    read from its swizzled slot into the accumulator layout (one b16 pair per
    load) and widened to f32 (`cvt.rn.f16x2.e5m2x2`), added to an e4m3 GEMM.
    At the thread level it computes what the interpreter does."""
    rng = np.random.default_rng(0)
    m, n, k = 200, 304, 256
    a = cast(rng.standard_normal((m, k)) * 4, float8_e4m3fn)
    b = cast(rng.standard_normal((n, k)) * 4, float8_e4m3fn)
    r = cast(rng.standard_normal((m, n)) * 100, float8_e5m2)
    expected_c = np.full((m, n), np.nan, bfloat16)
    tawa_xdsl.interpret(
        tawa_xdsl.parse(RESIDUAL), "gemm_fp8_residual", a, b, r, expected_c, grid=(2, 3)
    )
    reference = f64(a) @ f64(b).T + f64(r)
    assert rel_error(expected_c, reference) < 1e-2
    module = to_thread_level(tawa_xdsl.parse(RESIDUAL), TUNED)
    got = np.full((m, n), np.nan, bfloat16)
    grid = program_grid(module, "gemm_fp8_residual", (2, 3))
    tawa_xdsl.simulate(module, "gemm_fp8_residual", a, b, r, got, grid=grid)
    assert_close(got, expected_c)


E5M2_MAX = 57344.0


def e5m2_gemm() -> str:
    """@gemm_fp8_e4m3_out of the examples with every 8-bit type e5m2: both
    operands and the output (`e5m2_case`)."""
    kernel = find_kernel(example_module(GEMM.name), "gemm_fp8_e4m3_out")
    return str(kernel).replace("f8E4M3FN", "f8E5M2").replace("e4m3_out", "e5m2")


def e5m2_case(seed: int, shape: tuple[int, int, int] = (100, 304, 200)) -> Case:
    """By default edge tiles in M and K; a tenth of the outputs past e5m2's
    57344 (saturated), the operands saturated at 1% outliers."""
    m, n, k = shape
    rng = np.random.default_rng(seed)

    def operand(rows: int) -> np.ndarray:
        x = rng.standard_normal((rows, k)) * 4096
        x[rng.random(x.shape) < 0.01] *= 1e3
        return cast(x, float8_e5m2)

    a, b = operand(m), operand(n)
    product = f64(a) @ f64(b).T
    sa, sb = 0.5, 0.25
    sc = float(np.quantile(np.abs(product), 0.9)) * sa * sb / E5M2_MAX
    out = np.empty((m, n), dtype=float8_e5m2)
    return Case("gemm_fp8_e5m2", [a, b, out, sa, sb, sc], 2, product * (sa * sb / sc))


def assert_e5m2_output(
    got: np.ndarray, reference: np.ndarray, slack: float = 0.0
) -> None:
    """Within half an e5m2 step of the reference (relative 2^-3), exactly
    +-57344 wherever the reference is past e5m2's range; `slack` as in
    `assert_e4m3_output`, a fraction of 57344."""
    got = f64(got)
    saturated = np.abs(reference) > E5M2_MAX * (1 + slack)
    assert 0.05 < saturated.mean() < 0.2
    np.testing.assert_array_equal(
        got[saturated], np.sign(reference[saturated]) * E5M2_MAX
    )
    inside = np.abs(reference) <= E5M2_MAX
    tolerance = np.abs(reference[inside]) * 2.0**-3 * 1.001 + slack * E5M2_MAX
    assert np.all(np.abs(got[inside] - reference[inside]) <= tolerance + 2.0**-16)


def test_an_e5m2_gemm_at_every_level() -> None:
    """e5m2 operands (k32 `.e5m2.e5m2` wgmmas) and an e5m2 output (saturating
    `cvt.rn.satfinite.e5m2x2` packs, stored through TMA), which no example
    has: the interpreter within half an e5m2 step of the float64 reference;
    lowered, the barrier simulator bit for bit what the interpreter computes;
    at the thread level to one e5m2 step; ptxas assembles it."""
    case = e5m2_case(3)
    text = e5m2_gemm()
    module = tawa_xdsl.parse(text)
    reference = run(tawa_xdsl.interpret, module, case)
    assert_e5m2_output(reference, case.reference)
    lowered = tawa_xdsl.apply(tawa_xdsl.parse(text), TUNED)
    for seed in range(2):
        assert_bitwise_equal(
            run(tawa_xdsl.simulate, lowered, case, seed=seed), reference
        )
    ptx_text = kernel_ptx(find_kernel(lowered, case.kernel))
    assert ".e5m2.e5m2 " in ptx_text and "cvt.rn.satfinite.e5m2x2.f32" in ptx_text
    result = assemble(ptx_text)
    assert result.ok and result.remarks == [], result.log[-3000:]
    threads = to_thread_level(tawa_xdsl.parse(text), TUNED)
    assert_close(run(tawa_xdsl.simulate, threads, case), reference, ulps=1, bits=3)


def test_a_tma_box_off_a_16_byte_boundary_is_a_hazard() -> None:
    """The H100 stops with an illegal instruction where a TMA box starts off a
    16-byte boundary of its rows (the block-scaled GEMM's scale box did, at
    K block 1): the thread simulator refuses such a copy. Mutant: A's first
    load one element (byte) to the right."""
    module = to_thread_level(example_module(GEMM.name, "gemm_fp8_rowwise"), TUNED)
    load = next(op for op in module.walk() if isinstance(op, ptx.TMALoadOp))
    one = ptx.ImmOp(1, "b32")
    shifted = ptx.AluOp("add.s32", [load.coords[0], one.result], 1)
    Rewriter.insert_op([one, shifted], InsertPoint.before(load))
    load.operands[2] = shifted.result
    case, _ = expected(GEMM, thread_case, "gemm_fp8_rowwise", 5)
    with pytest.raises(Hazard, match="not on a 16-byte boundary"):
        run(tawa_xdsl.simulate, module, case)


@pytest.mark.parametrize(("kernel", "path"), THREAD_LEVEL, ids=lambda c: str(c))
def test_fp8_ptx_assembles_without_remarks(kernel, path) -> None:
    lowered = tawa_xdsl.apply(example_module(path.name, kernel), TUNED)
    result = assemble(kernel_ptx(find_kernel(lowered, kernel)))
    assert result.ok, result.log[-3000:]
    assert result.remarks == [], result.remarks
    if result.tool == "ptxas":  # nvJitLink ignores setmaxnreg: its spills differ
        assert not result.spills, result.log[-3000:]


# ------------------------------------------------------------- tuned defaults


def test_tuned_stages_count_one_byte_elements() -> None:
    """Stages fill shared memory at 1 byte per fp8 element: with an e4m3 output
    the 128x256 staging tile is half a bf16 one, and a fourth stage fits."""
    gemm = example_module(GEMM.name)
    bf16_out = default_options(find_kernel(gemm, "gemm_fp8_tensorwise"))
    fp8_out = default_options(find_kernel(gemm, "gemm_fp8_e4m3_out"))
    assert bf16_out["block_n"] == fp8_out["block_n"] == 256
    assert (bf16_out["num_stages"], fp8_out["num_stages"]) == (3, 4)
    blockwise = default_options(find_kernel(gemm, "gemm_fp8_blockwise"))
    assert "block_n" not in blockwise  # BN is the scale block: not named
    # two K blocks a slot (66576 bytes): two stages next to the staging tile,
    # and the GEMM rules (its two dots read loaded tiles), not attention's
    overlap = default_options(find_kernel(gemm, "gemm_fp8_blockwise_overlap"))
    assert overlap["num_stages"] == 2 and overlap["persistent"]
    assert "two_stage" not in overlap


# ------------------------------------------------------- refused register stores


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ({"tma_store": False}, "this store cannot be: tma_store is off"),
        (
            {"persistent": True, "dynamic_tiles": True},
            "this store cannot be: its coordinate 0 is not provably non-negative "
            "(a TMA store below 0 faults); a persistent kernel's tile index taken "
            "from the tile counter (dynamic_tiles)",
        ),
        (
            {"persistent": True, "longest_first": True},
            "counted down from the last row (longest_first)",
        ),
    ],
    ids=["tma-store-off", "dynamic-tiles", "longest-first"],
)
def test_an_fp8_output_not_stored_through_tma_says_why(given, why) -> None:
    """An e4m3 output tile goes through TMA only; options that send it from
    registers are refused at the store, in the pipeline, saying which (it was
    refused at the thread level, with no reason, as if the kernel were at
    fault)."""
    line = next(
        i
        for i, s in enumerate(GEMM.read_text().splitlines(), 1)
        if "tile.store %out, %c" in s and "f8E4M3FN" in s
    )
    with pytest.raises(OpDiagnostic) as refused:
        tawa_xdsl.compile(GEMM, "gemm_fp8_e4m3_out", **given).for_shape(
            M=1000, N=1024, K=1024
        )
    message = str(refused.value)
    assert message.startswith(f"{GEMM}:{line}:")
    assert (
        "convert-aref-to-nvgpu-async: 8-bit float tiles are stored through TMA only"
        in message
    )
    assert "this store cannot be: " in message and why in message


def test_an_fp8_vector_store_is_refused_at_the_store() -> None:
    """A 1-D e4m3 tile goes from registers, which do not store 8-bit pairs:
    refused at its tile.store, saying so (it was an internal error of
    distribute-fragments: 'the elements stored are outside the value')."""
    d = "!tile.desc<?x{}, box = [128]>"
    source = f"""
func.func @quantize(%x: {d.format("f32")}, %q: {d.format("f8E4M3FN")}) attributes {{tile.kernel}} {{
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : {d.format("f32")} -> tensor<128xf32>
  %y = arith.truncf %t : tensor<128xf32> to tensor<128xf8E4M3FN>
  tile.store %y, %q[%c0] : tensor<128xf8E4M3FN> -> {d.format("f8E4M3FN")}
  func.return
}}"""
    with pytest.raises(OpDiagnostic) as refused:
        tawa_xdsl.apply(tawa_xdsl.parse(source), TUNED)
    message = str(refused.value)
    assert message.startswith("<string>:6:3: error: tile.store:")
    assert "this store cannot be: it is a vector" in message
