"""stream-k{group-m=8}: a persistent GEMM whose programs share the work
(output tiles x K iterations) evenly, with partial tiles summed by a second
kernel.

Why: with T output tiles on P SMs, one program per tile leaves the last wave
ceil(T / P) * P - T SMs idle (wave quantization: 133 tiles on 132 SMs take two
waves for 1% more work). Stream-K cuts the work into units of one K iteration
of one tile, U = T x (K iterations per tile) in all, and gives program p the
units [p * U / P, (p + 1) * U / P): every SM does the same work, and a tile
whose units two or more programs share is finished by summing their partials.

Contract. Input: what `split-k` takes (see `transforms/split_k.py`; the same
diagnostics), a K loop whose trip count does not depend on the program id
(every tile is the same number of units), and stores from which
`grid.grid_rule` reads the tile grid. Output: each kernel `@k` becomes a pair,
launched as `tawa_xdsl.partials` describes:

- `@k_stream_k` (partials): `@k`'s parameters the loop uses, then the
  workspace `[R, <the stored shape>]` f32 (R dynamic, dims "S", ...). It is
  persistent: program p of however many are launched along x walks the tiles
  its units touch, in `persistent`'s raster order (`group-m` rows at a time),
  runs the K iterations of each that it owns and stores the partial at slot
  p - first(tile) of the tile (first(tile): the program owning the tile's first
  unit); the program of slot 0 also stores zeros in the slots past the last
  program of its tile, so every slot of the workspace is written. R must be at
  least `partials.stream_k_slots(tiles, iterations, programs)` (computed with
  the tile shape and K step the kernel is lowered with); the launch gives the
  grid (one program per SM).
- `@k_stream_k_reduce`: the reduce kernel of `split-k` with R read off the
  workspace: it sums the R slots in order and runs `@k`'s epilogue and store
  on `@k`'s grid.

Deterministic (the sums' grouping follows the program count). Partial tiles are
fixed up by the second kernel rather than by semaphores between programs in
the first, which would need atomics and spin-waits the tile dialect and its
simulators do not model.

Not built: the data-parallel + stream-K hybrid (`benchmarks/NOTES.md` 3.77
has the design and what it needs of the other passes). Every tile goes through
the workspace today; with T tiles on P programs the hybrid would run the first
T - T_sk tiles (whole waves: T_sk = T mod P, or T mod P + P under half a wave,
T when T < P) with their whole K loop, epilogue and store in this kernel, in
one tile loop with the stream-K tiles (a second tile loop gets a second ring),
and the reduce kernel, launched on the same P programs and tiles, would sum
only the tail tiles' slots that their programs wrote. It pays where the tiles
pass a wave; with fewer tiles than programs it is this pair.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from tawa_xdsl.analysis.shapes import KernelShape
from tawa_xdsl.compiler import DEFAULTS
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import tile
from tawa_xdsl.grid import GridInferenceError, Rule, grid_rule
from tawa_xdsl.kernel import kernels
from tawa_xdsl.partials import record
from tawa_xdsl.transforms.once import ran_before, record_run
from tawa_xdsl.transforms.persistent import (
    Builder,
    relabel_program_ids,
    tile_count,
    tile_extents,
    tile_ids,
)
from tawa_xdsl.transforms.split_k import (
    KLoop,
    cast,
    defined_inside,
    k_loop,
    make_pair,
    paired_already,
    slice_iterations,
    store_partial,
    trip_count,
)
from tawa_xdsl.transforms.tile_shape import SIZE_ATTR
from tawa_xdsl.transforms.transposes import sink_transposes

GRID_QUERIES = (
    tile.ProgramIdOp,
    tile.NumProgramsOp,
    tile.ClusterIdOp,
    tile.ClusterRankOp,
)


@dataclass(frozen=True)
class StreamKPass(ModulePass):
    """Make each GEMM-like kernel a stream-K pair (see the module docstring)."""

    name = "stream-k"

    group_m: int = DEFAULTS.group_m

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.group_m < 1:
            raise PassFailedException(
                f"stream-k: group-m must be at least 1, got {self.group_m}"
            )
        for kernel in list(kernels(op)):
            if paired_already(kernel, self.name, 0):
                ran_before(kernel, self, OPTIONS_ATTR, transformed=True)
            else:
                sink_transposes(kernel)  # no transposed accumulator to move
                stream_k(kernel, self.group_m)
        for kernel in kernels(op):  # both kernels of each pair made here
            rec = record(kernel)
            made = rec is not None and rec.mode == self.name
            if made and OPTIONS_ATTR not in kernel.attributes:
                record_run(kernel, self, OPTIONS_ATTR)


OPTIONS_ATTR = "tile.stream_k_options"
"""On both kernels of a stream-K pair: the options that made it (the pair
record has no group-m), so the pass given the pair again compares them."""


def _bound_ops(loop: scf.ForOp) -> list[Operation]:
    """The ops before `loop` in its block that its bounds and step are computed
    from (with whatever their regions read), in order."""
    needed: set[Operation] = set()
    work = [loop.lb, loop.ub, loop.step]
    while work:
        v = work.pop()
        if not isinstance(v, OpResult) or v.op in needed:
            continue
        needed.add(v.op)
        for inner in v.op.walk():
            work += [x for x in inner.operands if not defined_inside(x, v.op)]
    block = loop.parent_block()
    assert block is not None
    return [o for o in block.ops if o in needed]


def stream_k(kernel: func.FuncOp, group_m: int) -> None:
    """Replace `kernel` by its stream-K pair (see the module docstring)."""
    g = k_loop(kernel, "stream-k")  # its diagnostics, at the original's ops
    for o in _bound_ops(g.loop):
        for inner in o.walk():
            if isinstance(inner, GRID_QUERIES):
                raise OpDiagnostic(
                    g.loop,
                    f"stream-k: the K loop's bounds depend on {inner.name}, so "
                    "tiles differ in work; stream-K shares equal tiles (split-k "
                    "slices any K loop)",
                )
    try:
        rules = grid_rule(kernel)
    except GridInferenceError as e:
        raise OpDiagnostic(
            e.op, f"stream-k: {e}; stream-K counts the output tiles by that rule"
        ) from None
    count = len(kernel.body.block.args)
    # the workspace, appended last, has the stored tensor's dims after its slots
    shifted = [Rule(r.axis, count, r.dim + 1, r.block, r.block_arg) for r in rules]
    tags = _block_tags(kernel, g.store, rules)

    def partials(g: KLoop, workspace: BlockArgument) -> None:
        _share_units(g, workspace, shifted, tags, group_m)

    make_pair(
        kernel,
        "stream-k",
        DYNAMIC_INDEX,
        partials,
        lambda b, ws: b.add(tile.DimOp(ws, 0), "slots"),
    )


def _block_tags(
    kernel: func.FuncOp, store: tile.StoreOp, rules: list[Rule]
) -> dict[int, dict[str, Attribute]]:
    """A `tile.size` tag for each axis whose block is the stored box's extent
    along a named tile dimension (`analysis.shapes.KernelShape`), so the tile count
    follows a later `tile-shape` as the tiles do."""
    try:
        shape = KernelShape(kernel)
    except OpDiagnostic:
        return {}  # tile-shape cannot resize this kernel either
    stored = store.desc
    assert isinstance(stored.type, tile.DescType)
    box = stored.type.get_box()
    tags: dict[int, dict[str, Attribute]] = {}
    for r in rules:
        named = shape.names.get(shape.dims.find((stored, r.dim)))
        if r.block_arg < 0 and r.block == box[r.dim] and named is not None:
            tags[r.axis] = {SIZE_ATTR: StringAttr(named[0])}
    return tags


def _share_units(
    g: KLoop,
    workspace: BlockArgument,
    rules: list[Rule],
    tags: dict[int, dict[str, Attribute]],
    group_m: int,
) -> None:
    """Make `g.kernel` walk this program's share of the units (the pass's
    docstring) and store its partial tiles, zeros in the unused slots."""
    body = g.kernel.body.block
    ret = body.last_op
    assert isinstance(ret, func.ReturnOp)
    moved = [o for o in body.ops if o is not ret]
    pre = Builder(body, moved[0])

    # the loop bounds, computed once before the tiles: every tile has as many
    mapped: dict[SSAValue, SSAValue] = {}
    for o in _bound_ops(g.loop):
        pre.block.insert_op_before(o.clone(value_mapper=mapped), moved[0])
    loop = g.loop
    lb, ub, step = (mapped.get(v, v) for v in (loop.lb, loop.ub, loop.step))
    trips = trip_count(pre, lb, ub, step)
    one = pre.const(1, trips.type)
    per_tile = cast(pre, pre.add(arith.MaxSIOp(trips, one)), IndexType())
    per_tile.name_hint = "tile_units"  # a tile without iterations is one unit
    extents = tile_extents(pre, body.args, rules, tags)
    units = pre.add(arith.MuliOp(tile_count(pre, extents), per_tile), "units")
    program = pre.add(tile.ProgramIdOp("x"), "program")
    programs = pre.add(tile.NumProgramsOp("x"), "programs")
    after = pre.add(arith.AddiOp(program, pre.const(1)))
    begin = pre.add(
        arith.DivUIOp(pre.add(arith.MuliOp(program, units)), programs), "unit_begin"
    )
    end = pre.add(
        arith.DivUIOp(pre.add(arith.MuliOp(after, units)), programs), "unit_end"
    )
    first_tile = pre.add(arith.DivUIOp(begin, per_tile))
    last_tile = pre.add(arith.CeilDivUIOp(end, per_tile))
    slots = pre.add(tile.DimOp(workspace, 0), "slots")

    tiles = Block(arg_types=[IndexType()])
    t = tiles.args[0]
    t.name_hint = "tile_id"
    pre.insert(scf.ForOp(first_tile, last_tile, pre.const(1), [], tiles))
    b = Builder(tiles)
    ids = tile_ids(b, t, extents, group_m, longest_first=False)
    for o in moved:
        o.detach()
        tiles.add_op(o)
    tiles.add_op(scf.YieldOp())
    relabel_program_ids(tiles, ids, extents)

    # this program's units of the tile: [lo, hi) of its K iterations
    b = Builder(tiles, loop)
    base = b.add(arith.MuliOp(t, per_tile), "tile_base")
    top = b.add(arith.AddiOp(base, per_tile))
    lo = b.add(arith.SubiOp(b.add(arith.MaxUIOp(begin, base)), base))
    hi = b.add(arith.SubiOp(b.add(arith.MinUIOp(end, top)), base))
    iv = loop.lb.type
    slice_iterations(b, g, loop.lb, cast(b, lo, iv), cast(b, hi, iv), trips)

    # slot: this program's rank among those sharing the tile, from the owners
    # of its first and last unit (partials.stream_k_owner)
    b = Builder(tiles, g.store)
    one_index = b.const(1)

    def owner(unit_after: SSAValue) -> SSAValue:
        """The program owning the unit before `unit_after`."""
        scaled = b.add(arith.MuliOp(unit_after, programs))
        return b.add(arith.DivUIOp(b.add(arith.SubiOp(scaled, one_index)), units))

    first = owner(b.add(arith.AddiOp(base, one_index)))
    last = owner(top)
    first.name_hint, last.name_hint = "first_program", "last_program"
    # at most `slots`, as it is: proves the coordinate non-negative (TMA stores)
    slot = b.add(arith.MinUIOp(b.add(arith.SubiOp(program, first)), slots), "slot")
    stored = store_partial(g, workspace, slot)

    # the first program of the tile zeroes the slots no program writes
    b = Builder(tiles, stored.next_op)
    shared = b.add(arith.AddiOp(b.add(arith.SubiOp(last, first)), one_index))
    is_first = b.add(arith.CmpiOp(slot, b.const(0), "eq"))
    from_slot = b.add(
        arith.MinUIOp(b.add(arith.SelectOp(is_first, shared, slots)), slots),
        "zero_from",
    )
    # the zeros are loop-carried so that they are a register tile: the PTX
    # printer keeps a splat constant as one immediate and stores register tiles
    fill = Block(arg_types=[IndexType(), g.init.type])
    fill.add_ops(
        [
            tile.StoreOp(fill.args[1], workspace, [fill.args[0], *stored.indices[1:]]),
            scf.YieldOp(fill.args[1]),
        ]
    )
    b.insert(scf.ForOp(from_slot, slots, b.const(1), [g.init], fill))  # zero
