"""Two-stage overlap of a consumer loop (FA3's intra-warpgroup pipelining).

A loop body with two or more dots (attention: S = Q K^T, the softmax, then
acc = acc * alpha + P V) splits into two stages:

- stage two: the last dot, everything on its accumulator's loop-carried chain
  (the rescale of acc, the dot, what uses its result) and the release of the
  slot those ops read (V);
- stage one: the rest (the get, S = Q K^T, the softmax making P, alpha and the
  row statistics, the index counter).

Iteration j of the rotated loop runs stage one of iteration j + 1 and stage two
of iteration j, in the order: stage one up to its first dot (issue S_{j+1}),
stage two (issue P_j V_j), the rest of stage one (the softmax of S_{j+1}, which
runs while P_j V_j is on the tensor cores), then stage two's release. Values
stage two reads from stage one (P, alpha, V, the counter) are handed over
through the loop's iteration arguments:

    if lb < ub:
        state, H = one(lb, state0)                 # stage one of the first iteration
        for iv in [lb, last):
            state', Hn = one(iv + step, state)     # iteration j + 1
            acc = two(acc, H)                      # iteration j
        acc = two(acc, H)                          # the last iteration, peeled
    else: the loop's initial values

The steady-state loop has no branch (a branch around a wgmma makes ptxas
serialize them). It holds two slots at a time (j and j + 1), so the ring needs
depth >= 2. A loop whose stage one would read stage two's results is left alone,
and so is one the kernel marks `{tile.overlap = false}`: a loop of one or two
iterations (attention's masked boundary blocks) gains nothing from the overlap
and its rotated copy would raise the register pressure of the whole kernel.
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import BoolAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from tawa_xdsl.dialects import aref, tile

OVERLAP_ATTR = "tile.overlap"


def counter_of(loop: scf.ForOp, value: SSAValue) -> int | None:
    """The iteration-argument position of `value` if it is one of `loop`'s counters."""
    if (
        isinstance(value, BlockArgument)
        and value.block is loop.body.block
        and value.index
    ):
        return value.index - 1
    return None


def _operands(op: Operation) -> Iterable[SSAValue]:
    """Every value `op` reads, its regions included."""
    for o in op.walk():
        yield from o.operands


def _slot_of(v: SSAValue) -> SSAValue | None:
    """The aref whose slot `v` is (a get's tile, or a transposed view of one)."""
    while isinstance(v.owner, tile.TransOp):
        v = v.owner.source
    return v.owner.aref if isinstance(v.owner, aref.GetOp) else None


def _stage_two(body: Block, last_dot: tile.DotOp) -> set[Operation] | None:
    """The last dot, the ops on its accumulator chain and their users, and the
    releases of the arefs they read; None if the dot has no loop-carried
    accumulator (nothing to overlap)."""
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    two: set[Operation] = {last_dot}
    frontier: list[SSAValue] = list(last_dot.results)
    acc_args = [
        body.args[i + 1] for i, v in enumerate(yielded.operands) if v.owner is last_dot
    ]
    if not acc_args:
        return None
    frontier += acc_args
    while frontier:
        v = frontier.pop()
        for use in v.uses:
            top = body.find_ancestor_op_in_block(use.operation)
            if top is not None and top is not yielded and top not in two:
                two.add(top)
                frontier += top.results
    read = {_slot_of(v) for op in two for v in _operands(op)} - {None}
    two |= {
        op for op in body.ops if isinstance(op, aref.ConsumedOp) and op.aref in read
    }
    # re-indexings that only feed stage two move with it: handing over a row
    # vector is cheaper than its broadcast to a whole tile
    moved = True
    while moved:
        moved = False
        for op in body.ops:
            if (
                isinstance(op, tile.BroadcastOp | tile.ExpandDimsOp)
                and op not in two
                and all(use.operation in two for use in op.result.uses)
            ):
                two.add(op)
                moved = True
    return two


