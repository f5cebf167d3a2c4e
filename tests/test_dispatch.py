"""Shape-aware dispatch on the CPU (`tawa_xdsl.dispatch`, `tawa_xdsl.heuristics`):
the shape rules on the problems issue 16 lists, bucketing, the dispatch key
(alignment included), lazy compilation, `explain`, and the shape option of
`tawa-hopper-pipeline`. Nothing here launches: `specialize` and `plan` stop
before the GPU."""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tawa_xdsl
from tawa_xdsl import heuristics
from tawa_xdsl.compiler import CompileOptions, describe
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dispatch import (
    Dispatcher,
    DispatchKey,
    bucket,
    bucket_floor,
    dispatch_key,
    parse_shape,
)
from tawa_xdsl.dispatch_rules import (
    COPY_LAUNCH_US,
    CP_ASYNC_MAX_READS,
    HBM_BYTES_PER_US,
    OFF_SECTOR_SLOWDOWN,
    REDUCE_MIN_WIDTH,
    REDUCE_PROGRAMS,
    REDUCE_SLOT_US,
    SWAP_AB_BLOCK_N,
    SWAP_AB_MAX_M,
    THREAD_LOAD_MAX_READS,
    realign_pays,
    realign_us,
    split_count,
    split_overhead_us,
    swap_block_m,
    thread_loads_pay,
)
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.examples import path
from tawa_xdsl.heuristics import GEMM_RATES, NARROW_TILE_MIN_M, Structure, decide
from tawa_xdsl.kernel import ArrayView, KernelArgumentError, byte_span, find_kernel
from tawa_xdsl.lowering.ptx_target import kernel_ptx
from tawa_xdsl.partials import stream_k_slots
from tawa_xdsl.runtime.arrays import DeviceArray
from tawa_xdsl.target import INDEX_MAX, SM_COUNT

from .conftest import example_module, two_loop_gemm

KERNELS_DIR = Path(__file__).parent / "kernels"


@functools.cache
def text_of(file: str, kernel: str) -> str:
    return str(example_module(file, kernel))


def dispatcher(file: str, kernel: str, **options: Any) -> Dispatcher:
    """A fresh dispatcher (no state shared between tests but the parse)."""
    return Dispatcher(
        text_of(file, kernel), kernel, tawa_xdsl.compiler.CompileOptions(**options)
    )


@functools.cache
def gemm() -> Dispatcher:
    return dispatcher("gemm.mlir", "gemm_nt")


def planned(d: Dispatcher, **extents: int) -> tuple[dict[str, Any], list[str]]:
    """The resolved options and the rules that fired for a call of `extents`."""
    plan = d.plan(d.key_for(**extents))
    return plan.options.as_dict(), [r.rule for r in plan.decision.reasons]


# ------------------------------------------------------------------- the rules

# The GEMM rows of issue 16's table (tawa / cuBLAS with the single tuned
# configuration), and the configuration the rules must pick there.
GEMM_RULES = [
    # 0.67 with 128x256 (64 tiles: half the SMs idle), 0.83 with block_n=128;
    # 0.89-0.92 with 4 stages, 0.92-0.96 with the 5 of GEMM_RING_BYTES
    ((512, 4096, 4096), {"block_n": 128, "persistent": False, "num_stages": 5}),
    # 0.46 with 128-row tiles (half of each is padding), 0.57 with 64 rows
    ((64, 4096, 4096), {"block_m": 64, "num_consumers": 1, "persistent": False}),
    # 0.89 with 128x256, 0.72 with 128x128: keep 128x256
    ((3000, 5000, 4096), {"block_n": 256, "persistent": True, "num_stages": 3}),
    # the six large shapes stay on the tuned configuration (parity with cuBLAS)
    ((4096, 4096, 4096), {"block_n": 256, "persistent": True}),
    ((8192, 8192, 8192), {"block_n": 256, "persistent": True}),
    ((16384, 16384, 1024), {"block_n": 256, "persistent": True}),
    ((4096, 14336, 4096), {"block_n": 256, "persistent": True}),
    # 128 tiles of 128x256 are one wave: nothing to persist over (NOTES 3.4)
    ((2048, 2048, 2048), {"block_n": 256, "persistent": False}),
    # 192 tiles of 128x256 are 1.45 waves, 384 of 128x128 2.9, 256 of 128x192
    # 1.94: the last is fastest (benchmarks/results/tile_widths.csv)
    ((2000, 3000, 1024), {"block_n": 192, "persistent": True}),
    # 96 tiles of 128x256 fill 73% of a wave, 128 of 128x192 97% (NOTES 3.47)
    ((512, 6144, 4096), {"block_n": 192, "persistent": False}),
    # 320 tiles of 128x128 are 2.4 waves, 256 of 128x160 1.94 (NOTES 3.47)
    ((512, 10240, 8192), {"block_n": 160, "persistent": True}),
    # a shape no constant was fitted on (NOTES 3.47 measured the pick)
    ((1536, 6144, 2048), {"block_n": 192, "persistent": True}),
]


@pytest.mark.parametrize(("shape", "expected"), GEMM_RULES, ids=str)
def test_gemm_rules_pick_the_better_measured_configuration(shape, expected) -> None:
    options, rules = planned(gemm(), **dict(zip("MNK", shape, strict=True)))
    assert {k: options[k] for k in expected} == expected
    assert "wave quantization" in rules and "persistent" in rules


# The residual + GELU epilogue (a 2-D tile loaded after the K loop, as wide as
# the output): 128x256 leaves room for two ring stages only, too few to hide the
# loads; 128x192 keeps three and beats both 128x256 and 128x128 (NOTES 3.65).
RESIDUAL_RULES = [
    ((8192, 8192, 4096), {"block_n": 192, "num_stages": 3, "outer_stages": 1}),
    ((6791, 3192, 4184), {"block_n": 192, "num_stages": 3, "outer_stages": 1}),
    ((4096, 4096, 4096), {"block_n": 192, "num_stages": 3, "outer_stages": 1}),
    ((2248, 2440, 4584), {"block_n": 192, "num_stages": 3}),
]


@pytest.mark.parametrize(("shape", "expected"), RESIDUAL_RULES, ids=str)
def test_a_residual_epilogue_keeps_three_stages(shape, expected) -> None:
    d = dispatcher("gemm_epilogue.mlir", "gemm_residual_gelu")
    options, _ = planned(d, **dict(zip("MNK", shape, strict=True)))
    assert {k: options[k] for k in expected} == expected


