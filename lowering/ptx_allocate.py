"""ptx-allocate: name every register bundle in its type, xDSL-style.

Contract. Input: thread-level kernels (`ptx` ops, structured `ptx.for` /
`ptx.if` / `ptx.while`, nothing allocated). Output: every `!ptx.reg` value
typed with its registers, `!ptx.reg<f32 x 64 at 12>` being `%f12 .. %f75`,
and the phi copies explicit: a `ptx.for`'s counter start, initial values,
carried block arguments, yielded values and results sit in the same
registers, as do a `ptx.if`'s yielded values and results, a `ptx.while`'s
initial values, `before` arguments and yielded values, and its forwarded
values, `after` arguments and results, with `ptx.alu` movs inserted where a
value had to sit elsewhere. Immediates are never allocated.

Registers are virtual (ptxas allocates the machine's), so this is not about
fitting a register file: every value gets registers of its own, except where
sharing saves instructions:
- an op's result takes the registers of an operand that dies there, when the op
  allows it (`PTXOp.reusable_operands`: an elementwise instruction reading that
  operand element for element). A chain of in-place updates, such as online
  softmax's `acc = acc * alpha + p`, then stays in one bundle;
- a `wgmma`'s result is its accumulator's registers (`PTXOp.tied_operand`): the
  accumulator is copied first where it is still live after the wgmma;
- a loop's carried values get registers of their own, shared with the loop's
  results; the yielded value shares them too unless it is live at the same
  time as the carried value, and so does the initial value when it is a `mov`
  made for the loop (`_made_for_the_loop` says why not others); elsewhere a
  copy is inserted: the counter's `mov.u32`, then the carried values;
- an `if`'s results likewise with each branch's yielded value;
- a `while` loop's `before` arguments get registers of their own, shared with
  the initial values as a `for` loop's are and with the yielded values (the
  back edge) where liveness allows, else copied before the `ptx.yield`; its
  `after` arguments share registers with its results (the condition writes
  both: the `after` arguments where it holds, the results where it does not),
  and the forwarded values share them too where liveness allows, else are
  copied before the `ptx.condition`. A loop that forwards its carried values
  unchanged (the usual `scf.while`) keeps them in one bundle throughout.
Sharing is decided by exact liveness (`ptx_liveness.py`), so it is legal by
construction: values share registers only when their live segments are
disjoint. A group of values sharing registers is one bundle; different groups
never overlap.

Parallel copies (at a loop entry, a loop's end or condition, a branch's end) are
sequentialized: a copy whose destination another copy still reads waits for it,
and a cycle goes through one temporary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, OpResult, SSAValue, SSAValues
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects.ptx import (
    AluOp,
    ConditionOp,
    ForOp,
    IfOp,
    PTXOp,
    RegType,
    WhileOp,
    YieldOp,
)
from tawa_xdsl.kernel import kernels
from tawa_xdsl.lowering.ptx_liveness import (
    Liveness,
    Segment,
    carried_destination,
    overlaps,
    union,
)

MOV = {
    "pred": "mov.pred",
    "b16": "mov.b16",
    "b32": "mov.b32",
    "b64": "mov.b64",
    "f32": "mov.f32",
}
"""The copy of each register class."""
COUNTER_MOV = "mov.u32"
"""How a loop counter is started (the carried values' copies use `MOV`)."""


@dataclass(eq=False)
class _Group:
    """Values that share one bundle of registers, and where any of them is live."""

    cls: str
    size: int
    segments: list[Segment]
    parent: _Group | None = None
    """Union-find: the group this one was merged into."""
    first: int = field(default=0)
    """Creation order (registers are numbered in it); -1 for a group of copies
    until its first copy is made."""

    def find(self) -> _Group:
        """The group this one is part of now (path-compressed union-find)."""
        root = self
        while root.parent is not None:
            root = root.parent
        node = self
        while node.parent is not None and node.parent is not root:
            node.parent, node = root, node.parent
        return root


def _made_for_the_loop(init: SSAValue) -> bool:
    """Whether a loop's initial value may be built in the carried registers:
    only a `mov` (a constant or a re-indexed value materialized for the loop).
    Any other initial value is copied: sharing would tie the registers of what
    computed it to the loop, and where that is a wgmma accumulator ptxas then
    serializes the wgmmas (C7515: an `if` yielding an accumulator, zeros in one
    branch, into a loop that accumulates on it)."""
    return isinstance(init.owner, AluOp) and init.owner.opcode.data.startswith("mov.")


def _fresh(like: _Group) -> _Group:
    """An empty group of `like`'s class and size (numbered on first use)."""
    return _Group(like.cls, like.size, [], first=-1)


class _Allocator:
    """Groups the values of one kernel, inserts the copies, then retypes."""

    def __init__(self, kernel: func.FuncOp):
        self.kernel = kernel
        self.live = Liveness(kernel.body)
        self.group: dict[SSAValue, _Group] = {}
        self.order: list[_Group] = []

    # ---------------------------------------------------------- groups

    def _own(self, value: SSAValue) -> _Group:
        """A group of its own for `value`, live where `value` is."""
        t = value.type
        assert type(t) is RegType
        g = _Group(t.cls.data, t.count.data, self.live.segments(value))
        g.first = len(self.order)
        self.order.append(g)
        self.group[value] = g
        return g

    def _merge(self, a: _Group, b: _Group) -> bool:
        """Put two groups in one bundle if none of their values overlap."""
        a, b = a.find(), b.find()
        if a is b:
            return True
        if overlaps(a.segments, b.segments):
            return False
        if b.first < a.first:
            a, b = b, a
        b.parent = a
        a.segments = union([*a.segments, *b.segments])
        return True

    # ------------------------------------------------------------ walk

    def run(self) -> None:
        for op in list(self.live.ops):
            kind = type(op)
            if kind is ForOp:
                self._for(op)
            elif kind is WhileOp:
                self._while(op)
            elif kind is IfOp:
                for r in op.results:
                    self._own(r)
            elif kind is YieldOp or kind is ConditionOp:
                dests = [self.group[d].find() for d in carried_destination(op)]
                first = len(op.operands) - len(op.values)  # after the condition
                self._phi(op, dests, list(op.values), first)
            elif isinstance(op, PTXOp):
                self._result(op)
            elif kind is not func.ReturnOp:
                raise OpDiagnostic(
                    op,
                    "ptx-allocate: a thread-level kernel holds ptx ops only "
                    "(run distribute-fragments first)",
                )
        self._retype()

    def _for(self, op: ForOp) -> None:
        args = op.body.block.args
        counter = self._own(args[0])
        carried = []
        for arg, res in zip(args[1:], op.res, strict=True):
            g = self._own(arg)
            assert self._merge(g, self._own(res))
            carried.append(g.find())
        start = AluOp(COUNTER_MOV, [op.lb], 1)
        Rewriter.insert_op(start, InsertPoint.before(op))
        self.group[start.result] = counter
        op.operands[0] = start.result
        self._phi(op, carried, list(op.iter_args), 3, _made_for_the_loop)

    def _while(self, op: WhileOp) -> None:
        carried = [self._own(arg) for arg in op.before.block.args]
        for arg, res in zip(op.after.block.args, op.res, strict=True):
            assert self._merge(self._own(arg), self._own(res))
        self._phi(op, carried, list(op.inits), 0, _made_for_the_loop)

    def _phi(
        self,
        user: Operation,
        dests: Sequence[_Group],
        sources: Sequence[SSAValue],
        first: int,
        may_share: Callable[[SSAValue], bool] = lambda _: True,
    ) -> None:
        """Make each source, operand `first + i` of `user`, sit in its
        destination group: shared where liveness (and `may_share`) allows,
        else copied (all at once) right before `user`."""
        copies: list[tuple[int, _Group, SSAValue]] = []
        for i, (g, src) in enumerate(zip(dests, sources, strict=True)):
            if (
                type(src.type) is RegType
                and may_share(src)
                and self._merge(self.group[src], g)
            ):
                continue
            copies.append((i, g, src))
        for i, value in self._parallel_copy(user, copies):
            user.operands[first + i] = value

    def _parallel_copy(
        self, at: Operation, copies: list[tuple[int, _Group, SSAValue]]
    ) -> list[tuple[int, SSAValue]]:
        """Sequentialize copies that happen at once: a copy waits while another
        still reads its destination; a cycle is broken through a temporary."""
        done: list[tuple[int, SSAValue]] = []
        pending = list(copies)
        while pending:
            read = {
                self.group[s].find()
                for _, _, s in pending
                if isinstance(s.type, RegType)
            }
            ready = [c for c in pending if c[1].find() not in read]
            if not ready:  # a cycle: stage one source aside
                i, g, src = pending[0]
                pending[0] = (i, g, self._copy(at, src, _fresh(g)))
                continue
            for i, g, src in ready:
                done.append((i, self._copy(at, src, g)))
                pending.remove((i, g, src))
        return done

    def _copy(self, at: Operation, src: SSAValue, dest: _Group) -> SSAValue:
        """`mov` of `src` (a bundle or an immediate) into `dest`, before `at`.
        The write needs no liveness check: it happens where the destination's
        own values are written (a loop entry or end, a branch end). The copy is
        live where `at` reads its operands, as the sources of the other copies
        made there are: recording that keeps a later merge from putting the
        destination in a source's registers (one copy would then overwrite what
        another still reads)."""
        mov = AluOp(MOV[dest.cls], [src], dest.size)
        Rewriter.insert_op(mov, InsertPoint.before(at))
        self.group[mov.result] = dest
        point = 2 * self.live.index[at]
        root = dest.find()
        root.segments = union([*root.segments, (point, point)])
        if dest.first < 0:
            dest.first = len(self.order)
            self.order.append(dest)
        return mov.result

    def _result(self, op: PTXOp) -> None:
        results = op.results
        if len(results) != 1 or type(results[0].type) is not RegType:
            return  # no register written (an immediate, a store, a barrier)
        g = self._own(results[0])
        tied = op.tied_operand()
        if tied is not None:
            if not self._merge(g, self.group[tied]):
                copy = _fresh(g)
                index = list(op.operands).index(tied)
                op.operands[index] = self._copy(op, tied, copy)
                assert self._merge(g, copy)
            return
        for v in op.reusable_operands():
            if self._merge(g, self.group[v]):
                return

    # ---------------------------------------------------------- retype

    def _retype(self) -> None:
        base: dict[_Group, int] = {}
        next_free: dict[str, int] = {}
        for g in self.order:
            root = g.find()
            if root not in base:
                base[root] = next_free.get(root.cls, 0)
                next_free[root.cls] = base[root] + root.size
        types: dict[tuple[Attribute, int], RegType] = {}
        new_types: dict[SSAValue, Attribute] = {}
        for value, g in self.group.items():
            key = (value.type, base[g.find()])
            if key not in types:
                t = value.type
                assert isinstance(t, RegType)
                types[key] = t.allocated(key[1])
            new_types[value] = types[key]
        retype(self.kernel, new_types)


def retype(kernel: func.FuncOp, new_types: dict[SSAValue, Attribute]) -> None:
    """Give values new types: `Rewriter.replace_value_with_new_type` for all
    of them at once. One at a time, it rebuilds the operand list of every user
    once per value it reads; here each op's results and operands are rebuilt
    once (a third of the allocator's time otherwise)."""
    replaced: dict[SSAValue, SSAValue] = {}
    by_op: dict[Operation, list[OpResult]] = {}
    users: dict[Operation, None] = {}
    for value in new_types:
        for use in value.uses:
            users[use.operation] = None
        if type(value) is OpResult:
            by_op.setdefault(value.op, []).append(value)
        else:
            replaced[value] = Rewriter.replace_value_with_new_type(
                value, new_types[value]
            )
    for op, olds in by_op.items():
        results = list(op.results)
        for old in olds:
            new = OpResult(new_types[old], op, old.index)
            if old.name_hint is not None:
                new.name_hint = old.name_hint
            results[old.index] = replaced[old] = new
        op.results = SSAValues(results)
    for op in users:
        op.operands = [replaced.get(o, o) for o in op.operands]


def _check_unallocated(kernel: func.FuncOp, ops: list[Operation]) -> bool:
    """True when nothing is allocated yet, False when everything is; a kernel
    half allocated is refused."""
    allocated = unallocated = 0
    for op in ops:
        values = list(op.results)
        for region in op.regions:  # a loop's carried values
            for block in region.blocks:
                values += block.args
        for value in values:
            t = value.type
            if type(t) is RegType:
                if t.is_allocated:
                    allocated += 1
                else:
                    unallocated += 1
    if allocated and unallocated:
        raise OpDiagnostic(
            kernel,
            "ptx-allocate: the kernel is partly allocated; allocate all of it or none",
        )
    return unallocated > 0


def allocate_kernel(kernel: func.FuncOp) -> None:
    if kernel.body.block.args:
        raise OpDiagnostic(
            kernel,
            "ptx-allocate: a thread-level kernel takes no block arguments (it "
            "reads its parameters with ptx.param)",
        )
    allocator = _Allocator(kernel)
    if _check_unallocated(kernel, allocator.live.ops):
        allocator.run()


@dataclass(frozen=True)
class PtxAllocatePass(ModulePass):
    """Name the registers of every thread-level kernel (see the module docstring)."""

    name = "ptx-allocate"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            allocate_kernel(kernel)
