"""Mutation tests of the thread level: break one instruction of a distributed
kernel the way a wrong lowering would (a shuffle reading the wrong lane, a store
guarded by the wrong predicate or writing at the wrong address, a guard
predicate dropped) and the thread simulator must catch it on the CPU, either as
a hazard (an access outside the arrays, a misaligned one, two lanes racing, a
barrier protocol broken) or as a result that differs from the reference.

The register-store kernel of `property/test_register_stores.py` (a distinct
value per element, stored through the 16-byte, pair and single paths) runs a
set of tile positions that takes every path and crosses every edge; attention
reduces its row maxima and sums with quad shuffles; a wrong lane in the
running max only shows where scores are sharp enough for exp2 to overflow
(softmax otherwise cancels whatever maximum it subtracts), so attention also
runs on scores rising and falling steeply along the keys. Mutations the GPU
would not notice either pass: the leader guard of `mbarrier.init` or
`fence.mbarrier_init` dropped (every thread writing the same initial state
before the block barrier)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, UnitAttr, i32
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

import tawa_xdsl
from tawa_xdsl.dialects import ptx
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.interp.scheduler import SimulationError
from tawa_xdsl.kernel import find_kernel

from .conftest import EXAMPLES
from .property.test_register_stores import Case, check, store_module
from .test_thread_sim_examples import RUNS, thread_level_example
from .thread_level import assert_close, simulate_output

Mutation = Callable[[Operation], None]


def lane_mask(mask: Callable[[int], int]) -> Mutation:
    def mutate(op: Operation) -> None:
        old = op.lane_mask.value.data
        op.properties["lane_mask"] = IntegerAttr(mask(old), 32)

    return mutate


def guards(op: Operation) -> list[int]:
    """The guard element each instruction of a store reads."""
    n = len(op.instruction_offsets())
    return [ptx.pick(op.pred, op.pred_map, k) for k in range(n)]


def rotated_guard(op: Operation) -> None:
    """Instruction k takes the guard element of the next instruction (or, where
    they share one, the next element of the guard bundle)."""
    picks = guards(op)
    if len(set(picks)) > 1:
        picks = picks[1:] + picks[:1]
    else:
        picks = [(p + 1) % ptx.width(op.pred) for p in picks]
    op.properties["pred_map"] = DenseArrayBase.from_list(i32, picks)


def negate_guard(op: Operation) -> None:
    if op.negated:
        del op.properties["negated"]
    else:
        op.properties["negated"] = UnitAttr()


def shifted_address(op: Operation) -> None:
    """Every instruction one element further."""
    element = 2 if ptx.register_class(op.value) == "b16" else 4
    op.properties["offset"] = IntegerAttr(op.offset.value.data + element, 64)


def dropped_guard(op: Operation) -> None:
    """The same instruction without its guard predicate."""
    properties = {
        k: v for k, v in op.properties.items() if k not in ("pred_map", "negated")
    }
    segments = properties.get(ptx.SEGMENTS)
    if segments is not None:
        sizes = list(segments.get_values())
        properties[ptx.SEGMENTS] = DenseArrayBase.from_list(i32, [*sizes[:-1], 0])
    new = type(op).create(
        operands=list(op.operands)[:-1],
        result_types=[r.type for r in op.results],
        properties=properties,
        attributes=dict(op.attributes),
    )
    op.parent_block().insert_op_before(new, op)
    for old, result in zip(op.results, new.results, strict=True):
        old.replace_all_uses_with(result)
    op.detach()
    op.erase()


def targets(
    module: ModuleOp,
    kernel: str,
    kind: type[Operation],
    where: Callable[[Operation], bool] = lambda op: True,
) -> list[Operation]:
    """The ops of `kind` that `where` accepts in `kernel`, in program order."""
    return [
        o
        for o in find_kernel(module, kernel).walk()
        if isinstance(o, kind) and where(o)
    ]


@dataclass(frozen=True)
class Mutant:
    what: str
    kind: type[Operation]
    index: int  # among the ops of `kind` that `where` accepts, in program order
    mutate: Mutation
    where: Callable[[Operation], bool] = lambda op: True
    kernel: str = "store"
    together: bool = False
    """Mutate every target shaped like target `index` (the same guard width,
    instruction count and offset): a register store writes a few column groups
    of one row per instruction, so one of them taught a wrong guard or address
    is often overwritten or equivalent; the same slip in every such store is
    the bug a pattern would make."""

    def apply(self, module: ModuleOp) -> ModuleOp:
        clone = module.clone()
        ops = targets(clone, self.kernel, self.kind, self.where)
        if self.together:
            shape = _store_shape(ops[self.index])
            for op in ops:
                if _store_shape(op) == shape:
                    self.mutate(op)
        else:
            self.mutate(ops[self.index])
        clone.verify()
        return clone

    def __str__(self) -> str:
        return f"{self.what} #{self.index}"


def _store_shape(op: Operation) -> tuple:
    return (
        ptx.width(op.pred) if op.pred is not None else 0,
        len(op.instruction_offsets()),
        op.offset.value.data,
        ptx.register_class(op.value),
    )


def caught(run: Callable[[], object]) -> str | None:
    """How the simulator caught a mutant (None: it computed the reference)."""
    try:
        run()
    except SimulationError as e:
        return f"{type(e).__name__}: {str(e)[:200]}"
    except AssertionError as e:
        return f"wrong result: {str(e)[:200]}"
    return None


# ----------------------------------------------------------- register stores

STORE_CASES = [  # every path and edge of a 128 x 128 bf16 tile, two warpgroups
    Case(2, 128, 128, 16, (300, 256), 256, (64, 128)),  # 16-byte vectors
    Case(2, 128, 128, 16, (150, 256), 256, (64, 128)),  # vectors past the last row
    Case(2, 128, 128, 16, (150, 249), 256, (64, 128)),  # pairs past both ends
    Case(2, 128, 128, 16, (150, 256), 256, (64, 3)),  # singles (odd column)
    Case(2, 128, 128, 16, (150, 90), 256, (64, 3)),  # singles past the last column
    Case(2, 128, 128, 16, (300, 256), 256, (-8, -8)),  # before the start
]
F32_CASES = [  # pairs and singles of a 64 x 64 f32 tile, one warpgroup
    Case(1, 64, 64, 32, (100, 60), 64, (50, 8)),
    Case(1, 64, 64, 32, (100, 61), 64, (50, 8)),  # a pair half inside
    Case(1, 64, 64, 32, (100, 60), 64, (50, 5)),
    Case(1, 64, 64, 32, (100, 64), 64, (-4, -4)),
]


def global_store(op: Operation) -> bool:
    return op.space.data == "global" and op.pred is not None


def store_mutants(module: ModuleOp) -> list[Mutant]:
    stores = targets(module, "store", ptx.StoreOp, global_store)
    shuffles = targets(module, "store", ptx.ShflOp)
    mutants = [
        Mutant(what, ptx.ShflOp, i, lane_mask(m))
        for i in range(len(shuffles))
        for what, m in (
            ("shuffle lane swapped", lambda x: x ^ 3),
            ("shuffle from another quad", lambda x: 4),
        )
    ]
    shapes: dict[tuple, int] = {}
    for i, store in enumerate(stores):
        shapes.setdefault(_store_shape(store), i)
    for i in shapes.values():  # each kind of store, every one of its kind at once
        if ptx.width(stores[i].pred) > 1:  # guards to confuse
            mutants.append(
                Mutant(
                    "store guard of another element",
                    ptx.StoreOp,
                    i,
                    rotated_guard,
                    global_store,
                    together=True,
                )
            )
        mutants.append(
            Mutant(
                "store address one element off",
                ptx.StoreOp,
                i,
                shifted_address,
                global_store,
                together=True,
            )
        )
    for i in range(len(stores)):  # each store on its own
        mutants += [
            Mutant("store guard negated", ptx.StoreOp, i, negate_guard, global_store),
            Mutant("store guard dropped", ptx.StoreOp, i, dropped_guard, global_store),
        ]
    arrives = targets(
        module, "store", ptx.MBarrierArriveOp, lambda o: o.pred is not None
    )
    mutants += [
        Mutant(
            "arrive guard dropped",
            ptx.MBarrierArriveOp,
            i,
            dropped_guard,
            lambda o: o.pred is not None,
        )
        for i in range(len(arrives))
    ]
    return mutants


def catches(cases: list[Case], mutant: Mutant) -> str | None:
    module = mutant.apply(store_module(cases[0]))
    for case in cases:
        if (how := caught(lambda case=case: check(case, module))) is not None:
            return how
    return None


def one_of_each_kind(mutants: list[Mutant]) -> list[Mutant]:
    return list({m.what: m for m in reversed(mutants)}.values())


@pytest.mark.parametrize(
    "cases, sample",
    [
        pytest.param(STORE_CASES, True, id="bf16-one-of-each"),
        pytest.param(STORE_CASES, False, id="bf16-all", marks=pytest.mark.exhaustive),
        pytest.param(F32_CASES, False, id="f32-all", marks=pytest.mark.slow),
    ],
)
def test_every_broken_register_store_is_caught(cases, sample) -> None:
    for case in cases:  # the kernel itself is right in every case
        check(case)
    mutants = store_mutants(store_module(cases[0]))
    assert len(mutants) >= 10
    if sample:
        mutants = one_of_each_kind(mutants)
    missed = [str(m) for m in mutants if catches(cases, m) is None]
    assert not missed, f"not caught: {missed}"


def test_benign_guard_drops_are_not_flagged() -> None:
    """Every thread initialising the same barriers before the block barrier, or
    fencing the init, is what one thread does, twice over: not a bug."""
    module = store_module(STORE_CASES[0])
    for kind in (ptx.MBarrierInitOp, ptx.FenceOp):
        guarded = targets(module, "store", kind, lambda o: o.pred is not None)
        for i in range(len(guarded)):
            mutant = Mutant(
                "guard dropped", kind, i, dropped_guard, lambda o: o.pred is not None
            )
            check(STORE_CASES[0], mutant.apply(module))


# --------------------------------------------------------------- attention


def reduction(opcode: str) -> Callable[[Operation], bool]:
    """Shuffles feeding a reduction step with `opcode`."""
    return lambda op: any(
        isinstance(u.operation, ptx.AluOp) and u.operation.opcode.data == opcode
        for u in op.result.uses
    )


@pytest.fixture(scope="module")
def attention() -> ModuleOp:
    return thread_level_example("attention_d64", "tawa-hopper-pipeline")


def attention_mutants(module: ModuleOp, opcode: str) -> list[Mutant]:
    where = reduction(opcode)
    n = len(targets(module, "attention_d64", ptx.ShflOp, where))
    return [
        Mutant(
            f"{opcode} shuffle {what}",
            ptx.ShflOp,
            i,
            lane_mask(m),
            where,
            "attention_d64",
        )
        for i in range(n)
        for what, m in (
            ("lane swapped", lambda x: x ^ 3),
            ("from another quad", lambda x: 4),
        )
    ]


def attention_inputs(ramp: float, keys: int) -> list:
    """Q, K, V, O, scale; with a `ramp`, scores grow (or fall) along the keys
    by far more than f32's exponent range between neighbours, so a row max that
    misses a lane lets exp2 overflow: the running max is no longer a mere
    shift that softmax cancels."""
    rng = np.random.default_rng(5)
    q, out = rng.standard_normal((2, 200, 64)), np.full((2, 200, 64), np.nan)
    k, v = (rng.standard_normal((2, keys, 64)) for _ in range(2))
    if ramp:
        q = np.abs(q) + 0.5
        k = k + ramp * np.arange(keys)[None, :, None]
    return [*(x.astype(bfloat16) for x in (q, k, v, out)), 1.0 if ramp else 0.125]


INPUTS = [(ramp, keys) for keys in (384, 100) for ramp in (-2.0, 2.0, 0.0)]
"""Scores falling, rising, plain; three key blocks of 128 (the tuned kernel's
two-stage loop runs, between its first and last block) and one (only the loop
for a kernel too short to pipeline runs)."""


@cache
def attention_reference(ramp: float, keys: int) -> tuple[list, np.ndarray]:
    """The inputs and what the interpreter computes from them."""
    args = attention_inputs(ramp, keys)
    source = tawa_xdsl.parse(EXAMPLES / RUNS["attention_d64"].file)
    tawa_xdsl.interpret(source, "attention_d64", *args, grid=RUNS["attention_d64"].grid)
    return args, args[3].copy()


def attention_check(module: ModuleOp, ramp: float, keys: int) -> None:
    args, expected = attention_reference(ramp, keys)
    grid = RUNS["attention_d64"].grid
    assert_close(simulate_output(module, "attention_d64", args, 3, grid), expected)


def attention_catches(module: ModuleOp, mutant: Mutant) -> str | None:
    """Whether one of the `INPUTS` shows it."""
    broken = mutant.apply(module)
    for ramp, keys in INPUTS:
        if (
            how := caught(lambda i=(ramp, keys): attention_check(broken, *i))
        ) is not None:
            return how
    return None


@pytest.mark.parametrize(
    "opcode, first_only",
    [
        ("add.f32", True),
        ("max.NaN.f32", True),
        pytest.param("add.f32", False, marks=pytest.mark.exhaustive),
        pytest.param("max.NaN.f32", False, marks=pytest.mark.exhaustive),
    ],
)
def test_a_wrong_lane_in_attention_row_reductions_is_caught(
    attention, opcode, first_only
) -> None:
    """Row sums and row maxima reduce over a quad with two shuffles each; each
    one, taught a wrong lane, is caught (the fast tier tries the first)."""
    mutants = attention_mutants(attention, opcode)
    assert mutants
    if first_only:
        mutants = mutants[:1]
    else:
        for inputs in INPUTS:  # the kernel itself is right on every input
            attention_check(attention, *inputs)
    missed = [str(m) for m in mutants if attention_catches(attention, m) is None]
    assert not missed, f"not caught: {missed}"


# -------------------------------------------------------- register allocation


def overlapping_pair(module: ModuleOp) -> tuple[SSAValue, SSAValue]:
    """Two single b32 values of one block where the second is defined while the
    first is still to be read: sharing registers, they would clash."""
    ops = list(find_kernel(module, "store").walk())
    position = {op: i for i, op in enumerate(ops)}

    def last_use(v: SSAValue) -> int:
        return max(
            position[
                u.operation.parent_op() if u.operation not in position else u.operation
            ]
            for u in v.uses
        )

    for a_op in ops:
        for a in a_op.results:
            if not (isinstance(a.type, ptx.RegType) and a.type.register_class == "b32"):
                continue
            if a.type.size != 1 or not a.uses:
                continue
            end = last_use(a)
            for b_op in ops[position[a_op] + 1 : end]:
                if b_op.parent_block() is not a_op.parent_block():
                    continue
                for b in b_op.results:
                    t = b.type
                    if (
                        isinstance(t, ptx.RegType)
                        and t.register_class == "b32"
                        and t.size == 1
                    ):
                        return a, b
    raise AssertionError("no overlapping pair")


def test_registers_shared_by_live_values_are_caught() -> None:
    """Give a value the registers of another that is still to be read (as an
    allocator ignoring a live range would): the simulator finds the read of the
    overwritten register."""
    case = STORE_CASES[0]
    module = store_module(case).clone()
    tawa_xdsl.apply(module, "ptx-allocate")
    check(case, module)
    live, clobber = overlapping_pair(module)
    Rewriter.replace_value_with_new_type(clobber, live.type)
    how = caught(lambda: check(case, module))
    assert how is not None and how.startswith("Hazard") and " reads %r" in how, how
