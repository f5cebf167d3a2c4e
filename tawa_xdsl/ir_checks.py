"""Checks of IR that xDSL's verifier does not make, run wherever we verify IR.

xDSL verifies each op's own constraints but not SSA dominance, and it reports a
duplicate symbol without saying where. Our passes, interpreters and the PTX
printer assume dominance, and they give a loop a meaning only when its step is
positive, so IR that breaks either would fail later, far from its cause (an
`Erased SSA value`, a loop the GPU runs forever or 2^31 times while the CPU
levels run it zero times). Each check yields `(op, message)` for the op at
fault; `tawa_xdsl.diagnostics.verify_located` turns the first into a located
diagnostic.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.irdl.dominance import DominanceInfo
from xdsl.traits import IsolatedFromAbove, SymbolTable

from tawa_xdsl.dialects import tile

Problem = tuple[Operation, str]


def problems(root: Operation) -> Iterator[Problem]:
    """Every check below, in the order a reader would fix them."""
    yield from duplicate_symbols(root)
    yield from dominance(root)
    yield from region_results(root)


def problems_after_verify(root: Operation) -> Iterator[Problem]:
    """Checks that assume each op already passed its own verifier (typed
    operands)."""
    yield from loop_steps(root)
    yield from tile_compares(root)


# ------------------------------------------------------------------- symbols


def duplicate_symbols(root: Operation) -> Iterator[Problem]:
    """A second definition of a symbol in one symbol table (two kernels with one
    name), reported at the second."""
    for op in root.walk():
        if not op.has_trait(SymbolTable) or len(op.regions) != 1:
            continue
        first: dict[str, Operation] = {}
        for block in op.regions[0].blocks:
            for o in block.ops:
                name = o.get_attr_or_prop("sym_name")
                if not isinstance(name, StringAttr):
                    continue
                if name.data in first:
                    yield (
                        o,
                        f'redefinition of symbol "{name.data}" '
                        f"(first defined at {where(first[name.data])})",
                    )
                else:
                    first[name.data] = o


def where(op: Operation) -> str:
    """`line N` of `op`'s source, or its name where it has no location."""
    loc = op.location
    line = getattr(loc, "line", None)
    return f"line {line.data}" if line is not None else op.name


# ----------------------------------------------------------------- dominance


def dominance(root: Operation) -> Iterator[Problem]:
    """Every operand is defined where it dominates its use: earlier in the same
    block, in a block that dominates the use's block (a CFG region), or in an
    enclosing region, never across an isolated op (a `func.func`)."""
    order: dict[Operation, int] = {}
    for op in root.walk():
        for region in op.regions:
            for block in region.blocks:
                for i, o in enumerate(block.ops):
                    order[o] = i
    regions: dict[Region, DominanceInfo] = {}
    for op in root.walk():
        for i, v in enumerate(op.operands):
            if not _dominates(v, op, order, regions):
                yield op, _use_message(v, i, op, order)


def _dominates(
    v: SSAValue,
    user: Operation,
    order: dict[Operation, int],
    regions: dict[Region, DominanceInfo],
) -> bool:
    if isinstance(v, OpResult):
        def_op, def_block = v.op, v.op.parent_block()
    elif isinstance(v, BlockArgument):
        def_op, def_block = None, v.block
    else:  # xDSL's parser leaves a forward reference it never resolved
        return False
    if def_block is None or def_block.parent is None:
        return False  # the definition was erased or never inserted
    region = def_block.parent
    anc = user
    while True:
        block = anc.parent_block()
        if block is None:
            return False
        if block.parent is region:
            break
        parent = block.parent_op()
        if parent is None or parent.has_trait(IsolatedFromAbove):
            return False
        anc = parent
    if block is def_block:
        return def_op is None or order[def_op] < order[anc]
    if region not in regions:
        regions[region] = DominanceInfo(region)
    return regions[region].strictly_dominates(def_block, block)


def _use_message(
    v: SSAValue, index: int, user: Operation, order: dict[Operation, int]
) -> str:
    name = f"%{v.name_hint}" if v.name_hint else f"operand #{index}"
    if isinstance(v, OpResult) and v.op.parent_block() is not None:
        if v.op.parent_block() is user.parent_block() and order[v.op] > order[user]:
            return f"{name} is used before it is defined (at {where(v.op)})"
        return (
            f"{name} is used where its definition (at {where(v.op)}) does not "
            "dominate the use"
        )
    if isinstance(v, BlockArgument):
        return f"{name} is used outside the region that defines it"
    return f"{name} is used but not defined where this use can see it"


# ---------------------------------------------------------------- loop steps


