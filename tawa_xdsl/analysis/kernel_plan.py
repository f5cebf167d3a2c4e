"""What `convert-aref-to-nvgpu-async` makes of one warp-specialized kernel.

The lowering decides everything about a kernel here, before it rewrites an op,
so that the decisions can be read and tested on their own and its rewrite
patterns only build what the plan says:

- Parameters (`Param`, recorded as `#nvgpu_async.param`s in `nvgpu_async.abi`): each
  `!tile.desc` becomes what its uses need: a TMA tensor map if the producer
  loads it or a consumer stores it through TMA, a plain global tensor if a
  consumer stores it from registers, and an index parameter per `tile.dim`;
  scalars stay.
- Stores (`KernelPlan.staging`): a matrix tile of 128-byte rows goes through a
  swizzled staging tile and one TMA store when no coordinate can be negative, the
  innermost is a whole number of 16 bytes (`coordinates`: a TMA store there
  faults the H100) and the staging tiles fit in shared memory next to the rings;
  any other store goes from registers (`tma_store=False` forces that).
- Channels (`ChannelPlan`): per aref, one ring of `depth` slots per payload tile
  (128-byte swizzled, each slot 1024-byte aligned) and two mbarrier arrays,
  `full` (one arrival: the producer's expect_tx; one per producer thread
  more where those threads load some of its tiles, `thread_loads`) and `empty` (one arrival per
  consumer warpgroup, or per consumer thread when the tiles are read with plain
  shared loads; times the cluster size when its slots are multicast).
- Thread loads (`KernelPlan.thread_loads`): the tensors named there are
  global tensors whose tiles the producer warpgroup's threads copy into the
  slots (`thread_load`), matrix tiles of rank-2 inputs only, outside clusters
  and tile counters; any coordinate will do (TMA's 16-byte rule does not
  apply).
- Multicast (`KernelPlan.multicast`, with clusters): the producer loads every
  block of a cluster issues alike (`uniformity.cluster_uniform`, at a uniform
  aref index); each block copies its share of them into every block.
- Shared memory: rings, then staging tiles, then the column reductions'
  scratch (`column_scratch`: one f32 row per consumer warp, as wide as the
  widest reduced tile), then barriers, at the offsets the plan gives (1024-byte aligned tiles, 8-byte barriers, none overlapping);
  the launch asks for their end plus `SMEM_ALIGN_SLACK`.
- Launch: threads (a producer and the consumer warpgroups), shared memory, the
  cluster size, the `setmaxnreg` budgets (`register-budget`'s, or
  `compiler.default_registers`), and the grid rule while the stores still show it.

Kernels outside what the hardware path supports get a diagnostic at the op:
top-level ops other than arefs, MMA shapes wgmma cannot issue, nothing to
multicast, tiles TMA cannot move swizzled, more shared memory
than a block has, a put that carries anything but tiles loaded for it (or a
ticket).

A ring of tile tickets (`persistent{dynamic=true}`, an aref of one `index`)
gets slots of one i32 (`TICKET_TYPE`), its `full` barrier the producer
thread's plain arrive after it stores the ticket (no TMA, no transaction
bytes) and its `empty` barrier one arrival per consumer thread, each of which
reads the ticket with a shared load.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, IndexType, IntegerType, TensorType
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from tawa_xdsl.analysis.carried import uses_through_loops
from tawa_xdsl.analysis.coordinates import multiple_of, non_negative
from tawa_xdsl.analysis.uniformity import cluster_uniform, rank_varying
from tawa_xdsl.compiler import default_registers
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects.nvgpu_async import SMEM_ALIGN_SLACK, ParamKind
from tawa_xdsl.dialects.tile import element_bytes, is_fp8, tile_bytes
from tawa_xdsl.grid import GridInferenceError, encode_rules, recorded_grid_rule
from tawa_xdsl.kernel import PERSISTENT_ATTR, cluster_size
from tawa_xdsl.signature import Param as CallerParam
from tawa_xdsl.signature import params as caller_params
from tawa_xdsl.target import (
    MAX_SMEM_BYTES,
    MBARRIER_BYTES,
    SLOT_ALIGN,
    SWIZZLE_BYTES,
    SWIZZLE_SPANS,
    THREADS_PER_WARPGROUP,
    TMA_ALIGN,
    swizzle_span,
)

SMEM_BUDGET = MAX_SMEM_BYTES - SMEM_ALIGN_SLACK
"""Bytes a block's allocations may take (`launch_smem_bytes` adds the slack)."""


RING_PROTOCOL = (
    (aref.PutOp, "never put: the consumers would wait forever at its aref.get"),
    (
        aref.GetOp,
        "never gotten: the producer would wait forever for a free slot once "
        "the ring is full",
    ),
    (
        aref.ConsumedOp,
        "never released (aref.consumed): the producer would wait forever for a "
        "free slot once the ring is full",
    ),
)
"""What a ring's users must do, and what happens on the GPU when none does."""


