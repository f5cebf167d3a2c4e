"""split-k{splits=S}: slice a GEMM's K loop over S programs along grid axis z,
and sum the slices in a second kernel.

Why: a problem whose output tiles do not fill the GPU (128 x 128 x 8192 is one
tile: one SM of 132 works, for the whole K loop) runs faster when the K loop is
cut into S slices computed by S programs at once; their f32 partial
accumulators are then summed.

Contract. Input: tile IR (before `tile-shape` or after it, before `persistent`,
`reverse-grid`, `cluster` and `aref-partition`) with GEMM-like kernels: one
`tile.dot` in the kernel, directly in an `scf.for` (the K loop) of the kernel's
body, accumulating into a loop-carried f32 tile that starts at zero and is read
by nothing else in the loop; other loop-carried values may only be counters
(`x + c`, `c` loop-invariant) not read after the loop; a positive constant
step; one `tile.store` after the loop, of a tile the accumulator's shape, at
coordinates computed before the loop; no use of grid axis z. Anything else
gets a diagnostic at the op in the way.

Output: each kernel `@k` becomes a pair (the calling convention of
`tawa_xdsl.partials`, recorded on both kernels as `tile.split_k`):

- `@k_split_k` (partials) takes `@k`'s parameters that the loop and what comes
  before it use, then the workspace `%workspace: !tile.desc<Sx...xf32,
  box = [1, ...]>`: S, then the stored tensor's shape and box (`tile.dims`
  ["S", ...] and `tile.box` ["", ...] after the stored parameter's, so the
  argument contract checks it against the output). Program (x, y, z) runs `@k`'s
  program (x, y) over K iterations [z * T / S, (z + 1) * T / S) of the T
  iterations of `@k`'s loop (integer division: slices differ by at most one
  iteration; with S > T some are empty) and stores its accumulator at
  `workspace[z, <@k's store coordinates>]`: an empty slice stores zeros. Its
  grid is `@k`'s with z = S (read off that store).
- `@k_split_k_reduce` takes the workspace, then `@k`'s parameters the epilogue
  and the store use (a bias, a scale, the output). Each program loads the S
  partial tiles at `@k`'s store coordinates and adds them in order 0..S-1 (a
  fixed order: the result does not depend on scheduling), then runs `@k`'s
  epilogue (everything between the loop and the store) and the store. Its
  grid is `@k`'s.

Launch the partials kernel, then the reduce kernel. The pair computes what
`@k` computes up to the order of the f32 additions (with S = 1, exactly). Each
kernel is an ordinary tile kernel for the rest of the pipeline
(`tawa-hopper-pipeline` lowers both, each with its own options).

Deterministic by construction; no atomics (the tile dialect has none): the
workspace costs S x M x N x 4 bytes and one pass over it, which is small next
to the K loop when splitting pays (M x N small, K long).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    Float32Type,
    FunctionType,
    IndexType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import PassFailedException

from tawa_xdsl.analysis.carried import copied_into
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import tile
from tawa_xdsl.grid import constant_value, launch_pass_applied
from tawa_xdsl.kernel import kernels
from tawa_xdsl.partials import SPLIT_ATTR, WORKSPACE, Record, record
from tawa_xdsl.signature import DIMS_ATTR
from tawa_xdsl.transforms.persistent import Builder
from tawa_xdsl.transforms.tile_shape import BOX_ATTR
from tawa_xdsl.transforms.transposes import sink_transposes


@dataclass
class KLoop:
    """The structure of a GEMM-like kernel that the K loop can be sliced in: the
    K loop, the position of its accumulator among the loop-carried values, its
    counters (position -> the step each iteration adds) and the store after it."""

    kernel: func.FuncOp
    loop: scf.ForOp
    acc: int
    counters: dict[int, SSAValue]
    store: tile.StoreOp

    @property
    def accumulator(self) -> SSAValue:
        """The loop's result: the whole sum over K."""
        return self.loop.results[self.acc]

    @property
    def zero(self) -> SSAValue:
        """The accumulator's (zero) initial value."""
        return self.loop.iter_args[self.acc]


