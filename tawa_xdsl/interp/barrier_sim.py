"""The barrier simulator: runs lowered (nvgpu_async) kernels at warpgroup granularity.

Actors run as seeded coroutines: the producer (one elected thread), one actor
per consumer warpgroup and the TMA engine, which delivers issued copies in any
order the seed picks. Each consumer actor computes whole tiles (the data of all
warpgroups; the rows a warpgroup owns only matter in PTX) but synchronises as
one warpgroup: it arrives once per warpgroup, owns its wgmma groups, and only
warpgroup 0 (the thread that issues them in PTX) runs TMA stores. It models what
makes Hopper kernels hang or race, the way the hardware behaves:

- mbarriers: arrival counts per phase, transaction bytes (`expect_tx` against the
  bytes copies deliver), completed phases, and `try_wait.parity` answering true
  iff the phase of that parity is the last completed one (a fresh barrier passes
  parity 1);
- barrier setup: thread 0 (the producer's elected thread) initialises the
  mbarriers; another warpgroup may use one only after a CTA-wide barrier
  (`cta_barrier`, or the cluster barrier) published the init, and a TMA copy may
  complete on one only after a `fence_mbarrier_init`; an index past a ring or a
  barrier array is a hazard, not a numpy error;
- named barriers (`cta_barrier`, `consumer_barrier`, the MMA turns of
  `ping-pong`): a phase completes when its warpgroups have arrived (for the CTA
  barrier, arrived or exited: `bar.sync 0` in one role only waits for the others
  to finish, which is a hang whenever they wait for it); a warpgroup arriving
  twice in one phase is a hazard (the hardware would count its threads twice);
- wgmma groups: results are unreadable until a `wgmma_wait_group` retires their
  group; a TMA copy into a slot that an unretired group still reads is a race; a
  wgmma reading a register tile written (other than by a wgmma) since its
  warpgroup's last `wgmma_fence`, or issued before any fence, is a race;
- registers: each warpgroup starts with the launch's per-thread cap;
  `setmaxnreg.dec` gives registers to the block's pool and `setmaxnreg.inc` waits
  until the pool can serve it, so budgets beyond the block's registers hang;
- register reads of shared tiles (`smem_load`: a bias, a residual): reading a
  slot while a TMA copy into it is in flight is a race (the read came before
  the slot's full barrier was waited on, or after the slot was released). An
  `mbarrier_arrive` that completes a phase lets the scheduler pick who runs
  next, so a producer waiting for that slot may refill it before the releasing
  actor's next op, as on the GPU;
- TMA stores: a staging tile written with `smem_store` must be fenced
  (`fence_proxy_async`) before a TMA store reads it, and must not be written
  again until a `tma_store_wait` has seen the store read it out; the engine
  performs stores, like loads, whenever the seed says;
- data: TMA copies, wgmma products, fragment math and stores are computed on whole
  tiles, so the output can be compared with the reference interpreter; a
  column reduction (`column_reduce`) exchanges its per-warp partials through
  its shared-memory scratch between its two consumer barriers, as the PTX does.

Clusters (`tile.cluster`): the thread blocks of one cluster run together, each
with its own shared memory, barriers and actors (named `block1.consumer0`, ...),
over one TMA engine. A multicast `tma_load` sends the issuing block's share of
the boxes to the same slot and barrier of every block, so a barrier may receive
a peer's bytes before its own producer armed it (the transaction count goes
negative until then, as on the GPU); a cluster-wide `mbarrier_arrive` arrives in
every block; `cluster_barrier` waits for all blocks. Touching a peer's barrier
before that peer initialised it, or its shared memory after it exited, is a
hazard: that is what the cluster barriers around the role dispatch prevent.

A state where no actor can move is reported as a predicted hang, naming each
actor's barrier and its state; hazards raise at once. Before running, the kernel
gets the verifier's kernel-wide checks (`nv.launch_problems`: overlapping
shared-memory allocations, allocations past the launch's `smem`, a launch that
cannot run the roles), since the simulator also runs IR nobody verified.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation, SSAValue
from xdsl.utils.scoped_dict import ScopedDict

from tawa_xdsl.contract import LaunchContract, launch_contract
from tawa_xdsl.diagnostics import format_at
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import tile
from tawa_xdsl.dialects.nvgpu_async import fragment_layout
from tawa_xdsl.dialects.ptx import CP_ASYNC_SIZES
from tawa_xdsl.dialects.roles import entry_register_cap
from tawa_xdsl.dtypes import numpy_dtype
from tawa_xdsl.interp.reference import make_interpreter
from tawa_xdsl.interp.scheduler import (
    Deadlock,
    RoleScheduler,
    SimulationError,
    role_body,
)
from tawa_xdsl.interp.tile import (
    REDUCERS,
    boxes_overlap,
    read_box,
    write_box,
    write_tma_box,
)
from tawa_xdsl.kernel import clusters
from tawa_xdsl.lowering.fragments import Geometry
from tawa_xdsl.target import THREADS_PER_WARPGROUP

TMA_ENGINE = "tma"
CopyT = TypeVar("CopyT")
StoreT = TypeVar("StoreT")


class PredictedHang(Deadlock):
    """No actor can make progress: on a GPU this kernel would hang."""


class Hazard(SimulationError):
    """A read of data that is not there yet, or a write over data still in use."""


@contextmanager
def located(name: str, programs: Sequence[tuple[int, int, int]]) -> Iterator[None]:
    """Errors of one cluster's run, in either simulator, name the kernel and the
    programs it ran; a deadlock there is a hang the GPU would have."""
    where = (
        f"program {programs[0]}"
        if len(programs) == 1
        else f"cluster of programs {', '.join(map(str, programs))}"
    )
    try:
        yield
    except Deadlock as e:
        raise PredictedHang(
            f"{name} {where}: predicted hang: {e.args[0].removeprefix('deadlock: ')}"
        ) from None
    except SimulationError as e:
        raise type(e)(f"{name} {where}: {e.args[0]}") from None


def run_tma_engine(
    scheduler: RoleScheduler,
    transfers: list[CopyT],
    pending_stores: Callable[[], list[StoreT]],
    finished: Callable[[], bool],
    deliver: Callable[[CopyT], None],
    deliver_store: Callable[[StoreT], None],
) -> None:
    """The TMA engine of either simulator: performs issued copies (`transfers`,
    taken off the list) and stores, in an order the seed picks, until nothing is
    in flight and the issuers have `finished`."""
    while True:
        scheduler.sync(
            lambda: bool(transfers) or bool(pending_stores()) or finished(),
            lambda: "nothing (no copies in flight)",
        )
        stores = pending_stores()
        if not transfers and not stores:
            return
        pick = scheduler.rng.randrange(len(transfers) + len(stores))
        if pick >= len(transfers):
            deliver_store(stores[pick - len(transfers)])
        else:
            deliver(transfers.pop(pick))


class PendingTile(np.ndarray):
    """A wgmma result; readable once `group` has been retired by a wait."""

    group: Group | None

    def __array_finalize__(self, obj: Any) -> None:
        self.group = None  # values computed from it are ordinary tiles


@dataclass(eq=False)
class Group:
    reads: set[tuple[int, int]] = field(default_factory=set)  # (ring id, slot)
    retired: bool = False


@dataclass(eq=False)
class MBarrier:
    name: str
    count: int = 0
    pending: int = 0
    tx: int = 0
    completed: int = 0
    initialised_by: str | None = None  # the thread (actor) that ran mbarrier_init
    fenced: bool = False  # a fence_mbarrier_init since: TMA and peers see the init
    published: bool = False  # a CTA-wide barrier since: every thread sees the init

    def state(self) -> str:
        return (
            f"phases completed: {self.completed}; {self.pending} of {self.count} arrivals "
            f"missing; {self.tx} transaction bytes outstanding"
        )


@dataclass(eq=False)
class Ring:
    name: str
    data: np.ndarray  # [depth, *tile]
    scalars: bool = False
    """Threads write its slots (`smem_store_scalar`: tile tickets;
    `thread_load`), so a read must follow the arrive that published the write
    (`published`)."""
    published: dict[int, tuple[MBarrier, int]] = field(default_factory=dict)
    """By slot: the barrier whose completed phase count must reach the number
    given before a thread other than the writer may read the slot."""
    proxy_fenced: dict[int, set[int]] = field(default_factory=dict)
    """By slot the producer's threads wrote (`thread_load`: generic-proxy
    writes): the actors (by id) that have run `fence_proxy_async` since they
    waited for it, so their wgmmas (the async proxy) may read it."""


@dataclass(frozen=True)
class View:
    ring: Ring
    slot: int
    transposed: bool = False

    def tile(self) -> np.ndarray:
        t = self.ring.data[self.slot]
        return t.T if self.transposed else t


@dataclass(eq=False)
class Transfer:
    """A TMA copy in flight: `data` lands in columns `cols` of the slot."""

    ring: Ring
    slot: int
    data: np.ndarray
    barrier: MBarrier
    nbytes: int
    cols: slice
    block: ThreadBlock


@dataclass(eq=False)
class StoreTransfer:
    """A TMA store in flight: it reads its slot when the engine performs it."""

    ring: Ring
    slot: int
    array: np.ndarray
    coords: tuple[int, ...]
    group: int
    done: bool = False


@dataclass(eq=False)
class Actor:
    """What one actor's threads hold: their wgmma groups, the shared memory they
    wrote and have not yet fenced, the register tiles they wrote since their last
    `wgmma_fence` (by id, with the writing op), and their per-thread registers."""

    registers: int
    uncommitted: Group = field(default_factory=Group)
    groups: list[Group] = field(default_factory=list)
    unfenced: set[tuple[int, int]] = field(default_factory=set)  # (ring id, slot)
    wgmma_fences: int = 0
    unfenced_tiles: dict[int, tuple[np.ndarray, Operation]] = field(
        default_factory=dict
    )
    unpublished: list[tuple[Ring, int]] = field(default_factory=list)
    """Slots it wrote with `smem_store_scalar`; its next arrive publishes them."""
    seen: dict[int, int] = field(default_factory=dict)
    """By id of an mbarrier: the phases completed when it last waited on it."""


@dataclass(eq=False)
class NamedBarrier:
    """A `bar.sync` / `bar.arrive` barrier, counted in warpgroups."""

    name: str
    count: int
    arrived: set[str] = field(default_factory=set)
    completed: int = 0

    def arrive(self, who: str, where: str) -> int:
        """Arrive as `who`; the number of the phase the arrival belongs to."""
        if who in self.arrived:
            raise Hazard(
                f"{where}: {who} arrives twice at {self.name} in one phase (the "
                "hardware counts its threads twice and releases the barrier early)"
            )
        phase = self.completed
        self.arrived.add(who)
        if len(self.arrived) == self.count:
            self.release()
        return phase

    def release(self) -> None:
        """Complete the current phase."""
        self.arrived.clear()
        self.completed += 1

    def state(self) -> str:
        return (
            f"phases completed: {self.completed}; arrived: "
            f"{', '.join(sorted(self.arrived)) or 'nobody'} of {self.count} warpgroups"
        )


@dataclass(eq=False)
class ThreadBlock:
    """One thread block: its program id, shared memory and barriers (by the op
    that allocates them, so that peers in a cluster find theirs), its actors,
    named barriers and TMA stores."""

    name: str
    program: tuple[int, int, int]
    consumers: list[str]
    entry_registers: int  # per thread, as launched
    actors: dict[str, Actor] = field(default_factory=dict)
    rings: dict[Operation, Ring] = field(default_factory=dict)
    barriers: dict[Operation, list[MBarrier]] = field(default_factory=dict)
    stores: list[StoreTransfer] = field(default_factory=list)  # not yet waited for
    unlanded: list[StoreTransfer] = field(default_factory=list)  # writes not waited for
    store_groups: int = 0  # bulk groups committed so far
    register_pool: int = 0  # registers given back by setmaxnreg.dec, not yet taken
    exited: bool = False

    def __post_init__(self) -> None:
        self.actors = {
            name: Actor(self.entry_registers) for name in ["producer", *self.consumers]
        }
        self.cta_bar = NamedBarrier("the CTA barrier", len(self.actors))
        self.consumer_bar = NamedBarrier("the consumer barrier", len(self.consumers))
        self.turns = [
            NamedBarrier(f"the MMA turn barrier of {c}", 2) for c in self.consumers
        ]


def _bar(op: Operation, bars: list[MBarrier], i: int) -> str:
    return f"%{op.operands[0].name_hint or 'bars'}[{i}]"


def _no_effect(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
    """Ordering ops: the simulator executes every actor's ops in program order."""
    return ()


