"""The rewrite patterns of `convert-aref-to-nvgpu-async`, one per op.

Each pattern builds what the kernel's `KernelPlan` (and, in a consumer, the
layout analysis) decided; none decides or refuses anything. They share one
`Lowering`: the plans, the lowered type of every consumer tile, and the
shared-memory values the kernel's prologue makes. Applied by one pre-order walk
(`PatternRewriteWalker`), a kernel is rewritten top down:

- `LowerKernelSignature` (func.func): the planned parameters replace the
  tile-level ones (descriptors become tensor maps or global tensors, `tile.dim`s
  index parameters), the ABI, the caller's signature, the grid rule and the
  launch are recorded.
- `LowerWarpSpecialize` (aref.warp_specialize): the prologue (ring, staging and
  barrier allocations, barrier init, fences) and the role dispatch, whose roles
  start with their `setmaxnreg` (the producer also warms the tensor maps) and
  whose consumer ends waiting for its wgmma groups and TMA stores.
- Producer: `LowerPut` (wait for a free slot, arm `full` with the slot's bytes,
  one TMA copy per tile; a tile the producer's threads load (`thread_loads`):
  their `thread_load` and every thread's `thread_loads_arrive` on `full`; a
  tile ticket: store it into the slot and arrive on `full`),
  `EraseIssuedLoad` (the put issued its copy).
- Consumer: `LowerGet` (wait for a full slot, views of it, after a proxy
  fence where the producer's threads wrote it; a ticket: read it), `LowerConsumed`
  (arrive on `empty`), `LowerTrans` (a transposed view), `LowerDot` (fence,
  wgmma, commit), `LowerStore` (through the staging tile and TMA, or from
  registers; a store of a register tile's transpose writes the tile
  transposed), `LowerColumnReduce` (through the column scratch),
  `LowerRegisterConstant`, `RetypeTiles` (register fragments and
  carried views) and `LoadSharedOperands` (a shared tile read as registers).
- `EraseLoweredAref` (aref.create): gone once nothing refers to it.

The walk visits an op after everything that defines its operands, so a pattern
sees its operands lowered already (a dot's accumulator in its fragment type).

`InsertWgmmaWaits`, walked over each consumer before, puts the
`wgmma_wait_group`s `wgmma_waits.plan_waits` asks for (it reads aref-level IR).
`CopyPolymorphicPerUse` and `WidenNarrowReduce` prepare a consumer for the
layout analysis.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FunctionType,
    IndexType,
    TensorType,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator

from tawa_xdsl.analysis.carried import STRUCTURED, copies
from tawa_xdsl.analysis.kernel_plan import (
    TICKET_TYPE,
    Allocation,
    ChannelPlan,
    KernelPlan,
)
from tawa_xdsl.analysis.layouts import (
    ConsumerLayouts,
    Smem,
    is_polymorphic,
    kind_of_matrix,
    read_layout,
)
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects.nvgpu_async import (
    ABI_ATTR,
    LAUNCH_ATTR,
    FragmentKind,
    FragmentLayoutAttr,
    ParamKind,
)
from tawa_xdsl.dialects.roles import RoleRegionsOp, entry_register_cap
from tawa_xdsl.dialects.tile import splat_value
from tawa_xdsl.grid import GRID_ATTR
from tawa_xdsl.partials import record
from tawa_xdsl.signature import signature_record


@dataclass
class Channel:
    """The shared-memory values of one aref, once the prologue made them."""

    plan: ChannelPlan
    kernel: KernelPlan
    rings: list[SSAValue]
    full: SSAValue
    empty: SSAValue
    staging: list[SSAValue] = field(default_factory=list)
    """The staging buffer of each tile the producer transposes, in payload order."""
    staged: SSAValue | None = None
    """The barrier the copies into `staging` complete on."""


@dataclass
class Lowering:
    """What the patterns of one module's lowering share."""

    kernels: dict[func.FuncOp, KernelPlan] = field(default_factory=dict)
    """The planned kernels whose signature is still tile-level."""
    roles: dict[aref.WarpSpecializeOp, KernelPlan] = field(default_factory=dict)
    types: dict[SSAValue, Attribute] = field(default_factory=dict)
    """The lowered type of each consumer tile: a register fragment type, or a
    view for a shared-memory tile a loop carries or a branch yields."""
    consumer_ops: set[Operation] = field(default_factory=set)
    producer_ops: set[Operation] = field(default_factory=set)
    channels: dict[SSAValue, Channel] = field(default_factory=dict)
    """By aref value."""
    staging: dict[tile.StoreOp, SSAValue] = field(default_factory=dict)
    """The staging tile of each store that goes through TMA."""
    rewriting: set[tile.StoreOp] = field(default_factory=set)
    """The TMA stores that may write global bytes an earlier TMA store of the
    block wrote (`_may_rewrite`)."""
    column_scratch: dict[tile.ReduceOp, SSAValue] = field(default_factory=dict)
    """The scratch of each reduction along the columns (axis 0)."""

    def add(self, plan: KernelPlan, layouts: ConsumerLayouts) -> None:
        """Lower `plan`'s kernel, whose consumer `layouts` placed."""
        self.kernels[plan.kernel] = plan
        self.roles[plan.ws] = plan
        self.producer_ops.update(plan.ws.producer.walk())
        consumer = list(plan.ws.consumer.walk())
        self.consumer_ops.update(consumer)
        for op in consumer:
            for v in _defined(op):
                place = layouts.placement.get(v)
                if isinstance(place, Smem):
                    if isinstance(op, STRUCTURED):
                        self.types[v] = nv.SmemViewType(
                            v.type.get_shape(), v.type.element_type, place.transposed
                        )
                elif place is not None:
                    self.types[v] = layouts.type_of(v)


