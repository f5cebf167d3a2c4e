"""Which launch grid a tile kernel needs, read off its stores.

A kernel that writes its output tile at `program_id(axis) * B` along a dimension of
extent n needs ceil(n / B) programs on that axis; one that indexes a dimension by
`program_id(axis)` itself needs n. The first `tile.store` decides; a kernel whose
program ids it cannot relate to a stored dimension needs an explicit grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr
from xdsl.ir import Attribute, BlockArgument, OpResult, SSAValue

from tawa_xdsl.dialects import tile

GRID_ATTR = "tile.grid"
"""The grid rule read off a kernel's tile-level stores: recorded by `reverse-grid`
before it relabels the program ids, and by the lowering for the runtime."""

Rule = tuple[int, int, int, int]
"""(program axis, argument index, dimension, block size)."""


def encode_rules(rules: Sequence[Rule]) -> ArrayAttr:
    return ArrayAttr(ArrayAttr(IntegerAttr(x, 64) for x in rule) for rule in rules)


def decode_rules(attr: Attribute) -> list[Rule]:
    assert isinstance(attr, ArrayAttr)
    rules = []
    for rule in attr.data:
        assert isinstance(rule, ArrayAttr)
        axis, arg, dim, size = (x.value.data for x in rule.data)
        rules.append((axis, arg, dim, size))
    return rules


class GridInferenceError(ValueError):
    """The launch grid cannot be derived from the kernel; pass `grid=` explicitly."""


def _program_axis(v: SSAValue) -> int | None:
    if isinstance(v, OpResult) and isinstance(v.op, tile.ProgramIdOp):
        return v.op.axis.index
    return None


def _constant(v: SSAValue) -> int | None:
    if isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp):
        value = v.op.value
        if isinstance(value, IntegerAttr):
            return value.value.data
    return None


def _block_of(v: SSAValue) -> tuple[int, int] | None:
    """(axis, block size) if `v` is program_id(axis) * block or program_id(axis)."""
    if (axis := _program_axis(v)) is not None:
        return axis, 1
    if isinstance(v, OpResult) and isinstance(v.op, arith.MuliOp):
        for a, b in ((v.op.lhs, v.op.rhs), (v.op.rhs, v.op.lhs)):
            axis, size = _program_axis(a), _constant(b)
            if axis is not None and size is not None and size > 0:
                return axis, size
    return None


def grid_rule(kernel: func.FuncOp) -> list[Rule]:
    """(axis, argument index, dimension, block size) for each program axis used."""
    stores = [op for op in kernel.walk() if isinstance(op, tile.StoreOp)]
    if not stores:
        raise GridInferenceError(
            f"kernel '{kernel.sym_name.data}' stores nothing; pass grid= explicitly"
        )
    store = stores[0]
    if not isinstance(store.desc, BlockArgument):
        raise GridInferenceError(
            "the stored tensor is not a kernel argument; pass grid="
        )
    rules = []
    for dim, index in enumerate(store.indices):
        found = _block_of(index)
        if found is not None:
            axis, size = found
            rules.append((axis, store.desc.index, dim, size))
    used = {op.axis.index for op in kernel.walk() if isinstance(op, tile.ProgramIdOp)}
    missing = used - {r[0] for r in rules}
    if missing:
        names = ", ".join("xyz"[a] for a in sorted(missing))
        raise GridInferenceError(
            f"kernel '{kernel.sym_name.data}': cannot tell how many programs axis {names} "
            "needs from its store; pass grid= explicitly"
        )
    return rules


def recorded_grid_rule(kernel: func.FuncOp) -> list[Rule]:
    """The rule a pass recorded on `kernel` before it relabelled the program ids
    (`reverse-grid`), else the one its stores show now."""
    if GRID_ATTR in kernel.attributes:
        return decode_rules(kernel.attributes[GRID_ATTR])
    return grid_rule(kernel)


def infer_grid(
    rules: Sequence[tuple[int, int, int, int]], shapes: Sequence[Any]
) -> tuple[int, int, int]:
    """The grid for arguments of the given shapes (None for scalars)."""
    grid = [1, 1, 1]
    for axis, arg, dim, size in rules:
        extent = shapes[arg][dim]
        grid[axis] = max(1, -(-extent // size))
    return grid[0], grid[1], grid[2]
