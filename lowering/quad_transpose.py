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


def quad_transpose(
    x: Sequence[str],
    lane_bit: Callable[[int], str],
    new: Callable[[], str],
    emit: Callable[[str], None],
) -> list[str]:
    """Emit the transpose of the four `.b32` registers `x` and return the
    registers holding the result. `lane_bit(m)` is a predicate, true in lanes
    whose lane index has bit `m` (2 or 1) set; `new()` names a fresh `.b32`
    register. The input registers are left unchanged."""
    if len(x) != 4:
        raise ValueError(f"a quad transpose takes 4 registers, got {len(x)}")
    regs = list(x)
    for mask in (2, 1):
        upper = lane_bit(mask)
        out = list(regs)
        for k0 in range(4):
            if k0 & mask:
                continue
            k1 = k0 | mask
            send, got, low, high = new(), new(), new(), new()
            # lanes with the bit set keep register k1 and send k0, the others
            # keep k0 and send k1; what comes back fills the register traded
            emit(f"selp.b32 {send}, {regs[k0]}, {regs[k1]}, {upper};")
            emit(f"shfl.sync.bfly.b32 {got}, {send}, {mask}, 31, -1;")
            emit(f"selp.b32 {low}, {got}, {regs[k0]}, {upper};")
            emit(f"selp.b32 {high}, {regs[k1]}, {got}, {upper};")
            out[k0], out[k1] = low, high
        regs = out
    return regs