def _defined(op: Operation) -> list[SSAValue]:
    """The values `op` defines: its results and its regions' block arguments."""
    return [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]


def patterns(lowering: Lowering) -> list[RewritePattern]:
    """The patterns in the order the applier tries them on an op: an op's own
    lowering before the generic retyping."""
    return [
        LowerKernelSignature(lowering),
        LowerWarpSpecialize(lowering),
        EraseLoweredAref(),
        LowerPut(lowering),
        EraseIssuedLoad(lowering),
        LowerGet(lowering),
        LowerConsumed(lowering),
        LowerTrans(lowering),
        LowerExtract(lowering),
        LowerDot(lowering),
        LowerStore(lowering),
        LowerColumnReduce(lowering),
        LowerRegisterConstant(lowering),
        RetypeTiles(lowering),
        LoadSharedOperands(lowering),
    ]


# --------------------------------------------------------------- index math


def _const(rewriter: PatternRewriter, value: int) -> SSAValue:
    return rewriter.insert(
        arith.ConstantOp.from_int_and_width(value, IndexType())
    ).result


def slot_of(rewriter: PatternRewriter, index: SSAValue, depth: int) -> SSAValue:
    """The ring slot of a logical index: index mod depth."""
    slot = arith.RemUIOp(index, _const(rewriter, depth))
    slot.result.name_hint = "slot"
    return rewriter.insert(slot).result


def parity_of(
    rewriter: PatternRewriter, index: SSAValue, depth: int, producer: bool
) -> SSAValue:
    """The phase parity a wait for `index` uses: (index div depth) mod 2 on `full`;
    flipped on `empty`, so a fresh barrier lets the first `depth` puts through."""
    one = _const(rewriter, 1)
    rounds = rewriter.insert(arith.DivUIOp(index, _const(rewriter, depth)))
    parity = rewriter.insert(arith.AndIOp(rounds.result, one))
    if producer:
        parity = rewriter.insert(arith.XOrIOp(parity.result, one))
    parity.result.name_hint = "parity"
    return parity.result


def wait_for_slot(
    rewriter: PatternRewriter, ch: Channel, index: SSAValue, producer: bool
) -> SSAValue:
    """Wait for the slot of `index`, a producer until it is free (`empty`), a
    consumer until it is full (`full`); returns the slot."""
    slot = slot_of(rewriter, index, ch.plan.depth)
    parity = parity_of(rewriter, index, ch.plan.depth, producer)
    barrier = ch.empty if producer else ch.full
    rewriter.insert(nv.MBarrierWaitOp(barrier, slot, parity))
    return slot


