"""Role regions: the shape shared by `aref.warp_specialize` and
`nvgpu_async.role_dispatch`.

Both ops hold one producer region (one warpgroup) and one consumer region (run by
`num_consumers` warpgroups together), plus optional per-role register budgets that
become `setmaxnreg`. Keeping the syntax and the budget checks here means the two
levels agree on what a legal configuration is.

Syntax: `OP consumers = 2 registers = [40, 232] producer { ... } consumer { ... }`
(the `registers` clause is optional).
"""

from __future__ import annotations

from typing import Literal

from xdsl.dialects import func
from xdsl.dialects.builtin import I64, IntegerAttr
from xdsl.ir import Block, Operation, Region
from xdsl.irdl import IRDLOperation, opt_prop_def, prop_def, region_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException

from tawa_xdsl.target import (
    MAX_REGISTERS_PER_THREAD,
    MAX_REGS,
    MIN_REGS,
    REGISTERS_PER_SM,
    THREADS_PER_WARPGROUP,
)

Role = Literal["producer", "consumer"]


def entry_register_cap(threads: int) -> int:
    """Registers per thread ptxas gives a kernel launched with `threads` threads
    (`.maxntid threads` and `.minnctapersm 1`: the SM's file shared out in steps
    of 8, at most 255). These are all the registers the block ever holds:
    `setmaxnreg` only moves them between its warpgroups, through the block's pool."""
    return min(MAX_REGISTERS_PER_THREAD, REGISTERS_PER_SM // threads // 8 * 8)


def is_register_budget(regs: int) -> bool:
    """What `setmaxnreg` accepts: a multiple of 8 in [24, 256]."""
    return regs % 8 == 0 and MIN_REGS <= regs <= MAX_REGS


def register_file_problem(
    num_consumers: int, producer_regs: int, consumer_regs: int
) -> str | None:
    """Why per-thread budgets (one producer, `num_consumers` consumer warpgroups)
    do not fit, or None. They must fit the SM's register file and, tighter, the
    registers the block holds from launch (`entry_register_cap` per thread): a
    `setmaxnreg.inc` that the block's pool cannot serve waits forever."""
    total = (producer_regs + num_consumers * consumer_regs) * THREADS_PER_WARPGROUP
    need = (
        f"budgets {producer_regs} + {num_consumers} x {consumer_regs} registers per "
        f"thread need {total} registers"
    )
    if total > REGISTERS_PER_SM:
        return f"{need}; an SM has {REGISTERS_PER_SM}"
    threads = (1 + num_consumers) * THREADS_PER_WARPGROUP
    cap = entry_register_cap(threads)
    if total > cap * threads:
        return (
            f"{need}; the block's {threads} threads start with {cap} each "
            f"({cap * threads}), and a setmaxnreg.inc the block's pool cannot serve "
            "waits forever"
        )
    return None


def check_budget_range(op_name: str, role: str, regs: int) -> None:
    """One role's budget is one `setmaxnreg` accepts (`is_register_budget`)."""
    if not is_register_budget(regs):
        raise VerifyException(
            f"{op_name}: {role} register budget {regs} must be a multiple of 8 in "
            f"[{MIN_REGS}, {MAX_REGS}]"
        )


def check_register_budget(
    op_name: str, num_consumers: int, producer_regs: int, consumer_regs: int
) -> None:
    """The `setmaxnreg` rules: multiples of 8 in [24, 256], and a total the
    block can hold (`register_file_problem`)."""
    check_budget_range(op_name, "producer", producer_regs)
    check_budget_range(op_name, "consumer", consumer_regs)
    problem = register_file_problem(num_consumers, producer_regs, consumer_regs)
    if problem is not None:
        raise VerifyException(f"{op_name}: {problem}")


def _before(op: Operation) -> list[Operation]:
    """The ops before `op` in its block."""
    before: list[Operation] = []
    prev = op.prev_op
    while prev is not None:
        before.append(prev)
        prev = prev.prev_op
    return before


class RoleRegionsOp(IRDLOperation):
    """Base of the ops that split a thread block into a producer and consumers."""

    num_consumers = prop_def(IntegerAttr[I64])
    producer_regs = opt_prop_def(IntegerAttr[I64])
    consumer_regs = opt_prop_def(IntegerAttr[I64])
    producer = region_def("single_block")
    consumer = region_def("single_block")

    def __init__(
        self,
        producer: Region,
        consumer: Region,
        num_consumers: int = 1,
        registers: tuple[int, int] | None = None,
    ):
        props: dict[str, IntegerAttr] = {
            "num_consumers": IntegerAttr(num_consumers, 64)
        }
        if registers is not None:
            props["producer_regs"] = IntegerAttr(registers[0], 64)
            props["consumer_regs"] = IntegerAttr(registers[1], 64)
        super().__init__(properties=props, regions=[producer, consumer])

    @property
    def registers(self) -> tuple[int, int] | None:
        if self.producer_regs is None or self.consumer_regs is None:
            return None
        return self.producer_regs.value.data, self.consumer_regs.value.data

    @property
    def producer_block(self) -> Block:
        return self.producer.block

    @property
    def consumer_block(self) -> Block:
        return self.consumer.block

    def verify_(self) -> None:
        n = self.num_consumers.value.data
        if not 1 <= n <= 3:
            raise VerifyException(
                f"{self.name}: {n} consumer warpgroups; 1 to 3 fit next to a producer"
            )
        if (self.producer_regs is None) != (self.consumer_regs is None):
            raise VerifyException(f"{self.name}: give both register budgets or neither")
        if self.registers is not None:
            check_register_budget(self.name, n, *self.registers)
        for region in (self.producer, self.consumer):
            if region.block.args:
                raise VerifyException(f"{self.name}: role regions take no arguments")
        self._verify_once_per_kernel()

    def _verify_once_per_kernel(self) -> None:
        """A thread block splits into its roles once, for the whole kernel: the
        lowering plans one producer and one set of consumers per kernel (a
        second or nested split crashed it)."""
        parent = self.parent_op()
        if not isinstance(parent, func.FuncOp):
            where = parent.name if parent is not None else "no function"
            raise VerifyException(
                f"{self.name} must be directly in a func.func (a kernel splits "
                f"into roles once, for its whole body), found in {where}"
            )
        if any(isinstance(o, RoleRegionsOp) for o in _before(self)):
            raise VerifyException(
                f"{self.name}: kernel @{parent.sym_name.data} splits into roles "
                "already; a kernel has one producer and one set of consumers"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" consumers = {self.num_consumers.value.data}")
        if self.registers is not None:
            printer.print_string(" registers = [{}, {}]".format(*self.registers))
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" producer ")
        printer.print_region(self.producer, print_empty_block=False)
        printer.print_string(" consumer ")
        printer.print_region(self.consumer, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser):
        parser.parse_keyword("consumers")
        parser.parse_punctuation("=")
        num_consumers = parser.parse_integer(allow_boolean=False, allow_negative=False)
        registers = None
        if parser.parse_optional_keyword("registers") is not None:
            parser.parse_punctuation("=")
            regs = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_integer
            )
            if len(regs) != 2:
                parser.raise_error(
                    "expected two register budgets: [producer, consumer]"
                )
            registers = (regs[0], regs[1])
        attrs = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_keyword("producer")
        producer = parser.parse_region()
        parser.parse_keyword("consumer")
        consumer = parser.parse_region()
        for region in (producer, consumer):
            if not region.blocks:
                region.add_block(Block())
        op = cls(producer, consumer, num_consumers, registers)
        if attrs is not None:
            op.attributes |= attrs.data
        return op


ROLE_TRAITS = (NoTerminator(),)


def enclosing_role(op: Operation, role_op_type: type[RoleRegionsOp]) -> Role | None:
    """Which region of the nearest enclosing `role_op_type` holds `op`, if any."""
    child: Operation = op
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, role_op_type):
            return (
                "producer" if child.parent_region() is parent.producer else "consumer"
            )
        child, parent = parent, parent.parent_op()
    return None