@register_impls
class HopperFunctions(InterpreterFunctions):
    """The nvgpu_async ops over simulated shared memory, barriers and wgmma groups."""

    def __init__(self, scheduler: RoleScheduler, warpgroups: int, cluster: int = 1):
        self.scheduler = scheduler
        self.consumers = (
            ["consumer"]
            if warpgroups == 1
            else [f"consumer{w}" for w in range(warpgroups)]
        )
        self.cluster = cluster
        self.entry_registers = entry_register_cap(
            THREADS_PER_WARPGROUP * (1 + warpgroups)
        )
        self.blocks: list[ThreadBlock] = []
        self.transfers: list[Transfer] = []
        self.cluster_bar = NamedBarrier("the cluster barrier", cluster)

    def start(self, programs: list[tuple[int, int, int]]) -> None:
        """Fresh thread blocks (one per program of a cluster), as the GPU gives."""
        self.blocks = [
            ThreadBlock(self.block_name(r), pid, self.consumers, self.entry_registers)
            for r, pid in enumerate(programs)
        ]
        self.cluster_bar = NamedBarrier("the cluster barrier", len(programs))

    def block_name(self, rank: int) -> str:
        return f"block{rank}" if self.cluster > 1 else ""

    def _role(self, block: ThreadBlock, role: str) -> str:
        """The scheduler's name of `role` in `block`."""
        return f"{block.name}.{role}" if block.name else role

    def _where(self) -> tuple[ThreadBlock, str]:
        """The running block and role (producer, consumerN or "" for the block's
        own code around the role dispatch)."""
        current = self.scheduler.current() or ""
        if self.cluster == 1:
            return self.blocks[0], current
        name, _, role = current.partition(".")
        return self.blocks[int(name.removeprefix("block"))], role

    def program(self) -> tuple[int, int, int]:
        return self._where()[0].program

    def _thread(self) -> str:
        """The running actor; the block's own code around the role dispatch counts
        as the producer's, since thread 0 (the producer's elected thread) runs its
        one-thread ops (mbarrier init, fences)."""
        return self._where()[1] or "producer"

    def _actor(self) -> Actor:
        return self._where()[0].actors[self._thread()]

    def _warpgroup(self) -> int:
        """The running consumer actor's warpgroup index."""
        return self.consumers.index(self._where()[1])

    def _issues_tma_stores(self) -> bool:
        """TMA stores are issued by one thread, of consumer warpgroup 0."""
        return self._where()[1] == self.consumers[0]

    def _live_groups(self) -> list[Group]:
        return [
            g
            for b in self.blocks
            for a in b.actors.values()
            for g in a.groups
            if not g.retired
        ]

    def _peer(self, rank: int, what: str) -> ThreadBlock:
        """Block `rank` of the cluster, which the running block is about to touch."""
        peer = self.blocks[rank]
        if peer.exited:
            raise Hazard(
                f"{what} reaches {peer.name}, which has exited (missing "
                "cluster_barrier before exit?)"
            )
        return peer

    def _peer_barriers(
        self, op: Operation, bars: SSAValue, rank: int
    ) -> list[MBarrier]:
        peer = self._peer(rank, op.name)
        found = peer.barriers.get(bars.owner)  # type: ignore[arg-type]
        if found is None or not all(b.count for b in found):
            raise Hazard(
                f"{op.name} reaches %{bars.name_hint} of {peer.name} before that "
                "block initialised it (missing cluster_barrier after mbarrier_init?)"
            )
        return found

    def _slot(self, op: Operation, ring: Ring, slot: int) -> int:
        """`slot`, checked against the ring's depth: an index past the ring
        addresses whatever shared memory follows it."""
        depth = len(ring.data)
        if not 0 <= slot < depth:
            raise Hazard(
                format_at(
                    op,
                    f"slot {slot} of %{ring.name}, a ring of {depth} slots: the access "
                    "lands past the ring, in whatever shared memory lies there",
                )
            )
        return slot

    def _barrier(self, op: Operation, bars: list[MBarrier], i: int) -> MBarrier:
        """Barrier `i` of an array that `op` uses, checked like a ring slot."""
        if not 0 <= i < len(bars):
            raise Hazard(
                format_at(
                    op,
                    f"barrier {i} of %{op.operands[0].name_hint or 'bars'}, an array "
                    f"of {len(bars)}: the access lands past the array, in whatever "
                    "shared memory lies there",
                )
            )
        return bars[i]

    def _usable(self, op: Operation, bar: MBarrier) -> MBarrier:
        """`bar`, if the running thread may use it: initialised, and, unless this
        thread initialised it, published by a CTA-wide barrier since."""
        me = self._thread()
        if bar.initialised_by is None:
            raise Hazard(
                format_at(
                    op,
                    f"{me} uses %{bar.name}, which no mbarrier_init initialised: its "
                    "shared memory holds whatever was there",
                )
            )
        if me != bar.initialised_by and not bar.published:
            who = "thread 0" if bar.initialised_by == "producer" else bar.initialised_by
            raise Hazard(
                format_at(
                    op,
                    f"{me} uses %{bar.name}, which {who} initialised, before a CTA "
                    "barrier made the init visible to it: it may see the barrier "
                    "uninitialised (missing cta_barrier after mbarrier_init?)",
                )
            )
        return bar

    def _publish(self, block: ThreadBlock) -> None:
        """A barrier every thread of `block` passed: the inits before it are
        visible to all of them."""
        for bars in block.barriers.values():
            for bar in bars:
                bar.published = bar.initialised_by is not None

    # ------------------------------------------------------ memory, barriers

    @impl(nv.SmemAllocOp)
    def run_smem_alloc(
        self, interpreter: Interpreter, op: nv.SmemAllocOp, args: PythonValues
    ):
        t = op.result.type
        data = np.zeros(
            (t.depth.data, *t.get_tile()), dtype=numpy_dtype(t.element_type)
        )
        scalars = any(
            isinstance(u.operation, nv.SmemStoreScalarOp | nv.ThreadLoadOp)
            or (isinstance(u.operation, nv.TransposeCopyOp) and u.index == 2)
            for u in op.result.uses
        )
        ring = Ring(op.result.name_hint or "smem", data, scalars)
        self._where()[0].rings[op] = ring
        return (ring,)

    @impl(nv.MBarrierAllocOp)
    def run_mbarrier_alloc(
        self, interpreter: Interpreter, op: nv.MBarrierAllocOp, args: PythonValues
    ):
        name = op.result.name_hint or "mbarrier"
        block = self._where()[0]
        prefix = f"{block.name}." if block.name else ""
        bars = [
            MBarrier(f"{prefix}{name}[{i}]") for i in range(op.result.type.count.data)
        ]
        block.barriers[op] = bars
        return (bars,)

    @impl(nv.MBarrierInitOp)
    def run_mbarrier_init(
        self, interpreter: Interpreter, op: nv.MBarrierInitOp, args: PythonValues
    ):
        for bar in args[0]:
            bar.count = bar.pending = op.count.value.data
            bar.initialised_by = self._thread()
            bar.fenced = bar.published = False
        return ()

    @impl(nv.FenceMBarrierInitOp)
    def run_fence_mbarrier_init(
        self, interpreter: Interpreter, op: nv.FenceMBarrierInitOp, args: PythonValues
    ):
        """Orders this thread's earlier inits before the async proxy (TMA) and
        the cluster's other blocks use the barriers."""
        me = self._thread()
        for bars in self._where()[0].barriers.values():
            for bar in bars:
                bar.fenced |= bar.initialised_by == me
        return ()

    def _arrive(self, bar: MBarrier, n: int, where: str) -> None:
        bar.pending -= n
        if bar.pending < 0:
            raise Hazard(
                f"{where}: more arrivals than the {bar.count} a phase of %{bar.name} expects"
            )
        self._maybe_complete(bar)

    def _maybe_complete(self, bar: MBarrier) -> None:
        if bar.pending == 0 and bar.tx < 0:
            raise Hazard(
                f"%{bar.name} received {-bar.tx} more bytes than expect_tx armed"
            )
        if bar.pending == 0 and bar.tx == 0:
            if any(t.barrier is bar for t in self.transfers):
                raise Hazard(
                    f"a phase of %{bar.name} completes while copies it tracks are still in "
                    "flight: expect_tx armed fewer bytes than the copies deliver"
                )
            bar.completed += 1
            bar.pending = bar.count

    @impl(nv.MBarrierArriveOp)
    def run_arrive(
        self, interpreter: Interpreter, op: nv.MBarrierArriveOp, args: PythonValues
    ):
        bars, i = args
        if self._where()[1] == "producer":
            n = 1
        else:
            n = THREADS_PER_WARPGROUP if op.scope.data == nv.ArriveScope.THREAD else 1
        bar = self._usable(op, self._barrier(op, bars, i))
        phase = bar.completed
        actor = self._actor()
        for ring, slot in actor.unpublished:  # released to the phase's waiters
            ring.published[slot] = (bar, phase + 1)
        actor.unpublished.clear()
        if op.cluster_size == 1:
            self._arrive(bars[i], n, f"{op.name} {_bar(op, bars, i)}")
        else:
            for rank in range(len(self.blocks)):
                peer = self._peer_barriers(op, op.barriers, rank)
                self._arrive(peer[i], n, f"{op.name} %{peer[i].name}")
        if bar.completed != phase:  # a slot went back: its waiter may run at once
            self.scheduler.sync(lambda: True, lambda: "nothing")
        return ()

    @impl(nv.MBarrierArriveExpectTxOp)
    def run_arrive_expect_tx(
        self,
        interpreter: Interpreter,
        op: nv.MBarrierArriveExpectTxOp,
        args: PythonValues,
    ):
        bars, i = args
        self._usable(op, self._barrier(op, bars, i)).tx += op.bytes.value.data
        self._arrive(bars[i], 1, f"{op.name} {_bar(op, bars, i)}")
        return ()

    @impl(nv.MBarrierWaitOp)
    def run_wait(
        self, interpreter: Interpreter, op: nv.MBarrierWaitOp, args: PythonValues
    ):
        bars, i, parity = args
        bar = self._usable(op, self._barrier(op, bars, i))
        self.scheduler.sync(
            lambda: bar.completed % 2 != parity,
            lambda: f"{op.name} on %{bar.name} for parity {parity} ({bar.state()})",
        )
        seen = self._actor().seen
        seen[id(bar)] = max(seen.get(id(bar), 0), bar.completed)
        return ()

    @impl(nv.ClusterBarrierOp)
    def run_cluster_barrier(
        self, interpreter: Interpreter, op: nv.ClusterBarrierOp, args: PythonValues
    ):
        if len(self.blocks) > 1:
            self._sync(self.cluster_bar, op)
        self._publish(self._where()[0])
        return ()

    @impl(nv.CTABarrierOp)
    def run_cta_barrier(
        self, interpreter: Interpreter, op: nv.CTABarrierOp, args: PythonValues
    ):
        """`bar.sync 0`: every thread of the block. Around the role dispatch all
        of them run it together; inside a role, a warpgroup waits until each
        other one has arrived or exited (exited threads release the barrier; a
        warpgroup that finished its role counts as exited)."""
        block, role = self._where()
        if role:
            bar = block.cta_bar
            phase = bar.arrive(role, op.name)

            def released() -> bool:  # the first waiter asked completes the phase
                if bar.completed == phase and all(
                    a in bar.arrived or self.scheduler.finished(self._role(block, a))
                    for a in block.actors
                ):
                    bar.release()
                return bar.completed > phase

            self.scheduler.sync(
                released, lambda: f"{op.name} on {bar.name} ({bar.state()})"
            )
        self._publish(block)
        return ()

    run_prefetch = impl(nv.PrefetchTensorMapOp)(_no_effect)

    def _sync(self, bar: NamedBarrier, op: Operation) -> None:
        block, role = self._where()
        phase = bar.arrive(role or block.name, op.name)
        self.scheduler.sync(
            lambda: bar.completed > phase,
            lambda: f"{op.name} on {bar.name} ({bar.state()})",
        )

    @impl(nv.ConsumerBarrierOp)
    def run_consumer_barrier(
        self, interpreter: Interpreter, op: nv.ConsumerBarrierOp, args: PythonValues
    ):
        self._sync(self._where()[0].consumer_bar, op)
        return ()

    @impl(nv.ColumnReduceOp)
    def run_column_reduce(
        self, interpreter: Interpreter, op: nv.ColumnReduceOp, args: PythonValues
    ):
        """The exchange the PTX makes: after a consumer barrier, this warpgroup
        writes the column partials of its warps' 16-row slabs into their rows
        of the scratch (of a tile under 64 rows, their rows of it: the
        identity for a warp holding none); after a second one, it combines
        every warp's row in warp order."""
        tile_, scratch = args
        geom = Geometry.of(op.source.type.get_shape(), fragment_layout(op.source.type))
        reducer = REDUCERS[op.kind.data]
        cols = geom.cols
        x = np.asarray(tile_)  # f32, or i32 (whose sums wrap as add.s32 does)
        words = scratch.data[0][: nv.column_scratch_words(cols, geom.warpgroups)]
        rows = words.view(x.dtype).reshape(-1, cols)  # 32-bit words either way
        block, c = self._where()[0], self._warpgroup()
        self._sync(block.consumer_bar, op)
        held = geom.rows_per_warpgroup  # padded under 64: the rows past it
        identity = tile.ReduceKind(op.kind.data).identity(x.dtype.kind == "f")
        for w in range(4):
            slab = [
                c * held + 64 * b + 16 * w + r
                for b in range(geom.blocks)
                for r in range(16)
                if 64 * b + 16 * w + r < held
            ]
            rows[4 * c + w] = reducer(x[slab], axis=0) if slab else identity
        self._sync(block.consumer_bar, op)
        result = rows[0].copy()
        for q in range(1, len(rows)):
            result[:] = reducer(np.stack([result, rows[q]]), axis=0)
        return (result,)

    @impl(nv.MmaTurnInitOp)
    def run_mma_turn_init(
        self, interpreter: Interpreter, op: nv.MmaTurnInitOp, args: PythonValues
    ):
        if self._warpgroup() == len(self.consumers) - 1:
            self._where()[0].turns[0].arrive(self.consumers[-1], op.name)
        return ()

    @impl(nv.MmaTurnBeginOp)
    def run_mma_turn_begin(
        self, interpreter: Interpreter, op: nv.MmaTurnBeginOp, args: PythonValues
    ):
        self._sync(self._where()[0].turns[self._warpgroup()], op)
        return ()

    @impl(nv.MmaTurnEndOp)
    def run_mma_turn_end(
        self, interpreter: Interpreter, op: nv.MmaTurnEndOp, args: PythonValues
    ):
        w = self._warpgroup()
        turns = self._where()[0].turns
        turns[(w + 1) % len(self.consumers)].arrive(self.consumers[w], op.name)
        return ()

    @impl(nv.ProducerBarrierOp)
    def run_producer_barrier(
        self, interpreter: Interpreter, op: nv.ProducerBarrierOp, args: PythonValues
    ):
        """The producer's threads are one actor here, in program order."""
        return ()

    @impl(nv.FenceProxyAsyncOp)
    def run_fence_proxy(
        self, interpreter: Interpreter, op: nv.FenceProxyAsyncOp, args: PythonValues
    ):
        """Its own generic writes, and the thread-loaded slots it has waited
        for, become visible to its async proxy (TMA stores, wgmma)."""
        actor = self._actor()
        actor.unfenced.clear()
        for ring in self._where()[0].rings.values():
            for slot, fenced in ring.proxy_fenced.items():
                bar, phase = ring.published.get(slot, (None, 0))
                if bar is not None and actor.seen.get(id(bar), 0) >= phase:
                    fenced.add(id(actor))
        return ()

    @impl(nv.LaunchDependentsOp)
    def run_launch_dependents(
        self, interpreter: Interpreter, op: nv.LaunchDependentsOp, args: PythonValues
    ):
        """Nothing to do: launches are simulated one after another."""
        return ()

    @impl(nv.GridDependencyWaitOp)
    def run_grid_dependency_wait(
        self, interpreter: Interpreter, op: nv.GridDependencyWaitOp, args: PythonValues
    ):
        """Nothing to wait for: launches are simulated one after another, so the
        grid a kernel depends on has finished before it starts."""
        return ()

    @impl(nv.SetMaxNRegOp)
    def run_setmaxnreg(
        self, interpreter: Interpreter, op: nv.SetMaxNRegOp, args: PythonValues
    ):
        """Moves registers between the warpgroup and the block's pool: an `inc`
        the pool cannot serve waits (forever, if no warpgroup gives more back)."""
        problem = op.problem()
        if problem is not None:
            raise Hazard(format_at(op, problem))
        block, actor = self._where()[0], self._actor()
        new = op.registers_after(actor.registers)
        need = (new - actor.registers) * THREADS_PER_WARPGROUP
        if need > 0:
            held = self.entry_registers * THREADS_PER_WARPGROUP * len(block.actors)
            self.scheduler.sync(
                lambda: block.register_pool >= need,
                lambda: (
                    f"{op.name} {op.action.data} {op.regs.value.data} for {need} "
                    f"registers; the block's pool holds {block.register_pool} (the "
                    f"budgets want more than the {held} registers the block has)"
                ),
            )
        block.register_pool -= need
        actor.registers = new
        return ()

    @impl(nv.WgmmaFenceOp)
    def run_wgmma_fence(
        self, interpreter: Interpreter, op: nv.WgmmaFenceOp, args: PythonValues
    ):
        actor = self._actor()
        actor.wgmma_fences += 1
        actor.unfenced_tiles.clear()
        return ()

    def tile_written(self, op: Operation, tile: np.ndarray) -> None:
        """The running actor wrote `tile` into registers (with `op`, not a wgmma):
        a wgmma may read it only after a `wgmma_fence`."""
        self._actor().unfenced_tiles[id(tile)] = (tile, op)

    # ------------------------------------------------------------------ TMA

    def _check_not_read(self, ring: Ring, slot: int, what: str) -> None:
        for g in self._live_groups():
            if (id(ring), slot) in g.reads:
                raise Hazard(
                    f"{what} writes slot {slot} of %{ring.name} while a wgmma group that "
                    "reads it is still in flight (missing wgmma_wait_group before the release?)"
                )

    def _fenced_for_tma(self, op: Operation, bar: MBarrier) -> MBarrier:
        """`bar`, if a TMA copy may complete on it: the async proxy sees its init
        only after the initialising thread's `fence_mbarrier_init`."""
        if not bar.fenced:
            raise Hazard(
                format_at(
                    op,
                    f"{op.name} completes on %{bar.name}, whose mbarrier_init no "
                    "fence_mbarrier_init has made visible to the TMA unit: the copy's "
                    "bytes may land on a barrier it sees uninitialised",
                )
            )
        return bar

    @impl(nv.TMALoadOp)
    def run_tma_load(
        self, interpreter: Interpreter, op: nv.TMALoadOp, args: PythonValues
    ):
        coords = args[1 : 1 + len(op.coords)]
        array = args[0]
        array = array.reshape(
            (1,) * (len(coords) - array.ndim) + array.shape
        )  # lifted maps
        ring, slot, bars, bi = args[1 + len(op.coords) :]
        self._slot(op, ring, slot)
        self._fenced_for_tma(op, self._barrier(op, bars, bi))
        tile_shape = ring.data.shape[1:]
        box = (1,) * (array.ndim - len(tile_shape)) + tile_shape
        self._check_not_read(ring, slot, op.name)
        data = read_box(array, coords, box).reshape(tile_shape)
        block = self._where()[0]
        if op.cluster_size == 1:
            self.transfers.append(
                Transfer(ring, slot, data, bars[bi], data.nbytes, slice(None), block)
            )
            return ()
        # this block's boxes, into the same slot and barrier of every block
        boxes = op.boxes_of(self.blocks.index(block))
        if not boxes:
            return ()
        width = tile_shape[-1] // op.num_boxes
        cols = slice(boxes.start * width, boxes.stop * width)
        part = data[..., cols]
        for rank in range(len(self.blocks)):
            target = self._fenced_for_tma(
                op, self._peer_barriers(op, op.barriers, rank)[bi]
            )
            peer = self.blocks[rank]  # it allocates its rings before its barriers
            self.transfers.append(
                Transfer(
                    peer.rings[op.buffer.owner],  # type: ignore[index]
                    slot,
                    part,
                    target,
                    part.nbytes,
                    cols,
                    peer,
                )
            )
        return ()

    @impl(nv.SmemStoreOp)
    def run_smem_store(
        self, interpreter: Interpreter, op: nv.SmemStoreOp, args: PythonValues
    ):
        value, ring, slot = args
        self._slot(op, ring, slot)
        for st in self._where()[0].stores:
            if st.ring is ring and st.slot == slot:
                raise Hazard(
                    f"{op.name} writes slot {slot} of %{ring.name} while a TMA store "
                    "may still be reading it (missing tma_store_wait before the write?)"
                )
        ring.data[slot] = np.asarray(value)
        self._actor().unfenced.add((id(ring), slot))
        return ()

    @impl(nv.ThreadLoadOp)
    def run_thread_load(
        self, interpreter: Interpreter, op: nv.ThreadLoadOp, args: PythonValues
    ):
        """The producer's threads copy the tile (zeros outside the tensor),
        generic-proxy writes unpublished until their `thread_loads_arrive`,
        which a reader must fence after its wait; whether the copies are
        `cp.async` (every extent 4-byte aligned), as the thread level picks."""
        array, *coords, ring, slot = args
        self._threads_write(
            op, ring, slot, read_box(array, coords, ring.data.shape[1:])
        )
        ring.proxy_fenced[slot] = set()
        base = array.__array_interface__["data"][0]
        row = array.shape[-1] * array.itemsize
        extents = (base, array.strides[0], coords[-1] * array.itemsize, row)
        return (all(e % CP_ASYNC_SIZES[0] == 0 for e in extents),)

    def _threads_write(
        self, op: Operation, ring: Ring, slot: int, data: np.ndarray
    ) -> None:
        """The producer's threads write `data` into a slot (`thread_load`,
        `transpose_copy`), generic-proxy writes: not while a wgmma reads it or
        a TMA copy fills it; unpublished until the producer's next arrive."""
        self._slot(op, ring, slot)
        self._check_not_read(ring, slot, op.name)
        if any(t.ring is ring and t.slot == slot for t in self.transfers):
            raise Hazard(
                format_at(
                    op,
                    f"{op.name} writes slot {slot} of %{ring.name} while a TMA copy "
                    "into it is in flight",
                )
            )
        ring.data[slot] = data
        ring.published.pop(slot, None)
        self._actor().unpublished.append((ring, slot))

    @impl(nv.ThreadLoadsArriveOp)
    def run_thread_loads_arrive(
        self, interpreter: Interpreter, op: nv.ThreadLoadsArriveOp, args: PythonValues
    ):
        """Each of the producer warpgroup's threads arrives once, publishing
        the slots they wrote."""
        bars, i, *_ = args
        bar = self._usable(op, self._barrier(op, bars, i))
        actor = self._actor()
        for ring, slot in actor.unpublished:
            ring.published[slot] = (bar, bar.completed + 1)
        actor.unpublished.clear()
        self._arrive(bar, THREADS_PER_WARPGROUP, f"{op.name} {_bar(op, bars, i)}")
        return ()

    @impl(nv.TransposeCopyOp)
    def run_transpose_copy(
        self, interpreter: Interpreter, op: nv.TransposeCopyOp, args: PythonValues
    ):
        """The producer's threads copy a staging slot transposed into a ring
        slot: the staging copy must have landed (its barrier waited for); the
        writes are unfenced until the producer's own `fence_proxy_async` (a
        reader does not fence them) and unpublished until its next arrive."""
        source, src_slot, ring, slot = args
        self._slot(op, source, src_slot)
        if any(t.ring is source and t.slot == src_slot for t in self.transfers):
            raise Hazard(
                format_at(
                    op,
                    f"{op.name} reads slot {src_slot} of %{source.name} while a TMA "
                    "copy into it is in flight (missing mbarrier_wait on its "
                    "staging barrier?)",
                )
            )
        self._threads_write(op, ring, slot, source.data[src_slot].T)
        self._actor().unfenced.add((id(ring), slot))
        return ()

    @impl(nv.TMAStoreOp)
    def run_tma_store(
        self, interpreter: Interpreter, op: nv.TMAStoreOp, args: PythonValues
    ):
        ring, slot, array, *coords = args
        self._slot(op, ring, slot)
        if not self._issues_tma_stores():
            return ()
        block = self._where()[0]
        if any((id(ring), slot) in a.unfenced for a in block.actors.values()):
            raise Hazard(
                f"{op.name} reads slot {slot} of %{ring.name}, written with smem_store "
                "and not yet fenced: TMA may see stale data (missing fence_proxy_async)"
            )
        array = array.reshape((1,) * (len(coords) - array.ndim) + array.shape)
        store = StoreTransfer(ring, slot, array, tuple(coords), block.store_groups)
        if any(boxes_overlap(_written(st), _written(store)) for st in block.unlanded):
            raise Hazard(
                f"{op.name} writes global elements an earlier TMA store of this block "
                "writes, with no tma_store_wait writes between: TMA stores are not "
                "ordered, either may land last"
            )
        block.stores.append(store)
        block.unlanded.append(store)
        return ()

    @impl(nv.TMAStoreCommitOp)
    def run_tma_store_commit(
        self, interpreter: Interpreter, op: nv.TMAStoreCommitOp, args: PythonValues
    ):
        if self._issues_tma_stores():
            self._where()[0].store_groups += 1
        return ()

    @impl(nv.TMAStoreWaitOp)
    def run_tma_store_wait(
        self, interpreter: Interpreter, op: nv.TMAStoreWaitOp, args: PythonValues
    ):
        if not self._issues_tma_stores():
            return ()
        block = self._where()[0]
        first_kept = block.store_groups - op.pending.value.data
        waited = [st for st in block.stores if st.group < first_kept]
        self.scheduler.sync(
            lambda: all(st.done for st in waited),
            lambda: f"{op.name}: {sum(not st.done for st in waited)} TMA stores",
        )
        block.stores = [st for st in block.stores if st not in waited]
        if op.writes is not None:  # their global writes have landed too
            block.unlanded = [st for st in block.unlanded if st.group >= first_kept]
        return ()

    def _deliver_store(self, st: StoreTransfer) -> None:
        tile = st.ring.data[st.slot]
        box = (1,) * (st.array.ndim - tile.ndim) + tile.shape
        write_tma_box(st.array, st.coords, tile.reshape(box))
        st.done = True

    def run_engine(self) -> None:
        """The TMA engine: performs issued copies and stores, in an order the seed
        picks, until every block (with one block: every actor) has finished."""
        if self.cluster == 1:
            issuers = [self._role(b, a) for b in self.blocks for a in b.actors]
        else:
            issuers = [b.name for b in self.blocks]
        run_tma_engine(
            self.scheduler,
            self.transfers,
            lambda: [st for b in self.blocks for st in b.stores if not st.done],
            lambda: all(self.scheduler.finished(a) for a in issuers),
            self._deliver,
            self._deliver_store,
        )

    def _deliver(self, t: Transfer) -> None:
        if t.block.exited:
            raise Hazard(
                f"a TMA copy lands in %{t.ring.name} of {t.block.name}, which has "
                "exited (missing cluster_barrier before exit?)"
            )
        self._check_not_read(t.ring, t.slot, "a TMA copy")
        t.ring.data[t.slot][..., t.cols] = t.data
        t.barrier.tx -= t.nbytes
        self._maybe_complete(t.barrier)

    # --------------------------------------------------------------- views

    @impl(nv.SmemSlotOp)
    def run_smem_slot(
        self, interpreter: Interpreter, op: nv.SmemSlotOp, args: PythonValues
    ):
        return (View(args[0], self._slot(op, args[0], args[1])),)

    @impl(nv.SmemTransOp)
    def run_smem_trans(
        self, interpreter: Interpreter, op: nv.SmemTransOp, args: PythonValues
    ):
        v = args[0]
        return (View(v.ring, v.slot, not v.transposed),)

    @impl(nv.SmemLoadOp)
    def run_smem_load(
        self, interpreter: Interpreter, op: nv.SmemLoadOp, args: PythonValues
    ):
        view = args[0]
        if any(t.ring is view.ring and t.slot == view.slot for t in self.transfers):
            raise Hazard(
                format_at(
                    op,
                    f"{self._thread()} reads slot {view.slot} of %{view.ring.name} "
                    "while a TMA copy into it is in flight (read before its full "
                    "barrier's wait, or after the slot was released?)",
                )
            )
        return (np.array(view.tile()),)

    @impl(nv.SmemStoreScalarOp)
    def run_smem_store_scalar(
        self, interpreter: Interpreter, op: nv.SmemStoreScalarOp, args: PythonValues
    ):
        value, ring, slot = args
        ring.data[self._slot(op, ring, slot)] = value
        ring.published.pop(slot, None)
        self._actor().unpublished.append((ring, slot))
        return ()

    @impl(nv.SmemExtractOp)
    def run_smem_extract(
        self, interpreter: Interpreter, op: nv.SmemExtractOp, args: PythonValues
    ):
        view = args[0]
        if view.ring.scalars:
            self._check_published(op, view.ring, view.slot)
        return (view.tile()[op.get_position()],)

    def _check_published(self, op: Operation, ring: Ring, slot: int) -> None:
        """A thread reads a slot another thread wrote only after waiting for the
        barrier phase that the writer's arrive completed (release, acquire)."""
        published = ring.published.get(slot)
        if published is None:
            raise Hazard(
                format_at(
                    op,
                    f"{self._thread()} reads slot {slot} of %{ring.name} before the "
                    "thread that writes it published it with an arrive (read "
                    "before its full barrier's wait?)",
                )
            )
        bar, phase = published
        if self._actor().seen.get(id(bar), 0) < phase:
            raise Hazard(
                format_at(
                    op,
                    f"{self._thread()} reads slot {slot} of %{ring.name} without "
                    f"having waited for %{bar.name} to complete the phase that "
                    "publishes it (read before its full barrier's wait?)",
                )
            )

    @impl(nv.StoreGlobalOp)
    def run_store_global(
        self, interpreter: Interpreter, op: nv.StoreGlobalOp, args: PythonValues
    ):
        value, array, *offsets = args
        value = np.asarray(value).T if op.transposed else np.asarray(value)
        box = (1,) * (array.ndim - value.ndim) + value.shape
        write_box(array, offsets, value.reshape(box))
        return ()

    # --------------------------------------------------------------- wgmma

    @impl(nv.WgmmaOp)
    def run_wgmma(self, interpreter: Interpreter, op: nv.WgmmaOp, args: PythonValues):
        lhs, rhs, acc = args
        actor = self._actor()
        for operand, value in ((op.lhs, lhs), (op.acc, acc)):
            written = actor.unfenced_tiles.get(id(value))
            if written is not None:
                raise Hazard(
                    format_at(
                        op,
                        f"{self._thread()} reads %{operand.name_hint or '?'}, written by "
                        f"{written[1].name} after its last wgmma_fence (or with none "
                        "yet): the tensor cores may read the registers before the "
                        "write lands (missing wgmma_fence)",
                    )
                )
        if not actor.wgmma_fences:
            raise Hazard(
                format_at(
                    op,
                    f"{self._thread()} issues its first wgmma without a wgmma_fence "
                    "before it: the tensor cores may read registers still being "
                    "written",
                )
            )
        reads = {(id(v.ring), v.slot) for v in (lhs, rhs) if isinstance(v, View)}
        block = self._where()[0]
        for v in (lhs, rhs):
            if not isinstance(v, View) or not v.ring.scalars:
                continue
            if any((id(v.ring), v.slot) in a.unfenced for a in block.actors.values()):
                raise Hazard(
                    format_at(
                        op,
                        f"{op.name} reads slot {v.slot} of %{v.ring.name}, written by "
                        "the producer's threads (transpose_copy) and not fenced by "
                        "them: the tensor cores may see stale data (missing "
                        "fence_proxy_async)",
                    )
                )
            self._check_published(op, v.ring, v.slot)
            fenced = v.ring.proxy_fenced.get(v.slot)
            if fenced is not None and id(actor) not in fenced:
                raise Hazard(
                    format_at(
                        op,
                        f"{op.name} reads slot {v.slot} of %{v.ring.name}, written by "
                        f"the producer's threads, and {self._thread()} has not fenced "
                        "it since its wait: the tensor cores may see stale data "
                        "(missing fence_proxy_async)",
                    )
                )
        a = lhs.tile() if isinstance(lhs, View) else lhs
        product = a.astype(np.float32) @ rhs.tile().astype(np.float32)
        result = (np.asarray(acc) + product).astype(np.float32).view(PendingTile)
        result.group = actor.uncommitted
        actor.uncommitted.reads |= reads
        return (result,)

    @impl(nv.WgmmaCommitGroupOp)
    def run_commit(self, interpreter: Interpreter, op: Operation, args: PythonValues):
        actor = self._actor()
        actor.groups.append(actor.uncommitted)
        actor.uncommitted = Group()
        return ()

    @impl(nv.WgmmaWaitGroupOp)
    def run_wait_group(
        self, interpreter: Interpreter, op: nv.WgmmaWaitGroupOp, args: PythonValues
    ):
        keep = op.pending.value.data
        actor = self._actor()
        live = [g for g in actor.groups if not g.retired]
        for g in live[: max(0, len(live) - keep)]:
            g.retired = True
        actor.groups = [g for g in actor.groups if not g.retired]
        return ()

    # --------------------------------------------------------------- roles

    @impl(nv.RoleDispatchOp)
    def run_roles(
        self, interpreter: Interpreter, op: nv.RoleDispatchOp, args: PythonValues
    ):
        block = self._where()[0]
        roles = {
            self._role(block, "producer"): role_body(interpreter, op.producer),
            **{
                self._role(block, c): role_body(interpreter, op.consumer)
                for c in self.consumers
            },
        }
        if self.cluster == 1:  # in a cluster, one engine serves every block
            roles[TMA_ENGINE] = self.run_engine
        self.scheduler.run(roles)
        where = f"{block.name}: " if block.name else ""
        for name, actor in block.actors.items():
            if any(not g.retired for g in actor.groups) or actor.uncommitted.reads:
                raise Hazard(f"{where}{name} exits with wgmma groups still in flight")
        if block.stores:
            raise Hazard(
                f"{where}the consumer exits before a tma_store_wait saw its TMA stores "
                "read their staging tiles out (shared memory is freed at exit)"
            )
        return ()

    def run_cluster(
        self, interpreter: Interpreter, kernel: func.FuncOp, params: list[Any]
    ) -> None:
        """Run the blocks of one cluster (`start` set them up) together."""

        def block_main(block: ThreadBlock) -> Callable[[], None]:
            def main() -> None:
                scope = ScopedDict(parent=interpreter._ctx, name=block.name)
                dataclasses.replace(interpreter, _ctx=scope).call_op(kernel, params)
                block.exited = True

            return main

        self.scheduler.run(
            {
                **{b.name: block_main(b) for b in self.blocks},
                TMA_ENGINE: self.run_engine,
            }
        )


