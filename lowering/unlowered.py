"""What the thread level cannot lower yet, and its refusal.

Issue 17 took FP8 kernels down to nvgpu_async IR (both simulators run them);
their thread-level lowering is still to come. Rather than print wrong PTX (an
8-bit wgmma printed as k16 f16, say), `distribute-fragments` refuses such a
kernel with a located diagnostic. What is missing, for whoever lowers it:
- 8-bit floats: wgmma `m64nNk32` `.e4m3`/`.e5m2` (k32 steps of 32 bytes), the
  8-bit A-operand register layout for P (byte permutes and shuffles out of the
  accumulator layout), `cvt.rn.satfinite.e4m3x2.f32` / `.e5m2x2` packing pairs
  into 16 bits, 1-byte register tiles in shared and global stores, `UINT8`
  tensor maps (the runtime has them);
- `smem_extract`: one broadcast `ld.shared` of a scalar;
- rings swizzled at 32 or 64 bytes (rows narrower than 128 bytes: fp8 head dim
  64): their TMA maps and wgmma descriptors (layout type, stride byte offset).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects.tile import is_fp8


def not_lowered_yet(op: Operation) -> str | None:
    """What of `op` the thread level cannot lower yet (see the module
    docstring), or None."""
    if any(
        is_fp8(getattr(v.type, "element_type", None))
        for v in (*op.operands, *op.results)
    ):
        return "8-bit floats"
    if isinstance(op, nv.SmemExtractOp):
        return "reading one element of a shared-memory tile"
    if isinstance(op, nv.SmemAllocOp) and op.result.type.swizzle_bytes not in (
        0,
        nv.SWIZZLE_BYTES,
    ):
        return f"{op.result.type.swizzle_bytes}-byte swizzled tiles"
    return None


def refuse_unlowered(kernel: func.FuncOp, stage: str) -> None:
    """A located diagnostic from `stage` for a kernel of nvgpu_async IR it
    cannot lower yet, at the first such op that has a source line (an 8-bit
    wgmma first), else at the kernel."""
    culprits = [(op, why) for op in kernel.walk() if (why := not_lowered_yet(op))]
    if not culprits:
        return
    culprits.sort(key=lambda c: not isinstance(c[0], nv.WgmmaOp))
    where, why = next(
        (c for c in culprits if isinstance(c[0].location, FileLineColLoc)),
        (kernel, culprits[0][1]),
    )
    raise OpDiagnostic(
        where,
        f"@{kernel.sym_name.data}: {stage} has no lowering for {why} yet; the "
        "kernel runs in the barrier simulator (tawa_xdsl.simulate) on its "
        "nvgpu_async IR",
    )
