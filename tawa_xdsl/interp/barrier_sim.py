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
- named barriers (`consumer_barrier`, the MMA turns of `ping-pong`): a phase
  completes when its warpgroups have arrived; a warpgroup arriving twice in one
  phase is a hazard (the hardware would count its threads twice);
- wgmma groups: results are unreadable until a `wgmma_wait_group` retires their
  group; a TMA copy into a slot that an unretired group still reads is a race;
- TMA stores: a staging tile written with `smem_store` must be fenced
  (`fence_proxy_async`) before a TMA store reads it, and must not be written
  again until a `tma_store_wait` has seen the store read it out; the engine
  performs stores, like loads, whenever the seed says;
- data: TMA copies, wgmma products, fragment math and stores are computed on whole
  tiles, so the output can be compared with the reference interpreter.

A state where no actor can move is reported as a predicted hang, naming each
actor's barrier and its state; hazards raise at once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation

from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects.roles import THREADS_PER_WARPGROUP
from tawa_xdsl.dtypes import numpy_dtype
from tawa_xdsl.interp.reference import make_interpreter
from tawa_xdsl.interp.scheduler import (
    Deadlock,
    RoleScheduler,
    SimulationError,
    role_body,
)
from tawa_xdsl.interp.tile import read_box, write_box
from tawa_xdsl.kernel import program_ids

TMA_ENGINE = "tma"


class PredictedHang(Deadlock):
    """No actor can make progress: on a GPU this kernel would hang."""


class Hazard(SimulationError):
    """A read of data that is not there yet, or a write over data still in use."""


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

    def state(self) -> str:
        return (
            f"phases completed: {self.completed}; {self.pending} of {self.count} arrivals "
            f"missing; {self.tx} transaction bytes outstanding"
        )


@dataclass(eq=False)
class Ring:
    name: str
    data: np.ndarray  # [depth, *tile]


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
    ring: Ring
    slot: int
    data: np.ndarray
    barrier: MBarrier
    nbytes: int


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
    """What one actor's threads hold: their wgmma groups and the shared memory
    they wrote and have not yet fenced."""

    uncommitted: Group = field(default_factory=Group)
    groups: list[Group] = field(default_factory=list)
    unfenced: set[tuple[int, int]] = field(default_factory=set)  # (ring id, slot)


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
            self.arrived.clear()
            self.completed += 1
        return phase

    def state(self) -> str:
        return (
            f"phases completed: {self.completed}; arrived: "
            f"{', '.join(sorted(self.arrived)) or 'nobody'} of {self.count} warpgroups"
        )


def _bar(op: Operation, bars: list[MBarrier], i: int) -> str:
    return f"%{op.operands[0].name_hint or 'bars'}[{i}]"


