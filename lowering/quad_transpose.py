"""A 4x4 transpose of 32-bit registers across the four lanes of a quad.

Why: in the wgmma accumulator layout (`fragments.py`) the quad of lanes
4g .. 4g+3 holds one row, lane t the column pair 8j + 2t, 8j + 2t + 1 of every
8-column group j. For a 16-bit tile a pair is one 32-bit register, so a warp's
store of one register writes 16 bytes in each of 8 rows: half a 32-byte sector
each, and the L1 splits the instruction into one request per row. After this
transpose, applied to groups 4q .. 4q+3, lane t holds all four pairs of group
4q + t: one 16-byte `st.global.v4`, and a warp writes 64 contiguous bytes (two
whole sectors) per row with a quarter of the store instructions.

Register k of lane s (x[s][k]) ends as register s of lane k (y[k][s]). Two
butterfly rounds, lane mask 2 then 1, each swapping the halves of a 2x2 block
of lanes x registers: lane s keeps the registers whose index bit equals its own
lane bit and trades the other for its partner's. A trade is one `selp` choosing
what to send, one `shfl.sync.bfly` and two `selp` putting the result in place,
so 4 shuffles and 12 selects per 4 registers; all 32 lanes must take part.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Operation, SSAValue

from tawa_xdsl.dialects import ptx


def quad_transpose_bundle(
    x: SSAValue,
    elements: Sequence[int],
    lane_bits: SSAValue,
    add: Callable[[Operation], Operation],
) -> SSAValue:
    """The transpose above for every group of a bundle at once, as ptx ops
    (`add` appends one): register k of group g is element `elements[4 g + k]`
    of the `b32` bundle `x`; `lane_bits` is the predicate bundle [bit 2 set,
    bit 2 clear, bit 1 set, bit 1 clear] of the lane index. Returns a bundle
    whose element 4 g + k is register k of group g after the transpose.

    Per round: one `selp` choosing what each lane sends, one shuffle, and one
    `selp` over all four registers of every group putting what came back in
    place: the register a lane keeps is `upper ? got : x` for the low index of
    a pair and `!upper ? got : x` for the high one (the printer's
    `upper ? x : got`), so each round's result is one bundle; per round two
    more `setp` once for the whole tile (the clear-bit predicates)."""
    groups, rest = divmod(len(elements), 4)
    if rest:
        raise ValueError(
            f"a quad transpose takes groups of 4 registers, got {len(elements)}"
        )
    value, elems = x, list(elements)
    for mask, upper in ((2, 0), (1, 2)):
        lows = [k for k in range(4) if not k & mask]
        send = add(
            ptx.AluOp(
                "selp.b32",
                [value, value, lane_bits],
                2 * groups,
                [
                    [elems[4 * g + k] for g in range(groups) for k in lows],
                    [elems[4 * g + (k | mask)] for g in range(groups) for k in lows],
                    [upper] * (2 * groups),
                ],
            )
        ).results[0]
        got = add(ptx.ShflOp(send, mask)).results[0]
        value = add(
            ptx.AluOp(
                "selp.b32",
                [got, value, lane_bits],
                4 * groups,
                [
                    [
                        2 * g + lows.index(k & ~mask)
                        for g in range(groups)
                        for k in range(4)
                    ],
                    [elems[4 * g + k] for g in range(groups) for k in range(4)],
                    [upper + bool(k & mask) for _ in range(groups) for k in range(4)],
                ],
            )
        ).results[0]
        elems = list(range(4 * groups))
    return value
