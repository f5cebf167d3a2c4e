"""What every distribution pattern shares.

- Type conversion (`register_type`): an index or i32 is one `b32` register,
  an i8 too (its value sign-extended), an i64 one `b64`, an f32 one `f32`, an
  i1 one `pred`; a register tile (`#nvgpu_async.frag`) is the
  bundle of the registers one thread holds (`fragments.Geometry.count`, 16-bit
  tiles one `b32` per element pair, 8-bit tiles one `b16` per pair); a shared-memory ring, view or barrier array
  is its `b32` address, a tensor map its `b64` generic address.
- Converted values (`KernelState.lowered`): patterns convert one op at a time,
  in program order, inserting its ptx ops before it and recording what each
  result became (`define`); the users' patterns read that. A converted value
  may carry an element map: a broadcast is no instruction, only a map its
  users read with; a splat is its scalar (a one-register value every element
  reads). The old ops stay, dead, until every op is converted, and are then
  erased (`finish`); so do the kernel's and the loops' old block arguments.
  (Not `unrealized_conversion_cast`s: a cast per value cost as much as the
  ptx ops themselves, and compile time is a gate of issue 15.)
- The kernel being lowered (`KernelState`): its launch facts, the per-thread
  values the printer computed at entry (`%tid.x`, the aligned shared-memory base,
  the leader and constant predicates, the cluster rank) and in the consumer
  region (`ConsumerIds`: warpgroup, warp, g = lane / 4, t = lane % 4, ...),
  the row bases of tiles, created once at the top of the consumer region, and
  immediates, created once at the top of the kernel.
- `Ops`: a list the patterns build their replacement in, with helpers that
  create `ptx.alu` ops reading operands through their maps.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import ptx
from tawa_xdsl.dialects.tile import is_fp8
from tawa_xdsl.lowering.fragments import Geometry
from tawa_xdsl.target import THREADS_PER_WARPGROUP

MOV = {cls: f"mov.{cls}" for cls in ("f32", "b32", "b64", "b16", "pred")}
"""The copy of each register class."""


def is_16bit(t: Attribute) -> bool:
    return isinstance(t, BFloat16Type | Float16Type)


def scalar_class(t: Attribute) -> str | None:
    """The register class of a scalar type (None: not held in registers)."""
    if isinstance(t, IntegerType) and t.width.data == 1:
        return "pred"
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, IntegerType) and t.width.data == 64:
        return "b64"
    if isinstance(t, IndexType | IntegerType):
        return "b32"
    return None


def geometry(t: Attribute) -> Geometry:
    layout = nv.fragment_layout(t)
    assert isinstance(t, TensorType) and layout is not None, f"{t} is no fragment"
    return Geometry.of(t.get_shape(), layout)


@functools.lru_cache(maxsize=256)
def bundle(cls: str, count: int = 1) -> ptx.RegType:
    """`!ptx.reg<cls x count>`, made once (types are immutable)."""
    return ptx.RegType(cls, count)


def register_type(t: Attribute) -> ptx.RegType | None:
    """The bundle a value of type `t` becomes (None: no register form)."""
    if isinstance(t, nv.SmemType | nv.SmemViewType | nv.MBarrierType):
        return bundle("b32")
    if isinstance(t, nv.TensorMapType):
        return bundle("b64")
    if isinstance(t, TensorType):
        if nv.fragment_layout(t) is None:
            return None
        count = geometry(t).count
        if is_16bit(t.element_type):
            return bundle("b32", count // 2)
        if is_fp8(t.element_type):
            return bundle("b16", count // 2)
        cls = scalar_class(t.element_type)
        return None if cls is None else bundle(cls, count)
    if is_16bit(t):  # a scalar parameter: the pair a 16-bit splat is
        return bundle("b32")
    cls = scalar_class(t)
    return None if cls is None else bundle(cls)


@dataclass(frozen=True)
class Lowered:
    """A converted tile or scalar: a ptx value read through an element map
    (None: the identity, or element 0 of a one-register value)."""

    value: SSAValue
    map: tuple[int, ...] | None = None

    @property
    def width(self) -> int:
        return ptx.width(self.value)

    @property
    def uniform(self) -> bool:
        """Every element is the same register or literal (a splat)."""
        return self.map is None and self.width == 1

    @property
    def is_imm(self) -> bool:
        return isinstance(self.value.type, ptx.ImmType)

    @property
    def cls(self) -> str:
        return ptx.register_class(self.value)

    def element(self, k: int) -> int:
        if self.map is not None:
            return self.map[k]
        return 0 if self.width == 1 else k

    def select(self, elements: Sequence[int]) -> Lowered:
        """Element k of the result is element `elements[k]` of this value."""
        return Lowered(self.value, tuple(self.element(e) for e in elements))

    def imm_value(self) -> int | float | None:
        """The literal of a one-element immediate."""
        if not self.is_imm or self.width != 1:
            return None
        owner = self.value.owner
        assert isinstance(owner, ptx.ImmOp)
        return owner.values()[0]


Operand = SSAValue | Lowered


def _as_lowered(x: Operand) -> Lowered:
    return x if isinstance(x, Lowered) else Lowered(x)


@dataclass
class ConsumerIds:
    """Per-thread coordinates inside the consumer warpgroups (the printer's
    `_consumer_ids`): ctid = tid - 128, cwg = ctid / 128, warp, g, t, col0 = 2 t."""

    ctid: SSAValue
    cwg: SSAValue
    warp: SSAValue
    g: SSAValue
    t: SSAValue
    col0: SSAValue
    leader: SSAValue
    """The first consumer thread (issues TMA stores)."""
    wg_lane: SSAValue
    wg_leader: SSAValue
    """Thread 0 of each consumer warpgroup (arrives for it)."""
    tail: Operation
    """The last op computing them: row bases go after it."""


@dataclass
class KernelState:
    """The kernel being distributed (see the module docstring)."""

    kernel: func.FuncOp
    threads: int
    cluster: int
    tid: SSAValue | None = None
    smem: SSAValue | None = None
    leader: SSAValue | None = None
    false: SSAValue | None = None
    true: SSAValue | None = None
    rank: SSAValue | None = None
    rank0: SSAValue | None = None
    consumer: ConsumerIds | None = None
    producer_threads: Operation | None = None
    """An op of the producer branch when the whole producer warpgroup runs the
    producer role (it loads tiles with its threads, `thread_load`): the ops
    one thread issues there are guarded by `leader` (`one_thread`)."""
    turn_own: SSAValue | None = None
    turn_next: SSAValue | None = None
    _imms: dict[tuple[str, tuple[int, ...]], SSAValue] = field(default_factory=dict)
    values: dict[SSAValue, Lowered] = field(default_factory=dict)
    """What each converted value became."""
    tensors: dict[SSAValue, tuple[SSAValue, list[SSAValue], list[SSAValue]]] = field(
        default_factory=dict
    )
    """Global tensor parameters: (pointer, extents, strides in elements)."""
    dead: list[Operation] = field(default_factory=list)
    """Converted ops whose results are still read by ops not yet converted."""
    old_args: list[BlockArgument] = field(default_factory=list)
    _row_base: dict[tuple[int, bool], SSAValue] = field(default_factory=dict)
    _last_imm: Operation | None = None

    def lowered(self, v: SSAValue, user: Operation) -> Lowered:
        """The converted form of operand `v` of `user`."""
        x = self.values.get(v)
        if x is not None:
            return x
        if type(v.type) in (ptx.RegType, ptx.ImmType):
            return Lowered(v)
        where = v.owner if isinstance(v.owner, Operation) else user
        raise OpDiagnostic(
            where, f"the thread level does not handle '{where.name}' here"
        )

    def define(
        self,
        rewriter: PatternRewriter,
        op: Operation,
        ops: Sequence[Operation],
        *results: Lowered,
    ) -> None:
        """`op` is converted: `ops` go before it, its results became `results`."""
        if ops:
            rewriter.insert(ops, InsertPoint.before(op))
        for old, new in zip(op.results, results, strict=True):
            if new.map is None and _one_pair(old.type):
                new = Lowered(new.value, (0,))  # its two halves differ
            self.values[old] = new
        self.dead.append(op)

    def finish(self) -> None:
        """Erase the old ops (users first) and block arguments."""
        for op in reversed(self.dead):
            Rewriter.erase_op(op)
        for arg in reversed(self.old_args):
            arg.block.erase_arg(arg)

    @property
    def warpgroups(self) -> int:
        """Consumer warpgroups."""
        return self.threads // THREADS_PER_WARPGROUP - 1

    @property
    def entry(self) -> Block:
        return self.kernel.body.block

    def imm(self, value: int | float | Sequence[int | float], cls: str) -> SSAValue:
        """An immediate (or constant bundle), made once at the top of the kernel."""
        values = tuple(value) if isinstance(value, list | tuple) else (value,)
        key = (cls, tuple(_bits(v) for v in values))
        if key not in self._imms:
            op = ptx.ImmOp(list(values) if len(values) > 1 else values[0], cls)
            where = (
                InsertPoint.after(self._last_imm)
                if self._last_imm is not None
                else InsertPoint.at_start(self.entry)
            )
            Rewriter.insert_op(op, where)
            self._last_imm = op
            self._imms[key] = op.result
        return self._imms[key]

    def one_thread(self, op: Operation) -> SSAValue | None:
        """The guard of an op that one producer thread issues (a TMA copy, an
        arrive): `leader` where the whole producer warpgroup runs the role,
        else none (thread 0 alone runs it)."""
        anchor = self.producer_threads
        return self.leader if anchor is not None and _inside(op, anchor) else None

    def consumer_ids(self, op: Operation) -> ConsumerIds:
        if self.consumer is None or not _inside(op, self.consumer.tail):
            raise OpDiagnostic(
                op, "per-thread tile coordinates exist in the consumer role only"
            )
        return self.consumer

    def row0(
        self, rows: int, user: Operation, ops: Ops | None = None, wrap: bool = False
    ) -> SSAValue:
        """This thread's first row of a tile with `rows` rows: band + 16 w + g;
        with `wrap`, a tile under 64 rows a warpgroup (`Geometry.padded`) has
        its padding rows read its own rows: band + (16 w + g) mod band (an
        address inside the tile; their stores are masked: `padding_guard`).
        A tile that ends in half a warp slab (`Geometry.half_slab`: 8, 24, 40
        or 56 rows) wraps each of the two rows a thread holds on its own, a
        bundle (h = 0, 1): band + (16 w + g + 8 h) mod band, as 8 rows past
        the first would leave it.
        Into `ops` when given (an epilogue's store: the value is not live over
        the main loop, where every register counts), else computed once at the
        top of the consumer region (what loop iterations read again)."""
        ids = self.consumer_ids(user)
        wrap = wrap and rows // self.warpgroups < 64
        if ops is not None:
            return self._row_base_into(ops, ids, rows, wrap)
        if (rows, wrap) not in self._row_base:
            top = Ops(self)
            self._row_base[rows, wrap] = self._row_base_into(top, ids, rows, wrap)
            Rewriter.insert_op(top, InsertPoint.after(ids.tail))
            ids.tail = top[-1]
        return self._row_base[rows, wrap]

    def _row_base_into(
        self, ops: Ops, ids: ConsumerIds, rows: int, wrap: bool
    ) -> SSAValue:
        band = rows // self.warpgroups
        if wrap:
            r = ops.alu("mad.lo.u32", ids.warp, self.imm(16, "b32"), ids.g)
            if band % 16:  # half a slab: each row of the thread on its own
                r = ops.alu("add.u32", r, self.imm([0, 8], "b32"))
            r = ops.alu("rem.u32", r, self.imm(band, "b32"))
            return ops.alu("mad.lo.u32", ids.cwg, self.imm(band, "b32"), r)
        r = ops.alu("mul.lo.u32", ids.cwg, self.imm(band, "b32"))
        r = ops.alu("mad.lo.u32", ids.warp, self.imm(16, "b32"), r)
        return ops.alu("add.u32", r, ids.g)

    def padding_guard(
        self, geom: Geometry, user: Operation, ops: Ops
    ) -> SSAValue | None:
        """True where a thread holds rows of `geom`'s tile, false where it
        holds padding (`Geometry.padded`: the warps past its rows): what masks
        its stores. One predicate, or a bundle of two, one per row a thread
        holds (h = 0, 1), for a tile that ends in half a warp slab, whose last
        warp holds rows for h = 0 only (`Geometry.held_lanes`). None for a
        tile with no padding."""
        if not geom.padded:
            return None
        lanes = geom.held_lanes
        return ops.alu(
            "setp.lt.u32",
            self.consumer_ids(user).wg_lane,
            self.imm(list(lanes) if geom.half_slab else lanes[0], "b32"),
        )


def _one_pair(t: Attribute) -> bool:
    """Whether a register tile of type `t` is one pair register per thread (a
    16- or 8-bit tile of two elements a thread: a row tile of one 64-row
    block, a column tile of 8 columns). Its one register is not a splat
    (`Lowered.uniform`, one register every element reads): a widening read
    as one converted only its low half into both elements."""
    rt = register_type(t)
    return (
        rt is not None
        and rt.size == 1
        and isinstance(t, TensorType)
        and geometry(t).count == 2
    )


def _bits(x: int | float) -> int:
    """A literal as a cache key: -0.0 is not 0.0."""
    if isinstance(x, float):
        return struct.unpack("<I", struct.pack("<f", x))[0] | 1 << 40
    return x


def _inside(op: Operation, anchor: Operation) -> bool:
    """Whether `op` is nested in the block that holds `anchor`."""
    block = anchor.parent_block()
    node: Operation | None = op
    while node is not None:
        if node.parent_block() is block:
            return True
        node = node.parent_op()
    return False


class Ops(list[Operation]):
    """The ops a pattern builds, in order, with builders for common shapes."""

    def __init__(self, k: KernelState):
        super().__init__()
        self.k = k

    def add(self, op: Operation) -> Operation:
        self.append(op)
        return op

    def alu(
        self,
        opcode: str,
        *args: Operand,
        count: int | None = None,
        pred: Operand | None = None,
        negated: bool = False,
    ) -> SSAValue:
        """`opcode` on every element; operands are read through their maps.
        `count` defaults to the widest operand."""
        operands = [_as_lowered(a) for a in args]
        if count is None:
            count = max(len(a.map) if a.map is not None else a.width for a in operands)
        maps = [
            None if a.map is None or a.map == tuple(range(a.width)) else list(a.map)
            for a in operands
        ]
        guard = _as_lowered(pred) if pred is not None else None
        op = ptx.AluOp(
            opcode,
            [a.value for a in operands],
            count,
            maps,
            guard.value if guard else None,
            negated,
            list(guard.map) if guard and guard.map is not None else None,
        )
        self.append(op)
        return op.result

    def reg(self, x: Operand) -> SSAValue:
        """`x` in a register: an immediate is moved into one (PTX wants a
        register there; the printer's `reg`)."""
        low = _as_lowered(x)
        if low.is_imm:
            return self.alu(MOV[low.cls], low)
        assert low.map is None or low.width == 1
        return low.value

    def materialize(self, x: Lowered, t: ptx.RegType) -> SSAValue:
        """`x` as exactly the bundle `t` (a loop-carried value, a yield): a
        splat, a literal or a re-indexed value costs one mov per register."""
        have = x.value.type
        if (
            isinstance(have, ptx.RegType)
            and have.cls == t.cls
            and have.count == t.count
            and (x.map is None or x.map == tuple(range(t.size)))
        ):
            return x.value
        return self.alu(MOV[t.register_class], x, count=t.size)

    def imm(self, value: int | float | Sequence[int | float], cls: str) -> SSAValue:
        return self.k.imm(value, cls)


def int_value(attr: Attribute) -> int:
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


def uniform_branch(cond: SSAValue, then: list, otherwise: list) -> ptx.IfOp:
    """A uniform branch (`cond` is the same in every thread: a tile's
    coordinates, a tensor's alignment)."""
    blocks = []
    for ops in (then, otherwise):
        block = Block()
        block.add_ops([*ops, ptx.YieldOp()])
        blocks.append(block)
    return ptx.IfOp(cond, Region(blocks[0]), Region(blocks[1]), uniform=True)
