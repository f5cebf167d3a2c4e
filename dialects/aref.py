"""The aref dialect: asynchronous references between warp-specialized roles.

An aref is a ring of `depth` slots; each slot holds one value of every payload
type (one slot carries all the tiles one loop iteration loads). Indices are
logical, monotonic counters; slot = index mod depth and phase = (index div depth)
mod 2 appear only when the aref is lowered to mbarriers.

The contract, which `tawa_xdsl.simulate` enforces:
- every index is put once, gotten once and consumed once;
- `aref.put %r[i]` happens before `aref.get %r[i]`;
- `aref.consumed %r[i]` happens before `aref.put %r[i + depth]` (a put waits for
  its slot to be released; the slot's previous value is never overwritten).

`aref.put` lives in the producer region of an `aref.warp_specialize`,
`aref.get` and `aref.consumed` in its consumer region.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, IndexType, IntAttr, TensorType
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from tawa_xdsl.dialects.roles import ROLE_TRAITS, RoleRegionsOp, enclosing_role


@irdl_attr_definition
class ArefType(ParametrizedAttribute, TypeAttribute):
    """`!aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 3>`; or
    `!aref.aref<[index], depth = 2>`, a ring of tile tickets (the tiles a
    dynamically scheduled persistent kernel takes, `tile.next_tile`)."""

    name = "aref.aref"

    payload: ArrayAttr[Attribute]
    depth: IntAttr

    def __init__(self, payload: Sequence[Attribute], depth: int):
        super().__init__(ArrayAttr(payload), IntAttr(depth))

    @property
    def types(self) -> tuple[Attribute, ...]:
        return self.payload.data

    @property
    def num_slots(self) -> int:
        return self.depth.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            types = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_type
            )
            parser.parse_punctuation(",")
            parser.parse_keyword("depth")
            parser.parse_punctuation("=")
            depth = parser.parse_integer(allow_boolean=False)
        return ArrayAttr(types), IntAttr(depth)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("[")
            printer.print_list(self.types, printer.print_attribute)
            printer.print_string(f"], depth = {self.num_slots}")

    def verify(self) -> None:
        if self.num_slots < 1:
            raise VerifyException(
                f"!aref.aref depth must be >= 1, got {self.num_slots}"
            )
        if not self.types:
            raise VerifyException("!aref.aref must carry at least one value per slot")
        for t in self.types:
            if not isinstance(t, TensorType) and self.types != (IndexType(),):
                raise VerifyException(
                    "!aref.aref slots hold tiles (tensors), or one tile ticket "
                    f"(index), not {t}"
                )


def _aref_type(value: SSAValue) -> ArefType:
    assert isinstance(value.type, ArefType)
    return value.type


def _parse_ref(
    parser: Parser,
) -> tuple[SSAValue, SSAValue, list[SSAValue], dict[str, Attribute]]:
    """`%r[%i] (, %v)* attr-dict : !aref.aref<...>`: the aref, the index, the values
    (typed by the aref's payload) and the attributes."""
    aref = parser.parse_unresolved_operand()
    parser.parse_punctuation("[")
    index = parser.parse_unresolved_operand()
    parser.parse_punctuation("]")
    values = []
    while parser.parse_optional_punctuation(",") is not None:
        values.append(parser.parse_unresolved_operand())
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    pos = parser.pos
    aref_type = parser.parse_type()
    if not isinstance(aref_type, ArefType):
        parser.raise_error(f"expected an !aref.aref type, got {aref_type}", pos)
    if values and len(values) != len(aref_type.types):
        parser.raise_error(
            f"the aref carries {len(aref_type.types)} values, {len(values)} given", pos
        )
    resolved = [
        parser.resolve_operand(v, t)
        for v, t in zip(values, aref_type.types, strict=False)
    ]
    return (
        parser.resolve_operand(aref, aref_type),
        parser.resolve_operand(index, IndexType()),
        resolved,
        attrs,
    )


def _print_ref(
    printer: Printer, op: _IndexedArefOp, values: Sequence[SSAValue]
) -> None:
    printer.print_string(" ")
    printer.print_operand(op.aref)
    printer.print_string("[")
    printer.print_operand(op.index)
    printer.print_string("]")
    for v in values:
        printer.print_string(", ")
        printer.print_operand(v)
    printer.print_op_attributes(op.attributes)
    printer.print_string(" : ")
    printer.print_attribute(op.aref.type)


class _IndexedArefOp(IRDLOperation):
    """Role check shared by put/get/consumed, which each declare `aref` and
    `index` first so their operands read `%r[%i]` in every syntax."""

    ROLE: ClassVar[str]

    def _verify_role(self) -> None:
        role = enclosing_role(self, WarpSpecializeOp)
        if role != self.ROLE:
            where = f"the {role} region" if role else "no aref.warp_specialize"
            raise VerifyException(
                f"{self.name} belongs in the {self.ROLE} region of an "
                f"aref.warp_specialize, found in {where}"
            )


@irdl_op_definition
class CreateOp(IRDLOperation):
    """A fresh ring of slots; every slot starts empty."""

    name = "aref.create"

    result = result_def(ArefType)

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, aref_type: ArefType):
        super().__init__(result_types=[aref_type])


