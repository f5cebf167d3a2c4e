"""What the thread simulator (`thread_sim`) keeps while a kernel runs: register
values that are not plainly readable (guarded, or pending under a wgmma), the
barriers of a block (mbarriers, named barriers, the cluster barrier), its
warpgroups (the actors) with their register files, the asynchronous copies in
flight, and the kernel's parameter values."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func

from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import ptx
from tawa_xdsl.interp.barrier_sim import Hazard, MBarrier
from tawa_xdsl.interp.ptx_memory import SharedMemory, TensorMap
from tawa_xdsl.target import THREADS_PER_WARPGROUP

LANES = THREADS_PER_WARPGROUP
WARP = 32


# ------------------------------------------------------------------ values


@dataclass(eq=False)
class WgmmaGroup:
    """wgmma instructions committed together; their shared reads, by block."""

    reads: list[tuple[Block, np.ndarray]] = field(default_factory=list)
    retired: bool = False

    def retire(self) -> None:
        if not self.retired:
            for block, addrs in self.reads:
                block.reading[addrs] -= 1
            self.retired = True


@dataclass(eq=False)
class Regs:
    """A bundle not every element of which may be read: some undefined (its
    instruction's guard was false there), or all pending (a wgmma still writes
    it until `group` retires)."""

    bits: np.ndarray
    defined: np.ndarray | None = None  # [lanes, registers]; None: all
    group: WgmmaGroup | None = None
    origin: str = ""

    @property
    def pending(self) -> bool:
        return self.group is not None and not self.group.retired


Value = np.ndarray | Regs


def bits_of(v: Value) -> np.ndarray:
    return v.bits if isinstance(v, Regs) else v


def merge(take: np.ndarray, new: Value, old: Value) -> Value:
    """`new` in the lanes of `take` ([lanes] bool), `old` elsewhere."""
    nb, ob = bits_of(new), bits_of(old)
    bits = np.where(take[:, None], nb, ob)
    nd = new.defined if isinstance(new, Regs) else None
    od = old.defined if isinstance(old, Regs) else None
    defined = None
    if nd is not None or od is not None:
        full = np.ones(bits.shape, dtype=bool)
        defined = np.where(
            take[:, None],
            full if nd is None else nd,
            full if od is None else od,
        )
    groups = [
        v.group for v in (new, old) if isinstance(v, Regs) and v.group is not None
    ]
    live = [g for g in groups if not g.retired]
    group = live[0] if live else None
    if defined is None and group is None:
        return bits
    origin = new.origin if isinstance(new, Regs) else getattr(old, "origin", "")
    return Regs(bits, defined, group, origin)


# ------------------------------------------------------------------ state


@dataclass(eq=False)
class Barrier:
    """An mbarrier object in shared memory, with who initialised it."""

    state: MBarrier
    owner: Warpgroup
    published_at: int  # the block's CTA-barrier count when it was initialised
    fenced: bool = False  # fence.mbarrier_init since: peers and TMA may use it
    cluster_synced: bool = False  # a cluster barrier completed since

    def used(self) -> bool:
        s = self.state
        return s.completed > 0 or s.pending != s.count or s.tx != 0


@dataclass(eq=False)
class NamedBarrier:
    """`bar.sync` / `bar.arrive` barrier `id` of a block, counted in threads."""

    id: int
    expected: int | None = None  # threads of the phase under way
    arrived: int = 0
    completed: int = 0

    def arrive(self, threads: int, expected: int, where: object) -> int:
        """Add `threads` arrivals to the phase under way (which `expected`
        threads complete); the number of that phase."""
        if self.expected is None:
            self.expected = expected
        elif self.expected != expected:
            raise Hazard(
                f"{where}: barrier {self.id} counts {expected} threads, but its "
                f"phase under way was started with a count of {self.expected}"
            )
        phase = self.completed
        self.arrived += threads
        if self.arrived > self.expected:
            raise Hazard(
                f"{where}: {self.arrived} threads arrive at barrier {self.id}, "
                f"which expects {self.expected}"
            )
        if self.arrived == self.expected:
            self.arrived, self.expected = 0, None
            self.completed += 1
        return phase

    def state(self) -> str:
        return (
            f"barrier {self.id}: phases completed: {self.completed}; "
            f"{self.arrived} of {self.expected or '?'} threads arrived"
        )


@dataclass(eq=False)
class ClusterBarrier:
    """`barrier.cluster.arrive` / `wait` of every thread of a cluster."""

    expected: int
    arrived: int = 0
    completed: int = 0

    def arrive(self, threads: int) -> int:
        phase = self.completed
        self.arrived += threads
        self.check()
        return phase

    def leave(self, threads: int) -> None:
        """Threads that exited no longer take part."""
        self.expected -= threads
        self.check()

    def check(self) -> None:
        if self.expected and self.arrived >= self.expected:
            self.arrived = 0
            self.completed += 1

    def state(self) -> str:
        return (
            f"the cluster barrier: phases completed: {self.completed}; "
            f"{self.arrived} of {self.expected} threads arrived"
        )


@dataclass(eq=False)
class Warpgroup:
    """An actor: 128 lanes of one block, their mask, wgmma groups, bulk groups,
    register budget and shared-memory writes not yet fenced or not yet
    synchronised among its warps."""

    name: str
    block: Block
    index: int
    registers: int
    mask: np.ndarray = field(default_factory=lambda: np.ones(LANES, dtype=bool))
    uncommitted: WgmmaGroup = field(default_factory=WgmmaGroup)
    groups: list[WgmmaGroup] = field(default_factory=list)
    wgmma_fenced: bool = False
    unfenced: np.ndarray = field(init=False)
    unsynced: set[int] = field(default_factory=set)
    """Warps whose `st.shared` neither a `bar.sync` has ordered before another
    warp's instructions nor their own `mbarrier.arrive` (release) has
    published yet: an mbarrier arrive by other warps alone does not publish
    them."""
    unfenced_copies: np.ndarray = field(init=False)
    """Shared bytes `cp.async` copies wrote (generic proxy) since this
    warpgroup's last `fence.proxy.async`: its wgmmas may not read them."""
    copies: list[AsyncCopy] = field(default_factory=list)
    """Its lanes' `cp.async` copies no `cp.async.mbarrier.arrive` tracks yet."""
    bulk_committed: np.ndarray = field(
        default_factory=lambda: np.zeros(LANES, dtype=np.int64)
    )
    regfile: RegisterFile | None = None
    done: bool = False

    def __post_init__(self) -> None:
        self.unfenced = np.zeros(len(self.block.smem.bytes), dtype=bool)
        self.unfenced_copies = np.zeros(len(self.block.smem.bytes), dtype=bool)
        self.tids = (LANES * self.index + np.arange(LANES, dtype=np.uint32))[:, None]


