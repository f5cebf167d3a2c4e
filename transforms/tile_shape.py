"""tile-shape{block-m=M block-n=N block-k=K}: choose the tile shape of a kernel
that leaves it open.

A kernel leaves its tile shape open by naming the tunable dimensions:

- each `!tile.desc` parameter may carry `{tile.box = ["BM", "BK"]}`, one name (or
  "" for a fixed extent) per box axis;
- each index constant that scales with a tile dimension (a tile offset
  `program_id * 128`, a loop step) is tagged: `arith.constant {tile.size = "BM"} 128`.

The IR is written for one shape (its defaults) and stays an ordinary kernel. The
pass relates every tensor dimension to the box axes through the ops that carry
shapes (loads and stores, dot, trans, reductions, expand_dims, broadcast,
elementwise `arith`/`math`, `tile.cmpi`/`tile.select`, loop-carried values), so a
name given to a box axis reaches every tile dimension tied to it; then it rewrites
the types, the splat constants and the tagged index constants to the requested
sizes. An option left at 0 keeps the written size. Run it on tile IR, before
`aref-partition` and `persistent`. Contradictions get a diagnostic at the op:
two names tied to one dimension, a named dimension written with two sizes, a
tag that disagrees with its dimension, a non-splat constant or an op the shape
rules do not know in the way.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.lowering.carried import STRUCTURED, carried_pairs
from tawa_xdsl.transforms.persistent import PERSISTENT_ATTR
from xdsl.context import Context
from xdsl.dialects import arith, func, math
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import PassFailedException, VerifyException

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.grid import GRID_ATTR
from tawa_xdsl.kernel import kernels

BOX_ATTR = "tile.box"
SIZE_ATTR = "tile.size"
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
        for i in range(len(_shape(a))):
            self.union((a, i), (b, i))


def _shape(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    if isinstance(t, tile.DescType):
        return t.get_box()
    assert isinstance(t, TensorType)
    return t.get_shape()


def _is_shaped(v: SSAValue) -> bool:
    return isinstance(v.type, TensorType | tile.DescType)


@dataclass(frozen=True)
class TileShapePass(ModulePass):
    """Resize the named tile dimensions (0 keeps the written size)."""

    name = "tile-shape"

    block_m: int = 0
    block_n: int = 0
    block_k: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sizes = {
            n: s
            for n, s in zip(
                NAMES, (self.block_m, self.block_n, self.block_k), strict=True
            )
            if s
        }
        for name, size in sizes.items():
            if size < 2:
                raise PassFailedException(
                    f"tile-shape: {name} must be at least 2, got {size}"
                )
        for kernel in kernels(op):
            if any(isinstance(o, aref.WarpSpecializeOp) for o in kernel.walk()):
                raise OpDiagnostic(
                    kernel,
                    f"tile-shape: kernel @{kernel.sym_name.data} is already "
                    "warp-specialized; run tile-shape before aref-partition",
                )
            for attr, after in (
                (PERSISTENT_ATTR, "persistent"),
                (GRID_ATTR, "reverse-grid"),
            ):
                if sizes and attr in kernel.attributes:
                    raise OpDiagnostic(
                        kernel,
                        f"tile-shape: kernel @{kernel.sym_name.data} has a launch "
                        f"grid recorded by {after} (its tile count follows the old "
                        f"shape); run tile-shape before {after}",
                    )
            KernelShape(kernel).resize(sizes)


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
            box = len(_shape(o.desc))
            rank = len(_shape(t))
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
            kept = [i for i in range(len(_shape(o.source))) if i != axis]
            for j, i in enumerate(kept):
                d.union((o.source, i), (o.result, j))
        elif isinstance(o, tile.ExpandDimsOp):
            axis = o.axis.value.data
            for i in range(len(_shape(o.source))):
                d.union((o.source, i), (o.result, i + (i >= axis)))
        elif isinstance(o, tile.BroadcastOp):
            for i, (s, r) in enumerate(
                zip(_shape(o.source), _shape(o.result), strict=True)
            ):
                if s == r:
                    d.union((o.source, i), (o.result, i))
        elif isinstance(o, STRUCTURED):
            for source, copy in carried_pairs(o):
                if _is_shaped(copy):
                    d.tie(source, copy)
        elif _elementwise(o):
            shaped = [v for v in (*o.operands, *o.results) if _is_shaped(v)]
            for v in shaped[1:]:
                d.tie(shaped[0], v)
        elif isinstance(o, tile.SplatOp | tile.IotaOp | arith.ConstantOp | tile.DimOp):
            pass  # result extents are free (their uses tie them), or not a tile
        elif o.has_trait(IsTerminator) or not any(
            _is_shaped(v) for v in (*o.operands, *o.results)
        ):
            pass
        else:
            raise OpDiagnostic(
                o, f"tile-shape: does not know how {o.name} relates tile shapes"
            )

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
                    f"tile-shape: {BOX_ATTR} of %{arg.name_hint} must list one name (or "
                    f'"") per box axis of a !tile.desc parameter',
                )
            for axis, n in enumerate(names.data):
                assert isinstance(n, StringAttr)
                if n.data:
                    self._name((arg, axis), n.data, self.kernel)

    def _name(self, dim: Dim, name: str, where: Operation) -> None:
        if name not in NAMES:
            raise OpDiagnostic(
                where,
                f"tile-shape: unknown tile dimension name '{name}'; the names are "
                f"{', '.join(NAMES)}",
            )
        root = self.dims.find(dim)
        known = self.names.get(root)
        if known is not None and known[0] != name:
            raise OpDiagnostic(
                where,
                f"tile-shape: {known[0]} and {name} are the same tile dimension in "
                f"@{self.kernel.sym_name.data}; they cannot be sized apart",
            )
        self.names[root] = (name, where)

    def _members(self) -> Iterator[tuple[Dim, Dim]]:
        for dim in list(self.dims.parent):
            yield dim, self.dims.find(dim)

    # ---------------------------------------------------------------- rewrite

    def resize(self, sizes: dict[str, int]) -> None:
        written: dict[str, int] = {}
        for dim, root in self._members():
            if root in self.names:
                name = self.names[root][0]
                extent = _shape(dim[0])[dim[1]]
                if written.setdefault(name, extent) != extent:
                    raise OpDiagnostic(
                        _owner(dim[0]) or self.kernel,
                        f"tile-shape: {name} is written as both {written[name]} and "
                        f"{extent}",
                    )
        tags = [
            o
            for o in self.kernel.body.walk()
            if isinstance(o, arith.ConstantOp) and SIZE_ATTR in o.attributes
        ]
        for c in tags:
            tag = c.attributes[SIZE_ATTR]
            name = tag.data if isinstance(tag, StringAttr) else None
            if name not in NAMES or not isinstance(c.value, IntegerAttr):
                raise OpDiagnostic(
                    c,
                    f"tile-shape: {SIZE_ATTR} must be one of {', '.join(NAMES)} on an "
                    "integer constant",
                )
            if name in written and c.value.value.data != written[name]:
                raise OpDiagnostic(
                    c,
                    f"tile-shape: the constant tagged {name} is "
                    f"{c.value.value.data} but {name} is {written[name]}",
                )
        missing = sorted(
            n
            for n in sizes
            if n not in written
            and all(c.attributes[SIZE_ATTR] != StringAttr(n) for c in tags)
        )
        if missing:
            raise OpDiagnostic(
                self.kernel,
                f"tile-shape: @{self.kernel.sym_name.data} does not name "
                f"{', '.join(missing)}; tag its box axes with {BOX_ATTR} and its "
                f"index constants with {SIZE_ATTR}",
            )
        for c in tags:
            name = c.attributes[SIZE_ATTR]
            assert isinstance(name, StringAttr)
            if name.data in sizes:
                new = arith.ConstantOp(
                    IntegerAttr(sizes[name.data], c.result.type), c.result.type
                )
                new.attributes[SIZE_ATTR] = name
                new.result.name_hint = c.result.name_hint
                Rewriter.replace_op(c, new)
        self._retype(sizes)

    def resized(self, v: SSAValue, sizes: dict[str, int]) -> tuple[int, ...]:
        """The shape `v` takes when the named dimensions get `sizes`."""
        shape = list(_shape(v))
        for i in range(len(shape)):
            named = self.names.get(self.dims.find((v, i)))
            if named is not None and named[0] in sizes:
                shape[i] = sizes[named[0]]
        return tuple(shape)

    def _retype(self, sizes: dict[str, int]) -> None:
        try:
            self._retype_values(sizes)
            self.kernel.verify()
        except VerifyException as e:
            raise OpDiagnostic(
                self.kernel, f"tile-shape: the resized kernel is invalid: {e}"
            ) from None

    def _retype_values(self, sizes: dict[str, int]) -> None:
        values: list[SSAValue] = [*self.kernel.body.block.args]
        for o in self.kernel.body.walk():
            values += o.results
            for region in o.regions:
                for block in region.blocks:
                    values += block.args
        for v in values:
            if not _is_shaped(v):
                continue
            shape = self.resized(v, sizes)
            if shape == _shape(v):
                continue
            t = v.type
            if isinstance(t, tile.DescType):
                new_type: Attribute = tile.DescType(
                    t.get_shape(), t.element_type, shape
                )
            else:
                assert isinstance(t, TensorType)
                new_type = TensorType(t.element_type, shape)
            owner = _owner(v)
            if isinstance(owner, arith.ConstantOp):
                self._resize_constant(owner, new_type)
                continue
            name = v.name_hint
            Rewriter.replace_value_with_new_type(v, new_type).name_hint = name
        self.kernel.function_type = FunctionType.from_lists(
            [a.type for a in self.kernel.body.block.args],
            self.kernel.function_type.outputs.data,
        )

    def _resize_constant(self, c: arith.ConstantOp, new_type: Attribute) -> None:
        value = c.value
        assert isinstance(new_type, TensorType)
        values = (
            set(value.get_values())
            if isinstance(value, DenseIntOrFPElementsAttr)
            else set()
        )
        if len(values) != 1:
            raise OpDiagnostic(
                c, "tile-shape: only splat tensor constants can be resized"
            )
        new = arith.ConstantOp(
            DenseIntOrFPElementsAttr.from_list(new_type, [values.pop()]), new_type
        )
        new.result.name_hint = c.result.name_hint
        Rewriter.replace_op(c, new)


def _owner(v: SSAValue) -> Operation | None:
    owner = v.owner
    return owner if isinstance(owner, Operation) else None


def _elementwise(o: Operation) -> bool:
    """Shape-preserving ops: arith and math on tiles, tile compares and selects."""
    return isinstance(o, tile.CmpiOp | tile.SelectOp) or (
        o.dialect_name() in (arith.Arith.name, math.Math.name)
        and not isinstance(o, arith.ConstantOp)
    )