def _coordinates(
    rewriter: PatternRewriter, tensor_map: SSAValue, coords: Sequence[SSAValue]
) -> list[SSAValue]:
    """Tile coordinates for a tensor map of higher rank: leading zeros."""
    lifted = len(tensor_map.type.get_shape()) - len(coords)
    return [_const(rewriter, 0) for _ in range(lifted)] + list(coords)


# ------------------------------------------------------------------- kernel


@dataclass
class LowerKernelSignature(RewritePattern):
    """A planned kernel's parameters and launch contract. The tile-level
    parameters give way to the planned ones: a scalar to itself, a descriptor's
    loads and stores to its tensor map or global tensor (their own patterns read
    it from their operand), and each `tile.dim` to the index parameter the
    launch passes for it."""

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, kernel: func.FuncOp, rewriter: PatternRewriter, /):
        plan = self.lowering.kernels.pop(kernel, None)
        if plan is None:
            return
        body = kernel.body.block
        old = list(body.args)
        dims = [o for o in kernel.walk() if isinstance(o, tile.DimOp)]
        new: dict[tuple[ParamKind, int, int | None], SSAValue] = {}
        for p in plan.params:
            arg = rewriter.insert_block_argument(body, len(body.args), p.type)
            arg.name_hint = p.name
            new[(p.kind, p.arg, p.axis)] = arg
            if p.kind == ParamKind.SCALAR:
                rewriter.replace_all_uses_with(old[p.arg], arg)
        for d in dims:
            assert isinstance(d.desc, BlockArgument), "tile.dim reads a parameter"
            extent = new[(ParamKind.DIM, d.desc.index, d.axis.value.data)]
            rewriter.replace(d, [], [extent])
        for (kind, i, _), arg in new.items():
            if kind in (ParamKind.MAP, ParamKind.GLOBAL):
                rewriter.replace_all_uses_with(old[i], arg)
        for arg in reversed(old):
            rewriter.erase_block_argument(arg)
        kernel.function_type = FunctionType.from_lists([a.type for a in body.args], [])
        kernel.arg_attrs = None  # they described the tile-level parameters
        if plan.grid is not None:
            kernel.attributes[GRID_ATTR] = plan.grid
        kernel.attributes[ABI_ATTR] = ArrayAttr(plan.abi)
        kernel.attributes.update(signature_record(plan.caller))
        kernel.attributes[LAUNCH_ATTR] = nv.LaunchAttr(
            plan.threads, plan.smem_bytes, plan.cluster
        )
        rewriter.notify_op_modified(kernel)


def _alloc(allocation: Allocation) -> Operation:
    if isinstance(allocation.type, nv.SmemType):
        op: Operation = nv.SmemAllocOp(allocation.offset, allocation.type)
    else:
        op = nv.MBarrierAllocOp(allocation.offset, allocation.type.count.data)
    op.results[0].name_hint = allocation.name
    return op


