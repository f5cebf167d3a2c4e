"""wgmma (pattern family 5).

A tile-level `nvgpu_async.wgmma` (M x K times K x N) is a chain of
`m64nNk16` instructions (`m64nNk32` for 8-bit inputs: 32 bytes of K either
way): for every k step and every 64-row block of the warpgroup's band, one
`ptx.wgmma` on that block's half of the accumulator bundle. Operands in shared
memory are 64-bit descriptors: built once from the tile's address, then
advanced per k step (32 bytes inside a swizzle row, a whole chunk of rows past
it) and per row block. A chunk row is the widest swizzle span (128, 64 or 32
bytes) that divides the stored tile's rows (`SmemType.swizzle_bytes`; the
descriptor's swizzle mode and 8-row stride follow). A transposed B view is
K-major (trans-b 0); an untransposed one is MN-major (trans-b 1, LBO = the
bytes between column chunks; 16-bit only: 8-bit operands are K-major). A
register A operand (the RS form, P in attention) is four `b32` per
instruction: for 16-bit inputs the fragment's own pairs; for 8-bit ones
`ByteMover` moves the bytes between the lanes of each quad. A zero accumulator is
no registers: the chain's first k step ignores it (scale-d false).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
)

from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import ptx
from tawa_xdsl.dialects.tile import element_bytes, is_fp8
from tawa_xdsl.lowering.distribute.context import (
    ConsumerIds,
    KernelState,
    Lowered,
    Ops,
    bundle,
    geometry,
    register_type,
)
from tawa_xdsl.lowering.distribute.kernel import DistributePattern
from tawa_xdsl.target import SWIZZLE_BYTES, WGMMA_K_BYTES, swizzle_span

SWIZZLE_MODES = {128: 1, 64: 2, 32: 3}
"""The descriptor's swizzle mode (bits 62-63) for each row width in bytes."""
PTX_TYPES = {"bf16": "bf16", "f16": "f16", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}


def k_major_desc(span: int) -> int:
    """Swizzled at `span` bytes, SBO 8 rows of it, LBO unused: a K-major operand."""
    return (SWIZZLE_MODES[span] << 62) | ((8 * span >> 4) << 32) | (1 << 16)


def mn_major_desc(span: int, chunk_bytes: int) -> int:
    """Swizzled at `span` bytes, SBO 8 K rows of it, LBO = bytes between column
    chunks (the canonical MN-major layouts of the PTX ISA: `span / 2` contiguous
    16-bit elements of N per K row, a chunk's K rows `span` bytes apart)."""
    return (
        (SWIZZLE_MODES[span] << 62)
        | ((8 * span >> 4) << 32)
        | ((chunk_bytes >> 4) << 16)
    )


def row_span(view: nv.SmemViewType) -> int:
    """Bytes of one swizzled chunk row of the stored tile a view reads: the
    widest swizzle span dividing the tile's rows (`target.swizzle_span`)."""
    shape = view.get_shape()
    stored_row = shape[0] if view.is_transposed else shape[-1]
    return swizzle_span(stored_row * element_bytes(view.element_type)) or SWIZZLE_BYTES


def descriptor(ops: Ops, addr: SSAValue, const: int) -> SSAValue:
    """The descriptor of the tile at shared address `addr`."""
    start = ops.alu("bfe.u32", addr, ops.imm(4, "b32"), ops.imm(14, "b32"))
    wide = ops.alu("cvt.u64.u32", start)
    return ops.alu("or.b64", wide, ops.imm(const, "b64"))


def advanced(ops: Ops, desc: SSAValue, offset_bytes: int) -> SSAValue:
    """`desc` moved `offset_bytes` further (in 16-byte units)."""
    if not offset_bytes:
        return desc
    return ops.alu("add.s64", desc, ops.imm(offset_bytes >> 4, "b64"))


class WgmmaSync(DistributePattern):
    OPS = (nv.WgmmaFenceOp, nv.WgmmaCommitGroupOp, nv.WgmmaWaitGroupOp)

    def rewrite(self, op: Operation, rewriter: PatternRewriter):
        new: Operation
        if isinstance(op, nv.WgmmaFenceOp):
            new = ptx.WgmmaFenceOp()
        elif isinstance(op, nv.WgmmaCommitGroupOp):
            new = ptx.WgmmaCommitOp()
        else:
            assert isinstance(op, nv.WgmmaWaitGroupOp)
            new = ptx.WgmmaWaitOp(op.pending.value.data)
        rewriter.replace(op, new, [])


