"""Two-stage overlap of a consumer loop (FA3's intra-warpgroup pipelining).

In a loop whose first `tile.dot` depends only on the iteration's aref tiles (S =
Q K^T in attention), issue that dot one iteration early: iteration j computes
the first dot of iteration j + 1 before the rest of iteration j (the softmax and
P V), so the tensor cores work while the softmax runs.

Rotation, with S1 = the get and the ops feeding the first dot:

    prologue:      if lb < ub:          X0 = S1(lb, start)
    loop j:        if iv + step < ub:   Xn = S1(iv + step, idx + 1)
                   rest of the body, reading the carried X instead of S1's results
                   yield ..., Xn

X are the values S1 hands to the rest of the body. The loop holds two slots at
a time (idx and idx + 1), so the ring needs depth >= 2.
"""

from __future__ import annotations

from tawa_xdsl.dialects import aref, tile
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue


def counter_of(loop: scf.ForOp, value: SSAValue) -> int | None:
    """The iteration-argument position of `value` if it is one of `loop`'s counters."""
    if (
        isinstance(value, BlockArgument)
        and value.block is loop.body.block
        and value.index
    ):
        return value.index - 1
    return None


def _zero(t: Attribute) -> Operation:
    """A zero of type `t`: what a skipped early stage hands over (never read)."""
    element = t.element_type if isinstance(t, TensorType) else t
    zero: float | int = 0.0 if isinstance(element, AnyFloat) else 0
    if isinstance(t, TensorType):
        return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [zero]))
    if isinstance(t, AnyFloat):
        return arith.ConstantOp(FloatAttr(zero, t))
    return arith.ConstantOp(IntegerAttr(zero, t))


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


def rotate(loop: scf.ForOp) -> scf.ForOp | None:
    """Rotate `loop` if it has one ring get, two or more dots and a first dot that
    reads no loop-carried state; return the new loop, or None (loop unchanged)."""
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
    parent = loop.parent_block()
    assert parent is not None
    start = loop.iter_args[counter]

    def emit_stage_one(block: Block, iv: SSAValue, idx: SSAValue) -> list[SSAValue]:
        mapper: dict[SSAValue, SSAValue] = {
            body.args[0]: iv,
            body.args[counter + 1]: idx,
        }
        for op in stage_one:
            block.add_op(op.clone(value_mapper=mapper))
        return [mapper[v] for v in handed_over]

    def guarded(block: Block, cond: SSAValue, iv: SSAValue, idx: SSAValue) -> scf.IfOp:
        then, other = Block(), Block()
        then.add_op(scf.YieldOp(*emit_stage_one(then, iv, idx)))
        zeros = [_zero(v.type) for v in handed_over]
        for z in zeros:
            other.add_op(z)
        other.add_op(scf.YieldOp(*[z.results[0] for z in zeros]))
        branch = scf.IfOp(cond, [v.type for v in handed_over], [then], [other])
        block.add_op(branch)
        return branch

    pre = Block()
    has_first = arith.CmpiOp(loop.lb, loop.ub, "slt")
    has_first.result.name_hint = "has_first"
    pre.add_op(has_first)
    prologue = guarded(pre, has_first.result, loop.lb, start)
    for op in list(pre.ops):
        op.detach()
        parent.insert_op_before(op, loop)

    n_old = len(loop.iter_args)
    new_body = Block(
        arg_types=[a.type for a in body.args] + [v.type for v in handed_over]
    )
    carried = new_body.args[1 + n_old :]
    iv, idx = new_body.args[0], new_body.args[counter + 1]
    iv_next = arith.AddiOp(iv, loop.step)
    has_next = arith.CmpiOp(iv_next, loop.ub, "slt")
    one = arith.ConstantOp.from_int_and_width(1, IndexType())
    idx_next = arith.AddiOp(idx, one)
    has_next.result.name_hint, idx_next.result.name_hint = "has_next", "idx_next"
    for op in (iv_next, has_next, one, idx_next):
        new_body.add_op(op)
    ahead = guarded(new_body, has_next.result, iv_next.result, idx_next.result)

    mapper: dict[SSAValue, SSAValue] = dict(zip(body.args, new_body.args, strict=False))
    mapper.update(zip(handed_over, carried, strict=True))
    for op in body.ops:
        if op in in_stage_one:
            continue
        if isinstance(op, scf.YieldOp):
            new_body.add_op(
                scf.YieldOp(*[mapper.get(v, v) for v in op.operands], *ahead.results)
            )
        else:
            new_body.add_op(op.clone(value_mapper=mapper))

    rotated = scf.ForOp(
        loop.lb, loop.ub, loop.step, [*loop.iter_args, *prologue.results], new_body
    )
    for old, new in zip(body.args, new_body.args, strict=False):
        new.name_hint = old.name_hint
    for v, arg, first, nxt in zip(
        handed_over, carried, prologue.results, ahead.results, strict=True
    ):
        hint = v.name_hint or "stage1"
        arg.name_hint, first.name_hint, nxt.name_hint = (
            hint,
            f"{hint}_first",
            f"{hint}_next",
        )
    parent.insert_op_before(rotated, loop)
    for old, new in zip(loop.results, rotated.results, strict=False):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    loop.detach()
    loop.erase()
    return rotated
