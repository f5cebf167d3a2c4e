"""split-k and stream-k on the CPU: the kernel pairs they make, run as their
calling convention says (`tawa_xdsl.partials`: partials, then reduce), compute
what the original kernel computes, at the tile level (interpreter), at the aref
level (aref simulator), lowered (barrier simulator) and at the thread level
(thread simulator); both kernels assemble; the shape rule that picks the split
count.

Outputs and workspaces start poisoned with NaN, so a slot or element nobody
writes shows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

import tawa_xdsl
from tawa_xdsl.compiler import CompileOptions
from tawa_xdsl.dispatch_rules import split_count
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.grid import infer_grid, recorded_grid_rule
from tawa_xdsl.kernel import KernelArgumentError, kernels
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.lowering.ptx_target import to_ptx
from tawa_xdsl.partials import (
    original_arguments,
    record,
    self_scheduled,
    stream_k_slots,
)
from tawa_xdsl.transforms.persistent import PERSISTENT_ATTR

from .conftest import sweep
from .thread_level import assert_close, to_thread_level

ROOT = Path(__file__).resolve().parent.parent
COUNTER = ROOT / "tests" / "kernels" / "gemm_counter.mlir"
EPILOGUE = ROOT / "examples" / "gemm_epilogue.mlir"
GEMM = ROOT / "examples" / "gemm.mlir"
M, N = 200, 136  # 2 x 2 tiles of 128, both edges partial
BK = 64
ALPHA = np.float32(0.75)


def _inputs(rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray]:
    a = rng.standard_normal((M, k)).astype(bfloat16)
    b = rng.standard_normal((N, k)).astype(bfloat16)
    return a, b


def _counter_args(rng: np.random.Generator, k: int) -> list[Any]:
    """gemm_counter's arguments, the f32 output poisoned."""
    return [*_inputs(rng, k), np.full((M, N), np.nan, np.float32)]


def _epilogue_args(rng: np.random.Generator, k: int) -> list[Any]:
    """gemm_scale_bias_relu's arguments, the bf16 output poisoned."""
    bias = rng.standard_normal(N).astype(bfloat16)
    out = np.full((M, N), np.nan, bfloat16)
    return [*_inputs(rng, k), bias, out, ALPHA]


def _product(args: list[Any], k_range: slice = slice(None)) -> np.ndarray:
    """a[:, k_range] @ b[:, k_range]^T in float64."""
    a, b = (x.astype(np.float64)[:, k_range] for x in args[:2])
    return a @ b.T


def _pair(module: ModuleOp, original: str) -> list[func.FuncOp]:
    """The kernels that replaced `original`: partials, then reduce."""
    pair = [k for k in kernels(module) if (r := record(k)) and r.kernel == original]
    return sorted(pair, key=lambda k: record(k).role)  # "partials" < "reduce"


def _run_pair(
    module: ModuleOp,
    original: str,
    args: list[Any],
    workspace: np.ndarray,
    programs: int,
    run: Callable[..., None] = tawa_xdsl.interpret,
    **options: Any,
) -> None:
    """Launch the pair as its record says: partials, then reduce, with the
    original's arguments and the workspace. Kernels that walk their own tiles
    (persistent, stream-K) run `programs` programs; the others their grid."""
    for kernel in _pair(module, original):
        _run_kernel(module, kernel, args, workspace, programs, run, **options)


def _run_kernel(
    module: ModuleOp,
    kernel: func.FuncOp,
    args: list[Any],
    workspace: np.ndarray,
    programs: int,
    run: Callable[..., None],
    **options: Any,
) -> None:
    """Launch one kernel of a pair as `_run_pair` does."""
    kargs = original_arguments(record(kernel), args, workspace)
    if self_scheduled(kernel) or PERSISTENT_ATTR in kernel.attributes:
        grid: tuple[int, ...] = (programs,)
    else:
        grid = infer_grid(recorded_grid_rule(kernel), kargs)
    run(module, kernel.sym_name.data, *kargs, grid=grid, **options)


