"""The thread-level simulator: runs ptx IR (after `distribute-fragments`,
allocated or not, with structured control flow) on a CPU, lane by lane.

Execution is SIMT and vectorised. Each warpgroup of a thread block is one actor
(a seeded coroutine of `scheduler.RoleScheduler`, as in the barrier simulator)
that runs the whole kernel body for its 128 lanes at once; the TMA engine is one
more actor, delivering issued copies and stores in an order the seed picks. A
register bundle is a numpy array `[lanes, registers]` of raw bits
(`ptx_alu.DTYPES`); a value the same in every lane (an immediate, a parameter,
`%ctaid`) keeps a lane extent of 1. `ptx.alu` applies `ptx_alu.ALU[opcode]`
(`EXACT_ALU` under `exact_math`: `run_threads`) to whole arrays.

Control flow runs under an active-lane mask: `ptx.if` on a per-lane predicate
runs each side for its lanes (a side no lane takes is skipped, as the GPU
branches over it), `ptx.for` runs while any active lane's counter is below its
bound, `ptx.while` runs its `before` region for the lanes still looping and its
`after` region for those whose condition holds, and results merge lane by lane
(a while loop's as each lane leaves). Effects (memory, barriers, copies) happen
for the active lanes whose guard predicate holds. A result of a guarded
instruction is undefined where its guard is false; reading such an element in a
lane that executes the reader is a hazard.

Warp-collective instructions check who takes part: `shfl.sync` and `vote.sync`
with a full member mask and `bar.sync` need all 32 lanes of every warp that
reaches them; `wgmma.*` and `setmaxnreg` need the whole warpgroup (on the GPU:
undefined results or a hang). A `ptx.if uniform` (printed `bra.uni`) must have
one condition per warp.

Memory (`ptx_memory`): global memory is the host arrays at fake device
addresses, so a wrong address, mask or alignment is caught at the lane and
address where it happens; shared memory is bytes (out of the launch's size or
misaligned: a hazard), filled with garbage at start. Shared bytes carry what the
asynchronous units do with them: copies in flight into them (read them first: a
hazard), wgmma groups reading them (overwrite them before the group retires: a
hazard), TMA stores not yet read out (overwrite them: a hazard), generic writes
not yet made visible by `fence.proxy.async` (a TMA store or wgmma reading them:
a hazard), and mbarrier objects (any other access: a hazard).

The asynchronous machinery is Hopper's: mbarriers count arrivals and
transaction bytes per phase, and `try_wait.parity P` passes iff the phase of
parity P is the last completed one (a fresh barrier passes parity 1); one lane
of another warpgroup may only use a barrier after a `bar.sync` published its
init, a peer block only after `fence.mbarrier_init` and a cluster barrier. TMA
loads copy a box (zeros outside the tensor) into shared memory in the 128-byte
swizzled layout and complete its bytes on the barrier of every block of the
multicast mask; TMA stores read their staging box out when the engine performs
them, tracked in per-thread bulk groups. `wgmma` reads A and B through their
descriptors (`ptx_wgmma`) or A from registers, computes in f32 and leaves the
accumulator pending until a `wgmma.wait_group` retires its group. Named
barriers (`bar.sync` / `bar.arrive`) count threads; `setmaxnreg` moves
registers between the block's pool and a warpgroup, waiting while the pool is
short; the cluster barrier waits for every thread of every block of the cluster.

Allocated IR (after `ptx-allocate`) also runs against a register file per
warpgroup (`RegisterFile`): an instruction writes its registers only in the
lanes that execute it, a read must find there the value it names, and a loop's
or branch's edge, which moves values with no instruction, must join values in
the same registers; so an allocation that lets two live values share registers,
or a missing phi copy, is caught where it is read.

Within an actor, lanes run in lock step: a wait holds the warpgroup until every
waiting lane may go on. When no actor can move the kernel would hang on the GPU:
`PredictedHang` names each actor's wait and the state of what it waits for.

Entry points: `run_threads` runs a kernel with its `.param` values by name
(`Pointer`, `MapParam`, numbers) and returns the machine (global memory counts
every byte written; `stores` counts store instructions by opcode);
`launch_parameters` derives those values from the tile-level arguments, as
`tawa_xdsl.simulate` does for distributed kernels.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Operation, Region, SSAValue
from xdsl.utils.scoped_dict import ScopedDict

from tawa_xdsl.contract import kernel_launch, launch_contract
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import ptx
from tawa_xdsl.dialects.nvgpu_async import ParamKind
from tawa_xdsl.dialects.ptx import map_values
from tawa_xdsl.dialects.roles import entry_register_cap
from tawa_xdsl.dtypes import bfloat16, float8_e4m3fn, float8_e5m2
from tawa_xdsl.interp.barrier_sim import (
    Hazard,
    MBarrier,
    located,
    run_tma_engine,
)
from tawa_xdsl.interp.ptx_alu import (
    ALU,
    BYTES,
    CLUSTER_WINDOW,
    DTYPES,
    EXACT_ALU,
    Fn,
    add_sat_s32,
    f32_bits,
)
from tawa_xdsl.interp.ptx_memory import (
    PARAM_BASE,
    SMEM_BASE,
    AccessFault,
    GlobalMemory,
    SharedMemory,
    TensorMap,
    box_addresses,
)
from tawa_xdsl.interp.ptx_wgmma import (
    Descriptor,
    a_fragment_matrix,
    accumulator_bits,
    accumulator_matrix,
    k_major_addresses,
    mma,
    mn_major_addresses,
)
from tawa_xdsl.interp.scheduler import RoleScheduler
from tawa_xdsl.interp.thread_state import (
    LANES,
    WARP,
    AsyncCopy,
    Barrier,
    Block,
    ClusterBarrier,
    CopyArrival,
    MapParam,
    NamedBarrier,
    ParamValue,
    Pointer,
    RegisterFile,
    Regs,
    StoreTransfer,
    Transfer,
    Value,
    Warpgroup,
    WgmmaGroup,
    allocated_registers,
    bits_of,
    merge,
)
from tawa_xdsl.interp.tile import TileCounter, boxes_overlap, read_box, write_tma_box
from tawa_xdsl.kernel import KernelArgumentError, clusters
from tawa_xdsl.target import REGISTERS_PER_SM, TMA_ALIGN

TMA_ENGINE = "tma"
WGMMA_DTYPES = {
    "bf16": bfloat16,
    "f16": np.dtype(np.float16),
    "e4m3": float8_e4m3fn,
    "e5m2": float8_e5m2,
}


@dataclass(frozen=True)
class Who:
    """`actor: op` for messages, formatted only when a message is."""

    actor: str
    op: Operation

    def __str__(self) -> str:
        return f"{self.actor}: {_describe(self.op)}"


def _describe(op: Operation) -> str:
    text = str(op).strip().splitlines()[0]
    return text if len(text) <= 160 else text[:157] + "..."


def _warps_partly(mask: np.ndarray) -> list[int]:
    """Warps in which some but not all of `mask`'s lanes are set."""
    per_warp = mask.reshape(-1, WARP)
    some, every = per_warp.any(axis=1), per_warp.all(axis=1)
    return [int(w) for w in np.flatnonzero(some & ~every)]


# ---------------------------------------------------------------- machine


