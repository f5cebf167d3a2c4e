"""Which launch grid a tile kernel needs, read off its stores.

A kernel that writes its output tile at `program_id(axis) * B` along a dimension of
extent n needs ceil(n / B) programs on that axis; one that indexes a dimension by
`program_id(axis)` itself needs n. B may be a constant expression or a scalar
argument of the kernel (read at launch), and the coordinate may add an offset
that is provably non-negative and independent of the program ids (a row inside
the tile): programs past ceil(n / B) could then only write past the end. The
first `tile.store` decides; a kernel whose program ids it cannot relate to a
stored dimension this way needs an explicit grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue

from tawa_xdsl.analysis.coordinates import non_negative
from tawa_xdsl.analysis.uniformity import depends_on_program_id
from tawa_xdsl.dialects import tile
from tawa_xdsl.kernel import (
    CLUSTER_ATTR,
    PERSISTENT_ATTR,
    KernelArgumentError,
    cluster_size,
)

GRID_ATTR = "tile.grid"
"""The grid rule read off a kernel's tile-level stores: recorded by `reverse-grid`
before it relabels the program ids, and by the lowering for the runtime."""
LAUNCH_PASSES = (
    (PERSISTENT_ATTR, "persistent"),
    (GRID_ATTR, "reverse-grid"),
    (CLUSTER_ATTR, "cluster"),
)
"""The tile-level passes that change how a kernel is launched, by the attribute
each leaves on it: passes that rework the grid (`split-k`, `stream-k`,
`tawa-hopper-pipeline`) must come before them."""


def launch_pass_applied(kernel: func.FuncOp) -> str | None:
    """The first of `LAUNCH_PASSES` that ran on tile-level `kernel`, or None."""
    return next(
        (name for attr, name in LAUNCH_PASSES if attr in kernel.attributes), None
    )


class Rule(NamedTuple):
    """Programs along `axis`: ceil(extent / block) for the extent of dimension
    `dim` of argument `arg`, the block size a constant or (`block_arg` >= 0) the
    value of that scalar argument."""

    axis: int
    arg: int
    dim: int
    block: int
    block_arg: int = -1


def encode_rules(rules: Sequence[Rule]) -> ArrayAttr:
    """[[axis, arg, dim, block(, block_arg)], ...]: four numbers for a constant
    block size."""
    return ArrayAttr(
        ArrayAttr(
            IntegerAttr(x, 64) for x in (rule if rule.block_arg >= 0 else rule[:4])
        )
        for rule in rules
    )


def decode_rules(attr: Attribute) -> list[Rule]:
    assert isinstance(attr, ArrayAttr)
    rules = []
    for rule in attr.data:
        assert isinstance(rule, ArrayAttr)
        rules.append(Rule(*(x.value.data for x in rule.data)))
    return rules


class GridInferenceError(ValueError):
    """The launch grid cannot be derived from the kernel. `op` is where it shows
    (the store, or the kernel when it stores nothing)."""

    def __init__(self, op: Operation, message: str) -> None:
        super().__init__(message)
        self.op = op


def _program_axis(v: SSAValue) -> int | None:
    if isinstance(v, OpResult) and isinstance(v.op, tile.ProgramIdOp):
        return v.op.axis.index
    return None


def constant_value(v: SSAValue) -> int | None:
    """The value of a constant integer expression (products, sums, casts)."""
    if not isinstance(v, OpResult):
        return None
    op = v.op
    if isinstance(op, arith.ConstantOp):
        value = op.value
        return value.value.data if isinstance(value, IntegerAttr) else None
    if isinstance(op, arith.IndexCastOp):
        return constant_value(op.input)
    if isinstance(op, arith.MuliOp | arith.AddiOp):
        lhs, rhs = constant_value(op.lhs), constant_value(op.rhs)
        if lhs is None or rhs is None:
            return None
        return lhs * rhs if isinstance(op, arith.MuliOp) else lhs + rhs
    return None


def _scalar_arg(v: SSAValue) -> int | None:
    """The index of the kernel's integer scalar argument `v` is (through casts)."""
    while isinstance(v, OpResult) and isinstance(v.op, arith.IndexCastOp):
        v = v.op.input
    if (
        isinstance(v, BlockArgument)
        and isinstance(v.block.parent_op(), func.FuncOp)
        and not isinstance(v.type, tile.DescType)
    ):
        return v.index
    return None