def _interpret_original(
    path: Path, name: str, args: list[Any], output: int
) -> np.ndarray:
    """What the original kernel stores into argument `output` (a fresh array)."""
    mine = list(args)
    mine[output] = np.full_like(args[output], np.nan)
    tawa_xdsl.interpret(tawa_xdsl.parse(path), name, *mine, grid=(2, 2))
    return mine[output]


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.uint16 if x.dtype == bfloat16 else np.uint32)


# ------------------------------------------------------------------ split-k


@pytest.mark.parametrize("splits", [1, 2, 3, 4])
@pytest.mark.parametrize("k", [330, 130])  # 6 and 3 K iterations: uneven slices
def test_split_k_slices_and_sum(splits: int, k: int) -> None:
    """Slice s holds exactly the product over K iterations [s*T/S, (s+1)*T/S)
    (an empty slice, S > T, holds zeros); the reduce kernel's output is their
    sum: bit for bit the original's with S = 1, within f32 rounding of it and of
    the float64 product otherwise."""
    args = _counter_args(np.random.default_rng(splits * k), k)
    expected = _interpret_original(COUNTER, "gemm_counter", args, 2)
    module = tawa_xdsl.apply(tawa_xdsl.parse(COUNTER), f"split-k{{splits={splits}}}")
    ws = np.full((splits, M, N), np.nan, np.float32)
    _run_pair(module, "gemm_counter", args, ws, programs=1)

    trips = -(-k // BK)
    for s in range(splits):
        first, end = s * trips // splits, (s + 1) * trips // splits
        part = _product(args, slice(first * BK, end * BK))
        np.testing.assert_allclose(ws[s], part, rtol=1e-5, atol=1e-4)
        if first == end:
            assert not ws[s].any(), "an empty slice stores zeros"
    out = args[2]
    if splits == 1:
        assert np.array_equal(_bits(out), _bits(expected))
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(out, _product(args), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("splits", [1, 3])
def test_split_k_moves_the_epilogue(splits: int) -> None:
    """The scale, the bias and the ReLU run in the reduce kernel, which takes
    the bias, the output and alpha; the partials kernel takes A, B and the
    workspace."""
    args = _epilogue_args(np.random.default_rng(7), 330)
    expected = _interpret_original(EPILOGUE, "gemm_scale_bias_relu", args, 3)
    module = tawa_xdsl.apply(tawa_xdsl.parse(EPILOGUE), f"split-k{{splits={splits}}}")
    partials, reduce = _pair(module, "gemm_scale_bias_relu")
    assert record(partials).args == (0, 1, -1)
    assert record(reduce).args == (-1, 2, 3, 4)
    ws = np.full((splits, M, N), np.nan, np.float32)
    _run_pair(module, "gemm_scale_bias_relu", args, ws, programs=1)
    out = args[3].astype(np.float64)
    if splits == 1:
        assert np.array_equal(_bits(args[3]), _bits(expected))
    bias = args[2].astype(np.float64)
    reference = np.maximum(float(ALPHA) * _product(args) + bias, 0.0)
    assert np.abs(out - reference).max() <= 1e-2 * np.abs(reference).max()


def test_the_contract_checks_the_workspace() -> None:
    """The workspace names its dimensions S, M, N after the output's, and its
    type holds S: a workspace of another M or slot count is refused before
    anything runs, by either kernel."""
    module = tawa_xdsl.apply(tawa_xdsl.parse(COUNTER), "split-k{splits=2}")
    a, b, c = _counter_args(np.random.default_rng(0), 130)
    for ws, why in (
        (np.zeros((2, M + 1, N), np.float32), r"\(M\) has extent 201"),
        (
            np.zeros((3, M, N), np.float32),
            "extent 3 in dimension 0, the kernel expects 2",
        ),
    ):
        with pytest.raises(KernelArgumentError, match=why):
            tawa_xdsl.interpret(
                module, "gemm_counter_split_k", a, b, ws, grid=(2, 2, 2)
            )
        with pytest.raises(KernelArgumentError, match=why):
            tawa_xdsl.interpret(
                module, "gemm_counter_split_k_reduce", ws, c, grid=(2, 2)
            )


# ----------------------------------------------------------------- stream-k


@pytest.mark.parametrize("programs", [1, 3, 7, 30])  # 30: more than 24 units
def test_stream_k_shares_the_units(programs: int) -> None:
    """Any number of programs (more than the units of work too) computes the
    product; every workspace slot is written (partials or zeros)."""
    args = _counter_args(np.random.default_rng(programs), 330)
    expected = _interpret_original(COUNTER, "gemm_counter", args, 2)
    module = tawa_xdsl.apply(tawa_xdsl.parse(COUNTER), "stream-k")
    slots = stream_k_slots(tiles=4, iterations=6, programs=programs)
    ws = np.full((slots, M, N), np.nan, np.float32)
    _run_pair(module, "gemm_counter", args, ws, programs)
    assert not np.isnan(ws).any()
    np.testing.assert_allclose(args[2], expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(args[2], _product(args), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(("tiles", "iterations"), [(1, 1), (4, 6), (5, 3), (3, 0)])
def test_stream_k_slots_count_the_sharing_programs(tiles: int, iterations: int) -> None:
    """The slot count is the most programs from the first to the last whose
    even shares of the units (program p: [p U / P, (p + 1) U / P)) touch one
    tile (a program between them with no units stores zeros), counted
    directly."""
    per_tile = max(iterations, 1)
    units = tiles * per_tile
    for programs in range(1, 3 * units + 2):
        touching = [set() for _ in range(tiles)]
        for p in range(programs):
            for u in range(p * units // programs, (p + 1) * units // programs):
                touching[u // per_tile].add(p)
        most = max(max(t) - min(t) + 1 for t in touching)
        assert stream_k_slots(tiles, iterations, programs) == most


@pytest.mark.parametrize("mode", ["split-k{splits=4}", "stream-k"])
def test_region_ops_in_the_bound_and_the_epilogue(mode: str) -> None:
    """gemm_while computes its K bound with an scf.while (stream-K computes it
    once, before the tiles) and runs an scf.while and an scf.if in its
    epilogue (they move to the reduce kernel with their scalars; the partials
    kernel keeps A, B and the workspace only). The pair computes what the
    original does, up to the order of the f32 sums (within a bf16 rounding),
    interpreted and, for stream-K, lowered."""
    src = ROOT / "tests" / "kernels" / "gemm_while.mlir"
    rng = np.random.default_rng(5)
    a, b = _inputs(rng, 330)
    args = [a, b, np.full((M, N), np.nan, bfloat16), 2, 1]
    expected = _interpret_original(src, "gemm_while", args, 2).astype(np.float32)
    module = tawa_xdsl.apply(tawa_xdsl.parse(src), mode)
    partials, reduce = _pair(module, "gemm_while")
    assert record(partials).args == (0, 1, -1)
    assert record(reduce).args == (-1, 2, 3, 4)
    programs = 5
    slots = 4 if mode.startswith("split") else stream_k_slots(4, 6, programs)
    ws = np.full((slots, M, N), np.nan, np.float32)
    _run_pair(module, "gemm_while", args, ws, programs)
    np.testing.assert_allclose(
        args[2].astype(np.float32), expected, rtol=1e-2, atol=1e-2
    )
    reference = -_product(args) / 4  # halved twice, negated
    assert (
        np.abs(args[2].astype(np.float64) - reference).max()
        <= 1e-2 * np.abs(reference).max()
    )
    if mode == "stream-k":
        tile_out, tile_ws = args[2].copy(), ws.copy()
        lowered = tawa_xdsl.apply(
            tawa_xdsl.apply(tawa_xdsl.parse(src), mode), "tawa-hopper-pipeline"
        )
        _run_pair(lowered, "gemm_while", args, ws, programs, tawa_xdsl.simulate)
        assert np.array_equal(_bits(ws), _bits(tile_ws))
        assert np.array_equal(_bits(args[2]), _bits(tile_out))


# ------------------------------------------------------------ lowered pairs

PIPELINES = [
    "aref-partition,pipeline{num-stages=2}",
    "tawa-hopper-pipeline{tuned=false num-stages=2}",
    # tuned (a persistent partials kernel) on the tile pair's 128-wide tiles:
    # the tuned 256-wide tiles' f32 partial sums round differently
    "tawa-hopper-pipeline{block-n=128}",
]


ACCUMULATE = ROOT / "tests" / "kernels" / "gemm_accumulate.mlir"


def _accumulate_args(rng: np.random.Generator, kernel: str) -> list[Any]:
    """gemm_accumulate's (C read and written) or gemm_two_outputs' arguments."""
    a, b = _inputs(rng, 330)
    if kernel == "gemm_accumulate":
        return [a, b, rng.standard_normal((M, N)).astype(bfloat16)]
    return [a, b, *(np.full((M, N), np.nan, bfloat16) for _ in range(2))]


def _accumulate_reference(kernel: str, args: list[Any]) -> list[np.ndarray]:
    product = _product(args)
    if kernel == "gemm_accumulate":
        return [product + args[2].astype(np.float64)]
    return [product, np.maximum(product, 0.0)]


@pytest.mark.parametrize("kernel", ["gemm_accumulate", "gemm_two_outputs"])
@pytest.mark.parametrize(
    ("mode", "pipeline"),
    [
        ("split-k{splits=1}", None),
        ("split-k{splits=3}", None),
        ("stream-k", None),
        ("split-k{splits=3}", PIPELINES[1]),
        ("stream-k", PIPELINES[2]),
    ],
    ids=lambda c: str(c).split("{")[0] if c else "tile",
)
def test_pairs_of_an_initial_accumulator_and_two_stores(
    kernel: str, mode: str, pipeline: str | None
) -> None:
    """C = A @ B^T + C (the accumulator starts from the loaded C: the slices
    sum from zero, the reduce kernel adds C once) and two stores of the one
    accumulator (the reduce kernel makes both; the partials kernel neither)
    compute what the original computes, as tile pairs (interpreter) and
    lowered (barrier simulator); with one slice bit for bit."""
    programs = 3
    slots = stream_k_slots(4, 6, programs) if mode == "stream-k" else int(mode[-2])
    module = tawa_xdsl.apply(tawa_xdsl.parse(ACCUMULATE), mode)
    run = tawa_xdsl.interpret
    if pipeline is not None:
        module, run = tawa_xdsl.apply(module, pipeline), tawa_xdsl.simulate
    partials, reduce = _pair(module, kernel)
    outputs = [2] if kernel == "gemm_accumulate" else [2, 3]
    assert set(record(partials).args) == {0, 1, -1}  # no C, no D
    assert set(record(reduce).args) == {-1, *outputs}
    args = _accumulate_args(np.random.default_rng(5), kernel)
    original = [a.copy() for a in args]
    tawa_xdsl.interpret(tawa_xdsl.parse(ACCUMULATE), kernel, *original, grid=(2, 2))
    reference = _accumulate_reference(kernel, args)  # before C is written
    ws = np.full((slots, M, N), np.nan, np.float32)
    _run_pair(module, kernel, args, ws, programs, run)
    for out, expected in zip(outputs, reference, strict=True):
        error = np.abs(args[out].astype(np.float64) - expected).max()
        assert error <= 1e-2 * np.abs(expected).max(), (out, error)
        if mode == "split-k{splits=1}":
            assert np.array_equal(_bits(args[out]), _bits(original[out]))


MODES = ["split-k{splits=3}", "stream-k"]


@pytest.mark.parametrize(
    ("pipeline", "mode"),
    # CI: the aref level of both cuts, each lowering pipeline for one of them
    sweep(
        [(p, m) for p in PIPELINES for m in MODES],
        {(PIPELINES[0], MODES[0]), (PIPELINES[0], MODES[1])}
        | {(PIPELINES[1], MODES[1]), (PIPELINES[2], MODES[0])},
        lambda c: f"{c[0]}-{c[1]}",
        slow=(),
    ),
)
def test_lowered_pairs_compute_the_tile_pairs(pipeline: str, mode: str) -> None:
    """Both kernels of each pair, through the aref simulator or lowered
    through the barrier simulator, write bit for bit the workspace and the
    output the interpreted tile-level pair writes."""
    programs = 3
    slots = 3 if mode.startswith("split") else stream_k_slots(4, 6, programs)
    tile_pair = tawa_xdsl.apply(tawa_xdsl.parse(EPILOGUE), mode)
    lowered = tawa_xdsl.apply(
        tawa_xdsl.apply(tawa_xdsl.parse(EPILOGUE), mode), pipeline
    )
    rng = np.random.default_rng(11)
    args = _epilogue_args(rng, 330)
    ws = np.full((slots, M, N), np.nan, np.float32)
    _run_pair(tile_pair, "gemm_scale_bias_relu", args, ws, programs)
    expected_out, expected_ws = args[3].copy(), ws.copy()
    for seed in range(2 if pipeline == PIPELINES[1] else 1):
        args[3][:] = np.nan
        ws[:] = np.nan
        _run_pair(
            lowered,
            "gemm_scale_bias_relu",
            args,
            ws,
            programs,
            tawa_xdsl.simulate,
            seed=seed,
        )
        assert np.array_equal(_bits(ws), _bits(expected_ws))
        assert np.array_equal(_bits(args[3]), _bits(expected_out))


@pytest.mark.parametrize(
    ("block_n", "pipeline"),
    [
        (256, "tawa-hopper-pipeline{block-n=256}"),
        (64, "tawa-hopper-pipeline{block-n=64}"),
    ],
)
def test_stream_k_tile_count_follows_tile_shape(block_n: int, pipeline: str) -> None:
    """Lowered with other tile columns than it was written with, the stream-K
    kernel counts its tiles in them (here 1 or 3 tile columns, not 2: with the
    old count, tiles would be missed or computed twice), so the lowered pair
    writes what the tile pair resized alike writes."""
    programs = 4
    tiles = 2 * -(-N // block_n)
    slots = stream_k_slots(tiles, iterations=6, programs=programs)
    tile_pair = tawa_xdsl.apply(
        tawa_xdsl.parse(GEMM), f"stream-k,tile-shape{{block-n={block_n}}}"
    )
    lowered = tawa_xdsl.apply(tawa_xdsl.parse(GEMM), f"stream-k,{pipeline}")
    args = [*_inputs(np.random.default_rng(3), 330), np.full((M, N), np.nan, bfloat16)]
    ws = np.full((slots, M, N), np.nan, np.float32)
    _run_pair(tile_pair, "gemm_nt", args, ws, programs)
    assert not np.isnan(ws).any()
    expected_out, expected_ws = args[2].copy(), ws.copy()
    args[2][:] = np.nan
    ws[:] = np.nan
    _run_pair(lowered, "gemm_nt", args, ws, programs, tawa_xdsl.simulate)
    assert np.array_equal(_bits(ws), _bits(expected_ws))
    assert np.array_equal(_bits(args[2]), _bits(expected_out))


def _lowered_alone(mode: str, role: str) -> ModuleOp:
    """gemm_scale_bias_relu's pair lowered, with only its `role` kernel left."""
    lowered = tawa_xdsl.apply(
        tawa_xdsl.apply(tawa_xdsl.parse(EPILOGUE), mode), "tawa-hopper-pipeline"
    )
    for kernel in list(kernels(lowered)):
        rec = record(kernel)
        if rec.kernel != "gemm_scale_bias_relu" or rec.role != role:
            kernel.detach()
            kernel.erase()
    return lowered


@pytest.mark.parametrize("role", ["partials", "reduce"])
@pytest.mark.parametrize("mode", ["split-k{splits=2}", "stream-k"])
def test_pair_kernels_assemble(mode: str, role: str) -> None:
    """Both kernels print as PTX that assembles for sm_90a, without a ptxas
    remark or a spill; the reduce kernel reads the f32 partial tiles into
    registers in the accumulator layout (`ld.shared.v2.f32`)."""
    ptx = to_ptx(_lowered_alone(mode, role))
    result = assemble(ptx)
    assert result.ok, result.log[-3000:]
    assert result.remarks == [] and not result.spills, result.log[-3000:]
    if role == "reduce":
        assert "ld.shared.v2.f32" in ptx


@pytest.mark.parametrize("mode", ["split-k{splits=3}", "stream-k"])
def test_thread_level_pairs_compute_the_tile_pairs(mode: str) -> None:
    """Both kernels, lowered with the tuned options and distributed to the
    thread level, run lane by lane in the thread simulator: the partials
    kernel writes the tile pair's workspace (to f32 rounding: its MMAs sum in
    another order), and the reduce kernel, reading that workspace's tiles
    through shared memory into the accumulator layout, writes the tile pair's
    output from it."""
    programs = 3
    tile_pair = tawa_xdsl.apply(tawa_xdsl.parse(EPILOGUE), mode)
    # the tile pair on the partials kernel's tuned tiles: stream-K's units,
    # and so its slots, follow them (128 x 256, four stages, stored from
    # registers: NOTES 3.72)
    tuned = CompileOptions().resolve(_pair(tile_pair, "gemm_scale_bias_relu")[0])
    tawa_xdsl.apply(tile_pair, f"tile-shape{{block-n={tuned.block_n}}}")
    tiles = 2 * -(-N // tuned.block_n)
    slots = 3 if mode.startswith("split") else stream_k_slots(tiles, 6, programs)
    lowered = to_thread_level(
        tawa_xdsl.apply(tawa_xdsl.parse(EPILOGUE), mode), "tawa-hopper-pipeline"
    )
    args = _epilogue_args(np.random.default_rng(11), 328)  # rows of 16-byte multiples
    ws = np.full((slots, M, N), np.nan, np.float32)
    _run_pair(tile_pair, "gemm_scale_bias_relu", args, ws, programs)
    expected_out, expected_ws = args[3].copy(), ws.copy()
    partials, reduce = _pair(lowered, "gemm_scale_bias_relu")
    args[3][:] = np.nan
    ws[:] = np.nan
    _run_kernel(lowered, partials, args, ws, programs, tawa_xdsl.simulate)
    np.testing.assert_allclose(ws, expected_ws, rtol=1e-5, atol=1e-5)
    ws[:] = expected_ws
    _run_kernel(lowered, reduce, args, ws, programs, tawa_xdsl.simulate)
    assert_close(args[3], expected_out)


# ------------------------------------------------------------- shape rule


@pytest.mark.parametrize(
    ("shape", "tile", "splits"),
    [
        ((128, 128, 8192), (128, 128, 64), 32),  # one tile: 128 iterations / 4
        ((128, 128, 256), (128, 128, 64), 1),  # 4 iterations: nothing to split
        ((128, 128, 512), (128, 128, 64), 2),
        ((512, 4096, 4096), (128, 256, 64), 2),  # 64 tiles: two fit one wave
        ((128, 1024, 8192), (128, 256, 64), 32),  # 4 tiles
        ((2000, 3000, 1024), (128, 256, 64), 1),  # 192 tiles: over one wave
        ((1000, 1000, 1000), (128, 128, 64), 2),  # 64 tiles
        ((4096, 4096, 4096), (128, 256, 64), 1),
    ],
)
def test_split_count(
    shape: tuple[int, int, int], tile: tuple[int, int, int], splits: int
) -> None:
    assert split_count(*shape, *tile) == splits
    tiles = -(-shape[0] // tile[0]) * -(-shape[1] // tile[1])
    assert splits == 1 or tiles * splits <= 132  # one wave
