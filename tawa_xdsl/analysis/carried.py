"""Following a value through structured control flow.

A tile handed to the next loop iteration (an `scf.for` init or yield) or out of a
branch lives on in the block argument or result it is copied to; what finally
reads it is what matters to the lowering (is a shared-memory view read by wgmma
only? does a register tile end up as a wgmma A operand?)."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import scf
from xdsl.ir import SSAValue, Use


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
            user = use.operation
            parent = user.parent_op()
            if isinstance(user, scf.ForOp) and use.index >= 3:  # an init
                work.append(user.body.block.args[use.index - 2])
            elif isinstance(user, scf.YieldOp) and isinstance(parent, scf.ForOp):
                work += [
                    parent.body.block.args[use.index + 1],
                    parent.results[use.index],
                ]
            elif isinstance(user, scf.YieldOp) and isinstance(parent, scf.IfOp):
                work.append(parent.results[use.index])
            else:
                yield use
