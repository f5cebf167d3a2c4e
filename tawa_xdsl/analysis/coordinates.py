"""Which tile coordinates are known never to be negative, or to be multiples.

A tile-level store drops what falls outside its tensor, on either side. A TMA
store cannot do that before the start: on the H100 a negative coordinate, even
one that leaves part of the box inside, faults the kernel ("illegal
instruction"), while negative load coordinates read zeros as documented. So
the lowering sends a store through TMA only when `non_negative` proves every
coordinate is at least 0; otherwise the store goes from registers, whose bounds
checks are unsigned and drop negative rows and columns too.

The proof is structural and conservative: constants, grid and cluster queries,
tensor extents, the induction variables of loops that start at a non-negative
bound, sums, products and unsigned max of such values, quotients of one,
remainders by one, unsigned minima with one; signed quotients of two and
signed remainders of one (a program id unfolded into tile coordinates); plus
one difference, a program id taken from the grid's end,
`num_programs(a) - 1 - program_id(a)` (what `reverse-grid` writes), which a
launched program id makes non-negative. (Signed maxima are left out: proving
`max(trips, 1)` would stage stream-K's f32 partial tiles through TMA, whose
tuning was measured storing them from registers, NOTES 3.72.)

A TMA copy also faults when its innermost coordinate is not 16 bytes into the
row (measured on the H100: bf16 columns 8, 16 and 24 store, column 2 faults; a
load of f32 scales at column 1 stops the kernel), so the lowering asks
`multiple_of` for that coordinate: a store goes through registers otherwise, a
load is refused. Multiples are constants, sums, differences, unsigned max/min,
selects and remainders of multiples, products and left shifts reaching one,
`x & mask` with a mask that is a multiple, induction variables whose start and
step are multiples, and loop-carried values that start as one and are yielded
as one (assuming the carried value is one while checking the yield).
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import BlockArgument, OpResult, SSAValue

from tawa_xdsl.dialects import tile

_ALL_OPERANDS = (arith.AddiOp, arith.MuliOp, arith.MaxUIOp, arith.IndexCastOp)
"""Non-negative when all their operands are (tile coordinates stay far below
2^31, so nothing overflows)."""

_SIGNED_QUOTIENTS = (arith.DivSIOp, arith.CeilDivSIOp, arith.FloorDivSIOp)
"""Non-negative when both operands are: what a user unfolding a program id
into tile coordinates writes (`pid / tiles_n`, `pid % tiles_n`, signed)."""

_SOURCES = (
    tile.ProgramIdOp,
    tile.NumProgramsOp,
    tile.DimOp,
    tile.ClusterIdOp,
    tile.ClusterRankOp,
)


def non_negative(value: SSAValue) -> bool:
    """Whether `value` (an index or integer) is provably at least 0."""
    if isinstance(value, BlockArgument):
        loop = value.owner.parent_op()
        return (
            isinstance(loop, scf.ForOp)
            and value.index == 0  # the induction variable
            and non_negative(loop.lb)
            and non_negative(loop.step)  # scf.for steps are positive
        )
    assert isinstance(value, OpResult)
    op = value.op
    if isinstance(op, _SOURCES):
        return True
    if isinstance(op, arith.ConstantOp):
        known = _constant(value)
        return known is not None and known >= 0
    if isinstance(op, _ALL_OPERANDS):
        return all(non_negative(v) for v in op.operands)
    if isinstance(op, arith.DivUIOp | arith.CeilDivUIOp):  # at most the dividend
        return non_negative(op.lhs)
    if isinstance(op, _SIGNED_QUOTIENTS):
        return non_negative(op.lhs) and non_negative(op.rhs)
    if isinstance(op, arith.RemSIOp):  # takes the dividend's sign
        return non_negative(op.lhs)
    if isinstance(op, arith.RemUIOp):  # below the divisor
        return non_negative(op.rhs)
    if isinstance(op, arith.MinUIOp):  # at most either operand
        return non_negative(op.lhs) or non_negative(op.rhs)
    if isinstance(op, arith.SubiOp):
        return _last_minus_own_id(op)
    return False


def _last_minus_own_id(op: arith.SubiOp) -> bool:
    """`(num_programs(a) - 1) - program_id(a)`: program ids run below the count."""
    last, own = op.lhs, op.rhs
    if not (
        isinstance(own, OpResult)
        and isinstance(own.op, tile.ProgramIdOp)
        and isinstance(last, OpResult)
        and isinstance(last.op, arith.SubiOp)
        and _constant(last.op.rhs) == 1
    ):
        return False
    count = last.op.lhs
    return (
        isinstance(count, OpResult)
        and isinstance(count.op, tile.NumProgramsOp)
        and count.op.axis.index == own.op.axis.index
    )


def _constant(value: SSAValue) -> int | None:
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def multiple_of(
    value: SSAValue, k: int, assumed: frozenset[SSAValue] = frozenset()
) -> bool:
    """Whether `value` (an index or integer) is provably a multiple of `k`
    (`assumed`: loop-carried values taken to be, while their yields are checked)."""
    if value in assumed:
        return True
    if isinstance(value, BlockArgument):
        loop = value.owner.parent_op()
        if not isinstance(loop, scf.ForOp):
            return False
        if value.index == 0:  # the induction variable
            return multiple_of(loop.lb, k, assumed) and multiple_of(
                loop.step, k, assumed
            )
        carried = value.index - 1
        yielded = loop.body.block.last_op.operands[carried]
        return multiple_of(loop.iter_args[carried], k, assumed) and multiple_of(
            yielded, k, assumed | {value}
        )
    assert isinstance(value, OpResult)
    op = value.op
    known = _constant(value)
    if known is not None:
        return known % k == 0
    if isinstance(op, arith.MuliOp):
        return multiple_of(op.lhs, k, assumed) or multiple_of(op.rhs, k, assumed)
    if isinstance(
        op,
        arith.AddiOp | arith.SubiOp | arith.MaxUIOp | arith.MinUIOp | arith.RemUIOp,
    ):
        return multiple_of(op.lhs, k, assumed) and multiple_of(op.rhs, k, assumed)
    if isinstance(op, arith.SelectOp):
        return multiple_of(op.lhs, k, assumed) and multiple_of(op.rhs, k, assumed)
    if isinstance(op, arith.ShLIOp):
        shift = _constant(op.rhs)
        return multiple_of(op.lhs, k, assumed) or (
            shift is not None and 0 <= shift < 63 and (1 << shift) % k == 0
        )
    if isinstance(op, arith.AndIOp):  # a mask that clears the low bits
        mask = _constant(op.rhs)
        return (mask is not None and mask % k == 0) or multiple_of(op.lhs, k, assumed)
    if isinstance(op, arith.IndexCastOp):
        return multiple_of(op.input, k, assumed)
    return False
