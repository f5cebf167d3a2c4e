"""Structured control flow (pattern family 3).

`scf.for` becomes `ptx.for` (signed 32-bit bounds), `scf.if` `ptx.if` and
`scf.while` `ptx.while` (`scf.condition` its `ptx.condition`); their regions
move over unchanged and are converted op by op. A carried value or a branch
result is a whole bundle of its type (`register_type`): a splat, a literal or a
re-indexed value entering a loop, yielded or forwarded by a condition is first
made one with a mov per register (as the printer's copies into the loop's
registers were); an accumulator tile carried through a while loop is the
bundle of its registers, as through a for loop. Tile-level control flow is
uniform (a condition is an i1 scalar, the same in every thread), but the
printer branched with plain `bra`; `ptx.if` keeps that (not `uniform`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.ir import Block, Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
)

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import ptx
from tawa_xdsl.lowering.distribute.context import (
    KernelState,
    Lowered,
    Ops,
    bundle,
    register_type,
)
from tawa_xdsl.lowering.distribute.kernel import DistributePattern


def bundle_types(
    op: Operation, values: Sequence[SSAValue] | None = None
) -> list[ptx.RegType]:
    """The bundle of every result of a region op (or of its `values`)."""
    types = []
    for v in op.results if values is None else values:
        t = register_type(v.type)
        if t is None:
            raise OpDiagnostic(op, f"a carried value of type {v.type} has no registers")
        types.append(t)
    return types


def retype_args(k: KernelState, block: Block, types: Sequence[ptx.RegType]) -> None:
    """Give a moved region's block its bundles as new arguments, first; the old
    ones stay, standing for the new, for the ops not yet converted."""
    old_args = list(block.args)
    for i, t in enumerate(types):
        new = block.insert_arg(t, i)
        k.values[old_args[i]] = Lowered(new)
    k.old_args += old_args


class For(DistributePattern):
    OPS = (scf.ForOp,)

    def rewrite(self, op: scf.ForOp, rewriter: PatternRewriter):
        k, ops = self.k, Ops(self.k)
        lb, ub, step = (k.lowered(v, op).value for v in (op.lb, op.ub, op.step))
        types = bundle_types(op)
        inits = [
            ops.materialize(k.lowered(v, op), t)
            for v, t in zip(op.iter_args, types, strict=True)
        ]
        retype_args(k, op.body.block, [bundle("b32"), *types])
        body = rewriter.move_region_contents_to_new_regions(op.body)
        loop = ops.add(ptx.ForOp(lb, ub, step, inits, body, types))
        k.define(rewriter, op, ops, *(Lowered(r) for r in loop.results))


class If(DistributePattern):
    OPS = (scf.IfOp,)

    def rewrite(self, op: scf.IfOp, rewriter: PatternRewriter):
        cond = self.k.lowered(op.cond, op).value
        then = rewriter.move_region_contents_to_new_regions(op.true_region)
        otherwise = rewriter.move_region_contents_to_new_regions(op.false_region)
        branch = ptx.IfOp(cond, then, otherwise, bundle_types(op))
        self.k.define(rewriter, op, [branch], *(Lowered(r) for r in branch.results))


class While(DistributePattern):
    OPS = (scf.WhileOp,)

    def rewrite(self, op: scf.WhileOp, rewriter: PatternRewriter):
        k, ops = self.k, Ops(self.k)
        carried = bundle_types(op, op.before_region.block.args)
        types = bundle_types(op)
        inits = [
            ops.materialize(k.lowered(v, op), t)
            for v, t in zip(op.arguments, carried, strict=True)
        ]
        retype_args(k, op.before_region.block, carried)
        retype_args(k, op.after_region.block, types)
        before = rewriter.move_region_contents_to_new_regions(op.before_region)
        after = rewriter.move_region_contents_to_new_regions(op.after_region)
        loop = ops.add(ptx.WhileOp(inits, before, after, types))
        k.define(rewriter, op, ops, *(Lowered(r) for r in loop.results))


def _as_bundles(
    k: KernelState, op: Operation, values: Sequence[SSAValue], into: Sequence[SSAValue]
) -> tuple[Ops, list[SSAValue]]:
    """A terminator's `values`, each as exactly the bundle it flows `into`."""
    ops = Ops(k)
    bundles = [
        ops.materialize(k.lowered(v, op), t.type)
        for v, t in zip(values, into, strict=True)
    ]
    return ops, bundles


class Yield(DistributePattern):
    """`scf.yield` in a converted loop or branch: the values as the bundles
    they flow into (a `ptx.while`'s carried values, else the results)."""

    OPS = (scf.YieldOp,)

    def rewrite(self, op: scf.YieldOp, rewriter: PatternRewriter):
        parent = op.parent_op()
        if isinstance(parent, ptx.WhileOp):  # (the old arguments follow)
            into: Sequence[SSAValue] = parent.before.block.args[: len(parent.inits)]
        elif isinstance(parent, ptx.ForOp | ptx.IfOp):
            into = parent.results
        else:
            return
        ops, values = _as_bundles(self.k, op, op.operands, into)
        ops.add(ptx.YieldOp(*values))
        rewriter.replace(op, ops, [])


class Condition(DistributePattern):
    """`scf.condition` in a converted while loop: the predicate, and the
    forwarded values as the bundles of the loop's results."""

    OPS = (scf.ConditionOp,)

    def rewrite(self, op: scf.ConditionOp, rewriter: PatternRewriter):
        parent = op.parent_op()
        assert isinstance(parent, ptx.WhileOp)
        ops, values = _as_bundles(self.k, op, op.args, parent.results)
        ops.add(ptx.ConditionOp(self.k.lowered(op.condition, op).value, values))
        rewriter.replace(op, ops, [])


def patterns(k: KernelState) -> list[DistributePattern]:
    return [For(k), If(k), While(k), Yield(k), Condition(k)]