@dataclass(frozen=True)
class Param:
    """One parameter of the lowered kernel, made from tile-level argument `arg`."""

    kind: ParamKind
    arg: int
    type: Attribute
    name: str | None
    axis: int | None = None

    @property
    def abi(self) -> nv.ParamAttr:
        """Its entry in the kernel's ABI: how the launch fills it."""
        return nv.ParamAttr(self.kind, self.arg, self.type, self.axis)


@dataclass(frozen=True)
class Allocation:
    """Bytes `[offset, end)` of the block's dynamic shared memory."""

    offset: int
    type: nv.SmemType | nv.MBarrierType
    name: str | None

    @property
    def end(self) -> int:
        return self.offset + self.type.total_bytes


@dataclass(frozen=True)
class ChannelPlan:
    """The shared memory and barriers of one aref."""

    create: aref.CreateOp
    rings: tuple[Allocation, ...]
    """One ring per payload tile, in payload order."""
    full: Allocation
    empty: Allocation
    thread_release: bool
    """Consumer threads read its tiles with plain shared loads, so each thread
    releases a slot (not one thread per warpgroup after its wgmmas)."""
    multicast: bool
    """Some of its tiles are multicast: every block's producer writes its slots,
    so the consumers release them in every block of the cluster."""
    empty_arrivals: int
    by_threads: tuple[bool, ...] = ()
    """Per payload tile: the producer's threads load it (`thread_load`), not TMA."""
    transposed: tuple[bool, ...] = ()
    """Per payload tile: an 8-bit B operand that TMA loads MN-major into a
    staging buffer and the producer's threads copy transposed into the ring
    (`transpose_copy`), which then holds it K-major."""
    staging: tuple[Allocation, ...] = ()
    """The staging buffer of each transposed tile, in payload order: one slot,
    free again once the producer's threads have read it (before their barrier),
    so the next put's copy may refill it."""
    staged: Allocation | None = None
    """The barrier the staging copies complete on (one arrival: their
    expect_tx), waited for by every producer thread with the put's parity."""

    @property
    def by_producer(self) -> tuple[bool, ...]:
        """Per payload tile: the producer's threads write its slot (they load
        it, or transpose it out of its staging buffer), not TMA."""
        if not self.transposed:
            return self.by_threads
        return tuple(
            a or b for a, b in zip(self.by_threads, self.transposed, strict=True)
        )

    @property
    def full_arrivals(self) -> int:
        """Arrivals that complete a phase of `full`: the expect_tx of the TMA
        copies, if any; every producer thread's after its thread loads, if any
        (`thread_loads_arrive`: each counts, so the copies alone cannot
        complete a slot whose thread-loaded tiles are still landing); and one
        elected producer thread's after the transposing copies, if any (after
        the producer barrier that orders every thread's writes before it)."""
        threads = THREADS_PER_WARPGROUP if any(self.by_threads) else 0
        return int(not all(self.by_producer)) + threads + int(any(self.transposed))

    @property
    def tma_bytes(self) -> int:
        """Bytes the TMA copies into the ring of one put deliver: what `full`'s
        expect_tx arms."""
        types = self.create.result.type.types
        loaded = self.by_producer or (False,) * len(types)
        return _slot_bytes([t for t, th in zip(types, loaded, strict=True) if not th])

    @property
    def staged_bytes(self) -> int:
        """Bytes the copies into the staging buffers deliver: what `staged`'s
        expect_tx arms."""
        return sum(a.type.tile_bytes for a in self.staging)

    @property
    def depth(self) -> int:
        return self.create.result.type.num_slots

    @property
    def tickets(self) -> bool:
        """A ring of tile tickets (stored by the producer thread, not TMA)."""
        return is_ticket_ring(self.create.result.type)

    @property
    def slot_bytes(self) -> int:
        """Bytes one put delivers (`tma_bytes` of them by TMA)."""
        return _slot_bytes(self.create.result.type.types)


TICKET_TYPE = IntegerType(32)
"""How a tile ticket is held in shared memory (`tile.next_tile` counts in u32)."""


def is_ticket_ring(t: aref.ArefType) -> bool:
    return t.types == (IndexType(),)


def _slot_bytes(payload: Sequence[Attribute]) -> int:
    return sum(
        tile_bytes(t.get_shape(), t.element_type)
        if isinstance(t, TensorType)
        else element_bytes(TICKET_TYPE)
        for t in payload
    )


def ring_bytes(depth: int, slot_bytes: int) -> int:
    """Shared memory a ring of `depth` slots takes with its `full` and `empty`
    barriers, before the slots are padded to `SLOT_ALIGN`: what the store policy
    (and the tuning, choosing a depth) count before the offsets are laid out."""
    return depth * (slot_bytes + 2 * MBARRIER_BYTES)


