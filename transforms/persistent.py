"""persistent{group-m=8 longest-first=false}: one long-lived program per SM
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

Why before `aref-partition`: the partitioner threads every aref's index through
all enclosing loops, so indices keep counting across tiles and the producer runs
ahead into the next tile's loads while the consumers finish the current one.
"""

from __future__ import annotations

from dataclasses import dataclass

from tawa_xdsl.dialects import aref, tile
from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.grid import GridInferenceError, encode_rules, recorded_grid_rule
from tawa_xdsl.kernel import cluster_size, kernels

PERSISTENT_ATTR = "tile.persistent"


@dataclass(frozen=True)
class PersistentPass(ModulePass):
    """Turn each tile kernel into a persistent kernel over its output tiles."""

    name = "persistent"

    group_m: int = 8
    longest_first: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.group_m < 1:
            raise PassFailedException(
                f"persistent: group-m must be at least 1, got {self.group_m}"
            )
        for kernel in kernels(op):
            if PERSISTENT_ATTR in kernel.attributes:
                continue
            if any(isinstance(o, aref.WarpSpecializeOp) for o in kernel.walk()):
                raise OpDiagnostic(
                    kernel,
                    f"persistent: kernel @{kernel.sym_name.data} is already "
                    "warp-specialized; run persistent before aref-partition",
                )
            try:
                rules = recorded_grid_rule(kernel)
            except GridInferenceError as e:
                raise OpDiagnostic(kernel, f"persistent: {e}") from None
            _make_persistent(kernel, rules, self.group_m, self.longest_first)


class _Builder:
    """Appends index arithmetic to a block."""

    def __init__(self, block: Block, before: Operation | None = None):
        self.block, self.before = block, before

    def add(self, op: Operation, name: str | None = None) -> SSAValue:
        if self.before is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_before(op, self.before)
        result = op.results[0]
        if name:
            result.name_hint = name
        return result

    def const(self, value: int) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(value, IndexType())))


def _make_persistent(
    kernel: func.FuncOp,
    rules: list[tuple[int, int, int, int]],
    group_m: int,
    longest_first: bool,
) -> None:
    body = kernel.body.block
    ret = body.last_op
    assert isinstance(ret, func.ReturnOp)
    moved = [o for o in body.ops if o is not ret]

    pre = _Builder(body, ret)
    extents: dict[int, SSAValue] = {}
    for axis, arg, dim, size in rules:
        extent = pre.add(tile.DimOp(body.args[arg], dim))
        if size > 1:
            extent = pre.add(arith.CeilDivUIOp(extent, pre.const(size)))
        extent.name_hint = f"tiles_{'xyz'[axis]}"
        extents[axis] = extent
    # with clusters of S blocks the loop walks cluster tiles: S x tiles at once
    size = cluster_size(kernel)
    walked = dict(extents)
    if size > 1 and 0 in extents:
        walked[0] = pre.add(arith.CeilDivUIOp(extents[0], pre.const(size)))
        walked[0].name_hint = "clusters_x"
    total = None
    for axis in sorted(walked):
        total = (
            walked[axis]
            if total is None
            else pre.add(arith.MuliOp(total, walked[axis]))
        )
    assert total is not None, "grid_rule covers at least one axis"
    total.name_hint = "tiles"
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
    body.insert_op_before(scf.ForOp(first, total, stride, [], loop_body), ret)
    b = _Builder(loop_body)
    ids = _tile_ids(
        b, loop_body.args[0], walked, max(1, group_m // size), longest_first
    )
    if size > 1 and 0 in ids:
        ids[0].name_hint = "cluster_x"
        base = b.add(arith.MuliOp(ids[0], b.const(size)))
        ids[0] = b.add(arith.AddiOp(base, b.add(tile.ClusterRankOp())), "pid_x")

    for o in moved:
        o.detach()
        loop_body.add_op(o)
    loop_body.add_op(scf.YieldOp())
    for o in list(loop_body.walk()):
        if isinstance(o, tile.ProgramIdOp | tile.NumProgramsOp):
            axis = o.axis.index
            if isinstance(o, tile.ProgramIdOp):
                replacement = ids.get(axis)
            else:
                replacement = extents.get(axis)
            if replacement is None:  # an axis the grid does not use has extent 1
                replacement = _Builder(loop_body, o).const(
                    0 if isinstance(o, tile.ProgramIdOp) else 1
                )
            o.result.replace_all_uses_with(replacement)
            o.detach()
            o.erase()
    kernel.attributes[PERSISTENT_ATTR] = encode_rules(rules)


def _tile_ids(
    b: _Builder,
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
