"""The aref simulator: executes aref-level IR with each role as a coroutine.

It is the reference interpreter plus the aref protocol. Every `aref.put`,
`aref.get` and `aref.consumed` is a point where the scheduler may switch roles, so
a seed chooses one interleaving. Slots hold at most one index at a time:

- `put(i)` waits until slot i mod depth is free for index i (index i - depth was
  consumed, or i < depth);
- `get(i)` waits until index i is in its slot;
- `consumed(i)` releases the slot; it must follow `get(i)`.

Violations raise `ProtocolViolation` at once (an index put or gotten twice, a
release of a slot that was not gotten) or, when no role can go on, `Deadlock`,
naming each role's op and what it waits for: a get of an index that is never put,
a put that would overwrite a slot whose index is never consumed. When the roles
finish, an index left put-but-not-gotten or gotten-but-not-consumed is a violation.

On tile-level IR (no arefs) it computes exactly what `interpret` computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation

from tawa_xdsl.dialects import aref
from tawa_xdsl.interp.reference import make_interpreter
from tawa_xdsl.interp.scheduler import RoleScheduler, SimulationError, role_body
from tawa_xdsl.kernel import cluster_size, find_kernel, program_ids


class ProtocolViolation(SimulationError):
    """An aref op broke the put / get / consumed contract."""


def describe(op: Operation, index: int) -> str:
    """`aref.put %ring0[3] (file:line)`: how an aref op at an index reads in messages."""
    name = op.operands[0].name_hint or "aref"
    where = ""
    loc = op.location
    if hasattr(loc, "filename"):
        where = f" ({loc.filename.data}:{loc.line.data})"
    return f"{op.name} %{name}[{index}]{where}"


@dataclass(eq=False)
class Slot:
    next_index: int
    holding: int | None = None
    state: str = "free"  # free -> full -> gotten -> free
    values: tuple[Any, ...] = ()


@dataclass(eq=False)
class ArefState:
    """The run-time state of one `aref.create`: its slots and history."""

    name: str
    depth: int
    slots: list[Slot] = field(init=False)
    put_done: set[int] = field(default_factory=set)
    got_done: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.slots = [Slot(next_index=s) for s in range(self.depth)]

    def slot(self, index: int) -> Slot:
        return self.slots[index % self.depth]

    def leftovers(self) -> list[str]:
        problems = []
        for s in self.slots:
            if s.state == "full":
                problems.append(
                    f"index {s.holding} of %{self.name} was put but never gotten"
                )
            elif s.state == "gotten":
                problems.append(
                    f"index {s.holding} of %{self.name} was gotten but never consumed"
                )
        return problems


@register_impls
class ArefFunctions(InterpreterFunctions):
    """The aref ops over `ArefState`s, scheduled by a `RoleScheduler`."""

    def __init__(self, scheduler: RoleScheduler):
        self.scheduler = scheduler
        self.live: list[ArefState] = []

    @impl(aref.CreateOp)
    def run_create(
        self, interpreter: Interpreter, op: aref.CreateOp, args: PythonValues
    ) -> PythonValues:
        state = ArefState(op.result.name_hint or "aref", op.result.type.num_slots)
        self.live.append(state)
        return (state,)

    @impl(aref.PutOp)
    def run_put(
        self, interpreter: Interpreter, op: aref.PutOp, args: PythonValues
    ) -> PythonValues:
        state, index, *values = args
        if index in state.put_done:
            raise ProtocolViolation(
                f"{describe(op, index)}: index {index} is put twice"
            )
        slot = state.slot(index)

        def waiting() -> str:
            if slot.state != "free":
                return (
                    f"{describe(op, index)}: it would overwrite slot {index % state.depth}, "
                    f"which holds index {slot.holding} ({slot.state}, never consumed)"
                )
            return (
                f"{describe(op, index)}: slot {index % state.depth} must first take "
                f"index {slot.next_index}"
            )

        self.scheduler.sync(
            lambda: slot.state == "free" and slot.next_index == index, waiting
        )
        slot.state, slot.holding, slot.values = "full", index, tuple(values)
        state.put_done.add(index)
        return ()

    @impl(aref.GetOp)
    def run_get(
        self, interpreter: Interpreter, op: aref.GetOp, args: PythonValues
    ) -> PythonValues:
        state, index = args
        if index in state.got_done:
            raise ProtocolViolation(
                f"{describe(op, index)}: index {index} is gotten twice"
            )
        slot = state.slot(index)

        def waiting() -> str:
            if self.scheduler.finished("producer"):
                return f"{describe(op, index)}: index {index} is never put"
            return f"{describe(op, index)}: index {index} has not been put"

        self.scheduler.sync(
            lambda: slot.state == "full" and slot.holding == index, waiting
        )
        slot.state = "gotten"
        state.got_done.add(index)
        return slot.values

    @impl(aref.ConsumedOp)
    def run_consumed(
        self, interpreter: Interpreter, op: aref.ConsumedOp, args: PythonValues
    ) -> PythonValues:
        state, index = args
        slot = state.slot(index)
        if slot.state != "gotten" or slot.holding != index:
            why = (
                "was already consumed"
                if index in state.got_done
                else "was never gotten"
            )
            raise ProtocolViolation(f"{describe(op, index)}: index {index} {why}")
        slot.state, slot.holding, slot.values = "free", None, ()
        slot.next_index = index + state.depth
        self.scheduler.sync(lambda: True, lambda: describe(op, index))
        return ()

    @impl(aref.WarpSpecializeOp)
    def run_warp_specialize(
        self, interpreter: Interpreter, op: aref.WarpSpecializeOp, args: PythonValues
    ) -> PythonValues:
        self.scheduler.run(
            {
                "producer": role_body(interpreter, op.producer),
                "consumer": role_body(interpreter, op.consumer),
            }
        )
        problems = [p for state in self.live for p in state.leftovers()]
        if problems:
            raise ProtocolViolation("; ".join(problems))
        return ()


def run_aref_level(
    module: ModuleOp,
    kernel_name: str,
    checked: Sequence[Any],
    grid3: tuple[int, int, int],
    seed: int,
) -> None:
    """Run a tile- or aref-level kernel for every program id; see the module docstring."""
    interpreter, tile_functions = make_interpreter(module)
    arefs = ArefFunctions(RoleScheduler(seed))
    interpreter.register_implementations(arefs)
    tile_functions.grid = grid3
    tile_functions.cluster = cluster_size(find_kernel(module, kernel_name))
    for pid in program_ids(grid3):
        tile_functions.program_id = pid
        arefs.live = []
        try:
            interpreter.call_op(kernel_name, checked)
        except SimulationError as e:
            # xDSL's interpreter attaches a dump of the module per nesting level.
            raise type(e)(f"@{kernel_name} program {pid}: {e.args[0]}") from None
    tile_functions.tickets.check_reset()
