"""ptx-lower-control-flow: structured loops and branches to labels and jumps.

Contract. Input: allocated thread-level kernels (`ptx-allocate` has run: a
loop's start, initial, carried, yielded and result values share registers, as
do a branch's yielded values and results, and a while loop's values on each
of its edges). Output: the same kernels with every `ptx.for`, `ptx.if` and
`ptx.while` replaced, in place, by a flat list of ops, in the shape the old
printer gave them:

    ptx.for:   [mov.u32 iv, lb;]           (where lb is not already in iv)
             L_loop_n:
               setp.ge.s32 p, iv, ub;
               @p bra L_done_m;
               <body, with the copies ptx-allocate put before its yield>
               add.sat.s32 iv, iv, step;   (saturating: no wrap past 2^31 - 1)
               bra L_loop_n;
             L_done_m:

    ptx.while:
             L_while_n:
               <before, with the copies ptx-allocate put before its condition>
               @!p bra L_while_done_m;
               <after, with the copies ptx-allocate put before its yield>
               bra.uni L_while_n;
             L_while_done_m:

    ptx.if:    @!c bra[.uni] L_else_n;
               <then>
               bra[.uni] L_endif_m;
             L_else_n:
               <else>
             L_endif_m:

`.uni` when the `if` is `uniform`. An `if` whose `else` branch does nothing
branches straight to its end (`@!c bra L_endif_n; <then> L_endif_n:`), which is
how the unit-rescale skip prints. The end label is named after the `if`'s
`label` when it has one (`L_unit_scale_n`). Labels are numbered in program
order, one counter per kernel, so they are unique. The loop's exit predicate is
a fresh register above every allocated one.

The while loop's results are what its condition forwards, which on the exit
path nothing overwrites before `L_while_done_m`.

After this pass values are registers more than SSA values: a loop's block
arguments and results are replaced by its initial values (the same registers),
a while loop's `after` arguments and results by what its condition forwards
(a carried value forwarded as it is: its initial value), an `if`'s results by
what its `then` branch yields.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects.ptx import (
    AluOp,
    BraOp,
    ConditionOp,
    ForOp,
    IfOp,
    LabelOp,
    RegType,
    WhileOp,
    YieldOp,
)
from tawa_xdsl.kernel import kernels


def next_free_registers(kernel: func.FuncOp) -> dict[str, int]:
    """Per register class, the first register no value of `kernel` uses (a
    loop's block arguments sit in its results' registers: results suffice)."""
    free: dict[str, int] = {}
    for op in kernel.walk():
        for value in op.results:
            t = value.type
            if type(t) is RegType and t.is_allocated:
                cls, end = t.cls.data, t.first.data + t.count.data
                if end > free.get(cls, 0):
                    free[cls] = end
    return free


class _Lowering:
    """Lowers the control flow of one kernel, numbering labels as it goes."""

    def __init__(self, kernel: func.FuncOp):
        self.labels = 0
        self.free = next_free_registers(kernel)

    def label(self, stem: str) -> str:
        self.labels += 1
        return f"L_{stem}_{self.labels}"

    def register(self, cls: str) -> RegType:
        first = self.free.get(cls, 0)
        self.free[cls] = first + 1
        return RegType(cls, 1, first)

    def block(self, block: Block) -> None:
        op = block.first_op
        while op is not None:
            if isinstance(op, ForOp):
                op = self.for_loop(op)
            elif isinstance(op, WhileOp):
                op = self.while_loop(op)
            elif isinstance(op, IfOp):
                op = self.if_op(op)
            else:
                op = op.next_op

    def for_loop(self, op: ForOp) -> Operation | None:
        """Lower `op`; returns the first op of what replaced it."""
        body = op.body.block
        iv = body.args[0]
        yield_op = body.last_op
        assert isinstance(yield_op, YieldOp)
        _check_shared(op, op.iter_args, body.args[1:], "initial value")
        _check_shared(op, yield_op.values, body.args[1:], "yielded value")
        _check_shared(op, op.res, body.args[1:], "result")
        _check_allocated(op, iv)
        head, done = self.label("loop"), self.label("done")
        ops: list[Operation] = []
        counter = op.lb
        if counter.type != iv.type:
            start = _alu("mov.u32", [op.lb], iv.type)
            ops.append(start)
            counter = start.result
        exit_ = _alu("setp.ge.s32", [counter, op.ub], self.register("pred"))
        ops += [LabelOp(head), exit_, BraOp(done, exit_.result)]
        step = _alu("add.sat.s32", [counter, op.step], iv.type)
        tail = [step, BraOp(head), LabelOp(done)]
        return self._inline(
            op, ops, [(body, [counter, *op.iter_args], tail)], op.iter_args
        )

    def while_loop(self, op: WhileOp) -> Operation | None:
        """Lower `op`; returns the first op of what replaced it."""
        before, after = op.before.block, op.after.block
        condition, yield_op = before.last_op, after.last_op
        assert isinstance(condition, ConditionOp) and isinstance(yield_op, YieldOp)
        _check_shared(op, op.inits, before.args, "initial value")
        _check_shared(op, yield_op.values, before.args, "yielded value")
        _check_shared(op, condition.values, after.args, "forwarded value")
        _check_shared(op, op.res, after.args, "result")
        _check_allocated(op, condition.cond)
        # the before block's arguments become the initial values as it is
        # inlined; what the condition reads of them is read from those
        entry = dict(zip(before.args, op.inits, strict=True))
        cond = entry.get(condition.cond, condition.cond)
        forwarded = [entry.get(v, v) for v in condition.values]
        head, done = self.label("while"), self.label("while_done")
        blocks = [
            (before, op.inits, [BraOp(done, cond, negated=True)]),
            (after, forwarded, [BraOp(head, uniform=True), LabelOp(done)]),
        ]
        return self._inline(op, [LabelOp(head)], blocks, forwarded)

    def if_op(self, op: IfOp) -> Operation | None:
        """Lower `op`; returns the first op of what replaced it."""
        _check_allocated(op, op.cond)  # an if yielding nothing has no other check
        then = op.then.block
        then_yield = then.last_op
        assert isinstance(then_yield, YieldOp)
        _check_shared(op, then_yield.values, op.res, "value the then branch yields")
        otherwise = op.otherwise.blocks[0] if op.otherwise.blocks else None
        if otherwise is not None:
            else_yield = otherwise.last_op
            assert isinstance(else_yield, YieldOp)
            _check_shared(op, else_yield.values, op.res, "value the else branch yields")
        uniform = op.uniform is not None
        stem = op.label.data if op.label is not None else "endif"
        results = list(then_yield.values)
        if otherwise is None or otherwise.first_op is otherwise.last_op:
            end = self.label(stem)
            head: list[Operation] = [BraOp(end, op.cond, negated=True, uniform=uniform)]
            return self._inline(op, head, [(then, [], [LabelOp(end)])], results)
        other, end = self.label("else"), self.label(stem)
        head = [BraOp(other, op.cond, negated=True, uniform=uniform)]
        branches = [
            (then, [], [BraOp(end, uniform=uniform), LabelOp(other)]),
            (otherwise, [], [LabelOp(end)]),
        ]
        return self._inline(op, head, branches, results)

    def _inline(
        self,
        op: Operation,
        head: list[Operation],
        blocks: Sequence[tuple[Block, Sequence[SSAValue], list[Operation]]],
        results: Sequence[SSAValue],
    ) -> Operation | None:
        """Replace `op` by `head`, then each block (its yield dropped, its
        arguments replaced by the values given) followed by its tail ops; the
        results of `op` become `results`."""
        Rewriter.insert_op(head, InsertPoint.before(op))
        for block, args, tail in blocks:
            terminator = block.last_op
            assert isinstance(terminator, YieldOp | ConditionOp)
            Rewriter.erase_op(terminator)
            Rewriter.inline_block(block, InsertPoint.before(op), args)
            Rewriter.insert_op(tail, InsertPoint.before(op))
        for old, new in zip(op.results, results, strict=True):
            old.replace_all_uses_with(new)
        Rewriter.erase_op(op)
        return head[0]


def _alu(opcode: str, args: Sequence[SSAValue], t: Attribute) -> AluOp:
    """A one-register instruction writing the allocated register `t`."""
    op = AluOp(opcode, args, 1)
    Rewriter.replace_value_with_new_type(op.result, t)
    return op


def _check_allocated(op: Operation, value: SSAValue) -> None:
    t = value.type
    if isinstance(t, RegType) and not t.is_allocated:
        raise OpDiagnostic(
            op, "ptx-lower-control-flow: registers are not allocated (run ptx-allocate)"
        )


def _check_shared(
    op: Operation, values: Sequence[SSAValue], into: Sequence[SSAValue], what: str
) -> None:
    """Each value already sits in the registers it flows into."""
    for i, (value, dest) in enumerate(zip(values, into, strict=True)):
        _check_allocated(op, dest)
        want: Attribute = dest.type
        if value.type != want:
            raise OpDiagnostic(
                op,
                f"ptx-lower-control-flow: {what} {i} is in {value.type}, not in "
                f"{want} (ptx-allocate inserts the copies)",
            )


def lower_control_flow(kernel: func.FuncOp) -> None:
    _Lowering(kernel).block(kernel.body.block)


@dataclass(frozen=True)
class PtxLowerControlFlowPass(ModulePass):
    """Structured control flow to labels and branches (see the module docstring)."""

    name = "ptx-lower-control-flow"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            lower_control_flow(kernel)
