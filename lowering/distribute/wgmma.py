"""wgmma (pattern family 5).

A tile-level `nvgpu_async.wgmma` (M x K times K x N) is a chain of
`m64nNk16` instructions: for every 16-wide k step and every 64-row block of
the warpgroup's band, one `ptx.wgmma` on that block's half of the accumulator
bundle. Operands in shared memory are 64-bit descriptors (128-byte swizzle):
built once from the tile's address, then advanced per k step (32 bytes inside
a 64-column chunk, a whole chunk of rows past it) and per row block. A
transposed B view is K-major (trans-b 0); an untransposed one is MN-major
(trans-b 1, LBO = the bytes between 64-column chunks). A register A operand
(the RS form, P in attention) is four `b32` of the 16-bit fragment per
instruction. A zero accumulator is no registers: the chain's first k step
ignores it (scale-d false).
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import BFloat16Type, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
)

from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import ptx
from tawa_xdsl.lowering.distribute.context import (
    KernelState,
    Lowered,
    Ops,
    geometry,
    register_type,
)
from tawa_xdsl.lowering.distribute.kernel import DistributePattern

ROW_BYTES = nv.SWIZZLE_BYTES
K_MAJOR_DESC = (1 << 62) | (64 << 32) | (1 << 16)
"""128-byte swizzle, SBO 1024 bytes (8 rows), LBO unused: a K-major operand."""


def mn_major_desc(chunk_bytes: int) -> int:
    """128-byte swizzle, SBO 1024 bytes, LBO = bytes between 64-column chunks."""
    return (1 << 62) | (64 << 32) | ((chunk_bytes >> 4) << 16)


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
        kind = "bf16" if isinstance(rhs_type.element_type, BFloat16Type) else "f16"
        acc = self.k.lowered(op.acc, op)
        zero_init = acc.cls == "f32" and _positive_zero(acc.imm_value())
        chain: SSAValue | ptx.RegType = (
            acc_type if zero_init else ops.materialize(acc, acc_type)
        )
        per_block, rows_wg = n // 2, m // k_state.warpgroups
        b_addr = self.k.lowered(op.rhs, op).value
        if rhs_type.is_transposed:
            b_desc = descriptor(ops, b_addr, K_MAJOR_DESC)
            b_off = lambda s: (s // 4) * n * ROW_BYTES + (s % 4) * 32  # noqa: E731
            trans_b = 0
        else:
            b_desc = descriptor(ops, b_addr, mn_major_desc(k * ROW_BYTES))
            b_off = lambda s: s * 16 * ROW_BYTES  # noqa: E731
            trans_b = 1
        a_view = isinstance(op.lhs.type, nv.SmemViewType)
        a = self.k.lowered(op.lhs, op)
        if a_view:
            cwg = k_state.consumer_ids(op).cwg
            band = ops.alu(
                "mad.lo.u32", cwg, ops.imm(rows_wg * ROW_BYTES, "b32"), a.value
            )
            a_desc = descriptor(ops, band, K_MAJOR_DESC)
        shape = f"m64n{n}k16"
        for s in range(k // 16):
            b_d = advanced(ops, b_desc, b_off(s))
            for blk in range(geom.blocks):
                scale = k_state.false if zero_init and s == 0 else k_state.true
                start = blk * per_block
                if a_view:
                    a_d = advanced(
                        ops,
                        a_desc,
                        (s // 4) * m * ROW_BYTES + blk * 64 * ROW_BYTES + (s % 4) * 32,
                    )
                    mma = ptx.WgmmaOp(
                        chain, a_d, b_d, scale, shape, kind, start, trans_b
                    )
                else:
                    base = blk * (k // 4) + 4 * s
                    elements = [a.element(base + i) for i in range(4)]
                    mma = ptx.WgmmaOp(
                        chain,
                        a.value,
                        b_d,
                        scale,
                        shape,
                        kind,
                        start,
                        trans_b,
                        elements,
                    )
                chain = ops.add(mma).results[0]
        assert isinstance(chain, SSAValue)
        self.k.define(rewriter, op, ops, Lowered(chain))


def _positive_zero(x: int | float | None) -> bool:
    return x is not None and x == 0 and math.copysign(1.0, x) > 0


def _shape(t) -> tuple[int, int]:
    if isinstance(t, TensorType | nv.SmemViewType):
        m, k = t.get_shape()
        return m, k
    raise AssertionError(f"{t} is no wgmma operand")


def patterns(k: KernelState) -> list[DistributePattern]:
    return [WgmmaSync(k), Wgmma(k)]