class RegisterFile:
    """Which SSA value each allocated register of a warpgroup's lanes holds.

    Allocated IR (`ptx-allocate`) names a bundle's registers in its type, and a
    register is shared by values whose lives do not overlap. Writes happen for
    the lanes that execute (a guard or an inactive lane leaves the old value),
    and a read must find, in every lane that reads, the value it names: else
    the allocation let another value overwrite it. At a loop's or branch's edge
    a value moves into the carried value or result with no instruction, so both
    must be the same registers."""

    def __init__(self, sizes: dict[str, int]):
        self.owner = {
            cls: np.zeros((LANES, n), dtype=np.int64) for cls, n in sizes.items()
        }


def allocated_registers(kernel: func.FuncOp) -> dict[str, int] | None:
    """Registers per class an allocated kernel uses (None: not allocated)."""
    sizes: dict[str, int] = {}
    found = False
    for op in kernel.walk():
        values = [
            *op.results,
            *(a for r in op.regions for b in r.blocks for a in b.args),
        ]
        for v in values:
            t = v.type
            if isinstance(t, ptx.RegType) and t.is_allocated:
                found = True
                cls = t.register_class
                sizes[cls] = max(sizes.get(cls, 0), t.first.data + t.size)
    return sizes if found else None


@dataclass(eq=False)
class Transfer:
    """A TMA copy in flight into one block."""

    block: Block
    addrs: np.ndarray  # shared byte addresses, in the order of `data`
    data: np.ndarray  # uint8
    barrier: int  # its shared address in `block`
    what: object  # who issued it, formatted only in a report


@dataclass(eq=False)
class AsyncCopy:
    """`cp.async` copies of one instruction in flight: byte `k` goes to
    shared address `addrs[k]`, issued by lane `lanes[k]`."""

    lanes: np.ndarray
    addrs: np.ndarray
    data: np.ndarray  # uint8


@dataclass(eq=False)
class CopyArrival:
    """What a `cp.async.mbarrier.arrive` of `arrivals` lanes tracks: their
    copies, which land together, then their arrivals on the barrier (its
    shared address in `block`)."""

    block: Block
    addrs: np.ndarray
    data: np.ndarray
    barrier: int
    arrivals: int
    what: object


@dataclass(eq=False)
class StoreTransfer:
    """A TMA store: reads its box out of shared memory when the engine runs it."""

    block: Block
    actor: Warpgroup
    lane: int
    group: int
    tmap: TensorMap
    offsets: tuple[int, ...]  # outermost first
    addrs: np.ndarray
    done: bool = False


@dataclass(eq=False)
class Block:
    """One thread block: its coordinates, shared memory, barriers and actors."""

    name: str
    rank: int
    ctaid: tuple[int, int, int]
    smem: SharedMemory
    threads: int
    warpgroups: list[Warpgroup] = field(default_factory=list)
    barriers: dict[int, Barrier] = field(default_factory=dict)
    named: dict[int, NamedBarrier] = field(default_factory=dict)
    stores: list[StoreTransfer] = field(default_factory=list)
    unlanded: list[StoreTransfer] = field(default_factory=list)
    """TMA stores whose global writes no full `cp.async.bulk.wait_group` (without
    `.read`) has waited for."""
    register_pool: int = 0
    cta_syncs: int = 0  # completed phases of bar.sync 0
    exited: bool = False

    def __post_init__(self) -> None:
        n = len(self.smem.bytes)
        self.reading = np.zeros(n, dtype=np.int32)  # live wgmma groups
        self.landing = np.zeros(n, dtype=np.int32)  # TMA copies in flight
        self.store_reading = np.zeros(n, dtype=np.int32)  # TMA stores not read
        self.barrier_bytes = np.zeros(n, dtype=bool)

    def named_barrier(self, id_: int) -> NamedBarrier:
        return self.named.setdefault(id_, NamedBarrier(id_))


# --------------------------------------------------------------- parameters


@dataclass(frozen=True)
class Pointer:
    """A global-memory parameter: the base address of `array`."""

    array: np.ndarray
    name: str = "array"


@dataclass(frozen=True)
class MapParam:
    """A tensor-map parameter for `array`."""

    array: np.ndarray
    type: nv.TensorMapType
    name: str = "map"


ParamValue = int | float | np.uint16 | np.uint64 | Pointer | MapParam
