"""Two-stage overlap of a consumer loop (FA3's intra-warpgroup pipelining).

In a loop whose first `tile.dot` depends only on the iteration's aref tiles (S =
Q K^T in attention), issue that dot one iteration early: iteration j computes
the first dot of iteration j + 1 before the rest of iteration j (the softmax and
P V), so the tensor cores work while the softmax runs.

Rotation, with S1 = the get and the ops feeding the first dot, and R = the rest
of the body (reading the carried X, the values S1 hands over, instead of S1's
results):

    if lb < ub:
        X = S1(lb, start)
        for iv in [lb, last):       Xn = S1(iv + step, idx + 1); R(iv, idx, X); X = Xn
        R(last, idx, X)             # the last iteration, peeled
    else: the loop's initial values

The steady-state loop has no branch (a branch around a wgmma makes ptxas
serialize them). It holds two slots at a time (idx and idx + 1), so the ring
needs depth >= 2.
"""

from __future__ import annotations

from tawa_xdsl.dialects import aref, tile
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    IndexType,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue


def counter_of(loop: scf.ForOp, value: SSAValue) -> int | None:
    """The iteration-argument position of `value` if it is one of `loop`'s counters."""
    if (
        isinstance(value, BlockArgument)
        and value.block is loop.body.block
        and value.index
    ):
        return value.index - 1
    return None


def _stage_one(
    loop: scf.ForOp, get: aref.GetOp, first_dot: tile.DotOp
) -> list[Operation] | None:
    """The ops of the body that feed `first_dot`, in block order, or None when they
    read loop-carried state (then they cannot run an iteration early: a GEMM's
    accumulating dot, say)."""
    body = loop.body.block
    counter = counter_of(loop, get.index)
    needed: set[Operation] = {get, first_dot}
    work: list[SSAValue] = list(first_dot.operands)
    while work:
        v = work.pop()
        if isinstance(v, BlockArgument) and v.block is body:
            if v.index not in (0, (counter or 0) + 1):
                return None
            continue
        owner = v.owner
        if (
            isinstance(owner, Operation)
            and owner.parent_block() is body
            and owner not in needed
        ):
            needed.add(owner)
            work += list(owner.operands)
    return [op for op in body.ops if op in needed]


def rotate(loop: scf.ForOp) -> scf.IfOp | None:
    """Rotate `loop` if it has one ring get, two or more dots and a first dot that
    reads no loop-carried state; return the op replacing it, or None (unchanged)."""
    body = loop.body.block
    gets = [op for op in body.ops if isinstance(op, aref.GetOp)]
    dots = [op for op in body.ops if isinstance(op, tile.DotOp)]
    if len(dots) < 2 or len(gets) != 1:
        return None
    (get,) = gets
    counter = counter_of(loop, get.index)
    if counter is None:
        return None
    stage_one = _stage_one(loop, get, dots[0])
    if stage_one is None:
        return None
    in_stage_one = set(stage_one)
    handed_over = [
        r
        for op in stage_one
        for r in op.results
        if any(use.operation not in in_stage_one for use in r.uses)
    ]
    start = loop.iter_args[counter]

    def stage_one_at(block: Block, iv: SSAValue, idx: SSAValue) -> list[SSAValue]:
        mapper: dict[SSAValue, SSAValue] = {
            body.args[0]: iv,
            body.args[counter + 1]: idx,
        }
        for op in stage_one:
            block.add_op(op.clone(value_mapper=mapper))
        return [mapper[v] for v in handed_over]

    def rest_at(block: Block, mapper: dict[SSAValue, SSAValue]) -> list[SSAValue]:
        """The body without stage one; returns what it yields."""
        for op in body.ops:
            if isinstance(op, scf.YieldOp):
                return [mapper.get(v, v) for v in op.operands]
            if op not in in_stage_one:
                block.add_op(op.clone(value_mapper=mapper))
        raise AssertionError("loop body without a yield")

    then = Block()
    first = stage_one_at(then, loop.lb, start)
    last = _last_iv(then, loop)

    steady_body = Block(
        arg_types=[a.type for a in body.args] + [v.type for v in handed_over]
    )
    carried = steady_body.args[len(body.args) :]
    iv, idx = steady_body.args[0], steady_body.args[counter + 1]
    iv_next = arith.AddiOp(iv, loop.step)
    idx_next = arith.AddiOp(idx, _index(steady_body, 1))
    idx_next.result.name_hint = "idx_next"
    steady_body.add_ops([iv_next, idx_next])
    ahead = stage_one_at(steady_body, iv_next.result, idx_next.result)
    mapper = dict(zip(body.args, steady_body.args, strict=False))
    mapper.update(zip(handed_over, carried, strict=True))
    steady_body.add_op(scf.YieldOp(*rest_at(steady_body, mapper), *ahead))
    steady = scf.ForOp(loop.lb, last, loop.step, [*loop.iter_args, *first], steady_body)
    then.add_op(steady)

    # the last iteration, peeled: nothing left to fetch ahead
    mapper = {body.args[0]: last}
    mapper.update(zip(body.args[1:], steady.results, strict=False))
    mapper.update(zip(handed_over, steady.results[len(loop.iter_args) :], strict=True))
    then.add_op(scf.YieldOp(*rest_at(then, mapper)))

    has_first = arith.CmpiOp(loop.lb, loop.ub, "slt")
    has_first.result.name_hint = "has_first"
    rotated = scf.IfOp(
        has_first,
        [r.type for r in loop.results],
        [then],
        [Block([scf.YieldOp(*loop.iter_args)])],
    )
    for old, new in zip(body.args, steady_body.args, strict=False):
        new.name_hint = old.name_hint
    for v, arg in zip(handed_over, carried, strict=True):
        arg.name_hint = v.name_hint
    parent = loop.parent_block()
    assert parent is not None
    parent.insert_op_before(has_first, loop)
    parent.insert_op_before(rotated, loop)
    for old, new in zip(loop.results, rotated.results, strict=True):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    loop.detach()
    loop.erase()
    return rotated


def _index(block: Block, value: int) -> SSAValue:
    c = arith.ConstantOp.from_int_and_width(value, IndexType())
    block.add_op(c)
    return c.result


def _last_iv(block: Block, loop: scf.ForOp) -> SSAValue:
    """lb + (ceil((ub - lb) / step) - 1) * step: the induction value of the last
    iteration of a loop that runs at least once."""
    span = arith.SubiOp(loop.ub, loop.lb)
    trips = arith.CeilDivSIOp(span, loop.step)
    before_last = arith.SubiOp(trips, _index(block, 1))
    offset = arith.MuliOp(before_last, loop.step)
    last = arith.AddiOp(loop.lb, offset)
    last.result.name_hint = "last_iv"
    block.add_ops([span, trips, before_last, offset, last])
    return last.result