def rotate(loop: scf.ForOp) -> scf.IfOp | None:
    """Rotate `loop` if it has one ring get, two or more dots and splits into the
    two stages; return the op replacing it, or None (unchanged)."""
    body = loop.body.block
    gets = [op for op in body.ops if isinstance(op, aref.GetOp)]
    dots = [op for op in body.ops if isinstance(op, tile.DotOp)]
    if len(dots) < 2 or len(gets) != 1 or counter_of(loop, gets[0].index) is None:
        return None
    if loop.attributes.get(OVERLAP_ATTR) == BoolAttr.from_bool(False):
        return None
    two = _stage_two(body, dots[-1])
    if two is None or dots[0] in two or gets[0] in two:
        return None
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    one = [op for op in body.ops if op not in two and op is not yielded]
    if any(v.owner in two for op in one for v in _operands(op)):
        return None  # stage one needs stage two's results: no overlap possible
    two_ops = [op for op in body.ops if op in two]
    two_positions = {i for i, v in enumerate(yielded.operands) if v.owner in two}
    # what stage two reads from stage one: its results, its loop-carried state, iv
    handed_over: list[SSAValue] = []
    for op in two_ops:
        for v in _operands(op):
            from_one = v.owner in one or (
                isinstance(v, BlockArgument)
                and v.block is body
                and (v.index == 0 or v.index - 1 not in two_positions)
            )
            if from_one and v not in handed_over:
                handed_over.append(v)
    head_end = one.index(dots[0]) + 1

    def run_one(
        block: Block, iv: SSAValue, state: list[SSAValue], ops: list[Operation]
    ) -> dict[SSAValue, SSAValue]:
        mapper: dict[SSAValue, SSAValue] = {body.args[0]: iv}
        mapper.update(zip(body.args[1:], state, strict=True))
        for op in ops:
            block.add_op(op.clone(value_mapper=mapper))
        return mapper

    def run_two(
        block: Block,
        acc_state: list[SSAValue],
        handed: list[SSAValue],
        ops: list[Operation],
        mapper: dict[SSAValue, SSAValue] | None = None,
    ) -> dict[SSAValue, SSAValue]:
        mapper = {} if mapper is None else mapper
        mapper.update(zip(body.args[1:], acc_state, strict=True))
        mapper.update(zip(handed_over, handed, strict=True))
        for op in ops:
            block.add_op(op.clone(value_mapper=mapper))
        return mapper

    def next_state(mapper: dict[SSAValue, SSAValue], old: list[SSAValue]):
        return [
            old[i] if i in two_positions else mapper.get(v, v)
            for i, v in enumerate(yielded.operands)
        ]

    # the first iteration's stage one
    then = Block()
    first = run_one(then, loop.lb, list(loop.iter_args), one)
    state0 = next_state(first, list(loop.iter_args))
    handed0 = [first.get(v, v) for v in handed_over]
    last = _last_iv(then, loop)

    steady_body = Block(
        arg_types=[a.type for a in body.args] + [v.type for v in handed_over]
    )
    iv = steady_body.args[0]
    state = list(steady_body.args[1 : len(body.args)])
    carried = list(steady_body.args[len(body.args) :])
    iv_next = arith.AddiOp(iv, loop.step)
    steady_body.add_op(iv_next)
    ahead = run_one(steady_body, iv_next.result, state, one[:head_end])
    releases = [op for op in two_ops if isinstance(op, aref.ConsumedOp)]
    behind = run_two(
        steady_body, state, carried, [op for op in two_ops if op not in releases]
    )
    for op in one[head_end:]:
        steady_body.add_op(op.clone(value_mapper=ahead))
    run_two(steady_body, state, carried, releases, behind)
    new_state = [
        behind.get(v, v) if i in two_positions else ahead.get(v, v)
        for i, v in enumerate(yielded.operands)
    ]
    steady_body.add_op(scf.YieldOp(*new_state, *[ahead.get(v, v) for v in handed_over]))
    steady = scf.ForOp(loop.lb, last, loop.step, [*state0, *handed0], steady_body)
    then.add_op(steady)

    # the last iteration's stage two, peeled: nothing left to fetch ahead
    results = list(steady.results)
    final = run_two(then, results[: len(state)], results[len(state) :], two_ops)
    then.add_op(
        scf.YieldOp(
            *[
                final.get(v, v) if i in two_positions else results[i]
                for i, v in enumerate(yielded.operands)
            ]
        )
    )

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


def _last_iv(block: Block, loop: scf.ForOp) -> SSAValue:
    """lb + (ceil((ub - lb) / step) - 1) * step: the induction value of the last
    iteration of a loop that runs at least once."""
    one = arith.ConstantOp.from_int_and_width(1, loop.step.type)  # index or iN
    span = arith.SubiOp(loop.ub, loop.lb)
    trips = arith.CeilDivSIOp(span, loop.step)
    before_last = arith.SubiOp(trips, one)
    offset = arith.MuliOp(before_last, loop.step)
    last = arith.AddiOp(loop.lb, offset)
    last.result.name_hint = "last_iv"
    block.add_ops([one, span, trips, before_last, offset, last])
    return last.result