@dataclass
class LowerWarpSpecialize(RewritePattern):
    """The roles become a role dispatch after the kernel's prologue: shared
    memory, barrier init and the fences that publish it (to the peer blocks too,
    with clusters, which also wait for each other before they exit)."""

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, ws: aref.WarpSpecializeOp, rewriter: PatternRewriter, /
    ):
        plan = self.lowering.roles.get(ws)
        if plan is None:
            return
        prologue = [_alloc(a) for a in plan.allocations]
        values = {
            a: op.results[0] for a, op in zip(plan.allocations, prologue, strict=True)
        }
        for aref_value, ch in plan.channels.items():
            self.lowering.channels[aref_value] = Channel(
                ch,
                plan,
                [values[r] for r in ch.rings],
                values[ch.full],
                values[ch.empty],
                [values[b] for b in ch.staging],
                values[ch.staged] if ch.staged else None,
            )
        for store, staging in plan.staging.items():
            self.lowering.staging[store] = values[staging]
            if _may_rewrite(store, plan.staging, ws):
                self.lowering.rewriting.add(store)
        if plan.column_scratch is not None:
            for op in ws.consumer.walk():
                if isinstance(op, tile.ReduceOp) and op.axis.value.data == 0:
                    self.lowering.column_scratch[op] = values[plan.column_scratch]
        for ch in plan.channels.values():
            full, empty = values[ch.full], values[ch.empty]
            prologue += [
                nv.MBarrierInitOp(full, ch.full_arrivals),
                nv.MBarrierInitOp(empty, ch.empty_arrivals),
            ]
            if ch.staged is not None:  # the staging copies' expect_tx
                prologue.append(nv.MBarrierInitOp(values[ch.staged], 1))
        prologue += [nv.FenceMBarrierInitOp(), nv.CTABarrierOp()]
        if plan.cluster > 1:
            prologue.append(nv.ClusterBarrierOp())
        prologue = _grid_dependencies(ws, prologue)

        registers = plan.registers
        producer = rewriter.move_region_contents_to_new_regions(ws.producer)
        consumer = rewriter.move_region_contents_to_new_regions(ws.consumer)
        maps = [
            a for a in ws.parent_block().args if isinstance(a.type, nv.TensorMapType)
        ]
        rewriter.insert(
            [
                nv.SetMaxNRegOp("dec", registers[0]),
                *(nv.PrefetchTensorMapOp(m) for m in maps),
            ],
            InsertPoint.at_start(producer.block),
        )
        if registers[1] > entry_register_cap(plan.threads):
            rewriter.insert(
                nv.SetMaxNRegOp("inc", registers[1]),
                InsertPoint.at_start(consumer.block),
            )
        ends: list[Operation] = [nv.WgmmaWaitGroupOp(0)]
        if plan.staging:  # the staging tiles must be read out before the block exits
            ends.append(nv.TMAStoreWaitOp(0))
        rewriter.insert(ends, InsertPoint.at_end(consumer.block))
        dispatch = nv.RoleDispatchOp(producer, consumer, plan.num_consumers, registers)
        after = [nv.ClusterBarrierOp()] if plan.cluster > 1 else []
        # no block leaves while peers may write into it
        rewriter.replace(ws, [*prologue, dispatch, *after], [])


def _grid_dependencies(
    ws: aref.WarpSpecializeOp, prologue: list[Operation]
) -> list[Operation]:
    """A split pair's kernels hand over through programmatic dependent launch
    (the runtime launches the reduce kernel as a dependent of the partials
    kernel): the partials kernel lets it start at once, so its blocks take the
    SMs the partials kernel frees and set up their barriers meanwhile; the
    reduce kernel waits for the partial sums after its own setup."""
    kernel = ws.parent_op()
    pair = record(kernel) if isinstance(kernel, func.FuncOp) else None
    if pair is None:
        return prologue
    if pair.role == "partials":
        return [nv.LaunchDependentsOp(), *prologue]
    return [*prologue, nv.GridDependencyWaitOp()]