@irdl_op_definition
class PutOp(_IndexedArefOp):
    """Producer: wait until the slot of `index` is free, then fill it with `values`."""

    name = "aref.put"
    ROLE: ClassVar[str] = "producer"

    aref = operand_def(ArefType)
    index = operand_def(IndexType)
    values = var_operand_def()

    traits = traits_def(MemoryWriteEffect())

    def __init__(
        self,
        aref: SSAValue | Operation,
        index: SSAValue | Operation,
        values: Sequence[SSAValue | Operation],
    ):
        super().__init__(operands=[aref, index, values])

    def verify_(self) -> None:
        expected = _aref_type(self.aref).types
        got = tuple(v.type for v in self.values)
        if got != expected:
            raise VerifyException(
                f"aref.put values have types ({', '.join(map(str, got))}) but the aref "
                f"carries ({', '.join(map(str, expected))})"
            )
        self._verify_role()

    def print(self, printer: Printer) -> None:
        _print_ref(printer, self, self.values)

    @classmethod
    def parse(cls, parser: Parser) -> PutOp:
        aref, index, values, attrs = _parse_ref(parser)
        op = cls(aref, index, values)
        op.attributes |= attrs
        return op


@irdl_op_definition
class GetOp(_IndexedArefOp):
    """Consumer: wait until `index` was put, then read the slot's values."""

    name = "aref.get"
    ROLE: ClassVar[str] = "consumer"

    aref = operand_def(ArefType)
    index = operand_def(IndexType)
    values = var_result_def()

    # a write too: a get waits for the put and takes the slot (its
    # aref.consumed releases it), so it stays when its values are unused
    # (dce deleted it, leaving a consumed of an index never gotten)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, aref: SSAValue | Operation, index: SSAValue | Operation):
        types = _aref_type(SSAValue.get(aref)).types
        super().__init__(operands=[aref, index], result_types=[types])

    def verify_(self) -> None:
        expected = _aref_type(self.aref).types
        got = tuple(r.type for r in self.values)
        if got != expected:
            raise VerifyException(
                f"aref.get results have types ({', '.join(map(str, got))}) but the aref "
                f"carries ({', '.join(map(str, expected))})"
            )
        self._verify_role()

    def print(self, printer: Printer) -> None:
        _print_ref(printer, self, ())

    @classmethod
    def parse(cls, parser: Parser) -> GetOp:
        aref, index, _, attrs = _parse_ref(parser)
        op = cls(aref, index)
        op.attributes |= attrs
        return op


@irdl_op_definition
class ConsumedOp(_IndexedArefOp):
    """Consumer: done with `index`; its slot may now be refilled by `index + depth`."""

    name = "aref.consumed"
    ROLE: ClassVar[str] = "consumer"

    aref = operand_def(ArefType)
    index = operand_def(IndexType)

    traits = traits_def(MemoryWriteEffect())
    assembly_format = "$aref `[` $index `]` attr-dict `:` type($aref)"

    def __init__(self, aref: SSAValue | Operation, index: SSAValue | Operation):
        super().__init__(operands=[aref, index])

    def verify_(self) -> None:
        self._verify_role()


@irdl_op_definition
class WarpSpecializeOp(RoleRegionsOp):
    """A producer role (one warpgroup: TMA loads and their index math) and a consumer
    role (`consumers` warpgroups: MMAs, epilogue, stores) that talk only through arefs.
    `registers = [p, c]` are per-thread budgets that lower to `setmaxnreg`."""

    name = "aref.warp_specialize"

    traits = traits_def(*ROLE_TRAITS)


Aref = Dialect(
    "aref",
    [CreateOp, PutOp, GetOp, ConsumedOp, WarpSpecializeOp],
    [ArefType],
)
