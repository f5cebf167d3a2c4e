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

from xdsl.dialects.builtin import I64, IntegerAttr
from xdsl.ir import Block, Operation, Region
from xdsl.irdl import IRDLOperation, opt_prop_def, prop_def, region_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException

REGISTERS_PER_SM = 65536
THREADS_PER_WARPGROUP = 128
MIN_REGS, MAX_REGS = 24, 256

Role = Literal["producer", "consumer"]


def check_register_budget(
    op_name: str, num_consumers: int, producer_regs: int, consumer_regs: int
) -> None:
    """The `setmaxnreg` rules: multiples of 8 in [24, 256], total within the SM's file."""
    for role, regs in (("producer", producer_regs), ("consumer", consumer_regs)):
        if regs % 8 or not MIN_REGS <= regs <= MAX_REGS:
            raise VerifyException(
                f"{op_name}: {role} register budget {regs} must be a multiple of 8 in "
                f"[{MIN_REGS}, {MAX_REGS}]"
            )
    total = (producer_regs + num_consumers * consumer_regs) * THREADS_PER_WARPGROUP
    if total > REGISTERS_PER_SM:
        raise VerifyException(
            f"{op_name}: budgets {producer_regs} + {num_consumers} x {consumer_regs} "
            f"registers per thread need {total} registers; an SM has {REGISTERS_PER_SM}"
        )


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