@dataclass
class EraseLoweredAref(RewritePattern):
    """An `aref.create` whose puts, gets and releases are lowered."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, create: aref.CreateOp, rewriter: PatternRewriter, /):
        if not create.result.uses:
            rewriter.erase(create)


# ----------------------------------------------------------------- producer


@dataclass
class LowerPut(RewritePattern):
    """Wait until the slot is free (`empty`, parity flipped), arm `full` with the
    slot's bytes, copy each tile into its ring with TMA (to every block of the
    cluster if multicast); a tile the producer transposes into its staging
    buffer, then `_write_by_threads`."""

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, put: aref.PutOp, rewriter: PatternRewriter, /):
        ch = self.lowering.channels.get(put.aref)
        if ch is None:
            return
        slot = wait_for_slot(rewriter, ch, put.index, producer=True)
        if ch.plan.tickets:
            ticket = rewriter.insert(arith.IndexCastOp(put.values[0], TICKET_TYPE))
            rewriter.insert(nv.SmemStoreScalarOp(ticket.result, ch.rings[0], slot))
            rewriter.replace(put, nv.MBarrierArriveOp(ch.full, slot, "thread"), [])
            return
        by_producer = ch.plan.by_producer or (False,) * len(ch.rings)
        if not all(by_producer):
            rewriter.insert(
                nv.MBarrierArriveExpectTxOp(ch.full, slot, ch.plan.tma_bytes)
            )
        for value, ring, threads in zip(put.values, ch.rings, by_producer, strict=True):
            load = value.owner
            assert isinstance(load, tile.LoadOp)
            if threads:
                continue
            coords = _coordinates(rewriter, load.desc, load.indices)
            blocks = (
                ch.kernel.cluster if ch.kernel.is_multicast(load, ch.plan) else None
            )
            rewriter.insert(
                nv.TMALoadOp(load.desc, coords, ring, slot, ch.full, slot, blocks)
            )
        if ch.staged is not None:
            _stage(rewriter, ch, put)
        if any(by_producer):
            _write_by_threads(rewriter, ch, put, slot)
        rewriter.erase(put)


def _transposed(ch: Channel, put: aref.PutOp) -> list[tuple[tile.LoadOp, SSAValue]]:
    """The loads of `put` the producer transposes, with their rings."""
    flips = ch.plan.transposed or (False,) * len(ch.rings)
    pairs = zip(put.values, ch.rings, flips, strict=True)
    return [(v.owner, ring) for v, ring, flip in pairs if flip]  # type: ignore[misc]


def _stage(rewriter: PatternRewriter, ch: Channel, put: aref.PutOp) -> None:
    """The TMA copies of the tiles the producer transposes, into their staging
    buffers (one slot each), completing on `staged`."""
    assert ch.staged is not None
    zero = _const(rewriter, 0)
    rewriter.insert(nv.MBarrierArriveExpectTxOp(ch.staged, zero, ch.plan.staged_bytes))
    for (load, _), buffer in zip(_transposed(ch, put), ch.staging, strict=True):
        coords = _coordinates(rewriter, load.desc, load.indices)
        rewriter.insert(nv.TMALoadOp(load.desc, coords, buffer, zero, ch.staged, zero))


def staged_parity(rewriter: PatternRewriter, index: SSAValue) -> SSAValue:
    """The parity of put `index`'s wait on `staged`: its phases complete one
    a put, in index order, so the index's lowest bit (the first wait, phase 0,
    does not pass on the fresh barrier as parity 1 would)."""
    parity = arith.AndIOp(index, _const(rewriter, 1))
    parity.result.name_hint = "staged_parity"
    return rewriter.insert(parity).result


def _write_by_threads(
    rewriter: PatternRewriter, ch: Channel, put: aref.PutOp, slot: SSAValue
) -> None:
    """The tiles the producer's threads write (after the TMA copies are under
    way). The tiles they load, then every thread's arrive on `full`, made
    when its copies land (`thread_loads_arrive`: the producer goes on without
    waiting for them; readers fence after their wait). The tiles they
    transpose: a wait for the staging copies (`staged` completes once a put:
    the parity is the index's) and the copies, then the proxy fence that
    shows the writes to wgmma, the barrier that waits for every thread's (and
    for every thread's reads of the staging buffers, which the next put
    refills), and one thread's arrive on `full`."""
    by_threads = ch.plan.by_threads or (False,) * len(ch.rings)
    loads = []
    for value, ring, threads in zip(put.values, ch.rings, by_threads, strict=True):
        load = value.owner
        assert isinstance(load, tile.LoadOp)
        if threads:
            loads.append(
                rewriter.insert(nv.ThreadLoadOp(load.desc, load.indices, ring, slot))
            )
    if loads:
        asynchronous = [op.asynchronous for op in loads]
        rewriter.insert(nv.ThreadLoadsArriveOp(ch.full, slot, asynchronous))
    if ch.staged is not None:
        zero = _const(rewriter, 0)
        parity = staged_parity(rewriter, put.index)
        rewriter.insert(nv.MBarrierWaitOp(ch.staged, zero, parity))
        for (_, ring), buffer in zip(_transposed(ch, put), ch.staging, strict=True):
            rewriter.insert(nv.TransposeCopyOp(buffer, zero, ring, slot))
        rewriter.insert(nv.FenceProxyAsyncOp())
        rewriter.insert(nv.ProducerBarrierOp())
        rewriter.insert(nv.MBarrierArriveOp(ch.full, slot, "thread"))


@dataclass
class EraseIssuedLoad(RewritePattern):
    """A producer's `tile.load` whose TMA copy its put issued."""

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, load: tile.LoadOp, rewriter: PatternRewriter, /):
        if load in self.lowering.producer_ops and not load.result.uses:
            rewriter.erase(load)


# ----------------------------------------------------------------- consumer