def _block_of(v: SSAValue) -> tuple[int, int, int] | None:
    """(axis, block, block argument or -1) if `v` is program_id(axis) * block (+ an
    offset that is non-negative and independent of the program ids)."""
    if (axis := _program_axis(v)) is not None:
        return axis, 1, -1
    if not isinstance(v, OpResult):
        return None
    op = v.op
    if isinstance(op, arith.IndexCastOp):
        return _block_of(op.input)
    if isinstance(op, arith.MuliOp):
        for a, b in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            found = _block_of(a)
            if found is None or found[2] >= 0:
                continue
            axis, block, _ = found
            size = constant_value(b)
            if size is not None and size > 0:
                return axis, block * size, -1
            arg = _scalar_arg(b)
            if arg is not None and block == 1:
                return axis, 1, arg
    if isinstance(op, arith.AddiOp):
        for a, b in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            found = _block_of(a)
            if found and non_negative(b) and not depends_on_program_id(b):
                return found
    return None


def grid_rule(kernel: func.FuncOp) -> list[Rule]:
    """A rule for each program axis the kernel uses."""
    name = kernel.sym_name.data
    stores = [op for op in kernel.walk() if isinstance(op, tile.StoreOp)]
    if not stores:
        raise GridInferenceError(kernel, f"kernel @{name} stores nothing")
    store = stores[0]
    assert isinstance(store.desc, BlockArgument), "tile.store writes a parameter"
    rules = []
    for dim, index in enumerate(store.indices):
        found = _block_of(index)
        if found is not None:
            axis, block, block_arg = found
            rules.append(Rule(axis, store.desc.index, dim, block, block_arg))
    used = {op.axis.index for op in kernel.walk() if isinstance(op, tile.ProgramIdOp)}
    missing = used - {r.axis for r in rules}
    if missing:
        axes = ", ".join("xyz"[a] for a in sorted(missing))
        raise GridInferenceError(
            store,
            f"kernel @{name}: cannot tell how many programs axis {axes} needs: no "
            f"coordinate of this store is program_id({axes}) * B (+ an offset that "
            "is non-negative and does not depend on program ids), B a constant or "
            "a scalar argument",
        )
    return rules


def recorded_grid_rule(kernel: func.FuncOp) -> list[Rule]:
    """The rule a pass recorded on `kernel` before it relabelled the program ids
    (`reverse-grid`), else the one its stores show now."""
    if GRID_ATTR in kernel.attributes:
        return decode_rules(kernel.attributes[GRID_ATTR])
    return grid_rule(kernel)


def infer_grid(rules: Sequence[Rule], args: Sequence[Any]) -> tuple[int, int, int]:
    """The grid for these kernel arguments (arrays with a `shape`, and scalars)."""
    grid = [1, 1, 1]
    for axis, arg, dim, block, block_arg in rules:
        extent = args[arg].shape[dim]
        if block_arg >= 0:
            block = int(args[block_arg])
            if block < 1:
                raise KernelArgumentError(
                    f"scalar argument {block_arg} is the block size of program axis "
                    f"{'xyz'[axis]}: it must be at least 1, got {block}"
                )
        grid[axis] = max(1, -(-extent // block))
    return grid[0], grid[1], grid[2]


def default_grid(kernel: func.FuncOp, args: Sequence[Any]) -> tuple[int, ...]:
    """The grid `interpret` and `simulate` run `kernel` on when the caller gives
    none: the one a compiled kernel launches on (read off the stores, or the
    rule a pass recorded), in whole clusters; one cluster for a persistent
    kernel, whose programs walk every tile, or one that reads no program id.
    Any other kernel whose grid cannot be read off is refused, as its launch
    is: running one program would leave the other tiles unwritten without a
    word."""
    size = cluster_size(kernel)
    if PERSISTENT_ATTR in kernel.attributes:
        return (size,)
    try:
        rules = recorded_grid_rule(kernel)
    except GridInferenceError as e:
        if any(isinstance(op, tile.ProgramIdOp) for op in kernel.walk()):
            raise KernelArgumentError(f"{e}; pass grid=") from None
        return (size,)
    x, y, z = infer_grid(rules, args)
    return -(-x // size) * size, y, z
