"""ptx-skip-unit-scale: branch over an in-place rescale by a row of ones.

Contract. Input: thread-level kernels, structured and not yet allocated (run
before `ptx-allocate`). Output: every `mul.f32` that rescales a loop-carried
bundle in place by a broadcast row (below) wrapped as

    %moved = setp.neu.f32 over the distinct factors, or-ed (setp.neu.or.f32)
    %any = ptx.vote_any %moved
    %r = ptx.if uniform %any label "unit_scale" -> (T) {
      %m = ptx.alu(%acc, %alpha) {opcode = "mul.f32", ...}
      ptx.yield %m
    } else {
      ptx.yield %acc
    }

which `ptx-allocate` places in the accumulator's own registers (no copies) and
`ptx-lower-control-flow` prints as `@!%p bra.uni L_unit_scale_N; mul...;
L_unit_scale_N:`. Applying it twice changes nothing.

Which multiplies: one operand is a `ptx.for` carried value (a block argument of
the body) that dies at the multiply and is its first operand to die there, so
the product takes its registers (updated in place); the other is read through
a map that repeats each of its registers at least `ROW_SCALE_REUSE` times (a
row or column broadcast: few distinct factors to test for many multiplies).

Why: online softmax rescales its f32 accumulator, a loop-carried value, by
alpha every key block, and alpha is exactly 1 for rows whose running max did
not move (almost all, once a kernel quantizes its max, see
examples/make_attention.py). The skip is exact (x * 1.0 == x) and costs four
instructions against one multiply per register. Tile-level control flow is
uniform, so the whole warp reaches the vote.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects.ptx import (
    AluOp,
    ForOp,
    IfOp,
    ImmOp,
    RegType,
    VoteAnyOp,
    YieldOp,
    width,
)
from tawa_xdsl.kernel import kernels
from tawa_xdsl.lowering.ptx_liveness import Liveness

ROW_SCALE_REUSE = 8
"""A multiply by a bundle read through a map that repeats each register at least
this often is a row (or column) broadcast; the skip guards it."""
LABEL = "unit_scale"


def _in_place_row_scale(op: AluOp, live: Liveness) -> tuple[SSAValue, list[int]] | None:
    """The factor and its distinct elements, when `op` rescales a carried
    bundle in place by a broadcast row (see the module docstring)."""
    if op.opcode.data != "mul.f32" or op.pred is not None or not op.maps:
        return None
    parent = op.parent_op()
    if isinstance(parent, IfOp) and parent.label == StringAttr(LABEL):
        return None  # already guarded
    dying = [v for v in op.reusable_operands() if live.dies_at(v, op)]
    if not dying:
        return None
    state = dying[0]
    if not (
        isinstance(state, BlockArgument)
        and state.index > 0
        and isinstance(state.block.parent_op(), ForOp)
    ):
        return None
    others = [i for i, a in enumerate(op.args) if a is not state]
    if len(others) != 1 or not isinstance(op.args[others[0]].type, RegType):
        return None
    element_map = op.maps.data[others[0]].get_values()
    if not element_map:
        return None
    factors = list(dict.fromkeys(element_map))
    if len(factors) * ROW_SCALE_REUSE > width(op.result):
        return None  # not a broadcast row: the vote would not pay
    return op.args[others[0]], factors


def _guard(mul: AluOp, factor: SSAValue, factors: list[int]) -> None:
    (state,) = [v for v in mul.args if v is not factor]
    one = ImmOp(1.0, "f32")
    ops: list[Operation] = [one]
    moved = AluOp("setp.neu.f32", [factor, one.result], 1, [[factors[0]], None])
    ops.append(moved)
    for f in factors[1:]:
        moved = AluOp(
            "setp.neu.or.f32",
            [factor, one.result, moved.result],
            1,
            [[f], None, None],
        )
        ops.append(moved)
    vote = VoteAnyOp(moved.result)
    then, otherwise = Block(), Block([YieldOp(state)])
    branch = IfOp(
        vote.result,
        Region(then),
        Region(otherwise),
        [mul.result.type],
        uniform=True,
        label=LABEL,
    )
    Rewriter.insert_op([*ops, vote, branch], InsertPoint.before(mul))
    mul.result.replace_all_uses_with(branch.res[0])
    mul.detach()
    then.add_ops([mul, YieldOp(mul.result)])


def skip_unit_scale(kernel: func.FuncOp) -> None:
    live = Liveness(kernel.body)
    found = []
    for op in live.ops:
        if isinstance(op, AluOp) and (scale := _in_place_row_scale(op, live)):
            found.append((op, *scale))
    for mul, factor, factors in found:
        _guard(mul, factor, factors)


def refuse_allocated(kernel: func.FuncOp, message: str) -> None:
    """Raise `message` at the first op whose result has registers already: a
    pass that makes new bundles runs before `ptx-allocate`."""
    for op in kernel.walk():
        if any(isinstance(r.type, RegType) and r.type.is_allocated for r in op.results):
            raise OpDiagnostic(op, message)


@dataclass(frozen=True)
class PtxSkipUnitScalePass(ModulePass):
    """Skip in-place row rescales by ones (see the module docstring)."""

    name = "ptx-skip-unit-scale"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            refuse_allocated(
                kernel,
                "ptx-skip-unit-scale runs before ptx-allocate (its branch "
                "needs registers of its own)",
            )
            skip_unit_scale(kernel)