def k_loop(kernel: func.FuncOp, pass_name: str) -> KLoop:
    """The K loop structure of `kernel`, or a diagnostic at the op that breaks it."""
    name = kernel.sym_name.data
    if (later := launch_pass_applied(kernel)) is not None:
        raise OpDiagnostic(
            kernel,
            f"{pass_name}: kernel @{name} went through {later}, which "
            f"works on its grid; run {pass_name} before {later}",
        )
    dots = [o for o in kernel.walk() if isinstance(o, tile.DotOp)]
    if not dots:
        raise OpDiagnostic(
            kernel, f"{pass_name}: kernel @{name} has no tile.dot: no K loop to split"
        )
    dot = dots[0]
    loop = dot.parent_op()
    if len(dots) > 1:
        second = dots[1]
        if second.parent_op() is loop:
            where = "a second tile.dot in the K loop"
        elif any(isinstance(o, scf.ForOp | scf.WhileOp) for o in _ancestors(second)):
            where = "a second K loop"
        else:
            where = "a second tile.dot, outside any loop"
        raise OpDiagnostic(
            dots[1],
            f"{pass_name}: {where}; only loops with one accumulating tile.dot can "
            "be split",
        )
    if not isinstance(loop, scf.ForOp) or loop.parent_block() is not kernel.body.block:
        raise OpDiagnostic(
            dot,
            f"{pass_name}: the tile.dot must sit directly in an scf.for of the "
            "kernel's body (the K loop)",
        )
    acc = _accumulator(loop, dot, pass_name)
    counters = _counters(loop, acc, pass_name)
    step = constant_value(loop.step)
    if step is None or step <= 0:  # the slices use it as an iteration's width
        raise OpDiagnostic(
            loop,
            f"{pass_name}: the K loop's step must be a positive constant to cut "
            "its iterations into slices",
        )
    store = _store(kernel, loop, loop.results[acc].type, pass_name)
    return KLoop(kernel, loop, acc, counters, store)


def _ancestors(op: Operation) -> list[Operation]:
    """The ops around `op`, innermost first, up to its kernel's func.func."""
    found = []
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        found.append(parent)
        parent = parent.parent_op()
    return found


def _accumulator(loop: scf.ForOp, dot: tile.DotOp, pass_name: str) -> int:
    """The position of the dot's accumulator among the loop-carried values."""
    arg = dot.acc
    if not (
        isinstance(arg, BlockArgument)
        and arg.block is loop.body.block
        and arg.index > 0
        and copied_into(arg)[1] is dot.result
    ):
        raise OpDiagnostic(
            dot,
            f"{pass_name}: the tile.dot must accumulate across the K loop: its "
            "accumulator is the loop-carried value it yields",
        )
    for value, only in ((arg, dot), (dot.result, loop.body.block.last_op)):
        for use in value.uses:
            if use.operation is not only:
                raise OpDiagnostic(
                    use.operation,
                    f"{pass_name}: reads the accumulator inside the K loop, where "
                    "a slice holds only its part of the sum",
                )
    zero = copied_into(arg)[0]
    if not (
        isinstance(zero, OpResult)
        and isinstance(zero.op, arith.ConstantOp)
        and isinstance(zero.op.value, DenseIntOrFPElementsAttr)
        and set(zero.op.value.get_values()) == {0.0}
    ):
        raise OpDiagnostic(
            loop,
            f"{pass_name}: the accumulator must start at a zero constant: every "
            "slice sums from zero and the slices are added",
        )
    return arg.index - 1


