"""Where each tile of a consumer role lives once lowered: shared memory or registers.

- Tiles an `aref.get` returns stay in their shared-memory slot (a view); a
  `tile.trans` of a view is a transposed view; a value a loop carries or a
  branch yields is a view when every value copied into it is one (else a
  register tile, the views copied into it read out of their slots first).
  wgmma reads views directly.
- A transpose of a register matrix tile read only by stores is not held
  anywhere: the stores write the tile under it transposed.
- Every other tile is a register fragment. Its layout follows from its shape:
  an M x N tile (both > 1) is in the wgmma accumulator layout, an M x 1 tile holds
  one value per accumulator row, a 1 x N tile one value per column. Rank-1 tiles
  take the kind their context gives them: a row reduction gives rows,
  `expand_dims` at axis 1 wants rows, at axis 0 columns; elementwise ops, loop
  arguments and branch results share one kind; with no context at all (a
  vector loaded, computed on and stored) a vector is a column tile. A row or
  accumulator-layout tile has whole 64-row blocks a warpgroup, or a multiple of
  8 rows under 64 held padded to one (`fragments.row_problem` says why not).

Shape-polymorphic producers (`tile.iota`, `tile.splat`, dense constants:
`is_polymorphic`) must have one use each (the lowering copies them per use first),
so a value like an iota used both as row ids and as column ids gets one copy of
each kind.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute, Operation, OpResult, Region, SSAValue

from tawa_xdsl.analysis.carried import STRUCTURED, carried_pairs, copies
from tawa_xdsl.analysis.elementwise import is_elementwise
from tawa_xdsl.analysis.transposable import blocker
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.dialects.nvgpu_async import FragmentKind, FragmentLayoutAttr
from tawa_xdsl.lowering.fragments import row_problem

POLYMORPHIC = (tile.IotaOp, tile.SplatOp)


def is_polymorphic(op: Operation) -> bool:
    """Whether `op` makes a tile that can take any layout its use wants."""
    if isinstance(op, POLYMORPHIC):
        return True
    return isinstance(op, arith.ConstantOp) and isinstance(
        op.value, DenseIntOrFPElementsAttr
    )


@dataclass(frozen=True)
class Smem:
    """A tile read in place from its shared-memory slot."""

    transposed: bool = False


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[SSAValue, SSAValue] = {}

    def find(self, v: SSAValue) -> SSAValue:
        self.parent.setdefault(v, v)
        while self.parent[v] is not v:
            self.parent[v] = self.parent[self.parent[v]]
            v = self.parent[v]
        return v

    def union(self, a: SSAValue, b: SSAValue) -> None:
        self.parent[self.find(a)] = self.find(b)


def _tensor_values(region: Region) -> list[SSAValue]:
    values: list[SSAValue] = []
    for op in region.walk():
        for r in op.results:
            if isinstance(r.type, TensorType):
                values.append(r)
        for reg in op.regions:
            for block in reg.blocks:
                values += [a for a in block.args if isinstance(a.type, TensorType)]
    return values


def _same_layout_edges(
    op: Operation, in_smem: Container[SSAValue] = ()
) -> list[tuple[SSAValue, SSAValue]]:
    """Pairs of tensor values that must share one layout because of `op`. The
    operands of an elementwise op that are read from shared memory (`in_smem`)
    take the layout the op gives them, so they tie nothing: the op's other tiles
    still share one layout (a view times a splat: the splat follows the result)."""
    tensors = [
        v
        for v in (*op.operands, *op.results)
        if isinstance(v.type, TensorType) and v not in in_smem
    ]
    if isinstance(op, STRUCTURED):
        return [
            (source, copy)
            for source, copy in carried_pairs(op)
            if isinstance(copy.type, TensorType)
        ]
    if is_elementwise(op):
        return [(tensors[0], t) for t in tensors[1:]]
    return []


class ConsumerLayouts:
    """The placement (an `Smem` view or a fragment layout) of every tile value of a
    consumer region at the aref level; `warpgroups` consumer warpgroups share it."""

    def __init__(
        self,
        consumer: Region,
        warpgroups: int,
        transposed: frozenset[SSAValue] = frozenset(),
    ):
        self.warpgroups = warpgroups
        self.placement: dict[SSAValue, Smem | FragmentKind] = {}
        self.stored_transposes: set[SSAValue] = set()
        """Transposes of register tiles only stored: never held, the store
        writes the tile under them transposed (`stored_transposed`)."""
        self.transposed = transposed
        """`aref.get` results whose ring holds the tile transposed (the
        producer transposes it: `ChannelPlan.transposed`)."""
        self._place_views(consumer)
        self._assign(consumer)

    def _place_views(self, consumer: Region) -> None:
        """Views start at `aref.get` results and follow transposes, loop-carried
        values and branch results. A value a loop carries or a branch yields is
        a view only when every value copied into it is one (a loaded tile a loop
        updates in registers, `x = x * 0.5`, is carried in registers, read out
        of its slot before the loop: `LoadSharedOperands`) and no `tile.store`
        reads it (a store copies a view only in the block `aref.get` returned
        it in, before the slot is released)."""
        for op in consumer.walk():
            if isinstance(op, aref.GetOp):
                for v in op.values:
                    if isinstance(v.type, TensorType):  # not a tile ticket
                        self.placement[v] = Smem(v in self.transposed)
        sources: dict[SSAValue, list[tuple[SSAValue, bool]]] = {}
        together = _UnionFind()  # the places one value is copied to share a type
        for op in consumer.walk():
            if isinstance(op, tile.TransOp):
                sources.setdefault(op.result, []).append((op.source, True))
            elif isinstance(op, STRUCTURED):
                first: dict[tuple[Operation, int], SSAValue] = {}
                for holder, i, dst in copies(op):
                    if isinstance(dst.type, TensorType):
                        sources.setdefault(dst, []).append((holder.operands[i], False))
                        together.union(dst, first.setdefault((holder, i), dst))
        groups: dict[SSAValue, list[SSAValue]] = {}
        for dst in together.parent:
            groups.setdefault(together.find(dst), []).append(dst)
        # the largest set of views the copies allow: every value a view reaches,
        # then, until none is left, drop each one something else flows into or
        # a store reads, with the places that share its type
        views = dict(self.placement)
        changed = True
        while changed:
            changed = False
            for dst, srcs in sources.items():
                if dst in views:
                    continue
                src, flip = next(((s, f) for s, f in srcs if s in views), (None, False))
                if src is not None:
                    views[dst] = Smem(views[src].transposed != flip)
                    changed = True
        changed = True
        while changed:
            changed = False
            for dst, srcs in sources.items():
                view = views.get(dst)
                if view is None or dst in self.placement:
                    continue
                stored = dst in together.parent and any(
                    isinstance(u.operation, tile.StoreOp) for u in dst.uses
                )
                if stored or any(
                    s not in views or views[s].transposed != (view.transposed != f)
                    for s, f in srcs
                ):
                    for member in groups.get(together.find(dst), [dst]):
                        views.pop(member, None)
                    changed = True
        self.placement = views
        for op in consumer.walk():
            if isinstance(op, tile.TransOp) and not self.in_smem(op.source):
                if stored_transposed(op):
                    self.stored_transposes.add(op.result)
                    continue
                why = blocker(op.source)
                raise OpDiagnostic(
                    op,
                    "a register tile cannot be transposed"
                    + (f", and this transpose cannot move up: {why}" if why else "")
                    + "; transpose tiles as they come from shared memory (or "
                    "store a 16-bit or f32 matrix tile transposed)",
                )

    def _assign(self, consumer: Region) -> None:
        groups = _UnionFind()
        for op in consumer.walk():
            for a, b in _same_layout_edges(op, self.placement):
                if a not in self.placement and b not in self.placement:
                    groups.union(a, b)

        kinds: dict[SSAValue, set[FragmentKind]] = {}

        def want(v: SSAValue, kind: FragmentKind) -> None:
            kinds.setdefault(groups.find(v), set()).add(kind)

        values = [
            v for v in _tensor_values(consumer) if v not in self.stored_transposes
        ]
        for v in values:
            if v in self.placement:
                continue
            shape = v.type.get_shape()
            if len(shape) == 2:
                want(v, kind_of_matrix(shape))
        for op in consumer.walk():
            if isinstance(op, tile.ReduceOp):
                want(
                    op.result,
                    FragmentKind.ROW if op.axis.value.data == 1 else FragmentKind.COL,
                )
            elif (
                isinstance(op, tile.ExpandDimsOp) and op.source.type.get_num_dims() == 1
            ):
                want(
                    op.source,
                    FragmentKind.ROW if op.axis.value.data == 1 else FragmentKind.COL,
                )
        for v in values:
            if v in self.placement:
                continue
            found = kinds.get(groups.find(v), set())
            if not found and _free_vector(v.type.get_shape()):
                found = {FragmentKind.COL}
            if len(found) != 1:
                owner = v.owner if isinstance(v, OpResult) else v.block.parent_op()
                why = (
                    "no"
                    if not found
                    else "conflicting (" + ", ".join(sorted(found)) + ")"
                )
                raise OpDiagnostic(
                    owner,
                    f"cannot place the {v.type} value %{v.name_hint or '?'} in registers: "
                    f"{why} layout constraints",
                )
            kind = next(iter(found))
            if kind != FragmentKind.COL and (
                why := row_problem(v.type.get_shape()[0], self.warpgroups)
            ):
                owner = v.owner if isinstance(v, OpResult) else v.block.parent_op()
                raise OpDiagnostic(
                    owner,
                    f"cannot hold the {v.type} value %{v.name_hint or '?'} in "
                    f"registers: {why}",
                )
            self.placement[v] = kind

    def type_of(self, v: SSAValue) -> Attribute:
        """The lowered type of a register tile (its tensor type with a layout)."""
        kind = self.placement[v]
        assert isinstance(kind, FragmentKind), f"{v} is not in registers"
        t = v.type
        return TensorType(
            t.element_type, t.get_shape(), FragmentLayoutAttr(kind, self.warpgroups)
        )

    def in_smem(self, v: SSAValue) -> bool:
        return isinstance(self.placement.get(v), Smem)


def stored_transposed(op: tile.TransOp) -> bool:
    """Whether `op` transposes a matrix tile (of the accumulator layout, 16-bit
    or f32: 8-bit registers hold pairs) that is only stored: a store from
    registers writes each element at its transposed place
    (`nvgpu_async.store_global transposed`), so the transpose is never held."""
    src = op.source.type
    assert isinstance(src, TensorType)
    return (
        bool(op.result.uses)
        and all(isinstance(u.operation, tile.StoreOp) for u in op.result.uses)
        and kind_of_matrix(src.get_shape()) == FragmentKind.ACC
        and not tile.is_fp8(src.element_type)
    )


def _free_vector(shape: tuple[int, ...]) -> bool:
    """A vector tile nothing ties to rows or columns (loaded, computed on,
    stored) is held as a column tile: each thread its 8-column groups' pairs."""
    return len(shape) == 1 and shape[0] % 8 == 0


def read_layout(
    op: Operation, shape: tuple[int, ...], result_layout: FragmentLayoutAttr
) -> FragmentLayoutAttr:
    """The register layout `op` reads a shared tile of `shape` in: an
    elementwise op reads it in its result's layout, any other op (a reduction
    or a broadcast of a loaded tile) in the layout of the tile's own shape (a
    row reduction of an M x N tile reads the accumulator layout, not the
    layout of its M results)."""
    if is_elementwise(op) or len(shape) != 2:
        return result_layout
    return FragmentLayoutAttr(kind_of_matrix(shape), result_layout.warpgroups.data)


def kind_of_matrix(shape: tuple[int, ...]) -> FragmentKind:
    rows, cols = shape
    if cols == 1 and rows > 1:
        return FragmentKind.ROW
    if rows == 1 and cols > 1:
        return FragmentKind.COL
    return FragmentKind.ACC
