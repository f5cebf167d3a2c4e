"""Reductions and broadcasts (pattern family 2).

A splat is its scalar, one register every element reads; `tile.expand_dims`
keeps the registers; `tile.broadcast` of a row (column) tile over an
accumulator tile is a map, no instruction: accumulator element k reads row
element `row_of_acc(k)` (`fragments.Geometry`).

`tile.reduce` along the rows of an accumulator tile (f32, or i32 with the
`.s32` ops): each thread combines the elements it holds of each of its rows
pairwise (one `ptx.alu` per tree level over all rows), then the four lanes of
a quad, which hold the rest of the row, exchange partial results with two
butterfly shuffles (lane masks 1 and 2).

`nvgpu_async.column_reduce` (`tile.reduce` along the columns, axis 0, f32 or
i32 with the same ops): each thread combines the elements it holds of each of its columns (its rows of
every 64-row block, the same tree; a tile under 64 rows first has its padding
rows' elements replaced by the reduction's identity), then the eight lanes of
a warp that hold
the rest of its 16-row slab (lanes l, l^4, l^8, l^16: g) shuffle with masks
4, 8 and 16. Lane g = 0 of each warp writes the warp's partials to its row of
the scratch (row 4 cwg + warp, `nv.column_scratch_words`) between two
`bar.sync 1` over the consumer threads (the first waits for the previous
reduction's readers); then consumer thread i combines column i's partials
(and i + threads, ... for a tile wider than the threads) in warp order and
writes the total into row 0, and after a third `bar.sync 1` every thread
reads its columns' totals: the column tile, the same in every thread of a t.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
)

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import ptx, tile
from tawa_xdsl.dialects.nvgpu_async import FragmentKind
from tawa_xdsl.dialects.tile import is_fp8
from tawa_xdsl.lowering.distribute.barriers import CONSUMER_BARRIER
from tawa_xdsl.lowering.distribute.context import (
    MOV,
    KernelState,
    Lowered,
    Ops,
    geometry,
    is_16bit,
    scalar_class,
)
from tawa_xdsl.lowering.distribute.elementwise import narrow, widen
from tawa_xdsl.lowering.distribute.kernel import DistributePattern
from tawa_xdsl.lowering.fragments import Geometry

ROW_LANE_MASKS = (1, 2)
"""The lanes holding the rest of an accumulator row: the quad (t)."""
COLUMN_LANE_MASKS = (4, 8, 16)
"""The lanes of a warp holding the rest of an accumulator column (g)."""

COMBINE = {
    "f32": {
        tile.ReduceKind.MAX: "max.NaN.f32",
        tile.ReduceKind.MIN: "min.NaN.f32",
        tile.ReduceKind.SUM: "add.f32",
    },
    "b32": {  # i32 tiles
        tile.ReduceKind.MAX: "max.s32",
        tile.ReduceKind.MIN: "min.s32",
        tile.ReduceKind.SUM: "add.s32",
    },
}
"""The combining op of each reduction, by the register class of the elements."""


class Splat(DistributePattern):
    OPS = (tile.SplatOp,)

    def rewrite(self, op: tile.SplatOp, rewriter: PatternRewriter):
        self.k.define(rewriter, op, [], self.k.lowered(op.source, op))


class ExpandDims(DistributePattern):
    OPS = (tile.ExpandDimsOp,)

    def rewrite(self, op: tile.ExpandDimsOp, rewriter: PatternRewriter):
        self.k.define(rewriter, op, [], self.k.lowered(op.source, op))


class Broadcast(DistributePattern):
    OPS = (tile.BroadcastOp,)

    def rewrite(self, op: tile.BroadcastOp, rewriter: PatternRewriter):
        x = self.k.lowered(op.source, op)
        if x.uniform:
            self.k.define(rewriter, op, [], x)
            return
        src, geom = geometry(op.source.type), geometry(op.result.type)
        if src.kind == geom.kind:
            self.k.define(rewriter, op, [], x)
            return
        if geom.kind != FragmentKind.ACC:
            raise OpDiagnostic(op, "tile.broadcast is supported onto accumulator tiles")
        pick = geom.row_of_acc if src.kind == FragmentKind.ROW else geom.col_of_acc
        picked = [pick(k) for k in range(geom.count)]
        et = op.source.type.element_type
        if is_16bit(et) or is_fp8(et):  # elements in pairs: through f32 registers
            ops = Ops(self.k)
            wide = widen(ops, x, op.source.type).select(picked)
            self.k.define(rewriter, op, ops, narrow(ops, wide, op.result.type))
            return
        self.k.define(rewriter, op, [], x.select(picked))


class Reduce(DistributePattern):
    OPS = (tile.ReduceOp,)

    def rewrite(self, op: tile.ReduceOp, rewriter: PatternRewriter):
        src = self.k.lowered(op.source, op)
        if src.uniform or geometry(op.source.type).kind != FragmentKind.ACC:
            raise OpDiagnostic(
                op, "tile.reduce is supported on accumulator-layout tiles"
            )
        cls = scalar_class(op.source.type.element_type)
        combine = COMBINE[cls][tile.ReduceKind(op.kind.data)]
        geom = geometry(op.source.type)
        rows = geometry(op.result.type).count
        ops = Ops(self.k)
        acc = _combine_members(
            ops, combine, cls, src, [geom.row_members(r) for r in range(rows)]
        )
        acc = _butterfly(ops, combine, acc, ROW_LANE_MASKS)
        self.k.define(rewriter, op, ops, Lowered(acc))


class ColumnReduce(DistributePattern):
    """See the module docstring: partials per thread, per warp (shuffles), per
    consumer (through the scratch, between two consumer barriers)."""

    OPS = (nv.ColumnReduceOp,)

    def rewrite(self, op: nv.ColumnReduceOp, rewriter: PatternRewriter):
        k, ops = self.k, Ops(self.k)
        src = k.lowered(op.source, op)
        if src.uniform:
            raise OpDiagnostic(
                op, "a column reduction of a splat: reduce the tile it is made from"
            )
        cls = scalar_class(op.source.type.element_type)
        kind = tile.ReduceKind(op.kind.data)
        combine = COMBINE[cls][kind]
        geom, cols = geometry(op.source.type), geometry(op.result.type).count
        if (held := k.padding_guard(geom, op, ops)) is not None:
            src = _without_padding(ops, src, geom, held, kind.identity(cls == "f32"))
        acc = _combine_members(
            ops, combine, cls, src, [geom.col_members(c) for c in range(cols)]
        )
        acc = _butterfly(ops, combine, acc, COLUMN_LANE_MASKS)
        ids = k.consumer_ids(op)
        n = geom.cols
        # this thread's columns of its warp's row: (4 cwg + warp) n + 2 t
        warp = ops.alu("mad.lo.u32", ids.cwg, ops.imm(4, "b32"), ids.warp)
        word = ops.alu("mad.lo.u32", warp, ops.imm(n, "b32"), ids.col0)
        base = k.lowered(op.scratch, op).value
        row = ops.alu("mad.lo.u32", word, ops.imm(4, "b32"), base)
        first = ops.alu("setp.eq.u32", ids.g, ops.imm(0, "b32"))  # a lane per column
        barrier = ptx.BarOp(k.imm(CONSUMER_BARRIER, "b32"), geom.threads)
        ops.add(barrier)  # the previous reduction has read the scratch
        pairs = [8 * j * 4 for j in range(n // 8)]  # 8-column groups, 32-bit pairs
        ops.add(
            ptx.StoreOp(
                "shared", row, acc, list(range(cols)), pred=first, offsets=pairs
            )
        )
        ops.add(barrier.clone())  # every warp's partials are in
        _combine_rows(ops, combine, cls, ids.ctid, base, n, geom)
        ops.add(barrier.clone())  # every column's total is in row 0
        mine = ops.alu("mad.lo.u32", ids.col0, ops.imm(4, "b32"), base)
        result = ops.add(ptx.LoadOp("shared", mine, cls, cols, offsets=pairs))
        self.k.define(rewriter, op, ops, Lowered(result.results[0]))


def _combine_rows(
    ops: Ops,
    combine: str,
    cls: str,
    ctid: SSAValue,
    base: SSAValue,
    n: int,
    geom: Geometry,
) -> None:
    """Each consumer thread combines the warps' partials of one column of the
    scratch (`ctid`, `ctid + threads`, ... while under `n`), in warp order, and
    writes the total over the column's row-0 partial, which no other thread
    reads. Every thread reading every warp's row for each of its columns held
    all of them at once: ptxas issues such independent loads up front, and a
    192-column reduction over three warpgroups (576 loads a thread) spilled."""
    rows, threads = 4 * geom.warpgroups, geom.threads
    for first in range(0, n, threads):
        column = ops.alu("add.u32", ctid, ops.imm(first, "b32")) if first else ctid
        if first + threads > n:  # the threads past the last column read it
            column = ops.alu("min.u32", column, ops.imm(n - 1, "b32"))
        at = ops.alu("mad.lo.u32", column, ops.imm(4, "b32"), base)
        words = [4 * n * w for w in range(rows)]
        partials = ops.add(ptx.LoadOp("shared", at, cls, rows, offsets=words))
        row = [Lowered(partials.results[0], (w,)) for w in range(rows)]
        total = ops.alu(combine, row[0], row[1])
        for partial in row[2:]:
            total = ops.alu(combine, total, partial)
        inside = ops.alu("setp.lt.u32", ctid, ops.imm(n - first, "b32"))
        ops.add(ptx.StoreOp("shared", at, total, [0], pred=inside))


def _without_padding(
    ops: Ops, src: Lowered, geom: Geometry, held: SSAValue, identity: float | int
) -> Lowered:
    """`src`, a tile under 64 rows (`Geometry.padded`), its padding rows'
    elements replaced by the reduction's identity: they hold copies of its
    rows (a sum would count them twice) or values computed from rows past it
    (a max would see them). `held` is `padding_guard`'s: one predicate, or
    one per row a thread holds (h, a half slab)."""
    half, cls = geom.cols // 2, src.cls
    if ptx.width(held) == 2:  # element k of the thread is in its row h
        held = Lowered(held, tuple((k % half) >> 1 & 1 for k in range(geom.count)))
    masked = ops.alu(f"selp.{cls}", src, ops.imm(identity, cls), held, count=geom.count)
    return Lowered(masked)


def _combine_members(
    ops: Ops, combine: str, cls: str, src: Lowered, members: Sequence[Sequence[int]]
) -> SSAValue:
    """Output r combines this thread's elements `members[r]` of `src` (as many
    for every output): pairwise, one `ptx.alu` per tree level over all outputs;
    a bundle of one register per output."""
    outputs = len(members)
    # position j of every output: (value, its element in each output)
    level: list[tuple[SSAValue, tuple[int, ...]]] = [
        (src.value, tuple(src.element(m[j]) for m in members))
        for j in range(len(members[0]))
    ]
    while len(level) > 1:
        level = _combine_level(ops, combine, level, outputs)
    value, elements = level[0]
    if elements == tuple(range(outputs)) and ptx.width(value) == outputs:
        return value
    return ops.alu(MOV[cls], Lowered(value, elements))


def _butterfly(
    ops: Ops, combine: str, acc: SSAValue, lane_masks: Sequence[int]
) -> SSAValue:
    """Combine `acc` across the lanes that differ in the bits of `lane_masks`:
    one butterfly shuffle each; every such lane ends with the same values."""
    for lane_mask in lane_masks:
        other = ops.add(ptx.ShflOp(acc, lane_mask)).results[0]
        acc = ops.alu(combine, acc, other)
    return acc


def _combine_level(
    ops: Ops,
    combine: str,
    level: Sequence[tuple[SSAValue, tuple[int, ...]]],
    rows: int,
) -> list[tuple[SSAValue, tuple[int, ...]]]:
    """Combine positions (2i, 2i + 1) of every row; an odd last position
    carries over. Pairs that read the same two values are one op (all of them,
    when the row length is a power of two), its element i R + r being pair i
    of row r."""
    pairs = [(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
    groups: dict[tuple[SSAValue, SSAValue], list[int]] = {}
    for i, (a, b) in enumerate(pairs):
        groups.setdefault((a[0], b[0]), []).append(i)
    out: list[tuple[SSAValue, tuple[int, ...]] | None] = [None] * len(pairs)
    for (va, vb), members in groups.items():
        a_map = [pairs[i][0][1][r] for i in members for r in range(rows)]
        b_map = [pairs[i][1][1][r] for i in members for r in range(rows)]
        d = ops.alu(combine, Lowered(va, tuple(a_map)), Lowered(vb, tuple(b_map)))
        for n, i in enumerate(members):
            out[i] = (d, tuple(n * rows + r for r in range(rows)))
    result = [x for x in out if x is not None]
    if len(level) % 2:
        result.append(level[-1])
    return result


def patterns(k: KernelState) -> list[DistributePattern]:
    return [Splat(k), ExpandDims(k), Broadcast(k), Reduce(k), ColumnReduce(k)]
