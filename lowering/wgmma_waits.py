"""Where the consumer must wait for wgmma groups, and how many may stay in flight.

Every `tile.dot` becomes one asynchronous wgmma group. Two things must wait for
a group to complete:

- a read of its result registers by anything but a wgmma accumulating into them
  (the softmax reading S, the epilogue reading the accumulator);
- the release (`aref.consumed`) of a slot the group reads from shared memory.

Groups complete in order, so "wait until group g is done" is
`wgmma.wait_group k` with k = the number of groups committed after g. This module
counts them statically on aref-level IR. Inside a loop body, a position is the
number of groups the iteration has committed so far (a top-level `scf.if` counts
the dots of its branch that has fewer, which can only make waits stricter). A
value or slot from `a` iterations ago adds the groups committed after it in its
iteration and all groups of the iterations between. Where a path could commit
fewer groups (the first iteration, whose carried values come from before the
loop) the smaller count is taken, which is always safe. Outside loop bodies the
consumer waits for every group.

ptxas adds constraints of its own: it serializes every wgmma of the kernel
(remarks C7513 / C7515) when a non-wgmma instruction writes registers a wgmma
reads as its A operand or accumulates into while any group is in flight, and it
cannot follow groups around a back edge or into a branch. So a loop's back-edge
copies, a branch yielding a wgmma result, the making of a register A operand and
the entry of a loop that starts a fresh accumulator (its initial `mov`s) while
groups of other dots may be pending wait for all groups.

`plan_waits` returns (op, k) pairs: emit `wgmma_wait_group k` right before op.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.traits import IsTerminator

from tawa_xdsl.analysis.carried import (
    STRUCTURED,
    copied_into,
    copies,
    uses_through_loops,
)
from tawa_xdsl.analysis.elementwise import is_elementwise
from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.target import MAX_PENDING


def _commits(op: Operation) -> int:
    """Groups a top-level op of a loop body commits (nested loops: at least 0)."""
    if isinstance(op, tile.DotOp):
        return 1
    if isinstance(op, scf.IfOp):
        return max(
            (
                sum(1 for o in region.walk() if isinstance(o, tile.DotOp))
                for region in op.regions
            ),
            default=0,
        )
    return 0


class BodyClock:
    """Commit positions inside one loop body."""

    def __init__(self, body: Block):
        self.body = body
        self.start: dict[Operation, int] = {}
        total = 0
        for op in body.ops:
            self.start[op] = total
            total += _commits(op)
        self.per_iteration = total

    def position(self, op: Operation) -> int:
        """Groups committed earlier in the iteration when `op` runs."""
        top = self.body.find_ancestor_op_in_block(op)
        assert top is not None
        pos = self.start[top]
        if top is not op and isinstance(top, scf.IfOp):
            branch = next(
                r.block
                for r in top.regions
                if r.blocks and r.block.find_ancestor_op_in_block(op)
            )
            inner = branch.find_ancestor_op_in_block(op)
            for o in branch.ops:
                if o is inner:
                    break
                pos += sum(1 for d in o.walk() if isinstance(d, tile.DotOp))
        return pos

    def nested(self, op: Operation) -> bool:
        """Whether `op` runs in a loop nested in the body (which counts its
        commits as 0: they are at least 0)."""
        top = self.body.find_ancestor_op_in_block(op)
        return top is not op and isinstance(top, scf.ForOp | scf.WhileOp)

    def precedes(self, a: Operation, b: Operation) -> bool:
        """Whether `a` runs before `b` in one iteration (different top-level ops)."""
        ta = self.body.find_ancestor_op_in_block(a)
        tb = self.body.find_ancestor_op_in_block(b)
        assert ta is not None and tb is not None
        return ta is not tb and self.body.get_operation_index(
            ta
        ) < self.body.get_operation_index(tb)

    def after(self, dot: tile.DotOp) -> int:
        """Groups committed later in the iteration that committed `dot`."""
        return self.per_iteration - self.position(dot) - 1

    def since(self, dot: tile.DotOp, ago: int, here: int) -> int:
        """Groups committed after `dot` (run `ago` iterations back) until `here`."""
        if ago == 0:  # a dot of a nested loop is not in the count: nothing to skip
            return here - self.position(dot) - (0 if self.nested(dot) else 1)
        return self.after(dot) + (ago - 1) * self.per_iteration + here


def _loop_body(op: Operation, consumer: Region) -> Block | None:
    """The body of the innermost loop of the consumer region around `op`."""
    parent = op.parent_op()
    while parent is not None and parent is not consumer.parent_op():
        if isinstance(parent, scf.ForOp):
            return parent.body.block
        parent = parent.parent_op()
    return None


def _inside(op: Operation, body: Block) -> bool:
    return body.find_ancestor_op_in_block(op) is not None


Source = tuple  # ("op", op, ago) | ("outside", value) | ("unknown",)


def _trace(
    v: SSAValue, body: Block, stop: type, ago: int = 0, seen: set | None = None
) -> Iterator[Source]:
    """Where the tile `v` comes from, seen from a loop body: an op of type `stop`
    run `ago` iterations back, a value defined before the loop, or a nested loop."""
    seen = set() if seen is None else seen
    if (v, ago) in seen or ago > 2:
        return
    seen.add((v, ago))
    if isinstance(v, BlockArgument):
        if v.block is body:
            if v.index > 0:  # a carried value: last iteration's, or the loop's init
                yield from _trace(
                    body.last_op.operands[v.index - 1], body, stop, ago + 1, seen
                )
                yield ("outside", body.parent_op().iter_args[v.index - 1])
            return
        owner = v.block.parent_op()
        yield (
            ("outside", v)
            if owner is None or not _inside(owner, body)
            else ("unknown",)
        )
        return
    assert isinstance(v, OpResult)
    op = v.op
    if not _inside(op, body):
        yield ("outside", v)
    elif isinstance(op, stop):
        yield ("op", op, ago)
    elif isinstance(op, scf.IfOp):
        for region in op.regions:
            if region.blocks:
                yield from _trace(
                    region.block.last_op.operands[v.index], body, stop, ago, seen
                )
    elif isinstance(op, scf.ForOp | scf.WhileOp):
        yield ("unknown",)
    elif isinstance(op, tile.TransOp):
        yield from _trace(op.source, body, stop, ago, seen)


def _from_dot(v: SSAValue, seen: set | None = None) -> bool:
    """Whether `v` may hold the (pending) result registers of a wgmma."""
    seen = set() if seen is None else seen
    if v in seen:
        return False
    seen.add(v)
    if isinstance(v, OpResult) and isinstance(v.op, tile.DotOp):
        return True
    return any(_from_dot(source, seen) for source in copied_into(v))


def _offset(v: SSAValue, body: Block) -> tuple[BlockArgument, int] | None:
    """`v` as (loop counter of `body`, constant offset), if it has that form."""
    if isinstance(v, BlockArgument) and v.block is body:
        return v, 0
    if isinstance(v, OpResult) and isinstance(v.op, arith.AddiOp | arith.SubiOp):
        base = _offset(v.op.lhs, body)
        rhs = v.op.rhs
        if base and isinstance(rhs, OpResult) and isinstance(rhs.op, arith.ConstantOp):
            value = rhs.op.value
            if isinstance(value, IntegerAttr):
                step = value.value.data
                return base[0], base[1] + (
                    step if isinstance(v.op, arith.AddiOp) else -step
                )
    return None


def read_wait(user: Operation, v: SSAValue, consumer: Region) -> int | None:
    """Groups that may stay pending when `user` reads `v`; None if `v` never is."""
    if not _from_dot(v):
        return None
    body = _loop_body(user, consumer)
    if body is None:
        return 0
    clock = BodyClock(body)
    here = clock.position(user)
    candidates = []
    for source in _trace(v, body, tile.DotOp):
        if source[0] == "op":
            candidates.append(clock.since(source[1], source[2], here))
        elif source[0] == "unknown" or _from_dot(source[1]):
            candidates.append(here if source[0] == "outside" else 0)
    return min(candidates, default=None)


class ReleaseBeforeReadError(Exception):
    """A slot would be released before an MMA that reads it (a compiler bug)."""


def release_wait(release: aref.ConsumedOp, consumer: Region) -> int | None:
    """Groups that may stay pending when `release` frees its slot; None if no MMA
    reads the slot."""
    readers = [
        (dot, source)
        for dot in consumer.walk()
        if isinstance(dot, tile.DotOp)
        for operand in (dot.lhs, dot.rhs)
        for source in _trace(operand, consumer.block, aref.GetOp)
        if source[0] == "op" and source[1].aref is release.aref
    ]
    body = _loop_body(release, consumer)
    released = _offset(release.index, body) if body is not None else None
    if not readers or released is None:
        return 0 if readers else None
    counter, k_release = released
    clock = BodyClock(body)
    here = clock.position(release)
    # Dots before the loop (a rotated loop's prologue) read what the first
    # iterations release: groups committed since then may be as few as `here`.
    read_before_loop = any(not _inside(dot, body) for dot, _ in readers)
    candidates = []
    for dot in (d for d in body.walk() if isinstance(d, tile.DotOp)):
        for operand in (dot.lhs, dot.rhs):
            for source in _trace(operand, body, aref.GetOp):
                if source[0] == "unknown":
                    candidates.append(0)
                    continue
                if source[0] == "outside":
                    # The first iterations read what was fetched before the loop.
                    if any(
                        s[0] == "op" and s[1].aref is release.aref
                        for s in _trace(source[1], consumer.block, aref.GetOp)
                    ):
                        candidates.append(here)
                    continue
                _, get, ago = source
                if get.aref is not release.aref:
                    continue
                fetched = _offset(get.index, body)
                if fetched is None or fetched[0] is not counter:
                    candidates.append(0)
                    continue
                lag = fetched[1] - ago - k_release
                if lag < 0 or (
                    lag == 0
                    and clock.position(dot) >= here
                    and not clock.precedes(dot, release)
                ):
                    raise ReleaseBeforeReadError(
                        "aref.consumed frees a slot before the tile.dot that reads it"
                    )
                candidates.append(clock.since(dot, lag, here))
                if lag > 0 and read_before_loop:
                    candidates.append(here)
    return min(candidates, default=0)


def _accumulates_in_place(v: SSAValue, arg: BlockArgument) -> bool:
    """Whether the registers of `v` are those of the loop argument `arg`: `v` is a
    dot accumulating into `arg`, or into an elementwise update of `arg` (the
    rescaled attention accumulator) that `arg` dies into. The PTX printer then
    keeps both in the same registers, so yielding `v` copies nothing."""
    while isinstance(v, OpResult) and isinstance(v.op, tile.DotOp):
        v = v.op.acc
        if (
            len(list(v.uses)) != 1
        ):  # the printer copies an accumulator read elsewhere too
            return False
    if v is arg:
        return True
    if isinstance(v, OpResult) and is_elementwise(v.op):
        uses = list(arg.uses)
        return bool(v.op.operands) and v.op.operands[0] is arg and len(uses) == 1
    return False


def _copied(op: Operation) -> list[SSAValue]:
    """Values a structured op copies between registers (PTX `mov`s that read
    them): loop inits; loop results yielded from other registers; branch results
    yielded from values defined outside the branch; everything an `scf.while`
    passes between its regions."""
    if isinstance(op, scf.ForOp):
        return list(op.iter_args)
    if isinstance(op, scf.WhileOp):
        return list(op.arguments)
    if isinstance(op, scf.ConditionOp):
        return list(op.args)
    if not isinstance(op, scf.YieldOp):
        return []
    parent = op.parent_op()
    block = op.parent_block()
    if isinstance(parent, scf.WhileOp):
        return list(op.operands)
    if isinstance(parent, scf.ForOp):
        return [
            v
            for i, v in enumerate(op.operands)
            if not _accumulates_in_place(v, block.args[i + 1])
        ]
    if isinstance(parent, scf.IfOp):
        return [
            v
            for v in op.operands
            if not (isinstance(v, OpResult) and v.op.parent_block() is block)
        ]
    return []


def _makes_register_operand(op: Operation) -> bool:
    """Whether `op` computes a register tile that a dot reads as its A operand
    (P = bf16(S) in attention), in this iteration or, carried, in a later one."""
    if isinstance(op, aref.GetOp | tile.TransOp | STRUCTURED):
        return False
    return any(
        isinstance(use.operation, tile.DotOp) and use.index == 0
        for r in op.results
        for use in uses_through_loops(r)
    )


def _feeds_accumulator(v: SSAValue) -> bool:
    """Whether the registers of `v` become a wgmma's accumulator: a dot
    accumulates into it, or into an elementwise update of it (the rescaled
    attention accumulator), in this iteration or a later one."""
    work, seen = [v], set()
    while work:
        value = work.pop()
        if value in seen:
            continue
        seen.add(value)
        for use in uses_through_loops(value):
            user = use.operation
            if isinstance(user, tile.DotOp) and use.index == 2:
                return True
            if user.dialect_name() in ("arith", "math"):
                work += [r for r in user.results if isinstance(r.type, TensorType)]
    return False


def _starts_accumulator(op: Operation, consumer: Region) -> bool:
    """Whether entering the loop `op` writes registers a wgmma of the loop
    accumulates into (the `mov`s of its initial values) while wgmma groups
    committed outside it (an earlier loop's last ones) may still be in flight."""
    if not isinstance(op, scf.ForOp | scf.WhileOp):
        return False
    fresh = [
        dst
        for holder, _, dst in copies(op)
        if holder is op and isinstance(dst, BlockArgument)
    ]
    if not any(_feeds_accumulator(v) for v in fresh):
        return False
    loops = [p for p in _ancestors(op) if isinstance(p, scf.ForOp | scf.WhileOp)]
    before = True  # the walk is in program order: ops before `op` come first
    for d in consumer.walk():
        if d is op:
            before = False
        elif (
            isinstance(d, tile.DotOp)
            and not op.is_ancestor(d)
            # a later dot runs before `op` only in an earlier trip of a loop around both
            and (before or any(loop.is_ancestor(d) for loop in loops))
        ):
            return True
    return False


def _drained(op: Operation, plan: list[tuple[Operation, int]]) -> bool:
    """Whether the consumer already waits for every group before `op`, in its
    block, with no wgmma issued since (`plan` holds the waits before `op`)."""
    block = op.parent_block()
    assert block is not None
    waited = {x for x, k in plan if k == 0 and x.parent_block() is block}
    prev = op.prev_op
    while prev is not None:
        if any(isinstance(d, tile.DotOp) for d in prev.walk()):
            return False
        if prev in waited:  # the wait runs right before `prev`
            return True
        prev = prev.prev_op
    return False


def _ancestors(op: Operation) -> Iterator[Operation]:
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()


def plan_waits(consumer: Region) -> list[tuple[Operation, int]]:
    """(op, k): the consumer must `wgmma_wait_group k` right before op."""
    plan: list[tuple[Operation, int]] = []
    for op in consumer.walk():
        if isinstance(op, aref.ConsumedOp):
            k = release_wait(op, consumer)
        else:
            # a wgmma accumulating into pending registers needs no wait; structured
            # ops read only the registers they copy
            if isinstance(op, tile.DotOp):
                read = [op.lhs]
            elif isinstance(op, STRUCTURED) or op.has_trait(IsTerminator):
                read = _copied(op)
            else:
                read = list(op.operands)
            ks = [read_wait(op, v, consumer) for v in read]
            k = min((x for x in ks if x is not None), default=None)
            if (
                k is not None
                and op.has_trait(IsTerminator)
                and isinstance(op.parent_op(), scf.ForOp | scf.WhileOp)
            ):
                # ptxas cannot follow pending groups around a back edge: copying an
                # accumulator there with groups in flight makes it serialize all wgmmas
                k = 0
            if (
                isinstance(op, scf.YieldOp)
                and isinstance(op.parent_op(), scf.IfOp)
                and any(_from_dot(v) for v in op.operands)
            ):
                # the other branch may write the same result registers with movs:
                # ptxas serializes every wgmma (C7515) if a group is in flight there
                k = 0
            if _starts_accumulator(op, consumer) and not _drained(op, plan):
                # ptxas serializes every wgmma (C7515) when an instruction writes a
                # wgmma's accumulator registers while any group is in flight
                k = 0
            if _makes_register_operand(op):
                # ptxas serializes every wgmma (C7513) when an instruction writes a
                # wgmma's register A operand while any group is in flight
                k = 0
        if k is not None:
            plan.append((op, min(k, MAX_PENDING)))
    return plan