@dataclass
class LowerGet(RewritePattern):
    """Wait until the slot is full (`full`, parity of the round), then read the
    tiles in place: views of the slot."""

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, get: aref.GetOp, rewriter: PatternRewriter, /):
        ch = self.lowering.channels.get(get.aref)
        if ch is None:
            return
        slot = wait_for_slot(rewriter, ch, get.index, producer=False)
        if any(ch.plan.by_threads):  # generic-proxy writes, read by wgmma
            rewriter.insert(nv.FenceProxyAsyncOp())
        views = [nv.SmemSlotOp(ring, slot) for ring in ch.rings]
        if any(ch.plan.transposed):  # such a ring is read K-major: transposed
            tiles = [
                nv.SmemTransOp(v.result) if flip else v
                for v, flip in zip(views, ch.plan.transposed, strict=True)
            ]
            flips = [t for t in tiles if isinstance(t, nv.SmemTransOp)]
            rewriter.replace(get, [*views, *flips], [t.result for t in tiles])
            return
        if ch.plan.tickets:
            read = nv.SmemExtractOp(views[0], (0,))
            ticket = arith.IndexCastOp(read.result, IndexType())
            ticket.result.name_hint = get.values[0].name_hint
            rewriter.replace(get, [*views, read, ticket], [ticket.result])
            return
        rewriter.replace(get, views, [v.result for v in views])


@dataclass
class LowerConsumed(RewritePattern):
    """Release the slot: arrive on `empty` (from every thread if the tiles were
    read with plain loads; in every block of the cluster if multicast)."""

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aref.ConsumedOp, rewriter: PatternRewriter, /):
        ch = self.lowering.channels.get(op.aref)
        if ch is None:
            return
        slot = slot_of(rewriter, op.index, ch.plan.depth)
        scope = "thread" if ch.plan.thread_release else "warpgroup"
        blocks = ch.kernel.cluster if ch.plan.multicast else None
        rewriter.replace(op, nv.MBarrierArriveOp(ch.empty, slot, scope, blocks), [])


@dataclass
class LowerTrans(RewritePattern):
    """A transpose of a shared-memory tile is the same slot read transposed."""

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.TransOp, rewriter: PatternRewriter, /):
        if op in self.lowering.consumer_ops and isinstance(
            op.source.type, nv.SmemViewType
        ):
            rewriter.replace(op, nv.SmemTransOp(op.source))


@dataclass
class LowerExtract(RewritePattern):
    """An element read out of a loaded tile (a block scale in its TMA box) is
    read from the tile's shared-memory slot."""

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.ExtractOp, rewriter: PatternRewriter, /):
        if op not in self.lowering.consumer_ops:
            return
        if not isinstance(op.source.type, nv.SmemViewType):
            raise OpDiagnostic(
                op,
                "tile.extract reads a tile as loaded (from its shared-memory slot); "
                "extracting from a computed register tile is not supported",
            )
        rewriter.replace(op, nv.SmemExtractOp(op.source, op.get_position()))


@dataclass
class LowerDot(RewritePattern):
    """One asynchronous wgmma group (its waits come from `InsertWgmmaWaits`)."""

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, dot: tile.DotOp, rewriter: PatternRewriter, /):
        if dot not in self.lowering.consumer_ops:
            return
        if (problem := nv.k_major_problem(dot.lhs.type, dot.rhs.type)) is not None:
            raise OpDiagnostic(dot, f"tile.dot: {problem}")
        wgmma = nv.WgmmaOp(dot.lhs, dot.rhs, dot.acc)
        rewriter.replace(
            dot,
            [nv.WgmmaFenceOp(), wgmma, nv.WgmmaCommitGroupOp()],
            [wgmma.result],
        )


def _read_into_registers(store: tile.StoreOp, rewriter: PatternRewriter) -> None:
    """A store of a shared tile (a loaded tile stored as it is) stores it from
    registers: read it into the layout of its shape first."""
    view = store.value.type
    assert isinstance(view, nv.SmemViewType)
    roles = store.parent_op()
    while not isinstance(roles, RoleRegionsOp):
        assert roles is not None
        roles = roles.parent_op()
    shape = view.get_shape()
    kind = kind_of_matrix(shape) if len(shape) == 2 else FragmentKind.COL
    layout = FragmentLayoutAttr(kind, roles.num_consumers.value.data)
    load = nv.SmemLoadOp(store.value, TensorType(view.element_type, shape, layout))
    rewriter.insert(load, InsertPoint.before(store))
    store.operands[0] = load.result


