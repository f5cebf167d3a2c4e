"""Where each ptx value is live, on structured control flow (`ptx.for`, `ptx.if`,
`ptx.while`).

The ops of a kernel are numbered in program order, nested ops right after the op
holding them: the order in which `ptx-lower-control-flow` lays them out (a loop
body once, a `then` branch before its `else`, a while loop's `before` region
before its `after` region). Op `i` reads its operands at
point `2 i` and writes its results at `2 i + 1`, so a value read for the last
time by op `i` and the value op `i` defines never overlap: that is what lets a
result take a dying operand's registers.

A value is live on a list of disjoint *segments* of points, from its definition
along every path to each use:
- a use nested in a `ptx.for` or a `ptx.while` that the value's definition is
  outside of keeps the value live over the whole loop, back edge included (the
  next iteration reads it again), as do a `ptx.for`'s upper bound and step
  (read every trip);
- a use in one branch of a `ptx.if` makes the value live on the path into that
  branch only: a use in the `else` branch is not a later use for an op of the
  `then` branch, which never falls through into the `else` branch;
- a loop's counter is live over the whole loop (the lowered loop steps it at
  the end); a loop's carried values (a `ptx.for` body's, a `ptx.while`
  `before` region's arguments) are defined on entry to the body (`2 s + 1` of
  the loop at `s`: the back edge writes them again where the next iteration
  starts), its results at the end of the loop;
- a `ptx.while` `after` region's arguments are defined at its condition (`2 c
  + 1` of the `ptx.condition` at `c`), which also writes the results on the
  exit path: no op runs between the condition and the loop's end on that path,
  so the results can be taken as defined at the end, as a `ptx.for`'s are;
- an `if` result is written at the end of each branch (the `then` branch's
  copy happens before its jump to the end, so the result is live there too).

This is exact for SSA on this structured IR.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from tawa_xdsl.dialects.ptx import (
    STRUCTURED,
    ConditionOp,
    ForOp,
    IfOp,
    WhileOp,
    YieldOp,
)

Segment = tuple[int, int]
"""Inclusive range of points `[lo, hi]`."""


def overlaps(a: Sequence[Segment], b: Sequence[Segment]) -> bool:
    """Whether two sorted lists of disjoint segments share a point."""
    i = j = 0
    while i < len(a) and j < len(b):
        (alo, ahi), (blo, bhi) = a[i], b[j]
        if alo <= bhi and blo <= ahi:
            return True
        if ahi < bhi:
            i += 1
        else:
            j += 1
    return False


def union(segments: Sequence[Segment]) -> list[Segment]:
    """Sorted, disjoint segments covering the same points."""
    merged: list[Segment] = []
    for lo, hi in sorted(segments):
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return merged


class Liveness:
    """Program points of the ops in `body`, and the live segments of its
    register values (computed on first request: a pass that asks about a few
    values pays for those)."""

    def __init__(self, body: Region):
        self.index: dict[Operation, int] = {}
        self.last: dict[Operation, int] = {}
        self.ops: list[Operation] = []
        self._number(body)
        self._segments: dict[SSAValue, list[Segment]] = {}

    def segments(self, value: SSAValue) -> list[Segment]:
        """Where a register value of `body` is live, sorted and disjoint."""
        if value not in self._segments:
            self._segments[value] = self._compute(value)
        return self._segments[value]

    def _number(self, region: Region) -> None:
        for block in region.blocks:
            for op in block.ops:
                self.index[op] = len(self.ops)
                self.ops.append(op)
                for inner in op.regions:
                    self._number(inner)
                self.last[op] = len(self.ops) - 1

    def _definition(self, value: SSAValue) -> tuple[int, Block]:
        """Where `value` is written, and the block it is visible in."""
        if type(value) is BlockArgument:  # of a loop body: on entry
            block = value.block
            loop = block.parent_op()
            assert isinstance(loop, ForOp | WhileOp)
            if type(loop) is WhileOp and block is loop.after.block:
                condition = loop.before.block.last_op
                assert condition is not None
                return 2 * self.index[condition] + 1, block
            return 2 * self.index[loop] + 1, block
        op = value.owner
        assert isinstance(op, Operation)
        block = op.parent_block()
        assert block is not None
        if type(op) in STRUCTURED:  # written at their end
            return 2 * self.last[op] + 1, block
        return 2 * self.index[op] + 1, block

    def _compute(self, value: SSAValue) -> list[Segment]:
        start, block = self._definition(value)
        owner = value.owner
        if type(value) is BlockArgument and value.index == 0:
            loop = owner.parent_op()
            if type(loop) is ForOp:
                return [(start, 2 * self.last[loop] + 1)]  # the counter
        segments = [(start, start)]
        if type(owner) is IfOp and owner.otherwise.blocks:
            t = 2 * self.index[owner.then.block.last_op] + 1  # the then branch's copy
            segments.append((t, t))
        for use in value.uses:
            segments += self._path(start, block, use.operation, use.index)
        return union(segments)

    def _read(self, user: Operation, operand: int) -> Segment:
        """The points at which `user` reads its operand `operand`."""
        i = 2 * self.index[user]
        if type(user) is ForOp and operand in (1, 2):  # the bound and the step
            return i, 2 * self.last[user] + 1
        return i, i

    def _path(
        self, start: int, block: Block, user: Operation, operand: int
    ) -> list[Segment]:
        """The points on the paths from `start` in `block` to the use."""
        if user.parent is block:  # the common case: no region in between
            return [(start, self._read(user, operand)[1])]
        chain = [user]
        while chain[-1].parent is not block:
            parent = chain[-1].parent_op()
            assert parent is not None, "a use outside the definition's scope"
            chain.append(parent)
        segments: list[Segment] = []
        lo = start
        for outer, inner in zip(chain[:0:-1], chain[-2::-1], strict=True):
            if type(outer) is ForOp or type(outer) is WhileOp:
                return [*segments, (lo, 2 * self.last[outer] + 1)]
            segments.append((lo, 2 * self.index[outer]))
            first = inner.parent
            assert first is not None and first.first_op is not None
            lo = 2 * self.index[first.first_op]
        return [*segments, (lo, self._read(user, operand)[1])]

    def live_at(self, value: SSAValue, point: int) -> bool:
        segments = self.segments(value)
        k = bisect_right(segments, (point, 1 << 62)) - 1
        return k >= 0 and segments[k][0] <= point <= segments[k][1]

    def dies_at(self, value: SSAValue, op: Operation) -> bool:
        """`op` reads `value` and no path after `op` reads it again."""
        return value in op.operands and not self.live_at(value, 2 * self.index[op] + 1)


def carried_destination(terminator: YieldOp | ConditionOp) -> Sequence[SSAValue]:
    """What each value of a `ptx.yield` or `ptx.condition` becomes: the loop's
    carried block arguments (a `ptx.for` body, a `ptx.while` `before` region),
    the `ptx.if` results or a `ptx.while` `after` region's arguments (which
    share the results' registers)."""
    parent = terminator.parent_op()
    if isinstance(parent, ForOp):
        return parent.body.block.args[1:]
    if isinstance(parent, WhileOp):
        region = parent.after if type(terminator) is ConditionOp else parent.before
        return region.block.args
    assert isinstance(parent, IfOp)
    return parent.res