class RegisterTiles(Interpreter.Listener):
    """Watches register tiles: flags a read of wgmma result registers before
    their group was retired, and tells the simulator which tiles each actor
    writes (other than by wgmma), which a wgmma may read only after a fence."""

    PASS_THROUGH = (scf.YieldOp, scf.ForOp, scf.IfOp)

    def __init__(self, hopper: HopperFunctions):
        self.hopper = hopper

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        if isinstance(op, (nv.WgmmaOp, *self.PASS_THROUGH)):
            return
        for value in results:
            if isinstance(value, np.ndarray):
                self.hopper.tile_written(op, value)

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        if isinstance(op, self.PASS_THROUGH):
            return
        checked = args[:1] if isinstance(op, nv.WgmmaOp) else args  # acc may be pending
        for value, arg in zip(checked, op.operands, strict=False):
            group = getattr(value, "group", None)
            if group is not None and not group.retired:
                raise Hazard(
                    f"{op.name} reads %{arg.name_hint or '?'} before a wgmma_wait_group "
                    "retired the wgmma group that computes it"
                )


def abi_arguments(contract: LaunchContract, args: Sequence[Any]) -> list[Any]:
    """The lowered kernel's parameters, from the tile-level arguments."""
    return [
        args[p.arg].shape[p.axis] if p.axis is not None else args[p.arg]
        for p in contract.abi
    ]