def _counters(loop: scf.ForOp, acc: int, pass_name: str) -> dict[int, SSAValue]:
    """The loop-carried values besides the accumulator: counters `x + c` (`c`
    defined outside the loop) not read after it. Position -> c."""
    counters: dict[int, SSAValue] = {}
    for arg in loop.body.block.args[1:]:
        position = arg.index - 1
        if position == acc:
            continue
        yielded = copied_into(arg)[1]
        step = None
        if isinstance(yielded, OpResult) and isinstance(yielded.op, arith.AddiOp):
            lhs, rhs = yielded.op.lhs, yielded.op.rhs
            step = rhs if lhs is arg else lhs if rhs is arg else None
        if step is None or defined_inside(step, loop):
            raise OpDiagnostic(
                loop,
                f"{pass_name}: the K loop carries a value other than the "
                f"accumulator and counters (#{position}: a counter adds a "
                "loop-invariant step each iteration)",
            )
        for use in loop.results[position].uses:
            raise OpDiagnostic(
                use.operation,
                f"{pass_name}: reads a K loop counter after the loop, where each "
                "slice ends with a different value",
            )
        counters[position] = step
    return counters


def defined_inside(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined in a region of `op`."""
    owner = value.owner
    where = owner.parent_op() if isinstance(owner, Block) else owner
    return where is not None and (where is op or op.is_ancestor(where))


def _store(
    kernel: func.FuncOp, loop: scf.ForOp, acc_type: Attribute, pass_name: str
) -> tile.StoreOp:
    """The kernel's one store, after the loop, of a tile the accumulator's shape,
    at coordinates computed before the loop."""
    stores = [o for o in kernel.walk() if isinstance(o, tile.StoreOp)]
    if len(stores) != 1:
        raise OpDiagnostic(
            stores[1] if stores else kernel,
            f"{pass_name}: the kernel must store one tile, after the K loop",
        )
    store = stores[0]
    body = kernel.body.block
    if store.parent_block() is not body or not loop.is_before_in_block(store):
        raise OpDiagnostic(
            store,
            f"{pass_name}: the tile.store must follow the K loop in the kernel's body",
        )
    assert isinstance(acc_type, TensorType)
    if not (
        isinstance(store.value.type, TensorType)
        and store.value.type.get_shape() == acc_type.get_shape()
    ):
        raise OpDiagnostic(
            store,
            f"{pass_name}: stores a tile of another shape than the accumulator; "
            "the workspace holds accumulator tiles where the store puts its tile",
        )
    for index in store.indices:
        owner = index.owner
        if not (
            owner is body
            or (
                isinstance(owner, Operation)
                and owner.parent_block() is body
                and owner.is_before_in_block(loop)
            )
        ):
            raise OpDiagnostic(
                store,
                f"{pass_name}: the store's coordinates must be computed before the "
                "K loop (the reduction reads the partial sums there)",
            )
    return store


# ------------------------------------------------------------------ rewriting


def trip_count(b: Builder, lb: SSAValue, ub: SSAValue, step: SSAValue) -> SSAValue:
    """The iterations of `scf.for lb to ub step step` (0 when ub <= lb), in the
    induction variable's type."""
    span = b.add(arith.SubiOp(ub, lb))
    trips = b.add(arith.CeilDivSIOp(span, step))
    return b.add(arith.MaxSIOp(trips, b.const(0, lb.type)), "k_trips")


def share_bound(
    b: Builder, part: SSAValue, total: SSAValue, parts: SSAValue
) -> SSAValue:
    """floor(part * total / parts) for 0 <= part <= parts, as part * (total /
    parts) + part * (total % parts) / parts: index arithmetic is 32 bits on the
    GPU, and part * total wraps past 2^32 (K = 2^29 in 64-wide steps split
    1000 ways) where neither term here does (parts <= 65535, CUDA's grid limit
    along z, keeps part * (total % parts) below 2^32)."""
    whole = b.add(arith.MuliOp(part, b.add(arith.DivUIOp(total, parts))))
    rest = b.add(arith.MuliOp(part, b.add(arith.RemUIOp(total, parts))))
    return b.add(arith.AddiOp(whole, b.add(arith.DivUIOp(rest, parts))))


def slice_iterations(
    b: Builder,
    g: KLoop,
    lb: SSAValue,
    first: SSAValue,
    end: SSAValue,
    trips: SSAValue,
) -> None:
    """Make the K loop run only its iterations [first, end) (numbered from 0, in
    the induction variable's type; `lb` is its lower bound; the loop has
    `trips`): from lb + first * step to lb + end * step, but never
    lb + trips * step, which can pass 2^31 - 1 (K = 2^31 - 1 in steps of 64)
    and wrap: a slice that ends at the last iteration ends at the loop's own
    upper bound, and one that starts past it (an empty slice) runs from lb to
    lb. Counters start where iteration `first` finds them."""
    loop = g.loop

    def at(iteration: SSAValue) -> SSAValue:
        return b.add(arith.AddiOp(lb, b.add(arith.MuliOp(iteration, loop.step))))

    empty = b.add(arith.CmpiOp(first, trips, "sge"))
    to_the_end = b.add(arith.CmpiOp(end, trips, "sge"))
    loop.operands[0] = b.add(arith.SelectOp(empty, lb, at(first)), "k_begin")
    last = b.add(arith.SelectOp(empty, lb, loop.ub))
    loop.operands[1] = b.add(arith.SelectOp(to_the_end, last, at(end)), "k_end")
    for position, step in g.counters.items():
        skipped = b.add(arith.MuliOp(cast(b, first, step.type), step))
        init = loop.iter_args[position]
        loop.operands[3 + position] = b.add(arith.AddiOp(init, skipped))


def cast(b: Builder, value: SSAValue, t: Attribute) -> SSAValue:
    """`value` as an integer of type `t` (index or a width; between two widths
    through index, the one cast arith has for integers)."""
    if value.type == t:
        return value
    if not isinstance(value.type, IndexType) and not isinstance(t, IndexType):
        value = b.add(arith.IndexCastOp(value, IndexType()))
    return b.add(arith.IndexCastOp(value, t))


def store_partial(g: KLoop, workspace: SSAValue, slot: SSAValue) -> tile.StoreOp:
    """Store the accumulator at `workspace[slot, <the kernel's store
    coordinates>]` in place of the kernel's store."""
    new = tile.StoreOp(g.accumulator, workspace, [slot, *g.store.indices])
    block = g.store.parent_block()
    assert block is not None
    block.insert_op_after(new, g.store)
    g.store.detach()
    g.store.erase()
    return new


def reduce_partials(
    g: KLoop, workspace: SSAValue, slots: Callable[[Builder], SSAValue]
) -> None:
    """Replace the K loop by the sum of the partial tiles in workspace slots
    0, 1, ..., slots - 1, added in that order, where the store puts its tile."""
    b = Builder(g.kernel.body.block, g.loop)
    count = slots(b)
    acc_type = g.accumulator.type
    body = Block(arg_types=[IndexType(), acc_type])
    slot, total = body.args
    slot.name_hint, total.name_hint = "slot", "sum"
    load = tile.LoadOp(workspace, [slot, *g.store.indices], acc_type)
    load.result.name_hint = "partial"
    load.location = g.store.location  # it reads what the store wrote
    add = arith.AddfOp(total, load.result)
    body.add_ops([load, add, scf.YieldOp(add)])
    loop = scf.ForOp(b.const(0), count, b.const(1), [g.zero], body)
    loop.location = g.loop.location
    summed = b.add(loop, "total")
    g.accumulator.replace_all_uses_with(summed)
    g.loop.detach()
    g.loop.erase()


def _arg_attrs(kernel: func.FuncOp) -> list[dict[str, Attribute]]:
    if kernel.arg_attrs is None:
        return [{} for _ in kernel.body.block.args]
    return [dict(entry.data) for entry in kernel.arg_attrs.data]


def _set_signature(kernel: func.FuncOp, attrs: list[dict[str, Attribute]]) -> None:
    kernel.function_type = FunctionType.from_lists(
        [a.type for a in kernel.body.block.args], kernel.function_type.outputs.data
    )
    kernel.arg_attrs = ArrayAttr(DictionaryAttr(a) for a in attrs)


def _fresh(name: str, taken: set[str]) -> str:
    """`name`, or `name_1`, `name_2` ... if taken."""
    fresh, n = name, 0
    while fresh in taken:
        n += 1
        fresh = f"{name}_{n}"
    return fresh


def add_workspace(
    kernel: func.FuncOp,
    origin: list[int],
    index: int,
    store: tile.StoreOp,
    slots: int,
) -> BlockArgument:
    """Insert the workspace parameter at `index`: f32 of shape [slots, <the
    stored tensor's shape>] (slots may be `DYNAMIC_INDEX`), box [1, <the
    store's box>], its dimensions and box axes named after the stored
    parameter's, the slots "S" (or a fresh name)."""
    stored = store.desc
    assert isinstance(stored, BlockArgument), "tile.store writes a parameter"
    desc = stored.type
    assert isinstance(desc, tile.DescType)
    attrs = _arg_attrs(kernel)
    source = attrs[stored.index]
    entry: dict[str, Attribute] = {}
    dims = source.get(DIMS_ATTR)
    if isinstance(dims, ArrayAttr):
        names = {
            n.data
            for a in attrs
            if isinstance(a.get(DIMS_ATTR), ArrayAttr)
            for n in a[DIMS_ATTR].data
            if isinstance(n, StringAttr)
        }
        entry[DIMS_ATTR] = ArrayAttr([StringAttr(_fresh("S", names)), *dims.data])
    box = source.get(BOX_ATTR)
    if isinstance(box, ArrayAttr):
        entry[BOX_ATTR] = ArrayAttr([StringAttr(""), *box.data])
    block = kernel.body.block
    workspace = block.insert_arg(
        tile.DescType((slots, *desc.get_shape()), Float32Type(), (1, *desc.get_box())),
        index,
    )
    workspace.name_hint = _fresh("workspace", {a.name_hint or "" for a in block.args})
    attrs.insert(index, entry)
    origin.insert(index, WORKSPACE)
    _set_signature(kernel, attrs)
    return workspace


def _erase_dead(kernel: func.FuncOp) -> None:
    """Erase what nothing needs any more (the epilogue in the partials kernel,
    the K loop's inputs in the reduce kernel). Repeated: xDSL's `region_dce`
    keeps what the terminators of a dead region read (a bound computed with an
    `scf.while` keeps `tile.dim` of A alive) until that region is gone."""
    while region_dce(kernel.body):
        pass


def prune_params(kernel: func.FuncOp, origin: list[int]) -> None:
    """Drop the parameters nothing reads any more (the partials kernel's output
    and epilogue operands, the reduce kernel's GEMM inputs), and their origins."""
    attrs = _arg_attrs(kernel)
    block = kernel.body.block
    for arg in reversed(block.args):
        if arg.first_use is None:
            del attrs[arg.index], origin[arg.index]
            block.erase_arg(arg)
    _set_signature(kernel, attrs)


PartialsBuilder = Callable[[KLoop, BlockArgument], None]
"""Turns a copy of the kernel into the partials kernel, given its K loop and its
workspace parameter (appended last)."""


def make_pair(
    kernel: func.FuncOp,
    mode: str,
    slots: int,
    partials: PartialsBuilder,
    reduce_slots: Callable[[Builder, BlockArgument], SSAValue],
) -> None:
    """Replace `kernel` by its partials kernel (built by `partials`) and its
    reduce kernel (summing `reduce_slots` slots), with their records."""
    name = kernel.sym_name.data
    suffix = mode.replace("-", "_")
    names = (f"{name}_{suffix}", f"{name}_{suffix}_reduce")
    module = kernel.parent_op()
    assert module is not None
    taken = {o.sym_name.data for o in module.walk() if isinstance(o, func.FuncOp)}
    for n in names:
        if n in taken:
            raise OpDiagnostic(
                kernel, f"{mode}: cannot name the kernels it makes @{n}: taken"
            )
    count = len(kernel.body.block.args)

    first = kernel.clone()
    g = k_loop(first, mode)
    first_origin = list(range(count))
    partials(g, add_workspace(first, first_origin, count, g.store, slots))
    _erase_dead(first)
    prune_params(first, first_origin)

    second = kernel.clone()
    g = k_loop(second, mode)
    second_origin = list(range(count))
    workspace = add_workspace(second, second_origin, 0, g.store, slots)
    reduce_partials(g, workspace, lambda b: reduce_slots(b, workspace))
    _erase_dead(second)
    prune_params(second, second_origin)

    splits = 0 if slots == DYNAMIC_INDEX else slots  # 0: the launch decides
    for made, own, partner, role, origin in (
        (first, names[0], names[1], "partials", first_origin),
        (second, names[1], names[0], "reduce", second_origin),
    ):
        made.sym_name = StringAttr(own)
        made.attributes[SPLIT_ATTR] = Record(
            mode, role, name, partner, splits, tuple(origin)
        ).encode()
    block = kernel.parent_block()
    assert block is not None
    block.insert_ops_before([first, second], kernel)
    kernel.detach()
    kernel.erase()


def split_k(kernel: func.FuncOp, splits: int) -> None:
    """Replace `kernel` by its split-K pair (see the module docstring)."""
    k_loop(kernel, "split-k")  # its diagnostics, at the original's ops
    for o in kernel.walk():
        if isinstance(o, tile.ProgramIdOp | tile.NumProgramsOp) and o.axis.index == 2:
            raise OpDiagnostic(
                o, "split-k: the K slices take grid axis z, which the kernel uses"
            )

    def partials(g: KLoop, workspace: BlockArgument) -> None:
        loop = g.loop
        b = Builder(g.kernel.body.block, loop)
        split = b.add(tile.ProgramIdOp("z"), "split")
        t = loop.lb.type
        trips = trip_count(b, loop.lb, loop.ub, loop.step)
        count = b.const(splits, t)
        index = cast(b, split, t)
        after = b.add(arith.AddiOp(index, b.const(1, t)))
        first = share_bound(b, index, trips, count)
        end = share_bound(b, after, trips, count)
        first.name_hint, end.name_hint = "slice_begin", "slice_end"
        slice_iterations(b, g, loop.lb, first, end, trips)
        store_partial(g, workspace, split)

    make_pair(kernel, "split-k", splits, partials, lambda b, _: b.const(splits))


@dataclass(frozen=True)
class SplitKPass(ModulePass):
    """Split each GEMM-like kernel's K loop `splits` ways, adding the kernel that
    sums the slices (see the module docstring)."""

    name = "split-k"

    splits: int

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.splits < 1:
            raise PassFailedException(
                f"split-k: splits must be at least 1, got {self.splits}"
            )
        for kernel in list(kernels(op)):
            if not paired_already(kernel, self.name, self.splits):
                sink_transposes(kernel)  # no transposed accumulator to move
                split_k(kernel, self.splits)


def paired_already(kernel: func.FuncOp, mode: str, splits: int) -> bool:
    """Whether `kernel` is a kernel of a `mode` pair of `splits` slots (0 for
    stream-K) already, which the pass leaves as it is; a diagnostic at a kernel
    of another pair (splitting the partials again would sum the slices of a
    slice, the reduce kernel's K loop is no GEMM's)."""
    rec = record(kernel)
    if rec is None:
        return False
    if (rec.mode, rec.splits) == (mode, splits):
        return True
    made = f"{rec.mode}{{splits={rec.splits}}}" if rec.splits else rec.mode
    asked = f"{mode}{{splits={splits}}}" if splits else mode
    raise OpDiagnostic(
        kernel,
        f"{mode}: kernel @{kernel.sym_name.data} is the {rec.role} kernel of the "
        f"pair {made} made of @{rec.kernel}; {asked} takes the original kernel: "
        "split a kernel once",
    )
