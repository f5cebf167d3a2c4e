"""Following a value through structured control flow.

A value handed to the next loop iteration (an `scf.for` init or yield, an
`scf.while` init, condition or yield) or out of a branch (an `scf.if` yield)
lives on in the block argument or result it is copied to. Every stage that
follows tiles through `scf` asks this module, so a new structured op is taught
once: tile-shape ties the extents of a value and its copies, the lowering gives
them one layout, the wait planning follows wgmma results through them, a value
that differs between cluster blocks makes its copies differ, aref-partition
follows a load address back through them, and what finally reads a tile is
what matters to the lowering (is a shared-memory view read by wgmma only? does
a register tile end up as a wgmma A operand?)."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import scf
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue, Use

STRUCTURED = scf.ForOp | scf.IfOp | scf.WhileOp
"""The region ops whose values `copies` follows."""

Copy = tuple[Operation, int, SSAValue]
"""(holder, operand index, destination): operand `index` of `holder` (the
structured op or a terminator of one of its regions) is copied into
`destination`."""


def copies(op: Operation) -> list[Copy]:
    """Every copy the structured op `op` makes; [] for any other op."""
    found: list[Copy] = []
    if isinstance(op, scf.ForOp):
        body = op.body.block
        yielded = body.last_op
        assert yielded is not None
        first = len(op.operands) - len(op.iter_args)
        for i, (arg, result) in enumerate(zip(body.args[1:], op.results, strict=True)):
            # no iteration: the result is the init
            found += [(op, first + i, arg), (op, first + i, result)]
            found += [(yielded, i, arg), (yielded, i, result)]
    elif isinstance(op, scf.IfOp):
        for region in op.regions:
            if region.blocks and op.results:
                found += [
                    (region.block.last_op, i, result)
                    for i, result in enumerate(op.results)
                ]
    elif isinstance(op, scf.WhileOp):
        before, after = op.before_region.block, op.after_region.block
        condition, yielded = before.last_op, after.last_op
        assert isinstance(condition, scf.ConditionOp) and yielded is not None
        found += [(op, i, arg) for i, arg in enumerate(before.args)]
        found += [(yielded, i, arg) for i, arg in enumerate(before.args)]
        for i, (arg, result) in enumerate(zip(after.args, op.results, strict=True)):
            # operand 0 of scf.condition is the condition itself
            found += [(condition, i + 1, arg), (condition, i + 1, result)]
    return found


def carried_pairs(op: Operation) -> list[tuple[SSAValue, SSAValue]]:
    """(source, destination) for every copy `op` makes: values that must share
    a shape and a placement."""
    return [(holder.operands[i], dst) for holder, i, dst in copies(op)]


def _structured_owner(v: SSAValue) -> Operation | None:
    """The structured op that may copy into `v` (a block argument of one of its
    regions, or one of its results)."""
    owner = v.op if isinstance(v, OpResult) else None
    if isinstance(v, BlockArgument):
        owner = v.block.parent_op()
    return owner if isinstance(owner, STRUCTURED) else None


def copied_into(v: SSAValue) -> list[SSAValue]:
    """The values structured control flow copies into `v` (none for a value an
    ordinary op computes, or a loop's induction variable)."""
    owner = _structured_owner(v)
    if owner is None:
        return []
    return [holder.operands[i] for holder, i, dst in copies(owner) if dst is v]


def copied_by(use: Use) -> list[SSAValue]:
    """Where `use` copies its value; [] if it is an ordinary read."""
    user = use.operation
    owner = user if isinstance(user, STRUCTURED) else user.parent_op()
    if owner is None:
        return []
    return [
        dst for holder, i, dst in copies(owner) if holder is user and i == use.index
    ]


def uses_through_loops(v: SSAValue) -> Iterator[Use]:
    """The uses of `v` and of every loop-carried or branch-yielded copy of it,
    other than the copies themselves."""
    work, seen = [v], set()
    while work:
        value = work.pop()
        if value in seen:
            continue
        seen.add(value)
        for use in value.uses:
            forwarded = copied_by(use)
            if forwarded:
                work += forwarded
            else:
                yield use