def run_lowered(
    module: ModuleOp,
    kernel: func.FuncOp,
    checked: Sequence[Any],
    grid3: tuple[int, int, int],
    seed: int,
) -> None:
    """Run a lowered kernel for every program id, a cluster of blocks at a time;
    see the module docstring."""
    name = f"@{kernel.sym_name.data}"
    problems = nv.launch_problems(kernel)  # the verifier's, for IR nobody verified
    if problems:
        op, message = problems[0]
        raise Hazard(f"{name}: {format_at(op, message)}")
    contract = launch_contract(kernel)
    launch = contract.launch
    interpreter, tile_functions = make_interpreter(module)
    scheduler = RoleScheduler(seed)
    size = launch.cluster
    hopper = HopperFunctions(
        scheduler, launch.threads // THREADS_PER_WARPGROUP - 1, size
    )
    interpreter.register_implementations(hopper)
    interpreter = dataclasses.replace(interpreter, listeners=(RegisterTiles(hopper),))
    params = abi_arguments(contract, checked)
    tile_functions.grid = grid3
    tile_functions.cluster = size
    for programs in clusters(grid3, size, name):
        hopper.start(programs)
        with located(name, programs):
            if size == 1:
                tile_functions.program_id = programs[0]
                interpreter.call_op(kernel, params)
            else:
                tile_functions.running = hopper.program
                hopper.run_cluster(interpreter, kernel, params)
    tile_functions.tickets.check_reset()


def _written(
    store: StoreTransfer,
) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...]]:
    """The tensor, offsets and box shape a TMA store writes."""
    tile = store.ring.data[store.slot]
    box = (1,) * (store.array.ndim - tile.ndim) + tile.shape
    return store.array, store.coords, box