@pytest.mark.parametrize(
    ("given", "tiles"),
    [({"block_m": 64, "block_n": 128}, 2 * 8), ({"block_m": 128, "block_n": 256}, 4)],
    ids=str,
)
def test_a_split_is_reckoned_on_the_given_tile(given, tiles) -> None:
    """128 x 1024 x 8192 with the tile fixed by the caller: K is split for the
    tiles that run (found on the H100: 64x128 tiles were split 32 ways, as for
    the tuned 128x256's four tiles, and ran at 0.54 of cuBLAS instead of 0.72)."""
    d = dispatcher("gemm.mlir", "gemm_nt", **given)
    plan = d.plan(d.key_for(M=128, N=1024, K=8192))
    expected = split_count(128, 1024, 8192, given["block_m"], given["block_n"], 64)
    assert expected == min(SM_COUNT // tiles, 8192 // 64 // 4)
    assert plan.decision.split_k == expected
    assert (plan.options.block_m, plan.options.block_n) == tuple(given.values())


def test_one_long_tile_splits_k() -> None:
    """128 x 128 x 8192 is one tile (0.14 of cuBLAS unsplit): the rules cut K
    32 ways (as `split_count` says), and the specialization is the pair
    `split-k{splits=32}` makes, each kernel compiled for the call's extents:
    the partials kernel on the plan's tile shape, writing 32 slots. Asked not
    to split (a call with grid=), the plan says why nothing is split."""
    d = dispatcher("gemm.mlir", "gemm_nt")
    key = d.key_for(M=128, N=128, K=8192)
    plan = d.plan(key)
    assert plan.decision.split_k == 32
    (reason,) = [r for r in plan.decision.reasons if r.rule == "split-K"]
    assert "32 ways" in reason.text and "nothing is split" not in reason.text
    spec = d.for_shape(M=128, N=128, K=8192)
    assert spec.reduce is not None and "K split 32 ways" in spec.origin
    assert spec.kernel.name == "gemm_nt_split_k"
    assert spec.reduce.name == "gemm_nt_split_k_reduce"
    ran = d.explain(M=128, N=128, K=8192).splitlines()[-1]
    assert ran.startswith("kernels run: @gemm_nt_split_k D")
    assert f"@gemm_nt_split_k_reduce {describe(spec.reduce.options)}" in ran
    assert spec.kernel.options["block_m"] == plan.options.block_m
    split = spec.kernel.contract.split
    assert split is not None and split.splits == 32
    unsplit = d.plan(key, split=False)
    assert unsplit.decision.split_k == 1
    (reason,) = [r for r in unsplit.decision.reasons if r.rule == "split-K"]
    assert "nothing is split here" in reason.text
    many = decide(d.structure, {"M": 4096, "N": 4096, "K": 4096}, splitter=split_count)
    assert many.split_k == 1  # four waves: splitting adds waves as fast as it saves


def test_a_kernel_split_k_refuses_runs_unsplit() -> None:
    """Two K loops into separate accumulators: the rules would split K, the
    pass cannot, and the specialization is the kernel unsplit, with the pass's
    reason alone (the unsplit plan's own split-K reason, which sends the
    reader to grid= and the CLI, is dropped)."""
    d = Dispatcher(
        two_loop_gemm(), "gemm_two_loops", tawa_xdsl.compiler.CompileOptions()
    )
    assert d.plan(d.key_for(M=128, N=128, K1=8192, K2=8192)).decision.split_k > 1
    spec = d.for_shape(M=128, N=128, K1=8192, K2=8192)
    assert spec.reduce is None
    (why,) = [r.text for r in spec.plan.decision.reasons if r.rule == "split-K"]
    assert why.startswith("the kernel cannot be split: ")  # not "run split-k first"


def test_explain_before_a_call_names_the_split_that_runs(lowerings) -> None:
    """Before the first call explain() promised "K split 32 ways" for a kernel
    the split-k pass refuses (found only when the pair was built): it now
    runs the pass (not the lowering) and says what the call runs, as it says
    after it."""
    d = Dispatcher(
        two_loop_gemm(), "gemm_two_loops", tawa_xdsl.compiler.CompileOptions()
    )
    extents = {"M": 128, "N": 128, "K1": 8192, "K2": 8192}
    before = d.explain(**extents)
    assert lowerings == [] and "not compiled yet" in before
    assert "split 32 ways" not in before and "the kernel cannot be split: " in before
    d.for_shape(**extents)
    after = d.explain(**extents)
    assert before.replace("not compiled yet", "rules, compiled") == after


def test_a_shape_without_a_batch_extent_plans_no_tile() -> None:
    """A batched GEMM planned for M, N and K alone (the CLI's shape= on a file
    of GEMMs, explain(M=...)): the wave model cannot count its tiles without
    B; it asserted it could (an internal error). No shape rule sizes a
    tile then (the tuned tile stands); with B given, one does."""
    text = (Path(__file__).parent / "kernels" / "gemm_batched.mlir").read_text()
    d = Dispatcher(text, "bgemm", tawa_xdsl.compiler.CompileOptions())
    plan = d.plan(d.key_for(M=999, N=777, K=4096))
    assert "shape" not in (plan.sources["block_m"], plan.sources["block_n"])
    full = d.plan(d.key_for(B=3, M=999, N=777, K=4096))
    assert "shape" in (full.sources["block_m"], full.sources["block_n"])


def test_the_wave_model_weighs_every_tile_shape() -> None:
    """The reason lists each candidate with its programs, waves and cost, and the
    decision keeps the others for autotuning."""
    d = gemm()
    plan = d.plan(d.key_for(M=512, N=4096, K=4096))
    (wave,) = [r for r in plan.decision.reasons if r.rule == "wave quantization"]
    assert re.search(
        r"tile 128x128, predicted \d\.\d\dx faster than 128x256", wave.text
    )
    assert "128x256: 64 programs in 1 wave of 132 SMs (48% busy)" in wave.text
    for other in ("128x192: 88 programs", "128x160: 104 programs", "64x96: 344"):
        assert other in wave.text
    assert {"block_m": 128, "block_n": 256} in plan.decision.considered
    assert {"block_m": 64, "block_n": 96} in plan.decision.considered
    assert {"block_m": 128, "block_n": 128} not in plan.decision.considered


def test_widths_the_loads_cannot_take_are_not_weighed() -> None:
    """B stored K x N is loaded in tiles BN wide: rows of 96 or 160 bf16 (192,
    320 bytes) lower only in 64- or 32-byte swizzle chunks, a layout the shape
    rules do not resize tiles to (`target.NARROW_SWIZZLES`: unmeasured), so the
    nn kernel's candidates are multiples of 64 columns (64 on 128-row tiles
    only); the nt kernel (B rows along K) weighs them all."""
    nn = dispatcher("gemm.mlir", "gemm_nn")
    plan = nn.plan(nn.key_for(M=512, N=4096, K=4096))
    widths = {o["block_n"] for o in plan.decision.considered}
    assert widths | {plan.options.block_n} == {64, 128, 192, 256}
    assert not nn.structure.lowerable({"BM": 128, "BN": 96, "BK": 64})
    assert nn.structure.lowerable({"BM": 128, "BN": 192, "BK": 64})
    nt = gemm()
    assert nt.structure.lowerable({"BM": 128, "BN": 96, "BK": 64})
    considered = nt.plan(nt.key_for(M=512, N=4096, K=4096)).decision.considered
    assert {o["block_n"] for o in considered} >= {96, 160}


def test_8_bit_outputs_keep_whole_128_byte_rows() -> None:
    """An e4m3 output is stored through TMA only: its tiles stay 128 or 256
    wide (found by the GPU tests: 64x96 tiles of gemm_fp8_e4m3_out were
    refused by the lowering at 256 x 512 x 1024)."""
    d = dispatcher("gemm_fp8.mlir", "gemm_fp8_e4m3_out")
    for m, n, k in ((256, 512, 1024), (64, 4096, 4096), (512, 6144, 4096)):
        plan = d.plan(d.key_for(M=m, N=n, K=k))
        widths = {o["block_n"] for o in plan.decision.considered}
        assert widths | {plan.options.block_n or 256} <= {128, 256}
    assert not d.structure.lowerable({"BM": 128, "BN": 192, "BK": 128})
    tensorwise = dispatcher("gemm_fp8.mlir", "gemm_fp8_tensorwise")
    assert tensorwise.structure.lowerable({"BM": 64, "BN": 96, "BK": 128})


@pytest.mark.parametrize("m", [16, 64])
def test_few_rows_get_64_row_tiles(m: int) -> None:
    """Few output rows: every tile shape streams the same operand bytes, and
    the MMAs of 128-row tiles would be mostly padding."""
    d = dispatcher("gemm.mlir", "gemm_nt", swap_ab=False)  # the unswapped tiles
    plan = d.plan(d.key_for(M=m, N=6144, K=4096))
    assert plan.options.block_m == 64 and plan.options.num_consumers == 1


def test_pairs_of_one_split_count_keep_each_plans_tile(monkeypatch) -> None:
    """Two calls split the same number of ways on different tiles: each runs
    its own plan's tile (the pair's dispatchers were cached per split count,
    so the second call ran the first one's tile, found on the H100)."""
    import tawa_xdsl.dispatch
    import tawa_xdsl.heuristics

    monkeypatch.setattr(tawa_xdsl.dispatch, "split_count", lambda *args: 2)
    monkeypatch.setattr(tawa_xdsl.heuristics, "split_overhead_us", lambda *a: -1e3)
    d = dispatcher("gemm.mlir", "gemm_nt", stream_k=False)
    specs = [d.for_shape(M=16, N=6144, K=4096), d.for_shape(M=2048, N=2048, K=2048)]
    planned_tiles = [(s.plan.options.block_m, s.plan.options.block_n) for s in specs]
    assert planned_tiles[0] != planned_tiles[1]
    for spec, tile in zip(specs, planned_tiles, strict=True):
        assert spec.plan.decision.split_k == 2
        assert (spec.kernel.options["block_m"], spec.kernel.options["block_n"]) == tile


def test_given_options_are_never_overridden() -> None:
    d = dispatcher("gemm.mlir", "gemm_nt", block_n=256, persistent=True)
    options, _ = planned(d, M=512, N=4096, K=4096)
    assert (options["block_n"], options["persistent"]) == (256, True)
    assert d.plan(d.key_for(M=512, N=4096, K=4096)).sources["block_n"] == "given"
    # the persistent rule counts the given tiles: 256 of 64x128 are two waves
    small = dispatcher("gemm.mlir", "gemm_nt", block_m=64, block_n=128)
    options, _ = planned(small, M=512, N=4096, K=4096)
    assert options["persistent"] and options["num_consumers"] == 1
    untuned = dispatcher("gemm.mlir", "gemm_nt", tuned=False)
    options, rules = planned(untuned, M=64, N=4096, K=4096)
    assert rules == ["none"] and options["block_m"] == 0 and not options["persistent"]


ATTENTION_RULES = [
    # tuning_attention.csv, seq 1024 causal: D2-P1-W2 fastest at d64 and d128;
    # with more blocks than SMs walked from the tile counter, in id order (the
    # walk's longest_first=False overrides the short-causal rule's, NOTES 3.74)
    (
        "attention_causal_d64",
        dict(BH=256, SQ=1024, SK=1024, D=64),
        {
            "block_m": 128,
            "two_stage": False,
            "num_stages": 2,
            "reverse_x": False,
            "persistent": True,
            "longest_first": False,
            "dynamic_tiles": True,
        },
        "attention walk",
    ),
    # 1024 blocks: the walk from the tile counter on top (NOTES 3.74)
    (
        "attention_causal_d128",
        dict(BH=128, SQ=1024, SK=1024, D=128),
        {
            "block_m": 0,
            "two_stage": False,
            "num_stages": 2,
            "reverse_x": False,
            "persistent": True,
            "dynamic_tiles": True,
            "outer_stages": 2,
        },
        "short causal",
    ),
    # at 4096 keys the tuned options were the fastest at d128; the walk stops
    # at 2048 there (ATTENTION_WALK)
    (
        "attention_causal_d128",
        dict(BH=64, SQ=4096, SK=4096, D=128),
        {"two_stage": True, "reverse_x": True, "persistent": False},
        "wave quantization",
    ),
    # at d64 the walk was faster at every length measured (to 16384 keys)
    (
        "attention_causal_d64",
        dict(BH=64, SQ=4096, SK=4096, D=64),
        {"block_m": 192, "two_stage": False, "dynamic_tiles": True},
        "attention walk",
    ),
    # head dim 256: the short-causal rule does not apply (no two-stage overlap
    # at 256, NOTES 3.40); causal, it walks with Q in one slot (NOTES 3.83)
    (
        "attention_causal_d256",
        dict(BH=64, SQ=1024, SK=1024, D=256),
        {"two_stage": False, "dynamic_tiles": True, "outer_stages": 1},
        "attention walk",
    ),
    # non-causal d64 at 1024 (many tiles): the tuned 192 rows were the fastest
    (
        "attention_d64",
        dict(BH=256, SQ=1024, SK=1024, D=64),
        {"block_m": 192, "persistent": True},
        "wave quantization",
    ),
    # 8 heads of 1024 queries: 64 blocks of 128 rows fill half the SMs; 64-row
    # blocks fill them, and one wave is nothing to persist over
    (
        "attention_d128",
        dict(BH=8, SQ=1024, SK=1024, D=128),
        {"block_m": 64, "num_consumers": 1, "persistent": False},
        "wave quantization",
    ),
]


@pytest.mark.parametrize(
    ("kernel", "extents", "expected", "rule"),
    ATTENTION_RULES,
    ids=[f"{kernel}-{e['BH']}x{e['SQ']}" for kernel, e, _, _ in ATTENTION_RULES],
)
def test_attention_rules(kernel, extents, expected, rule) -> None:
    file = "attention_d256.mlir" if kernel.endswith("d256") else "attention.mlir"
    options, rules = planned(dispatcher(file, kernel), **extents)
    assert {k: options[k] for k in expected} == expected
    assert rule in rules


@pytest.mark.parametrize(
    ("kernel", "keys", "walks"),
    [
        # inside the measured windows (NOTES 3.45): the walk, on top of the
        # short-causal options at 512 keys and of the tuned ones beyond
        ("attention_causal_d128_fp8", 512, True),
        ("attention_causal_d128_fp8", 8192, True),
        ("attention_causal_d64_fp8", 4096, True),
        ("attention_causal_d256_fp8", 2048, True),
        # outside them, and never where every block does equal work
        ("attention_causal_d128_fp8", 16384, False),
        ("attention_causal_d256_fp8", 1024, False),
        ("attention_d128_fp8", 2048, False),
    ],
)
def test_fp8_causal_attention_walks_longest_first_within_its_window(
    kernel: str, keys: int, walks: bool
) -> None:
    d = dispatcher("attention_fp8.mlir", kernel)
    head_dim = int(kernel.split("_d")[-1].split("_")[0])
    options, rules = planned(d, BH=64, SQ=keys, SK=keys, D=head_dim)
    assert ("fp8 causal walk" in rules) == walks
    if walks:
        assert options["persistent"] and options["longest_first"]


WALKS = [
    # (file, kernel, head dim, key length, blocks of the plain grid > SMs, walks)
    ("attention.mlir", "attention_causal_d128", 128, 2048, True, True),
    ("attention.mlir", "attention_causal_d128", 128, 4096, True, False),
    ("attention.mlir", "attention_d128", 128, 512, True, True),
    ("attention.mlir", "attention_d128", 128, 1024, True, False),
    ("attention.mlir", "attention_d64", 64, 16384, True, True),
    ("attention_d80_d96.mlir", "attention_causal_d96", 96, 512, True, True),
    ("attention_d80_d96.mlir", "attention_causal_d80", 80, 4096, True, False),
    # one wave of blocks: each program would walk one block
    ("attention.mlir", "attention_causal_d128", 128, 512, False, False),
    # no room for Q's second slot: causal walks with Q in one slot
    ("attention_d256.mlir", "attention_causal_d256", 256, 1024, True, True),
    ("attention_d256.mlir", "attention_causal_d256", 256, 2048, True, True),
    ("attention_d256.mlir", "attention_causal_d256", 256, 4096, True, False),
    ("attention_d256.mlir", "attention_d256", 256, 1024, True, False),
    # FP8 (FP8_ATTENTION_WALK): not causal at any length, causal to 2048 keys,
    # head dim 256 causal to 1024, d96 not measured
    ("attention_fp8.mlir", "attention_causal_d128_fp8", 128, 1024, True, True),
    ("attention_fp8.mlir", "attention_d128_fp8", 128, 16384, True, True),
    ("attention_fp8.mlir", "attention_causal_d128_fp8", 128, 4096, True, False),
    ("attention_fp8.mlir", "attention_causal_d256_fp8", 256, 1024, True, True),
    ("attention_fp8.mlir", "attention_d256_fp8", 256, 1024, True, False),
    ("attention_fp8.mlir", "attention_d96_fp8", 96, 1024, True, False),
    ("attention_gqa.mlir", "attention_gqa_causal_d128", 128, 1024, True, True),
]


@pytest.mark.parametrize(
    ("file", "kernel", "d", "keys", "many", "walks"),
    WALKS,
    ids=[f"{k}-{n}-{'many' if m else 'few'}" for _, k, _, n, m, _ in WALKS],
)
def test_short_attention_walks_from_the_tile_counter(
    file: str, kernel: str, d: int, keys: int, many: bool, walks: bool
) -> None:
    """`heuristics.ATTENTION_WALK`: where its head dim and key length were
    measured faster, there are more query blocks than SMs and Q's second
    slot fits, the walk's options are taken together."""
    blocks = 1024 if many else 64
    rows = max(1, blocks * 128 // keys)
    extents = dict(BH=rows, SQ=keys, SK=keys, D=d)
    if "gqa" in kernel:  # Q folded to [B * HKV, group * seq, D], 4 to a group
        extents = dict(BHKV=max(1, rows // 4), GSQ=4 * keys, SK=keys, D=d)
    options, rules = planned(dispatcher(file, kernel), **extents)
    walk = dict(
        heuristics.FP8_ATTENTION_WALK_OPTIONS
        if "fp8" in kernel
        else heuristics.ATTENTION_WALK_OPTIONS
    )
    if d == 256 and "fp8" not in kernel:  # 16-bit d256: no room for Q's second slot
        walk["outer_stages"] = 1
    assert ({o: options[o] for o in walk} == walk) == walks
    assert ("attention walk" in rules) == walks
    if walks:  # the stages fit next to Q's two slots and the tickets
        d_ = dispatcher(file, kernel)
        structure = d_.structure
        written_bn = 64 if d == 256 else 128  # attention_d256.mlir's BN is 64
        sizes = {
            "BM": options["block_m"] or 128,
            "BN": options["block_n"] or written_bn,
        }
        sizes = {n: v for n, v in sizes.items() if n in structure.tunable}
        room = structure.walk_stages(frozenset(sizes.items()), options["outer_stages"])
        assert options["num_stages"] <= room


def test_a_given_stage_count_keeps_the_attention_walk_off_and_says_so() -> None:
    d = dispatcher("attention.mlir", "attention_causal_d128", num_stages=3)
    plan = d.plan(d.key_for(BH=128, SQ=1024, SK=1024, D=128))
    options = plan.options.as_dict()
    assert options["num_stages"] == 3 and not options["dynamic_tiles"]
    (why,) = [r.text for r in plan.decision.reasons if r.rule == "attention walk"]
    assert why.startswith("off: num_stages given")


@given(
    st.integers(1, 70_000), st.integers(1, 70_000), st.integers(1, 70_000)
)  # fmt: skip
def test_the_gemm_rules_hold_on_any_shape(m: int, n: int, k: int) -> None:
    """On any bucket: a measured tile shape, no more costly than the tuned one,
    and a persistent grid exactly when its programs exceed one wave."""
    d = gemm()
    extents = d.key_for(M=m, N=n, K=k).problem
    decision = decide(d.structure, extents)
    tile = (decision.options.get("block_m", 128), decision.options.get("block_n", 256))
    if decision.options.get("swap_ab"):  # weighed at few rows: 64 weight rows
        assert m <= SWAP_AB_MAX_M and tile == (swap_block_m(m), SWAP_AB_BLOCK_N)
    else:
        assert tile in GEMM_RATES
    tiles = d.structure.tiles(extents, {"BM": tile[0], "BN": tile[1]})
    assert tiles is not None
    assert decision.options.get("persistent", True) == (tiles > SM_COUNT)
    assert decision.split_k == 1


# -------------------------------------------------------------------- buckets


@pytest.mark.parametrize(
    ("extent", "end"),
    [
        (1, 1), (8, 8), (9, 10), (16, 16), (17, 20), (64, 64), (65, 80),
        (128, 128), (129, 160), (256, 256), (3000, 3072), (3072, 3072),
        (4095, 4096), (4096, 4096), (4097, 5120), (16384, 16384),
    ],
)  # fmt: skip
def test_buckets_are_four_steps_per_octave(extent: int, end: int) -> None:
    assert bucket(extent) == end
    assert bucket_floor(extent) < extent <= bucket(extent)


def test_buckets_partition_the_extents() -> None:
    """Every extent lies in exactly one bucket, whose ends are within 25%."""
    for x in range(1, 5000):
        end = bucket(x)
        assert bucket(end) == end and bucket(bucket_floor(x) + 1) == end
        assert x > 8 or end == x
        assert end <= 1.25 * (bucket_floor(x) + 1) or end - bucket_floor(x) == 1


# -------------------------------------------------------------------- the key


def host(*shape: int) -> np.ndarray:
    return np.zeros(shape, bfloat16)


def device(shape: tuple[int, ...], ptr: int = 0x100000, pitch: int = 0) -> DeviceArray:
    """A bf16 array on the GPU at a made-up address (never dereferenced)."""
    strides = (pitch or shape[-1], 1)
    return DeviceArray(ArrayView("bf16", shape, strides), ptr)


def test_the_key_holds_buckets_dtypes_and_alignment() -> None:
    d = gemm()
    key = d.key(host(500, 256), host(4096, 256), host(500, 4096))
    assert key == DispatchKey(
        (("M", 512), ("K", 256), ("N", 4096)),
        ("bf16",) * 3,
        (True,) * 3,
        (True,) * 3,
        (True,) * 3,
    )
    assert key == d.key_for(M=512, N=4096, K=256)
    assert str(key).startswith("M in (448, 512], K in (224, 256], N in (3584, 4096]")
    padded = device((512, 4096), pitch=4104)  # a view of rows padded to 8208 bytes
    odd_base = d.key(device((512, 256), 0x100008), device((4096, 256)), padded)
    assert odd_base.tma == (False, True, True) and odd_base.problem == key.problem
    odd_pitch = d.key(device((512, 256)), device((4095, 256)), device((512, 4095)))
    assert odd_pitch.tma == (True, True, False)


def test_the_key_says_which_inputs_cp_async_could_copy() -> None:
    """Base, pitch and row length 4-byte aligned (K = 1002 in bf16): the
    producer's threads would copy with cp.async, which the thread-load rule
    weighs apart from synchronous loads (rows 2006 bytes apart, a base 2
    bytes off)."""
    d = gemm()
    b = device((4096, 1002), pitch=1003)
    args = [device((8, 1002)), b, device((8, 4096), 0x100002)]
    key = d.key(*args)
    assert key.tma == (False, False, False)
    assert key.async_copies == (True, False, False)
    assert key.as_json()["async_copies"] == [True, False, False]
    why = str(d.plan(key).decision.reasons[-1])
    assert re.search(r"a: each tile read by \d+ programs, cp\.async, copied", why)
    assert "b: each tile read by 1 programs, synchronous loads, copied" in why
    assert "cp.async faster where tiles are read once or twice" in why


@pytest.mark.parametrize(("m", "loads"), [(8, "b"), (128, "b"), (512, "")])
def test_a_4_byte_aligned_weight_read_by_few_programs_is_loaded_with_cp_async(
    m: int, loads: str
) -> None:
    """K = 1002 in bf16 (rows 2004 bytes apart): TMA cannot describe A or B;
    the threads copy B with cp.async where each of its tiles is read by at
    most `CP_ASYNC_MAX_READS` programs (one 64-row tile row at M = 8, two at
    128, four 128-row ones at 512: copied), and A, read by every tile column,
    is copied (NOTES 3.85)."""
    d = gemm()
    args = [device((m, 1002)), device((4096, 1002)), device((m, 4096))]
    plan = d.plan(d.key(*args))
    assert plan.options.thread_loads == loads
    why = str(plan.decision.reasons[-1])
    assert re.search(r"a: each tile read by \d+ programs, cp\.async, copied", why)


@pytest.mark.parametrize(
    ("args", "off"),
    [
        ([device((512, 256), 0x100008), device((4096, 256)), device((512, 4096))], [0]),
        ([device((512, 777)), device((4096, 777)), device((512, 4096))], [0, 1]),
        ([device((512, 256)), device((4096, 256), 0x100002), device((512, 4096))], [1]),
    ],
    ids=["base", "pitch", "base-b"],
)
def test_an_input_tma_cannot_describe_is_read_through_an_aligned_buffer(
    args, off
) -> None:
    """K = 777, or a view one element into its storage (issue 16 item 4): the
    key records it, the plan is the aligned call's (TMA stores, K may split),
    and exactly those inputs are realigned. (Host arrays of any extents are
    aligned: their temporaries have padded rows.)"""
    d = gemm()
    assert all(d.key(host(512, 256), host(777, 256), host(512, 777)).tma)
    key = d.key(*args)
    assert not all(key.tma)
    assert d.plan(key).options == d.plan(d.key_for(**key.problem)).options
    spec = d.specialize(*args)
    assert spec.options["tma_store"] is True
    assert d.realigned(spec, args) == off
    aligned = [device((512, 256)), device((4096, 256)), device((512, 4096))]
    assert d.realigned(d.specialize(*aligned), aligned) == []
    names = ", ".join("abc"[i] for i in off)
    assert f"{names}: TMA cannot describe; copied into buffers" in d.explain(*args)


def test_inputs_off_the_sector_grid_are_copied_where_the_copy_pays() -> None:
    """Rows 16 bytes off the 32-byte grid (K = 1000 bf16) are legal TMA but slow
    (NOTES 3.58): the key records it, and a call copies them onto the grid
    when the predicted saving exceeds the copy's reads and writes, which needs
    an output large against the inputs; an input on the grid is never copied,
    nor one the kernel writes. (With `cluster=1` given: a kernel free to run in
    clusters reads them in place, multicast, test below.)"""
    d = dispatcher("gemm.mlir", "gemm_nt", cluster=1)

    def call(m: int, n: int, k: int, pitch: int = 0) -> list[DeviceArray]:
        return [device((m, k), pitch=pitch), device((n, k)), device((m, n))]

    assert d.key(*call(512, 512, 1008)).sectors == (True,) * 3
    assert d.key(*call(512, 512, 1000)).sectors == (False, False, True)
    assert d.key(*call(512, 512, 1008, pitch=1016)).sectors == (False, True, True)
    assert all(d.key(host(512, 1000), host(512, 1000), host(512, 512)).sectors)

    big = d.key(*call(8192, 8192, 1000))
    plan = d.plan(big)
    assert plan.copied == ("a", "b")
    assert plan.options == d.plan(d.key_for(**big.problem)).options
    assert "copied onto it before each launch" in str(plan.decision.reasons[-1])
    assert d.plan(d.key(*call(1000, 1000, 1000))).copied == ()  # copy costs more
    assert d.plan(d.key(*call(8192, 8192, 1008))).copied == ()  # on the grid
    args = call(8192, 8192, 1000)
    assert d.realigned(d.specialize(*args), args) == [0, 1]
    assert "32-byte grid" in d.explain(*args)


def test_only_operands_off_the_grid_weigh_on_the_tile() -> None:
    """B stored K x N with N = 1000 (2000-byte rows, off the grid) and A on it
    (K = 1024): B's reads are the same in 128x64 and 128x128 tiles, so the
    narrow pick stays (H200: 0.945 against 0.882 of cuBLAS); with K = 1000 A
    is off too and 128x128 wins (0.831 against 0.752)."""
    d = dispatcher("gemm.mlir", "gemm_nn")

    def tile(k: int) -> tuple[int, int]:
        plan = d.plan(d.key(device((1000, k)), device((k, 1000)), device((1000, 1000))))
        return plan.options.block_m or 128, plan.options.block_n or 128

    assert tile(1024) == (128, 64)
    assert tile(1000) == (128, 128)


@pytest.mark.parametrize(
    ("shape", "cluster"),
    [
        ((8192, 8192, 1000), 2),  # the copy paid 1.12x; multicast 1.13x over it
        ((4096, 4096, 3000), 2),  # 0.75 -> 0.97 of cuBLAS
        ((2000, 1000, 1000), 2),  # 128x128, L2-bound
        ((1000, 1000, 1000), 1),  # 128x128, not L2-bound: clusters lost 6%
    ],
    ids=str,
)
def test_inputs_off_the_sector_grid_are_multicast_where_l2_bounds_them(
    shape, cluster
) -> None:
    """Inputs read off the 32-byte grid pass through L2 slower; in clusters of
    two along x, each column tile is multicast (read once for both blocks).
    The rules cluster where the L2 floor bounds the pick and the pair is
    predicted faster by the margin, and then read the inputs in place rather
    than copy them (NOTES 3.64); on the grid, or with `cluster` given, never."""
    d = gemm()
    m, n, k = shape

    def plan(k: int, d: Dispatcher = d):
        return d.plan(d.key(device((m, k)), device((n, k)), device((m, n))))

    clustered = plan(k)
    assert clustered.options.cluster == cluster
    assert clustered.copied == ()
    assert plan(k + 8).options.cluster == 1
    given = dispatcher("gemm.mlir", "gemm_nt", cluster=1)
    assert plan(k, given).options.cluster == 1
    if cluster > 1:
        reasons = " ".join(r.text for r in clustered.decision.reasons)
        assert "in clusters that multicast them" in reasons


def test_thread_loads_given_keep_the_multicast_off() -> None:
    """thread_loads given where the rules would multicast inputs read off the
    sector grid: the plan clustered them and compile() then refused the
    producer's threads in a cluster (found on the GPU at 1000 x 768 x 1000)."""
    m, n, k = 2000, 1000, 1000  # clustered by the rules (above)
    for loads in ("b", "a,b"):
        d = dispatcher("gemm.mlir", "gemm_nt", thread_loads=loads)
        plan = d.plan(d.key(device((m, k)), device((n, k)), device((m, n))))
        assert plan.options.cluster in (0, 1) and plan.options.thread_loads == loads


@pytest.mark.parametrize(
    ("shape", "aligned", "in_place"),
    [
        ((1000, 1000, 1000), (128, 64), (128, 128)),
        ((768, 1536, 1000), (64, 160), (128, 128)),
        ((3000, 3000, 1000), (128, 192), (128, 192)),  # wide: left alone
    ],
    ids=str,
)
def test_narrow_tiles_give_way_where_inputs_are_read_off_the_sector_grid(
    shape, aligned, in_place
) -> None:
    """Inputs read in place off the 32-byte grid (K = 1000 bf16) pass through
    L2 slower; narrow tiles read the most per MMA (H200, NOTES 3.63: 128x128
    ran 1.18x 128x64 at 1000^3 and 1.21x 64x160 at 768 x 1536 x 1000): such a
    pick gives way to the tile the L2 floor predicts faster by the margin.
    The same shape with K = 1008 (on the grid) keeps the aligned pick."""
    d = gemm()
    m, n, k = shape

    def tile(k: int) -> tuple[int, int]:
        plan = d.plan(d.key(device((m, k)), device((n, k)), device((m, n))))
        assert plan.copied == ()
        return plan.options.block_m or 128, plan.options.block_n or 128

    assert tile(k + 8) == aligned
    assert tile(k) == in_place
    reasons = str(d.explain(device((m, k)), device((n, k)), device((m, n))))
    if in_place != aligned:
        assert "inputs read in place off the sector grid" in reasons


def test_the_copy_pays_with_the_output_against_the_inputs() -> None:
    """The rule's arithmetic: a kernel of t us saves OFF_SECTOR_SLOWDOWN * t,
    against each copied byte read and written once and a launch per copy."""
    assert realign_us(0, 2) == 2 * COPY_LAUNCH_US
    per_byte = realign_us(10**6, 1) - realign_us(0, 1)
    assert per_byte == pytest.approx(2e6 / HBM_BYTES_PER_US)
    assert realign_pays(realign_us(10**8, 2) / OFF_SECTOR_SLOWDOWN + 1, 10**8, 2)
    assert not realign_pays(realign_us(10**8, 2) / OFF_SECTOR_SLOWDOWN - 1, 10**8, 2)


def test_a_split_call_realigns_the_inputs_its_partials_kernel_maps() -> None:
    """One 128 x 128 tile with K = 8191: K is split as for K = 8192, and the
    partials kernel's A and B are read through aligned buffers."""
    d = dispatcher("gemm.mlir", "gemm_nt")
    args = [device((128, 8191)), device((128, 8191)), device((128, 128))]
    spec = d.specialize(*args)
    assert spec.reduce is not None and {"a", "b"} <= spec.kernel.tensor_maps
    assert d.realigned(spec, args) == [0, 1]


def test_an_output_tma_cannot_describe_is_stored_from_registers() -> None:
    """N = 777 on the device (issue 16): the output's rows are 1554 bytes apart,
    which TMA cannot describe; the specialization stores it from registers
    (its parameter is a pointer, not a tensor map) and never splits K."""
    d = dispatcher("gemm.mlir", "gemm_nt")
    args = [device((128, 8192)), device((777, 8192)), device((128, 777))]
    spec = d.specialize(*args)
    assert spec.options["tma_store"] is False and spec.reduce is None
    assert "c" not in spec.kernel.tensor_maps
    assert {"a", "b"} <= spec.kernel.tensor_maps
    assert d.realigned(spec, args) == []
    assert "c: TMA cannot describe; stored from registers" in d.explain(*args)


@pytest.mark.parametrize(
    ("given", "source"),
    [
        ({}, "layout: TMA cannot describe c"),
        ({"tma_store": True}, "layout: TMA cannot describe c; True given"),
        ({"tma_store": False}, "given"),
    ],
)
def test_explain_says_the_calls_layout_turned_the_tma_store_off(
    given: dict[str, bool], source: str
) -> None:
    """N = 777: explain() labelled the store the call's output forced from
    registers "(given)", which the caller had not given."""
    d = dispatcher("gemm.mlir", "gemm_nt", **given)
    args = [device((128, 8192)), device((777, 8192)), device((128, 777))]
    assert f"  tma_store = False ({source})\n" in d.explain(*args)


def test_an_output_stored_from_registers_leaves_its_staging_room_to_the_ring() -> None:
    """4096 x 4095 x 4096: the output's rows are 8190 bytes apart, so it is
    stored from registers, and its 128 x 256 tile takes four ring stages
    where a TMA-stored output keeps three next to its staging tile (NOTES
    3.77)."""
    d = dispatcher("gemm.mlir", "gemm_nt")
    for n, staged, stages in ((4095, False, 4), (4096, True, 3)):
        args = [device((4096, 4096)), device((n, 4096)), device((4096, n))]
        options = d.plan(d.key(*args)).options
        assert (options.tma_store, options.block_n) == (staged, 256)
        assert options.num_stages == stages


def spanned(shape: tuple[int, int], ptr: int) -> DeviceArray:
    """A compact bf16 device array at a made-up address whose bytes are known
    (`device`'s are not: they overlap nothing)."""
    strides = (shape[1], 1)
    span = byte_span(ptr, shape, strides, 2)
    return DeviceArray(ArrayView("bf16", shape, strides, True, span), ptr)


@pytest.mark.parametrize("split", [False, True], ids=["one-kernel", "split-k"])
def test_an_input_sharing_an_outputs_memory_is_read_from_a_copy(split) -> None:
    """D = A @ B^T + D (cuBLAS's beta * C in place): R is D's memory, so a call
    reads R from a buffer copied before each launch, whatever the kernel (a
    split pair's reduce kernel reads R too), explain says so and why, and
    autotuning, whose runs poison the outputs, leaves the call alone."""
    m, n, k = (128, 128, 8192) if split else (256, 512, 256)
    d = Dispatcher(
        (KERNELS_DIR / "gemm_residual.mlir").read_text(),
        "gemm_residual",
        CompileOptions(),
        autotune=True,
        bench=lambda *_: pytest.fail("an in-place call was autotuned"),
    )
    out = spanned((m, n), 0x4000_0000)
    args = [spanned((m, k), 0x1000_0000), spanned((n, k), 0x2000_0000), out, out]
    spec = d.specialize(*args)
    assert (spec.reduce is not None) == split
    values = d._convert(args, 0)
    assert d.realigned(spec, values) == [2]
    assert "r: shares memory with c, which the kernel writes; read from a copy " in (
        d.explain(*args)
    )
    apart = [*args[:2], spanned((m, n), 0x3000_0000), out]
    assert d.realigned(spec, d._convert(apart, 0)) == []
    assert "shares memory" not in d.explain(*apart)


@pytest.mark.parametrize("n", [685, 777, 1001])
def test_an_output_whose_rows_end_off_the_granule_is_stored_from_registers(n) -> None:
    """A view of N columns in rows padded onto the 16-byte grid (a slice of a
    wider buffer): TMA can describe it, but its store would write the row's
    tail up to the next 16-byte boundary, the caller's memory past the view
    (measured on the H200: columns N .. N + 2 of a 685-wide view). Such an
    output is stored from registers; the same view as an input is read by TMA."""
    d = dispatcher("gemm.mlir", "gemm_nt")
    pitch = -(-n // 8) * 8 + 8  # 16-byte aligned rows, wider than the view
    c = device((256, n), pitch=pitch)
    args = [device((256, 4096)), device((n, 4096)), c]
    assert d.key(*args).tma == (True, True, False)
    spec = d.specialize(*args)
    assert spec.options["tma_store"] is False and "c" not in spec.kernel.tensor_maps
    assert "c: TMA cannot describe; stored from registers" in d.explain(*args)
    inputs = [device((256, n), pitch=pitch), device((512, n), pitch=pitch)]
    assert d.key(*inputs, device((256, 512))).tma == (True, True, True)


def test_shapes_name_known_dimensions() -> None:
    with pytest.raises(
        KernelArgumentError, match="no dimension named Q here; the kernel names M, K, N"
    ):
        gemm().key_for(M=1, Q=2)
    # True is an int to Python, 2**31 no index to the kernel (its arrays are
    # refused at that extent): neither is an extent
    for bad in (0, True, np.True_, 2.0, np.float64(2), INDEX_MAX + 1):
        with pytest.raises(KernelArgumentError, match="positive integers up to"):
            gemm().key_for(M=bad)
    # numpy's integers are integers, as in a grid and an index scalar
    key = gemm().key_for(M=512, N=4096, K=4096)
    assert gemm().key_for(M=np.int64(512), N=np.int32(4096), K=4096) == key
    # a dimension the kernel's types fix: no call has another extent there
    attention = dispatcher("attention.mlir", "attention_d64")
    with pytest.raises(
        KernelArgumentError,
        match=r"D=32, but argument 'q' dimension 2 \(D\) has extent 64 in its type",
    ):
        attention.key_for(BH=1, SQ=128, SK=128, D=32)
    assert ("D", bucket(64)) in attention.key_for(D=64).extents
    assert parse_shape("M=512, N=4096,K=1") == {"M": 512, "N": 4096, "K": 1}
    for bad in ("M", "M=0", "M=-1", "=4", "M=x", f"M={INDEX_MAX + 1}"):
        with pytest.raises(ValueError, match="NAME=EXTENT pairs"):
            parse_shape(bad)
    with pytest.raises(ValueError, match="M is given twice"):
        parse_shape("M=5,N=4,M=6")


def test_the_largest_shape_is_planned_at_once() -> None:
    """The stream-K candidate counted its workspace slots tile by tile: at
    M = 2**31 - 1 (16 million tiles per shape) explain() ran for minutes."""
    d = gemm()
    assert stream_k_slots(2**40, 64, SM_COUNT) == 2  # counted per program
    assert d.explain(M=INDEX_MAX, N=256, K=256).startswith("@gemm_nt: M in")


# ------------------------------------------------------------ lazy compilation


def gemm_args(m: int, n: int, k: int) -> list[np.ndarray]:
    return [host(m, k), host(n, k), host(m, n)]


def test_each_bucket_compiles_once_when_first_called(lowerings) -> None:
    d = dispatcher("gemm.mlir", "gemm_nt")
    assert lowerings == []  # compile() compiles nothing
    first = d.specialize(*gemm_args(500, 4096, 256))
    assert len(lowerings) == 1 and first.origin == "rules, compiled"
    assert d.specialize(*gemm_args(512, 4000, 248)) is first  # the same bucket
    assert len(lowerings) == 1
    small = d.specialize(*gemm_args(64, 4096, 256))  # another bucket, other options
    assert len(lowerings) == 2 and small.options["block_m"] == 64
    assert d.options == small.options and d.last is small
    # another bucket whose options resolve alike shares the compiled kernel
    again = d.specialize(*gemm_args(448, 4096, 256))
    assert again.kernel is first.kernel and len(lowerings) == 2


def test_explain_says_which_specialization_ran_and_why(lowerings) -> None:
    d = dispatcher("gemm.mlir", "gemm_nt")
    before = d.explain(M=64, N=4096, K=14336)
    assert "not compiled yet" in before and lowerings == []
    d.specialize(*gemm_args(64, 4096, 14336))
    text = d.explain()
    assert text.startswith(
        "@gemm_nt: M in (56, 64], K in (12288, 14336], N in (3584, 4096]"
    )
    assert "wave quantization: tile 64x64, K split 2 ways, predicted" in text
    assert "persistent: off: 128 programs fit one wave of 132 SMs" in text
    assert "options D8-P1-W1-BM64-BN64 (rules, K split 2 ways (" in text
    assert "block_m = 64 (shape)" in text and "num_consumers = 1 (structure)" in text
    assert "num_stages = 8 (tuned)" in text
    assert d.explain(*gemm_args(64, 4096, 14336)) == text
    assert "no shape" in dispatcher("gemm.mlir", "gemm_nt").explain()


# ------------------------------------------------------------- the CLI shape


def test_the_cli_shape_lowers_what_a_call_of_that_shape_runs(lowerings) -> None:
    """`tawa-hopper-pipeline{shape=...}` and a call of that shape resolve alike,
    so the lowered kernels print the same PTX (the CLI lowers the kernel it is
    given: where a call splits K, as at M=64, it is the call with grid=)."""
    text = text_of("gemm.mlir", "gemm_nt")
    d = dispatcher("gemm.mlir", "gemm_nt")
    for shape in ("M=64,N=4096,K=4096", "M=3000,N=5000,K=4096"):
        lowered = tawa_xdsl.apply(
            tawa_xdsl.parse(text), f'tawa-hopper-pipeline{{shape="{shape}"}}'
        )
        ptx = kernel_ptx(find_kernel(lowered, "gemm_nt"))
        assert ptx == d.for_shape(split=False, **parse_shape(shape)).ptx


def test_the_structure_reads_the_grid_off_the_output() -> None:
    gemm_structure = Structure.of(
        find_kernel(example_module("gemm.mlir", "gemm_nt"), "gemm_nt")
    )
    assert [(a.dim, a.tile, a.size) for a in gemm_structure.output] == [
        ("M", "BM", 128),
        ("N", "BN", 128),
    ]
    assert gemm_structure.loop is not None and gemm_structure.loop.dim == "K"
    assert gemm_structure.tiles({"M": 512, "N": 4096, "K": 1}, {}) == 4 * 16
    causal = dispatcher("attention.mlir", "attention_causal_d64").structure
    assert [a.dim for a in causal.output] == ["BH", "SQ", "D"] and not causal.equal_work
    assert causal.loop is not None and causal.loop.dim == "SK"


# ------------------------------------------------------------ split_k given


def split_reasons(d: Dispatcher, **extents: int) -> tuple[int, list[str]]:
    plan = d.plan(d.key_for(**extents))
    return plan.decision.split_k, [
        r.text for r in plan.decision.reasons if r.rule == "split-K"
    ]


def test_split_k_given_cuts_k_that_many_ways() -> None:
    """`split_k=S` splits K S ways where the rules would not (2048^3 is one
    wave of 128x256 tiles); `split_k=1` never splits (128x128x8192 is one
    tile, which the rules cut 32 ways); a call that may not split runs
    unsplit and says why; stream-K is not weighed."""
    assert split_reasons(gemm(), M=2048, N=2048, K=2048) == (1, [])
    four = dispatcher("gemm.mlir", "gemm_nt", split_k=4)
    splits, (why,) = split_reasons(four, M=2048, N=2048, K=2048)
    assert splits == 4 and why == "split_k=4: K's 32 iterations split 4 ways"
    plan = four.plan(four.key_for(M=2048, N=2048, K=2048))
    assert "off: split_k=4" in [r.text for r in plan.decision.reasons]
    unsplit = four.plan(four.key_for(M=2048, N=2048, K=2048), split=False)
    assert unsplit.decision.split_k == 1
    (why,) = [r.text for r in unsplit.decision.reasons if r.rule == "split-K"]
    assert why.startswith("split_k=4: K's 32 iterations split 4 ways, but nothing")
    assert split_reasons(gemm(), M=128, N=128, K=8192)[0] > 1
    never = dispatcher("gemm.mlir", "gemm_nt", split_k=1)
    assert split_reasons(never, M=128, N=128, K=8192) == (1, ["off: split_k=1"])
    # no more slices than K has iterations (the others computed nothing, and
    # 10**6 slots of 128 x 128 f32 asked for a 64 GB workspace)
    huge = dispatcher("gemm.mlir", "gemm_nt", split_k=10**6)
    assert split_reasons(huge, M=128, N=128, K=256) == (
        4,
        ["split_k=1000000: K's 4 iterations split 4 ways"],
    )


def test_a_given_split_runs_the_pair_on_the_given_tile() -> None:
    d = dispatcher("gemm.mlir", "gemm_nt", split_k=3, block_m=64, block_n=96)
    spec = d.for_shape(M=256, N=512, K=4096)
    assert spec.reduce is not None and spec.kernel.contract.split.splits == 3
    assert (spec.kernel.options["block_m"], spec.kernel.options["block_n"]) == (64, 96)
    assert describe(spec.kernel.options).endswith("-s3")


def test_a_given_split_keeps_the_plans_written_tile() -> None:
    """`split_k=64` on one 128x128 tile (K's 64 iterations): the plan keeps
    the written 128 rows (block_m=0). The partials kernel's own dispatcher
    sized the tile it left unset anew (64 rows: it counted the 64 slots as
    programs), so the pair ran a tile, and a consumer count, that explain()
    did not name."""
    d = dispatcher("gemm.mlir", "gemm_nt", split_k=64)
    spec = d.for_shape(M=128, N=128, K=4096)
    planned = (spec.plan.options.block_m, spec.plan.options.block_n)
    assert spec.reduce is not None and planned[0] == 0
    assert (spec.kernel.options["block_m"], spec.kernel.options["block_n"]) == planned
    assert spec.kernel.options["num_consumers"] == spec.plan.options.num_consumers


@pytest.mark.parametrize(
    ("file", "kernel"),
    [("gemm.mlir", "gemm_nt"), ("gemm_fp8.mlir", "gemm_fp8_rowwise")],
)
def test_the_reduce_kernel_runs_on_the_partials_tiles(file: str, kernel: str) -> None:
    """One 128x128 output split 32 ways: the reduce kernel kept the tile as
    written (one program reading every slot, on one SM) where the partials
    ran 64x96 tiles; it now runs on their rows, in the narrowest columns."""
    d = dispatcher(file, kernel)
    spec = d.for_shape(M=128, N=128, K=8192)
    assert spec.reduce is not None
    tile = (spec.kernel.options["block_m"], spec.kernel.options["block_n"])
    assert tile == (64, 64)
    reduced = (spec.reduce.options["block_m"], spec.reduce.options["block_n"])
    assert reduced == (64, REDUCE_MIN_WIDTH)


@pytest.mark.parametrize(
    ("shape", "width"),
    [
        ((256, 256, 16384), 16),  # 4 x 16 programs at the least width
        ((128, 1024, 8192), 32),  # 2 x 32 programs: the widest giving 64
        ((1, 4096, 4096), 64),  # 1 x 64
    ],
    ids=str,
)
def test_a_reduce_kernel_with_few_programs_runs_narrower_tiles(shape, width) -> None:
    """Each reduce program sums its slots in turn: an output of few partial
    tiles is reduced on narrower ones (the widest multiple of 8 columns that
    gives `REDUCE_PROGRAMS` programs), the partials' rows kept."""
    d = dispatcher("gemm.mlir", "gemm_nt", swap_ab=False)  # swapped: uncut
    m, n, k = shape
    spec = d.for_shape(M=m, N=n, K=k)
    assert spec.reduce is not None and spec.plan.decision.split_k > 1
    block_m, block_n = (spec.reduce.options[o] for o in ("block_m", "block_n"))
    assert block_m == spec.kernel.options["block_m"]
    assert block_n == width < spec.kernel.options["block_n"]
    programs = math.ceil(m / 64) * math.ceil(n / width)
    assert programs >= REDUCE_PROGRAMS or width == REDUCE_MIN_WIDTH
    wider = math.ceil(m / 64) * math.ceil(n / (width + 8))
    assert wider < REDUCE_PROGRAMS  # the widest that gives enough


def test_a_reduce_kernel_that_stores_what_it_loads_keeps_128_byte_rows() -> None:
    """C = A @ B^T + C split: the reduce kernel loads C and stores it back
    through the loads' tensor map, which needs 128-byte rows; the narrowed
    tiles it refuses give way to the partials' own (a two-output kernel at the
    same shape is narrowed)."""
    accumulate = Path(__file__).parent / "kernels" / "gemm_accumulate.mlir"
    for kernel, width in [("gemm_accumulate", 64), ("gemm_two_outputs", 16)]:
        d = tawa_xdsl.compile(accumulate, kernel, split_k=3)
        spec = d.for_shape(M=256, N=256, K=8192)
        assert spec.reduce is not None
        assert spec.reduce.options["block_n"] == width


def test_a_reduce_kernel_with_programs_enough_keeps_the_partials_tiles() -> None:
    d = dispatcher("gemm.mlir", "gemm_nt", split_k=2)
    spec = d.for_shape(M=1024, N=1024, K=16384)
    assert spec.reduce is not None
    assert all(
        spec.reduce.options[o] == spec.kernel.options[o] for o in ("block_m", "block_n")
    )


@pytest.mark.parametrize("cut", [{}, {"stream_k": True}])
def test_a_pair_hands_over_by_programmatic_dependent_launch(cut) -> None:
    """The reduce kernel launches as a dependent of the partials kernel (it
    starts while the partials drain) and waits for the partial sums after its
    setup, before any load; the partials kernel lets it start at once."""
    d = dispatcher("gemm.mlir", "gemm_nt", **cut)
    spec = d.for_shape(M=128, N=128, K=8192)
    assert spec.reduce is not None
    assert spec.reduce.dependent and not spec.kernel.dependent
    partials, reduce = spec.kernel.ptx, spec.reduce.ptx
    assert "griddepcontrol.launch_dependents;" in partials
    assert "griddepcontrol.wait;" not in partials
    wait = reduce.index("griddepcontrol.wait;")
    assert "launch_dependents" not in reduce
    assert wait < reduce.index("cp.async.bulk.tensor")  # before the first load


@pytest.mark.parametrize(
    "options",
    [{"cluster": 2}, {"ping_pong": True}, {"num_stages": 5}, {"outer_stages": 2}],
)
def test_a_split_of_a_clustered_or_ping_pong_kernel_lowers(options) -> None:
    """The rules split one 128x128 tile with K of 8192: the partials kernel
    keeps `cluster`, `ping_pong` or the stage counts; the reduce kernel was
    compiled with them too and refused them (it multicasts no load and issues
    no wgmma; five slots of its f32 tiles overflow shared memory): a
    diagnostic about @gemm_nt_split_k_reduce, a kernel the caller never
    wrote, at a line of a text they never saw."""
    d = dispatcher("gemm.mlir", "gemm_nt", **options)
    spec = d.for_shape(M=128, N=128, K=8192)
    assert spec.reduce is not None and spec.kernel.contract.split.splits > 1
    ((name, value),) = options.items()
    assert spec.kernel.options[name] == value and spec.reduce.ptx.strip()


@pytest.mark.parametrize("cut", [{"split_k": 4}, {"stream_k": True}])
def test_a_cut_given_with_tuned_false_is_made(cut) -> None:
    """tuned=False keeps the given options: a given split or stream is one
    (the kernel ran unsplit, its options saying "-s4" or "-sk", and explain()
    said only "the given and static options"). Reckoned on the written tile,
    which runs."""
    d = dispatcher("gemm.mlir", "gemm_nt", tuned=False, **cut)
    spec = d.for_shape(M=128, N=128, K=8192)
    assert spec.reduce is not None
    assert spec.plan.decision.split_k == cut.get("split_k", 1)
    assert spec.plan.decision.stream_k == cut.get("stream_k", False)
    assert not spec.kernel.options["block_m"] and not spec.kernel.options["block_n"]
    rules = {r.rule for r in spec.plan.decision.reasons}
    assert ("split-K" if "split_k" in cut else "stream-K") in rules
    assert rules <= {"none", "split-K", "stream-K"}  # no rule sized anything
    unsplit = d.for_shape(split=False, M=128, N=128, K=8192)  # grid= given
    assert unsplit.reduce is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"split_k": -1}, "split_k must be 0 or more, got -1"),
        ({"split_k": 2, "stream_k": True}, "both choose how K is cut"),
        # refused when made, not at a call whose rules turned persistent off
        # (dynamic_tiles alone ran at 4096^3 and was refused at 130x200x72)
        ({"dynamic_tiles": True}, "give persistent=True too"),
        ({"dynamic_tiles": True, "persistent": False}, "give persistent=True too"),
        (
            {"persistent": True, "reverse_x": True},
            "a persistent kernel walks its tiles",
        ),
    ],
)
def test_contradicting_options_are_refused_when_made(options, message) -> None:
    with pytest.raises(ValueError, match=message):
        tawa_xdsl.compiler.CompileOptions(**options)


def test_the_pipeline_refuses_split_k() -> None:
    module = tawa_xdsl.parse(text_of("gemm.mlir", "gemm_nt"))
    with pytest.raises(Exception, match="run the split-k pass first"):
        tawa_xdsl.apply(module, "tawa-hopper-pipeline{split-k=2}")


@pytest.mark.parametrize(
    ("options", "rule"), [({"split_k": 2}, "split-K"), ({"stream_k": True}, "stream-K")]
)
def test_a_cut_given_to_a_kernel_that_is_not_a_gemm_says_so(options, rule) -> None:
    d = dispatcher("attention.mlir", "attention_d64", **options)
    plan = d.plan(d.key_for(BH=16, SQ=4096, SK=4096, D=64))
    assert plan.decision.split_k == 1 and not plan.decision.stream_k
    (why,) = [r.text for r in plan.decision.reasons if r.rule == rule]
    assert "@attention_d64 is not GEMM-like" in why and "nothing is cut" in why


@pytest.mark.parametrize("cut", [{"split_k": 3}, {"stream_k": True}])
def test_a_cut_that_does_not_run_is_named_nowhere(lowerings, cut) -> None:
    """Attention given split_k=3 (or stream_k=True) runs unsplit: its options
    said "-s3" in explain() and in the kernel's label, and its disk-cache key
    held the split, so the kernel that runs was compiled a second time for
    a cut it never makes. Its options now say what runs, and it shares the
    kernel compiled with no cut given."""
    extents = {"BH": 16, "SQ": 4096, "SK": 4096, "D": 64}
    plain = dispatcher("attention.mlir", "attention_d64").for_shape(**extents)
    d = dispatcher("attention.mlir", "attention_d64", **cut)
    spec = d.for_shape(**extents)
    assert spec.reduce is None  # the plain kernel's
    assert spec.plan.options == plain.plan.options
    assert spec.kernel.options == plain.kernel.options
    label = describe(plain.kernel.options)
    assert describe(spec.kernel.options) == label and "-s" not in label
    text = d.explain(**extents)
    assert f"options {label} (rules, disk cache):" in text
    (name,) = cut
    assert f"{name} = {plain.plan.options.as_dict()[name]!r} (given " in text


@pytest.mark.parametrize(
    ("source", "kernel", "extents", "split"),
    [
        ("gemm", "gemm_nt", {"M": 2048, "N": 2048, "K": 2048}, False),  # grid=
        (
            "two loops",
            "gemm_two_loops",
            {"M": 128, "N": 128, "K1": 8192, "K2": 8192},
            True,
        ),
    ],
    ids=["grid", "refused"],
)
def test_a_given_split_that_does_not_run_is_not_in_the_options(
    source, kernel, extents, split
) -> None:
    """split_k=4 on a call with grid= (one kernel, unsplit), and on a kernel
    the split-k pass refuses: the options named "-s4" for the kernel alone."""
    text = two_loop_gemm() if source == "two loops" else text_of("gemm.mlir", kernel)
    d = Dispatcher(text, kernel, tawa_xdsl.compiler.CompileOptions(split_k=4))
    spec = d.for_shape(split=split, **extents)
    assert spec.reduce is None and spec.plan.decision.split_k == 1
    assert not spec.plan.options.split_k and not spec.kernel.options["split_k"]
    assert "-s4" not in describe(spec.kernel.options)


def test_explain_after_a_call_with_a_grid_names_the_kernel_it_ran() -> None:
    """explain() of the last call looked its bucket up among the calls that
    may split: after a call with grid= (one kernel, unsplit) it described
    the split pair that call never ran."""
    d = dispatcher("gemm.mlir", "gemm_nt")
    spec = d.specialize(*gemm_args(128, 128, 8192), grid=(1, 1))
    assert spec.reduce is None and d.last is spec
    text = d.explain()
    assert "kernels run:" not in text and "nothing is split here" in text
    assert f"options {describe(spec.options)} (rules, " in text


@pytest.mark.parametrize("given", [{"ping_pong": True}, {"num_consumers": 2}])
def test_the_rules_weigh_only_tiles_the_given_consumers_share(given) -> None:
    """16 x 4096 x 4096 with ping_pong=True (two consumer warpgroups taking
    turns) or two consumers given: the wave model chose 64x96 tiles, which
    two warpgroups cannot share in 64-row slices; resolving dropped the tile
    (128x128 ran, explain() said 64x96) and kept the 8 stages counted for
    64x96: a call with grid= needed 256 KB of rings, refused by the
    lowering."""
    d = dispatcher("gemm.mlir", "gemm_nt", **given)
    extents = {"M": 16, "N": 4096, "K": 4096}
    spec = d.for_shape(**extents)
    rows = spec.kernel.options["block_m"] or 128
    assert rows % 128 == 0 and spec.plan.options.num_consumers == 2
    (wave,) = [r.text for r in spec.plan.decision.reasons if "wave" in r.rule]
    ran = f"{rows}x{spec.kernel.options['block_n'] or 128}"
    assert wave.startswith((f"tile {ran}", f"keeps tile {ran}"))
    assert "64x" not in wave.split("(")[0]
    d.for_shape(split=False, **extents)  # grid= given: the kernel unsplit


def test_a_pair_kernels_refusal_points_into_the_callers_file() -> None:
    """block_n=256 on a kernel that names no BN, at a shape the rules split:
    the partials kernel's refusal was located at line 2 of the pair's
    generated text ("<string>:2:3"), which the caller never saw; it points
    at the kernel in their file, as the unsplit call's does (the Dispatcher
    alone: compile() refuses the option at once, at the same kernel)."""
    file = str(KERNELS_DIR / "gemm_outside.mlir")
    text = Path(file).read_text()
    d = Dispatcher(text, "gemm_gelu_f16", CompileOptions(block_n=256), source_name=file)
    extents = {"M": 100, "N": 1000, "K": 8192}
    assert d.plan(d.key_for(**extents)).decision.split_k > 1
    with pytest.raises(OpDiagnostic) as unsplit:
        d.for_shape(split=False, **extents)
    assert str(unsplit.value).startswith(f"{file}:41:1: error: ")
    with pytest.raises(OpDiagnostic) as split:
        d.for_shape(**extents)
    assert str(split.value).startswith(f"{file}:41:1: error: ")
    # of the caller's kernel, not of the pair's @gemm_gelu_f16_split_k
    assert "@gemm_gelu_f16 does not name BN" in str(split.value)
    with pytest.raises(OpDiagnostic, match=rf"^{file}:41:1: error: .* name BN"):
        tawa_xdsl.compile(file, "gemm_gelu_f16", block_n=256)


@pytest.mark.parametrize(
    "extents",
    [{"M": 256, "N": 512, "K": 32768}, {"M": 3001, "N": 4999, "K": 4097}],
    ids=["split", "wide"],
)
def test_the_rules_weigh_only_tiles_the_given_stages_fit(lowerings, extents) -> None:
    """num_stages=8: the wave model chose 64x192 tiles (256 KB of rings at 8
    stages) at 256 x 512 x 32768 and kept the tuned 128x256 (384 KB) at
    3001 x 4999 x 4097, both refused by the lowering; it now weighs only
    tile shapes the given stages fit, and says so."""
    d = dispatcher("gemm.mlir", "gemm_nt", num_stages=8)
    spec = d.for_shape(**extents)
    assert spec.kernel.options["num_stages"] == 8
    assert d.for_shape(split=False, **extents).kernel.options["num_stages"] == 8
    assert "num_stages: 8 stages (given) do not fit 128x256 tiles" in d.explain(
        **extents
    )


def test_given_stages_are_weighed_against_all_they_fit() -> None:
    """num_stages=8 on a batched NN GEMM: no tile shape's tuned ring (at most
    160 KB) has 8 stages, so none was weighed and the tuned 128x256 (384 KB)
    ran; 64x128 tiles take 8 stages in 192 KB."""
    text = (Path(__file__).parent / "kernels" / "gemm_user.mlir").read_text()
    d = Dispatcher(text, "bgemm_nn", tawa_xdsl.compiler.CompileOptions(num_stages=8))
    spec = d.for_shape(B=3, M=16, N=6144, K=4096)
    assert (spec.kernel.options["block_m"], spec.kernel.options["block_n"]) == (64, 128)


def test_the_tile_the_wave_model_picks_is_the_tile_that_runs() -> None:
    """A residual as wide as the output leaves 128x256 tiles no room, so the
    tuned tile is 128x128; at 128 x 4096 x 4096 the wave model picks a
    64-row tile (64x128 then, 64x64 now), and the plan named only its rows:
    the tuning rules then widened the 64-row tile to 256 columns, and
    explain() said 64x128 for a kernel of 64x256 tiles."""
    text = (Path(__file__).parent / "kernels" / "gemm_residual.mlir").read_text()
    d = Dispatcher(text, "gemm_residual", tawa_xdsl.compiler.CompileOptions())
    plan = d.plan(d.key_for(M=128, N=4096, K=4096))
    (wave,) = [r.text for r in plan.decision.reasons if r.rule == "wave quantization"]
    assert wave.startswith("tile 64x64")
    assert (plan.options.block_m, plan.options.block_n) == (64, 64)
    assert plan.sources["block_n"] == "shape"


def test_reasons_name_tiles_rows_first() -> None:
    """block_n=256 given: the wave model's reason named the 64x256 tile it
    picked "256x64" (the given size first)."""
    d = dispatcher("gemm.mlir", "gemm_nn", block_n=256)
    plan = d.plan(d.key_for(M=16, N=4096, K=4096))
    (wave,) = [r.text for r in plan.decision.reasons if r.rule == "wave quantization"]
    assert (plan.options.block_m, plan.options.block_n) == (64, 256)
    assert wave.startswith("tile 64x256, ") and "256x64" not in wave


SWEEP = KERNELS_DIR / "gemm_sweep.mlir"


@pytest.mark.parametrize("cut", [{"split_k": 3}, {"stream_k": True}])
def test_a_cut_given_on_a_tile_without_a_rate_is_made(cut) -> None:
    """64 x 32 tiles have no rate in the wave model, so nothing is weighed:
    the tile runs as written and the split or stream as given (both were
    dropped, explain() saying "given 3, not run" and no reason, though the
    pass takes the kernel)."""
    text = (KERNELS_DIR / "gemm_outside5.mlir").read_text()
    d = Dispatcher(text, "gemm_64x32", CompileOptions(**cut))
    extents = {"M": 256, "N": 256, "K": 8192}
    spec = d.for_shape(**extents)
    assert spec.reduce is not None
    assert spec.plan.decision.split_k == cut.get("split_k", 1)
    assert spec.plan.decision.stream_k == cut.get("stream_k", False)
    rule = "split-K" if "split_k" in cut else "stream-K"
    (why,) = [r.text for r in spec.plan.decision.reasons if r.rule == rule]
    assert "no measured rate" in why
    assert "not run" not in d.explain(**extents)


def test_a_ring_of_one_slot_given_is_weighed() -> None:
    """num_stages=1 given: one load in flight per program (the stream model
    counted stages - 1 = 0 of them and divided by zero at the first call)."""
    d = dispatcher("gemm.mlir", "gemm_nt", num_stages=1)
    plan = d.plan(d.key_for(M=4096, N=4096, K=4096))
    assert plan.options.num_stages == 1
    assert any(r.rule == "wave quantization" for r in plan.decision.reasons)


@pytest.mark.parametrize(
    ("file", "kernel", "extents"),
    [
        ("attention.mlir", "attention_causal_d64", {"SQ": 200, "SK": 200}),
        ("attention_fp8.mlir", "attention_causal_d128_fp8", {"SQ": 2048, "SK": 2048}),
    ],
)
def test_a_given_reverse_x_keeps_the_causal_walk_off(file, kernel, extents) -> None:
    """Short (or FP8) causal attention walks its blocks in a persistent grid,
    which a reversed grid excludes: given reverse_x=True, the rules leave the
    walk off (they turned persistent on, and the pipeline refused the pair,
    naming reverse_x, the one option given)."""
    d = dispatcher(file, kernel, reverse_x=True)
    head = 64 if kernel.endswith("d64") else 128
    plan = d.plan(d.key_for(BH=2, D=head, **extents))
    assert plan.options.reverse_x and not plan.options.persistent
    assert not any(
        "walk" in r.text or "persistent grid" in r.text for r in plan.decision.reasons
    )
    assert d.for_shape(BH=2, D=head, **extents).kernel.ptx.strip()


@pytest.mark.parametrize(
    "given", [{"num_stages": 1}, {"mma_depth": 2, "num_stages": 2}]
)
def test_the_two_stage_overlap_gives_way_to_the_stages_given(given) -> None:
    """The tuned two-stage overlap holds mma_depth + 1 slots: where the stages
    given leave fewer, it is off (the pipeline refused the kernel, naming
    two-stage, which the caller never gave)."""
    d = dispatcher("attention.mlir", "attention_d64", **given)
    extents = {"BH": 32, "SQ": 4096, "SK": 4096, "D": 64}
    spec = d.for_shape(**extents)
    assert not spec.kernel.options["two_stage"]
    assert {k: spec.kernel.options[k] for k in given} == given
    assert "two_stage = False (default)" in d.explain(**extents)


@pytest.mark.parametrize(
    ("file", "kernel", "given", "extents"),
    [
        (
            "attention.mlir",
            "attention_causal_d128",
            {"persistent": True},
            {"BH": 64, "SQ": 4096, "SK": 4096, "D": 128},
        ),
        (
            "attention.mlir",
            "attention_d128",
            {"outer_stages": 3},
            {"BH": 64, "SQ": 4096, "SK": 4096, "D": 128},
        ),
        (
            SWEEP,
            "gemm_nn_f16out",
            {"outer_stages": 3},
            {"M": 4096, "N": 4096, "K": 4096},
        ),
        (  # two Q slots leave no room for two stages: Q keeps one
            "attention_d256.mlir",
            "attention_causal_d256",
            {"persistent": True},
            {"BH": 16, "SQ": 4096, "SK": 4096, "D": 256},
        ),
    ],
    ids=[
        "causal-persistent",
        "attention-outer3",
        "gemm-residual-outer3",
        "causal-d256-persistent",
    ],
)
def test_the_tuned_stages_leave_room_for_the_once_per_tile_slots_given(
    file, kernel, given, extents
) -> None:
    """A persistent grid keeps Q (a GEMM's residual) in an outer ring of
    outer_stages slots; the tuned stage count made room for one, so
    persistent=True given to causal attention, or outer_stages=3, overflowed
    shared memory ('the aref rings need 262224 bytes')."""
    text = file.read_text() if isinstance(file, Path) else text_of(file, kernel)
    d = Dispatcher(text, kernel, CompileOptions(**given))
    spec = d.for_shape(**extents)
    assert {k: spec.kernel.options[k] for k in given} == given
    assert spec.kernel.ptx.strip()


@pytest.mark.parametrize(
    ("kernel", "given", "tiles"),
    [
        ("gemm_64x64", {}, "the written sizes"),
        ("gemm_nt", {"block_m": 64}, "block_m=64 given"),
    ],
)
def test_ping_pong_given_on_64_row_tiles_is_refused_naming_it(
    kernel, given, tiles
) -> None:
    """Ping-pong needs two consumer warpgroups taking turns, which 64-row tiles
    cannot share: the refusal names ping_pong and the tile sizes, at the
    kernel (it was cooperative's, a pass a compile() caller never runs, and
    before that nvgpu_async.role_dispatch's)."""
    source = SWEEP if kernel == "gemm_64x64" else path("gemm.mlir")
    d = Dispatcher(
        source.read_text(),
        kernel,
        CompileOptions(ping_pong=True, **given),
        source_name=str(source),
    )
    with pytest.raises(OpDiagnostic) as refused:
        d.for_shape(M=256, N=256, K=512)
    assert re.match(
        rf"{source}:\d+:1: error: func.func: ping_pong=true given needs 2 "
        "consumer warpgroups",
        str(refused.value),
    )
    assert f"({tiles}): drop ping_pong or give 128-row tiles" in str(refused.value)
    with pytest.raises(OpDiagnostic, match="ping_pong=true given needs 2"):
        tawa_xdsl.compile(source, kernel, ping_pong=True, **given)


@pytest.mark.parametrize(
    ("file", "kernel"),
    [("gemm.mlir", "gemm_nt"), ("gemm_fp8.mlir", "gemm_fp8_tensorwise")],
)
def test_ping_pong_given_with_one_consumer_is_refused_naming_both(file, kernel) -> None:
    """One consumer warpgroup cannot take turns: compile() names both options
    (the refusal was role_dispatch's, telling a compile() caller to run the
    cooperative pass, at a split kernel's internal name)."""
    with pytest.raises(OpDiagnostic) as refused:
        tawa_xdsl.compile(path(file), kernel, ping_pong=True, num_consumers=1)
    assert re.search(
        r":\d+:1: error: func.func: ping_pong=true given needs 2 or 3 consumer "
        r"warpgroups taking turns, and num_consumers=1 given: drop one of them",
        str(refused.value),
    )


def test_the_tuned_width_leaves_room_for_the_stages_given() -> None:
    """block_m=64 and num_stages=5 next to a residual: the wave model keeps
    64x128 (64x256 holds no five stages), and the tuning rules no longer
    widen the tile to 64x256 behind its back (the rings overflowed, 237664
    bytes, and explain() named a width that did not run)."""
    d = Dispatcher(
        (KERNELS_DIR / "gemm_residual.mlir").read_text(),
        "gemm_residual",
        CompileOptions(block_m=64, num_stages=5),
    )
    extents = {"M": 4096, "N": 4096, "K": 4096}
    spec = d.for_shape(**extents)
    assert spec.kernel.options["block_n"] in (0, 128)  # as written: 128
    assert "keeps tile 64x128" in d.explain(**extents)


@pytest.mark.parametrize(
    ("m", "n", "k", "picked"),
    [
        (1024, 1024, 4096, (128, 64)),  # 64 tiles of 128x128: 128 of 128x64
        (256, 4096, 4096, (128, 64)),
        (64, 6144, 4096, (64, 64)),  # rows past M would be padding
        (128, 4096, 4096, (64, 64)),
    ],
)
def test_tall_narrow_tiles_only_over_more_rows_than_they_have(m, n, k, picked):
    """128x64 tiles give a mid-size output twice the programs of 128x128 at
    two consumers' rate (NOTES 3.54); over at most 128 rows the call waits on
    HBM and their padded MMAs lost to 64-row tiles (0.67-0.91x on the H200)."""
    d = dispatcher("gemm.mlir", "gemm_nn")
    plan = d.plan(d.key_for(M=m, N=n, K=k))
    tuned_rows = 128  # block_m 0: the kernel's own
    assert (plan.options.block_m or tuned_rows, plan.options.block_n) == picked
    considered = {(o["block_m"], o["block_n"]) for o in plan.decision.considered}
    assert ((128, 64) in considered | {picked}) == (m > 128)


@pytest.mark.parametrize(
    ("m", "narrow"), [(8, False), (16, False), (32, True), (128, True)]
)
def test_64x64_tiles_are_weighed_from_32_rows(m: int, narrow: bool) -> None:
    """64x64 tiles ran 1.03-1.07x 64x96 at M 32-128 (more programs for the
    same rows), but 0.86x at 16 x 6144 x 4096 and 0.95x at 8 x 4096 x 4096,
    where the call waits on HBM with the same weight bytes in flight (H200,
    NOTES 3.82): below `NARROW_TILE_MIN_M` rows they are not weighed."""
    d = dispatcher("gemm.mlir", "gemm_nt")
    plan = d.plan(d.key_for(M=m, N=4096, K=4096))
    picked = (plan.options.block_m, plan.options.block_n)
    weighed = {(o["block_m"], o["block_n"]) for o in plan.decision.considered}
    assert ((64, 64) in weighed | {picked}) == narrow == (m >= NARROW_TILE_MIN_M)
    assert (picked == (64, 64)) == narrow


def test_a_given_tall_tile_is_weighed_over_few_rows() -> None:
    """block_n=64 given on a 128-row kernel at M = 128: the rules leave 128x64
    out over so few rows, but a tile the caller gave is still weighed (and a
    split reckoned on it), not dropped as unmeasured."""
    d = dispatcher("gemm.mlir", "gemm_nt", block_n=64)
    plan = d.plan(d.key_for(M=128, N=512, K=16384))
    (wave,) = [r.text for r in plan.decision.reasons if r.rule == "wave quantization"]
    assert "128x64, K split" in wave  # weighed, and split
    assert {"block_m": 128, "block_n": 64} in plan.decision.considered


@pytest.mark.parametrize(
    ("m", "n", "k", "slow"),
    [(1, 4096, 4096, 8), (1, 1024, 8192, 32), (4, 2048, 8192, 12)],
)
def test_a_split_pays_for_each_slot_its_reduce_waits_on(m, n, k, slow) -> None:
    """Decode-sized GEMMs read the same bytes under any tile, so the split's
    cost decides: the reduce kernel waits on each slot in turn (ncu, NOTES
    3.60: 6.1 us over 4 slots, 8.3 over 8, for 145 KB). The picks stay below
    the `slow` slot counts the rules took before, which ran 0.75x, 0.42x and
    0.74x cuBLAS on the H200 where 3, 12 and 6 slots ran 0.89x, 0.79x, 0.89x."""
    more = split_overhead_us(m, n, 8) - split_overhead_us(m, n, 4)
    assert more == pytest.approx(4 * REDUCE_SLOT_US + 32 * m * n / HBM_BYTES_PER_US)
    d = dispatcher("gemm.mlir", "gemm_nt", swap_ab=False)  # swapped: uncut
    plan = d.plan(d.key_for(M=m, N=n, K=k))
    assert 1 < plan.decision.split_k < slow


@pytest.mark.parametrize(
    ("m", "given", "rows"),
    [(2, {}, 64), (64, {}, 64), (8, {"block_m": 128}, 128), (65, {}, None)],
    ids=str,
)
def test_an_output_of_one_warpgroups_rows_weighs_64_row_tiles(m, given, rows) -> None:
    """At M <= 64 a 128-row tile is a second warpgroup of padding MMAs: the
    64-row tiles stand in for the written 128x256 (which the 10% margin kept
    at 2 x 32000 x 4096, 0.82x the 64x256 tile on the H200, NOTES 3.59);
    a block_m the caller gave stays, and from 65 rows both heights are
    weighed."""
    d = dispatcher("gemm.mlir", "gemm_nt", swap_ab=False, **given)
    plan = d.plan(d.key_for(M=m, N=32000, K=4096))
    considered = {o["block_m"] for o in plan.decision.considered}
    picked = plan.options.block_m or 128
    if rows is None:
        assert {64, 128} <= considered | {picked}
    else:
        assert picked == rows and considered <= {rows}


@pytest.mark.parametrize("cut", [{}, {"split_k": 2}, {"stream_k": True}], ids=str)
def test_a_given_block_k_runs_split_and_streamed(cut) -> None:
    """block_k given to a GEMM that names BK, at a shape that splits (or
    with a cut given): the partials kernel takes it; the reduce kernel, with
    no K loop, does not (tile-shape refused the call: '@nn_f16_bias_res_
    split_k_reduce does not name BK')."""
    text = (KERNELS_DIR / "gemm_user.mlir").read_text()
    d = Dispatcher(text, "nn_f16_bias_res", CompileOptions(block_k=128, **cut))
    spec = d.for_shape(M=128, N=128, K=8192)
    assert spec.reduce is not None
    assert spec.kernel.options["block_k"] == 128
    assert not spec.reduce.options["block_k"]


def test_explain_describes_a_call_given_a_grid(lowerings) -> None:
    """explain(..., grid=) says what a call with that grid runs: one kernel,
    unsplit where the rules split K, on that grid; a grid the call refuses is
    refused alike (a persistent kernel's along y), and grid= alone describes
    no call. explain() of the last call says its grid."""
    d = dispatcher("gemm.mlir", "gemm_nt")
    extents = {"M": 128, "N": 128, "K": 8192}
    assert "(rules, K split 32 ways" not in d.explain(**extents)  # not compiled
    assert "split-K: 4 tiles fill 3% of a wave: K's 128 iterations split 32 ways\n" in (
        d.explain(**extents)
    )
    text = d.explain(**extents, grid=(4,))
    assert "\n  grid (4, 1, 1) given: one kernel, K not split; 4 programs\n" in text
    assert "split 32 ways, but nothing is split here" in text
    assert "kernels run" not in text and lowerings == []
    args = gemm_args(128, 128, 8192)
    spec = d.specialize(*args, grid=(4,))
    assert spec.reduce is None
    ran = d.explain()
    assert "grid (4, 1, 1) given: one kernel, K not split; 4 programs" in ran
    assert d.explain(*args, grid=(4,)) == ran.replace(
        "4 programs\n", "4 programs (without grid=, the stores give (2, 2, 1))\n"
    )
    big = {"M": 4096, "N": 4096, "K": 4096}  # persistent
    walks = d.explain(**big, grid=(7,))
    assert (
        "grid (7, 1, 1) given: one kernel, K not split; 7 persistent programs" in walks
    )
    with pytest.raises(KernelArgumentError, match=r"is persistent .* got \(4, 2\)"):
        d.explain(**big, grid=(4, 2))
    with pytest.raises(KernelArgumentError, match="describes a call with that grid"):
        d.explain(grid=(4,))
    with pytest.raises(KernelArgumentError, match="positive integers"):
        d.explain(M=0, N=128, K=64, grid=(0,))  # launches nothing: checked all the same


def test_explain_by_extents_plans_what_a_call_of_them_runs() -> None:
    """D = 64 is fixed by attention's types: a call's key has it, and the shape
    rules read it. `explain(BH=, SQ=, SK=)` (and `tawa-hopper-pipeline{shape=}`,
    through `shape_key`) left it out: no rule applied, and 192-row persistent
    tiles were shown where a call of that shape runs 64-row ones."""
    kernel = tawa_xdsl.compile(path("attention.mlir"), "attention_d64")
    arrays = [np.zeros((1, 512, 64), bfloat16) for _ in range(4)]
    call = dispatch_key(kernel.params, kernel._convert([*arrays, 0.125], 0))
    assert kernel.key_for(BH=1, SQ=512, SK=512) == call
    assert kernel.plan(call).options.block_m == 64
    explained = kernel.explain(BH=1, SQ=512, SK=512)
    assert explained == kernel.explain(*arrays, 0.125)
    assert "no shape rule applies" not in explained


def test_explain_says_which_extents_it_was_not_given() -> None:
    gemm = tawa_xdsl.compile(path("gemm.mlir"), "gemm_nt")
    explained = gemm.explain(M=4096, K=4096)
    assert "  N not given: the shape rules read every extent a call has" in explained
    assert "not given" not in gemm.explain(M=4096, N=4096, K=4096)


def test_inputs_tma_cannot_describe_are_copied_unless_named() -> None:
    """A decode GEMM whose weight B has an odd K (issue 16 item 4): each B
    tile is read by one program (M fits one tile row), but the producer's
    threads load slower than the copy (NOTES 3.80), so both inputs are
    copied; `explain` gives each input's reads and the verdict."""
    d = dispatcher("gemm.mlir", "gemm_nt")
    args = [device((8, 999)), device((4096, 999)), device((8, 4096))]
    plan = d.plan(d.key(*args))
    assert plan.options.thread_loads == ""
    why = str(plan.decision.reasons[-1])
    assert why.startswith("thread-loads: a: each tile read by ")
    assert "b: each tile read by 1 programs, synchronous loads, copied" in why
    assert "NOTES 3.80" in why
    spec = d.specialize(*args)
    assert d.realigned(spec, args) == [0, 1]
    text = d.explain(*args)
    assert "b: TMA cannot describe; copied into buffers" in text
    assert "loaded by the producer warpgroup's threads" not in text


@pytest.mark.parametrize(("given", "copied"), [("", [0, 1]), ("a,b", [])])
def test_thread_loads_given_overrule_the_rule(given: str, copied: list[int]) -> None:
    """`thread_loads` given: "" copies every input TMA cannot describe, names
    load those inputs in the kernel whatever the rule says."""
    d = dispatcher("gemm.mlir", "gemm_nt", thread_loads=given)
    args = [device((8, 999)), device((4096, 999)), device((8, 4096))]
    spec = d.specialize(*args)
    assert spec.options["thread_loads"] == given
    assert d.realigned(spec, args) == copied


def test_thread_loads_rule() -> None:
    """Synchronous loads never paid (NOTES 3.80); cp.async did where each tile
    is read by one or two programs (NOTES 3.85); each bound applies to its own
    kind of copies."""
    assert (THREAD_LOAD_MAX_READS, CP_ASYNC_MAX_READS) == (0, 2)
    assert not thread_loads_pay(1, asynchronous=False)
    assert thread_loads_pay(2, asynchronous=True)
    assert not thread_loads_pay(3, asynchronous=True)


@pytest.mark.parametrize("n", [1000, 1001])
def test_an_fp8_output_tma_cannot_describe_is_refused_naming_it(n) -> None:
    """An e4m3 output of N = 1000 or 1001 columns on the device (rows 1000 or
    1001 bytes apart): TMA cannot describe it and 8-bit float tiles are stored
    through TMA only. The call (and explain) is refused naming the argument
    and what to change; it went on to compile a register store and failed at
    the IR's store ('nvgpu_async.store_global: 8-bit float tiles are stored
    through TMA only'), while explain promised a register store."""
    d = dispatcher("gemm_fp8.mlir", "gemm_fp8_e4m3_out")

    def fp8(shape: tuple[int, int]) -> DeviceArray:
        return DeviceArray(ArrayView("f8E4M3FN", shape, (shape[1], 1)), 0x100000)

    args = [fp8((256, 4096)), fp8((n, 4096)), fp8((256, n)), 1.0, 1.0, 1.0]
    expected = (
        r"gemm_fp8_e4m3_out: argument 'c' \(f8E4M3FN, an output\) is laid out as "
        r"TMA cannot describe .*: 8-bit float outputs are stored through TMA only"
    )
    for call in (d.specialize, d.explain):
        with pytest.raises(KernelArgumentError, match=expected):
            call(*args)
    aligned = [fp8((256, 4096)), fp8((1024, 4096)), fp8((256, 1024)), 1.0, 1.0, 1.0]
    assert d.plan(d.key(*aligned)).options.tma_store
