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
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
)

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import ptx, tile
from tawa_xdsl.dialects.nvgpu_async import FragmentKind
from tawa_xdsl.lowering.distribute.context import (
    MOV,
    KernelState,
    Lowered,
    Ops,
    geometry,
    scalar_class,
)
from tawa_xdsl.lowering.distribute.kernel import DistributePattern

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
        self.k.define(rewriter, op, [], x.select([pick(k) for k in range(geom.count)]))


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
        members = [geom.row_members(r) for r in range(rows)]
        # position j of every row: (value, its element in each row)
        level: list[tuple[SSAValue, tuple[int, ...]]] = [
            (src.value, tuple(src.element(m[j]) for m in members))
            for j in range(len(members[0]))
        ]
        while len(level) > 1:
            level = _combine_level(ops, combine, level, rows)
        value, elements = level[0]
        acc = (
            value
            if elements == tuple(range(rows)) and ptx.width(value) == rows
            else ops.alu(MOV[cls], Lowered(value, elements))
        )
        for lane_mask in (1, 2):
            other = ops.add(ptx.ShflOp(acc, lane_mask)).results[0]
            acc = ops.alu(combine, acc, other)
        self.k.define(rewriter, op, ops, Lowered(acc))


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
    return [Splat(k), ExpandDims(k), Broadcast(k), Reduce(k)]
