"""TMA and barriers (pattern family 4).

Shared-memory rings and barrier arrays are addresses: the aligned base plus
their offset; slot `i` of a ring is `base + i * slot_bytes`, barrier `i` of an
array `base + 8 i`. The leader thread initialises the barriers; a warpgroup
arrives through its thread 0 (in a cluster: thread r of the warpgroup arrives
in block r, through `mapa`); the first consumer thread issues TMA stores and
their bulk groups. A tile moved by TMA is a row of boxes, one per 128-byte
swizzle chunk; a multicast load in a cluster copies this block's share of the
boxes into every block. Ping-pong turns are named barriers 2 + w. After
their `thread_load`s every producer thread arrives on `full` itself
(`thread_loads_arrive`), when its `cp.async` copies land; after their
`transpose_copy`s they meet at `PRODUCER_BARRIER` and one arrives.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
)

from tawa_xdsl.compiler import MAX_CONSUMERS
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import ptx
from tawa_xdsl.dialects.tile import element_bytes
from tawa_xdsl.lowering.distribute.context import (
    KernelState,
    Lowered,
    Ops,
    int_value,
    uniform_branch,
)
from tawa_xdsl.lowering.distribute.kernel import DistributePattern
from tawa_xdsl.target import MBARRIER_BYTES, THREADS_PER_WARPGROUP

CONSUMER_BARRIER = 1
"""Named barrier of all consumer warpgroups (0 is the CTA's)."""
TURN_BARRIER0 = 2
"""Consumer warpgroup w's MMA turn barrier is TURN_BARRIER0 + w."""
PRODUCER_BARRIER = TURN_BARRIER0 + MAX_CONSUMERS
"""Named barrier of the producer warpgroup's threads (after their
`transpose_copy` stores), past every consumer warpgroup's turn barrier."""


def element_address(ops: Ops, base: SSAValue, index: Lowered, stride: int) -> SSAValue:
    """base + index * stride (bytes), for a register or a literal index."""
    i = index.imm_value()
    if i is not None:
        return ops.alu("add.u32", base, ops.imm(int(i) * stride, "b32"))
    return ops.alu("mad.lo.u32", index, ops.imm(stride, "b32"), base)


def slot_address(ops: Ops, ring: SSAValue, slot: SSAValue, user: Operation) -> SSAValue:
    t = ring.type
    assert isinstance(t, nv.SmemType)
    return element_address(
        ops, ops.k.lowered(ring, user).value, ops.k.lowered(slot, user), t.slot_bytes
    )


def barrier_address(
    ops: Ops, barriers: SSAValue, index: SSAValue, user: Operation
) -> SSAValue:
    return element_address(
        ops,
        ops.k.lowered(barriers, user).value,
        ops.k.lowered(index, user),
        MBARRIER_BYTES,
    )


def coordinates(
    ops: Ops, coords: Sequence[SSAValue], user: Operation
) -> list[SSAValue]:
    """TMA coordinates in registers, innermost first."""
    return [ops.reg(ops.k.lowered(c, user)) for c in coords][::-1]


def chunk(ring: nv.SmemType, tensor_map: nv.TensorMapType) -> tuple[int, int]:
    """(columns, bytes) of one box: a swizzle chunk of the tile."""
    box = tensor_map.get_box()
    size = element_bytes(ring.element_type)
    for d in box:
        size *= d
    return box[-1], size


def boxes(
    ops: Ops,
    ring: nv.SmemType,
    tensor_map: nv.TensorMapType,
    coords: list[SSAValue],
    count: int | None = None,
) -> list[tuple[list[SSAValue], int]]:
    """The first `count` boxes (all by default) of a tile at `coords`: each
    box's coordinates (innermost first) and byte offset from the first."""
    chunk_cols, chunk_bytes = chunk(ring, tensor_map)
    if count is None:
        count = ring.get_tile()[-1] // chunk_cols
    out = []
    for c in range(count):
        inner = coords[0]
        if c:
            inner = ops.alu("add.s32", coords[0], ops.imm(c * chunk_cols, "b32"))
        out.append(([inner, *coords[1:]], c * chunk_bytes))
    return out


class Alloc(DistributePattern):
    """`smem_alloc` / `mbarrier_alloc`: base + offset."""

    OPS = (nv.SmemAllocOp, nv.MBarrierAllocOp)

    def rewrite(self, op: Operation, rewriter: PatternRewriter):
        ops = Ops(self.k)
        addr = ops.alu("add.u32", self.k.smem, ops.imm(int_value(op.offset), "b32"))
        self.k.define(rewriter, op, ops, Lowered(addr))


class MBarrierInit(DistributePattern):
    OPS = (nv.MBarrierInitOp,)

    def rewrite(self, op: nv.MBarrierInitOp, rewriter: PatternRewriter):
        base = self.k.lowered(op.barriers, op).value
        count = int_value(op.count)
        assert isinstance(op.barriers.type, nv.MBarrierType)
        rewriter.replace(
            op,
            [
                ptx.MBarrierInitOp(base, count, MBARRIER_BYTES * i, pred=self.k.leader)
                for i in range(op.barriers.type.count.data)
            ],
            [],
        )


class Fences(DistributePattern):
    """Fences and block-wide barriers."""

    OPS = (
        nv.FenceMBarrierInitOp,
        nv.FenceProxyAsyncOp,
        nv.CTABarrierOp,
        nv.ConsumerBarrierOp,
        nv.ProducerBarrierOp,
        nv.ClusterBarrierOp,
    )

    def rewrite(self, op: Operation, rewriter: PatternRewriter):
        k = self.k
        new: Operation
        if isinstance(op, nv.FenceMBarrierInitOp):
            new = ptx.FenceOp("mbarrier_init.release.cluster", pred=k.leader)
        elif isinstance(op, nv.FenceProxyAsyncOp):
            new = ptx.FenceOp("proxy.async.shared::cta")
        elif isinstance(op, nv.CTABarrierOp):
            new = ptx.BarOp(k.imm(0, "b32"))
        elif isinstance(op, nv.ConsumerBarrierOp):
            threads = THREADS_PER_WARPGROUP * k.warpgroups
            new = ptx.BarOp(k.imm(CONSUMER_BARRIER, "b32"), threads)
        elif isinstance(op, nv.ProducerBarrierOp):
            new = ptx.BarOp(k.imm(PRODUCER_BARRIER, "b32"), THREADS_PER_WARPGROUP)
        else:
            new = ptx.ClusterBarrierOp()
        rewriter.replace(op, new, [])


class MBarrierWait(DistributePattern):
    OPS = (nv.MBarrierWaitOp,)

    def rewrite(self, op: nv.MBarrierWaitOp, rewriter: PatternRewriter):
        ops = Ops(self.k)
        addr = barrier_address(ops, op.barriers, op.index, op)
        parity = ops.reg(self.k.lowered(op.parity, op))
        ops.add(ptx.MBarrierWaitOp(addr, parity))
        rewriter.replace(op, ops, [])


class MBarrierArrive(DistributePattern):
    OPS = (nv.MBarrierArriveOp,)

    def rewrite(self, op: nv.MBarrierArriveOp, rewriter: PatternRewriter):
        k, ops = self.k, Ops(self.k)
        addr = barrier_address(ops, op.barriers, op.index, op)
        per_thread = op.scope.data == nv.ArriveScope.THREAD
        if op.cluster_size == 1:
            guard = k.one_thread(op) if per_thread else k.consumer_ids(op).wg_leader
            ops.add(ptx.MBarrierArriveOp(addr, pred=guard))
            rewriter.replace(op, ops, [])
            return
        # the same barrier in every block: thread r of the warpgroup arrives in
        # block r, all at once (release at CTA scope, as the slot's readers are
        # this block's own wgmmas, already retired)
        lane = k.consumer_ids(op).wg_lane
        signals = ops.alu("setp.lt.u32", lane, ops.imm(op.cluster_size, "b32"))
        remote = ops.alu("mapa.shared::cluster.u32", addr, lane, pred=signals)
        ops.add(ptx.MBarrierArriveOp(remote, remote=True, pred=signals))
        rewriter.replace(op, ops, [])


class ThreadLoadsArrive(DistributePattern):
    """Every producer thread's arrival after its `thread_load`s: the noinc
    `cp.async.mbarrier.arrive` where all of them were copies in flight (the
    arrival is made when they land), else a counted one (it only holds the
    phase open until they land) and a release arrive that publishes the
    thread's own stores; a uniform branch, as the loads' widths are."""

    OPS = (nv.ThreadLoadsArriveOp,)

    def rewrite(self, op: nv.ThreadLoadsArriveOp, rewriter: PatternRewriter):
        k, ops = self.k, Ops(self.k)
        addr = barrier_address(ops, op.barriers, op.index, op)
        flags = [ops.reg(k.lowered(v, op)) for v in op.asynchronous]
        copies = [ptx.CpAsyncArriveOp(addr, noinc=True)]
        if all(f is k.true for f in flags):
            ops.extend(copies)
        else:
            every = flags[0]
            for f in flags[1:]:
                every = ops.alu("and.pred", every, f)
            stores = [
                ptx.CpAsyncArriveOp(addr, noinc=False),
                ptx.MBarrierArriveOp(addr),
            ]
            ops.add(uniform_branch(every, copies, stores))
        rewriter.replace(op, ops, [])


class ArriveExpectTx(DistributePattern):
    OPS = (nv.MBarrierArriveExpectTxOp,)

    def rewrite(self, op: nv.MBarrierArriveExpectTxOp, rewriter: PatternRewriter):
        ops = Ops(self.k)
        addr = barrier_address(ops, op.barriers, op.index, op)
        ops.add(
            ptx.MBarrierArriveOp(
                addr, expect_tx=int_value(op.bytes), pred=self.k.one_thread(op)
            )
        )
        rewriter.replace(op, ops, [])


class TMALoad(DistributePattern):
    OPS = (nv.TMALoadOp,)

    def rewrite(self, op: nv.TMALoadOp, rewriter: PatternRewriter):
        k, ops = self.k, Ops(self.k)
        ring, tmap_type = op.buffer.type, op.tensor_map.type
        assert isinstance(ring, nv.SmemType)
        assert isinstance(tmap_type, nv.TensorMapType)
        dst = slot_address(ops, op.buffer, op.slot, op)
        bar = barrier_address(ops, op.barriers, op.barrier, op)
        tmap = self.k.lowered(op.tensor_map, op).value
        coords = coordinates(ops, op.coords, op)
        size, count = op.cluster_size, op.num_boxes
        guard, mask = k.one_thread(op), None
        if size > 1:
            # this block's share of the boxes (`TMALoadOp.boxes_of`), into all
            mask = ops.alu("mov.b16", ops.imm((1 << size) - 1, "b16"))
            if count % size:
                guard = k.rank0
            else:
                count //= size
                cols, nbytes = chunk(ring, tmap_type)
                assert k.rank is not None
                coords[0] = ops.alu(
                    "mad.lo.s32", k.rank, ops.imm(count * cols, "b32"), coords[0]
                )
                dst = ops.alu("mad.lo.u32", k.rank, ops.imm(count * nbytes, "b32"), dst)
        for where, offset in boxes(ops, ring, tmap_type, coords, count):
            ops.add(ptx.TMALoadOp(dst, tmap, where, bar, offset, mask, guard))
        rewriter.replace(op, ops, [])


class TMAStore(DistributePattern):
    OPS = (nv.TMAStoreOp,)

    def rewrite(self, op: nv.TMAStoreOp, rewriter: PatternRewriter):
        ops = Ops(self.k)
        ring, tmap_type = op.buffer.type, op.tensor_map.type
        assert isinstance(ring, nv.SmemType)
        assert isinstance(tmap_type, nv.TensorMapType)
        src = slot_address(ops, op.buffer, op.slot, op)
        tmap = self.k.lowered(op.tensor_map, op).value
        leader = self.k.consumer_ids(op).leader
        coords = coordinates(ops, op.coords, op)
        for where, offset in boxes(ops, ring, tmap_type, coords):
            ops.add(ptx.TMAStoreOp(tmap, where, src, offset, pred=leader))
        rewriter.replace(op, ops, [])


class BulkGroups(DistributePattern):
    """The TMA stores' bulk groups, committed and waited for by their issuer;
    the prefetch of a tensor map."""

    OPS = (nv.TMAStoreCommitOp, nv.TMAStoreWaitOp, nv.PrefetchTensorMapOp)

    def rewrite(self, op: Operation, rewriter: PatternRewriter):
        new: Operation
        if isinstance(op, nv.TMAStoreCommitOp):
            new = ptx.BulkCommitOp(self.k.consumer_ids(op).leader)
        elif isinstance(op, nv.TMAStoreWaitOp):
            new = ptx.BulkWaitOp(
                int_value(op.pending),
                self.k.consumer_ids(op).leader,
                writes=op.writes is not None,
            )
        else:
            assert isinstance(op, nv.PrefetchTensorMapOp)
            new = ptx.PrefetchTensorMapOp(self.k.lowered(op.tensor_map, op).value)
        rewriter.replace(op, new, [])


class MmaTurns(DistributePattern):
    """Ping-pong: warpgroup w waits on barrier 2 + w for its turn and opens the
    next warpgroup's; the last warpgroup opens warpgroup 0's first turn."""

    OPS = (nv.MmaTurnInitOp, nv.MmaTurnBeginOp, nv.MmaTurnEndOp)

    def rewrite(self, op: Operation, rewriter: PatternRewriter):
        k = self.k
        pair = 2 * THREADS_PER_WARPGROUP
        if isinstance(op, nv.MmaTurnInitOp):
            ops, n = Ops(k), k.warpgroups
            cwg = k.consumer_ids(op).cwg
            k.turn_own = ops.alu("add.u32", cwg, ops.imm(TURN_BARRIER0, "b32"))
            nxt = ops.alu("add.u32", cwg, ops.imm(1, "b32"))
            nxt = ops.alu("rem.u32", nxt, ops.imm(n, "b32"))
            k.turn_next = ops.alu("add.u32", nxt, ops.imm(TURN_BARRIER0, "b32"))
            last = ops.alu("setp.eq.u32", cwg, ops.imm(n - 1, "b32"))
            ops.add(
                ptx.BarOp(ops.imm(TURN_BARRIER0, "b32"), pair, arrive=True, pred=last)
            )
            rewriter.replace(op, ops, [])
        elif isinstance(op, nv.MmaTurnBeginOp | nv.MmaTurnEndOp):
            turn = k.turn_own if isinstance(op, nv.MmaTurnBeginOp) else k.turn_next
            if turn is None:
                raise OpDiagnostic(op, "an MMA turn before nvgpu_async.mma_turn_init")
            rewriter.replace(
                op, ptx.BarOp(turn, pair, arrive=isinstance(op, nv.MmaTurnEndOp)), []
            )


class GridDependencies(DistributePattern):
    """A split pair's handoff between its kernels (programmatic dependent
    launch): every thread executes the control."""

    OPS = (nv.LaunchDependentsOp, nv.GridDependencyWaitOp)

    def rewrite(self, op: Operation, rewriter: PatternRewriter):
        wait = isinstance(op, nv.GridDependencyWaitOp)
        rewriter.replace(
            op, ptx.GridDepControlOp("wait" if wait else "launch_dependents"), []
        )


def patterns(k: KernelState) -> list[DistributePattern]:
    return [
        Alloc(k),
        MBarrierInit(k),
        Fences(k),
        GridDependencies(k),
        MBarrierWait(k),
        MBarrierArrive(k),
        ThreadLoadsArrive(k),
        ArriveExpectTx(k),
        TMALoad(k),
        TMAStore(k),
        BulkGroups(k),
        MmaTurns(k),
    ]
