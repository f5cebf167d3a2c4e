"""Default compile options: what `benchmarks/tune.py` found best on the H100,
as rules over the kernel's structure, so `compile(path, name)` is fast without
flags. Options the caller passes win over these.

The consumer warpgroups are not a rule here: they follow from the tile rows
(`compiler.default_consumers`: two on 128 rows, three on 192).

- GEMM-like kernels (loops whose dots read loaded tiles: one accumulating
  dot, or one per K block of an unrolled loop): a 128x256 tile (when the
  kernel names BN, its tile has 128 rows and `GEMM_STAGES` stages fit next to
  the epilogue's tiles; else 128x192 where they fit, as next to a residual),
  a persistent grid in groups of 16 tile rows, the TMA-store epilogue, as
  many stages as fit next to the staging tile and the tiles the epilogue
  loads, double buffered (one slot of them where that keeps
  `GEMM_STAGES`), 4 or as many as fit in
  `GEMM_RING_BYTES` (3 for 128x256, 5 for 128x128, 8 for 64x96), one MMA
  group in flight (each slot goes back to the producer as soon as its MMA
  retires: measured 1-4% faster than two groups on 5 of the 6 shapes of
  `benchmarks/gemm.py`).
- Attention-like kernels (a loop with two dots, the second reading what the
  first computed): the two-stage overlap, one MMA
  group in flight, as many stages as fit (up to 3); at head dim 64 (when the
  kernel names BM) 192 query rows, so three consumer warpgroups: the softmax is
  a larger share of the work there and the third warpgroup's MMAs hide it; at
  head dim 256 in FP8 (when the kernel names BN) key blocks of 64: O's 128
  registers, S and P's packed words spill at 128 keys (NOTES 3.36); at head
  dim 256 no two-stage overlap: with O's 128 accumulator registers a second
  score tile in flight costs more than it hides (bf16: 0.93 of cuDNN without
  it against 0.72-0.78 with it, non-causal, 0.91-1.03 against 0.80-0.88
  causal; FP8: faster without it on 11 of 12 rows; NOTES 3.40); in FP8 when
  every tile does the same work (not causal) no two-stage overlap either: the
  8-bit wgmmas take half as long, so there is less under them to hide, and
  the persistent walk already overlaps the next tile's loads (d128 at 16k
  tokens 773 against 725 TFLOP/s, 748 against 690 at 4k, d64 598 against
  583; causal rows kept it; NOTES 3.42). When every tile does the same work (no loop bound depends on the
  program id: not causal), a persistent grid in row-major order with Q single
  buffered (so the stages still fit): the next tile's loads overlap this tile's
  last MMAs and epilogue. Causal tiles differ in work, and a static round-robin
  over them ends with a long tail, so they keep one program per tile, with the
  program ids along x reversed (`reverse-grid`): the GPU starts blocks in id
  order, so the longest query blocks of a head start first and the short ones
  fill the tail.
- The grouped-query examples (`attention_gqa.mlir`: Q folded to [BHKV, group * SQ,
  D]) are attention to these rules and get attention's options: a block of the
  fold is a query block, and only the causal kernels' key loops depend on the
  program id.
- No kernel takes clusters (`cluster=2`): multicasting the shared tiles did not
  pay for GEMM or attention in side-by-side runs (NOTES 3.18).
- Anything else: no rule (`compiler.DEFAULTS` and the structural defaults).

`benchmarks/NOTES.md` records the measurements behind each rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects import func, scf
from xdsl.ir import Block, OpResult, SSAValue

from tawa_xdsl.analysis.kernel_plan import (
    TICKET_TYPE,
    column_reductions,
    column_scratch_bytes,
    staged_store,
    stages_that_fit,
)
from tawa_xdsl.analysis.kernel_plan import ring_bytes as ring_with_barriers
from tawa_xdsl.analysis.shapes import KernelShape, split_tiles
from tawa_xdsl.analysis.uniformity import depends_on_program_id
from tawa_xdsl.compiler import DEFAULTS, default_consumers
from tawa_xdsl.dialects import tile
from tawa_xdsl.dialects.tile import element_bytes, is_fp8, tile_bytes
from tawa_xdsl.grid import GridInferenceError, recorded_grid_rule
from tawa_xdsl.target import SLOT_ALIGN

GEMM_RING_BYTES = 160 * 1024
"""The shared memory the rules give a GEMM's ring (up to `GEMM_MOST_STAGES`
slots). A program whose K loop waits on HBM (few output rows, long K) keeps
all its slots but one in flight, so the smaller its slots, the more it needs:
64x96 tiles took 4 slots of 20 KB under a four-stage cap and ran 1.18-1.24x
faster with 8 at M = 128 (benchmarks/NOTES.md 3.49). Past about 160 KB the
H100 showed no steady gain: 128x128 tiles ran 0.98-1.04x as fast with 6 or
7 slots as with 5, and 0.94-0.97x on two rows whose A tiles are part
padding."""

GEMM_MOST_STAGES = 8
"""The deepest GEMM ring the rules give. Four stages are given wherever they
fit, whatever `GEMM_RING_BYTES` says (measured best on the large shapes
before deeper rings were tried, NOTES 3.4)."""


ATTENTION_MOST_STAGES = 3
"""The deepest K/V ring the rules give attention."""

GEMM_STAGES = 3
"""The ring depth a GEMM's tuned tile width is chosen to keep: where a 2-D
tile the epilogue loads (a residual) leaves 128x256 two stages, 128x192 with
three ran 1.00-1.11x faster on five rows and 128x256 with two 0.99-1.05x
faster than 128x128 (H200, `benchmarks/NOTES.md` 3.65)."""


def _wide_width(
    tile: Callable[[int], tuple[int, int]],
    fit: Callable[[int], int],
    stages: int | None,
) -> int | None:
    """The tuned width of a GEMM tile of 128 rows as written (`tile(width)`)
    whose kernel names BN: 256
    where `GEMM_STAGES` stages (or the `stages` given) fit next to the
    epilogue's tiles (`fit(width)` counts them), else 192 where they fit, else
    256 where two fit (split-K's f32 partial tiles stage 128 KB next to two
    stages of 128x256); None keeps the tile as written."""
    wanted = [(256, stages or GEMM_STAGES), (192, stages or GEMM_STAGES)]
    if not stages:
        wanted.append((256, 2))
    for width, least in wanted:
        if tile(width) == (128, width) and fit(width) >= least:
            return width
    return None


def _stages(per_stage: int, fixed: int, most: int, staging: int = 0) -> int:
    """The most ring stages (up to `most`) that fit next to `fixed` bytes, of
    which `staging` are staging tiles: at least 2 (the staging tiles give way
    to stores from registers where two stages leave them no room), or 1 where
    two do not fit even so (two slots of 192x128 + 256x128 tiles and a column
    reduction's scratch overflowed, where one fits)."""
    fit = stages_that_fit(per_stage, fixed)
    if fit < 2 and stages_that_fit(per_stage, fixed - staging) == 1:
        return 1
    return max(2, min(most, fit))  # none fit: the lowering says what overflows


def main_loops(kernel: func.FuncOp) -> list[scf.ForOp]:
    """The loops that load tiles (a K loop, a key loop), outermost first."""
    return [
        op
        for op in kernel.walk()
        if isinstance(op, scf.ForOp)
        and any(isinstance(o, tile.LoadOp) for o in op.body.block.ops)
    ]


def _reads_a_dot(dot: tile.DotOp, body: Block) -> bool:
    """Whether an operand of `dot` is computed, in `body`, from another dot's
    result (attention's P from S), rather than read from loaded tiles."""
    work = [dot.lhs, dot.rhs]
    seen: set[SSAValue] = set()
    while work:
        v = work.pop()
        if v in seen or not isinstance(v, OpResult):
            continue
        seen.add(v)
        op = body.find_ancestor_op_in_block(v.op)
        if op is None:
            continue
        if isinstance(v.op, tile.DotOp):
            return True
        work += v.op.operands
    return False


def kind(kernel: func.FuncOp) -> str:
    """The structure the tuning rules (and the shape rules of `heuristics`) know:
    "gemm" when every loading loop has dots that read only loaded tiles (an
    accumulation over K: one dot, or one per K block of a loop unrolled over
    several, as the block-scaled GEMM that promotes two partial products per
    iteration), "attention" when a loop has two dots, the second reading what
    the first computed (scores, then the weighted sum), else ""."""
    loops = main_loops(kernel)
    dots = [[o for o in lp.body.block.ops if isinstance(o, tile.DotOp)] for lp in loops]
    chained = [
        any(_reads_a_dot(d, lp.body.block) for d in ds)
        for lp, ds in zip(loops, dots, strict=True)
    ]
    if dots and all(ds for ds in dots) and not any(chained):
        return "gemm"
    if any(len(ds) == 2 and c for ds, c in zip(dots, chained, strict=True)):
        return "attention"
    return ""


def equal_work(kernel: func.FuncOp) -> bool:
    """Whether every program does the same work: no loading loop's bounds depend
    on the program id (causal attention's key loop ends at its query block)."""
    return not any(
        depends_on_program_id(bound)
        for lp in main_loops(kernel)
        for bound in (lp.lb, lp.ub)
    )


def _slot_bytes(
    shape: KernelShape, values: list[SSAValue], sizes: dict[str, int]
) -> int:
    """Shared memory of the tiles of `values` under `sizes`, each slot
    `SLOT_ALIGN`-byte aligned."""
    return sum(
        -(-tile_bytes(shape.resized(v, sizes), v.type.element_type) // SLOT_ALIGN)
        * SLOT_ALIGN
        for v in values
    )


def _ring_and_once(
    kernel: func.FuncOp, loop: scf.ForOp
) -> tuple[list[SSAValue], list[SSAValue]]:
    """The tiles `loop` (the main loop) loads into its ring, and those the
    kernel loads once per tile (into outer rings)."""
    ring = [o.result for o in loop.body.block.ops if isinstance(o, tile.LoadOp)]
    once = [o.result for o in kernel.body.block.ops if isinstance(o, tile.LoadOp)]
    return ring, once


def _ticket_ring(slots: int) -> int:
    """The tile tickets' ring (an outer ring of `slots` slots, each one i32 laid
    out aligned as every slot is) with its barriers."""
    slot = -(-element_bytes(TICKET_TYPE) // SLOT_ALIGN) * SLOT_ALIGN
    return ring_with_barriers(slots, slot)


def _scratch(
    kernel: func.FuncOp,
    shape: KernelShape,
    sizes: dict[str, int],
    num_consumers: int | None,
) -> int:
    """The column reductions' scratch under `sizes`."""
    reductions = column_reductions(kernel.walk())
    if not reductions:
        return 0
    consumers = num_consumers or default_consumers(tile_rows(kernel, sizes))
    widths = [shape.resized(op.source, sizes)[1] for op in reductions]
    return column_scratch_bytes(widths, consumers)


def walk_stages(kernel: func.FuncOp, sizes: dict[str, int], outer_stages: int) -> int:
    """The ring stages of an attention-like `kernel` (tile IR) that fit under
    `sizes` next to its once-per-tile tiles in `outer_stages` slots and the
    tickets' ring: what a persistent walk taking its tiles from the counter
    (`persistent{dynamic=true}`) leaves the main loop, as the attention
    branch of `default_options` counts it; 0 when none fit."""
    loops = main_loops(kernel)
    if not loops:
        return 0
    shape = KernelShape(kernel)
    ring, once = _ring_and_once(kernel, loops[0])
    return stages_that_fit(
        _slot_bytes(shape, ring, sizes),
        outer_stages * _slot_bytes(shape, once, sizes)
        + _ticket_ring(outer_stages)
        + _scratch(kernel, shape, sizes, None),
    )


def default_options(
    kernel: func.FuncOp,
    sizes: dict[str, int] | None = None,
    ring_bytes: int | None = GEMM_RING_BYTES,
    stages: int | None = None,
    outer_stages: int | None = None,
    persistent: bool | None = None,
    dynamic_tiles: bool = False,
    num_consumers: int | None = None,
    tma_store: bool = True,
) -> dict[str, Any]:
    """Tuned options for `kernel` (tile IR); empty when no rule applies.
    `ring_bytes` is the shared memory a GEMM's ring may take (None: as many
    stages as fit, up to `GEMM_MOST_STAGES`: what a stage count given must
    not exceed); `stages` the stage count the caller gave, which a GEMM's
    epilogue tiles make room for; `outer_stages` and `persistent` as the
    caller gave them, which decide how many slots the once-per-tile tiles
    take next to the stages (counted at one slot, attention given
    persistent=True or outer_stages=3 overflowed shared memory, and a GEMM's
    residual given three slots next to 128x256 tiles). With `dynamic_tiles`
    the tile tickets' ring takes its place too (FP8 causal attention given
    block_n=256, persistent and dynamic tiles overflowed by 112 bytes).
    Staging tiles take room only for the stores the lowering stages
    (`kernel_plan.staged_store`, under `tma_store` as given): stream-K's f32
    partial tiles, at coordinates not proven non-negative, and outputs stored
    from registers left a 128x256 ring two stages for a staging tile never
    laid out (NOTES 3.72).

    `sizes` are tile sizes already chosen by name ("BM", "BN", "BK": given by the
    caller, or by the shape rules of `heuristics`): the tuned tile shape leaves
    them alone, and the stages are counted for the tiles the kernel will have,
    so a 128x128 GEMM tile gets the 4 stages that fit rather than the 3 of
    128x256."""
    chosen = dict(sizes or {})
    structure = kind(kernel)
    loops = main_loops(kernel)
    if not loops:
        return {}
    shape = KernelShape(kernel)
    names = {name for name, _ in shape.names.values()}

    def size(values: list, sizes: dict[str, int]) -> int:
        return _slot_bytes(shape, values, sizes)

    ring, once = _ring_and_once(kernel, loops[0])
    stores = [o for o in kernel.walk() if isinstance(o, tile.StoreOp)]

    def staging(sizes: dict[str, int]) -> int:
        """The staging tiles of the stores the lowering stages under `sizes`."""
        staged = [
            st.value
            for st in stores
            if staged_store(st, tma_store, shape.resized(st.value, sizes))
        ]
        return size(staged, sizes)

    given_outer = outer_stages or DEFAULTS.outer_stages
    tickets = _ticket_ring(given_outer) if dynamic_tiles else 0

    def scratch(sizes: dict[str, int]) -> int:
        return _scratch(kernel, shape, sizes, num_consumers)

    def fixed(sizes: dict[str, int], outer: int = given_outer) -> int:
        """The staging tiles, the epilogue's tiles in their outer rings, the
        tickets' ring and the column reductions' scratch."""
        return staging(sizes) + outer * size(once, sizes) + tickets + scratch(sizes)

    if not structure:  # no rule; only fewer stages where the default overflows
        fit = stages_that_fit(size(ring, chosen), fixed(chosen))
        return {"num_stages": max(1, fit)} if fit < DEFAULTS.num_stages else {}
    options: dict[str, Any] = {"mma_depth": 1}
    if structure == "gemm":
        dot = next(o for o in loops[0].body.block.ops if isinstance(o, tile.DotOp))
        # the least slots the epilogue's tiles may take: one unless given (the
        # producer refills a single slot under the next tile's K loop)
        least_outer = given_outer if outer_stages or not once else 1
        if "BN" in names and "BN" not in chosen:
            width = _wide_width(
                lambda n: shape.resized(dot.result, {"BN": n}),
                lambda n: stages_that_fit(
                    size(ring, {**chosen, "BN": n}),
                    fixed({**chosen, "BN": n}, least_outer),
                ),
                stages,
            )
            if width:
                chosen["BN"] = options["block_n"] = width
        slot = size(ring, chosen)
        most = GEMM_MOST_STAGES
        if ring_bytes is not None:
            most = min(most, max(4, ring_bytes // slot))
        outer = given_outer
        if _has_tiles(kernel):
            options |= {"persistent": True, "group_m": 16}
            if (
                once
                and not outer_stages
                and stages_that_fit(slot, fixed(chosen)) < (stages or GEMM_STAGES)
            ):
                # the epilogue's tiles double buffered leave no room for
                # `GEMM_STAGES` slots, or the stages given (a residual next to
                # 128x256 tiles overflowed by 64 bytes, num_stages=6 next to a
                # bias by 128): one slot of them, as attention's persistent
                # walk keeps Q
                outer = options["outer_stages"] = 1
        options["num_stages"] = _stages(
            slot, fixed(chosen, outer), most, staging(chosen)
        )
        return options
    scores = next(  # the first dot of the first loop with two
        d
        for lp in loops
        if len(d := [o for o in lp.body.block.ops if isinstance(o, tile.DotOp)]) == 2
    )[0]
    head_dim = scores.lhs.type.get_shape()[1]
    if head_dim == 64 and "BM" in names and "BM" not in chosen:
        chosen["BM"] = options["block_m"] = 192
    if (
        head_dim == 256
        and is_fp8(scores.lhs.type.element_type)
        and "BN" in names
        and "BN" not in chosen
    ):
        chosen["BN"] = options["block_n"] = 64
    fp8 = is_fp8(scores.lhs.type.element_type)
    walks = equal_work(kernel) and _has_tiles(kernel)  # Q in one slot
    # Q's slots: its outer ring's (a persistent grid's), else one
    q_slots = 1
    if persistent or (walks and persistent is None):
        q_slots = outer_stages or (1 if walks else DEFAULTS.outer_stages)
        fit = stages_that_fit(
            size(ring, chosen),
            q_slots * size(once, chosen) + tickets + scratch(chosen),
        )
        if not outer_stages and q_slots > 1 and fit < 2:
            # Q double buffered leaves no room for two stages (causal head dim
            # 256 given persistent=True overflowed): one slot of it
            q_slots = options["outer_stages"] = 1
    options |= {
        "two_stage": head_dim != 256 and not (fp8 and equal_work(kernel)),
        "num_stages": _stages(
            size(ring, chosen),
            q_slots * size(once, chosen) + tickets + scratch(chosen),
            ATTENTION_MOST_STAGES,
        ),
    }
    if walks:
        options |= {"persistent": True, "group_m": 1, "outer_stages": 1}
    else:
        options["reverse_x"] = True
    return options


def _has_tiles(kernel: func.FuncOp) -> bool:
    """Whether the kernel's grid has tiles a persistent program could walk: it
    reads a program id and its stores say how many programs each axis needs."""
    try:
        return bool(recorded_grid_rule(kernel))
    except GridInferenceError:
        return False


def tile_rows(kernel: func.FuncOp, sizes: dict[str, int]) -> list[int]:
    """The rows of the tiles the consumer warpgroups split (`split_tiles`),
    once the named dimensions take `sizes`."""
    tiles = [t for _, t in split_tiles(kernel.walk())]
    if not sizes:
        return [t.type.get_shape()[0] for t in tiles]
    shape = KernelShape(kernel)
    return [shape.resized(t, sizes)[0] for t in tiles]
