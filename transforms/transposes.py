"""Moving `tile.trans` of computed tiles to where the tiles come from.

A transpose is free only on a tile in shared memory (a loaded tile: a layout
choice wgmma and the staging reads make); a tile computed in registers (a dot's
accumulator, its epilogue) has no transposed form in the lowering. Its
transpose can be moved up instead, through what computed it:
`trans(dot(a, b, acc)) = dot(trans(b), trans(a), trans(acc))` (so
`trans(A B^T)`, a GEMM storing its output transposed, becomes `B A^T` on the
loaded tiles), elementwise ops, splats, `tile.broadcast` / `tile.expand_dims`,
and a loop that carries the tile (its initial value, the carried argument and
the yielded value transposed). Each rewrite moves one transpose one op up;
two transposes in a row cancel. A transpose is moved only where every source
it would reach is one of those (`transposable`; a dot only of a loaded A and
a loaded B, N x K transposed or 16-bit K x N, whose swapped operands then
read as the lowering takes them), and only through values read transposed alone (each read a
transpose, or an op whose result is read transposed alone in
turn: `acc + relu(acc)` stored transposed reads the accumulator twice;
`analysis/transposable.py`, whose `blocker` the lowering's refusal quotes), so
no computation is duplicated: a value is transposed once all its readers
are transposes, which then all read the one transposed value. A `pinned`
transpose (`swap-operands`' in front of a store) moves nowhere and cancels
with nothing: the store writes that register tile transposed. A kernel these
rules do not cover (a tile also read as it is) keeps its transpose where it
was written (the lowering then names it there).

The patterns are `tile.trans`'s canonicalization patterns (`canonicalize`,
which the Hopper pipeline runs before `aref-partition`); `split-k` and
`stream-k` run them first (`sink_transposes`), so the epilogue they move into
the reduce kernel holds no transpose of the accumulator.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from tawa_xdsl.analysis.transposable import transposable
from tawa_xdsl.dialects import tile
from tawa_xdsl.dialects.tile import splat_value


def _transposed(t: TensorType) -> TensorType:
    rows, cols = t.get_shape()
    return TensorType(t.element_type, (cols, rows), t.encoding)


class TransposeOfTranspose(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.TransOp, rewriter: PatternRewriter, /):
        src = op.source
        if (
            not op.pinned
            and isinstance(src, OpResult)
            and isinstance(src.op, tile.TransOp)
        ):
            rewriter.replace(op, [], [src.op.source])


class DeadTranspose(RewritePattern):
    """A transpose nothing reads (a loop argument's, once moved into the body)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.TransOp, rewriter: PatternRewriter, /):
        if not op.result.uses:
            rewriter.erase(op)


class TransposeUp(RewritePattern):
    """The transposes of a computed tile moved one op up (`transposable`),
    once they are all its readers (a splat, free to copy, at once), all
    replaced by the one transposed value."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.TransOp, rewriter: PatternRewriter, /):
        src = op.source
        if (
            op.pinned
            or not isinstance(src, OpResult)
            or isinstance(src.op, tile.TransOp | tile.LoadOp)
            or not transposable(src)
        ):
            return
        readers = [u.operation for u in src.uses]
        if isinstance(src.op, tile.SplatOp | arith.ConstantOp):
            readers = [op]
        elif not all(isinstance(r, tile.TransOp) and not r.pinned for r in readers):
            return  # the others first: transposed now, it would be computed twice
        moved = _moved(src, rewriter, op)
        for reader in readers:
            rewriter.replace(reader, [], [moved])
        if isinstance(src.op, scf.ForOp) or src.uses:
            return
        rewriter.erase(src.op)


def _moved(src: OpResult, rewriter: PatternRewriter, at: tile.TransOp) -> SSAValue:
    """The transpose of `src` (one of the ops `transposable` takes) computed
    from the transposes of its operands (located at `at`), right after the op
    that computes `src`, so it comes before every reader of `src`; a loop
    carrying it is rewritten to carry it transposed."""
    op, new_type = src.op, _transposed(src.type)  # type: ignore[arg-type]
    made_ops: list[Operation] = []

    def trans(v: SSAValue) -> SSAValue:
        new = tile.TransOp(v)
        new.location = at.location
        made_ops.append(new)
        return new.result

    if isinstance(op, tile.SplatOp):
        made: Operation = tile.SplatOp(op.source, new_type)
    elif isinstance(op, arith.ConstantOp):
        value = splat_value(op.value)  # type: ignore[arg-type]
        made = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(new_type, [value]))
    elif isinstance(op, tile.DotOp):
        made = tile.DotOp(trans(op.rhs), trans(op.lhs), trans(op.acc))
    elif isinstance(op, tile.ExpandDimsOp):
        made = tile.ExpandDimsOp(op.source, 1 - op.axis.value.data)
    elif isinstance(op, tile.BroadcastOp):
        made = tile.BroadcastOp(trans(op.source), new_type)
    elif isinstance(op, scf.ForOp):
        _carry_transposed(op, src.index, rewriter)
        return op.results[src.index]
    else:  # elementwise
        made = op.clone()
        for i, x in enumerate(op.operands):
            if isinstance(x.type, TensorType):
                made.operands[i] = trans(x)
        Rewriter.replace_value_with_new_type(made.results[0], new_type)
    made.location = op.location  # where the user wrote what it computes
    rewriter.insert([*made_ops, made], InsertPoint.after(op))
    return made.results[0]


def _trans(v: SSAValue, rewriter: PatternRewriter, at: Operation) -> SSAValue:
    new = tile.TransOp(v)
    new.location = at.location
    rewriter.insert(new, InsertPoint.before(at))
    return new.result


def _carry_transposed(loop: scf.ForOp, i: int, rewriter: PatternRewriter) -> None:
    """`loop` carries its value `i` transposed: the initial value and the
    yielded one transposed, the argument's one use reading it transposed back
    (which then moves on into the body), result `i` the transposed value."""
    block: Block = loop.body.block
    old = block.args[i + 1]
    new_type = _transposed(old.type)  # type: ignore[arg-type]
    loop.operands[3 + i] = _trans(loop.iter_args[i], rewriter, loop)
    yielded = block.last_op
    assert isinstance(yielded, scf.YieldOp)
    yielded.operands[i] = _trans(yielded.operands[i], rewriter, yielded)
    arg: BlockArgument = rewriter.replace_value_with_new_type(old, new_type)  # type: ignore[assignment]
    back = tile.TransOp(arg)
    back.location = loop.location
    first = block.first_op
    assert first is not None
    rewriter.insert(back, InsertPoint.before(first))
    for use in list(arg.uses):
        if use.operation is not back:
            use.operation.operands[use.index] = back.result
    rewriter.replace_value_with_new_type(loop.results[i], new_type)


PATTERNS: tuple[RewritePattern, ...] = (
    DeadTranspose(),
    TransposeOfTranspose(),
    TransposeUp(),
)


def sink_transposes(root: Operation) -> None:
    """Run the patterns over `root` (`split-k` and `stream-k`, before they cut
    a kernel)."""
    walker = PatternRewriteWalker(GreedyRewritePatternApplier(list(PATTERNS)))
    for region in root.regions:
        walker.rewrite_region(region)
