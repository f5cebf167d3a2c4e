"""Which transposes of computed tiles can move up to the loaded tiles, and why
not where they cannot.

A transpose is free only on a tile in shared memory; of a computed tile it
moves up (`transforms/transposes.py`) through elementwise ops, splats,
broadcasts, `expand_dims`, a loop carrying the tile and a dot of a loaded A
and a loaded B (transposed, or 16-bit K x N), and only through values read transposed alone
(each read a transpose, or an elementwise op or a broadcast whose result is
read transposed alone in turn: `acc + relu(acc)` stored transposed), so
nothing is computed twice. `blocker` names the first
value that stops it: the lowering's refusal of the transpose says it.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Operation, OpResult, SSAValue

from tawa_xdsl.analysis.elementwise import is_elementwise
from tawa_xdsl.dialects import tile
from tawa_xdsl.dialects.tile import splat_value


def _loaded(v: SSAValue) -> bool:
    return isinstance(v, OpResult) and isinstance(v.op, tile.LoadOp)


def _swappable_operands(dot: tile.DotOp) -> bool:
    """Whether `dot` reads A as loaded (M x K) and B loaded, as an N x K
    tile transposed or, of 16-bit elements, as a K x N tile: then `trans(b)`,
    `trans(a)` read as the lowering takes them (the loaded N x K tile as A,
    or for a K x N one the transposed view wgmma reads 16-bit A from; the
    loaded M x K tile transposed as B, K-major). An 8-bit K x N B would be
    an MN-major A, which wgmma does not read; a computed operand is not in
    shared memory."""
    b = dot.rhs
    if not _loaded(dot.lhs):
        return False
    if isinstance(b, OpResult) and isinstance(b.op, tile.TransOp):
        return _loaded(b.op.source)
    return _loaded(b) and not tile.is_fp8(b.type.element_type)  # type: ignore[union-attr]


def _untransposed_reader(v: SSAValue) -> tuple[SSAValue, Operation] | None:
    """The first read of `v` (or, through elementwise ops and broadcasts, of
    a value made from it) other than by a transpose, as (value read, reader);
    None when every read of `v` is transposed in the end."""
    for use in v.uses:
        user = use.operation
        if isinstance(user, tile.TransOp):
            continue
        moves = isinstance(user, tile.BroadcastOp) or (
            is_elementwise(user) and len(user.results) == 1
        )
        if not moves:
            return v, user
        if (deeper := _untransposed_reader(user.results[0])) is not None:
            return deeper
    return None


def _name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else f"a {v.type} value"


def blocker(v: SSAValue, carried: frozenset[SSAValue] = frozenset()) -> str | None:
    """Why a transpose of `v` cannot be moved up to sources that take it (a
    transpose, a splat, the loaded operands of a dot) through ops whose
    results are read only by it or only transposed, or None when it can;
    `carried`: loop arguments whose transposes are being moved."""
    if v in carried or (
        isinstance(v, OpResult) and isinstance(v.op, tile.TransOp | tile.SplatOp)
    ):
        return None
    name = _name(v)
    if not isinstance(v, OpResult):
        return f"{name} is a block argument"
    op = v.op
    if isinstance(op, arith.ConstantOp):  # a splat is copied, whoever else reads it
        value = op.value
        if (
            isinstance(value, DenseIntOrFPElementsAttr)
            and splat_value(value) is not None
        ):
            return None
        return f"{name} is a constant of more than one value"
    if not v.has_one_use() and (read := _untransposed_reader(v)) is not None:
        value, reader = read
        made = "" if value is v else f" as {_name(value)}, made from it,"
        return f"{name} is also read untransposed{made} by {reader.name}"
    if isinstance(op, tile.DotOp):
        if not _swappable_operands(op):
            return (
                f"{name} is a tile.dot of other operands than A as loaded and B "
                "loaded (N x K and transposed, or 16-bit K x N), which swapped "
                "would not read as wgmma takes them"
            )
        return blocker(op.acc, carried)
    if isinstance(op, tile.ExpandDimsOp):
        return None
    if isinstance(op, tile.BroadcastOp):
        return blocker(op.source, carried)
    if is_elementwise(op) and len(op.results) == 1:
        for x in op.operands:
            if isinstance(x.type, TensorType) and (why := blocker(x, carried)):
                return why
        return None
    if isinstance(op, scf.ForOp):
        i = v.index
        arg = op.body.block.args[i + 1]
        yielded = op.body.block.last_op
        assert isinstance(yielded, scf.YieldOp)
        if not arg.has_one_use():
            return f"the loop carrying {name} reads it more than once"
        return blocker(op.iter_args[i], carried) or blocker(
            yielded.operands[i], carried | {arg}
        )
    if isinstance(op, scf.IfOp):
        # no rewrite moves a transpose through a branch, but the reason may lie
        # in one: `pipeline{two-stage}` peels a loop's first iteration into an
        # scf.if the user never wrote, which must not hide the op at fault
        for region in op.regions:
            yielded = region.block.last_op
            assert isinstance(yielded, scf.YieldOp)
            if why := blocker(yielded.operands[v.index], carried):
                return why
    if isinstance(op, tile.LoadOp):
        return (
            f"{name} is a loaded tile computed on: moved, the transpose would "
            "read a transposed shared tile into registers"
        )
    return f"{name} is made by {op.name}, which a transpose does not move through"


def transposable(v: SSAValue, carried: frozenset[SSAValue] = frozenset()) -> bool:
    """Whether a transpose of `v` can be moved up (`blocker` is None)."""
    return blocker(v, carried) is None
