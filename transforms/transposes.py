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
a loaded B transposed, whose swapped operands then read as the lowering
takes them), and only through values nothing else reads, so no computation
is duplicated and a kernel these rules do not cover keeps its transpose
where it was written (the lowering then names it there).

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

from tawa_xdsl.analysis.elementwise import is_elementwise
from tawa_xdsl.dialects import tile
from tawa_xdsl.dialects.tile import splat_value


def _transposed(t: TensorType) -> TensorType:
    rows, cols = t.get_shape()
    return TensorType(t.element_type, (cols, rows), t.encoding)


def _loaded(v: SSAValue) -> bool:
    return isinstance(v, OpResult) and isinstance(v.op, tile.LoadOp)


def _nt_operands(dot: tile.DotOp) -> bool:
    """Whether `dot` reads A as loaded (M x K) and B as a loaded N x K tile
    transposed: then `trans(b)`, `trans(a)` read the same way (the loaded
    N x K tile as A, the loaded M x K one transposed as B), in every dtype the
    lowering takes (8-bit operands only K-major). Other operand orientations
    are left alone: moved, the lowering would refuse a transposed A the user
    never wrote."""
    b = dot.rhs
    return (
        _loaded(dot.lhs)
        and isinstance(b, OpResult)
        and isinstance(b.op, tile.TransOp)
        and _loaded(b.op.source)
    )


def transposable(v: SSAValue, carried: frozenset[SSAValue] = frozenset()) -> bool:
    """Whether a transpose of `v` can be moved up to sources that take it (a
    transpose, a splat, the loaded operands of a dot) through ops only it
    reads; `carried`: loop arguments whose transposes are being moved."""
    if v in carried or (
        isinstance(v, OpResult) and isinstance(v.op, tile.TransOp | tile.SplatOp)
    ):
        return True
    if not isinstance(v, OpResult) or not v.has_one_use():
        return False
    op = v.op
    if isinstance(op, arith.ConstantOp):
        return (
            isinstance(op.value, DenseIntOrFPElementsAttr)
            and splat_value(op.value) is not None
        )
    if isinstance(op, tile.DotOp):
        return _nt_operands(op) and transposable(op.acc, carried)
    if isinstance(op, tile.ExpandDimsOp):
        return True
    if isinstance(op, tile.BroadcastOp):
        return transposable(op.source, carried)
    if is_elementwise(op) and len(op.results) == 1:
        return all(
            transposable(x, carried)
            for x in op.operands
            if isinstance(x.type, TensorType)
        )
    if isinstance(op, scf.ForOp):
        i = v.index
        arg = op.body.block.args[i + 1]
        yielded = op.body.block.last_op
        assert isinstance(yielded, scf.YieldOp)
        return (
            arg.has_one_use()
            and transposable(op.iter_args[i], carried)
            and transposable(yielded.operands[i], carried | {arg})
        )
    return False


class TransposeOfTranspose(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.TransOp, rewriter: PatternRewriter, /):
        src = op.source
        if isinstance(src, OpResult) and isinstance(src.op, tile.TransOp):
            rewriter.replace(op, [], [src.op.source])


class DeadTranspose(RewritePattern):
    """A transpose nothing reads (a loop argument's, once moved into the body)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.TransOp, rewriter: PatternRewriter, /):
        if not op.result.uses:
            rewriter.erase(op)


class TransposeUp(RewritePattern):
    """One transpose of a computed tile moved one op up (`transposable`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.TransOp, rewriter: PatternRewriter, /):
        src = op.source
        if (
            not isinstance(src, OpResult)
            or isinstance(src.op, tile.TransOp | tile.LoadOp)
            or not transposable(src)
        ):
            return
        rewriter.replace(op, [], [_moved(src, rewriter, op)])


def _trans(v: SSAValue, rewriter: PatternRewriter, at: Operation) -> SSAValue:
    new = tile.TransOp(v)
    new.location = at.location
    rewriter.insert(new, InsertPoint.before(at))
    return new.result


def _moved(src: OpResult, rewriter: PatternRewriter, at: tile.TransOp) -> SSAValue:
    """The transpose of `src` (one of the ops `transposable` takes) computed
    from the transposes of its operands, inserted before `at`; a loop carrying
    it is rewritten to carry it transposed."""
    op, new_type = src.op, _transposed(src.type)  # type: ignore[arg-type]
    if isinstance(op, tile.SplatOp):
        made: Operation = tile.SplatOp(op.source, new_type)
    elif isinstance(op, arith.ConstantOp):
        value = splat_value(op.value)  # type: ignore[arg-type]
        made = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(new_type, [value]))
    elif isinstance(op, tile.DotOp):
        made = tile.DotOp(
            _trans(op.rhs, rewriter, at),
            _trans(op.lhs, rewriter, at),
            _trans(op.acc, rewriter, at),
        )
    elif isinstance(op, tile.ExpandDimsOp):
        made = tile.ExpandDimsOp(op.source, 1 - op.axis.value.data)
    elif isinstance(op, tile.BroadcastOp):
        made = tile.BroadcastOp(_trans(op.source, rewriter, at), new_type)
    elif isinstance(op, scf.ForOp):
        _carry_transposed(op, src.index, rewriter)
        return op.results[src.index]
    else:  # elementwise
        made = op.clone()
        for i, x in enumerate(op.operands):
            if isinstance(x.type, TensorType):
                made.operands[i] = _trans(x, rewriter, at)
        Rewriter.replace_value_with_new_type(made.results[0], new_type)
    made.location = op.location  # where the user wrote what it computes
    rewriter.insert(made, InsertPoint.before(at))
    at.operands[0] = made.results[0]  # `src` is now unused: erased with its op
    rewriter.erase(op)
    return made.results[0]


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
