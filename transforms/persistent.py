"""persistent{group-m=8 longest-first=false dynamic=false}: one long-lived program per SM
walks the output tiles.

Contract. Input: a tile kernel (before `aref-partition`) whose launch grid
`grid.grid_rule` can read off its first store. Output: the same kernel whose body
runs in `scf.for %t = program_id(x) to T step num_programs(x)`, T the number of
tiles the original grid had (computed in the kernel from `tile.dim` of the stored
tensor). Each iteration recovers the original program ids from `%t`: z outermost,
then (x, y) in a grouped raster order, `group-m` consecutive x (row) tiles per
column sweep, so the tiles that run at the same time share rows of A and columns of
B in L2. `group-m=1` is plain row-major order over x then y. With
`longest-first`, x runs from the last tile to the first, all y of one x before
the next (group-m is then unused): for causal attention, where x is the query
block and its work grows with x, the programs take the longest tiles first and
the short ones even out the tail, instead of some programs collecting long tiles
and finishing last. In a kernel
marked by `cluster{size=S}` the loop walks cluster tiles (`tile.cluster_id`
from, programs / S apart) over a grid of ceil(x / S) cluster columns, and block
`tile.cluster_rank` of the cluster takes x tile cx * S + rank, so the blocks of
a cluster share y and z (group-m then counts cluster rows, group-m / S). The
kernel gets a
`tile.persistent` attribute holding the original grid rule, from which the runtime
launches min(#SMs, T) programs.

With `dynamic`, the programs take their tiles from a counter instead
(`persistent{dynamic=true}`): the loop is `scf.while (%t = program_id(x)) while
%t < T`, and at the end of each tile the program takes a ticket
(`tile.next_tile`) and goes on with tile num_programs(x) + ticket. The tile ids
map to program ids exactly as above, so with `longest-first` the counter hands
out the longest tiles first; a program that drew short tiles takes more, and
the walk ends without the tail a static round robin leaves when tiles differ in
work (causal attention). `aref-partition` gives the ticket to the producer (one
thread takes it) and routes it to the consumers through a ring of its own.
The counter resets itself, so the runtime allocates and clears nothing: it
counts modulo T (wrapping to 0 after T - 1: `atom.global.inc.u32` on a
module-scope `.global` in PTX), and a launch takes
exactly T tickets, one per tile beyond the first P plus the one past the end
that stops each of the min(P, T) programs that start a tile ((T - P) + P when
P <= T, T when P > T), so the next launch of the kernel finds it at zero. That
holds for launches one after another on one stream; two launches of the same
loaded kernel must not run at once (they would share the counter), so the
runtime orders a launch on another stream after the last one
(`Kernel.counts_tiles`). Refused with clusters (the blocks of a cluster would
have to share each ticket).

Run once (`transforms/once.py`): given a persistent kernel again, with the
same options the pass leaves it as it is, and with others (or with no record
of them, `tile.persistent_options`: a kernel made persistent by hand) it
refuses the kernel, naming both runs. A stream-K partials kernel walks its own
share of the work and is left as it is.

Why before `aref-partition`: the partitioner threads every aref's index through
all enclosing loops, so indices keep counting across tiles and the producer runs
ahead into the next tile's loads while the consumers finish the current one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from tawa_xdsl.compiler import DEFAULTS
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import tile
from tawa_xdsl.grid import (
    GridInferenceError,
    Rule,
    encode_rules,
    recorded_grid_rule,
)
from tawa_xdsl.kernel import PERSISTENT_ATTR, cluster_size, kernels
from tawa_xdsl.partials import self_scheduled
from tawa_xdsl.transforms.once import ran_before, record_run


@dataclass(frozen=True)
class PersistentPass(ModulePass):
    """Turn each tile kernel into a persistent kernel over its output tiles."""

    name = "persistent"

    group_m: int = DEFAULTS.group_m
    longest_first: bool = DEFAULTS.longest_first
    dynamic: bool = False

    def check_options(self) -> None:
        if self.group_m < 1:
            raise PassFailedException(
                f"persistent: group-m must be at least 1, got {self.group_m}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        for kernel in kernels(op):
            if self_scheduled(kernel) or ran_before(
                kernel, self, OPTIONS_ATTR, PERSISTENT_ATTR in kernel.attributes
            ):
                continue  # it walks its tiles already
            try:
                rules = recorded_grid_rule(kernel)
            except GridInferenceError as e:
                raise OpDiagnostic(
                    e.op,
                    f"persistent: {e}. A persistent kernel computes its tile count "
                    "from that rule; write the store's coordinates so, or leave the "
                    "kernel non-persistent (then the launch takes grid=)",
                ) from None
            if not rules:
                raise OpDiagnostic(
                    kernel,
                    f"persistent: kernel @{kernel.sym_name.data} reads no program "
                    "id, so its grid is one program: there are no tiles to walk",
                )
            if self.dynamic and cluster_size(kernel) > 1:
                raise OpDiagnostic(
                    kernel,
                    f"persistent: kernel @{kernel.sym_name.data} runs in clusters, "
                    "whose blocks must walk the same cluster tiles: dynamic=true "
                    "would need each ticket shared across the cluster; use the "
                    "static walk",
                )
            _make_persistent(
                kernel, rules, self.group_m, self.longest_first, self.dynamic
            )
            record_run(kernel, self, OPTIONS_ATTR)


OPTIONS_ATTR = "tile.persistent_options"
"""The options `persistent` made a kernel persistent with, as `-p` spells them."""


class Builder:
    """Appends index arithmetic to a block."""

    def __init__(self, block: Block, before: Operation | None = None):
        self.block, self.before = block, before

    def insert(self, op: Operation) -> None:
        if self.before is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_before(op, self.before)

    def add(self, op: Operation, name: str | None = None) -> SSAValue:
        """Insert `op` and return its result, named `name` if given."""
        self.insert(op)
        result = op.results[0]
        if name:
            result.name_hint = name
        return result

    def const(self, value: int, type: Attribute | None = None) -> SSAValue:
        """An integer constant, of type `index` unless `type` says otherwise."""
        t = type or IndexType()
        return self.add(arith.ConstantOp(IntegerAttr(value, t), t))


def tile_extents(
    pre: Builder,
    args: Sequence[SSAValue],
    rules: Sequence[Rule],
    tags: Mapping[int, Mapping[str, Attribute]] | None = None,
) -> dict[int, SSAValue]:
    """The tile count along each program axis of `rules`, computed from the
    extents of the kernel arguments `args` (`tiles_x` ...). `tags` gives
    attributes for the constant block size of an axis: a `tile.size` name lets
    a later `tile-shape` resize the count with the tiles."""
    extents: dict[int, SSAValue] = {}
    for axis, arg, dim, size, size_arg in rules:
        extent = pre.add(tile.DimOp(args[arg], dim))
        if size_arg >= 0:  # a block size the kernel takes as a scalar
            block = args[size_arg]
            if not isinstance(block.type, IndexType):
                block = pre.add(arith.IndexCastOp(block, IndexType()))
            extent = pre.add(arith.CeilDivUIOp(extent, block))
        elif size > 1:
            block = pre.const(size)
            block.owner.attributes.update((tags or {}).get(axis, {}))
            extent = pre.add(arith.CeilDivUIOp(extent, block))
        extent.name_hint = f"tiles_{'xyz'[axis]}"
        extents[axis] = extent
    return extents


def tile_count(pre: Builder, extents: dict[int, SSAValue]) -> SSAValue:
    """The product of the tile counts (`tiles`)."""
    total = None
    for axis in sorted(extents):
        total = (
            extents[axis]
            if total is None
            else pre.add(arith.MuliOp(total, extents[axis]))
        )
    assert total is not None, "grid_rule covers at least one axis"
    total.name_hint = "tiles"
    return total


def relabel_program_ids(
    body: Block, ids: dict[int, SSAValue], extents: dict[int, SSAValue]
) -> None:
    """Program ids and counts in `body` become those of the tile being walked:
    `ids` and `extents` per axis (0 and 1 along an axis the grid does not use)."""
    for o in list(body.walk()):
        if isinstance(o, tile.ProgramIdOp | tile.NumProgramsOp):
            axis = o.axis.index
            if isinstance(o, tile.ProgramIdOp):
                replacement = ids.get(axis)
            else:
                replacement = extents.get(axis)
            if replacement is None:  # an axis the grid does not use has extent 1
                replacement = Builder(o.parent_block(), o).const(
                    0 if isinstance(o, tile.ProgramIdOp) else 1
                )
            o.result.replace_all_uses_with(replacement)
            o.detach()
            o.erase()


def _make_persistent(
    kernel: func.FuncOp,
    rules: list[Rule],
    group_m: int,
    longest_first: bool,
    dynamic: bool,
) -> None:
    body = kernel.body.block
    ret = body.last_op
    assert isinstance(ret, func.ReturnOp)
    moved = [o for o in body.ops if o is not ret]

    pre = Builder(body, ret)
    extents = tile_extents(pre, body.args, rules)
    # with clusters of S blocks the loop walks cluster tiles: S x tiles at once
    size = cluster_size(kernel)
    walked = dict(extents)
    if size > 1 and 0 in extents:
        walked[0] = pre.add(arith.CeilDivUIOp(extents[0], pre.const(size)))
        walked[0].name_hint = "clusters_x"
    total = tile_count(pre, walked)
    if size > 1:
        first = pre.add(tile.ClusterIdOp(), "first_tile")
        programs = pre.add(tile.NumProgramsOp("x"), "programs")
        # the launch has whole clusters (so this is programs / size); rounding up
        # keeps the step provably positive (ir_checks.loop_steps) on every level
        stride = pre.add(arith.CeilDivUIOp(programs, pre.const(size)), "clusters")
    else:
        first = pre.add(tile.ProgramIdOp("x"), "first_tile")
        stride = pre.add(tile.NumProgramsOp("x"), "programs")

    loop_body = Block(arg_types=[IndexType()])
    loop_body.args[0].name_hint = "tile_id"
    if dynamic:
        body.insert_op_before(_dynamic_loop(first, total, loop_body), ret)
    else:
        body.insert_op_before(scf.ForOp(first, total, stride, [], loop_body), ret)
    b = Builder(loop_body)
    ids = tile_ids(b, loop_body.args[0], walked, max(1, group_m // size), longest_first)
    if size > 1 and 0 in ids:
        ids[0].name_hint = "cluster_x"
        base = b.add(arith.MuliOp(ids[0], b.const(size)))
        ids[0] = b.add(arith.AddiOp(base, b.add(tile.ClusterRankOp())), "pid_x")

    for o in moved:
        o.detach()
        loop_body.add_op(o)
    if dynamic:
        ticket = b.add(tile.NextTileOp(total), "ticket")
        ticket.owner.location = kernel.location  # diagnostics point at the kernel
        loop_body.add_op(scf.YieldOp(b.add(arith.AddiOp(stride, ticket), "next_tile")))
    else:
        loop_body.add_op(scf.YieldOp())
    relabel_program_ids(loop_body, ids, extents)
    kernel.attributes[PERSISTENT_ATTR] = encode_rules(rules)


def _dynamic_loop(first: SSAValue, total: SSAValue, body: Block) -> scf.WhileOp:
    """`scf.while` from tile `first` while the tile is below `total`; `body`
    (which yields the next tile) runs each tile."""
    before = Block(arg_types=[IndexType()])
    before.args[0].name_hint = "tile_id"
    more = arith.CmpiOp(before.args[0], total, "ult")
    more.result.name_hint = "more_tiles"
    before.add_ops([more, scf.ConditionOp(more, before.args[0])])
    return scf.WhileOp([first], [IndexType()], [before], [body])


def tile_ids(
    b: Builder,
    t: SSAValue,
    extents: dict[int, SSAValue],
    group_m: int,
    longest_first: bool,
) -> dict[int, SSAValue]:
    """The original program ids of linear tile `t`: z outermost, then (x, y) in
    groups of `group_m` x-tiles swept along y, or with `longest_first` x from
    the last tile down, y fastest."""
    ids: dict[int, SSAValue] = {}
    rest = t
    if 2 in extents:
        plane = (
            b.add(arith.MuliOp(extents[0], extents[1]))
            if 0 in extents and 1 in extents
            else extents.get(0) or extents.get(1) or b.const(1)
        )
        ids[2] = b.add(arith.DivUIOp(t, plane), "pid_z")
        rest = b.add(arith.RemUIOp(t, plane))
    if longest_first and 0 in extents:
        gy = extents.get(1)
        x_rank = b.add(arith.DivUIOp(rest, gy)) if gy is not None else rest
        last_x = b.add(arith.SubiOp(extents[0], b.const(1)))
        ids[0] = b.add(arith.SubiOp(last_x, x_rank), "pid_x")
        if gy is not None:
            ids[1] = b.add(arith.RemUIOp(rest, gy), "pid_y")
    elif 0 in extents and 1 in extents:
        gx, gy = extents[0], extents[1]
        if group_m > 1:
            width = b.add(arith.MuliOp(b.const(group_m), gy), "group_width")
            group = b.add(arith.DivUIOp(rest, width))
            first_x = b.add(arith.MuliOp(group, b.const(group_m)))
            left = b.add(arith.SubiOp(gx, first_x))
            rows = b.add(arith.MinUIOp(left, b.const(group_m)), "group_rows")
            within = b.add(arith.RemUIOp(rest, width))
            ids[0] = b.add(
                arith.AddiOp(first_x, b.add(arith.RemUIOp(within, rows))), "pid_x"
            )
            ids[1] = b.add(arith.DivUIOp(within, rows), "pid_y")
        else:
            ids[0] = b.add(arith.RemUIOp(rest, gx), "pid_x")
            ids[1] = b.add(arith.DivUIOp(rest, gx), "pid_y")
    else:
        axis = 0 if 0 in extents else 1
        if axis in extents:
            ids[axis] = rest
    return ids
