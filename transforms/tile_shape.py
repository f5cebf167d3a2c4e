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

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException, VerifyException

from tawa_xdsl.analysis.shapes import BOX_ATTR, NAMES, KernelShape, is_shaped, shape_of
from tawa_xdsl.diagnostics import OpDiagnostic, in_pass
from tawa_xdsl.dialects import tile
from tawa_xdsl.dialects.tile import splat_value
from tawa_xdsl.grid import GRID_ATTR
from tawa_xdsl.ir_checks import where
from tawa_xdsl.kernel import kernels
from tawa_xdsl.transforms.persistent import PERSISTENT_ATTR

SIZE_ATTR = "tile.size"


@dataclass(frozen=True)
class TileShapePass(ModulePass):
    """Resize the named tile dimensions (0 keeps the written size)."""

    name = "tile-shape"

    block_m: int = 0
    block_n: int = 0
    block_k: int = 0

    @property
    def sizes(self) -> dict[str, int]:
        """The sizes given, by dimension name (0 keeps the written size)."""
        given = (self.block_m, self.block_n, self.block_k)
        return {n: s for n, s in zip(NAMES, given, strict=True) if s}

    def check_options(self) -> None:
        for name, size in self.sizes.items():
            if size < 2:
                raise PassFailedException(
                    f"tile-shape: {name} must be at least 2, got {size}"
                )
            if size > tile.MAX_BOX_DIM:  # every size it resizes is a box's
                raise PassFailedException(
                    f"tile-shape: {name} must be at most {tile.MAX_BOX_DIM} (a TMA "
                    f"box dimension), got {size}"
                )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        sizes = self.sizes
        for kernel in kernels(op):
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
            with in_pass(self.name):
                resize(KernelShape(kernel), sizes)


