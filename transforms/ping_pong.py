"""ping-pong: consumer warpgroups take turns issuing their MMAs (FA3's schedule).

Without it, the consumer warpgroups of a cooperative kernel run in step: all of
them issue their wgmmas, then all of them do the softmax, and the tensor cores
idle during the softmax. With turns, warpgroup w issues the MMAs of a loop
iteration only after warpgroup w - 1 (mod N) has issued its own, so the
warpgroups settle half an iteration apart and one's softmax runs under the
other's MMAs.

Runs on lowered IR (after `convert-aref-to-nvgpu-async`), where the MMAs are
`nvgpu_async.wgmma` ops. In the consumer region of every `role_dispatch` with two
or more consumer warpgroups it inserts `mma_turn_init` at the top and, in each
loop whose body issues wgmmas, `mma_turn_begin` before the body's first
`wgmma_fence` (or wgmma) and `mma_turn_end` after its last `wgmma_commit_group`.

Contract: every consumer warpgroup runs the same trip counts (consumer control
flow never depends on the warpgroup index), so each begin pairs with the previous
warpgroup's end. The barrier simulator checks the protocol with one actor per
warpgroup: a missing init hangs, a warpgroup arriving twice in one phase is a
hazard.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.kernel import kernels

_TURN_OPS = (nv.MmaTurnInitOp, nv.MmaTurnBeginOp, nv.MmaTurnEndOp)


def _turn(block: Block) -> tuple[Operation, Operation] | None:
    """The first op of `block`'s MMA issue and its last commit; None without wgmmas."""
    ops = list(block.ops)
    mmas = [i for i, o in enumerate(ops) if isinstance(o, nv.WgmmaOp)]
    if not mmas:
        return None
    first = mmas[0]
    if first and isinstance(ops[first - 1], nv.WgmmaFenceOp):
        first -= 1
    commits = [
        i
        for i, o in enumerate(ops)
        if isinstance(o, nv.WgmmaCommitGroupOp) and i > mmas[-1]
    ]
    if not commits:
        raise OpDiagnostic(
            ops[mmas[-1]], "ping-pong: the loop's last wgmma is never committed"
        )
    return ops[first], ops[commits[0]]


@dataclass(frozen=True)
class PingPongPass(ModulePass):
    """Make the consumer warpgroups take turns issuing each loop iteration's MMAs."""

    name = "ping-pong"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            # (a lowered kernel, `analysis.levels` checks: it has one dispatch)
            for dispatch in [
                o for o in kernel.walk() if isinstance(o, nv.RoleDispatchOp)
            ]:
                self._schedule(dispatch, f"ping-pong: kernel @{kernel.sym_name.data}")

    def _schedule(self, dispatch: nv.RoleDispatchOp, where: str) -> None:
        n = dispatch.num_consumers.value.data
        if n < 2:
            raise OpDiagnostic(
                dispatch,
                f"{where} has {n} consumer warpgroup, which cannot take turns; run "
                "cooperative{num-consumers=2} (or 3) before "
                "convert-aref-to-nvgpu-async (tawa-hopper-pipeline: give "
                "num-consumers=2 with ping-pong=true)",
            )
        consumer = dispatch.consumer.block
        if any(isinstance(o, _TURN_OPS) for o in consumer.walk()):
            raise OpDiagnostic(dispatch, f"{where}: the consumers already take turns")
        loops = [
            (loop, turn)
            for loop in consumer.walk()
            if isinstance(loop, scf.ForOp)
            and (turn := _turn(loop.body.block)) is not None
        ]
        if not loops:
            raise OpDiagnostic(
                dispatch,
                f"{where}: no consumer loop issues wgmmas; nothing to schedule",
            )
        first = consumer.first_op
        assert first is not None
        at = first.next_op if isinstance(first, nv.SetMaxNRegOp) else first
        assert at is not None
        Rewriter.insert_op(nv.MmaTurnInitOp(), InsertPoint.before(at))
        for _, (begin, end) in loops:
            Rewriter.insert_op(nv.MmaTurnBeginOp(), InsertPoint.before(begin))
            Rewriter.insert_op(nv.MmaTurnEndOp(), InsertPoint.after(end))
