"""Structured control flow (pattern family 3).

`scf.for` becomes `ptx.for` (signed 32-bit bounds) and `scf.if` `ptx.if`; their
bodies move over unchanged and are converted op by op. A carried value or a
branch result is a whole bundle of its type (`register_type`): a splat, a
literal or a re-indexed value entering a loop or yielded is first made one with
a mov per register (as the printer's copies into the loop's registers were).
Tile-level control flow is uniform, but the printer branched with plain `bra`;
`ptx.if` keeps that (not `uniform`). `scf.while` has no thread-level form yet.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.ir import Attribute, Operation
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


def bundle_types(op: Operation) -> list[ptx.RegType]:
    """The bundle of every result of a region op."""
    types = []
    for r in op.results:
        t = register_type(r.type)
        if t is None:
            raise OpDiagnostic(op, f"a carried value of type {r.type} has no registers")
        types.append(t)
    return types


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
        # the body keeps its ops; its new arguments go first, the old ones stay
        # for the ops not yet converted
        block = op.body.block
        old_args = list(block.args)
        for i, t in enumerate([bundle("b32"), *types]):
            new = block.insert_arg(t, i)
            k.values[old_args[i]] = Lowered(new)
        k.old_args += old_args
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


class Yield(DistributePattern):
    """`scf.yield` in a converted loop or branch: the values as its bundles."""

    OPS = (scf.YieldOp,)

    def rewrite(self, op: scf.YieldOp, rewriter: PatternRewriter):
        parent = op.parent_op()
        if not isinstance(parent, ptx.ForOp | ptx.IfOp):
            return
        ops = Ops(self.k)
        types: list[Attribute] = [r.type for r in parent.results]
        values = [
            ops.materialize(self.k.lowered(v, op), t)
            for v, t in zip(op.operands, types, strict=True)
        ]
        ops.add(ptx.YieldOp(*values))
        rewriter.replace(op, ops, [])


class While(DistributePattern):
    OPS = (scf.WhileOp,)

    def rewrite(self, op: scf.WhileOp, rewriter: PatternRewriter):
        raise OpDiagnostic(
            op, "scf.while has no thread-level form yet; write the loop as scf.for"
        )


def patterns(k: KernelState) -> list[DistributePattern]:
    return [For(k), If(k), Yield(k), While(k)]