def resize(shape: KernelShape, sizes: dict[str, int]) -> None:
    """Give the named dimensions of `shape`'s kernel `sizes`: its types, splat
    constants and tagged index constants."""
    kernel = shape.kernel
    written: dict[str, int] = {}
    for dim, root in shape.members():
        if root in shape.names:
            name = shape.names[root][0]
            extent = shape_of(dim[0])[dim[1]]
            if written.setdefault(name, extent) != extent:
                raise OpDiagnostic(
                    _owner(dim[0]) or kernel,
                    f"tile-shape: {name} is written as both {written[name]} and "
                    f"{extent}",
                )
    _refuse_untagged_strides(shape, written, sizes)
    tags = [
        o
        for o in kernel.body.walk()
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
            kernel,
            f"tile-shape: @{kernel.sym_name.data} does not name "
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
            new.location = c.location
            Rewriter.replace_op(c, new)
    _retype(shape, sizes)


def _refuse_untagged_strides(
    shape: KernelShape, written: dict[str, int], sizes: dict[str, int]
) -> None:
    """A diagnostic at an index constant of a resized dimension's written size
    in a load's or store's coordinate along that dimension (a tile offset
    `program_id * 128`, a loop step or start) that would not take the new
    size (untagged, or tagged with another dimension resized otherwise): the
    resized tiles would not cover the tensor (rows never written: a silent
    wrong answer)."""
    for op in shape.kernel.body.walk():
        if not isinstance(op, tile.LoadOp | tile.StoreOp):
            continue
        for axis, index in enumerate(op.indices):
            named = shape.names.get(shape.dims.find((op.desc, axis)))
            name = named[0] if named is not None else None
            if name not in sizes or written.get(name, sizes[name]) == sizes[name]:
                continue
            old, new = written[name], sizes[name]
            if (stale := _stale_constant(index, old, new, sizes, depth=8)) is None:
                continue
            tag = stale.attributes.get(SIZE_ATTR)
            why = f"tagged {tag.data}" if isinstance(tag, StringAttr) else "not tagged"
            after = _resized_value(stale, sizes)
            raise OpDiagnostic(
                stale,
                f"tile-shape: this {old} is in the coordinate of {op.name} "
                f"({where(op)}) along its {name} axis, which becomes {new}, but "
                f"it would {'stay' if after == old else 'become'} {after} (it is "
                f'{why}); write arith.constant {{{SIZE_ATTR} = "{name}"}} {old}',
            )


def _resized_value(c: arith.ConstantOp, sizes: dict[str, int]) -> int:
    """What tile-shape makes of an integer constant: its tag's new size, or
    itself."""
    tag = c.attributes.get(SIZE_ATTR)
    if isinstance(tag, StringAttr) and tag.data in sizes:
        return sizes[tag.data]
    assert isinstance(c.value, IntegerAttr)
    return c.value.value.data


def _stale_constant(
    v: SSAValue, old: int, new: int, sizes: dict[str, int], depth: int
) -> arith.ConstantOp | None:
    """An integer constant equal to `old` that `v` is computed from (through
    integer arithmetic and the start and step of a loop whose induction
    variable it is) and that tile-shape would not make `new`, or None."""
    if depth == 0:
        return None
    if isinstance(v, BlockArgument):
        loop = v.block.parent_op()
        if isinstance(loop, scf.ForOp) and v.index == 0:
            found = (
                _stale_constant(w, old, new, sizes, depth - 1)
                for w in (loop.lb, loop.step)
            )
            return next((c for c in found if c is not None), None)
        return None
    op = v.owner
    if isinstance(op, arith.ConstantOp):
        value = op.value
        if not isinstance(value, IntegerAttr) or value.value.data != old:
            return None
        return op if _resized_value(op, sizes) != new else None
    if isinstance(op, STRIDE_ARITH):
        found = (_stale_constant(w, old, new, sizes, depth - 1) for w in op.operands)
        return next((c for c in found if c is not None), None)
    return None


STRIDE_ARITH = (arith.MuliOp, arith.AddiOp, arith.SubiOp, arith.IndexCastOp)
"""The integer ops a tile coordinate is computed with."""


def _retype(shape: KernelShape, sizes: dict[str, int]) -> None:
    kernel = shape.kernel
    try:
        _retype_values(shape, sizes)
        kernel.verify()
    except VerifyException as e:
        raise OpDiagnostic(
            kernel, f"tile-shape: the resized kernel is invalid: {e}"
        ) from None


def _retype_values(shape: KernelShape, sizes: dict[str, int]) -> None:
    kernel = shape.kernel
    values: list[SSAValue] = [*kernel.body.block.args]
    for o in kernel.body.walk():
        values += o.results
        for region in o.regions:
            for block in region.blocks:
                values += block.args
    for v in values:
        if not is_shaped(v):
            continue
        resized = shape.resized(v, sizes)
        if resized == shape_of(v):
            continue
        t = v.type
        if isinstance(t, tile.DescType):
            new_type: Attribute = tile.DescType(t.get_shape(), t.element_type, resized)
        else:
            assert isinstance(t, TensorType)
            new_type = TensorType(t.element_type, resized)
        owner = _owner(v)
        if isinstance(owner, arith.ConstantOp):
            _resize_constant(owner, new_type)
            continue
        name = v.name_hint
        Rewriter.replace_value_with_new_type(v, new_type).name_hint = name
    kernel.function_type = FunctionType.from_lists(
        [a.type for a in kernel.body.block.args],
        kernel.function_type.outputs.data,
    )


def _resize_constant(c: arith.ConstantOp, new_type: Attribute) -> None:
    assert isinstance(new_type, TensorType)
    value = (
        splat_value(c.value) if isinstance(c.value, DenseIntOrFPElementsAttr) else None
    )
    if value is None:
        raise OpDiagnostic(c, "tile-shape: only splat tensor constants can be resized")
    new = arith.ConstantOp(
        DenseIntOrFPElementsAttr.from_list(new_type, [value]), new_type
    )
    new.result.name_hint = c.result.name_hint
    new.location = c.location  # a later diagnostic names the user's line
    Rewriter.replace_op(c, new)


def _owner(v: SSAValue) -> Operation | None:
    owner = v.owner
    return owner if isinstance(owner, Operation) else None
