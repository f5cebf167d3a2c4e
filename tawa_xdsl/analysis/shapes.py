"""Which tile dimensions of a kernel are one dimension, and their names.

A kernel leaves its tile shape open by naming box axes of its `!tile.desc`
parameters (`{tile.box = ["BM", "BK"]}`); every tensor dimension the ops tie to
a named axis (loads and stores, dot, trans, reductions, expand_dims,
broadcast, elementwise ops, loop-carried and branch values) is that dimension.
`tile-shape` resizes the named dimensions; the tuning rules ask what shape a
tile would take under given sizes without resizing anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.traits import IsTerminator

from tawa_xdsl.analysis.carried import STRUCTURED, carried_pairs
from tawa_xdsl.analysis.elementwise import is_elementwise
from tawa_xdsl.analysis.transposable import transposable
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import tile

BOX_ATTR = "tile.box"
NAMES = ("BM", "BN", "BK")

Dim = tuple[SSAValue, int]
"""Axis `i` of a tensor value, or of a descriptor's box."""


class DimClasses:
    """Union-find over tensor and box dimensions that must keep equal extents."""

    def __init__(self) -> None:
        self.parent: dict[Dim, Dim] = {}

    def find(self, d: Dim) -> Dim:
        self.parent.setdefault(d, d)
        while self.parent[d] != d:
            self.parent[d] = self.parent[self.parent[d]]
            d = self.parent[d]
        return d

    def union(self, a: Dim, b: Dim) -> None:
        self.parent[self.find(a)] = self.find(b)

    def tie(self, a: SSAValue, b: SSAValue) -> None:
        """All axes of two values of the same shape."""
        for i in range(len(shape_of(a))):
            self.union((a, i), (b, i))


def shape_of(v: SSAValue) -> tuple[int, ...]:
    """The shape of a tile, or the box of a descriptor."""
    t = v.type
    if isinstance(t, tile.DescType):
        return t.get_box()
    assert isinstance(t, TensorType)
    return t.get_shape()


def is_shaped(v: SSAValue) -> bool:
    """Whether `v` has a tile shape (a tensor, or a descriptor's box)."""
    return isinstance(v.type, TensorType | tile.DescType)


