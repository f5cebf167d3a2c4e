"""Shape rules: the options one problem shape calls for, decided without a search.

The tuning rules (`tuning.py`) choose options from a kernel's structure alone, as
measured on large problems; they cannot see that a 512 x 4096 GEMM has 64
128x256 tiles for 132 SMs. A `Dispatcher` (`dispatch.py`) calls `decide` once per
bucket of argument shapes with the kernel's `Structure` and the bucket's extents
(by `tile.dims` name); its choices sit between the options the caller gives and
the tuning rules (`CompileOptions.resolve`), and the tuning rules then count the
stages that fit the chosen tiles. Every rule below is a pure function of the
shape, the structure and the SM count, and cites what it rests on.

**The wave model.** A kernel launches P programs (output tiles, times the K
slices when K is split); the GPU runs one per SM at a time (our kernels take
most of an SM's shared memory), so they finish in ceil(P / SMs) waves, and a
last wave of P mod SMs programs leaves the other SMs idle (a persistent kernel
walks its tiles round-robin, so its busiest program has as many). A program's
K loop takes its tile's MMA work at the rate that tile shape runs, and the
whole loop cannot beat HBM streaming the operands once:

    time = PROGRAM_FIXED_US + loop_time_us(ceil(P / SMs) * I_P * t(BM, BN),
                                           (M + N) * K * operand bytes / stream rate)
    t(BM, BN) = TILE_ITERATION_US * BM * BN / (128 * 256) / rate(BM, BN)
    stream rate = min(GEMM_STREAM_BYTES_PER_US, min(P, SMs) * ring bytes in flight
                                                / MEMORY_ROUND_TRIP_US)

where I_P is a program's loop iterations, and a ring has the stages the
tuning rules give the tile (`Structure.depth`) and keeps all but one in
flight. With T output tiles of I iterations, a K split S ways runs T * S
programs of I / S iterations;
stream-K runs P = min(SMs, T * I) programs of ceil(T * I / P) iterations
each, one wave; both pay their partial sums' trip through memory
(`split_overhead_us`, S or the stream-K workspace's slots), and stream-K
must win by `STREAM_K_GAIN`.

The fixed cost favours fewer, larger tiles on short K loops. The HBM floor
rules problems of few output rows, whose tile shapes all read the same bytes:
there what counts is how many programs stream at once (a K split adds them)
against what a split costs. Tile widths that are not a multiple of 64 (96,
160) are candidates only where every loaded matrix tile's rows stay a width
the swizzled TMA path takes, and 8-bit outputs whole 128-byte rows
(`Structure.lowerable`).

The rates are relative and measured where they could be (`GEMM_RATES`,
`ATTENTION_RATES`). A rule leaves the tuned tile shape unless another candidate
costs less by more than `MARGIN`, the model's own error. The model knows nothing
of L2 reuse or of epilogue cost beyond the fixed one; `autotune=True` measures
what it cannot predict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from xdsl.dialects import func
from xdsl.ir import BlockArgument

from tawa_xdsl.analysis.shapes import KernelShape
from tawa_xdsl.analysis.uniformity import cluster_uniform, rank_varying
from tawa_xdsl.compiler import DEFAULTS, EXCLUSIVE, TILE_OPTIONS
from tawa_xdsl.dialects import tile
from tawa_xdsl.dialects.tile import element_bytes, is_fp8
from tawa_xdsl.dispatch_rules import (
    GEMM_STREAM_BYTES_PER_US,
    OFF_SECTOR_L2_BYTES_PER_US,
    PROGRAM_FIXED_US,
    STREAM_K_GAIN,
    STREAM_K_SLOWDOWN,
    SWAP_AB_BLOCK_N,
    SWAP_AB_MAX_M,
    SWAP_AB_RATE,
    SWAP_AB_STREAM_GAIN,
    TILE_ITERATION_US,
    given_splits,
    loop_time_us,
    off_sector_floor_us,
    split_count,
    split_overhead_us,
    stream_bytes_per_us,
    stream_k_programs,
    swap_block_m,
)
from tawa_xdsl.grid import GridInferenceError, grid_rule
from tawa_xdsl.partials import stream_k_slots
from tawa_xdsl.signature import params
from tawa_xdsl.target import NARROW_SWIZZLES, SM_COUNT, SWIZZLE_BYTES, WGMMA_ROWS
from tawa_xdsl.tuning import (
    ATTENTION_MOST_STAGES,
    GEMM_STAGES,
    default_options,
    equal_work,
    kind,
    main_loops,
    walk_stages,
)

MARGIN = 0.10
"""How much cheaper (as a fraction) the model must predict another tile shape to
be before a rule leaves the tuned one: the measured 128x128 rate spans 0.89 to
0.94 over six shapes, the 64-row rate rests on one measurement, and cuBLAS
itself moves by +-3% between runs of one binary (`benchmarks/NOTES.md` 3.10)."""

GEMM_RATES: dict[tuple[int, int], float] = {
    # the tuned tile: 632 TFLOP/s vs 500 for 128x128 at 8192^3 (NOTES 3.1)
    (128, 256): 1.0,
    # benchmarks/results/tuning_gemm.csv, best 128x128 configuration (4 stages)
    # over best 128x256 on the six shapes: 0.937 0.903 0.890 0.942 0.942 0.922;
    # each takes exactly twice the waves in 128x128 tiles (2048^3: 2 vs 1), so
    # the throughput ratio is the rate itself
    (128, 128): 0.92,
    # the other widths from benchmarks/results/tile_widths.csv (NOTES 3.47): each
    # tile shape forced on the H100 at rows where it and 128x256 each fill whole
    # waves, its rate the one that makes the model's time ratio the measured one
    # (768x3072x8192, 1024x2560x8192, 1536x1536x16384, 512x6144x4096)
    (128, 192): 0.94,  # 0.96, 0.95, 0.94, 0.89
    (128, 160): 0.85,  # 0.82, 0.87, 0.86; rows of 320 bytes: register stores
    # two consumer warpgroups of 64x64: 128 programs where 128x128 makes 64, at
    # a rate well above one warpgroup's 64x128 (results/tile_64.csv, NOTES
    # 3.54: fitted where it, 64x128, 128x96 and 128x128 split or not are each
    # timed at 10 rows of M 256-2048 on the H200; it won six, by 12-22% at
    # 1024x1024x4096, 512x2048x2048, 640x1280x2560 and 256x4096x4096)
    (128, 64): 0.60,
    # 64-row tiles have one consumer warpgroup: no second warpgroup's MMAs
    # overlap one's epilogue or its waits
    (64, 256): 0.78,  # 0.78 (1000^3), 0.82 (512x6144x4096), 0.72 (1024x2560x8192)
    (64, 192): 0.68,  # 0.73 (512x6144x4096), 0.64 (1024x2560x8192)
    (64, 160): 0.60,  # 0.59 (1024x2560x8192), 0.62 (768x3072x8192)
    (64, 128): 0.53,  # 0.60, 0.53, 0.34 (512x6144x4096, 1024x2560x8192, 1000^3)
    (64, 96): 0.48,  # 0.51 (512x6144x4096), 0.45 (768x3072x8192)
    # 3.82: fitted at 128x4096x4096, where it ran 1.04x 64x96 (1.07 at 64 x
    # 6144 x 4096, 1.03-1.04 at M 32, 48, 77; H200); see NARROW_TILE_MIN_M
    (64, 64): 0.35,
}
"""Throughput of GEMM tile shapes (BM, BN) per SM, relative to 128x256: the
MMA work of a program's K loop over its time, on problems where the loop's
time dominates."""

SHALLOW_RING_RATE = 0.875
"""A tile shape's rate, relative to its `GEMM_RATES` entry (measured with
`tuning.GEMM_STAGES` or more stages), where fewer stages fit next to the
epilogue's tiles: next to a residual as wide as the output, 128x256 with two
stages ran 0.91-0.95x 128x192 with three at four rows, 0.94 x 0.93 of the
rate of 128x256 with three; on a row the model ignored it for, it lost 15%
(H200, `benchmarks/NOTES.md` 3.65)."""

NARROW_TILE_MIN_M = 32
"""The fewest output rows for which the 64x64 tile is weighed. Below, a decode
GEMM waits on HBM with the same weight bytes in flight in either tile, and
64x64 ran 0.86x 64x96 at 16 x 6144 x 4096 and 0.95x at 8 x 4096 x 4096 (the
model's stream floor does not see why; H200, `benchmarks/NOTES.md` 3.82)."""

TILE_SHAPES = tuple(GEMM_RATES)
"""The GEMM tile shapes the wave model weighs. Not 128x96: its rows of 192
bytes are stored from registers, it ran at a rate of 0.70 at K = 4096 but
0.53 at 1000 x 1000 x 1000, and on no row of tile_widths.csv was it more than
2% ahead of the best other shape."""

ATTENTION_RATES: dict[int, float] = {
    # head dim 64 (tuning_attention.csv): 128-row blocks at 0.95, 0.91, 0.95, 0.90
    # of the 192-row ones (seq 4k and 16k, causal and not): 1 / 0.93
    192: 1.075,
    128: 1.0,
    # not measured for attention: one consumer warpgroup, as GEMM's 64-row tiles
    64: 0.62,
}
"""Throughput of attention query blocks of BM rows per SM, relative to 128."""

SHORT_CAUSAL_SEQ = 1024
"""Causal attention over at most this many keys runs best without the two-stage
overlap, on 128-row blocks, with 2 stages and the grid in order: D2-P1-W2 is the
fastest configuration of tuning_attention.csv at seq 1024 causal for both head
dims, 225.1 vs the tuned 211.3 TFLOP/s at d64 and 308.6 vs 289.1 at d128. A
query block there walks 4.5 key blocks on average, so the rotated loop's
prologue and epilogue are a large share of it. At 4096 the tuned options are
the fastest at d64 and within 4% at d128, so the rule stops at the measured
point. Measured at head dims 64 and 128 only (`SHORT_CAUSAL_HEAD_DIMS`)."""

SHORT_CAUSAL_HEAD_DIMS = (64, 128)
"""The head dims the short-causal rule was measured at (head dim 256 was not
tuned: its rows keep the tuned options)."""

SHORT_CAUSAL_WALK_HEAD_DIMS = (64,)
"""Head dims at which short causal attention also walks its blocks in a
persistent grid, longest first: a head-dim-64 block is cheap, so the tail of
short blocks that one program per tile leaves is a large share of the run.
Measured (NOTES 3.41, tawa/cuDNN): 0.757 against 0.672 at 512 keys, 0.761
against 0.739 at 1024; at head dim 128 it lost (0.652 against 0.806)."""

FP8_CAUSAL_WALK: dict[int, tuple[int, int]] = {
    64: (512, 4096),
    128: (512, 8192),
    256: (2048, 4096),
}
"""Per head dim, the key lengths over which FP8 causal attention walks its
blocks in a persistent grid, longest first. 8-bit wgmmas halve a block's time,
so the tail of short blocks that one program per tile leaves weighs more than
in bf16 (where the walk lost at head dim 128, NOTES 3.41); past these lengths
the tail is a small share and the plain grid in reverse order was as fast or
faster. Measured (NOTES 3.45, H100, TFLOP/s, walk against the tuned grid):
d128 294.6 -> 320.1 at 512 keys, 514.2 -> 565.4 at 2048, 653.9 -> 677.8 at
8192, slower at 16384; d64 353.3 -> 385.9 at 2048, 415.9 -> 437.1 at 4096;
d256 635.4 -> 672.9 at 2048, 738.3 -> 748.8 at 4096, slower at 512, 1024
and 8192."""

ATTENTION_WALK: dict[int, tuple[int | None, int | None]] = {
    64: (None, None),
    80: (2048, 512),
    96: (2048, 512),
    128: (2048, 512),
    256: (2048, 0),
}
"""Per head dim, the longest key length (causal, not causal; None: any) at
which 16-bit attention walks its query blocks in a persistent grid that takes
them from the tile counter (`ATTENTION_WALK_OPTIONS`). A block's fixed work
(loading Q, filling the ring, the epilogue) is then done under the previous
block's loop, with Q in two slots, and the counter ends the walk without the
tail a static order leaves where blocks differ in work (causal); to make room
for Q's second slot the walk gives up the two-stage overlap and a third stage,
which pay where a block's loop is long. Measured on the H200 against cuDNN
(NOTES 3.74, tawa/cuDNN, the tuned options -> the walk): d128 causal 512 keys
0.78 -> 0.96-0.98, 1024 0.87 -> 0.99, 2048 0.95-0.97 -> 0.99, but 4096 1.01
-> 0.98 and 16384 1.08 -> 0.96; d128 not causal 512 0.90-0.92 -> 0.97-0.99,
1024 0.94 -> 0.95 (lost on a grouped-query row), 2048 1.00 -> 0.96; d64 every
row measured, 512 to 16384 keys, causal or not (0.86 -> 0.96 at 2048 causal,
1.08 -> 1.13 at 16384); d80 causal 1024 0.97 -> 1.08, 4096 1.12 -> 1.10; d96
causal 512 0.91 -> 1.13, 2048 1.07 -> 1.09, not causal 1024 1.07 -> 1.08,
4096 1.10 -> 1.06. Head dim 256 has no room for Q's second slot and walks
with Q in one slot, causal to 2048 keys (NOTES 3.83: 0.90 -> 0.96 at 512 keys,
0.92 -> 0.96 at 1024 and 2048, even at 4096 and 8192, and 0.925 at 16384 where
the rules' grid ran 1.02 in 3.81; not causal it keeps its static persistent
grid, the walk not measured there); FP8 has its own table."""

ATTENTION_WALK_OPTIONS: dict[str, Any] = {
    "persistent": True,
    "dynamic_tiles": True,
    "longest_first": False,
    "outer_stages": 2,
    "two_stage": False,
    "num_stages": 2,
}
"""The options of `ATTENTION_WALK`'s walk. The counter hands out the blocks in
id order: longest first lost at head dim 64, causal, 1024 keys (0.85 against
0.90 of cuDNN, NOTES 3.74) and tied at 512."""

FP8_ATTENTION_WALK: dict[int, tuple[int | None, int | None]] = {
    64: (2048, None),
    128: (2048, None),
    256: (1024, 0),
}
"""`ATTENTION_WALK` for FP8 attention, whose walk keeps the stages and the
two-stage overlap its other rules give (`FP8_ATTENTION_WALK_OPTIONS`): an
8-bit K/V ring leaves room for Q's second slot next to three stages. Measured
on the H200 (NOTES 3.76, TFLOP/s, the tuned options -> the walk): d128 not
causal 515 -> 610 at 512 keys, 668 -> 738 at 2048, 746 -> 783 at 16384;
causal 369 -> 380 at 512, 481 -> 499 at 1024, 591 -> 594 at 2048; d64 not
causal 408 -> 462 at 1024, causal 393 -> 412 at 2048; d256 causal 515 -> 565
at 1024. Lengths not measured (causal past 2048, d256 not causal, d96) keep
their rules."""

FP8_ATTENTION_WALK_OPTIONS: dict[str, Any] = {
    "persistent": True,
    "dynamic_tiles": True,
    "outer_stages": 2,
}
"""The options of `FP8_ATTENTION_WALK`'s walk, with the stages that fit (up to
attention's 3) next to Q's two slots and the tickets."""

ATTENTION_WALK_GIVEN = frozenset(
    {*ATTENTION_WALK_OPTIONS, "reverse_x", "cluster", "ping_pong", "mma_depth"}
)
"""Options which, given, keep the walk off: its own (it is taken whole or not
at all, so a given stage count never meets Q's second slot) and those it
excludes or was not measured with."""

OPTION_OF = dict(TILE_OPTIONS)
"""The option that sizes each tile dimension name ("BM": "block_m", ...)."""

Splitter = Callable[[int, int, int, int, int, int, int], int]
"""How many ways to split K for (M, N, K, BM, BN, BK, SMs); 1: not at all
(`dispatch_rules.split_count` is the rule)."""

SPLIT_PENDING = (
    "nothing is split here: compile()'s calls split K (without grid=); the "
    "CLI lowers the kernel it is given (run split-k first)"
)
"""Why `decide` splits nothing unless given a splitter."""

CLUSTERS_UNSTREAMED = "off: clusters (cluster > 1) share tiles stream-K splits"
"""Why K is never streamed with clusters given."""


@dataclass(frozen=True)
class Axis:
    """One dimension a kernel tiles: its `tile.dims` name ("" when unnamed), the
    tile dimension sizing it (`tile-shape`'s "BM", "BN", "BK"; "" when fixed)
    and the tile's extent along it as written."""

    dim: str
    tile: str
    size: int


@dataclass(frozen=True)
class Structure:
    """What the shape rules read off a tile kernel, once per kernel.

    `output` are the axes of the first store's tensor, when the grid is one
    program per stored box along them (`grid.grid_rule`: every example), else
    empty (the rules then know no tile count); `loop` the dimension the first
    loading loop walks (K for a GEMM, the keys for attention), read from the
    load coordinate that is its induction variable; `tuned` the options of the
    tuning rules; `tunable` the tile dimension names `tile-shape` can resize."""

    name: str
    kind: str
    output: tuple[Axis, ...]
    loop: Axis | None
    equal_work: bool
    tuned: Mapping[str, Any]
    stages: Callable[[frozenset[tuple[str, int]], bool], int] = field(compare=False)
    """The ring stages the tuning rules give the kernel's tiles under the given
    sizes (by tile name), or the most that fit: `depth`, `room`."""
    tunable: frozenset[str] = field(default_factory=frozenset)
    fp8: bool = False
    """Its dots read 8-bit floats."""
    operand_bytes: int = 2
    """Bytes per element of the operands its main loop loads (the widest)."""
    matrix_loads: tuple[tuple[Axis, int], ...] = ()
    """Per matrix tile it loads from a parameter: the box axis along its rows
    (the innermost) and the element's bytes."""
    byte_stores: tuple[Axis, ...] = ()
    """Per 8-bit matrix tile it stores to a parameter: the box axis along its
    rows."""
    clusterable: bool = False
    """Some load is the same in every block of a cluster along x (`cluster`
    would multicast it)."""
    walk_stages: Callable[[frozenset[tuple[str, int]], int], int] = field(
        default=lambda sizes, outer: 0, compare=False
    )
    """The ring stages that fit under the given sizes (by tile name) in the
    persistent walk from the tile counter with that many outer (Q) slots
    (`tuning.walk_stages`)."""
    swap_refusal: str | None = "not a GEMM"
    """Why `swap-operands` refuses the kernel (`swap_ab`), None when it takes
    it (a GEMM's only)."""
    producer_transposes: bool = False
    """A dot reads an 8-bit loaded tile as its B operand K x N (MN-major: V as
    stored), which the producer's threads transpose (`transpose_copy`): they
    work in lock step, which the tile counter's walk does not take."""

    @classmethod
    def of(cls, kernel: func.FuncOp) -> Structure:
        """Read off `kernel` (tile IR, as written)."""
        shape = KernelShape(kernel)
        ps = params(kernel)

        def written(desc: BlockArgument, i: int) -> Axis:
            """Axis `i` of a descriptor parameter's box."""
            named = shape.names.get(shape.dims.find((desc, i)))
            dims = ps[desc.index].dims
            return Axis(
                dims[i] if dims else "",
                named[0] if named else "",
                shape.resized(desc, {})[i],
            )

        stores = [o for o in kernel.walk() if isinstance(o, tile.StoreOp)]
        output: tuple[Axis, ...] = ()
        if stores and isinstance(stores[0].desc, BlockArgument):
            desc = stores[0].desc
            output = tuple(written(desc, i) for i in range(len(stores[0].indices)))
            try:
                rules = grid_rule(kernel)
            except GridInferenceError:
                rules = []
            if not rules or any(  # programs are not one per stored box
                r.block_arg >= 0 or r.arg != desc.index or r.block != output[r.dim].size
                for r in rules
            ):
                output = ()
        loop = None
        loops = main_loops(kernel)
        if loops:
            induction = loops[0].body.block.args[0]
            loop = next(
                (
                    written(o.desc, i)
                    for o in loops[0].body.block.ops
                    if isinstance(o, tile.LoadOp) and isinstance(o.desc, BlockArgument)
                    for i, index in enumerate(o.indices)
                    if index is induction
                ),
                None,
            )
        matrices = [
            (o.desc, element_bytes(o.desc.type.element_type))
            for o in kernel.walk()
            if isinstance(o, tile.LoadOp)
            and isinstance(o.desc, BlockArgument)
            and len(o.result.type.get_shape()) >= 2
        ]
        byte_matrices = [
            o.desc
            for o in stores
            if isinstance(o.desc, BlockArgument)
            and len(o.value.type.get_shape()) >= 2
            and element_bytes(o.desc.type.element_type) == 1
        ]
        looped = [
            element_bytes(o.desc.type.element_type)
            for o in (loops[0].body.block.ops if loops else ())
            if isinstance(o, tile.LoadOp)
        ]

        loads = [o for o in kernel.walk() if isinstance(o, tile.LoadOp)]
        varying = rank_varying(kernel)

        @cache
        def stages(sizes: frozenset[tuple[str, int]], deepest: bool) -> int:
            ring = {"ring_bytes": None} if deepest else {}
            tuned = default_options(kernel, dict(sizes), **ring)
            return tuned.get("num_stages", DEFAULTS.num_stages)

        @cache
        def walk(sizes: frozenset[tuple[str, int]], outer: int) -> int:
            return walk_stages(kernel, dict(sizes), outer)

        return cls(
            kernel.sym_name.data,
            kind(kernel),
            output,
            loop,
            equal_work(kernel),
            default_options(kernel),
            stages,
            frozenset(name for name, _ in shape.names.values()),
            any(
                isinstance(o, tile.DotOp) and is_fp8(o.lhs.type.element_type)
                for o in kernel.walk()
            ),
            max(looped, default=2),
            tuple(
                (written(desc, len(desc.type.get_shape()) - 1), size)
                for desc, size in matrices
            ),
            tuple(written(d, len(d.type.get_shape()) - 1) for d in byte_matrices),
            any(cluster_uniform(o, varying) for o in loads),
            walk,
            _swap_refusal(kernel, shape) if kind(kernel) == "gemm" else "not a GEMM",
            any(
                isinstance(o, tile.DotOp)
                and isinstance(o.rhs.owner, tile.LoadOp)
                and is_fp8(o.rhs.type.element_type)
                for o in kernel.walk()
            ),
        )

    def block(self, axis: Axis, sizes: Mapping[str, int]) -> int:
        """The tile's extent along `axis` under `sizes` (by tile name), else as
        the tuning rules size it, else as written."""
        if not axis.tile:
            return axis.size
        if axis.tile in sizes:
            return sizes[axis.tile]
        return self.tuned.get(OPTION_OF[axis.tile]) or axis.size

    def depth(self, sizes: Mapping[str, int]) -> int:
        """The stages of the kernel's rings under `sizes` (by tile name), as the
        tuning rules count them (the fewer tiles, the more fit)."""
        return self.stages(frozenset(sizes.items()), False)

    def room(self, sizes: Mapping[str, int]) -> int:
        """The most stages the kernel's rings take under `sizes` (up to
        `tuning.GEMM_MOST_STAGES` for a GEMM): what a given count must not
        exceed."""
        return self.stages(frozenset(sizes.items()), True)

    def lowerable(self, sizes: Mapping[str, int]) -> bool:
        """Whether the lowering takes the kernel's tiles under `sizes`: every
        matrix tile it loads has rows the swizzled TMA path takes (32 or 64
        bytes, or whole 128-byte rows: `kernel_plan`), and every 8-bit matrix
        tile it stores whole 128-byte rows (8-bit tiles are stored through TMA
        only)."""
        loads = all(
            (row := self.block(axis, sizes) * size) in NARROW_SWIZZLES
            or row % SWIZZLE_BYTES == 0
            for axis, size in self.matrix_loads
        )
        return loads and all(
            self.block(axis, sizes) % SWIZZLE_BYTES == 0 for axis in self.byte_stores
        )

    @property
    def rows(self) -> Axis | None:
        """The output axis of the stored tile's rows (a GEMM's M, attention's
        queries): a stored tile is 2-D, on the box's last two axes."""
        return self.output[-2] if len(self.output) >= 2 else None

    @property
    def cols(self) -> Axis | None:
        return self.output[-1] if len(self.output) >= 2 else None

    def tuned_size(self, name: str) -> int:
        """Tile dimension `name` as the tuning rules size it (else as written)."""
        axes = (*self.output, *((self.loop,) if self.loop else ()))
        return next(self.block(a, {}) for a in axes if a.tile == name)

    def tiles(self, extents: Mapping[str, int], sizes: Mapping[str, int]) -> int | None:
        """Output tiles (programs of the plain grid) for these extents; None when
        the grid is not one program per tile, or an output dimension has no
        name or no extent here."""
        if not self.output:
            return None
        count = 1
        for a in self.output:
            if a.dim not in extents:
                return None
            count *= -(-extents[a.dim] // self.block(a, sizes))
        return count

    def iterations(self, extents: Mapping[str, int], sizes: Mapping[str, int]) -> int:
        """Iterations of the main loop (1 when its dimension is unknown here)."""
        if self.loop is None or self.loop.dim not in extents:
            return 1
        return max(1, -(-extents[self.loop.dim] // self.block(self.loop, sizes)))


@dataclass(frozen=True)
class Reason:
    """Why a rule chose what it chose (or left the tuned choice): `rule` names
    it, `text` gives the numbers."""

    rule: str
    text: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.text}"


@dataclass(frozen=True)
class Decision:
    """The shape rules' choices for one problem: options (the "shape" layer of
    `CompileOptions.resolve`), how many ways K is split, the reasons, and the
    other tile shapes the wave model weighed (as options: what autotuning
    tries besides the choice)."""

    options: Mapping[str, Any]
    reasons: tuple[Reason, ...]
    split_k: int = 1
    considered: tuple[Mapping[str, int], ...] = ()
    stream_k: bool = False
    """Whether K is streamed: the kernel runs as its `stream-k` pair."""
    predicted_us: float | None = None
    """The wave model's time for the chosen launch (GEMM), operands aligned."""


@dataclass(frozen=True)
class Candidate:
    """One tile shape under the wave model: unsplit, K split `splits` ways, or
    streamed (`streamed` programs share the units; `splits` is then the
    workspace's slot count)."""

    sizes: Mapping[str, int]
    tiles: int
    splits: int
    waves: int
    cost: float
    streamed: int = 0
    in_us: bool = False
    """Whether `cost` is a predicted time in microseconds (GEMM), not a
    relative one (attention)."""

    @property
    def programs(self) -> int:
        return self.streamed or self.tiles * self.splits

    def label(self) -> str:
        shape = "x".join(str(v) for v in self.sizes.values()) or "as written"
        if self.streamed:
            return f"{shape}, stream-K ({_count(self.splits, 'slot')})"
        split = f", K split {self.splits} ways" if self.splits > 1 else ""
        return f"{shape}{split}"


def waves(programs: int, sms: int) -> int:
    return -(-programs // sms)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


@dataclass
class _Choice:
    """What one kind's rules chose: options, reasons, the K split (or stream),
    and the other tile shapes they weighed (as options)."""

    options: dict[str, Any] = field(default_factory=dict)
    reasons: list[Reason] = field(default_factory=list)
    splits: int = 1
    others: list[dict[str, int]] = field(default_factory=list)
    programs: int | None = None
    """The programs of the chosen launch, when the rules counted them."""
    stream: bool = False
    predicted_us: float | None = None


def decide(
    structure: Structure,
    extents: Mapping[str, int],
    given: Mapping[str, Any] | None = None,
    sms: int = SM_COUNT,
    splitter: Splitter | None = None,
    off_sector: tuple[bool, bool] = (False, False),
) -> Decision:
    """The shape rules for `structure` on a problem of `extents` (by dimension
    name; the dispatcher passes each bucket's upper end) over `sms` SMs. Options
    in `given` are the caller's: no rule chooses them, and a tile size given
    is the only candidate for it. `splitter` chooses the K split of each tile
    shape; without one nothing is split or streamed (`SPLIT_PENDING`), and the
    reasons say what `split_count` would have done. With one, a GEMM may run
    as its stream-K pair (`_stream_k_rule`; `given["stream_k"]` False: never,
    True: always). `off_sector`: whether a GEMM's row operand and its column
    operand are read in place off the sector grid; its tiles are then weighed
    against L2's ceiling for such reads (`dispatch_rules.off_sector_floor_us`)."""
    given = given or {}
    swap = _swap_rule(structure, extents, given, sms)
    if swap is not None and given.get("swap_ab"):
        choice = swap  # no K cut: the pair's kernels store what swap-operands does not
    elif structure.kind == "gemm":
        choice = _gemm_tiles(structure, extents, given, sms, splitter, off_sector)
        if swap is not None:
            choice = _weigh_swap(choice, swap)
    elif structure.kind == "attention":
        choice = _attention(structure, extents, given, sms)
    else:
        choice = _Choice()
    if structure.kind != "gemm":
        choice.reasons += _not_a_gemm(structure, given)
    sizes = {  # the tiles the kernel will have: chosen here or given
        n: v
        for n, o in OPTION_OF.items()
        if (v := choice.options.get(o) or given.get(o))
    }
    tiles = structure.tiles(extents, sizes)
    if tiles is not None:
        programs = choice.programs or tiles * choice.splits
        choice.reasons += _persistent(structure, programs, given, sms, choice.options)
    if not choice.reasons:
        choice.reasons.append(
            Reason(
                "none",
                "no shape rule applies (an extent the rules read is unknown: not "
                "given, or not named by tile.dims; or the kernel is neither "
                "GEMM- nor attention-like)",
            )
        )
    return Decision(
        choice.options,
        tuple(choice.reasons),
        choice.splits,
        tuple(choice.others),
        choice.stream,
        choice.predicted_us,
    )


def _swap_refusal(kernel: func.FuncOp, shape: KernelShape) -> str | None:
    """Why the rules do not swap `kernel`'s operands (`swap-operands` refuses
    it, or its tiles' rows and columns are not named, so the rules could not
    size the swapped tile), or None."""
    from tawa_xdsl.compiler import swapped_kernel
    from tawa_xdsl.diagnostics import OpDiagnostic

    if not {"BM", "BN"} <= {name for name, _ in shape.names.values()}:
        return "the kernel does not name its tile rows and columns BM, BN (tile.box)"
    try:
        swapped_kernel(kernel)
    except OpDiagnostic as e:
        return e.message
    return None


def _swap_rule(
    structure: Structure,
    extents: Mapping[str, int],
    given: Mapping[str, Any],
    sms: int,
) -> _Choice | None:
    """Whether a GEMM's operands may be swapped (`swap_ab`): as given, else at
    M <= `SWAP_AB_MAX_M` where nothing refuses it, on a tile of M rounded up to
    8 (`swap_block_m`) by `SWAP_AB_BLOCK_N` weight rows (the sizes not given,
    of the tiles the kernel names), K never cut (the split pair's kernels would
    be swapped apart). A choice turning it on, with the wave model's time
    (`_swapped_us`) where the rules are to weigh it against the unswapped
    pick, else one with only the reason it is off; None for a kernel that is
    not a GEMM or a problem whose M is unknown here."""
    rows = structure.rows
    if structure.kind != "gemm" or rows is None or rows.dim not in extents:
        return None
    m, asked = extents[rows.dim], given.get("swap_ab")
    choice = _Choice()
    held = _swap_held(given)
    if asked is False or (asked is None and held):
        why = "swap_ab=False given" if asked is False else f"{held} given"
        choice.reasons.append(Reason("swap-ab", f"off: {why}"))
        return choice
    if asked is None and structure.swap_refusal is not None:
        text = f"off: {structure.swap_refusal}"
        choice.reasons.append(Reason("swap-ab", text))
        return choice
    if asked is None and m > SWAP_AB_MAX_M:
        text = f"off: M = {m} > SWAP_AB_MAX_M = {SWAP_AB_MAX_M}"
        choice.reasons.append(Reason("swap-ab", text))
        return choice
    sizes = {"block_m": swap_block_m(m), "block_n": SWAP_AB_BLOCK_N}
    named = {OPTION_OF[n] for n in structure.tunable if n in OPTION_OF}
    choice.options = {o: v for o, v in sizes.items() if o not in given and o in named}
    if asked is None:
        choice.options["swap_ab"] = True
    cols = structure.cols
    assert cols is not None  # a GEMM's stored tile is 2-D
    bm = given.get("block_m") or choice.options.get("block_m") or rows.size
    bn = given.get("block_n") or choice.options.get("block_n") or cols.size
    choice.predicted_us = _swapped_us(structure, extents, given, sms, bm, bn)
    why = "swap_ab=True given" if asked else f"M = {m} <= SWAP_AB_MAX_M"
    choice.reasons.append(
        Reason(
            "swap-ab",
            f"operands swapped ({why}): C^T = B A^T on {bn} weight rows (wgmma's "
            f"M side) by {bm} rows of A (its N side), stored transposed from "
            "registers; K is not cut",
        )
    )
    return choice


SWAP_HELD_BY = (
    "block_m",
    "block_n",
    "num_consumers",
    "ping_pong",
    "num_stages",
    "cluster",
)
"""Options that, given, keep the rules from swapping operands on their own:
tile sizes and warpgroups the caller chose for the kernel as written (two
consumers, ping-pong, 8 stages or clusters of two do not fit or do not mean
the same on one warpgroup's 64 weight rows)."""


def _swap_held(given: Mapping[str, Any]) -> str | None:
    """The option given that keeps the rules from swapping (a K cut, which the
    swapped GEMM does not take, or one of `SWAP_HELD_BY`), or None."""
    if (given.get("split_k") or 0) > 1:
        return f"split_k={given['split_k']}"
    if given.get("stream_k"):
        return "stream_k=True"
    held = next((o for o in SWAP_HELD_BY if given.get(o)), None)
    return None if held is None else f"{held}={given[held]!r}"


def _swapped_us(
    structure: Structure,
    extents: Mapping[str, int],
    given: Mapping[str, Any],
    sms: int,
    block_m: int,
    block_n: int,
) -> float | None:
    """The wave model's time for the swapped GEMM, uncut, on `block_n` weight
    rows by `block_m` rows of A: its K loops at `SWAP_AB_RATE`, the operands'
    stream as any tile shape's (`stream_bytes_per_us`: the swapped tile's
    programs and stages, each slot's weight rows) but `SWAP_AB_STREAM_GAIN`
    faster per program, up to HBM's `GEMM_STREAM_BYTES_PER_US`; None where
    an extent is unknown."""
    rows, cols, loop = structure.rows, structure.cols, structure.loop
    assert rows is not None and cols is not None  # a GEMM (`_swap_rule`)
    if loop is None or loop.dim not in extents or cols.dim not in extents:
        return None
    sizes = {t: b for t, b in ((rows.tile, block_m), (cols.tile, block_n)) if t}
    tiles = structure.tiles(extents, sizes)
    if tiles is None:
        return None
    m, n, k = (extents[a.dim] for a in (rows, cols, loop))
    stages = given.get("num_stages") or structure.depth(sizes)
    k_loops = waves(tiles, sms) * structure.iterations(extents, sizes)
    k_loops *= TILE_ITERATION_US * block_m * block_n / (128 * 256) / SWAP_AB_RATE
    step = structure.block(loop, sizes) * structure.operand_bytes
    rate = stream_bytes_per_us(min(tiles, sms), stages, min(block_n, n) * step)
    rate = min(GEMM_STREAM_BYTES_PER_US, SWAP_AB_STREAM_GAIN * rate)
    floor = (m + n) * k * structure.operand_bytes / rate
    return PROGRAM_FIXED_US + loop_time_us(k_loops, floor)


def _weigh_swap(unswapped: _Choice, swap: _Choice) -> _Choice:
    """The rules' swapped choice where the wave model predicts it faster than
    the unswapped pick (split, streamed or whole: the swapped GEMM runs
    uncut), else the unswapped one; the reasons say which and by how much."""
    if swap.predicted_us is None or unswapped.predicted_us is None:
        unswapped.reasons += [r for r in swap.reasons if r.text.startswith("off")]
        if swap.options:
            why = "the wave model has no time for one of the forms here"
            unswapped.reasons.append(Reason("swap-ab", f"off: {why}"))
        return unswapped
    cut = f", K split {unswapped.splits} ways" if unswapped.splits > 1 else ""
    cut = ", K streamed" if unswapped.stream else cut
    times = (
        f"{swap.predicted_us:.1f} us swapped (uncut) against "
        f"{unswapped.predicted_us:.1f} us unswapped{cut}"
    )
    if swap.predicted_us < unswapped.predicted_us:
        swap.reasons.append(Reason("swap-ab", f"the wave model predicts {times}"))
        return swap
    text = f"off: the wave model predicts {times}"
    unswapped.reasons.append(Reason("swap-ab", text))
    return unswapped


def _not_a_gemm(structure: Structure, given: Mapping[str, Any]) -> list[Reason]:
    """Why a K split or stream given to a kernel that is not GEMM-like does
    nothing (the passes cut a GEMM's K loop)."""
    asked = []
    if (given.get("split_k") or 0) > 1:
        asked.append(("split-K", f"split_k={given['split_k']}"))
    if given.get("stream_k"):
        asked.append(("stream-K", "stream_k=True"))
    return [
        Reason(
            rule,
            f"{text} given, but @{structure.name} is not GEMM-like (a K loop of "
            "dots over loaded tiles): nothing is cut",
        )
        for rule, text in asked
    ]


def _wave_choice(
    candidates: list[Candidate], what: str, sms: int, choice: _Choice
) -> Candidate:
    """The first candidate (what the kernel gets without this rule) unless
    another costs less by more than `MARGIN`; the reason lists them all, and the
    others go to `choice.others`."""
    tuned, best = candidates[0], min(candidates, key=lambda c: c.cost)
    pick = best if best.cost < tuned.cost * (1 - MARGIN) else tuned
    table = "; ".join(_row(c, sms, tuned) for c in candidates)
    if pick is tuned:
        verdict = f"keeps {what} {tuned.label()}"
    else:
        verdict = (
            f"{what} {pick.label()}, predicted {tuned.cost / pick.cost:.2f}x "
            f"faster than {tuned.label()}"
        )
    choice.reasons.append(Reason("wave quantization", f"{verdict} ({table})"))
    choice.others += [
        {OPTION_OF[name]: size for name, size in c.sizes.items()}
        for c in candidates
        if c is not pick
    ]
    return pick


def _off_sector_rule(
    pick: Candidate, floored: list[Candidate], choice: _Choice
) -> Candidate:
    """Inputs read in place off the sector grid, a narrow pick (more operand
    bytes per MMA than 128x128): the pick, unless another candidate is
    predicted faster by more than `MARGIN` once every candidate's operand rows
    pass through L2 no faster than such rows allow
    (`dispatch_rules.off_sector_floor_us`). The floor is a coarse model: it
    over-weighs width between wide tiles (128x192 ran 1.04x 128x256 at 3000 x
    3000 x 1000 where it predicts 0.93x; from 128x128 to 128x192 it lost 6% at
    1004 x 1965 x 1528), so only narrow picks are weighed against it (H200,
    `benchmarks/NOTES.md` 3.63: of 14 such rows changed, 13 won or tied, by up to
    1.22x; one lost 8.5%)."""
    same = next(c for c in floored if c.sizes == pick.sizes and c.splits == pick.splits)
    best = min(floored, key=lambda c: c.cost)
    if best.cost < same.cost * (1 - MARGIN):
        verdict = (
            f"tile {best.label()}, predicted {same.cost / best.cost:.2f}x faster "
            f"than {pick.label()} ({best.cost:.1f} against {same.cost:.1f} us)"
        )
        pick = best
    else:
        verdict = f"keeps tile {pick.label()} (no tile predicted {MARGIN:.0%} faster)"
    choice.reasons.append(
        Reason(
            "off-sector",
            f"inputs read in place off the sector grid, through L2 at "
            f"{OFF_SECTOR_L2_BYTES_PER_US / 1e6:.1f} TB/s at most: {verdict}",
        )
    )
    return pick


CLUSTER_SHARED = 2
"""Blocks of the cluster the off-sector rule gives a GEMM (`_multicast_rule`)."""


def _multicast_rule(alone: Candidate, paired: Candidate, choice: _Choice) -> bool:
    """Inputs read in place off the sector grid: whether to run the pick in
    clusters of `CLUSTER_SHARED` along x, whose TMA multicast reads each
    column-operand tile from L2 once for the cluster, predicted faster by
    more than `MARGIN` under the L2 floor. Measured on the H200 with the
    picks forced in clusters of two (`benchmarks/NOTES.md` 3.64): 1.09-1.30x
    on seven shapes whose picks the floor bounds (4096 x 4096 x 3000 0.75 ->
    0.97 of cuBLAS), 0.90-0.94x at 1000^3 and 768 x 1536 x 1000, which it
    does not bound; on the grid, 1.01x at 4096 x 4096 x 3008."""
    gain = alone.cost / paired.cost
    verdict = "in clusters of 2" if gain > 1 / (1 - MARGIN) else "not clustered"
    choice.reasons.append(
        Reason(
            "off-sector",
            f"{alone.label()} in clusters of {CLUSTER_SHARED}, each column tile "
            f"multicast: predicted {gain:.2f}x ({paired.cost:.1f} against "
            f"{alone.cost:.1f} us): {verdict}",
        )
    )
    return verdict != "not clustered"


def _row(c: Candidate, sms: int, reference: Candidate) -> str:
    """One candidate's line of a reason: programs, waves, busy SMs, cost
    relative to `reference`."""
    return (
        f"{c.label()}: {_count(c.programs, 'program')} in "
        f"{_count(c.waves, 'wave')} of {sms} SMs "
        f"({c.programs / (c.waves * sms):.0%} busy), cost "
        f"{c.cost / reference.cost:.2f}"
        + (f" (model: {c.cost:.1f} us)" if c.in_us else "")
    )


def _gemm_tiles(
    structure: Structure,
    extents: Mapping[str, int],
    given: Mapping[str, Any],
    sms: int,
    splitter: Splitter | None,
    off_sector: tuple[bool, bool] = (False, False),
) -> _Choice:
    """The GEMM tile shape (and K split) by the wave model over `GEMM_RATES`;
    with `off_sector`, each shape's stream no faster than L2 serves rows off
    the sector grid."""
    choice = _Choice()
    rows, cols, loop = structure.rows, structure.cols, structure.loop
    if rows is None or cols is None or loop is None:
        return choice
    m, n, k = (extents.get(a.dim) for a in (rows, cols, loop))
    if m is None or n is None or k is None or structure.tiles(extents, {}) is None:
        return choice  # no tile count without every output extent (a batch's too)

    forced = given.get("split_k") or 0  # 0: the rules split
    # the tile sizes the caller fixed: every candidate has them, so a split is
    # reckoned on the tile that runs
    fixed = {
        a.tile: size
        for a in (rows, cols, loop)
        if a.tile and (size := given.get(OPTION_OF[a.tile]))
    }

    def blocks(axis: Axis, choices: tuple[int, ...]) -> tuple[int, ...]:
        """The given or tuned extent first, then the others a rule may pick."""
        first = structure.block(axis, fixed)
        if axis.tile not in structure.tunable or axis.tile in fixed:
            return (first,)
        return tuple(dict.fromkeys((first, *choices)))

    def sized(bm: int, bn: int) -> dict[str, int]:
        """The sizes of a tile shape, rows first (reasons name it so: with
        block_n=256 given, a 64x256 tile was "256x64")."""
        return {a.tile: b for a, b in ((rows, bm), (cols, bn)) if a.tile} | {
            t: size for t, size in fixed.items() if t not in (rows.tile, cols.tile)
        }

    def tiled(bm: int, bn: int) -> tuple[dict[str, int], int] | None:
        """The sizes and tile count of a measured tile shape; None where it is
        unmeasured, or where another than the given or written one is taller
        than wide (128x64) over an output of no more rows than it: such a
        call waits on HBM, the model sees only its stream, and the rows past
        M are MMAs of padding that 64-row tiles do not run (H200, NOTES 3.54:
        the 128x64 pick ran 0.67x the 64x128 one at 32 x 8192 x 8192, 0.82x
        at 64 x 6144 x 4096, 0.91x at 128 x 4096 x 4096 with B stored K x N;
        from M = 256 it ran 1.06-1.17x), or 64x64 over fewer rows than
        `NARROW_TILE_MIN_M`."""
        own = (structure.block(rows, fixed), structure.block(cols, fixed))
        if (bm, bn) not in GEMM_RATES or (bn < bm and m <= bm and (bm, bn) != own):
            return None
        if (bm, bn) == (64, 64) != own and m < NARROW_TILE_MIN_M:
            return None
        sizes = sized(bm, bn)
        tiles = structure.tiles(extents, sizes)
        assert tiles is not None
        return sizes, tiles

    streamed_bytes = (m + n) * k * structure.operand_bytes

    def time_us(
        bm: int,
        bn: int,
        programs: int,
        per_program: float,
        floored: bool,
        shared: int = 1,
    ) -> float:
        """The launch's time under the wave model, without a split's overhead;
        `floored`: with the inputs read through L2 off the sector grid, the
        column operand's rows multicast to `shared` blocks (a cluster)."""
        sizes = sized(bm, bn)
        stages = given.get("num_stages") or structure.depth(sizes)
        rate = GEMM_RATES[bm, bn] * (SHALLOW_RING_RATE if stages < GEMM_STAGES else 1)
        k_loops = waves(programs, sms) * per_program * TILE_ITERATION_US
        k_loops *= bm * bn / (128 * 256) / rate
        step = structure.block(loop, sizes) * structure.operand_bytes
        read = (min(bm, m) + min(bn, n)) * step
        floor = streamed_bytes / stream_bytes_per_us(min(programs, sms), stages, read)
        if floored:
            operand = structure.operand_bytes
            tile = (bm * shared, bn)  # a cluster reads each B tile once
            floor = max(floor, off_sector_floor_us(m, n, k, operand, tile, off_sector))
        return PROGRAM_FIXED_US + loop_time_us(k_loops, floor)

    def candidates(
        bm: int, bn: int, floored: bool = False, shared: int = 1
    ) -> list[Candidate]:
        """The tile shape unsplit, then split as `splitter` says (if at all)."""
        if (found_tiles := tiled(bm, bn)) is None:
            return []
        sizes, tiles = found_tiles
        bk = structure.block(loop, sizes)
        if forced and splitter:
            iterations = structure.iterations(extents, sizes)
            counts: tuple[int, ...] = (given_splits(forced, iterations),)
        else:
            split = splitter(m, n, k, bm, bn, bk, sms) if splitter else 1
            counts = tuple(dict.fromkeys((1, split)))
        found = []
        for splits in counts:
            per_program = -(-structure.iterations(extents, sizes) // splits)
            count = waves(tiles * splits, sms)
            cost = time_us(bm, bn, tiles * splits, per_program, floored, shared)
            if splits > 1:  # the partial sums through memory, a second launch
                cost += split_overhead_us(m, n, splits)
            found.append(Candidate(sizes, tiles, splits, count, cost, in_us=True))
        return found

    def streamed(bm: int, bn: int) -> list[Candidate]:
        """The tile shape streamed over one program per SM: each runs its even
        share of the units, and the reduce kernel reads every slot."""
        if (found_tiles := tiled(bm, bn)) is None:
            return []
        sizes, tiles = found_tiles
        iterations = structure.iterations(extents, sizes)
        programs = stream_k_programs(tiles, iterations, sms)
        slots = stream_k_slots(tiles, iterations, programs)
        per_program = -(-tiles * iterations // programs)
        cost = time_us(bm, bn, programs, STREAM_K_SLOWDOWN * per_program, False)
        cost += split_overhead_us(m, n, slots)
        return [Candidate(sizes, tiles, slots, 1, cost, programs, in_us=True)]

    consumers = given.get("num_consumers") or (2 if given.get("ping_pong") else 1)
    stages = given.get("num_stages")

    def fits(bm: int, bn: int) -> bool:
        """Whether the stages given fit this tile shape."""
        return not stages or stages <= structure.room(sized(bm, bn))

    def takes(bm: int, bn: int) -> bool:
        """Whether the kernel lowers with this tile shape as the caller asked:
        its loads take it (`Structure.lowerable`), the consumer warpgroups
        given (ping-pong's two) share its rows in whole wgmma slices, and the
        stages given fit. Resolving dropped a tile the consumers could not
        share and kept the stages counted for it (ping_pong=True ran 128x128
        tiles with the 8 stages of 64x96), and num_stages=8 overflowed the
        64x192 tiles chosen for it."""
        return (
            structure.lowerable(sized(bm, bn))
            and bm % (WGMMA_ROWS * consumers) == 0
            and fits(bm, bn)
        )

    # the given or tuned tile shape first, then the others the kernel takes;
    # the tuned one gives way where the stages given fit only others
    tuned = (structure.block(rows, fixed), structure.block(cols, fixed))
    first = tuned
    row_blocks = blocks(rows, tuple(dict.fromkeys(r for r, _ in TILE_SHAPES)))
    padded = m <= WGMMA_ROWS < tuned[0] and WGMMA_ROWS in row_blocks[1:]
    if padded and takes(WGMMA_ROWS, tuned[1]):
        # one warpgroup's rows hold the output: taller tiles only add MMAs of
        # padding and a second warpgroup (H200, NOTES 3.59: the written
        # 128x256 ran 0.82x the 64x256 one at 2 x 32000 x 4096, 0.85x at
        # 8 x 28672 x 4096), so the 64-row tiles are weighed in their place
        first, row_blocks = (WGMMA_ROWS, tuned[1]), (WGMMA_ROWS,)
    weighed = [
        (bm, bn)
        for bm in row_blocks
        for bn in blocks(cols, tuple(dict.fromkeys(c for _, c in TILE_SHAPES)))
        if (bm, bn) == first or takes(bm, bn)
    ]
    if not fits(*first) and len(weighed) > 1:
        weighed.remove(first)
        choice.reasons.append(
            Reason(
                "num_stages",
                f"{stages} stages (given) do not fit {first[0]}x{first[1]} "
                "tiles: only the tile shapes they fit are weighed",
            )
        )

    def shapes(make: Callable[[int, int], list[Candidate]]) -> list[Candidate]:
        return [c for bm, bn in weighed for c in make(bm, bn)]

    found = shapes(candidates)
    if not found or tuned not in GEMM_RATES:  # nothing to compare with
        _unweighed_cut(structure, extents, given, sms, splitter, sized(*tuned), choice)
        return choice
    mode = given.get("stream_k")
    clustered = (given.get("cluster") or 1) > 1
    weigh_streams = mode or (mode is None and not forced)
    streams = shapes(streamed) if splitter and weigh_streams and not clustered else []
    if mode and streams:
        pick = _wave_choice(streams, "tile", sms, choice)
        choice.reasons.append(Reason("stream-K", "stream_k=True: K is streamed"))
    else:
        pick = _wave_choice(found, "tile", sms, choice)
        if splitter and forced and not mode:
            choice.reasons.append(Reason("stream-K", f"off: split_k={forced}"))
        elif splitter:
            pick = _stream_k_rule(pick, streams, mode, clustered, sms, choice)
        elif mode:
            choice.reasons.append(
                Reason("stream-K", f"stream_k=True, but {SPLIT_PENDING}")
            )
    picked = [structure.block(a, pick.sizes) for a in (rows, cols)]
    if any(off_sector) and not pick.streamed and sum(1 / b for b in picked) > 2 / 128:
        # a tile that reads more per MMA than 128x128: L2 may bound it
        floored = shapes(lambda bm, bn: candidates(bm, bn, floored=True))
        pick = _off_sector_rule(pick, floored, choice)

    def clustered(pick: Candidate) -> tuple[Candidate, Candidate]:
        """`pick` under the L2 floor alone and in clusters of `CLUSTER_SHARED`."""
        bm, bn = (structure.block(a, pick.sizes) for a in (rows, cols))
        return tuple(  # type: ignore[return-value]
            next(
                c
                for c in candidates(bm, bn, floored=True, shared=shared)
                if c.splits == pick.splits
            )
            for shared in (1, CLUSTER_SHARED)
        )

    multicast = (
        off_sector[1]
        and structure.clusterable
        and not pick.streamed
        and "cluster" not in given
        and not given.get("thread_loads")  # the producer's threads do not multicast
        and _multicast_rule(*clustered(pick), choice)
    )
    # the sizes that differ from the tuned tile's, and the width of any other
    # tile: the tuning rules size the width anew for other rows (they widened
    # a 64x128 pick to 64x256 where 128x256 had no room)
    choice.predicted_us = pick.cost
    unchosen = sized(*tuned)
    changed = pick.sizes != unchosen
    choice.options = {
        OPTION_OF[name]: size
        for name, size in pick.sizes.items()
        if size != unchosen[name] or (changed and name == cols.tile)
    }
    if multicast:
        choice.options["cluster"] = CLUSTER_SHARED
    if pick.streamed:
        choice.stream, choice.programs = True, pick.programs
        if mode is None:
            choice.options["stream_k"] = True
        return choice
    choice.splits = pick.splits
    bm, bn, bk = (structure.block(a, pick.sizes) for a in (rows, cols, loop))
    if forced:
        wanted = given_splits(forced, structure.iterations(extents, pick.sizes))
        why = f"split_k={forced}"
    else:
        wanted = pick.splits if splitter else split_count(m, n, k, bm, bn, bk, sms)
        why = f"{pick.tiles} tiles fill {pick.tiles / sms:.0%} of a wave"
    if wanted > 1:
        tail = "" if splitter else f", but {SPLIT_PENDING}"
        iterations = structure.iterations(extents, pick.sizes)
        choice.reasons.append(
            Reason(
                "split-K",
                f"{why}: K's {iterations} iterations split {wanted} ways{tail}",
            )
        )
    elif forced:
        choice.reasons.append(Reason("split-K", "off: split_k=1"))
    return choice


def _unweighed_cut(
    structure: Structure,
    extents: Mapping[str, int],
    given: Mapping[str, Any],
    sms: int,
    splitter: Splitter | None,
    sizes: Mapping[str, int],
    choice: _Choice,
) -> None:
    """A K split or stream given, on a tile shape the wave model has no rate
    for (64x64, 192 rows, ...): nothing is weighed, so the tile runs as
    written and the cut as given (it was dropped, "given 2, not run" with no
    reason, though the pass takes the kernel). As where tiles are weighed, a
    stream given wins over a split, and clusters are never streamed."""
    forced, mode = given.get("split_k") or 0, given.get("stream_k")
    clustered = (given.get("cluster") or 1) > 1
    if forced <= 1 and not mode:
        return
    if mode and clustered:
        choice.reasons.append(Reason("stream-K", CLUSTERS_UNSTREAMED))
        return
    rule, asked = (
        ("stream-K", "stream_k=True") if mode else ("split-K", f"split_k={forced}")
    )
    if splitter is None:
        choice.reasons.append(Reason(rule, f"{asked}, but {SPLIT_PENDING}"))
        return
    tiles = structure.tiles(extents, sizes)
    assert tiles is not None  # `_gemm_tiles` counted them
    iterations = structure.iterations(extents, sizes)
    label = "x".join(str(v) for v in sizes.values()) or "as written"
    unrated = f"the tile {label} has no measured rate: nothing is weighed"
    if mode:
        choice.stream = True
        choice.programs = stream_k_programs(tiles, iterations, sms)
        what = f"{tiles} tiles' {iterations} K iterations streamed over {choice.programs} programs"
    else:
        choice.splits = given_splits(forced, iterations)
        what = f"K's {iterations} iterations split {choice.splits} ways"
    choice.reasons.append(Reason(rule, f"{asked}: {what} ({unrated})"))


def _stream_k_rule(
    pick: Candidate,
    streams: list[Candidate],
    mode: bool | None,
    clustered: bool,
    sms: int,
    choice: _Choice,
) -> Candidate:
    """`pick` (the wave model's choice unsplit or split), unless the cheapest of
    `streams` is cheaper by more than `STREAM_K_GAIN`: then that one; the
    reason says which and by how much. Never with clusters given: a stream-K
    program walks tiles its cluster's neighbours do not share."""
    if mode is False:
        choice.reasons.append(Reason("stream-K", "off: stream_k=False"))
        return pick
    if clustered:
        choice.reasons.append(Reason("stream-K", CLUSTERS_UNSTREAMED))
        return pick
    if not streams:
        return pick
    best = min(streams, key=lambda c: c.cost)
    numbers = f"{_row(best, sms, pick)}; {_row(pick, sms, pick)}"
    if best.cost < pick.cost * (1 - STREAM_K_GAIN):
        choice.reasons.append(
            Reason(
                "stream-K",
                f"{best.label()}, predicted {pick.cost / best.cost:.2f}x faster than "
                f"{pick.label()} (the gain needed: {STREAM_K_GAIN:.0%} of the "
                f"cost; {numbers})",
            )
        )
        if best.sizes != pick.sizes:
            choice.others.append(
                {OPTION_OF[name]: size for name, size in pick.sizes.items()}
            )
        return best
    choice.reasons.append(
        Reason(
            "stream-K",
            f"not chosen: the best, {best.label()}, is predicted at "
            f"{best.cost / pick.cost:.2f} of the cost of {pick.label()}, not "
            f"below {1 - STREAM_K_GAIN:.2f} ({numbers})",
        )
    )
    return pick


def _excluded(option: str, given: Mapping[str, Any]) -> bool:
    """Whether an option given on excludes turning `option` on (`EXCLUSIVE`):
    the short-causal walk's persistent grid next to a given reverse_x=True was
    refused by the pipeline, naming the one option the caller gave."""
    return any(
        given.get(other)
        for group in EXCLUSIVE
        if option in group
        for other in group - {option}
    )


def _attention(
    structure: Structure,
    extents: Mapping[str, int],
    given: Mapping[str, Any],
    sms: int,
) -> _Choice:
    """Short causal sequences (`SHORT_CAUSAL_SEQ`), then the query block rows by
    the wave model over `ATTENTION_RATES`."""
    choice = _Choice()
    most = max(ATTENTION_RATES)
    seq = extents.get(structure.loop.dim) if structure.loop else None
    head_dim = structure.cols.size if structure.cols else None
    if (
        not structure.equal_work
        and seq is not None
        and seq <= SHORT_CAUSAL_SEQ
        and head_dim in SHORT_CAUSAL_HEAD_DIMS
    ):
        short = {"two_stage": False, "num_stages": 2, "reverse_x": False}
        if head_dim in SHORT_CAUSAL_WALK_HEAD_DIMS and not _excluded(
            "persistent", given
        ):
            short |= {"persistent": True, "longest_first": True}
        choice.options |= {o: v for o, v in short.items() if o not in given}
        most = 128
        walk = (
            "; a persistent grid, longest blocks first (NOTES 3.41)"
            if "persistent" in short
            else ""
        )
        choice.reasons.append(
            Reason(
                "short causal",
                f"{seq} keys <= {SHORT_CAUSAL_SEQ}: no two-stage overlap, 2 stages, "
                "128-row blocks, grid in order (tuning_attention.csv, seq 1024 "
                f"causal: 225.1 vs 211.3 TFLOP/s at d64, 308.6 vs 289.1 at d128){walk}",
            )
        )
    window = FP8_CAUSAL_WALK.get(head_dim or 0) if structure.fp8 else None
    if (
        not structure.equal_work
        and seq is not None
        and window is not None
        and window[0] <= seq <= window[1]
        and not _excluded("persistent", given)
    ):
        walk = {"persistent": True, "longest_first": True}
        choice.options |= {o: v for o, v in walk.items() if o not in given}
        choice.reasons.append(
            Reason(
                "fp8 causal walk",
                f"{seq} keys at head dim {head_dim}, within {window[0]}-{window[1]}: "
                "a persistent grid, longest blocks first (FP8_CAUSAL_WALK, NOTES 3.45)",
            )
        )
    rows = structure.rows
    if (
        rows is None
        or rows.tile not in structure.tunable
        or structure.tiles(extents, {}) is None
    ):
        return choice
    tuned = structure.block(rows, {})
    option = OPTION_OF[rows.tile]
    if given.get(option):
        blocks: tuple[int, ...] = (given[option],)
    else:
        first = min(tuned, most)
        blocks = (
            first,
            *(r for r in sorted(ATTENTION_RATES, reverse=True) if r < first),
        )

    def candidate(bm: int) -> Candidate:
        sizes = {rows.tile: bm}
        tiles = structure.tiles(extents, sizes)
        assert tiles is not None
        cost = waves(tiles, sms) * bm / ATTENTION_RATES.get(bm, 1.0)
        return Candidate(sizes, tiles, 1, waves(tiles, sms), cost)

    pick = _wave_choice([candidate(b) for b in blocks], "rows", sms, choice)
    if pick.sizes[rows.tile] != tuned:
        choice.options[option] = pick.sizes[rows.tile]
    choice.reasons += _attention_walk(
        structure, seq, head_dim, pick, given, sms, choice
    )
    return choice


def _attention_walk(
    structure: Structure,
    seq: int | None,
    head_dim: int | None,
    pick: Candidate,
    given: Mapping[str, Any],
    sms: int,
    choice: _Choice,
) -> list[Reason]:
    """`ATTENTION_WALK` (`FP8_ATTENTION_WALK` for 8-bit dots): the walk's
    options into `choice` where its key length and head dim were measured
    faster, its query blocks are more than a wave and Q's slots leave two
    stages: two Q slots where they do, else one (the next block's Q then
    loads after the block's loop, but its setup and the tail still go)."""
    table = FP8_ATTENTION_WALK if structure.fp8 else ATTENTION_WALK
    limits = table.get(head_dim or 0)
    if limits is None or seq is None:
        return []
    longest = limits[1] if structure.equal_work else limits[0]
    if longest is not None and seq > longest:
        return []
    if structure.tuned.get("cluster", 1) > 1 or pick.tiles <= sms:
        return []
    if structure.producer_transposes:
        return [
            Reason(
                "attention walk",
                "off: the producer's threads transpose an 8-bit B tile (V as "
                "stored), in lock step, which a tile counter does not take",
            )
        ]
    walk = dict(FP8_ATTENTION_WALK_OPTIONS if structure.fp8 else ATTENTION_WALK_OPTIONS)
    blocked = sorted(
        ATTENTION_WALK_GIVEN & {o for o, v in given.items() if v is not None}
    )
    if blocked:
        return [
            Reason(
                "attention walk",
                f"off: {', '.join(blocked)} given (the walk sets "
                f"{', '.join(walk)} together)",
            )
        ]
    sizes = {a.tile: structure.block(a, pick.sizes) for a in structure.output if a.tile}
    if structure.loop and structure.loop.tile:
        sizes[structure.loop.tile] = structure.block(structure.loop, pick.sizes)
    room = structure.walk_stages(frozenset(sizes.items()), walk["outer_stages"])
    if room < 2:
        room = structure.walk_stages(frozenset(sizes.items()), 1)
        if room < 2:
            return [
                Reason(
                    "attention walk",
                    f"off: Q's slot leaves room for {room} stage(s) of these tiles",
                )
            ]
        walk["outer_stages"] = 1
    # FP8: the stages an earlier rule chose (short causal: 2), else all that fit
    stages = choice.options.get("num_stages", min(room, ATTENTION_MOST_STAGES))
    walk.setdefault("num_stages", stages)
    choice.options |= walk
    kind = "not causal" if structure.equal_work else "causal"
    bound = "any length" if longest is None else f"<= {longest} keys"
    how = (
        f"{walk['num_stages']} stages"
        if structure.fp8
        else "in id order, no two-stage overlap, 2 stages"
    )
    return [
        Reason(
            "attention walk",
            f"{pick.tiles} query blocks over {sms} SMs, {seq} keys ({kind}, head dim "
            f"{head_dim}: {bound}): a persistent walk from the tile counter with Q "
            f"in {'two slots' if walk['outer_stages'] == 2 else 'one slot'}, {how} "
            f"(NOTES {'3.76' if structure.fp8 else '3.74, 3.83'})",
        )
    ]


def _persistent(
    structure: Structure,
    programs: int,
    given: Mapping[str, Any],
    sms: int,
    chosen: dict[str, Any],
) -> list[Reason]:
    """A tuned persistent grid is dropped when the programs fit one wave: each
    would walk one tile, the plain grid's schedule plus the walk's bookkeeping
    (2048^3, 128 tiles on 132 SMs, runs faster non-persistent: NOTES 3.4)."""
    if not structure.tuned.get("persistent") or "persistent" in given:
        return []
    if programs > sms:
        return [
            Reason(
                "persistent",
                f"kept: {programs} programs are {programs / sms:.1f} waves of {sms} SMs",
            )
        ]
    chosen["persistent"] = False
    return [
        Reason(
            "persistent",
            f"off: {programs} programs fit one wave of {sms} SMs (each would walk "
            "one tile)",
        )
    ]