@register_impls
class ThreadFunctions(InterpreterFunctions):
    """The ptx ops over simulated warpgroups, memory, barriers and TMA."""

    def __init__(
        self,
        scheduler: RoleScheduler,
        params: dict[str, ParamValue],
        threads: int,
        smem: int,
        cluster: int,
        grid: tuple[int, int, int],
        seed: int,
        registers: dict[str, int] | None = None,
        alu: dict[str, Fn] = ALU,
    ):
        self.scheduler = scheduler
        self.alu = alu
        """What each `ptx.alu` opcode computes (`ptx_alu.ALU`, or `EXACT_ALU`)."""
        self.registers = registers  # allocated IR: registers per class
        self.threads = threads
        self.smem_size = smem
        self.cluster = cluster
        self.grid = grid
        self.rng = np.random.default_rng(seed)
        self.memory = GlobalMemory()
        self.tile_counters: dict[str, TileCounter] = {}
        """The launch's tile counters (`ptx.tile_ticket`), by `.global` symbol."""
        self.params: dict[str, np.ndarray] = {}
        self.maps: dict[int, TensorMap] = {}
        for name, value in params.items():
            self.params[name] = self._param_bits(name, value)
        self.blocks: list[Block] = []
        self.transfers: list[Transfer] = []
        self.cluster_bar = ClusterBarrier(0)
        self._local = threading.local()
        self._imms: dict[Operation, np.ndarray] = {}
        self.stores: Counter[str] = Counter()
        """Store instructions run by at least one lane, by PTX opcode."""
        self._ids: dict[SSAValue, int] = {}
        self._values: list[SSAValue] = []

    # ---------------------------------------------------------- set-up

    def _param_bits(self, name: str, value: ParamValue) -> np.ndarray:
        """A parameter's register bits (b64 for addresses)."""
        if isinstance(value, MapParam):
            address = PARAM_BASE + 128 * len(self.maps)
            self.maps[address] = TensorMap.of(value.name, value.array, value.type)
            return np.array([[address]], dtype=np.uint64)
        if isinstance(value, Pointer):
            return np.array(
                [[self.memory.allocate(value.name, value.array).base]], dtype=np.uint64
            )
        if isinstance(value, np.uint16 | np.uint64):  # `scalar_bits`
            return np.array([[value]], dtype=value.dtype)
        if isinstance(value, float | np.floating):
            return f32_bits(np.array([[value]]))
        return np.array([[int(value) & 0xFFFFFFFF]], dtype=np.uint32)

    def start(self, programs: list[tuple[int, int, int]]) -> None:
        """Fresh blocks for the programs of one cluster, as the GPU starts them."""
        warpgroups = self.threads // LANES
        cap = entry_register_cap(self.threads)
        self.blocks = []
        for rank, pid in enumerate(programs):
            block = Block(
                f"block{rank}" if self.cluster > 1 else "",
                rank,
                pid,
                SharedMemory(self.smem_size, self.rng),
                self.threads,
                register_pool=REGISTERS_PER_SM - cap * self.threads,
            )
            prefix = f"{block.name}." if block.name else ""
            block.warpgroups = [
                Warpgroup(
                    f"{prefix}wg{w}",
                    block,
                    w,
                    cap,
                    regfile=RegisterFile(self.registers) if self.registers else None,
                )
                for w in range(warpgroups)
            ]
            self.blocks.append(block)
        self.transfers = []
        self.cluster_bar = ClusterBarrier(self.threads * len(programs))

    @property
    def actor(self) -> Warpgroup:
        return self._local.actor

    # ---------------------------------------------------------- reading

    def _check_readable(
        self,
        op: Operation,
        operand: int,
        v: Value,
        lanes: np.ndarray | None,
        pending_ok: bool = False,
    ) -> None:
        """`v` may be read by `op` in `lanes` (all active lanes when None);
        `pending_ok` for a wgmma accumulator, which a chain of wgmmas passes on."""
        if not isinstance(v, Regs):
            return
        hint = op.operands[operand].name_hint
        name = f"%{hint}" if hint else f"operand {operand}"
        if v.pending and not pending_ok:
            raise Hazard(
                f"{self.actor.name}: {_describe(op)} reads {name} before a "
                "wgmma.wait_group retired the wgmma group that writes it"
            )
        if v.defined is None:
            return
        rows = self.actor.mask if lanes is None else lanes
        defined = np.broadcast_to(v.defined, (LANES, v.defined.shape[1]))
        missing = rows[:, None] & ~defined
        if missing.any():
            lane, k = (int(x[0]) for x in np.nonzero(missing))
            raise Hazard(
                f"{self.actor.name}: {_describe(op)} reads element {k} of {name} in "
                f"lane {lane}, which {v.origin or 'its instruction'} did not write "
                "there (its guard was false)"
            )

    def _read(
        self,
        op: Operation,
        operand: int,
        v: Value,
        element_map: Sequence[int] | None = None,
        lanes: np.ndarray | None = None,
        pending_ok: bool = False,
    ) -> np.ndarray:
        """Operand `operand`'s bits through its map, checked for `lanes`."""
        if self.registers is not None:
            ssa = op.operands[operand]
            n = ptx.width(ssa)
            regs = np.asarray(element_map) if element_map else np.arange(n)
            self._check_registers(
                op, ssa, regs, self.actor.mask if lanes is None else lanes
            )
        if element_map:
            idx = np.asarray(element_map)
            if isinstance(v, Regs):
                v = Regs(
                    v.bits[:, idx],
                    None if v.defined is None else v.defined[:, idx],
                    v.group,
                    v.origin,
                )
            else:
                v = v[:, idx]
        self._check_readable(op, operand, v, lanes, pending_ok)
        return bits_of(v)

    def _guard(
        self, op: ptx.Predicated, args: PythonValues, n: int = 1
    ) -> np.ndarray | None:
        """The guard's truth `[lanes, n]` (None: no guard)."""
        if op.pred is None:
            return None
        m = op.pred_map.get_values() if op.pred_map is not None else None
        p = self._read(op, len(args) - 1, args[-1], m)
        p = np.broadcast_to(p, (LANES, n) if p.shape[1] == 1 else (LANES, p.shape[1]))
        return ~p if op.negated else p

    def _lanes(self, op: ptx.Predicated, args: PythonValues) -> np.ndarray:
        """The lanes that execute a one-instruction op: active, guard true."""
        g = self._guard(op, args, 1)
        return self.actor.mask if g is None else self.actor.mask & g[:, 0]

    def _per_lane(self, x: np.ndarray) -> np.ndarray:
        """`x` `[1 or lanes, ...]` as one row per lane."""
        return np.broadcast_to(x, (LANES, *x.shape[1:]))

    def _uniform(
        self, op: Operation, x: np.ndarray, lanes: np.ndarray, what: str
    ) -> int:
        """The one value `x` has in `lanes`; different values are a hazard."""
        values = np.unique(self._per_lane(x)[lanes, 0])
        if len(values) != 1:
            raise Hazard(
                f"{self.actor.name}: {_describe(op)}: {what} differs between the "
                f"lanes that execute it ({', '.join(map(hex, values[:4].tolist()))}...)"
            )
        return int(values[0])

    def _whole_warpgroup(self, op: Operation) -> None:
        if not self.actor.mask.all():
            raise Hazard(
                f"{self.actor.name}: {_describe(op)} is reached by "
                f"{int(self.actor.mask.sum())} of the warpgroup's 128 threads; "
                "it must be executed by all of them (.sync.aligned)"
            )

    def _whole_warps(self, op: Operation, lanes: np.ndarray) -> None:
        if partly := _warps_partly(lanes):
            raise Hazard(
                f"{self.actor.name}: {_describe(op)} is reached by part of warp "
                f"{partly[0]} only (lanes "
                f"{np.flatnonzero(lanes.reshape(-1, WARP)[partly[0]]).tolist()}); "
                "every lane of the warp must take part"
            )

    # ---------------------------------------------------------- registers

    def _id(self, value: SSAValue) -> int:
        if (i := self._ids.get(value)) is None:
            self._values.append(value)
            i = self._ids[value] = len(self._values)
        return i

    def _holder(self, i: int) -> str:
        if i == 0:
            return "nothing written yet"
        v = self._values[i - 1]
        where = (
            _describe(v.owner) if isinstance(v.owner, Operation) else "a block argument"
        )
        return f"%{v.name_hint or '?'} of {where}"

    def _check_registers(
        self, op: Operation, value: SSAValue, regs: np.ndarray, lanes: np.ndarray
    ) -> None:
        """`value`'s registers `regs` (indices into its bundle) still hold it
        in `lanes`."""
        t = value.type
        rf = self.actor.regfile
        if rf is None or not isinstance(t, ptx.RegType) or not t.is_allocated:
            return
        cols = t.first.data + regs
        held = rf.owner[t.register_class][np.ix_(np.flatnonzero(lanes), cols)]
        wrong = held != self._id(value)
        if wrong.any():
            row, col = (int(x[0]) for x in np.nonzero(wrong))
            raise Hazard(
                f"{self.actor.name}: {_describe(op)} reads "
                f"{t.register(int(regs[col]))} as %{value.name_hint or '?'} in lane "
                f"{int(np.flatnonzero(lanes)[row])}, but the register holds "
                f"{self._holder(int(held[row, col]))} (the allocation shares it "
                "between values that are live at once)"
            )

    def _write_registers(
        self, value: SSAValue, written: np.ndarray, regs: np.ndarray | None = None
    ) -> None:
        """`value` now sits in its registers `regs` (all by default) where
        `written` ([lanes, len(regs)] or [lanes, 1]) holds."""
        t = value.type
        rf = self.actor.regfile
        if rf is None or not isinstance(t, ptx.RegType) or not t.is_allocated:
            return
        if regs is None:
            regs = np.arange(t.size)
        cols = t.first.data + regs
        owner = rf.owner[t.register_class]
        block = owner[:, cols]
        np.copyto(block, self._id(value), where=np.broadcast_to(written, block.shape))
        owner[:, cols] = block

    def _edge(
        self, op: Operation, target: SSAValue, source: SSAValue, lanes: np.ndarray
    ) -> None:
        """At a loop's or branch's edge `source` becomes `target` with no
        instruction: the same registers, still holding `source`."""
        tt, st = target.type, source.type
        if self.actor.regfile is None or not lanes.any():
            return
        if not isinstance(tt, ptx.RegType) or not tt.is_allocated:
            return
        if not isinstance(st, ptx.RegType) or (st.first, st.size) != (
            tt.first,
            tt.size,
        ):
            where = st.register(0) if isinstance(st, ptx.RegType) else "an immediate"
            raise Hazard(
                f"{self.actor.name}: {_describe(op)}: %{source.name_hint or '?'} "
                f"({where}) becomes %{target.name_hint or '?'} ({tt.register(0)}) "
                "with no copy between their registers"
            )
        self._check_registers(op, source, np.arange(tt.size), lanes)
        self._write_registers(target, lanes[:, None])

    def wrote(self, op: Operation, results: PythonValues) -> None:
        """After `op` ran: its results sit in their registers where it wrote."""
        if self.actor.regfile is None or isinstance(op, ptx.STRUCTURED):
            return
        mask = self.actor.mask[:, None]
        for value, python in zip(op.results, results, strict=True):
            regs = None
            if isinstance(op, ptx.WgmmaOp) and (
                op.acc is None or op.acc.type != value.type
            ):  # only the slice is written
                start = op.start.value.data
                regs = np.arange(start, start + op.n // 2)
            written = mask
            if isinstance(python, Regs) and python.defined is not None:
                defined = python.defined
                written = mask & (defined if regs is None else defined[:, regs])
            self._write_registers(value, written, regs)

    @contextlib.contextmanager
    def _faults(self, op: Operation) -> Iterator[None]:
        """Memory faults as hazards, naming the actor and the op."""
        try:
            yield
        except AccessFault as e:
            raise Hazard(f"{self.actor.name}: {_describe(op)}: {e}") from None

    def _block_of(self, addr: int, op: Operation) -> tuple[Block, int]:
        """The block and local shared address a shared::cluster address names."""
        if addr < CLUSTER_WINDOW:
            return self.actor.block, addr
        rank = addr // CLUSTER_WINDOW - 1
        if rank >= len(self.blocks):
            raise Hazard(
                f"{self.actor.name}: {_describe(op)}: shared::cluster address "
                f"{addr:#x} names block {rank} of a cluster of {len(self.blocks)}"
            )
        peer = self.blocks[rank]
        if peer.exited:
            raise Hazard(
                f"{self.actor.name}: {_describe(op)} reaches {peer.name or 'a block'}, "
                "which has exited (missing cluster barrier before exit?)"
            )
        return peer, addr % CLUSTER_WINDOW

    # ---------------------------------------------------------- values

    @impl(ptx.ImmOp)
    def run_imm(self, interpreter: Interpreter, op: ptx.ImmOp, args: PythonValues):
        if (cached := self._imms.get(op)) is None:
            cls = ptx.register_class(op.result)
            values = op.values()
            if cls == "f32":
                cached = f32_bits(np.array([values]))
            else:
                mask = (1 << (8 * BYTES[cls])) - 1
                cached = np.array([[v & mask for v in values]], dtype=DTYPES[cls])
            self._imms[op] = cached
        return (cached,)

    @impl(ptx.SpecialOp)
    def run_special(
        self, interpreter: Interpreter, op: ptx.SpecialOp, args: PythonValues
    ):
        name = op.register.data
        block = self.actor.block
        if name == "%tid.x":
            return (self.actor.tids,)
        values = {
            "smem": SMEM_BASE,
            "%cluster_ctarank": block.rank,
            "%clusterid.x": block.ctaid[0] // self.cluster,
            **{f"%ctaid.{a}": block.ctaid[i] for i, a in enumerate("xyz")},
            **{f"%nctaid.{a}": self.grid[i] for i, a in enumerate("xyz")},
        }
        return (np.array([[values[name]]], dtype=np.uint32),)

    @impl(ptx.TileTicketOp)
    def run_tile_ticket(
        self, interpreter: Interpreter, op: ptx.TileTicketOp, args: PythonValues
    ):
        """`atom.global.inc.u32`: each executing lane takes the next ticket."""
        lanes = self.actor.mask
        bounds = self._per_lane(self._read(op, 0, args[0], lanes=lanes))[:, 0]
        counter = self.tile_counters.setdefault(op.counter.data, TileCounter())
        tickets = np.zeros((LANES, 1), dtype=np.uint32)
        for lane in np.nonzero(lanes)[0]:
            tickets[lane, 0] = counter.take(op, int(bounds[lane]) + 1)
        return (tickets,)

    @impl(ptx.ParamOp)
    def run_param(self, interpreter: Interpreter, op: ptx.ParamOp, args: PythonValues):
        name = op.param.data
        if name not in self.params:
            raise OpDiagnostic(op, f"no value for kernel parameter '{name}'")
        bits = self.params[name]
        want = DTYPES[ptx.register_class(op.result)]
        if bits.dtype != want:
            raise OpDiagnostic(
                op, f"parameter '{name}' holds {bits.dtype} bits, read as {want}"
            )
        is_map = int(bits[0, 0]) in self.maps
        if bool(op.generic) != is_map:
            raise OpDiagnostic(
                op,
                f"parameter '{name}' is {'a' if is_map else 'not a'} tensor map; "
                f"it is read {'with' if op.generic else 'without'} `generic`",
            )
        return (bits,)

    @impl(ptx.AluOp)
    def run_alu(self, interpreter: Interpreter, op: ptx.AluOp, args: PythonValues):
        n = ptx.width(op.result)
        guard = self._guard(op, args, n)
        lanes = None if guard is None else self.actor.mask & guard.any(axis=1)
        maps = (
            [m.get_values() for m in op.maps.data] if op.maps else [None] * len(op.args)
        )
        xs = [
            self._read(op, i, args[i], maps[i] or None, lanes)
            for i in range(len(op.args))
        ]
        bits = self.alu[op.opcode.data](*xs)
        bits = np.asarray(bits, dtype=DTYPES[ptx.register_class(op.result)])
        if bits.shape[1] != n:
            bits = np.broadcast_to(bits, (bits.shape[0], n))
        if guard is None:
            return (bits,)
        return (Regs(self._per_lane(bits).copy(), guard.copy(), origin=op.opcode.data),)

    @impl(ptx.UnpackOp)
    def run_unpack(
        self, interpreter: Interpreter, op: ptx.UnpackOp, args: PythonValues
    ):
        x = self._read(op, 0, args[0])
        out = np.empty((x.shape[0], 2 * x.shape[1]), dtype=np.uint16)
        out[:, 0::2] = x & 0xFFFF
        out[:, 1::2] = x >> 16
        return (out,)

    @impl(ptx.PackOp)
    def run_pack(self, interpreter: Interpreter, op: ptx.PackOp, args: PythonValues):
        x = self._read(op, 0, args[0]).astype(np.uint32)
        return (x[:, 0::2] | (x[:, 1::2] << 16),)

    @impl(ptx.ShflIdxOp)
    def run_shfl_idx(
        self, interpreter: Interpreter, op: ptx.ShflIdxOp, args: PythonValues
    ):
        lanes = self.actor.mask
        self._whole_warps(op, lanes)
        src = self._per_lane(self._read(op, 0, args[0]))
        lane = self._per_lane(self._read(op, 1, args[1]))[:, 0].astype(np.int64)
        if (lanes & ((lane < 0) | (lane >= WARP))).any():
            raise Hazard(
                f"{self.actor.name}: {_describe(op)} names a lane outside 0..31"
            )
        partner = np.arange(LANES) // WARP * WARP + (lane % WARP)
        return (src[partner],)

    @impl(ptx.ShflOp)
    def run_shfl(self, interpreter: Interpreter, op: ptx.ShflOp, args: PythonValues):
        n = ptx.width(op.result)
        guard = self._guard(op, args, n)
        lanes = (
            self.actor.mask if guard is None else self.actor.mask & guard.all(axis=1)
        )
        self._whole_warps(op, lanes)
        src = self._per_lane(self._read(op, 0, args[0], lanes=lanes))
        partner = np.arange(LANES) ^ op.lane_mask.value.data
        out = src[partner]
        if guard is None:
            return (out,)
        return (Regs(out.copy(), guard.copy(), origin=op.name),)

    @impl(ptx.VoteAnyOp)
    def run_vote(self, interpreter: Interpreter, op: ptx.VoteAnyOp, args: PythonValues):
        lanes = self.actor.mask
        self._whole_warps(op, lanes)
        p = self._per_lane(self._read(op, 0, args[0]))[:, 0] & lanes
        return (np.repeat(p.reshape(-1, WARP).any(axis=1), WARP)[:, None],)

    # ---------------------------------------------------------- memory

    def _instructions(
        self, op: ptx.LoadOp | ptx.StoreOp, args: PythonValues, width: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """For each instruction `i` of a memory op, which lanes execute it
        (active, guard element `i` true) and their addresses (address element
        `i` plus the offsets), `[lanes, instructions]`, checked for alignment."""
        n = len(op.instruction_offsets())
        guard = self._guard(op, args, n)
        lanes = self.actor.mask[:, None] & (True if guard is None else guard)
        lanes = np.broadcast_to(lanes, (LANES, n))
        m = map_values(op.addr_map) if op.addr_map is not None else None
        base = self._read(op, 0, args[0], m, lanes.any(axis=1))
        extra = np.asarray(op.instruction_offsets(), dtype=np.uint64)
        addrs = base.astype(np.uint64) + np.uint64(op.offset.value.data) + extra
        addrs = np.broadcast_to(addrs, (LANES, n))
        misaligned = lanes & (addrs % np.uint64(width) != 0)
        if misaligned.any():
            lane, i = (int(x[0]) for x in np.nonzero(misaligned))
            raise Hazard(
                f"{self.actor.name}: {_describe(op)}: instruction {i} in lane {lane} "
                f"accesses {width} bytes at {op.space.data} address "
                f"{int(addrs[lane, i]):#x}, not aligned to {width}"
            )
        return lanes, addrs

    def _shared_access(
        self, op: Operation, block: Block, addrs: np.ndarray, write: bool
    ) -> None:
        """What a generic access to shared bytes must not meet."""
        flat = addrs.reshape(-1)
        who = Who(self.actor.name, op)
        if block.barrier_bytes[flat].any():
            raise Hazard(f"{who} touches an mbarrier object in shared memory")
        if block.landing[flat].any():
            raise Hazard(
                f"{who} {'writes' if write else 'reads'} shared bytes a TMA copy still "
                "in flight is writing (missing mbarrier wait?)"
            )
        if write and block.reading[flat].any():
            raise Hazard(
                f"{who} writes shared bytes a wgmma group still in flight reads "
                "(missing wgmma.wait_group?)"
            )
        if write and block.store_reading[flat].any():
            raise Hazard(
                f"{who} writes shared bytes a TMA store has not read out yet "
                "(missing cp.async.bulk.wait_group.read?)"
            )

    @impl(ptx.LoadOp)
    def run_load(self, interpreter: Interpreter, op: ptx.LoadOp, args: PythonValues):
        cls, n = ptx.register_class(op.result), ptx.width(op.result)
        vector = op.vector
        width = op.narrow or vector * BYTES[cls]
        lanes, addrs = self._instructions(op, args, width)
        out = np.zeros((LANES, n), dtype=DTYPES[cls])
        if lanes.any():
            where = addrs.T[lanes.T]  # instruction-major
            with self._faults(op):
                if op.space.data == "global":
                    data = self.memory.read(where, width, "ld.global")
                else:
                    block = self.actor.block
                    block.smem.check(where, width, "ld.shared")
                    span = where.astype(np.int64)[:, None] + np.arange(width)
                    self._shared_access(op, block, span, write=False)
                    data = block.smem.bytes[span]
            if op.byte:  # ld.s8: the byte sign-extended into the register
                got = data.view(np.int8).astype(np.int32).view(np.uint32)
            elif op.half:  # ld.u16: two bytes zero-extended
                got = data.view(np.uint16).astype(np.uint32)
            else:
                got = np.ascontiguousarray(data).view(DTYPES[cls])
            got = got.reshape(-1, vector)
            view = out.reshape(LANES, -1, vector).transpose(1, 0, 2)  # [instr, lane, v]
            view[lanes.T] = got
        if op.pred is None:
            return (out,)
        defined = np.repeat(lanes, vector, axis=1)
        return (Regs(out, defined, origin=op.name),)

    @impl(ptx.StoreOp)
    def run_store(self, interpreter: Interpreter, op: ptx.StoreOp, args: PythonValues):
        cls = ptx.register_class(op.value)
        vector = op.vector
        width = op.narrow or vector * BYTES[cls]
        lanes, addrs = self._instructions(op, args, width)
        if not lanes.any():
            return ()
        kind = f"st.{op.space.data}.{f'v{vector}.' if vector > 1 else ''}"
        self.stores[kind + op.memory_type(cls)] += int(lanes.any(axis=0).sum())
        values = self._per_lane(
            self._read(op, 1, args[1], op.elements, lanes.any(axis=1))
        )
        # st.u8, st.u16: the low byte or two
        dtype = {1: np.uint8, 2: np.uint16}.get(op.narrow or 0, DTYPES[cls])
        values = values.astype(dtype).reshape(LANES, -1, vector)  # [lane, instr, v]
        data = np.ascontiguousarray(values.transpose(1, 0, 2)[lanes.T]).view(np.uint8)
        where = addrs.T[lanes.T]  # instruction-major, as the instructions run
        instr = np.nonzero(lanes.T)[0]
        self._check_racing_lanes(op, instr, np.nonzero(lanes.T)[1], where, data)
        with self._faults(op):
            if op.space.data == "global":
                self.memory.write(where, data, "st.global")
            else:
                block = self.actor.block
                block.smem.check(where, width, "st.shared")
                span = where.astype(np.int64)[:, None] + np.arange(width)
                self._shared_access(op, block, span, write=True)
                block.smem.bytes[span] = data
                self.actor.unfenced[span.reshape(-1)] = True
                warps = lanes.any(axis=1).reshape(-1, WARP).any(axis=1)
                self.actor.unsynced.update(np.flatnonzero(warps).tolist())
        return ()

    def _check_racing_lanes(
        self,
        op: Operation,
        instr: np.ndarray,
        lane: np.ndarray,
        addrs: np.ndarray,
        data: np.ndarray,
    ) -> None:
        """Two lanes of one instruction writing different values to one byte:
        which wins is undefined."""
        width = data.shape[1]
        byte = (addrs.astype(np.int64)[:, None] + np.arange(width)).reshape(-1)
        key = np.repeat(instr, width)
        order = np.lexsort((byte, key))
        b, k, d = byte[order], key[order], data.reshape(-1)[order]
        clash = (b[1:] == b[:-1]) & (k[1:] == k[:-1]) & (d[1:] != d[:-1])
        if clash.any():
            i = int(np.flatnonzero(clash)[0])
            who = lane[order[[i, i + 1]] // width]
            raise Hazard(
                f"{self.actor.name}: {_describe(op)}: lanes {who[0]} and {who[1]} "
                f"write different values to address {int(b[i]):#x}"
            )

    # ---------------------------------------------------------- mbarriers

    def _barrier(self, op: Operation, block: Block, addr: int) -> Barrier:
        """The initialised barrier at `addr` of `block`, usable by this actor."""
        found = block.barriers.get(addr)
        who = Who(self.actor.name, op)
        if found is None:
            raise Hazard(f"{who}: no initialised mbarrier at shared address {addr:#x}")
        if block is not self.actor.block:
            if not (found.fenced and found.cluster_synced):
                raise Hazard(
                    f"{who} reaches the mbarrier at {addr:#x} of {block.name} before "
                    "that block fenced its init and met this one at a cluster barrier"
                )
        elif (
            found.owner is not self.actor
            and block.cta_syncs <= found.published_at
            and not found.cluster_synced  # a cluster barrier syncs the block too
        ):
            raise Hazard(
                f"{who} uses the mbarrier at {addr:#x} before a bar.sync published "
                f"its init by {found.owner.name}"
            )
        return found

    def _barrier_addresses(
        self, op: ptx._Barrier, args: PythonValues, lanes: np.ndarray
    ) -> np.ndarray:
        base = self._per_lane(self._read(op, 0, args[0], lanes=lanes))[lanes, 0]
        return base.astype(np.int64) + op.offset.value.data

    @impl(ptx.MBarrierInitOp)
    def run_mbarrier_init(
        self, interpreter: Interpreter, op: ptx.MBarrierInitOp, args: PythonValues
    ):
        lanes = self._lanes(op, args)
        block = self.actor.block
        count = op.count.value.data
        for addr in np.unique(self._barrier_addresses(op, args, lanes)).tolist():
            with self._faults(op):
                block.smem.check(np.array([addr]), 8, "mbarrier.init")
            if addr % 8:
                raise Hazard(
                    f"{self.actor.name}: {_describe(op)}: an mbarrier at {addr:#x} is "
                    "not 8-byte aligned"
                )
            old = block.barriers.get(addr)
            if old is not None and old.used():
                raise Hazard(
                    f"{self.actor.name}: {_describe(op)} re-initialises the mbarrier at "
                    f"{addr:#x} while it is in use ({old.state.state()})"
                )
            span = np.arange(addr, addr + 8)
            if block.landing[span].any() or block.reading[span].any():
                raise Hazard(
                    f"{self.actor.name}: {_describe(op)}: the mbarrier at {addr:#x} "
                    "overlaps shared memory that TMA or wgmma is using"
                )
            state = MBarrier(
                f"{block.name + '.' if block.name else ''}mbarrier@{addr:#x}"
            )
            state.count = state.pending = count
            block.barriers[addr] = Barrier(state, self.actor, block.cta_syncs)
            block.barrier_bytes[span] = True
        return ()

    def _arrive(self, bar: Barrier, n: int, where: object) -> None:
        """`n` arrivals of one instruction (its lanes): more than the phase
        still expects would complete it and run into the next, which no
        protocol means (a guard that should elect one thread, dropped)."""
        state = bar.state
        if n > state.pending:
            raise Hazard(
                f"{where}: {n} arrivals at once, and the phase of {state.name} "
                f"under way expects {state.pending} more of its {state.count}"
            )
        state.pending -= n
        self._maybe_complete(state)

    def _maybe_complete(self, state: MBarrier) -> None:
        if state.pending == 0 and state.tx < 0:
            raise Hazard(
                f"{state.name} received {-state.tx} more bytes than expect_tx armed"
            )
        if state.pending == 0 and state.tx == 0:
            state.completed += 1
            state.pending = state.count

    @impl(ptx.MBarrierArriveOp)
    def run_mbarrier_arrive(
        self, interpreter: Interpreter, op: ptx.MBarrierArriveOp, args: PythonValues
    ):
        lanes = self._lanes(op, args)
        where = Who(self.actor.name, op)
        arriving = set(np.flatnonzero(lanes.reshape(-1, WARP).any(axis=1)).tolist())
        if lanes.any() and self.actor.unsynced - arriving:
            raise Hazard(
                f"{where}: the arrive publishes shared stores of warps "
                f"{sorted(self.actor.unsynced - arriving)} that no bar.sync ordered "
                "before it: their stores may land after the waiters read "
                "(missing named barrier?)"
            )
        addrs, counts = np.unique(
            self._barrier_addresses(op, args, lanes), return_counts=True
        )
        for addr, n in zip(addrs.tolist(), counts.tolist(), strict=True):
            if not op.remote and addr >= CLUSTER_WINDOW:
                raise Hazard(f"{where}: {addr:#x} is not a shared::cta address")
            block, local = self._block_of(addr, op)
            bar = self._barrier(op, block, local)
            if op.expect_tx is not None:
                bar.state.tx += n * op.expect_tx.value.data
            self._arrive(bar, n, where)
        self.actor.unsynced -= arriving  # released by their own arrive
        return ()

    @impl(ptx.CpAsyncOp)
    def run_cp_async(
        self, interpreter: Interpreter, op: ptx.CpAsyncOp, args: PythonValues
    ):
        """Reads the global bytes now (the inputs are read-only for the
        launch) and leaves them in flight to their shared bytes (`landing`)
        until a `cp.async.mbarrier.arrive` of the lane has them land."""
        lanes = self.actor.mask
        if not lanes.any():
            return ()
        size, n = op.bytes, ptx.width(op.src)
        who = Who(self.actor.name, op)
        dst = self._per_lane(self._read(op, 0, args[0], lanes=lanes))[:, :1]
        dst = dst.astype(np.int64) + size * np.arange(n)
        src = self._per_lane(self._read(op, 1, args[1], lanes=lanes))
        sizes = self._per_lane(self._read(op, 2, args[2], lanes=lanes))
        lane, i = np.nonzero(np.broadcast_to(lanes[:, None], (LANES, n)))
        dst, src, sizes = dst[lane, i], src[lane, i], sizes[lane, i].astype(np.int64)
        for what, at in (("shared", dst), ("global", src)):
            if (bad := at % size != 0).any():
                raise Hazard(
                    f"{who}: copies {size} bytes at {what} address "
                    f"{int(at[bad][0]):#x}, not aligned to {size}"
                )
        if (sizes > size).any():
            raise Hazard(f"{who}: a source size above the copy's {size} bytes")
        data = np.zeros((len(dst), size), dtype=np.uint8)
        with self._faults(op):
            for part in np.unique(sizes[sizes > 0]).tolist():
                rows = sizes == part
                data[rows, :part] = self.memory.read(src[rows], part, "cp.async")
            block = self.actor.block
            block.smem.check(dst, size, "cp.async destination")
        span = (dst[:, None] + np.arange(size)).reshape(-1)
        self._check_tma_target(who, block, span)
        block.landing[span] += 1
        self.actor.copies.append(
            AsyncCopy(np.repeat(lane, size), span, data.reshape(-1))
        )
        return ()

    @impl(ptx.CpAsyncArriveOp)
    def run_cp_async_arrive(
        self, interpreter: Interpreter, op: ptx.CpAsyncArriveOp, args: PythonValues
    ):
        """The arriving lanes' copies land together, then (the engine) their
        arrivals count; without `noinc` the pending count first goes up by
        as many, so those arrivals cancel out. A noinc arrival releases the
        copies only: the lanes' own shared stores need an `mbarrier.arrive`."""
        lanes = self._lanes(op, args)
        if not lanes.any():
            return ()
        where = Who(self.actor.name, op)
        arriving = set(np.flatnonzero(lanes.reshape(-1, WARP).any(axis=1)).tolist())
        if op.noinc and self.actor.unsynced & arriving:
            raise Hazard(
                f"{where}: warps {sorted(self.actor.unsynced & arriving)} stored to "
                "shared memory, and a noinc cp.async arrive does not publish those "
                "stores (missing mbarrier.arrive?)"
            )
        addrs = np.unique(self._barrier_addresses(op, args, lanes))
        if len(addrs) != 1:
            raise Hazard(f"{where}: the lanes arrive on different mbarriers")
        addr = int(addrs[0])
        bar = self._barrier(op, self.actor.block, addr)
        n = int(lanes.sum())
        if not op.noinc:
            bar.state.pending += n
        tracked, kept = [], []
        for copy in self.actor.copies:
            mine = lanes[copy.lanes]
            tracked.append((copy.addrs[mine], copy.data[mine]))
            if not mine.all():
                kept.append(
                    AsyncCopy(copy.lanes[~mine], copy.addrs[~mine], copy.data[~mine])
                )
        self.actor.copies = kept
        self.transfers.append(
            CopyArrival(
                self.actor.block,
                np.concatenate([a for a, _ in tracked] or [np.zeros(0, np.int64)]),
                np.concatenate([d for _, d in tracked] or [np.zeros(0, np.uint8)]),
                addr,
                n,
                where,
            )
        )
        return ()

    @impl(ptx.MBarrierWaitOp)
    def run_mbarrier_wait(
        self, interpreter: Interpreter, op: ptx.MBarrierWaitOp, args: PythonValues
    ):
        lanes = self._lanes(op, args)
        addrs = self._barrier_addresses(op, args, lanes)
        parity = self._per_lane(self._read(op, 1, args[1], lanes=lanes))[lanes, 0] & 1
        waits = {
            (a, p): self._barrier(op, self.actor.block, a)
            for a, p in zip(addrs.tolist(), parity.tolist(), strict=True)
        }
        self.scheduler.sync(
            lambda: all(b.state.completed % 2 != p for (_, p), b in waits.items()),
            lambda: "; ".join(
                f"{_describe(op)} on {b.state.name} for parity {p} ({b.state.state()})"
                for (_, p), b in waits.items()
            ),
        )
        return (np.ones((1, 1), dtype=bool),)

    @impl(ptx.FenceOp)
    def run_fence(self, interpreter: Interpreter, op: ptx.FenceOp, args: PythonValues):
        if not self._lanes(op, args).any():
            return ()
        if op.kind.data == "proxy.async.shared::cta":
            self.actor.unfenced[:] = False
            self.actor.unfenced_copies[:] = False
        else:
            for bar in self.actor.block.barriers.values():
                if bar.owner is self.actor:
                    bar.fenced = True
        return ()

    # ---------------------------------------------------------- barriers

    def _bar_wait(self, op: Operation, bar: NamedBarrier, phase: int) -> None:
        self.scheduler.sync(
            lambda: bar.completed > phase,
            lambda: f"{_describe(op)} ({bar.state()})",
        )

    @impl(ptx.BarOp)
    def run_bar(self, interpreter: Interpreter, op: ptx.BarOp, args: PythonValues):
        lanes = self._lanes(op, args)
        self._whole_warps(op, lanes)
        ids = self._per_lane(self._read(op, 0, args[0], lanes=lanes))[:, 0]
        expected = op.threads.value.data if op.threads is not None else self.threads
        block = self.actor.block
        waits = []
        for warp_ids in np.unique(ids[lanes]).tolist():
            warps = int((lanes & (ids == warp_ids)).reshape(-1, WARP).any(axis=1).sum())
            bar = block.named_barrier(warp_ids)
            before = bar.completed
            phase = bar.arrive(WARP * warps, expected, Who(self.actor.name, op))
            if warp_ids == 0 and expected == self.threads and bar.completed > before:
                block.cta_syncs += 1
            waits.append((bar, phase))
        if not op.arrive:
            for bar, phase in waits:
                self._bar_wait(op, bar, phase)
            warps = lanes.reshape(-1, WARP).any(axis=1)
            self.actor.unsynced.difference_update(np.flatnonzero(warps).tolist())
        return ()

    @impl(ptx.ClusterBarrierOp)
    def run_cluster_barrier(
        self, interpreter: Interpreter, op: ptx.ClusterBarrierOp, args: PythonValues
    ):
        bar = self.cluster_bar
        phase = bar.arrive(int(self.actor.mask.sum()))
        self.scheduler.sync(
            lambda: bar.completed > phase, lambda: f"{_describe(op)} ({bar.state()})"
        )
        for block in self.blocks:
            for b in block.barriers.values():
                b.cluster_synced = True
        return ()

    # ------------------------------------------------------------- TMA

    def _tensor_map(self, op: Operation, address: int) -> TensorMap:
        tmap = self.maps.get(address)
        if tmap is None:
            raise Hazard(
                f"{self.actor.name}: {_describe(op)}: {address:#x} is not the address "
                "of a tensor-map parameter"
            )
        return tmap

    def _coords(
        self, op: Operation, args: PythonValues, first: int, count: int, lane: int
    ) -> tuple[int, ...]:
        """A lane's TMA coordinates (signed), outermost first."""
        values = [
            int(self._per_lane(self._read(op, first + i, args[first + i]))[lane, 0])
            for i in range(count)
        ]
        return tuple((v ^ 0x80000000) - 0x80000000 for v in reversed(values))

    def _box_start(self, op: Operation, tmap: TensorMap, offsets: tuple[int, ...]):
        """TMA moves a box only from a 16-byte boundary of its innermost
        dimension: the H100 stops with an illegal instruction otherwise."""
        inner = offsets[-1] * tmap.array.itemsize
        if inner % TMA_ALIGN:
            raise Hazard(
                f"{Who(self.actor.name, op)}: the box of tensor map '{tmap.name}' "
                f"starts {inner} bytes into its rows, not on a {TMA_ALIGN}-byte "
                "boundary (the GPU faults: illegal instruction)"
            )

    @impl(ptx.TMALoadOp)
    def run_tma_load(
        self, interpreter: Interpreter, op: ptx.TMALoadOp, args: PythonValues
    ):
        lanes = self._lanes(op, args)
        ncoords = len(op.coords)
        dst = self._per_lane(self._read(op, 0, args[0], lanes=lanes))[:, 0]
        maps = self._per_lane(self._read(op, 1, args[1], lanes=lanes))[:, 0]
        bars = self._per_lane(
            self._read(op, 2 + ncoords, args[2 + ncoords], lanes=lanes)
        )[:, 0]
        masks = None
        if op.mask is not None:
            masks = self._per_lane(
                self._read(op, 3 + ncoords, args[3 + ncoords], lanes=lanes)
            )[:, 0]
        who = Who(self.actor.name, op)
        for lane in np.flatnonzero(lanes).tolist():
            tmap = self._tensor_map(op, int(maps[lane]))
            offsets = self._coords(op, args, 2, ncoords, lane)
            self._box_start(op, tmap, offsets)
            data = read_box(tmap.array, offsets, tmap.box)
            raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
            address = int(dst[lane]) + op.offset.value.data
            if address % (1024 if tmap.swizzle else 128):
                raise Hazard(
                    f"{who}: the destination {address:#x} is not "
                    f"{1024 if tmap.swizzle else 128}-byte aligned"
                )
            with self._faults(op):
                addrs = box_addresses(address, tmap)
            targets = [self.actor.block]
            if masks is not None:
                bits = int(masks[lane])
                if bits >> len(self.blocks):
                    raise Hazard(
                        f"{who}: multicast mask {bits:#x} names blocks past the "
                        f"cluster of {len(self.blocks)}"
                    )
                targets = [
                    self.blocks[r] for r in range(len(self.blocks)) if bits >> r & 1
                ]
            for block in targets:
                if block is not self.actor.block and block.exited:
                    raise Hazard(
                        f"{who} multicasts into {block.name}, which has exited"
                    )
                bar_addr = int(bars[lane]) % CLUSTER_WINDOW
                self._barrier(op, block, bar_addr)
                with self._faults(op):
                    block.smem.check(addrs, 1, "TMA destination")
                self._check_tma_target(who, block, addrs)
                block.landing[addrs] += 1
                self.transfers.append(Transfer(block, addrs, raw, bar_addr, who))
        return ()

    def _check_tma_target(self, who: Who, block: Block, addrs: np.ndarray) -> None:
        if block.barrier_bytes[addrs].any():
            raise Hazard(f"{who} copies over an mbarrier object")
        if block.reading[addrs].any():
            raise Hazard(
                f"{who} writes shared bytes a wgmma group still in flight reads "
                "(missing wgmma.wait_group before the slot was released?)"
            )
        if block.landing[addrs].any():
            raise Hazard(f"{who} copies into bytes another TMA copy is still writing")
        if block.store_reading[addrs].any():
            raise Hazard(f"{who} copies into bytes a TMA store has not read out yet")

    @impl(ptx.TMAStoreOp)
    def run_tma_store(
        self, interpreter: Interpreter, op: ptx.TMAStoreOp, args: PythonValues
    ):
        lanes = self._lanes(op, args)
        ncoords = len(op.coords)
        maps = self._per_lane(self._read(op, 0, args[0], lanes=lanes))[:, 0]
        src = self._per_lane(
            self._read(op, 1 + ncoords, args[1 + ncoords], lanes=lanes)
        )[:, 0]
        block, actor = self.actor.block, self.actor
        who = Who(actor.name, op)
        for lane in np.flatnonzero(lanes).tolist():
            tmap = self._tensor_map(op, int(maps[lane]))
            offsets = self._coords(op, args, 1, ncoords, lane)
            self._box_start(op, tmap, offsets)
            address = int(src[lane]) + op.offset.value.data
            with self._faults(op):
                addrs = box_addresses(address, tmap)
                block.smem.check(addrs, 1, "TMA store source")
            if any(a.unfenced[addrs].any() for a in block.warpgroups):
                raise Hazard(
                    f"{who} reads shared bytes written by st.shared and not yet made "
                    "visible to TMA (missing fence.proxy.async?)"
                )
            if block.landing[addrs].any() or block.barrier_bytes[addrs].any():
                raise Hazard(f"{who} reads shared bytes a TMA copy is still writing")
            written = (tmap.array, offsets, tmap.box)
            if any(
                boxes_overlap((st.tmap.array, st.offsets, st.tmap.box), written)
                for st in block.unlanded
            ):
                raise Hazard(
                    f"{who} writes global bytes an earlier TMA store of this block "
                    "writes, with no cp.async.bulk.wait_group (without .read) "
                    "between: TMA stores are not ordered, either may land last"
                )
            block.store_reading[addrs] += 1
            store = StoreTransfer(
                block,
                actor,
                lane,
                int(actor.bulk_committed[lane]),
                tmap,
                offsets,
                addrs,
            )
            block.stores.append(store)
            block.unlanded.append(store)
        return ()

    @impl(ptx.BulkCommitOp)
    def run_bulk_commit(
        self, interpreter: Interpreter, op: ptx.BulkCommitOp, args: PythonValues
    ):
        self.actor.bulk_committed[self._lanes(op, args)] += 1
        return ()

    @impl(ptx.BulkWaitOp)
    def run_bulk_wait(
        self, interpreter: Interpreter, op: ptx.BulkWaitOp, args: PythonValues
    ):
        lanes = self._lanes(op, args)
        actor, block = self.actor, self.actor.block
        keep = op.pending.value.data

        def waited_for(st: StoreTransfer) -> bool:
            return (
                st.actor is actor
                and bool(lanes[st.lane])
                and st.group < actor.bulk_committed[st.lane] - keep
            )

        waited = [st for st in block.stores if waited_for(st)]
        self.scheduler.sync(
            lambda: all(st.done for st in waited),
            lambda: f"{_describe(op)}: {sum(not st.done for st in waited)} TMA stores",
        )
        block.stores = [st for st in block.stores if st not in waited]
        if op.writes is not None:  # their global writes have landed too
            block.unlanded = [st for st in block.unlanded if not waited_for(st)]
        return ()

    @impl(ptx.GridDepControlOp)
    def run_griddepcontrol(
        self, interpreter: Interpreter, op: ptx.GridDepControlOp, args: PythonValues
    ):
        """Nothing to do: launches are simulated one after another, so the grids
        a kernel waits for have finished before it starts."""
        return ()

    @impl(ptx.PrefetchTensorMapOp)
    def run_prefetch(
        self, interpreter: Interpreter, op: ptx.PrefetchTensorMapOp, args: PythonValues
    ):
        lanes = self.actor.mask
        for address in np.unique(self._per_lane(self._read(op, 0, args[0]))[lanes, 0]):
            self._tensor_map(op, int(address))
        return ()

    def run_engine(self) -> None:
        """The TMA engine: performs issued copies and stores in an order the seed
        picks, until every actor has finished and nothing is in flight."""
        actors = [wg for b in self.blocks for wg in b.warpgroups]
        run_tma_engine(
            self.scheduler,
            self.transfers,
            lambda: [st for b in self.blocks for st in b.stores if not st.done],
            lambda: all(a.done for a in actors),
            self._deliver,
            self._deliver_store,
        )

    def _deliver(self, t: Transfer | CopyArrival) -> None:
        if isinstance(t, CopyArrival):
            self._deliver_copies(t)
            return
        block = self._land(t.block, t.addrs, t.data, f"{t.what}: a TMA copy")
        bar = block.barriers.get(t.barrier)
        if bar is None:
            raise Hazard(f"{t.what}: its mbarrier at {t.barrier:#x} is gone")
        bar.state.tx -= len(t.data)
        self._maybe_complete(bar.state)

    def _deliver_copies(self, t: CopyArrival) -> None:
        """`cp.async` copies land (generic-proxy writes: every warpgroup must
        fence before its wgmmas read them), then their lanes arrive."""
        block = self._land(t.block, t.addrs, t.data, f"{t.what}: cp.async copies")
        for wg in block.warpgroups:
            wg.unfenced_copies[t.addrs] = True
        bar = block.barriers.get(t.barrier)
        if bar is None:
            raise Hazard(f"{t.what}: its mbarrier at {t.barrier:#x} is gone")
        self._arrive(bar, t.arrivals, t.what)

    def _land(
        self, block: Block, addrs: np.ndarray, data: np.ndarray, what: str
    ) -> Block:
        """Copies in flight write their shared bytes: into a block still
        running, over no bytes a wgmma group in flight reads."""
        if block.exited:
            raise Hazard(
                f"{what} lands in {block.name or 'a block'}, which has exited "
                "(missing cluster barrier before exit?)"
            )
        block.landing[addrs] -= 1
        if block.reading[addrs].any():
            raise Hazard(
                f"{what} lands in shared bytes a wgmma group still in flight reads "
                "(missing wgmma.wait_group before the slot was released?)"
            )
        block.smem.bytes[addrs] = data
        return block

    def _deliver_store(self, st: StoreTransfer) -> None:
        raw = st.block.smem.bytes[st.addrs]
        tile = raw.view(st.tmap.array.dtype).reshape(st.tmap.box)
        write_tma_box(st.tmap.array, st.offsets, tile)
        st.block.store_reading[st.addrs] -= 1
        st.done = True

    # ------------------------------------------------------------ wgmma

    @impl(ptx.WgmmaFenceOp)
    def run_wgmma_fence(
        self, interpreter: Interpreter, op: ptx.WgmmaFenceOp, args: PythonValues
    ):
        self._whole_warpgroup(op)
        self.actor.wgmma_fenced = True
        return ()

    @impl(ptx.WgmmaCommitOp)
    def run_wgmma_commit(
        self, interpreter: Interpreter, op: ptx.WgmmaCommitOp, args: PythonValues
    ):
        self._whole_warpgroup(op)
        actor = self.actor
        actor.groups.append(actor.uncommitted)
        actor.uncommitted = WgmmaGroup()
        return ()

    @impl(ptx.WgmmaWaitOp)
    def run_wgmma_wait(
        self, interpreter: Interpreter, op: ptx.WgmmaWaitOp, args: PythonValues
    ):
        self._whole_warpgroup(op)
        actor = self.actor
        keep = op.pending.value.data
        live = [g for g in actor.groups if not g.retired]
        for g in live[: max(0, len(live) - keep)]:
            g.retire()
        actor.groups = [g for g in actor.groups if not g.retired]
        return ()

    def _operand(
        self,
        op: ptx.WgmmaOp,
        desc: Descriptor,
        rows: int,
        cols: int,
        k_major: bool,
        dtype: np.dtype,
    ) -> tuple[np.ndarray, np.ndarray]:
        """An operand from shared memory: (matrix as f32, byte addresses).
        K-major operands are given `[rows, 32 bytes of K]`, MN-major ones
        `[16, cols]`."""
        esize = dtype.itemsize
        with self._faults(op):
            desc.check("wgmma operand", k_major)
            addrs = (
                k_major_addresses(desc, rows, esize)
                if k_major
                else mn_major_addresses(desc, cols)
            )
            block = self.actor.block
            both = (addrs[..., None] + np.arange(esize)).reshape(-1)
            block.smem.check(both, 1, "wgmma operand")
        who = Who(self.actor.name, op)
        if block.landing[both].any():
            raise Hazard(f"{who} reads shared bytes a TMA copy has not delivered yet")
        if block.barrier_bytes[both].any():
            raise Hazard(f"{who} reads an mbarrier object as an operand")
        if any(a.unfenced[both].any() for a in block.warpgroups):
            raise Hazard(
                f"{who} reads shared bytes written by st.shared and not yet made "
                "visible to the async proxy (missing fence.proxy.async?)"
            )
        if self.actor.unfenced_copies[both].any():
            raise Hazard(
                f"{who} reads shared bytes cp.async wrote (the generic proxy) with "
                "no fence.proxy.async of its own since they landed (missing "
                "fence.proxy.async after the wait?)"
            )
        raw = block.smem.bytes[both].reshape(-1, esize)
        values = np.ascontiguousarray(raw).view(dtype).reshape(addrs.shape)
        return values.astype(np.float32), both

    @impl(ptx.WgmmaOp)
    def run_wgmma(self, interpreter: Interpreter, op: ptx.WgmmaOp, args: PythonValues):
        self._whole_warpgroup(op)
        actor = self.actor
        if not actor.wgmma_fenced:
            raise Hazard(f"{actor.name}: {_describe(op)} before any wgmma.fence")
        lanes = actor.mask
        n, start = op.n, op.start.value.data
        half = n // 2
        if op.acc is None:  # a fresh bundle: only this slice gets written
            first = 0
            width = ptx.width(op.result)
            acc_v: Value = Regs(
                np.zeros((LANES, width), np.uint32),
                np.zeros((LANES, width), bool),
                origin="a wgmma without accumulator",
            )
        else:
            first = 1
            acc_v = args[0]
        a_v, b_v, scale_v = args[first : first + 3]
        scale = self._uniform(op, self._read(op, first + 2, scale_v), lanes, "scale-d")
        if scale:  # the slice accumulates: its old value must be there
            self._read(op, 0, acc_v, list(range(start, start + half)), pending_ok=True)
        acc = self._per_lane(bits_of(acc_v))
        b_desc = Descriptor.decode(
            self._uniform(op, self._read(op, first + 1, b_v), lanes, "the B descriptor")
        )
        transpose = op.transpose_b.value.data
        a_type, b_type = (WGMMA_DTYPES[t] for t in op.input_types)
        b, b_bytes = self._operand(op, b_desc, n, n, not transpose, b_type)
        if not transpose:
            b = b.T
        reads = [b_bytes]
        if op.a_in_registers:
            regs = self._per_lane(self._read(op, first, a_v, op.a_map.get_values()))
            a = a_fragment_matrix(regs, a_type)
        else:
            a_desc = Descriptor.decode(
                self._uniform(op, self._read(op, first, a_v), lanes, "the A descriptor")
            )
            trans_a = op.a_transposed
            a, a_bytes = self._operand(op, a_desc, 64, 64, not trans_a, a_type)
            if trans_a:  # read K x M, M contiguous
                a = a.T
            reads.append(a_bytes)
        d = accumulator_matrix(np.ascontiguousarray(acc[:, start : start + half]), n)
        result = acc.copy()
        result[:, start : start + half] = accumulator_bits(mma(d, a, b, bool(scale)))
        block = actor.block
        for addrs in reads:
            block.reading[addrs] += 1  # an operand's bytes are distinct
            actor.uncommitted.reads.append((block, addrs))
        defined = None
        if isinstance(acc_v, Regs) and acc_v.defined is not None:
            defined = np.broadcast_to(acc_v.defined, result.shape).copy()
            defined[:, start : start + half] = True
            if defined.all():
                defined = None
        return (Regs(result, defined, actor.uncommitted, op.name),)

    @impl(ptx.SetMaxNRegOp)
    def run_setmaxnreg(
        self, interpreter: Interpreter, op: ptx.SetMaxNRegOp, args: PythonValues
    ):
        self._whole_warpgroup(op)
        actor, block = self.actor, self.actor.block
        regs = op.regs.value.data
        delta = (regs - actor.registers) * LANES
        who = Who(actor.name, op)
        if op.action.data == "dec":
            if delta > 0:
                raise Hazard(
                    f"{who}: the warpgroup holds only {actor.registers} registers per thread"
                )
            block.register_pool -= delta
        else:
            if delta < 0:
                raise Hazard(
                    f"{who}: the warpgroup already holds {actor.registers} registers per thread"
                )
            self.scheduler.sync(
                lambda: block.register_pool >= delta,
                lambda: (
                    f"{_describe(op)} for {delta} registers; the block's pool has "
                    f"{block.register_pool}"
                ),
            )
            block.register_pool -= delta
        actor.registers = regs
        return ()

    # ------------------------------------------------------------ control

    @impl_terminator(ptx.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: ptx.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    def _under(
        self,
        interpreter: Interpreter,
        mask: np.ndarray,
        region: Region,
        args: PythonValues,
        name: str,
    ) -> PythonValues:
        actor = self.actor
        outer = actor.mask
        actor.mask = mask
        try:
            return interpreter.run_ssacfg_region(region, args, name)
        finally:
            actor.mask = outer

    @impl(ptx.IfOp)
    def run_if(self, interpreter: Interpreter, op: ptx.IfOp, args: PythonValues):
        active = self.actor.mask
        cond = self._per_lane(self._read(op, 0, args[0]))[:, 0]
        if op.uniform:
            per_warp = cond.reshape(-1, WARP)
            act = active.reshape(-1, WARP)
            for w in range(per_warp.shape[0]):
                if len(set(per_warp[w][act[w]].tolist())) > 1:
                    raise Hazard(
                        f"{self.actor.name}: {_describe(op)}: a uniform branch whose "
                        f"condition differs between the lanes of warp {w}"
                    )
        outs: list[tuple[np.ndarray, PythonValues]] = []
        for region, lanes in ((op.then, active & cond), (op.otherwise, active & ~cond)):
            if not lanes.any() or not region.blocks:
                continue
            out = self._under(interpreter, lanes, region, (), "if")
            for res, value in zip(op.res, region.block.last_op.operands, strict=True):
                self._edge(op, res, value, lanes)
            outs.append((lanes, out))
        if not op.res:
            return ()
        if len(outs) == 1:
            return outs[0][1]
        (then_mask, then_out), (_, else_out) = outs
        return tuple(
            merge(then_mask, t, e) for t, e in zip(then_out, else_out, strict=True)
        )

    @impl(ptx.ForOp)
    def run_for(self, interpreter: Interpreter, op: ptx.ForOp, args: PythonValues):
        active = self.actor.mask
        lb, ub, step = (self._read(op, i, args[i]) for i in range(3))
        block = op.body.block
        self._edge(op, block.args[0], op.lb, active)
        for arg, init in zip(block.args[1:], op.iter_args, strict=True):
            self._edge(op, arg, init, active)
        carried = list(args[3:])
        iv = lb.astype(np.uint32)
        ub_s = ub.view(np.int32)
        while True:
            go = active & self._per_lane(iv.view(np.int32) < ub_s)[:, 0]
            if not go.any():
                break
            outs = self._under(interpreter, go, op.body, (iv, *carried), "for")
            for arg, value in zip(block.args[1:], block.last_op.operands, strict=True):
                self._edge(op, arg, value, go)
            stepped = (add_sat_s32(iv, step) & 0xFFFFFFFF).astype(np.uint32)
            if (go == active).all():
                carried = list(outs)
                iv = stepped
            else:
                carried = [merge(go, o, c) for o, c in zip(outs, carried, strict=True)]
                iv = np.where(go[:, None], stepped, iv)
        for res, arg in zip(op.res, block.args[1:], strict=True):
            self._edge(op, res, arg, active)
        return tuple(carried)

    @impl_terminator(ptx.ConditionOp)
    def run_condition(
        self, interpreter: Interpreter, op: ptx.ConditionOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        cond = self._per_lane(self._read(op, 0, args[0]))[:, 0]
        return ReturnedValues((cond, *args[1:])), ()

    @impl(ptx.WhileOp)
    def run_while(self, interpreter: Interpreter, op: ptx.WhileOp, args: PythonValues):
        active = self.actor.mask
        before, after = op.before.block, op.after.block
        forwards, yielded = before.last_op.operands[1:], after.last_op.operands
        for arg, init in zip(before.args, op.inits, strict=True):
            self._edge(op, arg, init, active)
        go, carried, results = active, args, None
        while True:
            cond, *forwarded = self._under(interpreter, go, op.before, carried, "while")
            stay, leave = go & cond, go & ~cond
            for res, value in zip(op.res, forwards, strict=True):
                self._edge(op, res, value, leave)
            results = (
                forwarded
                if results is None
                else [
                    merge(leave, f, r) for f, r in zip(forwarded, results, strict=True)
                ]
            )
            if not stay.any():
                return tuple(results)
            for arg, value in zip(after.args, forwards, strict=True):
                self._edge(op, arg, value, stay)
            carried = self._under(interpreter, stay, op.after, forwarded, "while")
            for arg, value in zip(before.args, yielded, strict=True):
                self._edge(op, arg, value, stay)
            go = stay

    @impl(ptx.LabelOp)
    def run_label(self, interpreter: Interpreter, op: ptx.LabelOp, args: PythonValues):
        raise OpDiagnostic(
            op,
            "the thread simulator runs structured control flow (ptx.for / ptx.if / "
            "ptx.while); "
            "simulate before ptx-lower-control-flow",
        )

    @impl(ptx.BraOp)
    def run_bra(self, interpreter: Interpreter, op: ptx.BraOp, args: PythonValues):
        return self.run_label(interpreter, op, args)

    # ------------------------------------------------------------ actors

    def actor_body(
        self, interpreter: Interpreter, kernel: func.FuncOp, wg: Warpgroup
    ) -> Callable[[], None]:
        def body() -> None:
            self._local.actor = wg
            scope = ScopedDict(parent=interpreter._ctx, name=wg.name)
            try:
                # every lane computes, inactive ones too: an overflow or a 0/0
                # is no error (numpy's error state is per thread)
                with np.errstate(all="ignore"):
                    dataclasses.replace(interpreter, _ctx=scope).run_ssacfg_region(
                        kernel.body, (), wg.name
                    )
            finally:
                wg.done = True
            self._exit(wg)

        return body

    def _exit(self, wg: Warpgroup) -> None:
        """A warpgroup ran to its end; the block exits with its last one."""
        if any(not g.retired for g in wg.groups) or wg.uncommitted.reads:
            raise Hazard(f"{wg.name} exits with wgmma groups still in flight")
        self.cluster_bar.leave(LANES)
        block = wg.block
        if all(w.done for w in block.warpgroups):
            if block.stores:
                raise Hazard(
                    f"{block.name or 'the block'} exits before a "
                    "cp.async.bulk.wait_group.read saw its TMA stores read their "
                    "staging tiles out (shared memory is freed at exit)"
                )
            block.exited = True

    def run_cluster(self, interpreter: Interpreter, kernel: func.FuncOp) -> None:
        roles = {
            wg.name: self.actor_body(interpreter, kernel, wg)
            for block in self.blocks
            for wg in block.warpgroups
        }
        roles[TMA_ENGINE] = self.run_engine
        self.scheduler.run(roles)


ROW_ALIGN = 16
"""Bytes every stride of a tensor-map argument is a multiple of: TMA requires
it, and so the runtime refuses other arrays there (`runtime/kernel.py`,
`TMA_ALIGN`); a pointer argument takes any pitch."""


def _check_row_alignment(kernel: func.FuncOp, index: int, array: np.ndarray) -> None:
    """The launch the runtime would refuse: a tensor map's stride not a multiple
    of 16 bytes. (Register stores check their own alignment at run time, and
    the simulated memory faults on a misaligned access.)"""
    for axis, stride in enumerate(array.strides[:-1]):
        if stride % ROW_ALIGN:
            raise KernelArgumentError(
                f"{kernel.sym_name.data}: argument {index} has a stride of {stride} "
                f"bytes in dimension {axis}; the runtime needs a multiple of "
                f"{ROW_ALIGN} (pad the rows)"
            )


def aligned_copy(array: np.ndarray) -> np.ndarray:
    """`array`'s values in a zeroed buffer whose rows lie a multiple of
    `ROW_ALIGN` bytes apart: what a call through `tawa_xdsl.compile` hands a
    tensor map in place of an array TMA cannot describe (`runtime/realign.py`)."""
    from tawa_xdsl.runtime.arrays import row_strides, strided

    strides = row_strides(array.shape, array.itemsize)
    span = 1 + sum((d - 1) * s for d, s in zip(array.shape, strides, strict=True))
    copy = strided(np.zeros(span, array.dtype), array.shape, strides)
    copy[...] = array
    return copy


def launch_parameters(
    kernel: func.FuncOp,
    args: Sequence[object],
    realigned: list[tuple[int, np.ndarray]] | None = None,
) -> dict[str, ParamValue]:
    """The values of a distributed kernel's `.param`s (`ptx.params`, in order)
    for the tile-level arguments `args`, expanded as the ABI says: a tensor map,
    a global tensor's pointer, extents and strides (in elements, as the array
    lies in memory), a tensor extent, a scalar. A tensor-map array whose rows
    TMA cannot describe is refused as `runtime.Kernel` refuses it, or, given a
    `realigned` list, replaced by an `aligned_copy` recorded there with its
    argument index (as `tawa_xdsl.compile`'s dispatcher does)."""
    decls = kernel.attributes[ptx.PARAMS_ATTR]
    assert isinstance(decls, ArrayAttr)
    values: list[object] = []
    for entry in launch_contract(kernel).abi:
        arg = args[entry.arg]
        if entry.kind == ParamKind.MAP:
            if realigned is not None and any(
                stride % ROW_ALIGN for stride in arg.strides[:-1]
            ):
                arg = aligned_copy(arg)
                realigned.append((entry.arg, arg))
            _check_row_alignment(kernel, entry.arg, arg)
            values.append((arg, entry.type))
        elif entry.kind == ParamKind.GLOBAL:
            assert isinstance(arg, np.ndarray)
            values += [Pointer(arg), *arg.shape]
            values += [s // arg.itemsize for s in arg.strides[:-1]]
        elif entry.kind == ParamKind.DIM:
            assert entry.axis is not None
            values.append(arg.shape[entry.axis])
        else:
            values.append(arg)
    if len(values) != len(decls.data):
        raise OpDiagnostic(
            kernel,
            f"the ABI gives {len(values)} parameter values, the kernel declares "
            f"{len(decls.data)} .params",
        )
    params: dict[str, ParamValue] = {}
    for decl, value in zip(decls.data, values, strict=True):
        name = decl.param.data
        if decl.type.data == "b8":
            if not isinstance(value, tuple):
                raise OpDiagnostic(
                    kernel,
                    f"tensor-map parameter '{name}' takes no tensor map of the ABI",
                )
            array, t = value
            assert isinstance(t, nv.TensorMapType)
            params[name] = MapParam(array, t, name)
        elif isinstance(value, Pointer):
            params[name] = Pointer(value.array, name)
        else:
            params[name] = scalar_bits(decl.type.data, value)
    return params


def scalar_bits(ptx_type: str, value: object) -> ParamValue:
    """A scalar parameter's value as its `.param` type holds it: a float for
    f32, the bits of a 16-bit float, a 64-bit integer's two's complement, the
    int of a 32-bit one (i1: 0 or 1)."""
    if ptx_type == "f32":
        return float(value)
    if ptx_type == "b16":
        return np.asarray(value).view(np.uint16)[()]
    if ptx_type == "u64":
        return np.uint64(int(value) & 0xFFFF_FFFF_FFFF_FFFF)
    return int(value)


class RegisterWrites(Interpreter.Listener):
    """In allocated IR, records which value each register holds after each op."""

    def __init__(self, machine: ThreadFunctions):
        self.machine = machine

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        self.machine.wrote(op, results)


def run_threads(
    module: ModuleOp,
    kernel: func.FuncOp,
    params: dict[str, ParamValue],
    grid: tuple[int, int, int],
    seed: int = 0,
    exact_math: bool = False,
) -> ThreadFunctions:
    """Run a thread-level kernel for every program id of `grid`, a cluster of
    blocks at a time, with the parameter values `params` (by PTX name); returns
    the machine (its global memory counts every byte written). An allocated
    kernel also has its registers checked (`RegisterFile`). The `.approx`
    instructions err as the PTX ISA allows them (`ptx_alu.APPROXIMATE`), or
    with `exact_math` not at all."""
    launch = kernel_launch(kernel)
    threads, smem, size = launch.threads, launch.smem, launch.cluster
    scheduler = RoleScheduler(seed)
    registers = allocated_registers(kernel)
    alu = EXACT_ALU if exact_math else ALU
    machine = ThreadFunctions(
        scheduler, params, threads, smem, size, grid, seed, registers, alu
    )
    listeners = (RegisterWrites(machine),) if registers is not None else ()
    interpreter = Interpreter(module, listeners=listeners)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(machine)
    name = f"@{kernel.sym_name.data}"
    for programs in clusters(grid, size, name):
        machine.start(programs)
        with located(name, programs):
            machine.run_cluster(interpreter, kernel)
    for counter in machine.tile_counters.values():
        counter.check_reset()
    return machine