class KernelShape:
    """The dimension classes of one kernel and their names."""

    def __init__(self, kernel: func.FuncOp):
        self.kernel = kernel
        self.dims = DimClasses()
        self.names: dict[Dim, tuple[str, Operation]] = {}
        for o in kernel.body.walk():
            self._relate(o)
        self._seed_names()

    # --------------------------------------------------------------- analysis

    def _relate(self, o: Operation) -> None:
        d = self.dims
        if isinstance(o, tile.LoadOp | tile.StoreOp):
            t = o.result if isinstance(o, tile.LoadOp) else o.value
            box = len(shape_of(o.desc))
            rank = len(shape_of(t))
            for i in range(rank):
                d.union((t, i), (o.desc, box - rank + i))
        elif isinstance(o, tile.DotOp):
            d.union((o.lhs, 0), (o.result, 0))
            d.union((o.rhs, 1), (o.result, 1))
            d.union((o.lhs, 1), (o.rhs, 0))
            d.tie(o.acc, o.result)
        elif isinstance(o, tile.TransOp):
            d.union((o.source, 0), (o.result, 1))
            d.union((o.source, 1), (o.result, 0))
        elif isinstance(o, tile.ReduceOp):
            axis = o.axis.value.data
            kept = [i for i in range(len(shape_of(o.source))) if i != axis]
            for j, i in enumerate(kept):
                d.union((o.source, i), (o.result, j))
        elif isinstance(o, tile.ExpandDimsOp):
            axis = o.axis.value.data
            for i in range(len(shape_of(o.source))):
                d.union((o.source, i), (o.result, i + (i >= axis)))
        elif isinstance(o, tile.BroadcastOp):
            for i, (s, r) in enumerate(
                zip(shape_of(o.source), shape_of(o.result), strict=True)
            ):
                if s == r:
                    d.union((o.source, i), (o.result, i))
        elif isinstance(o, STRUCTURED):
            for source, copy in carried_pairs(o):
                if is_shaped(copy):
                    d.tie(source, copy)
        elif is_elementwise(o):
            shaped = [v for v in (*o.operands, *o.results) if is_shaped(v)]
            for v in shaped[1:]:
                d.tie(shaped[0], v)
        elif isinstance(
            o,
            tile.SplatOp | tile.IotaOp | arith.ConstantOp | tile.DimOp | tile.ExtractOp,
        ):
            pass  # result extents are free (their uses tie them), or not a tile
        elif o.has_trait(IsTerminator) or not any(
            is_shaped(v) for v in (*o.operands, *o.results)
        ):
            pass
        elif o.regions:
            raise OpDiagnostic(
                o,
                f"{o.name} is not control flow a tile kernel has (scf.for, "
                "scf.while and scf.if are)",
            )
        else:
            raise OpDiagnostic(o, f"does not know how {o.name} relates tile shapes")

    def _seed_names(self) -> None:
        attrs = self.kernel.arg_attrs
        if attrs is None:
            return
        for arg, entry in zip(self.kernel.body.block.args, attrs.data, strict=True):
            names = entry.data.get(BOX_ATTR)
            if names is None:
                continue
            if not isinstance(arg.type, tile.DescType) or not (
                isinstance(names, ArrayAttr)
                and len(names.data) == arg.type.rank
                and all(isinstance(n, StringAttr) for n in names.data)
            ):
                raise OpDiagnostic(
                    self.kernel,
                    f"{BOX_ATTR} of %{arg.name_hint} must list one name (or "
                    f'"") per box axis of a !tile.desc parameter',
                )
            for axis, n in enumerate(names.data):
                assert isinstance(n, StringAttr)
                if n.data:
                    self._name((arg, axis), n.data, f"{BOX_ATTR} of %{arg.name_hint}")

    def _name(self, dim: Dim, name: str, given_by: str) -> None:
        """Name `dim` `name`, as `given_by` (a parameter's box attribute) does."""
        if name not in NAMES:
            raise OpDiagnostic(
                self.kernel,
                f"{given_by} names an unknown tile dimension '{name}'; the names "
                f"are {', '.join(NAMES)}",
            )
        root = self.dims.find(dim)
        known = self.names.get(root)
        if known is not None and known[0] != name:
            raise OpDiagnostic(
                self.kernel,
                f"{known[0]} and {name} are the same tile dimension in "
                f"@{self.kernel.sym_name.data}; they cannot be sized apart",
            )
        self.names[root] = (name, self.kernel)

    def members(self) -> Iterator[tuple[Dim, Dim]]:
        """Every related dimension with the root of its class."""
        for dim in list(self.dims.parent):
            yield dim, self.dims.find(dim)

    def resized(self, v: SSAValue, sizes: dict[str, int]) -> tuple[int, ...]:
        """The shape `v` takes when the named dimensions get `sizes`."""
        shape = list(shape_of(v))
        for i in range(len(shape)):
            named = self.names.get(self.dims.find((v, i)))
            if named is not None and named[0] in sizes:
                shape[i] = sizes[named[0]]
        return tuple(shape)


def _held(stored: SSAValue) -> SSAValue:
    """The register tile a store of `stored` reads: under a transpose that
    stays (pinned, or one canonicalize cannot move up), the tile it
    transposes (`layouts.stored_transposed`)."""
    trans = stored.owner
    if isinstance(trans, tile.TransOp) and (
        trans.pinned or not transposable(trans.source)
    ):
        return trans.source
    return stored


def split_tiles(ops: Iterable[Operation]) -> list[tuple[Operation, SSAValue]]:
    """The matrix tiles consumer warpgroups split by rows, each with the op that
    makes or reads it: every dot's result, every reduced tile, every stored
    matrix (of a transpose stored, the tile under it, `_held`). Their rows
    decide how many warpgroups can share the work."""
    found: list[tuple[Operation, SSAValue]] = []
    for op in ops:
        if isinstance(op, tile.DotOp):
            found.append((op, op.result))
        elif isinstance(op, tile.ReduceOp):
            found.append((op, op.source))
        elif isinstance(op, tile.StoreOp):
            found.append((op, _held(op.value)))
    return [(op, t) for op, t in found if len(t.type.get_shape()) == 2]