def loop_steps(root: Operation) -> Iterator[Problem]:
    """Every `scf.for` step is positive, provably so when it is not a constant.

    A step of 0 loops forever on the GPU and is an error in Python's `range`; a
    negative one runs zero times on the CPU levels and about 2^31 / |step| times
    on the GPU (its counter wraps). Rather than give such loops a meaning, every
    level refuses them here, before anything runs: a run-time step must be
    provably positive by `positive` (write `arith.maxsi %s, %c1` to clamp one).
    """
    for op in root.walk():
        if not isinstance(op, scf.ForOp):
            continue
        step = constant_int(op.step)
        if step is not None and step <= 0:
            yield op, f"step is {step}; a loop step must be positive"
        elif step is None and not positive(op.step):
            name = f"%{op.step.name_hint}" if op.step.name_hint else "the step"
            yield (
                op,
                f"{name} is not provably positive; a loop step must be a positive "
                "constant, a grid extent (tile.num_programs), or a sum, product, "
                "ceiling quotient or maximum of such values (clamp a run-time step "
                "with `arith.maxsi %step, %c1`)",
            )


def region_results(root: Operation) -> Iterator[Problem]:
    """What an `scf.if` or `scf.while` region takes and passes on has the types
    the op says (xDSL checks `scf.for`'s yield, not these, and raises a bare
    exception for a while's block arguments): an `scf.if` with results has an
    else region, and each region yields its results' types; an `scf.while`'s
    before region takes its initial values' types and its after region its
    results', its `scf.condition` forwards its results' types and its after
    region yields its before region's. A mismatch was lowered as if the types
    agreed (a 64x32 tile where a 64x64 one was promised), crashed the PTX
    printer or was an internal error of the verifier. Run before xDSL's
    verifier."""
    for op in root.walk():
        if isinstance(op, scf.IfOp) and op.results:
            if not op.false_region.blocks:
                yield op, "scf.if has results but no else region to give them"
            for region in (op.true_region, op.false_region):
                yield from _passes_on(region, op.result_types, "the scf.if's results")
        elif isinstance(op, scf.WhileOp):
            yield from _while_types(op)


def _while_types(op: scf.WhileOp) -> Iterator[Problem]:
    """`region_results` for one `scf.while`."""
    if len(op.before_region.blocks) != 1 or len(op.after_region.blocks) != 1:
        return  # xDSL's verifier says so
    before = op.before_region.block.arg_types
    for what, takes, given, whose in (
        ("before", before, op.operand_types, "its initial values"),
        ("after", op.after_region.block.arg_types, op.result_types, "its results"),
    ):
        if tuple(takes) != tuple(given):
            yield (
                op,
                f"scf.while's {what} region takes ({_types(takes)}) where {whose} "
                f"are ({_types(given)})",
            )
    yield from _passes_on(op.before_region, op.result_types, "the scf.while's results")
    yield from _passes_on(op.after_region, before, "the before region's arguments")


def _passes_on(
    region: Region, expected: Sequence[Attribute], whose: str
) -> Iterator[Problem]:
    """The terminator of `region`'s block, if what it passes on is not of the
    `expected` types (an `scf.condition` passes on all but its flag)."""
    if len(region.blocks) != 1 or (end := region.block.last_op) is None:
        return
    given = (
        end.operand_types[1:] if isinstance(end, scf.ConditionOp) else end.operand_types
    )
    if tuple(given) != tuple(expected):
        yield (
            end,
            f"{end.name} passes on ({_types(given)}) where {whose} are "
            f"({_types(expected)})",
        )


def _types(types: Sequence[Attribute]) -> str:
    """Types as a message lists them."""
    return ", ".join(map(str, types))


SCALAR_ONLY: dict[type[Operation], str] = {
    arith.CmpiOp: "compare integer tiles with tile.cmpi",
    arith.CmpfOp: "compare float tiles with tile.cmpf",
    arith.SelectOp: "select between tiles with tile.select",
}
"""The arith ops tawa-xdsl gives a meaning on scalars only (xDSL parses them
on tensors too), with what to write for tiles."""


def tile_compares(root: Operation) -> Iterator[Problem]:
    """No `arith.cmpi`, `cmpf` or `select` on tensors: the interpreter raised
    a TypeError on them and the lowering called the compared tile a shared one
    it "cannot read here"; `tile.cmpi`, `tile.cmpf` and `tile.select` are the
    tile forms."""
    for op in root.walk():
        if (hint := SCALAR_ONLY.get(type(op))) and any(
            isinstance(v.type, TensorType) for v in op.operands
        ):
            yield op, f"{op.name} takes scalars here; {hint}"


def constant_int(v: SSAValue) -> int | None:
    """The value of an integer `arith.constant`, else None."""
    if isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp):
        value = v.op.value
        if isinstance(value, IntegerAttr):
            return value.value.data
    return None


def positive(v: SSAValue, depth: int = 0) -> bool:
    """Whether `v` is > 0 in every execution, by a few rules that cover the loops
    our passes build: a grid extent is at least 1 wherever a program runs."""
    if depth > 16 or not isinstance(v, OpResult):
        return False
    op = v.op
    match op:
        case arith.ConstantOp():
            value = constant_int(v)
            return value is not None and value > 0
        case tile.NumProgramsOp():
            return True
        case (
            arith.AddiOp() | arith.MuliOp() | arith.CeilDivUIOp() | arith.CeilDivSIOp()
        ):
            return all(positive(x, depth + 1) for x in op.operands)
        case arith.MaxSIOp():
            return any(positive(x, depth + 1) for x in op.operands)
    return False