STAGED_BUDGET = SMEM_BUDGET - SLOT_ALIGN
"""What rings (`ring_bytes`) and staging tiles may take together: one
`SLOT_ALIGN` is left to align the staging tiles."""


def staging_fits(rings: int, staging: int) -> bool:
    """Whether staging tiles of `staging` bytes fit next to rings of `rings` bytes."""
    return rings + staging <= STAGED_BUDGET


def column_scratch_bytes(widths: Iterable[int], warpgroups: int) -> int:
    """Shared memory the column reductions' scratch takes (0: none), laid out
    aligned as every slot is, for reductions of tiles of these column counts
    over `warpgroups` consumer warpgroups: what the store policy and the
    tuning (choosing a depth) count next to the rings."""
    words = max((nv.column_scratch_words(c, warpgroups) for c in widths), default=0)
    return -(-4 * words // SLOT_ALIGN) * SLOT_ALIGN


def column_reductions(ops: Iterable[Operation]) -> list[tile.ReduceOp]:
    """The reductions along a tile's columns (axis 0) among `ops`."""
    return [
        op
        for op in ops
        if isinstance(op, tile.ReduceOp)
        and op.axis.value.data == 0
        and len(op.source.type.get_shape()) == 2
    ]


def stages_that_fit(slot_bytes: int, fixed: int) -> int:
    """The most slots of `slot_bytes` (with their barriers) that fit next to
    `fixed` bytes of staging tiles, counted as the store policy counts them."""
    return (STAGED_BUDGET - fixed) // ring_bytes(1, slot_bytes)


@dataclass
class KernelPlan:
    """The lowering of one warp-specialized kernel, decided. Build it with
    `KernelPlan.of`; see the module docstring."""

    kernel: func.FuncOp
    ws: aref.WarpSpecializeOp
    tma_store: bool = True
    thread_loads: frozenset[str] = frozenset()
    """The tensor parameters (by name) whose tiles the producer's threads load
    (`thread_load`) instead of TMA."""
    caller: list[CallerParam] = field(default_factory=list)
    """The tile-level parameters callers pass (recorded on the lowered kernel)."""
    grid: Attribute | None = None
    """The launch grid rule, while the stores still show it (None: callers give it)."""
    multicast: set[tile.LoadOp] = field(default_factory=set)
    params: list[Param] = field(default_factory=list)
    staging: dict[tile.StoreOp, Allocation] = field(default_factory=dict)
    """The stores that go through a staging tile and TMA; the others go from
    registers."""
    channels: dict[SSAValue, ChannelPlan] = field(default_factory=dict)
    """By aref value, in the order of the `aref.create`s."""
    column_scratch: Allocation | None = None
    """The scratch every column reduction (`tile.reduce` along axis 0) of the
    consumers exchanges its warps' partials through, one after another (each
    waits at a consumer barrier before it writes), sized for the widest."""
    smem_end: int = 0

    @staticmethod
    def of(
        kernel: func.FuncOp,
        ws: aref.WarpSpecializeOp,
        tma_store: bool = True,
        thread_loads: frozenset[str] = frozenset(),
    ) -> KernelPlan:
        """Plan `kernel`, whose body is `aref.create`s and `ws`; raise an
        `OpDiagnostic` for what the hardware path cannot do."""
        plan = KernelPlan(kernel, ws, tma_store, thread_loads)
        plan._check()
        plan._check_protocol()
        with contextlib.suppress(GridInferenceError):
            plan.grid = encode_rules(recorded_grid_rule(kernel))
        plan._plan_multicast()
        staged = plan._plan_params()
        plan._refuse_register_stored_fp8(staged)
        plan._plan_shared_memory(staged)
        plan._check_puts()
        return plan

    # ----------------------------------------------------------------- facts

    @property
    def num_consumers(self) -> int:
        return self.ws.num_consumers.value.data

    @property
    def threads(self) -> int:
        return THREADS_PER_WARPGROUP * (1 + self.num_consumers)

    @property
    def cluster(self) -> int:
        return cluster_size(self.kernel)

    @property
    def smem_bytes(self) -> int:
        """Dynamic shared memory the launch asks for."""
        return nv.launch_smem_bytes(self.smem_end)

    @property
    def registers(self) -> tuple[int, int]:
        """setmaxnreg budgets (producer, consumer)."""
        return self.ws.registers or default_registers(self.num_consumers)

    @property
    def abi(self) -> list[nv.ParamAttr]:
        return [p.abi for p in self.params]

    @property
    def allocations(self) -> list[Allocation]:
        """Every allocation, in the order the prologue makes them: rings, staging
        tiles, the column reductions' scratch, then each channel's `full` and `empty` barriers."""
        channels = self.channels.values()
        rings = [r for ch in channels for r in (*ch.rings, *ch.staging)]
        barriers = [
            b
            for ch in channels
            for b in (ch.full, ch.empty, *([ch.staged] if ch.staged else []))
        ]
        scratch = [self.column_scratch] if self.column_scratch else []
        return [*rings, *self.staging.values(), *scratch, *barriers]

    def by_threads(self, load: tile.LoadOp) -> bool:
        """Whether the producer's threads load `load`'s tile (`thread_loads`)."""
        return isinstance(load.desc, BlockArgument) and (
            load.desc.name_hint in self.thread_loads
        )

    @property
    def producer_threads(self) -> bool:
        """Whether the whole producer warpgroup runs the producer role (some
        tile is loaded or transposed by its threads), not its thread 0 alone."""
        return any(
            self.by_threads(op)
            for op in self.ws.producer.walk()
            if isinstance(op, tile.LoadOp)
        ) or any(any(ch.transposed) for ch in self.channels.values())

    def transposed_gets(self) -> frozenset[SSAValue]:
        """The `aref.get` results whose rings hold their tiles transposed
        (`ChannelPlan.transposed`): the consumer reads them as transposed views."""
        return frozenset(
            get.values[i]
            for ch in self.channels.values()
            for use in ch.create.result.uses
            if isinstance(get := use.operation, aref.GetOp)
            for i, flip in enumerate(ch.transposed)
            if flip
        )

    def is_multicast(self, load: tile.LoadOp, channel: ChannelPlan) -> bool:
        """Whether `load`'s copy goes to every block of the cluster."""
        return load in self.multicast and channel.multicast

    # ---------------------------------------------------------------- checks

    def _check(self) -> None:
        for op in self.kernel.body.block.ops:
            if not isinstance(
                op, aref.CreateOp | aref.WarpSpecializeOp | func.ReturnOp
            ):
                raise OpDiagnostic(
                    op,
                    "convert-aref-to-nvgpu-async expects only aref.create and one "
                    "aref.warp_specialize at the top of a kernel",
                )
        consumers = self.num_consumers
        for op in self.ws.consumer.walk():
            if isinstance(op, tile.DotOp):
                (m, k), n = op.lhs.type.get_shape(), op.rhs.type.get_shape()[1]
                if m % (64 * consumers):
                    raise OpDiagnostic(
                        op,
                        f"M = {m} rows cannot be split into 64-row wgmma "
                        f"blocks over {consumers} consumer warpgroup{'s' if consumers > 1 else ''}",
                    )
                if n % 8 or n > 256:
                    raise OpDiagnostic(
                        op,
                        f"N = {n}: wgmma needs a multiple of 8 up to 256",
                    )
                step = nv.wgmma_k(op.lhs.type.element_type)
                if k % step:
                    raise OpDiagnostic(
                        op,
                        f"K = {k}: wgmma needs a multiple of {step} "
                        f"for {op.lhs.type.element_type} inputs",
                    )

    def _check_protocol(self) -> None:
        """Each ring the roles use is put, gotten and released: on the GPU a
        ring never put leaves the consumers waiting at their first get, and one
        never gotten or released the producer waiting for a free slot once the
        ring is full, forever (the simulators find the hang; the lowering
        printed it)."""
        for create in self.kernel.body.block.ops:
            if not isinstance(create, aref.CreateOp) or not create.result.uses:
                continue
            used = {type(use.operation) for use in create.result.uses}
            for op, missing in RING_PROTOCOL:
                if op not in used:
                    raise OpDiagnostic(
                        create, f"ring %{create.result.name_hint} is {missing}"
                    )

    def _check_puts(self) -> None:
        for put in self.ws.producer.walk():
            if isinstance(put, aref.PutOp) and is_ticket_ring(put.aref.type):
                continue  # the ticket is a scalar the producer stores itself
            if isinstance(put, aref.PutOp) and len(set(put.values)) < len(put.values):
                raise OpDiagnostic(
                    put,
                    "aref.put carries one tile.load's tile in two slots: cse merged "
                    "identical loads after aref-partition; run cse before "
                    "aref-partition (as tawa-hopper-pipeline does)",
                )
            if isinstance(put, aref.PutOp) and not all(
                isinstance(v.owner, tile.LoadOp) and len(list(v.uses)) == 1
                for v in put.values
            ):
                raise OpDiagnostic(put, "aref.put must carry tiles loaded only for it")
        for load in self.ws.producer.walk():
            if isinstance(load, tile.LoadOp) and self.by_threads(load):
                self._check_thread_load(load)
            elif isinstance(load, tile.LoadOp):
                _check_box_start(load)
            elif self.producer_threads and isinstance(
                load, tile.NextTileOp | tile.ClusterRankOp
            ):
                raise OpDiagnostic(
                    load,
                    f"{load.name} with thread_loads (or an 8-bit B tile the "
                    "producer's threads transpose): the producer's threads write "
                    "slots in lock step, which a tile counter or a cluster does not "
                    "take yet (drop dynamic_tiles / cluster, or thread_loads, or "
                    "load the B tile N x K)",
                )

    def _check_thread_load(self, load: tile.LoadOp) -> None:
        """A tile the producer's threads load: a swizzled matrix of a rank-2
        tensor, in a ring of its own kind (every put of the aref loads it so),
        never also stored, outside clusters."""
        t = load.result.type
        esize = element_bytes(t.element_type)
        if load.desc.type.rank != 2 or len(t.get_shape()) != 2:
            raise OpDiagnostic(
                load,
                "thread_loads: the producer's threads load matrix tiles of "
                "rank-2 tensors only",
            )
        if swizzle_span(t.get_shape()[-1] * esize) is None:
            raise OpDiagnostic(
                load,
                f"thread_loads: tile rows of {t.get_shape()[-1] * esize} bytes; the "
                f"swizzled slots need a multiple of {SWIZZLE_SPANS[-1]} bytes",
            )
        if self.cluster > 1:
            raise OpDiagnostic(
                load,
                "thread_loads: the producer's threads do not multicast in a "
                "cluster (drop cluster, or thread_loads)",
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

    def _plan_params(self) -> list[tile.StoreOp]:
        """The parameters; returns the stores that go through TMA."""
        self.caller = caller_params(self.kernel)
        staged: list[tile.StoreOp] = []
        producer_loads = [
            o for o in self.ws.producer.walk() if isinstance(o, tile.LoadOp)
        ]
        stores = [o for o in self.ws.consumer.walk() if isinstance(o, tile.StoreOp)]
        dims = [o for o in self.kernel.walk() if isinstance(o, tile.DimOp)]
        for i, arg in enumerate(self.kernel.body.block.args):
            if not isinstance(arg.type, tile.DescType):
                self.params.append(Param(ParamKind.SCALAR, i, arg.type, arg.name_hint))
                continue
            desc = arg.type
            loads = [ld for ld in producer_loads if ld.desc is arg]
            stored = [st for st in stores if st.desc is arg]
            if loads and stored and not self._fits_tma_stores([*staged, *stored]):
                # one tensor map serves the loads and the TMA stores (both take
                # the descriptor's box); a register store needs the tensor's
                # pointer, which a loaded parameter does not pass
                st = next(
                    (st for st in stored if not staged_store(st, self.tma_store)),
                    stored[0],
                )
                raise OpDiagnostic(
                    st,
                    f"tile.store into %{arg.name_hint}, which the producer also "
                    "loads: such a tensor is stored through TMA with its loads' "
                    f"tensor map, and this store cannot be: "
                    f"{self._register_store_reason(st)}",
                )
            threads = bool(loads) and arg.name_hint in self.thread_loads
            if threads and stored:
                raise OpDiagnostic(
                    stored[0],
                    f"thread_loads names %{arg.name_hint}, which the kernel also "
                    "stores: only inputs are loaded by the producer's threads",
                )
            if not threads and (
                loads or (stored and self._fits_tma_stores([*staged, *stored]))
            ):
                first = loads[0] if loads else stored[0]
                tile_type = first.result.type if loads else stored[0].value.type
                tmap = _tensor_map(desc, tile_type, first)
                self.params.append(Param(ParamKind.MAP, i, tmap, arg.name_hint))
                staged += stored
            elif stored or threads:  # plain loads and stores take its pointer
                self.params.append(
                    Param(
                        ParamKind.GLOBAL,
                        i,
                        nv.GlobalTensorType(desc.get_shape(), desc.element_type),
                        arg.name_hint,
                    )
                )
            for axis in sorted({d.axis.value.data for d in dims if d.desc is arg}):
                self.params.append(
                    Param(
                        ParamKind.DIM,
                        i,
                        IndexType(),
                        f"{arg.name_hint}_dim{axis}",
                        axis,
                    )
                )
        loaded = {ld.desc.name_hint for ld in producer_loads}
        unknown = sorted(self.thread_loads - loaded)
        if unknown:
            raise OpDiagnostic(
                self.kernel,
                f"thread_loads names {', '.join(unknown)}, which @"
                f"{self.kernel.sym_name.data}'s producer does not load (it loads "
                f"{', '.join(sorted(n for n in loaded if n)) or 'nothing'})",
            )
        return staged

    def _refuse_register_stored_fp8(self, staged: list[tile.StoreOp]) -> None:
        """8-bit float tiles are stored through TMA only (their registers
        hold pairs, which the register store path does not split): one that
        cannot be is refused here, at its store, saying why (a matrix tile was
        refused at the thread level without a reason, though the cause is an
        option or the coordinates: tma_store off, a persistent walk whose tile
        indices are not proven non-negative; a vector was an internal error)."""
        for st in self.ws.consumer.walk():
            if (
                isinstance(st, tile.StoreOp)
                and st not in staged
                and is_fp8(st.value.type.element_type)
            ):
                raise OpDiagnostic(
                    st,
                    "8-bit float tiles are stored through TMA only (their registers "
                    "hold pairs, which the register store path does not split), and "
                    f"this store cannot be: {self._register_store_reason(st)}",
                )

    def _register_store_reason(self, store: tile.StoreOp) -> str:
        return register_store_reason(
            store, self.tma_store, PERSISTENT_ATTR in self.kernel.attributes
        )

    def _fits_tma_stores(self, staged: list[tile.StoreOp]) -> bool:
        """Whether these stores go through swizzled staging tiles and TMA: each
        one `staged_store` takes, when the staging tiles fit in shared memory
        next to the rings and the column reductions' scratch (else the stores
        go straight from registers)."""
        if not all(staged_store(st, self.tma_store) for st in staged):
            return False
        creates = [
            c for c in self.kernel.body.block.ops if isinstance(c, aref.CreateOp)
        ]
        rings = sum(
            ring_bytes(c.result.type.num_slots, _slot_bytes(c.result.type.types))
            for c in creates
        )
        staging = sum(
            tile_bytes(st.value.type.get_shape(), st.value.type.element_type)
            for st in staged
        )
        scratch = column_scratch_bytes(self._reduced_widths(), self.num_consumers)
        return staging_fits(rings, staging + scratch)

    # ---------------------------------------------------------- shared memory

    def _plan_shared_memory(self, staged: list[tile.StoreOp]) -> None:
        offset = 0
        rings: dict[aref.CreateOp, list[Allocation]] = {}
        creates = [
            c for c in self.kernel.body.block.ops if isinstance(c, aref.CreateOp)
        ]
        transposed = {c: self._transposed_by_producer(c) for c in creates}
        buffers: dict[aref.CreateOp, list[Allocation]] = {}
        for create in creates:
            depth = create.result.type.num_slots
            for t, flip in zip(
                create.result.type.types, transposed[create], strict=True
            ):
                if isinstance(t, TensorType):
                    shape = t.get_shape()[::-1] if flip else t.get_shape()
                    ring = nv.SmemType(depth, shape, t.element_type)
                else:
                    ring = nv.SmemType(depth, (1,), TICKET_TYPE)
                rings.setdefault(create, []).append(
                    Allocation(offset, ring, create.result.name_hint)
                )
                offset += ring.total_bytes
            for t, flip in zip(
                create.result.type.types, transposed[create], strict=True
            ):
                if flip:  # slot-sized: the offset stays aligned
                    buffer = nv.SmemType(1, t.get_shape(), t.element_type)
                    name = f"{create.result.name_hint or 'ring'}_staging"
                    buffers.setdefault(create, []).append(
                        Allocation(offset, buffer, name)
                    )
                    offset += buffer.total_bytes
        for store in staged:
            t = store.value.type
            offset = -(-offset // SLOT_ALIGN) * SLOT_ALIGN  # swizzled tiles align
            staging = Allocation(
                offset,
                nv.SmemType(1, t.get_shape(), t.element_type),
                f"{store.desc.name_hint or 'out'}_staging",
            )
            self.staging[store] = staging
            offset = staging.end
        if words := self._column_scratch_words():
            offset = -(-offset // SLOT_ALIGN) * SLOT_ALIGN  # smem_alloc aligns
            self.column_scratch = Allocation(
                offset, nv.SmemType(1, (words,), Float32Type()), "column_scratch"
            )
            offset = self.column_scratch.end
        for create in creates:
            # every consumer thread reads a ticket with a shared load
            thread_release = is_ticket_ring(
                create.result.type
            ) or self._read_by_threads(create)
            multicast = not thread_release and any(
                v.owner in self.multicast
                for use in create.result.uses
                if isinstance(use.operation, aref.PutOp)
                for v in use.operation.values
            )
            barriers = []
            for name in ("full", "empty"):
                bars = Allocation(
                    offset,
                    nv.MBarrierType(create.result.type.num_slots),
                    f"{create.result.name_hint}_{name}",
                )
                offset = bars.end
                barriers.append(bars)
            staged = None
            if create in buffers:
                name = f"{create.result.name_hint}_staged"
                staged = Allocation(offset, nv.MBarrierType(1), name)
                offset = staged.end
            per_thread = THREADS_PER_WARPGROUP if thread_release else 1
            blocks = self.cluster if multicast else 1
            self.channels[create.result] = ChannelPlan(
                create,
                tuple(rings.get(create, ())),
                *barriers,
                thread_release,
                multicast,
                per_thread * self.num_consumers * blocks,
                self._loaded_by_threads(create),
                transposed[create] if create in buffers else (),
                tuple(buffers.get(create, ())),
                staged,
            )
        self.smem_end = offset
        if offset > SMEM_BUDGET:
            parts = ["the aref rings"]
            if self.staging:
                parts.append("the store staging tiles")
            if self.column_scratch:
                parts.append(
                    f"the column reductions' scratch ({self.column_scratch.type.tile_bytes} bytes)"
                )
            raise OpDiagnostic(
                self.kernel,
                f"{', '.join(parts[:-1])}{' and ' if len(parts) > 1 else ''}{parts[-1]} "
                f"need {offset} bytes of shared memory; a block can have "
                f"{SMEM_BUDGET}. Use fewer stages or smaller tiles",
            )

    def _loaded_by_threads(self, create: aref.CreateOp) -> tuple[bool, ...]:
        """Per payload tile of `create`'s ring, whether the producer's threads
        load it; every put must agree (one `full` arrival count serves them)."""
        kinds = {
            tuple(
                isinstance(v.owner, tile.LoadOp) and self.by_threads(v.owner)
                for v in use.operation.values
            )
            for use in create.result.uses
            if isinstance(use.operation, aref.PutOp)
        }
        if len(kinds) > 1:
            raise OpDiagnostic(
                create,
                f"ring %{create.result.name_hint}: thread_loads names a tensor "
                "some puts of this ring load and others do not load in the same "
                "slot position",
            )
        return kinds.pop() if kinds else ()

    def _transposed_by_producer(self, create: aref.CreateOp) -> tuple[bool, ...]:
        """Per payload tile of `create`'s ring: an 8-bit tile that TMA loads and
        every consumer reads only as the B operand of a `tile.dot` as loaded,
        K x N (MN-major), which wgmma cannot read; the producer's threads
        transpose it into its ring. Refused in clusters (its copy would have to
        reach every block)."""
        gets = [
            u.operation
            for u in create.result.uses
            if isinstance(u.operation, aref.GetOp)
        ]
        loads = self._loaded_by_threads(create)
        flips = []
        for i, t in enumerate(create.result.type.types):
            uses = [u for g in gets for u in uses_through_loops(g.values[i])]
            flips.append(
                isinstance(t, TensorType)
                and tile.is_fp8(t.element_type)
                and not (loads and loads[i])
                and bool(uses)
                and all(
                    isinstance(u.operation, tile.DotOp) and u.index == 1 for u in uses
                )
            )
        if any(flips) and self.cluster > 1:
            raise OpDiagnostic(
                next(
                    u.operation
                    for u in uses_through_loops(gets[0].values[flips.index(True)])
                ),
                "an 8-bit B operand loaded K x N (MN-major) is transposed by the "
                "producer's threads, which do not multicast in a cluster (drop "
                "cluster, or load the B tile N x K and transpose it: tile.trans)",
            )
        return tuple(flips)

    def _column_scratch_words(self) -> int:
        """32-bit words of the scratch the widest column reduction needs (0: none)."""
        return max(
            (
                nv.column_scratch_words(cols, self.num_consumers)
                for cols in self._reduced_widths()
            ),
            default=0,
        )

    def _reduced_widths(self) -> list[int]:
        """The columns of each tile the consumers reduce along axis 0."""
        return [
            op.source.type.get_shape()[1]
            for op in column_reductions(self.ws.consumer.walk())
        ]

    @staticmethod
    def _read_by_threads(create: aref.CreateOp) -> bool:
        """Whether a consumer reads this aref's tiles with plain shared loads
        (anything but wgmma operands, transposed views and loop-carried views)."""
        gets = [
            u.operation
            for u in create.result.uses
            if isinstance(u.operation, aref.GetOp)
        ]
        return any(
            not isinstance(user, tile.DotOp | tile.TransOp)
            for get in gets
            for v in get.values
            for user in (u.operation for u in uses_through_loops(v))
        )


def _check_box_start(load: tile.LoadOp) -> None:
    """TMA copies a box only from a 16-byte boundary of the innermost dimension
    (the H100 stops with an illegal instruction otherwise), and loads have no
    other path: the innermost coordinate must provably be a multiple of 16 bytes."""
    esize = element_bytes(load.result.type.element_type)
    if not multiple_of(load.indices[-1], TMA_ALIGN // esize):
        raise OpDiagnostic(
            load,
            f"the innermost coordinate must be a provable multiple of "
            f"{TMA_ALIGN // esize} elements ({TMA_ALIGN} bytes): TMA starts a "
            "box only on a 16-byte boundary (round it down and pick the element "
            "out of the tile)",
        )


def staged_store(
    store: tile.StoreOp, tma_store: bool = True, shape: Sequence[int] | None = None
) -> bool:
    """Whether `store` goes through a swizzled staging tile and one TMA store
    where shared memory leaves room for the tile (else it goes from
    registers): with `tma_store`, a matrix tile that is not a transpose (a
    register tile stored transposed goes from registers, element by element,
    `store_global transposed`) and of more than one row (staging
    takes the accumulator layout) of whole 128-byte rows, at coordinates a TMA
    store takes: none negative (TMA faults below 0), the innermost 16-byte
    aligned (TMA faults off a 16-byte boundary). `shape` is the tile's once
    `tile-shape` resizes it (the tuning asks before: it reserves shared
    memory only for the staging tiles the lowering will lay out), else its
    type's; the coordinates are read as written (tile sizes stay multiples
    of 16 bytes)."""
    t = store.value.type
    dims = tuple(shape if shape is not None else t.get_shape())
    esize = element_bytes(t.element_type)
    return (
        tma_store
        and not isinstance(store.value.owner, tile.TransOp)
        and len(dims) >= 2
        and dims[-2] > 1
        and dims[-1] * esize % SWIZZLE_BYTES == 0
        and all(non_negative(i) for i in store.indices)
        and multiple_of(store.indices[-1], 16 // esize)
    )


def register_store_reason(
    store: tile.StoreOp, tma_store: bool = True, persistent: bool = False
) -> str:
    """Why `store` goes from registers: the first condition of `staged_store`
    it fails (naming the coordinate not proven, and for a `persistent` kernel
    the walks that leave it unproven), or where it meets them all, that shared
    memory has no room left to stage it."""
    t = store.value.type
    dims, esize = t.get_shape(), element_bytes(t.element_type)
    if not tma_store:
        return "tma_store is off"
    if len(dims) < 2 or dims[-2] <= 1:
        return "it is a vector (TMA stores stage matrix tiles)"
    if dims[-1] * esize % SWIZZLE_BYTES:
        return f"its rows are {dims[-1] * esize} bytes, not whole {SWIZZLE_BYTES}"
    for axis, index in enumerate(store.indices):
        if not non_negative(index):
            walk = (
                "; a persistent kernel's tile index taken from the tile counter "
                "(dynamic_tiles) or counted down from the last row (longest_first) "
                "is not proven so"
                if persistent
                else ""
            )
            return (
                f"its coordinate {axis} is not provably non-negative (a TMA store "
                f"below 0 faults){walk}"
            )
    if not multiple_of(store.indices[-1], 16 // esize):
        return "its innermost coordinate is not a provable multiple of 16 bytes"
    return "no shared memory is left to stage it"


def _tensor_map(
    desc: tile.DescType, tile_type: TensorType, where: Operation
) -> nv.TensorMapType:
    """The TMA map of a tensor moved in tiles of `tile_type`: the tile's box, cut
    into column chunks of the widest swizzle span dividing its rows when the tile
    is a matrix (`target.swizzle_span`, as `SmemType.swizzle_bytes` lays the
    slots out), unswizzled for vectors."""
    box = list(desc.get_box())
    esize = element_bytes(desc.element_type)
    tile_rank = len(tile_type.get_shape())
    inner_bytes = box[-1] * esize
    if tile_rank == 1 and desc.rank == 1:
        # A 1-D tensor gets a unit outer dimension: the driver rejects rank-1 maps.
        return nv.TensorMapType((1, *desc.get_shape()), desc.element_type, (1, *box), 0)
    if tile_rank == 1:
        return nv.TensorMapType(desc.get_shape(), desc.element_type, box, 0)
    span = swizzle_span(inner_bytes)
    if span is None:
        smallest = SWIZZLE_SPANS[-1]
        raise OpDiagnostic(
            where,
            f"tile rows of {inner_bytes} bytes: the swizzled TMA path needs rows of "
            f"a multiple of {smallest} bytes ({smallest // esize} elements)",
        )
    rows = math.prod(box[:-1])
    if inner_bytes > span and rows % 8 == 0 and rows * span % SLOT_ALIGN:
        # the chunks lie back to back in the slot: only whole 1024-byte chunks
        # keep every one on the boundary TMA and wgmma take the swizzle from
        # (other row counts are refused where the tile is used, with reasons
        # of their own: registers hold rows in 8-row groups)
        raise OpDiagnostic(
            where,
            f"a tile of {rows} rows cut into {span}-byte swizzle chunks of "
            f"{rows * span} bytes: swizzled chunks start on {SLOT_ALIGN}-byte "
            "boundaries, so a tile of several chunks needs a multiple of "
            f"{SLOT_ALIGN // span} rows",
        )
    box[-1] = span // esize
    return nv.TensorMapType(desc.get_shape(), desc.element_type, box, span)
