"""aref-partition: split every tile kernel into a TMA producer role and an MMA
consumer role that talk only through arefs.

Contract (what the pass guarantees and assumes):
- Seeds: every `tile.load` belongs to the producer; every op with a side effect
  that is not a load (stores) belongs to the consumer, together with every load's
  result, which it receives through an aref. A `tile.next_tile` (the ticket of a
  dynamically scheduled persistent kernel) is issued like a load: the producer
  takes the ticket and puts it into a ring of its own (slots of one `index`),
  from which the consumer gets it, so only one thread touches the counter and
  the roles agree on every tile. Each role keeps the backward slice of
  its seeds over `scf.for` (a loop is kept in a role with only the iteration
  arguments that role needs, its counter keeping its type); what both slices
  need (index math, loop bounds) is duplicated. Other region ops (`scf.if`,
  `scf.while`) hold no loads: a role that needs one clones it whole, with the
  values its regions read from outside.
- Loops are `scf.for`, or the `scf.while` of `persistent{dynamic=true}`: a
  while whose condition hands its arguments on unchanged, so its values are
  carried like a for loop's iteration arguments and its condition is recomputed
  by each role from the values it keeps.
- One aref per loop body carries all tiles that body loads (one `aref.put` after
  its last load, one `aref.get` where the first one was). Sibling loops that load
  the same tile types share an aref: its logical index keeps counting from one loop
  to the next. A load outside any loop (Q in attention) gets its own depth-1 aref.
- Indices are counters threaded through the loops of both roles; `aref.consumed`
  follows the last consumer use of the gotten tiles in the same block.
- Rings are created with depth 1; `pipeline` deepens them.

Kernels it cannot partition get a diagnostic at the offending op: a load nested in
anything but such loops, a load whose address (or an enclosing loop bound)
depends on tile data, a loaded tile that escapes its loop iteration, a
thread-level op (a CTA barrier) that only one role would run, a load of a tensor
the kernel stored into before it (the producer would read it first). A kernel without
loads gets a consumer role only (the producer has nothing to do).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, ModuleOp, TensorType
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator, Pure

from tawa_xdsl.analysis.carried import copied_into
from tawa_xdsl.diagnostics import OpDiagnostic, location_prefix
from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.dialects.roles import Role
from tawa_xdsl.kernel import kernels

THREAD_LEVEL_DIALECTS = ("nvgpu_async", "gpu", "nvvm")
"""Dialects whose ops act on threads, warps or the block, not on tiles."""

Issued = tile.LoadOp | tile.NextTileOp
"""Ops the producer issues and the consumer receives through an aref."""

Loop = scf.ForOp | scf.WhileOp


@dataclass(frozen=True)
class ArefPartitionPass(ModulePass):
    """Warp-specialize every tile kernel: producer (TMA loads) and consumer (MMAs,
    epilogue, stores) roles connected by arefs."""

    name = "aref-partition"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in list(kernels(op)):  # tile kernels (`analysis.levels`)
            Partitioner(kernel).run()


@dataclass(eq=False)
class Channel:
    """One aref: the loads it carries, grouped by the block that issues them."""

    types: tuple[TensorType, ...]
    in_loop: bool
    groups: list[LoadGroup] = field(default_factory=list)
    create: aref.CreateOp | None = None


@dataclass(eq=False)
class LoadGroup:
    """Loads one block issues together into one slot of `channel`."""

    loads: list[Issued]
    channel: Channel

    @property
    def block(self) -> Block:
        block = self.loads[0].parent_block()
        assert block is not None
        return block


def _enclosing_loops(op: Operation, kernel: func.FuncOp) -> list[Loop]:
    """The loops around `op`, innermost first; a diagnostic for any other region."""
    loops: list[Loop] = []
    parent, region = op.parent_op(), op.parent_region()
    while parent is not None and parent is not kernel:
        if isinstance(parent, scf.WhileOp):
            if region is parent.before_region or not _carries_unchanged(parent):
                raise OpDiagnostic(
                    op,
                    f"{op.name} inside this scf.while cannot be partitioned: it "
                    "must sit in the body (not the condition) of a while whose "
                    "condition hands its arguments on unchanged",
                )
        elif not isinstance(parent, scf.ForOp):
            raise OpDiagnostic(
                op,
                f"{op.name} inside '{parent.name}' cannot be partitioned: loads may "
                "only be nested in scf.for loops (or a persistent kernel's scf.while)",
            )
        loops.append(parent)
        parent, region = parent.parent_op(), parent.parent_region()
    return loops


def _runs_before(first: Operation, then: Operation) -> bool:
    """Whether `first` runs before `then` whenever both run: the op around
    `first` in the block of the op around `then` comes earlier in it (ops in
    two branches of one `scf.if` never both run)."""
    around: dict[Block, Operation] = {}
    op: Operation | None = then
    while op is not None:
        block = op.parent_block()
        if block is not None:
            around[block] = op
        op = op.parent_op()
    op = first
    while op is not None:
        block = op.parent_block()
        if block is not None and block in around:
            other = around[block]
            return other is not op and block.get_operation_index(
                op
            ) < block.get_operation_index(other)
        op = op.parent_op()
    return False


def _carries_unchanged(loop: scf.WhileOp) -> bool:
    """Whether the condition of `loop` passes its arguments on as they came."""
    before = loop.before_region.block
    condition = before.last_op
    return isinstance(condition, scf.ConditionOp) and list(condition.args) == list(
        before.args
    )


def _loop_bounds(loop: Loop) -> list[SSAValue]:
    """What decides how often `loop` runs, besides its carried values: a for
    loop's bounds, or what a while's condition reads (but the arguments it
    hands on)."""
    if isinstance(loop, scf.ForOp):
        return [loop.lb, loop.ub, loop.step]
    before = loop.before_region.block
    condition = before.last_op
    assert isinstance(condition, scf.ConditionOp)
    return [condition.condition] + [
        v for o in before.ops if o is not condition for v in o.operands
    ]


class Partitioner:
    """Partitions one kernel. See the module docstring for the contract."""

    def __init__(self, kernel: func.FuncOp):
        self.kernel = kernel
        self.body = kernel.body.block
        self.loads = [op for op in kernel.walk() if isinstance(op, Issued)]
        self.whiles: set[scf.WhileOp] = set()
        """The while loops that issue loads: kept in parts, like for loops."""

    # ------------------------------------------------------------------ analysis

    def _check_thread_level_ops(self) -> None:
        """Ops of the machine level (a CTA barrier, a thread id) assume the threads
        the partition has not made yet: it would give them to the consumer role
        alone, and a block-wide barrier that the producer never reaches hangs."""
        for op in self.kernel.walk():
            if op.name.split(".")[0] in THREAD_LEVEL_DIALECTS:
                raise OpDiagnostic(
                    op,
                    f"{op.name} is a thread-level op and a tile kernel describes "
                    "whole tiles: aref-partition would run it in the consumer role "
                    "only (a block-wide barrier there never completes); remove it",
                )

    def _check_addresses(self) -> None:
        enclosing = {load: _enclosing_loops(load, self.kernel) for load in self.loads}
        self.whiles = {
            lp
            for lps in enclosing.values()
            for lp in lps
            if isinstance(lp, scf.WhileOp)
        }
        for load, loops in enclosing.items():
            roots = list(load.operands) + [v for lp in loops for v in _loop_bounds(lp)]
            self._check_scalar_slice(load, roots)

    def _check_scalar_slice(self, load: Issued, roots: Iterable[SSAValue]) -> None:
        """The producer computes addresses from scalars only: no tile data."""
        seen: set[SSAValue] = set()
        work = list(roots)
        while work:
            v = work.pop()
            if v in seen:
                continue
            seen.add(v)
            if isinstance(v.type, TensorType):
                raise OpDiagnostic(
                    load,
                    f"{load.name} address depends on tile data "
                    f"(%{v.name_hint or '?'} : {v.type}); the producer can only "
                    "compute addresses from scalars",
                )
            if isinstance(v, OpResult):
                owner = v.op
                if isinstance(owner, scf.ForOp) or owner in self.whiles:
                    work += copied_into(v)
                else:  # a region op (scf.if, scf.while) is computed whole
                    work += [u for o in owner.walk() for u in o.operands]
            elif isinstance(v, BlockArgument):
                loop = v.block.parent_op()
                if isinstance(loop, scf.ForOp) and v.index == 0:
                    work += _loop_bounds(loop)
                elif isinstance(loop, Loop):
                    work += copied_into(v)

    def _check_loads_after_stores(self) -> None:
        """A load of a tensor that the kernel stored into before it (in program
        order, not in another branch) would read what was there before: the
        producer issues its loads ahead of the consumer's stores, with no
        order between the roles through global memory (the simulators read
        the stale tensor, the interpreter the stored one). A load before the
        store (C = alpha A B + beta C), also in a loop whose later iterations
        store, is what kernels do and stays."""
        stores = [op for op in self.kernel.walk() if isinstance(op, tile.StoreOp)]
        for load in self.loads:
            if not isinstance(load, tile.LoadOp):
                continue
            for store in stores:
                if store.desc is load.desc and _runs_before(store, load):
                    at = location_prefix(store).removesuffix(": ")
                    raise OpDiagnostic(
                        load,
                        f"tile.load of %{load.desc.name_hint or '?'}, which the "
                        f"kernel stores into before it (tile.store at {at or '?'}): the "
                        "producer warpgroup issues its loads ahead of the "
                        "consumers' stores, so it would read what was there "
                        "before; use the stored tile itself",
                    )

    def _check_no_escape(self) -> None:
        """A loaded tile lives in its slot for one iteration of the loop issuing it."""
        for load in self.loads:
            block = load.parent_block()
            if isinstance(load, tile.NextTileOp) or not isinstance(
                block.parent_op(), Loop
            ):
                continue  # a ticket is a scalar, copied out of its slot
            for use in load.result.uses:
                if (
                    isinstance(use.operation, scf.YieldOp)
                    and use.operation.parent_block() is block
                ):
                    raise OpDiagnostic(
                        load,
                        "tile.load result is carried out of its loop iteration; an aref "
                        "slot only holds it for one iteration",
                    )

    def _group_loads(self) -> list[LoadGroup]:
        by_block: dict[Block, list[tile.LoadOp]] = {}
        groups: list[LoadGroup] = []
        for load in self.loads:
            if isinstance(load, tile.NextTileOp):  # its own ring: never waits on tiles
                channel = Channel((load.result.type,), in_loop=True)
                groups.append(LoadGroup([load], channel))
            else:
                by_block.setdefault(load.parent_block(), []).append(load)
        shared: dict[tuple[Block | None, tuple[TensorType, ...]], Channel] = {}
        for block, loads in by_block.items():
            loop = block.parent_op()
            if isinstance(loop, Loop):
                types = tuple(ld.result.type for ld in loads)
                key = (loop.parent_block(), types)
                if key not in shared:
                    shared[key] = Channel(types, in_loop=True)
                groups.append(LoadGroup(loads, shared[key]))
            else:
                for ld in loads:
                    groups.append(
                        LoadGroup([ld], Channel((ld.result.type,), in_loop=False))
                    )
        for g in groups:
            g.channel.groups.append(g)
        return groups

    # ------------------------------------------------------------------- slicing

    def _slice(self, role: Role, roots: Iterable[Operation]) -> RoleSlice:
        s = RoleSlice(role, self.kernel, self.whiles)
        for op in roots:
            s.need_op(op)
        return s

    # ----------------------------------------------------------------- rewriting

    def run(self) -> None:
        self._check_thread_level_ops()
        self._check_addresses()
        self._check_no_escape()
        self._check_loads_after_stores()
        self.groups = self._group_loads()
        self.group_of = {ld: g for g in self.groups for ld in g.loads}
        self.channels = list(dict.fromkeys(g.channel for g in self.groups))

        consumer_roots = [
            op
            for op in self.kernel.walk()
            if op is not self.kernel
            and not op.has_trait(Pure)
            and not op.regions
            and not op.has_trait(IsTerminator)
        ]
        producer = self._slice("producer", self.loads)
        consumer = self._slice("consumer", consumer_roots + self.loads)

        rings = 0
        for ch in self.channels:
            ch.create = aref.CreateOp(aref.ArefType(ch.types, 1))
            ch.create.location = ch.groups[0].loads[0].location
            if isinstance(ch.groups[0].loads[0], tile.NextTileOp):
                ch.create.result.name_hint = "tickets"
            elif ch.in_loop:
                ch.create.result.name_hint = f"ring{rings}"
                rings += 1
            else:
                ch.create.result.name_hint = (
                    f"{ch.groups[0].loads[0].result.name_hint or 'tile'}_ref"
                )
        producer_region = RoleBuilder(self, producer).build()
        consumer_region = RoleBuilder(self, consumer).build()

        ret = self.body.last_op
        assert isinstance(ret, func.ReturnOp)
        for old in reversed(list(self.body.ops)):
            if old is not ret:
                old.detach()
                old.erase(safe_erase=False)
        for ch in self.channels:
            self.body.insert_op_before(ch.create, ret)
        ws = aref.WarpSpecializeOp(producer_region, consumer_region)
        ws.location = self.kernel.location  # later passes report against the kernel
        self.body.insert_op_before(ws, ret)

    def channels_inside(self, loop: Loop) -> list[Channel]:
        """Channels whose loads sit somewhere inside `loop`, in a fixed order."""
        inside = {
            self.group_of[ld].channel for ld in loop.walk() if isinstance(ld, Issued)
        }
        return [ch for ch in self.channels if ch in inside]


def _free_values(op: Operation) -> list[SSAValue]:
    """Values the regions of `op` read that are defined outside `op`."""
    free: dict[SSAValue, None] = {}
    for inner in op.walk():
        if inner is op:
            continue
        for v in inner.operands:
            if not op.is_ancestor(v.owner):
                free[v] = None
    return list(free)


class RoleSlice:
    """The ops, and the loop-carried values, one role must keep (backward closure)."""

    def __init__(self, role: Role, kernel: func.FuncOp, whiles: set[scf.WhileOp]):
        self.role = role
        self.kernel = kernel
        self.whiles = whiles
        """`Partitioner.whiles`: kept in parts, like for loops."""
        self.ops: set[Operation] = set()
        self.iters: set[tuple[Loop, int]] = set()

    def need_op(self, op: Operation) -> None:
        if op in self.ops:
            return
        self.ops.add(op)
        parent = op.parent_op()
        if parent is not None and parent is not self.kernel:
            self.need_op(parent)
        if isinstance(op, scf.ForOp):
            operands: Sequence[SSAValue] = (op.lb, op.ub, op.step)
        elif op in self.whiles:  # a while: its condition, recomputed by the role
            operands = _loop_bounds(op)
        elif isinstance(op, Issued) and self.role == "consumer":
            operands = ()  # the consumer receives the tile; it needs no address
        elif op.regions:
            # scf.if, scf.while: holding no loads, they are cloned whole, with
            # everything their regions read from outside
            operands = [*op.operands, *_free_values(op)]
        else:
            operands = op.operands
        for v in operands:
            self.need_value(v)

    def need_value(self, v: SSAValue) -> None:
        if isinstance(v, OpResult):
            if isinstance(v.op, scf.ForOp) or v.op in self.whiles:
                self.need_iter(v.op, v.index)
            else:
                self.need_op(v.op)
        elif isinstance(v, BlockArgument):
            loop = v.block.parent_op()
            if isinstance(loop, scf.ForOp):
                if v.index == 0:
                    self.need_op(loop)
                else:
                    self.need_iter(loop, v.index - 1)
            elif loop in self.whiles:
                self.need_iter(loop, v.index)

    def need_iter(self, loop: Loop, i: int) -> None:
        if (loop, i) in self.iters:
            return
        self.iters.add((loop, i))
        self.need_op(loop)
        inits = loop.iter_args if isinstance(loop, scf.ForOp) else loop.arguments
        yielded = (
            loop.body.block if isinstance(loop, scf.ForOp) else loop.after_region.block
        ).last_op
        assert yielded is not None
        self.need_value(inits[i])
        self.need_value(yielded.operands[i])


class RoleBuilder:
    """Clones one role's slice of the kernel into a fresh region, turning loads into
    `aref.put` (producer) or `aref.get` + `aref.consumed` (consumer) and threading
    each aref's index counter through the loops."""

    def __init__(self, partitioner: Partitioner, role_slice: RoleSlice):
        self.p = partitioner
        self.slice = role_slice
        self.mapper: dict[SSAValue, SSAValue] = {}

    def build(self) -> Region:
        block = Block()
        zero = arith.ConstantOp.from_int_and_width(0, IndexType())
        zero.result.name_hint = "idx0"
        block.add_op(zero)
        counters = {ch: zero.result for ch in self.p.channels}
        self._clone_block(self.p.body, block, counters)
        return Region(block)

    def lookup(self, v: SSAValue) -> SSAValue:
        if v in self.mapper:
            return self.mapper[v]
        assert isinstance(v, BlockArgument) and v.block is self.p.body, (
            f"aref-partition: {v} used before it was cloned"
        )
        return v

    def _last_use_positions(self, block: Block) -> dict[LoadGroup, Operation]:
        """For each group issued in `block`, the op of `block` after which its slot
        can be released: the last op that reads a loaded tile, directly or through a
        transpose (which is a view of the slot, not a copy), or else the first load."""
        ops = list(block.ops)
        position = {op: i for i, op in enumerate(ops)}
        result: dict[LoadGroup, Operation] = {}
        for g in self.p.groups:
            if g.block is not block:
                continue
            last = position[g.loads[0]]
            views = [ld.result for ld in g.loads]
            while views:
                for use in views.pop().uses:
                    user = use.operation
                    if isinstance(user, tile.TransOp):
                        views.append(user.result)
                    anc = block.find_ancestor_op_in_block(user)
                    if anc is not None and anc in self.slice.ops:
                        last = max(last, position[anc])
            result[g] = ops[last]
        return result

    def _clone_block(
        self, old: Block, new: Block, counters: dict[Channel, SSAValue]
    ) -> None:
        release_after = (
            self._last_use_positions(old) if self.slice.role == "consumer" else {}
        )
        slot_index: dict[LoadGroup, SSAValue] = {}
        for op in old.ops:
            if op.has_trait(IsTerminator) or op not in self.slice.ops:
                pass
            elif isinstance(op, Issued):
                self._clone_load(op, new, counters, slot_index)
            elif isinstance(op, scf.ForOp):
                self._clone_loop(op, new, counters)
            elif isinstance(op, scf.WhileOp) and op in self.p.whiles:
                self._clone_while(op, new, counters)
            else:
                new.add_op(op.clone(value_mapper=self.mapper))
            for g, last in release_after.items():
                if last is op:
                    consumed = aref.ConsumedOp(g.channel.create, slot_index[g])
                    consumed.location = g.loads[0].location
                    new.add_op(consumed)
        issued_here = [g for g in self.p.groups if g.block is old]
        if issued_here and isinstance(old.parent_op(), Loop):
            one = arith.ConstantOp.from_int_and_width(1, IndexType())
            new.add_op(one)
            for g in issued_here:
                step = arith.AddiOp(counters[g.channel], one)
                new.add_op(step)
                counters[g.channel] = step.result

    def _clone_load(
        self,
        load: Issued,
        new: Block,
        counters: dict[Channel, SSAValue],
        slot_index: dict[LoadGroup, SSAValue],
    ) -> None:
        g = self.p.group_of[load]
        index = counters[g.channel]
        slot_index[g] = index
        if self.slice.role == "producer":
            clone = load.clone(value_mapper=self.mapper)
            new.add_op(clone)
            if load is g.loads[-1]:
                values = [self.mapper[ld.result] for ld in g.loads]
                put = aref.PutOp(g.channel.create, index, values)
                put.location = load.location
                new.add_op(put)
        elif load is g.loads[0]:
            get = aref.GetOp(g.channel.create, index)
            get.location = load.location
            new.add_op(get)
            for ld, value in zip(g.loads, get.values, strict=True):
                value.name_hint = ld.result.name_hint
                self.mapper[ld.result] = value

    def _clone_loop(
        self, loop: scf.ForOp, new: Block, counters: dict[Channel, SSAValue]
    ) -> None:
        iters = sorted(i for lp, i in self.slice.iters if lp is loop)
        channels = self.p.channels_inside(loop)
        old_body = loop.body.block
        # the induction variable keeps its type (index or a signless integer)
        arg_types = [old_body.args[0].type] + [loop.iter_args[i].type for i in iters]
        body = Block(arg_types=arg_types + [IndexType()] * len(channels))
        self.mapper[old_body.args[0]] = body.args[0]
        body.args[0].name_hint = old_body.args[0].name_hint
        for k, i in enumerate(iters):
            self.mapper[old_body.args[i + 1]] = body.args[k + 1]
            body.args[k + 1].name_hint = old_body.args[i + 1].name_hint
        inner = dict(counters)
        for k, ch in enumerate(channels):
            arg = body.args[1 + len(iters) + k]
            arg.name_hint = "idx"
            inner[ch] = arg
        self._clone_block(old_body, body, inner)
        old_yield = old_body.last_op
        body.add_op(
            scf.YieldOp(
                *[self.lookup(old_yield.operands[i]) for i in iters],
                *[inner[ch] for ch in channels],
            )
        )
        clone = scf.ForOp(
            self.lookup(loop.lb),
            self.lookup(loop.ub),
            self.lookup(loop.step),
            [self.lookup(loop.iter_args[i]) for i in iters]
            + [counters[ch] for ch in channels],
            body,
        )
        self._place_loop(loop, clone, new, iters, channels, counters)

    def _place_loop(
        self,
        loop: scf.ForOp | scf.WhileOp,
        clone: scf.ForOp | scf.WhileOp,
        new: Block,
        iters: list[int],
        channels: list[Channel],
        counters: dict[Channel, SSAValue],
    ) -> None:
        """Add the role's `clone` of `loop` to `new`: the loop's hints (such as
        tile.overlap) and location, its kept results for the later uses, and
        the aref counters it carries out."""
        clone.attributes |= loop.attributes
        clone.location = loop.location
        new.add_op(clone)
        for k, i in enumerate(iters):
            self.mapper[loop.results[i]] = clone.results[k]
            clone.results[k].name_hint = loop.results[i].name_hint
        for k, ch in enumerate(channels):
            counters[ch] = clone.results[len(iters) + k]

    def _clone_while(
        self, loop: scf.WhileOp, new: Block, counters: dict[Channel, SSAValue]
    ) -> None:
        """The role's part of a for-like while (`_carries_unchanged`): the values
        it keeps and the aref counters, carried through both regions; the
        condition recomputed from them."""
        iters = sorted(i for lp, i in self.slice.iters if lp is loop)
        channels = self.p.channels_inside(loop)
        types = [loop.arguments[i].type for i in iters] + [IndexType()] * len(channels)
        old_before, old_after = loop.before_region.block, loop.after_region.block
        before, after = Block(arg_types=types), Block(arg_types=types)
        for block, old_block in ((before, old_before), (after, old_after)):
            for k, i in enumerate(iters):
                self.mapper[old_block.args[i]] = block.args[k]
                block.args[k].name_hint = old_block.args[i].name_hint
            for k in range(len(channels)):
                block.args[len(iters) + k].name_hint = "idx"
        condition = old_before.last_op
        assert isinstance(condition, scf.ConditionOp)
        for op in old_before.ops:
            if op is not condition:
                before.add_op(op.clone(value_mapper=self.mapper))
        before.add_op(scf.ConditionOp(self.lookup(condition.condition), *before.args))
        inner = dict(counters)
        for k, ch in enumerate(channels):
            inner[ch] = after.args[len(iters) + k]
        self._clone_block(old_after, after, inner)
        old_yield = old_after.last_op
        assert old_yield is not None
        after.add_op(
            scf.YieldOp(
                *[self.lookup(old_yield.operands[i]) for i in iters],
                *[inner[ch] for ch in channels],
            )
        )
        clone = scf.WhileOp(
            [self.lookup(loop.arguments[i]) for i in iters]
            + [counters[ch] for ch in channels],
            types,
            [before],
            [after],
        )
        self._place_loop(loop, clone, new, iters, channels, counters)
