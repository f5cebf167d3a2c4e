"""convert-aref-to-nvgpu-async: warp-specialized aref IR -> the Hopper machine.

Contract. Input: kernels after `aref-partition` (and usually `pipeline`): the
body holds `aref.create`s and one `aref.warp_specialize`. Output, per kernel:

- Parameters: each `!tile.desc` becomes what its uses need: a TMA tensor map if
  the producer loads it, a plain global tensor if the consumer stores it, and an
  index parameter per `tile.dim`; scalars stay. The ABI is recorded in
  `nvgpu_async.abi` (one "kind:arg[:axis]" entry per parameter) for the runtime.
- Each aref becomes one shared-memory ring per payload tile (`depth` 1024-byte
  aligned slots in the swizzled TMA layout) and two mbarrier arrays, `full` (count
  1: the producer's expect_tx arrival) and `empty` (one arrival per consumer
  warpgroup, or per consumer thread when the tiles are read with plain loads).
- Producer: `aref.put %r[i]` waits on `empty[i mod D]` with parity
  ((i div D) + 1) mod 2 (a fresh barrier passes parity 1), arms `full[i mod D]`
  with the slot's exact byte count and issues one TMA load per tile.
- Consumer: `aref.get %r[i]` waits on `full[i mod D]` with parity (i div D) mod 2
  and yields shared-memory views; `tile.dot` becomes fence + wgmma + commit;
  `aref.consumed` arrives on `empty`; `wgmma_wait_group` is placed by
  `wgmma_waits.plan_waits`; register tiles get fragment layouts (`layouts.py`);
  `tile.store` becomes `store_global`.
- Clusters (`cluster{size=S}`): the producer loads every block of a cluster
  issues alike (`transforms.cluster.cluster_uniform`) are multicast: each block
  copies 1/S of the tile into the slot of all S blocks. Their aref's `empty`
  barriers count the consumer warpgroups of all S blocks, which each release the
  slot in every block; cluster barriers follow the barrier init and precede exit.
- Register budgets (`setmaxnreg`) come from `register-budget`, or default to
  `compiler.default_registers` (24/240 with two consumer warpgroups, as FlashAttention-3:
  the TMA producer needs few); the consumer only raises its budget when the
  launch leaves it below that.

Kernels outside what the hardware path supports get a diagnostic at the op: MMA
shapes wgmma cannot issue, tiles TMA cannot move in the swizzled layout,
transposed register tiles, reductions across rows.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects.nvgpu_async import LAUNCH_ATTR, SMEM_ALIGN_SLACK
from tawa_xdsl.dialects.roles import THREADS_PER_WARPGROUP, entry_register_cap
from tawa_xdsl.dialects.tile import element_bytes
from tawa_xdsl.lowering.carried import STRUCTURED, uses_through_loops
from tawa_xdsl.lowering.coordinates import multiple_of, non_negative
from tawa_xdsl.lowering.layouts import ConsumerLayouts, Smem, copy_polymorphic_per_use
from tawa_xdsl.lowering.wgmma_waits import ReleaseBeforeReadError, plan_waits
from tawa_xdsl.transforms.cluster import cluster_uniform, rank_varying
from tawa_xdsl.transforms.specialized import warp_specialized
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import IsTerminator

from tawa_xdsl.compiler import DEFAULTS, default_registers
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.grid import (
    GRID_ATTR,
    GridInferenceError,
    encode_rules,
    recorded_grid_rule,
)
from tawa_xdsl.kernel import cluster_size
from tawa_xdsl.signature import params, signature_record

ABI_ATTR = "nvgpu_async.abi"


@dataclass(frozen=True)
class ConvertArefToNVGPUAsyncPass(ModulePass):
    """Lower warp-specialized aref IR to mbarriers, TMA and wgmma."""

    name = "convert-aref-to-nvgpu-async"

    tma_store: bool = DEFAULTS.tma_store

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for ws in warp_specialized(op, self.name):
            kernel = ws.parent_op()
            assert isinstance(kernel, func.FuncOp), "aref-partition nests it directly"
            KernelLowering(kernel, ws, self.tma_store).run()


@dataclass
class Channel:
    """The shared memory and barriers of one aref."""

    create: aref.CreateOp
    rings: list[SSAValue] = field(default_factory=list)
    full: SSAValue | None = None
    empty: SSAValue | None = None
    thread_release: bool = False
    shared: bool = False
    """Some of its tiles are multicast: every block's producer writes its slots."""

    @property
    def depth(self) -> int:
        return self.create.result.type.num_slots

    @property
    def slot_bytes(self) -> int:
        return sum(_tile_bytes(t) for t in self.create.result.type.types)