@dataclass
class LowerStore(RewritePattern):
    """A store from registers, or registers -> swizzled staging tile -> one TMA
    store by the first consumer thread. The staging tile is only rewritten once
    the previous store has read it out, and only stored once every consumer
    thread has written and fenced it."""

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, store: tile.StoreOp, rewriter: PatternRewriter, /):
        if store not in self.lowering.consumer_ops:
            return
        if isinstance(store.value.type, nv.SmemViewType):  # a loaded tile, copied
            _read_into_registers(store, rewriter)
        staging = self.lowering.staging.get(store)
        value, transposed = store.value, False
        trans = value.owner
        if isinstance(trans, tile.TransOp) and trans in self.lowering.consumer_ops:
            value, transposed = trans.source, True  # `layouts.stored_transposed`
        if staging is None:
            rewriter.replace(
                store,
                nv.StoreGlobalOp(
                    value, store.desc, list(store.indices), transposed=transposed
                ),
                [],
            )
            if transposed and not trans.result.uses:
                rewriter.erase(trans)
            return
        zero = _const(rewriter, 0)
        coords = _coordinates(rewriter, store.desc, store.indices)
        new_ops = [
            nv.TMAStoreWaitOp(0, writes=store in self.lowering.rewriting),
            nv.ConsumerBarrierOp(),
            nv.SmemStoreOp(store.value, staging, zero),
            nv.FenceProxyAsyncOp(),
            nv.ConsumerBarrierOp(),
            nv.TMAStoreOp(staging, zero, store.desc, coords),
            nv.TMAStoreCommitOp(),
        ]
        rewriter.replace(store, new_ops, [])


def _may_rewrite(
    store: tile.StoreOp, staged: Iterable[tile.StoreOp], ws: aref.WarpSpecializeOp
) -> bool:
    """Whether the TMA store `store` may write global bytes an earlier TMA store
    of its block wrote: another TMA store of the same tensor, or itself again in
    a loop (a persistent kernel's next tile, or a store inside the K loop). TMA
    stores are not ordered among themselves, and `.read` waits only free the
    staging tile, so such a store first waits for the earlier one's writes.
    Where the earlier store is a tile's epilogue ago that wait costs nothing."""
    if any(other is not store and other.desc == store.desc for other in staged):
        return True
    parent = store.parent_op()
    while parent is not None and parent is not ws:
        if isinstance(parent, scf.ForOp | scf.WhileOp):
            return True
        parent = parent.parent_op()
    return False


@dataclass
class LowerColumnReduce(RewritePattern):
    """A reduction along the columns (axis 0) meets its warps' partials in the
    kernel's column scratch: `nvgpu_async.column_reduce` (a loaded tile is
    read into the accumulator layout first)."""

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.ReduceOp, rewriter: PatternRewriter, /):
        scratch = self.lowering.column_scratch.get(op)
        if scratch is None:
            return
        result = self.lowering.types[op.result]
        assert isinstance(result, TensorType)
        source = op.source
        if isinstance(source.type, nv.SmemViewType):
            shape = source.type.get_shape()
            layout = read_layout(op, shape, result.encoding)
            load = nv.SmemLoadOp(
                source, TensorType(source.type.element_type, shape, layout)
            )
            rewriter.insert(load, InsertPoint.before(op))
            source = load.result
        rewriter.replace(op, nv.ColumnReduceOp(op.kind, source, scratch, result))


@dataclass
class LowerRegisterConstant(RewritePattern):
    """A splat constant tile takes its fragment type."""

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter, /):
        new_type = self.lowering.types.get(op.result)
        if new_type is None or not isinstance(op.value, DenseIntOrFPElementsAttr):
            return
        value = splat_value(op.value)
        assert value is not None, "refuse_unsupported refuses other constants"
        rewriter.replace(
            op, arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(new_type, [value]))
        )


@dataclass
class RetypeTiles(RewritePattern):
    """Register tiles take their fragment types; shared-memory tiles a loop
    carries or a branch yields become views."""

    lowering: Lowering

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if op not in self.lowering.consumer_ops:
            return
        types = self.lowering.types
        for v in _defined(op):
            new_type = types.get(v)
            if new_type is not None:
                rewriter.replace_value_with_new_type(v, new_type)
        if isinstance(op, STRUCTURED):  # LoadSharedOperands sees it no more
            load_copied_views(op, rewriter)