def _no_effect(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
    """Ordering ops: the simulator executes every actor's ops in program order."""
    return ()


@register_impls
class HopperFunctions(InterpreterFunctions):
    """The nvgpu_async ops over simulated shared memory, barriers and wgmma groups."""

    def __init__(self, scheduler: RoleScheduler, warpgroups: int):
        self.scheduler = scheduler
        self.consumers = (
            ["consumer"]
            if warpgroups == 1
            else [f"consumer{w}" for w in range(warpgroups)]
        )
        self.actors = {name: Actor() for name in ["producer", *self.consumers]}
        self.transfers: list[Transfer] = []
        self.stores: list[StoreTransfer] = []  # issued and not yet waited for
        self.store_groups = 0  # bulk groups committed so far
        self._reset_named_barriers()

    def _reset_named_barriers(self) -> None:
        """Fresh named barriers, as each thread block gets."""
        self.consumer_bar = NamedBarrier("the consumer barrier", len(self.consumers))
        self.turns = [
            NamedBarrier(f"the MMA turn barrier of {c}", 2) for c in self.consumers
        ]

    def _actor(self) -> Actor:
        return self.actors[self.scheduler.current() or "producer"]

    def _warpgroup(self) -> int:
        """The running consumer actor's warpgroup index."""
        return self.consumers.index(self.scheduler.current() or "")

    def _issues_tma_stores(self) -> bool:
        """TMA stores are issued by one thread, of consumer warpgroup 0."""
        return self.scheduler.current() == self.consumers[0]

    def _live_groups(self) -> list[Group]:
        return [g for a in self.actors.values() for g in a.groups if not g.retired]

    # ------------------------------------------------------ memory, barriers

    @impl(nv.SmemAllocOp)
    def run_smem_alloc(
        self, interpreter: Interpreter, op: nv.SmemAllocOp, args: PythonValues
    ):
        t = op.result.type
        data = np.zeros(
            (t.depth.data, *t.get_tile()), dtype=numpy_dtype(t.element_type)
        )
        return (Ring(op.result.name_hint or "smem", data),)

    @impl(nv.MBarrierAllocOp)
    def run_mbarrier_alloc(
        self, interpreter: Interpreter, op: nv.MBarrierAllocOp, args: PythonValues
    ):
        name = op.result.name_hint or "mbarrier"
        return ([MBarrier(f"{name}[{i}]") for i in range(op.result.type.count.data)],)

    @impl(nv.MBarrierInitOp)
    def run_mbarrier_init(
        self, interpreter: Interpreter, op: nv.MBarrierInitOp, args: PythonValues
    ):
        for bar in args[0]:
            bar.count = bar.pending = op.count.value.data
        return ()

    def _arrive(self, bar: MBarrier, n: int, where: str) -> None:
        bar.pending -= n
        if bar.pending < 0:
            raise Hazard(
                f"{where}: more arrivals than the {bar.count} a phase of %{bar.name} expects"
            )
        self._maybe_complete(bar)

    def _maybe_complete(self, bar: MBarrier) -> None:
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
        if self.scheduler.current() == "producer":
            n = 1
        else:
            n = THREADS_PER_WARPGROUP if op.scope.data == nv.ArriveScope.THREAD else 1
        self._arrive(bars[i], n, f"{op.name} {_bar(op, bars, i)}")
        return ()

    @impl(nv.MBarrierArriveExpectTxOp)
    def run_arrive_expect_tx(
        self,
        interpreter: Interpreter,
        op: nv.MBarrierArriveExpectTxOp,
        args: PythonValues,
    ):
        bars, i = args
        bars[i].tx += op.bytes.value.data
        self._arrive(bars[i], 1, f"{op.name} {_bar(op, bars, i)}")
        return ()

    @impl(nv.MBarrierWaitOp)
    def run_wait(
        self, interpreter: Interpreter, op: nv.MBarrierWaitOp, args: PythonValues
    ):
        bars, i, parity = args
        bar = bars[i]
        self.scheduler.sync(
            lambda: bar.completed % 2 != parity,
            lambda: f"{op.name} on %{bar.name} for parity {parity} ({bar.state()})",
        )
        return ()

    run_fence_init = impl(nv.FenceMBarrierInitOp)(_no_effect)
    run_cta_barrier = impl(nv.CTABarrierOp)(_no_effect)
    run_prefetch = impl(nv.PrefetchTensorMapOp)(_no_effect)

    def _sync(self, bar: NamedBarrier, op: Operation) -> None:
        phase = bar.arrive(self.scheduler.current() or "", op.name)
        self.scheduler.sync(
            lambda: bar.completed > phase,
            lambda: f"{op.name} on {bar.name} ({bar.state()})",
        )

    @impl(nv.ConsumerBarrierOp)
    def run_consumer_barrier(
        self, interpreter: Interpreter, op: nv.ConsumerBarrierOp, args: PythonValues
    ):
        self._sync(self.consumer_bar, op)
        return ()

    @impl(nv.MmaTurnInitOp)
    def run_mma_turn_init(
        self, interpreter: Interpreter, op: nv.MmaTurnInitOp, args: PythonValues
    ):
        if self._warpgroup() == len(self.consumers) - 1:
            self.turns[0].arrive(self.consumers[-1], op.name)
        return ()

    @impl(nv.MmaTurnBeginOp)
    def run_mma_turn_begin(
        self, interpreter: Interpreter, op: nv.MmaTurnBeginOp, args: PythonValues
    ):
        self._sync(self.turns[self._warpgroup()], op)
        return ()

    @impl(nv.MmaTurnEndOp)
    def run_mma_turn_end(
        self, interpreter: Interpreter, op: nv.MmaTurnEndOp, args: PythonValues
    ):
        w = self._warpgroup()
        self.turns[(w + 1) % len(self.consumers)].arrive(self.consumers[w], op.name)
        return ()

    @impl(nv.FenceProxyAsyncOp)
    def run_fence_proxy(
        self, interpreter: Interpreter, op: nv.FenceProxyAsyncOp, args: PythonValues
    ):
        self._actor().unfenced.clear()
        return ()

    run_setmaxnreg = impl(nv.SetMaxNRegOp)(_no_effect)
    run_wgmma_fence = impl(nv.WgmmaFenceOp)(_no_effect)

    # ------------------------------------------------------------------ TMA

    def _check_not_read(self, ring: Ring, slot: int, what: str) -> None:
        for g in self._live_groups():
            if (id(ring), slot) in g.reads:
                raise Hazard(
                    f"{what} writes slot {slot} of %{ring.name} while a wgmma group that "
                    "reads it is still in flight (missing wgmma_wait_group before the release?)"
                )

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
        tile_shape = ring.data.shape[1:]
        box = (1,) * (array.ndim - len(tile_shape)) + tile_shape
        self._check_not_read(ring, slot, op.name)
        data = read_box(array, coords, box).reshape(tile_shape)
        self.transfers.append(Transfer(ring, slot, data, bars[bi], data.nbytes))
        return ()

    @impl(nv.SmemStoreOp)
    def run_smem_store(
        self, interpreter: Interpreter, op: nv.SmemStoreOp, args: PythonValues
    ):
        value, ring, slot = args
        for st in self.stores:
            if st.ring is ring and st.slot == slot:
                raise Hazard(
                    f"{op.name} writes slot {slot} of %{ring.name} while a TMA store "
                    "may still be reading it (missing tma_store_wait before the write?)"
                )
        ring.data[slot] = np.asarray(value)
        self._actor().unfenced.add((id(ring), slot))
        return ()

    @impl(nv.TMAStoreOp)
    def run_tma_store(
        self, interpreter: Interpreter, op: nv.TMAStoreOp, args: PythonValues
    ):
        ring, slot, array, *coords = args
        if not self._issues_tma_stores():
            return ()
        if any((id(ring), slot) in a.unfenced for a in self.actors.values()):
            raise Hazard(
                f"{op.name} reads slot {slot} of %{ring.name}, written with smem_store "
                "and not yet fenced: TMA may see stale data (missing fence_proxy_async)"
            )
        array = array.reshape((1,) * (len(coords) - array.ndim) + array.shape)
        self.stores.append(
            StoreTransfer(ring, slot, array, tuple(coords), self.store_groups)
        )
        return ()

    @impl(nv.TMAStoreCommitOp)
    def run_tma_store_commit(
        self, interpreter: Interpreter, op: nv.TMAStoreCommitOp, args: PythonValues
    ):
        if self._issues_tma_stores():
            self.store_groups += 1
        return ()

    @impl(nv.TMAStoreWaitOp)
    def run_tma_store_wait(
        self, interpreter: Interpreter, op: nv.TMAStoreWaitOp, args: PythonValues
    ):
        if not self._issues_tma_stores():
            return ()
        first_kept = self.store_groups - op.pending.value.data
        waited = [st for st in self.stores if st.group < first_kept]
        self.scheduler.sync(
            lambda: all(st.done for st in waited),
            lambda: f"{op.name}: {sum(not st.done for st in waited)} TMA stores",
        )
        self.stores = [st for st in self.stores if st not in waited]
        return ()

    def _deliver_store(self, st: StoreTransfer) -> None:
        tile = st.ring.data[st.slot]
        box = (1,) * (st.array.ndim - tile.ndim) + tile.shape
        write_box(st.array, st.coords, tile.reshape(box))
        st.done = True

    def run_engine(self) -> None:
        """The TMA engine: performs issued copies and stores, in an order the seed
        picks."""
        while True:
            self.scheduler.sync(
                lambda: (
                    bool(self.transfers)
                    or any(not st.done for st in self.stores)
                    or all(self.scheduler.finished(a) for a in self.actors)
                ),
                lambda: "nothing (no copies in flight)",
            )
            pending = [st for st in self.stores if not st.done]
            if not self.transfers and not pending:
                return
            pick = self.scheduler.rng.randrange(len(self.transfers) + len(pending))
            if pick >= len(self.transfers):
                self._deliver_store(pending[pick - len(self.transfers)])
                continue
            t = self.transfers.pop(pick)
            self._check_not_read(t.ring, t.slot, "a TMA copy")
            t.ring.data[t.slot] = t.data
            t.barrier.tx -= t.nbytes
            if t.barrier.tx < 0:
                raise Hazard(
                    f"%{t.barrier.name} received {-t.barrier.tx} more bytes than expect_tx armed"
                )
            self._maybe_complete(t.barrier)

    # --------------------------------------------------------------- views

    @impl(nv.SmemSlotOp)
    def run_smem_slot(
        self, interpreter: Interpreter, op: nv.SmemSlotOp, args: PythonValues
    ):
        return (View(args[0], args[1]),)

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
        return (np.array(args[0].tile()),)

    @impl(nv.StoreGlobalOp)
    def run_store_global(
        self, interpreter: Interpreter, op: nv.StoreGlobalOp, args: PythonValues
    ):
        value, array, *offsets = args
        box = (1,) * (array.ndim - value.ndim) + value.shape
        write_box(array, offsets, np.asarray(value).reshape(box))
        return ()

    # --------------------------------------------------------------- wgmma

    @impl(nv.WgmmaOp)
    def run_wgmma(self, interpreter: Interpreter, op: nv.WgmmaOp, args: PythonValues):
        lhs, rhs, acc = args
        reads = {(id(v.ring), v.slot) for v in (lhs, rhs) if isinstance(v, View)}
        a = lhs.tile() if isinstance(lhs, View) else lhs
        product = a.astype(np.float32) @ rhs.tile().astype(np.float32)
        result = (np.asarray(acc) + product).astype(np.float32).view(PendingTile)
        actor = self._actor()
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
        self._reset_named_barriers()
        self.scheduler.run(
            {
                "producer": role_body(interpreter, op.producer),
                **{c: role_body(interpreter, op.consumer) for c in self.consumers},
                TMA_ENGINE: self.run_engine,
            }
        )
        for name, actor in self.actors.items():
            if any(not g.retired for g in actor.groups) or actor.uncommitted.reads:
                raise Hazard(f"{name} exits with wgmma groups still in flight")
        if self.stores:
            raise Hazard(
                "the consumer exits before a tma_store_wait saw its TMA stores read "
                "their staging tiles out (shared memory is freed at exit)"
            )
        return ()


class PendingReads(Interpreter.Listener):
    """Flags a read of wgmma result registers before their group was retired."""

    PASS_THROUGH = (scf.YieldOp, scf.ForOp, scf.IfOp)

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


def abi_arguments(kernel: func.FuncOp, args: Sequence[Any]) -> list[Any]:
    """The lowered kernel's parameters, from the tile-level arguments."""
    abi = kernel.attributes["nvgpu_async.abi"]
    assert isinstance(abi, ArrayAttr)
    values = []
    for entry in abi.data:
        kind, index, *axis = entry.data.split(":")
        value = args[int(index)]
        values.append(value.shape[int(axis[0])] if kind == "dim" else value)
    return values


def run_lowered(
    module: ModuleOp,
    kernel: func.FuncOp,
    checked: Sequence[Any],
    grid3: tuple[int, int, int],
    seed: int,
) -> None:
    """Run a lowered kernel for every program id; see the module docstring."""
    interpreter, tile_functions = make_interpreter(module)
    scheduler = RoleScheduler(seed)
    launch = kernel.attributes["nvgpu_async.launch"]
    threads = launch.data["threads"].value.data
    hopper = HopperFunctions(scheduler, threads // THREADS_PER_WARPGROUP - 1)
    interpreter.register_implementations(hopper)
    interpreter = dataclasses.replace(interpreter, listeners=(PendingReads(),))
    params = abi_arguments(kernel, checked)
    tile_functions.grid = grid3
    for pid in program_ids(grid3):
        tile_functions.program_id = pid
        try:
            interpreter.call_op(kernel, params)
        except Deadlock as e:
            raise PredictedHang(
                f"@{kernel.sym_name.data} program {pid}: predicted hang: "
                f"{e.args[0].removeprefix('deadlock: ')}"
            ) from None
        except SimulationError as e:
            raise type(e)(
                f"@{kernel.sym_name.data} program {pid}: {e.args[0]}"
            ) from None