def _tile_bytes(t: TensorType) -> int:
    return element_bytes(t.element_type) * _product(t.get_shape())


def _product(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _const(value: int, ops: list[Operation]) -> SSAValue:
    c = arith.ConstantOp.from_int_and_width(value, IndexType())
    ops.append(c)
    return c.result


def slot_of(index: SSAValue, depth: int, ops: list[Operation]) -> SSAValue:
    """The ring slot of a logical index: index mod depth."""
    slot = arith.RemUIOp(index, _const(depth, ops))
    slot.result.name_hint = "slot"
    ops.append(slot)
    return slot.result


def parity_of(
    index: SSAValue, depth: int, producer: bool, ops: list[Operation]
) -> SSAValue:
    """The phase parity a wait for `index` uses: (index div depth) mod 2 on `full`;
    flipped on `empty`, so a fresh barrier lets the first `depth` puts through."""
    one = _const(1, ops)
    rounds = arith.DivUIOp(index, _const(depth, ops))
    parity = arith.AndIOp(rounds.result, one)
    ops += [rounds, parity]
    if producer:
        parity = arith.XOrIOp(parity.result, one)
        ops.append(parity)
    parity.result.name_hint = "parity"
    return parity.result


class KernelLowering:
    """Lowers one warp-specialized kernel. See the module docstring."""

    def __init__(
        self, kernel: func.FuncOp, ws: aref.WarpSpecializeOp, tma_store: bool = True
    ):
        self.kernel = kernel
        self.ws = ws
        self.tma_store = tma_store
        self.tma_stores: list[tile.StoreOp] = []
        self.staging: dict[tile.StoreOp, SSAValue] = {}
        self.body = kernel.body.block
        self.num_consumers = ws.num_consumers.value.data
        self.threads = THREADS_PER_WARPGROUP * (1 + self.num_consumers)
        self.channels: dict[aref.CreateOp, Channel] = {}
        self.cluster = cluster_size(kernel)
        self.multicast: set[tile.LoadOp] = set()

    # --------------------------------------------------------------- checks

    def _check(self) -> None:
        for op in self.body.ops:
            if not isinstance(
                op, aref.CreateOp | aref.WarpSpecializeOp | func.ReturnOp
            ):
                raise OpDiagnostic(
                    op,
                    "convert-aref-to-nvgpu-async expects only aref.create and one "
                    "aref.warp_specialize at the top of a kernel",
                )
        for op in self.ws.consumer.walk():
            if isinstance(op, tile.DotOp):
                (m, k), n = op.lhs.type.get_shape(), op.rhs.type.get_shape()[1]
                if m % (64 * self.num_consumers):
                    raise OpDiagnostic(
                        op,
                        f"tile.dot with M = {m} cannot be split into 64-row wgmma "
                        f"blocks over {self.num_consumers} consumer warpgroup(s)",
                    )
                if n % 8 or n > 256:
                    raise OpDiagnostic(
                        op,
                        f"tile.dot with N = {n}: wgmma needs a multiple of 8 up to 256",
                    )
                if k % 16:
                    raise OpDiagnostic(
                        op, f"tile.dot with K = {k}: wgmma needs a multiple of 16"
                    )
            if (
                isinstance(op, tile.ReduceOp)
                and op.axis.value.data != op.source.type.get_num_dims() - 1
            ):
                raise OpDiagnostic(
                    op,
                    "only reductions along rows (the last axis) are supported in registers",
                )

    # -------------------------------------------------------------- clusters

    def _plan_multicast(self) -> None:
        """With clusters: the producer loads that every block of a cluster issues
        alike (`cluster_uniform`, at a uniform aref index) are multicast."""
        if self.cluster == 1:
            return
        varying = rank_varying(self.kernel)
        for put in [o for o in self.ws.producer.walk() if isinstance(o, aref.PutOp)]:
            if not cluster_uniform(put, varying, [put.index]):
                continue
            for v in put.values:
                if isinstance(v.owner, tile.LoadOp) and cluster_uniform(
                    v.owner, varying
                ):
                    self.multicast.add(v.owner)
        if not self.multicast:
            raise OpDiagnostic(
                self.kernel,
                f"@{self.kernel.sym_name.data} runs in clusters of {self.cluster} but "
                "no producer load is the same in every block of a cluster (each "
                "depends on program_id(x) or on a loop or branch that does): there "
                "is nothing to multicast; drop the cluster pass",
            )

    # ------------------------------------------------------------ parameters

    def _lower_params(self) -> None:
        signature = params(self.kernel)  # the contract callers keep: recorded below
        producer_loads = [
            o for o in self.ws.producer.walk() if isinstance(o, tile.LoadOp)
        ]
        stores = [o for o in self.ws.consumer.walk() if isinstance(o, tile.StoreOp)]
        dims = [o for o in self.kernel.walk() if isinstance(o, tile.DimOp)]
        old_args = list(self.body.args)
        abi: list[str] = []
        new_types: list[Attribute] = []
        replacements: list[tuple[str, BlockArgument, object]] = []
        for i, arg in enumerate(old_args):
            if not isinstance(arg.type, tile.DescType):
                abi.append(f"scalar:{i}")
                new_types.append(arg.type)
                replacements.append(("scalar", arg, None))
                continue
            desc = arg.type
            loads = [ld for ld in producer_loads if ld.desc is arg]
            stored = [st for st in stores if st.desc is arg]
            if loads or (stored and self._tma_stores(stored)):
                first = loads[0] if loads else stored[0]
                tile_type = first.result.type if loads else stored[0].value.type
                abi.append(f"map:{i}")
                new_types.append(_tensor_map(desc, tile_type, first))
                replacements.append(("map", arg, None))
                if not loads:
                    self.tma_stores += stored
            elif stored:
                abi.append(f"global:{i}")
                new_types.append(
                    nv.GlobalTensorType(desc.get_shape(), desc.element_type)
                )
                replacements.append(("global", arg, None))
            for axis in sorted({d.axis.value.data for d in dims if d.desc is arg}):
                abi.append(f"dim:{i}:{axis}")
                new_types.append(IndexType())
                replacements.append(("dim", arg, axis))
        new_args = [self.body.insert_arg(t, len(self.body.args)) for t in new_types]
        self.param: dict[tuple[str, BlockArgument, object], BlockArgument] = {}
        for (kind, arg, axis), new in zip(replacements, new_args, strict=True):
            new.name_hint = (
                arg.name_hint if kind != "dim" else f"{arg.name_hint}_dim{axis}"
            )
            self.param[(kind, arg, axis)] = new
            if kind == "scalar":
                arg.replace_all_uses_with(new)
        for d in dims:
            d.result.replace_all_uses_with(
                self.param[("dim", d.desc, d.axis.value.data)]
            )
            d.detach()
            d.erase()
        self._old_args = old_args
        self.kernel.attributes[ABI_ATTR] = ArrayAttr(StringAttr(a) for a in abi)
        self.kernel.attributes.update(signature_record(signature))

    def _tma_stores(self, stores: list[tile.StoreOp]) -> bool:
        """Whether these stores (of one tensor the producer does not load) go
        through a swizzled staging tile and TMA: matrix tiles of 128-byte rows at
        coordinates that cannot be negative, the innermost a whole number of
        16 bytes (`coordinates`), when the staging tiles
        fit in shared memory next to the rings (else the stores go straight from
        registers)."""
        if not self.tma_store or not all(
            len(st.value.type.get_shape()) >= 2
            and st.value.type.get_shape()[-1]
            * element_bytes(st.value.type.element_type)
            % nv.SWIZZLE_BYTES
            == 0
            and all(non_negative(i) for i in st.indices)  # TMA faults below 0
            and multiple_of(  # and off a 16-byte boundary
                st.indices[-1], 16 // element_bytes(st.value.type.element_type)
            )
            for st in stores
        ):
            return False
        rings = [Channel(c) for c in self.body.ops if isinstance(c, aref.CreateOp)]
        staged = [*self.tma_stores, *stores]
        need = (
            sum(ch.depth * (ch.slot_bytes + 16) for ch in rings)
            + sum(_tile_bytes(st.value.type) for st in staged)
            + 1024  # aligning the staging tiles
        )
        return need <= nv.MAX_SMEM_BYTES - SMEM_ALIGN_SLACK

    def _drop_old_args(self) -> None:
        for arg in reversed(self._old_args):
            self.body.erase_arg(arg)
        self.kernel.function_type = FunctionType.from_lists(
            [a.type for a in self.body.args], []
        )
        self.kernel.arg_attrs = None  # they described the tile-level parameters

    # ---------------------------------------------------------- shared memory

    def _plan_shared_memory(self) -> list[Operation]:
        ops: list[Operation] = []
        offset = 0
        for create in [o for o in self.body.ops if isinstance(o, aref.CreateOp)]:
            ch = Channel(create)
            for t in create.result.type.types:
                ring_type = nv.SmemType(ch.depth, t.get_shape(), t.element_type)
                alloc = nv.SmemAllocOp(offset, ring_type)
                alloc.result.name_hint = create.result.name_hint
                offset += ring_type.total_bytes
                ops.append(alloc)
                ch.rings.append(alloc.result)
            self.channels[create] = ch
        for store in self.tma_stores:
            t = store.value.type
            offset = -(-offset // 1024) * 1024  # swizzled tiles are 1024-byte aligned
            alloc = nv.SmemAllocOp(
                offset, nv.SmemType(1, t.get_shape(), t.element_type)
            )
            alloc.result.name_hint = f"{store.desc.name_hint or 'out'}_staging"
            offset += alloc.result.type.total_bytes
            ops.append(alloc)
            self.staging[store] = alloc.result
        for ch in self.channels.values():
            ch.thread_release = self._read_by_threads(ch)
            ch.shared = not ch.thread_release and any(
                v.owner in self.multicast
                for put in ch.create.result.uses
                if isinstance(put.operation, aref.PutOp)
                for v in put.operation.values
            )
            for name in ("full", "empty"):
                bars = nv.MBarrierAllocOp(offset, ch.depth)
                bars.result.name_hint = f"{ch.create.result.name_hint}_{name}"
                offset += bars.result.type.total_bytes
                setattr(ch, name, bars.result)
                ops.append(bars)
        for ch in self.channels.values():
            per_thread = THREADS_PER_WARPGROUP if ch.thread_release else 1
            blocks = self.cluster if ch.shared else 1
            ops += [
                nv.MBarrierInitOp(ch.full, 1),
                nv.MBarrierInitOp(ch.empty, per_thread * self.num_consumers * blocks),
            ]
        ops += [nv.FenceMBarrierInitOp(), nv.CTABarrierOp()]
        if self.cluster > 1:
            ops.append(nv.ClusterBarrierOp())
        self.smem_bytes = offset + SMEM_ALIGN_SLACK
        if offset > nv.MAX_SMEM_BYTES - SMEM_ALIGN_SLACK:
            raise OpDiagnostic(
                self.kernel,
                f"the aref rings{' and the store staging tiles' if self.staging else ''} "
                f"need {offset} bytes of shared memory; a block can have "
                f"{nv.MAX_SMEM_BYTES - SMEM_ALIGN_SLACK}. Use fewer stages or smaller tiles",
            )
        return ops

    def _read_by_threads(self, ch: Channel) -> bool:
        """Whether a consumer reads this aref's tiles with plain shared loads
        (anything but wgmma operands, transposed views and loop-carried views)."""
        gets = [
            u.operation
            for u in ch.create.result.uses
            if isinstance(u.operation, aref.GetOp)
        ]
        return any(
            not isinstance(user, tile.DotOp | tile.TransOp)
            for get in gets
            for v in get.values
            for user in (u.operation for u in uses_through_loops(v))
        )

    # -------------------------------------------------------------- producer

    def _lower_producer(self, region: Region) -> None:
        for put in [o for o in region.walk() if isinstance(o, aref.PutOp)]:
            ch = self.channels[put.aref.owner]
            ops: list[Operation] = []
            slot = slot_of(put.index, ch.depth, ops)
            parity = parity_of(put.index, ch.depth, True, ops)
            ops += [
                nv.MBarrierWaitOp(ch.empty, slot, parity),
                nv.MBarrierArriveExpectTxOp(ch.full, slot, ch.slot_bytes),
            ]
            loads = []
            for value, ring in zip(put.values, ch.rings, strict=True):
                load = value.owner
                if not isinstance(load, tile.LoadOp) or len(list(value.uses)) != 1:
                    raise OpDiagnostic(
                        put, "aref.put must carry tiles loaded only for it"
                    )
                tmap = self.param[("map", load.desc, None)]
                coords = list(load.indices)
                lifted = len(tmap.type.get_shape()) - len(coords)
                coords = [_const(0, ops) for _ in range(lifted)] + coords
                shared = self.cluster if load in self.multicast and ch.shared else None
                ops.append(
                    nv.TMALoadOp(tmap, coords, ring, slot, ch.full, slot, shared)
                )
                loads.append(load)
            _insert_before(ops, put)
            put.detach()
            put.erase()
            for load in loads:
                load.detach()
                load.erase()

    # -------------------------------------------------------------- consumer

    def _lower_consumer(self, region: Region) -> None:
        copy_polymorphic_per_use(region)
        layouts = ConsumerLayouts(region, self.num_consumers)
        try:
            waits = plan_waits(region)
        except ReleaseBeforeReadError as e:
            raise OpDiagnostic(self.ws, str(e)) from e
        for op, pending in waits:
            _insert_before([nv.WgmmaWaitGroupOp(pending)], op)

        self._retype_carried_views(region, layouts)
        for op in list(region.walk()):
            if isinstance(op, aref.GetOp):
                self._lower_get(op)
            elif isinstance(op, tile.TransOp) and isinstance(
                op.source.type, nv.SmemViewType
            ):
                self._replace(op, [nv.SmemTransOp(op.source)])
            elif isinstance(op, tile.DotOp):
                self._lower_dot(op)
            elif isinstance(op, aref.ConsumedOp):
                ch = self.channels[op.aref.owner]
                ops = []
                slot = slot_of(op.index, ch.depth, ops)
                scope = "thread" if ch.thread_release else "warpgroup"
                blocks = self.cluster if ch.shared else None
                self._replace(
                    op, [*ops, nv.MBarrierArriveOp(ch.empty, slot, scope, blocks)]
                )
            elif isinstance(op, tile.StoreOp) and op in self.staging:
                self._replace(op, self._tma_store(op))
            elif isinstance(op, tile.StoreOp):
                target = self.param[("global", op.desc, None)]
                self._replace(
                    op, [nv.StoreGlobalOp(op.value, target, list(op.indices))]
                )

        self._retype(region, layouts)
        block = region.block
        block.add_op(nv.WgmmaWaitGroupOp(0))
        if self.staging:  # the staging tiles must be read out before the block exits
            block.add_op(nv.TMAStoreWaitOp(0))

    def _tma_store(self, store: tile.StoreOp) -> list[Operation]:
        """Registers -> swizzled staging tile -> one TMA store by the first consumer
        thread. The staging tile is only rewritten once the previous store has read
        it out, and only stored once every consumer thread has written and fenced."""
        ops: list[Operation] = []
        zero = _const(0, ops)
        staging = self.staging[store]
        tmap = self.param[("map", store.desc, None)]
        coords = list(store.indices)
        coords = [
            _const(0, ops) for _ in range(len(tmap.type.get_shape()) - len(coords))
        ] + coords
        return [
            *ops,
            nv.TMAStoreWaitOp(0),
            nv.ConsumerBarrierOp(),
            nv.SmemStoreOp(store.value, staging, zero),
            nv.FenceProxyAsyncOp(),
            nv.ConsumerBarrierOp(),
            nv.TMAStoreOp(staging, zero, tmap, coords),
            nv.TMAStoreCommitOp(),
        ]

    def _lower_get(self, get: aref.GetOp) -> None:
        ch = self.channels[get.aref.owner]
        ops: list[Operation] = []
        slot = slot_of(get.index, ch.depth, ops)
        ops.append(
            nv.MBarrierWaitOp(ch.full, slot, parity_of(get.index, ch.depth, False, ops))
        )
        views = []
        for ring in ch.rings:
            view = nv.SmemSlotOp(ring, slot)
            ops.append(view)
            views.append(view.result)
        _insert_before(ops, get)
        for old, new in zip(get.values, views, strict=True):
            new.name_hint = old.name_hint
            old.replace_all_uses_with(new)
        get.detach()
        get.erase()

    def _lower_dot(self, dot: tile.DotOp) -> None:
        if not isinstance(dot.rhs.type, nv.SmemViewType):
            raise OpDiagnostic(
                dot,
                "the B operand of tile.dot must come from shared memory (an aref tile)",
            )
        if isinstance(dot.lhs.type, nv.SmemViewType) and dot.lhs.type.is_transposed:
            raise OpDiagnostic(
                dot, "a transposed A operand is not supported; load A as M x K"
            )
        wgmma = nv.WgmmaOp(dot.lhs, dot.rhs, dot.acc)
        self._replace(dot, [nv.WgmmaFenceOp(), wgmma, nv.WgmmaCommitGroupOp()], wgmma)

    @staticmethod
    def _replace(
        op: Operation, new_ops: list[Operation], result_op: Operation | None = None
    ) -> None:
        _insert_before(new_ops, op)
        if op.results:
            source = result_op or new_ops[-1]
            for old, new in zip(op.results, source.results, strict=True):
                new.name_hint = old.name_hint
                old.replace_all_uses_with(new)
        op.detach()
        op.erase()

    @staticmethod
    def _structural_values(region: Region):
        """Results and block arguments of the ops of `region`, loop and branch
        values included."""
        for op in list(region.walk()):
            yield (
                op,
                list(op.results)
                + [a for reg in op.regions for block in reg.blocks for a in block.args],
            )

    def _retype_carried_views(self, region: Region, layouts: ConsumerLayouts) -> None:
        """Views that loops carry and branches yield (two-stage) become view-typed
        before the ops that use them are lowered."""
        for op, values in self._structural_values(region):
            if isinstance(op, STRUCTURED):
                for v in values:
                    place = layouts.placement.get(v)
                    if isinstance(place, Smem):
                        Rewriter.replace_value_with_new_type(
                            v,
                            nv.SmemViewType(
                                v.type.get_shape(),
                                v.type.element_type,
                                place.transposed,
                            ),
                        )

    def _retype(self, region: Region, layouts: ConsumerLayouts) -> None:
        """Give register tiles their fragment types; load shared tiles used as registers."""
        for op, values in self._structural_values(region):
            for v in values:
                placed = isinstance(v.type, TensorType) and v in layouts.placement
                if placed and not layouts.in_smem(v):
                    Rewriter.replace_value_with_new_type(v, layouts.type_of(v))
            if isinstance(op, arith.ConstantOp) and isinstance(
                op.value, DenseIntOrFPElementsAttr
            ):
                self._retype_constant(op)
        for op in list(region.walk()):
            if isinstance(op, nv.WgmmaOp | nv.SmemTransOp | STRUCTURED) or op.has_trait(
                IsTerminator
            ):
                continue  # views pass through structured ops as they are
            for i, v in enumerate(op.operands):
                if isinstance(v.type, nv.SmemViewType):
                    target = next(
                        (r.type for r in op.results if isinstance(r.type, TensorType)),
                        None,
                    )
                    if target is None or nv.fragment_layout(target) is None:
                        raise OpDiagnostic(
                            op, f"cannot read the shared tile %{v.name_hint} here"
                        )
                    load = nv.SmemLoadOp(
                        v,
                        TensorType(
                            v.type.element_type, v.type.get_shape(), target.encoding
                        ),
                    )
                    _insert_before([load], op)
                    op.operands[i] = load.result
        # wgmma results follow their accumulator's new type
        for op in list(region.walk()):
            if isinstance(op, nv.WgmmaOp) and op.result.type != op.acc.type:
                Rewriter.replace_value_with_new_type(op.result, op.acc.type)

    def _retype_constant(self, op: arith.ConstantOp) -> None:
        """A register constant must be a splat; its value takes the fragment type."""
        values = set(op.value.get_values())
        if len(values) != 1:
            raise OpDiagnostic(op, "only splat constants can live in register tiles")
        new = arith.ConstantOp(
            DenseIntOrFPElementsAttr.from_list(op.result.type, [values.pop()])
        )
        self._replace(op, [new])

    # ------------------------------------------------------------------- run

    def run(self) -> None:
        self._check()
        # how the launch grid follows the arguments, while the stores show it
        # (persistent kernels carry their own rule; others need grid=)
        with contextlib.suppress(GridInferenceError):
            self.kernel.attributes[GRID_ATTR] = encode_rules(
                recorded_grid_rule(self.kernel)
            )
        self._plan_multicast()
        self._lower_params()
        prologue = self._plan_shared_memory()
        producer, consumer = self.ws.producer, self.ws.consumer
        self._lower_producer(producer)
        self._lower_consumer(consumer)

        # the producer warms the descriptors before its first copies need them
        maps = [p for (kind, _, _), p in self.param.items() if kind == "map"]
        for tmap in reversed(maps):
            _prepend(producer.block, nv.PrefetchTensorMapOp(tmap))
        registers = self.ws.registers or default_registers(self.num_consumers)
        _prepend(producer.block, nv.SetMaxNRegOp("dec", registers[0]))
        if registers[1] > entry_register_cap(self.threads):
            _prepend(consumer.block, nv.SetMaxNRegOp("inc", registers[1]))

        dispatch = nv.RoleDispatchOp(Region(), Region(), self.num_consumers, registers)
        producer.move_blocks(dispatch.producer)
        consumer.move_blocks(dispatch.consumer)
        ret = self.body.last_op
        for op in prologue:
            self.body.insert_op_before(op, ret)
        self.body.insert_op_before(dispatch, ret)
        if self.cluster > 1:  # no block leaves while peers may write into it
            self.body.insert_op_before(nv.ClusterBarrierOp(), ret)
        for op in [
            o
            for o in self.body.ops
            if isinstance(o, aref.CreateOp | aref.WarpSpecializeOp)
        ]:
            op.detach()
            op.erase(safe_erase=False)
        self._drop_old_args()
        self.kernel.attributes[LAUNCH_ATTR] = DictionaryAttr(
            {
                "threads": IntegerAttr(self.threads, 64),
                "smem": IntegerAttr(self.smem_bytes, 64),
                "cluster": IntegerAttr(self.cluster, 64),
            }
        )


def _insert_before(ops: list[Operation], anchor: Operation) -> None:
    """Insert the ops that lower `anchor` before it, with its source location, so
    a later diagnostic about one of them (the PTX printer's) names that line."""
    block = anchor.parent_block()
    for o in ops:
        o.location = anchor.location
        block.insert_op_before(o, anchor)


def _prepend(block: Block, op: Operation) -> None:
    if block.first_op is None:
        block.add_op(op)
    else:
        block.insert_op_before(op, block.first_op)


def _tensor_map(
    desc: tile.DescType, tile_type: TensorType, where: Operation
) -> nv.TensorMapType:
    """The TMA map of a tensor moved in tiles of `tile_type`: the tile's box, cut
    into 128-byte chunks (128-byte swizzle) when the tile is a matrix, unswizzled
    for vectors."""
    box = list(desc.get_box())
    esize = element_bytes(desc.element_type)
    tile_rank = len(tile_type.get_shape())
    inner_bytes = box[-1] * esize
    if tile_rank == 1 and desc.rank == 1:
        # A 1-D tensor gets a unit outer dimension: the driver rejects rank-1 maps.
        return nv.TensorMapType((1, *desc.get_shape()), desc.element_type, (1, *box), 0)
    if tile_rank == 1:
        return nv.TensorMapType(desc.get_shape(), desc.element_type, box, 0)
    if inner_bytes % nv.SWIZZLE_BYTES:
        raise OpDiagnostic(
            where,
            f"tile rows of {inner_bytes} bytes: the swizzled TMA path needs rows that are "
            f"a multiple of {nv.SWIZZLE_BYTES} bytes ({nv.SWIZZLE_BYTES // esize} elements)",
        )
    box[-1] = nv.SWIZZLE_BYTES // esize
    return nv.TensorMapType(desc.get_shape(), desc.element_type, box, nv.SWIZZLE_BYTES)