class Wgmma(DistributePattern):
    OPS = (nv.WgmmaOp,)

    def rewrite(self, op: nv.WgmmaOp, rewriter: PatternRewriter):
        k_state, ops = self.k, Ops(self.k)
        rhs_type = op.rhs.type
        assert isinstance(rhs_type, nv.SmemViewType)
        (m, k), n = _shape(op.lhs.type), rhs_type.get_shape()[1]
        geom = geometry(op.acc.type)
        acc_type = register_type(op.acc.type)
        assert acc_type is not None
        a_elem = op.lhs.type.element_type
        a_kind, b_kind = (PTX_TYPES[t.name] for t in (a_elem, rhs_type.element_type))
        kind = f"{a_kind}.{b_kind}" if is_fp8(a_elem) else a_kind
        k_step = WGMMA_K_BYTES // element_bytes(a_elem)
        acc = self.k.lowered(op.acc, op)
        zero_init = acc.cls == "f32" and _positive_zero(acc.imm_value())
        chain: SSAValue | ptx.RegType = (
            acc_type if zero_init else ops.materialize(acc, acc_type)
        )
        per_block, rows_wg = n // 2, m // k_state.warpgroups
        b_addr = self.k.lowered(op.rhs, op).value
        b_layout = SmemOperand.of(rhs_type, n, k, k_major=rhs_type.is_transposed)
        b_desc = descriptor(ops, b_addr, b_layout.desc)
        trans_b = int(not rhs_type.is_transposed)
        steps = k // k_step
        a = self.k.lowered(op.lhs, op)
        a_view = op.lhs.type
        if isinstance(a_view, nv.SmemViewType):
            # a transposed view: A stored K x M, read MN-major (imm-trans-a)
            a_layout = SmemOperand.of(a_view, m, k, k_major=not a_view.is_transposed)
            cwg = k_state.consumer_ids(op).cwg
            band_bytes = ops.imm(a_layout.along_mn(rows_wg), "b32")
            band = ops.alu("mad.lo.u32", cwg, band_bytes, a.value)
            a_desc = descriptor(ops, band, a_layout.desc)
        elif is_fp8(a_elem):
            pairs = geometry(op.lhs.type).count // 2
            mover = ByteMover.of(ops, k_state.consumer_ids(op), a, pairs)
        shape = f"m64n{n}k{k_step}"
        for s in range(steps):
            b_d = advanced(ops, b_desc, b_layout.k_step(s))
            for blk in range(geom.blocks):
                scale = k_state.false if zero_init and s == 0 else k_state.true
                start = blk * per_block
                elements: list[int] = []
                if isinstance(a_view, nv.SmemViewType):
                    offset = a_layout.k_step(s) + a_layout.along_mn(blk * 64)
                    a_operand = advanced(ops, a_desc, offset)
                elif is_fp8(a_elem):  # four registers: the moved bytes
                    a_operand = mover.registers(ops, blk * (k // 8) + 4 * s)
                    elements = [0, 1, 2, 3]
                    ops.add(ptx.WgmmaFenceOp())  # orders the new A registers
                else:  # four registers: the 16-bit pairs
                    a_operand = a.value
                    elements = [a.element(blk * (k // 4) + 4 * s + i) for i in range(4)]
                mma = ptx.WgmmaOp(
                    chain,
                    a_operand,
                    b_d,
                    scale,
                    shape,
                    kind,
                    start,
                    trans_b,
                    elements,
                    transpose_a=int(
                        isinstance(a_view, nv.SmemViewType) and a_view.is_transposed
                    ),
                )
                chain = ops.add(mma).results[0]
        assert isinstance(chain, SSAValue)
        self.k.define(rewriter, op, ops, Lowered(chain))


@dataclass(frozen=True)
class SmemOperand:
    """How wgmma walks a shared-memory operand of `mn` rows (A's M, B's N) and
    `k` K: K-major (rows of K, chunks of `mn` rows) or MN-major (rows of MN,
    chunks of `k` rows), in chunks `span` bytes wide."""

    span: int
    mn: int
    k: int
    k_major: bool

    @staticmethod
    def of(view: nv.SmemViewType, mn: int, k: int, k_major: bool) -> SmemOperand:
        return SmemOperand(row_span(view), mn, k, k_major)

    @property
    def desc(self) -> int:
        """The descriptor's constant bits."""
        if self.k_major:
            return k_major_desc(self.span)
        return mn_major_desc(self.span, self.k * self.span)

    def k_step(self, step: int) -> int:
        """Bytes to k16 (8-bit: k32) step `step`: along a K-major row, then
        the next chunk; 16 K rows further MN-major."""
        if self.k_major:
            return _k_offset(step, self.mn, self.span)
        return step * 16 * self.span

    def along_mn(self, rows: int) -> int:
        """Bytes to the operand `rows` rows further along M or N (whole 64-row
        blocks and warpgroup bands): that many rows of a K-major chunk, whole
        chunks MN-major (`rows` a multiple of a chunk's `span / 2` columns)."""
        if self.k_major:
            return rows * self.span
        chunk = self.span // 2
        assert rows % chunk == 0, (rows, chunk)
        return rows // chunk * self.k * self.span


def _k_offset(step: int, rows: int, span: int) -> int:
    """Bytes from a K-major tile of `rows` rows to k step `step`: 32 bytes
    along a swizzled row, then the next chunk of `rows` rows."""
    per_row = span // WGMMA_K_BYTES
    return (step // per_row) * rows * span + (step % per_row) * WGMMA_K_BYTES


@dataclass(frozen=True)
class ByteMover:
    """Moves the bytes of an 8-bit register operand (P = e4m3(S)) into the A
    layout, one k32 instruction's four registers at a time (made right before
    that wgmma, after a `wgmma.fence` for them, so only the packed words of P
    live across the chain).

    P is in the accumulator layout, one `b16` per element pair: lane t of a
    quad holds columns 8 j + 2 t, +1 of rows g and g + 8. The A operand wants
    columns 4 t .. 4 t + 3 (first half of the step) and 16 + 4 t .. (second) of
    the same rows: its bytes come from lanes 2 (t % 2) and 2 (t % 2) + 1, group
    j = t / 2 (or 2 + t / 2). Words pair the two rows of a group; two shuffles
    per half reach those lanes (A from lanes 0 2 1 3 of the quad, B from 1 3 0
    2), each lane sending the word its reader needs (odd lanes the other group
    of the pair, by `selp`), and `prmt` keeps the right halves in column order.
    """

    words: Lowered
    even: SSAValue
    lane_a: SSAValue
    lane_b: SSAValue
    selector: SSAValue

    @staticmethod
    def of(ops: Ops, ids: ConsumerIds, p: Lowered, pairs: int) -> ByteMover:
        words = ops.add(ptx.PackOp(ops.materialize(p, bundle("b16", pairs))))
        odd_t = ops.alu("and.b32", ids.t, ops.imm(1, "b32"))
        even = ops.alu("setp.eq.u32", odd_t, ops.imm(0, "b32"))
        low = ops.alu("setp.lt.u32", ids.t, ops.imm(2, "b32"))
        quad = ops.alu("shl.b32", ids.g, ops.imm(2, "b32"))
        twice = ops.alu("shl.b32", ids.t, ops.imm(1, "b32"))
        twice = ops.alu("and.b32", twice, ops.imm(3, "b32"))
        half = ops.alu("shr.u32", ids.t, ops.imm(1, "b32"))
        pair_lane = ops.alu("add.u32", quad, twice)
        lane_a = ops.alu("add.u32", pair_lane, half)
        lane_b = ops.alu("sub.u32", pair_lane, half)
        lane_b = ops.alu("add.u32", lane_b, ops.imm(1, "b32"))
        # lanes 0, 1 read the even lane's word through A, lanes 2, 3 through B
        selector = ops.alu(
            "selp.b32",
            ops.imm([0x5410, 0x7632], "b32"),
            ops.imm([0x1054, 0x3276], "b32"),
            low,
        )
        return ByteMover(Lowered(words.results[0]), even, lane_a, lane_b, selector)

    def registers(self, ops: Ops, first_word: int) -> SSAValue:
        """The four A registers of the step whose groups are words
        `first_word` .. + 3: rows g, g + 8 of its first half, then its second."""
        firsts = [first_word, first_word + 2]
        seconds = [first_word + 1, first_word + 3]
        w = self.words
        send_a = ops.alu("selp.b32", w.select(firsts), w.select(seconds), self.even)
        send_b = ops.alu("selp.b32", w.select(seconds), w.select(firsts), self.even)
        got_a = ops.add(ptx.ShflIdxOp(send_a, self.lane_a)).results[0]
        got_b = ops.add(ptx.ShflIdxOp(send_b, self.lane_b)).results[0]
        return ops.alu(
            "prmt.b32",
            Lowered(got_a, (0, 0, 1, 1)),
            Lowered(got_b, (0, 0, 1, 1)),
            Lowered(self.selector, (0, 1, 0, 1)),
        )


def _positive_zero(x: int | float | None) -> bool:
    return x is not None and x == 0 and math.copysign(1.0, x) > 0


def _shape(t) -> tuple[int, int]:
    if isinstance(t, TensorType | nv.SmemViewType):
        m, k = t.get_shape()
        return m, k
    raise AssertionError(f"{t} is no wgmma operand")


def patterns(k: KernelState) -> list[DistributePattern]:
    return [WgmmaSync(k), Wgmma(k)]