@dataclass
class LoadSharedOperands(RewritePattern):
    """A shared-memory tile an op reads as registers is loaded into the layout
    the op reads it in first (`read_layout`; wgmma reads views in place, and
    loops, branches and their terminators pass them on)."""

    lowering: Lowering

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if op not in self.lowering.consumer_ops:
            return
        if isinstance(op, STRUCTURED) or op.has_trait(IsTerminator):
            load_copied_views(op, rewriter)
            return
        target = next(
            (r.type for r in op.results if isinstance(r.type, TensorType)), None
        )
        for i, v in enumerate(op.operands):
            if isinstance(v.type, nv.SmemViewType):
                assert target is not None, "KernelPlan refuses such reads"
                shape = v.type.get_shape()
                layout = read_layout(op, shape, target.encoding)
                load = nv.SmemLoadOp(v, TensorType(v.type.element_type, shape, layout))
                rewriter.insert(load, InsertPoint.before(op))
                op.operands[i] = load.result
                rewriter.notify_op_modified(op)


def load_copied_views(op: Operation, rewriter: PatternRewriter) -> None:
    """Structured ops and their terminators pass views on as they are, but a
    view `op` copies into a register tile (a loaded tile a loop then updates in
    registers, retyped by `RetypeTiles`) is loaded in that tile's layout first."""
    owner = op if isinstance(op, STRUCTURED) else op.parent_op()
    if owner is None:
        return
    for holder, i, dst in copies(owner):
        v = op.operands[i] if holder is op else None
        if v is None or not isinstance(v.type, nv.SmemViewType):
            continue
        target = dst.type
        if not (
            isinstance(target, TensorType)
            and isinstance(target.encoding, FragmentLayoutAttr)
        ):
            continue  # a view carried as a view
        load = nv.SmemLoadOp(v, target)
        rewriter.insert(load, InsertPoint.before(op))
        op.operands[i] = load.result
        rewriter.notify_op_modified(op)


# ---------------------------------------------------------- consumer setup


@dataclass
class InsertWgmmaWaits(RewritePattern):
    """`wgmma_wait_group k` right before each op `wgmma_waits.plan_waits` names."""

    waits: dict[Operation, int]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        pending = self.waits.get(op)
        if pending is not None:
            rewriter.insert(nv.WgmmaWaitGroupOp(pending), InsertPoint.before(op))


class WidenNarrowReduce(RewritePattern):
    """A reduction of a 16-bit float tile runs in f32, as the interpreter
    defines it (`interp.tile`: reduced in f32, then rounded): the tile
    extended (`arith.extf`), reduced, the result rounded back
    (`arith.truncf`), so the layouts place f32 tiles, which the register
    paths (along either axis) reduce."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.ReduceOp, rewriter: PatternRewriter, /):
        source, result = op.source.type, op.result.type
        assert isinstance(source, TensorType) and isinstance(result, TensorType)
        if not isinstance(source.element_type, BFloat16Type | Float16Type):
            return
        wide = arith.ExtFOp(op.source, TensorType(Float32Type(), source.get_shape()))
        reduce = tile.ReduceOp(
            tile.ReduceKind(op.kind.data),
            wide.result,
            op.axis.value.data,
            TensorType(Float32Type(), result.get_shape()),
        )
        narrow = arith.TruncFOp(reduce.result, result)
        rewriter.replace(op, [wide, reduce, narrow])


@dataclass
class CopyPolymorphicPerUse(RewritePattern):
    """Every use of an iota, splat or dense constant gets its own copy, so that
    each can take the layout its use wants (an iota used both as row ids and as
    column ids)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not is_polymorphic(op) or not isinstance(op.results[0].type, TensorType):
            return
        uses = list(op.results[0].uses)
        for use in uses[1:]:
            clone = op.clone()
            clone.results[0].name_hint = op.results[0].name_hint
            rewriter.insert(clone, InsertPoint.after(op))
            use.operation.operands[use.index] = clone.results[0]
            rewriter.notify_op_modified(use.operation)
