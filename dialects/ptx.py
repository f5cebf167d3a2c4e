"""The ptx dialect: what one thread of a Hopper kernel executes.

This is the level below `nvgpu_async`: no value has a tensor type any more. A
value is a *bundle* of virtual registers of one PTX register class, held by one
thread: `!ptx.reg<f32 x 64>` is the 64 accumulator registers a consumer thread
holds of a tile, `!ptx.reg<b32>` a single 32-bit register. An op applies its
instruction to every element of its result bundle and prints one PTX line per
element, so a distributed tile costs one op, not one per register, and the
interpreter runs an op on every lane and every element at once.

Operands are read element by element through *maps*: element `k` of the result
reads element `map[k]` of each operand. An empty map means the identity (or
element 0 of a single-register operand, a broadcast scalar). A broadcast of a
row tile over an accumulator tile is therefore no instruction at all, only a map
on the consumer.

Immediates are `ptx.imm` values of type `!ptx.imm<cls>`: they print as literals
in the instruction that reads them and are never allocated.

Registers are virtual (ptxas allocates the physical ones). `ptx-allocate`
(`lowering/ptx_allocate.py`) names them, xDSL-style, in the types: an allocated
bundle `!ptx.reg<f32 x 64 at 12>` is `%f12 .. %f75`. After allocation, structured
control flow (`ptx.for`, `ptx.if`) is lowered to labels and branches, and every
op prints itself (`print_ptx`).

Predication: most instructions take an optional predicate operand (with its own
map); `negated` prints `@!%p`.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterator, Mapping, Sequence
from typing import ClassVar, Protocol, Self

from xdsl.dialects.builtin import (
    I32,
    I64,
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    StringAttr,
    UnitAttr,
    f32,
    i32,
    i64,
)
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.operations import VariadicDef
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsTerminator,
    MemoryReadEffect,
    MemoryWriteEffect,
    Pure,
    SingleBlockImplicitTerminator,
)
from xdsl.utils.exceptions import VerifyException

# ----------------------------------------------------------------------- types

REGISTER_CLASSES: dict[str, tuple[str, str]] = {
    "pred": ("%p", ".pred"),
    "b16": ("%h", ".b16"),
    "b32": ("%r", ".b32"),
    "b64": ("%rd", ".b64"),
    "f32": ("%f", ".f32"),
}
"""Register class -> (name prefix, `.reg` declaration type)."""

UNALLOCATED = -1


@irdl_attr_definition
class RegType(ParametrizedAttribute, TypeAttribute):
    """A bundle of `count` virtual registers of one class, held by one thread.

    `!ptx.reg<f32>`, `!ptx.reg<b32 x 16>`; allocated: `!ptx.reg<f32 x 64 at 12>`
    (registers %f12 .. %f75)."""

    name = "ptx.reg"

    cls: StringAttr
    count: IntAttr
    first: IntAttr

    def __init__(self, cls: str, count: int = 1, first: int = UNALLOCATED):
        super().__init__(StringAttr(cls), IntAttr(count), IntAttr(first))

    @property
    def register_class(self) -> str:
        return self.cls.data

    @property
    def size(self) -> int:
        return self.count.data

    @property
    def is_allocated(self) -> bool:
        return self.first.data != UNALLOCATED

    def unallocated(self) -> RegType:
        return RegType(self.cls.data, self.count.data)

    def allocated(self, first: int) -> RegType:
        return RegType(self.cls.data, self.count.data, first)

    def register(self, k: int) -> str:
        """The PTX name of element `k` (an allocated bundle only)."""
        if not self.is_allocated:
            raise ValueError(f"{self} is not allocated")
        return f"{REGISTER_CLASSES[self.cls.data][0]}{self.first.data + k}"

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            reg_class = parser.parse_identifier()
            count, first = 1, UNALLOCATED
            if parser.parse_optional_keyword("x") is not None:
                count = parser.parse_integer(allow_negative=False)
            if parser.parse_optional_keyword("at") is not None:
                first = parser.parse_integer(allow_negative=False)
        return StringAttr(reg_class), IntAttr(count), IntAttr(first)

    def print_parameters(self, printer: Printer) -> None:
        text = self.cls.data
        if self.count.data != 1:
            text += f" x {self.count.data}"
        if self.is_allocated:
            text += f" at {self.first.data}"
        printer.print_string(f"<{text}>")

    def verify(self) -> None:
        if self.cls.data not in REGISTER_CLASSES:
            raise VerifyException(
                f"!ptx.reg: unknown register class '{self.cls.data}' (one of "
                f"{', '.join(REGISTER_CLASSES)})"
            )
        if self.count.data < 1:
            raise VerifyException("!ptx.reg: a bundle holds at least one register")
        if self.first.data < UNALLOCATED:
            raise VerifyException("!ptx.reg: register numbers are non-negative")


@irdl_attr_definition
class ImmType(ParametrizedAttribute, TypeAttribute):
    """An immediate operand of a register class: printed as a literal.

    `!ptx.imm<b32 x 4>` is a constant bundle, one literal per element (the
    offsets of the elements a thread holds, say): an op reading it prints
    element `k`'s literal in its `k`-th instruction."""

    name = "ptx.imm"

    cls: StringAttr
    count: IntAttr

    def __init__(self, cls: str, count: int = 1):
        super().__init__(StringAttr(cls), IntAttr(count))

    @property
    def register_class(self) -> str:
        return self.cls.data

    @property
    def size(self) -> int:
        return self.count.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            reg_class = parser.parse_identifier()
            count = 1
            if parser.parse_optional_keyword("x") is not None:
                count = parser.parse_integer(allow_negative=False)
        return StringAttr(reg_class), IntAttr(count)

    def print_parameters(self, printer: Printer) -> None:
        count = f" x {self.count.data}" if self.count.data != 1 else ""
        printer.print_string(f"<{self.cls.data}{count}>")

    def verify(self) -> None:
        if self.cls.data not in REGISTER_CLASSES or self.cls.data == "pred":
            raise VerifyException(f"!ptx.imm: no immediates of class '{self.cls.data}'")
        if self.count.data < 1:
            raise VerifyException(
                "!ptx.imm: a constant bundle holds at least one value"
            )


PARAM_TYPES = frozenset({"b16", "u32", "u64", "f32", "b8"})
PARAMS_ATTR = "ptx.params"
"""The kernel attribute listing its `#ptx.param_decl`s, in parameter order."""


@irdl_attr_definition
class ParamDeclAttr(ParametrizedAttribute):
    """One `.param` of a kernel entry: `#ptx.param_decl<"p_a" : b8[128], align 64>`
    prints `.param .align 64 .b8 p_a[128]`; `#ptx.param_decl<"p_n" : u32>` prints
    `.param .u32 p_n`. A distributed kernel has no block arguments: it lists
    these (attribute `ptx.params`) and reads them with `ptx.param`."""

    name = "ptx.param_decl"

    param: StringAttr
    type: StringAttr
    length: IntAttr
    """Array length; 0 for a scalar."""
    align: IntAttr
    """Byte alignment; 0 for the type's own."""

    def __init__(self, param: str, type: str, length: int = 0, align: int = 0):
        super().__init__(
            StringAttr(param), StringAttr(type), IntAttr(length), IntAttr(align)
        )

    def declaration(self) -> str:
        align = f".align {self.align.data} " if self.align.data else ""
        length = f"[{self.length.data}]" if self.length.data else ""
        return f".param {align}.{self.type.data} {self.param.data}{length}"

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            param = parser.parse_str_literal()
            parser.parse_punctuation(":")
            ptx_type = parser.parse_identifier()
            length = align = 0
            if parser.parse_optional_punctuation("[") is not None:
                length = parser.parse_integer(allow_negative=False)
                parser.parse_punctuation("]")
            if parser.parse_optional_punctuation(",") is not None:
                parser.parse_keyword("align")
                align = parser.parse_integer(allow_negative=False)
        return StringAttr(param), StringAttr(ptx_type), IntAttr(length), IntAttr(align)

    def print_parameters(self, printer: Printer) -> None:
        length = f"[{self.length.data}]" if self.length.data else ""
        align = f", align {self.align.data}" if self.align.data else ""
        printer.print_string(f'<"{self.param.data}" : {self.type.data}{length}{align}>')

    def verify(self) -> None:
        if self.type.data not in PARAM_TYPES:
            raise VerifyException(
                f"#ptx.param_decl: unknown parameter type '{self.type.data}'"
            )
        if self.length.data < 0 or self.align.data < 0:
            raise VerifyException("#ptx.param_decl: lengths and alignments are >= 0")


def width(value: SSAValue) -> int:
    """Registers in a value's bundle (literals in a constant bundle)."""
    t = value.type
    return t.count.data if type(t) in _BUNDLES else 1


_BUNDLES = (RegType, ImmType)


def register_class(value: SSAValue) -> str:
    t = value.type
    assert isinstance(t, RegType | ImmType), f"{t} is not a ptx value"
    return t.register_class


# ------------------------------------------------------------------- printing


class Emitter(Protocol):
    """What an op needs to print itself (implemented by the PTX printer)."""

    def line(self, text: str) -> None:
        """Emit one indented instruction line."""

    def label(self, name: str) -> None:
        """Emit a label line."""

    def fresh_label(self, stem: str) -> str:
        """A label name no other label of the kernel has."""


def imm_literal(op: ImmOp, k: int = 0) -> str:
    """The PTX literal of (element `k` of) an immediate: `0fXXXXXXXX` for f32,
    decimal otherwise."""
    value = op.values()[k]
    if isinstance(value, float):
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        return f"0f{bits:08X}"
    return str(value)


def operand_text(value: SSAValue, k: int = 0) -> str:
    """Element `k` of `value` as PTX text: a register name or a literal."""
    t = value.type
    if type(t) is ImmType:
        assert isinstance(value.owner, ImmOp)
        return imm_literal(value.owner, k)
    assert type(t) is RegType
    return t.register(k)


def element_texts(
    value: SSAValue, element_map: DenseArrayBase | None = None, n: int = 0
) -> list[str] | tuple[str, ...]:
    """The PTX text of every element of `value`, or with `element_map` (or a
    single-register `value` broadcast to `n` elements) of every element an op
    of `n` elements reads: `operand_text` for a whole op at once."""
    t = value.type
    if type(t) is ImmType:
        assert isinstance(value.owner, ImmOp)
        texts: list[str] | tuple[str, ...] = [
            imm_literal(value.owner, k) for k in range(t.count.data)
        ]
    else:
        assert type(t) is RegType
        texts = _register_names(t.cls.data, t.first.data, t.count.data)
    if element_map is not None and len(element_map):
        return [texts[e] for e in map_values(element_map)]
    if n and len(texts) == 1:
        return texts * n
    return texts


@functools.lru_cache(maxsize=1 << 14)
def _register_names(cls: str, first: int, count: int) -> tuple[str, ...]:
    """`%f12`, `%f13`, ... for an allocated bundle (many ops share one)."""
    if first == UNALLOCATED:
        raise ValueError(f"!ptx.reg<{cls} x {count}> is not allocated")
    prefix = REGISTER_CLASSES[cls][0]
    return tuple(f"{prefix}{first + k}" for k in range(count))


def pick(value: SSAValue, element_map: DenseArrayBase | None, k: int) -> int:
    """Which element of `value` element `k` of an op reads."""
    if element_map is not None and len(element_map):
        return map_values(element_map)[k]
    return 0 if width(value) == 1 else k


def _is_identity(element_map: DenseArrayBase | None, n: int) -> bool:
    """Element `k` reads element `k` (of an operand holding `n` registers)."""
    if element_map is None:
        return True
    raw = element_map.data.data
    return not raw or raw == _identity_bytes(n)


@functools.lru_cache(maxsize=1 << 10)
def _identity_bytes(n: int) -> bytes:
    return i32.pack(tuple(range(n)))


# Ops are built and printed by the thousand: attributes are immutable, so the
# common ones are made once, and a map is unpacked once.


@functools.lru_cache(maxsize=1 << 14)
def map_values(element_map: DenseArrayBase) -> tuple[int, ...]:
    """The entries of a map (or any dense array)."""
    return tuple(element_map.get_values())


@functools.lru_cache(maxsize=1 << 14)
def _map_tuple(values: tuple[int, ...]) -> DenseArrayBase:
    return DenseArrayBase(i32, BytesAttr(i32.pack(values)))


def _map_attr(values: Sequence[int] | None) -> DenseArrayBase:
    return _map_tuple(tuple(values or ()))


@functools.lru_cache(maxsize=1 << 12)
def _i64(value: int) -> IntegerAttr:
    return IntegerAttr(value, 64)


@functools.lru_cache(maxsize=1 << 12)
def _reg(cls: str, count: int = 1) -> RegType:
    return RegType(cls, count)


@functools.lru_cache(maxsize=1 << 10)
def _imm(cls: str, count: int = 1) -> ImmType:
    return ImmType(cls, count)


def _check_map(
    op: Operation, what: str, value: SSAValue, m: DenseArrayBase, n: int
) -> None:
    entries = map_values(m)
    if not entries:
        if width(value) not in (1, n):
            raise VerifyException(
                f"{op.name}: {what} holds {width(value)} registers and has no map; "
                f"the op has {n} elements"
            )
        return
    if len(entries) != n:
        raise VerifyException(
            f"{op.name}: the map of {what} has {len(entries)} entries, the op {n} elements"
        )
    if any(not 0 <= e < width(value) for e in entries):
        raise VerifyException(
            f"{op.name}: the map of {what} reads outside its {width(value)} registers"
        )


class PTXOp(IRDLOperation):
    """An op of the ptx dialect: it prints its own PTX line(s) (`print_ptx`).

    IR syntax (all ops but the control-flow ones), the generic form without its
    quotes: `%d = ptx.alu(%a, %b) {opcode = "add.f32"} : (!ptx.reg<f32 x 64>,
    !ptx.reg<f32 x 64>) -> !ptx.reg<f32 x 64>`; properties and attributes share
    the dictionary."""

    def __init__(
        self,
        *,
        operands: Sequence[SSAValue | Sequence[SSAValue]] = (),
        result_types: Sequence[Attribute | Sequence[Attribute]] = (),
        properties: Mapping[str, Attribute] | None = None,
        attributes: Mapping[str, Attribute] | None = None,
        regions: Sequence[Region] = (),
    ):
        """IRDL's builder, without its generic argument checks (ptx ops are
        built by the thousand; the verifier checks them): one entry per
        operand definition, a list for a variadic or optional one."""
        flat: list[SSAValue] = []
        sizes: list[int] = []
        for entry in operands:
            if isinstance(entry, list | tuple):
                flat.extend(entry)
                sizes.append(len(entry))
            else:
                flat.append(entry)
                sizes.append(1)
        props = dict(properties or {})
        if _has_segments(type(self)):
            props[SEGMENTS] = _map_attr(sizes)
        types: list[Attribute] = []
        for entry in result_types:
            if isinstance(entry, list | tuple):
                types.extend(entry)
            else:
                types.append(entry)
        Operation.__init__(
            self,
            operands=flat,
            result_types=types,
            properties=props,
            attributes=dict(attributes or {}),
            regions=list(regions),
        )

    def print_ptx(self, out: Emitter) -> None:
        raise NotImplementedError(f"{self.name} does not print PTX")

    def reusable_operands(self) -> Sequence[SSAValue]:
        """Operands whose registers the result may take when they die here,
        best first (`ptx-allocate` reuses the first that dies): legal when every
        element reads that operand's element `k` only to write element `k`."""
        return ()

    def tied_operand(self) -> SSAValue | None:
        """The operand whose registers the result must take (an instruction
        that updates part of a bundle in place); `ptx-allocate` copies it first
        where it lives on."""
        return None

    def _guard_operand(self) -> SSAValue | None:
        return None

    def print(self, printer: Printer) -> None:
        guard = self._guard_operand()
        operands = list(self.operands)
        printer.print_string("(")
        printer.print_list(operands[:-1] if guard else operands, printer.print_operand)
        printer.print_string(")")
        if guard is not None:
            printer.print_string(" if ")
            printer.print_operand(guard)
        entries = {**self.properties, **self.attributes}
        if _segments(type(self), len(operands), guard is not None) is not None:
            entries.pop(SEGMENTS, None)
        if entries:
            printer.print_string(" ")
            printer.print_attr_dict(entries)
        printer.print_string(" : ")
        printer.print_function_type(
            [o.type for o in operands], [r.type for r in self.results]
        )

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        guarded = parser.parse_optional_keyword("if") is not None
        if guarded:
            operands.append(parser.parse_unresolved_operand())
        entries = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        signature = parser.parse_function_type()
        inputs = signature.inputs.data
        if len(inputs) != len(operands):
            parser.raise_error(
                f"{len(operands)} operands but {len(inputs)} operand types", pos
            )
        names = cls.get_irdl_definition().properties
        properties = {k: v for k, v in entries.items() if k in names}
        if SEGMENTS in names and SEGMENTS not in properties:
            sizes = _segments(cls, len(operands), guarded)
            if sizes is None:
                parser.raise_error(f"{cls.name} needs its {SEGMENTS}", pos)
            properties[SEGMENTS] = _map_attr(sizes)
        return cls.create(
            operands=parser.resolve_operands(operands, inputs, pos),
            result_types=signature.outputs.data,
            properties=properties,
            attributes={k: v for k, v in entries.items() if k not in names},
        )


SEGMENTS = "operandSegmentSizes"


@functools.cache
def _has_segments(cls: type[IRDLOperation]) -> bool:
    return any(
        isinstance(o, AttrSizedOperandSegments)
        for o in cls.get_irdl_definition().options
    )


def _segments(cls: type[IRDLOperation], total: int, guarded: bool) -> list[int] | None:
    """The operand segment sizes of an op with at most one variadic operand
    besides its guard (None when they cannot be inferred)."""
    defs = [d for _, d in cls.get_irdl_definition().operands]
    sizes: list[int | None] = [None if isinstance(d, VariadicDef) else 1 for d in defs]
    if issubclass(cls, Predicated):
        sizes[-1] = int(guarded)
    open_ = [i for i, n in enumerate(sizes) if n is None]
    if len(open_) > 1:
        return None
    if open_:
        sizes[open_[0]] = total - sum(n or 0 for n in sizes)
    return [n or 0 for n in sizes]


class Predicated(PTXOp):
    """An instruction that may carry a guard predicate `@%p` / `@!%p`."""

    pred = opt_operand_def(RegType)
    pred_map = opt_prop_def(DenseArrayBase)
    negated = opt_prop_def(UnitAttr)

    def _guard_operand(self) -> SSAValue | None:
        return self.pred

    def guard(self, k: int = 0) -> str:
        if self.pred is None:
            return ""
        element = pick(self.pred, self.pred_map, k)
        return f"@{'!' if self.negated else ''}{operand_text(self.pred, element)} "

    def guards(self, n: int) -> list[str]:
        """The guard of each of `n` elements (all at once: printing is hot)."""
        if self.pred is None:
            return [""] * n
        bang = "!" if self.negated else ""
        return [f"@{bang}{p} " for p in element_texts(self.pred, self.pred_map, n)]

    def verify_guard(self, n: int) -> None:
        if self.pred is None:
            return
        if register_class(self.pred) != "pred":
            raise VerifyException(f"{self.name}: the guard must be a predicate")
        _check_map(self, "the guard", self.pred, self.pred_map or _map_attr(None), n)


def guard_properties(
    pred: SSAValue | None, negated: bool = False, pred_map: Sequence[int] | None = None
) -> dict[str, Attribute]:
    props: dict[str, Attribute] = {}
    if pred is not None and pred_map:
        props["pred_map"] = _map_attr(pred_map)
    if pred is not None and negated:
        props["negated"] = UnitAttr()
    return props


# ---------------------------------------------------------------- values


@irdl_op_definition
class ImmOp(PTXOp):
    """An immediate: `%c = ptx.imm() {value = 1.0 : f32} : () -> !ptx.imm<f32>`;
    a constant bundle holds one value per element: `{value = array<i64: 0, 8>}
    : () -> !ptx.imm<b32 x 2>` (f32 bundles: `array<f32: ...>`). Prints nothing."""

    name = "ptx.imm"

    value = prop_def(Attribute)
    result = result_def(ImmType)

    traits = traits_def(Pure())

    def __init__(self, value: int | float | Sequence[int | float], cls: str):
        values = list(value) if isinstance(value, list | tuple) else [value]
        if len(values) == 1:
            if cls == "f32":
                attr: Attribute = FloatAttr(float(values[0]), 32)
            else:
                attr = _i64(int(values[0]))
        elif cls == "f32":
            attr = DenseArrayBase.from_list(f32, [float(v) for v in values])
        else:
            attr = DenseArrayBase.from_list(i64, [int(v) for v in values])
        super().__init__(
            properties={"value": attr}, result_types=[_imm(cls, len(values))]
        )

    def values(self) -> tuple[int | float, ...]:
        """The literal of every element."""
        value = self.value
        if isinstance(value, DenseArrayBase):
            return tuple(value.get_values())
        if isinstance(value, FloatAttr):
            return (value.value.data,)
        assert isinstance(value, IntegerAttr)
        return (value.value.data,)

    def verify_(self) -> None:
        if not isinstance(self.value, IntegerAttr | FloatAttr | DenseArrayBase):
            raise VerifyException(
                "ptx.imm: the value is an integer, a float or an array of them"
            )
        if len(self.values()) != width(self.result):
            raise VerifyException(
                f"ptx.imm: {len(self.values())} values for {width(self.result)} elements"
            )

    def print_ptx(self, out: Emitter) -> None:
        pass


@irdl_op_definition
class SpecialOp(PTXOp):
    """A special register or the shared-memory symbol read into a register:
    `mov.u32 %r, %tid.x;` (`register = "%tid.x"`), `mov.u32 %r, smem;`."""

    name = "ptx.special"

    register = prop_def(StringAttr)
    result = result_def(RegType)

    traits = traits_def(Pure())

    SPECIAL: ClassVar[frozenset[str]] = frozenset(
        {
            "%tid.x",
            "%ctaid.x",
            "%ctaid.y",
            "%ctaid.z",
            "%nctaid.x",
            "%nctaid.y",
            "%nctaid.z",
            "%clusterid.x",
            "%cluster_ctarank",
            "smem",
        }
    )

    def __init__(self, register: str):
        super().__init__(
            properties={"register": StringAttr(register)},
            result_types=[_reg("b32")],
        )

    def verify_(self) -> None:
        if self.register.data not in self.SPECIAL:
            raise VerifyException(
                f"ptx.special: unknown special register '{self.register.data}'"
            )

    def print_ptx(self, out: Emitter) -> None:
        out.line(f"mov.u32 {operand_text(self.result)}, {self.register.data};")


@irdl_op_definition
class ParamOp(PTXOp):
    """A kernel parameter read into a register: `ld.param.u32 %r, [p_n];`; a
    tensor map (`.b8 [128]`, `generic`) yields its generic address instead:
    `mov.b64 %rd, p_map; cvta.param.u64 %rd, %rd;`."""

    name = "ptx.param"

    param = prop_def(StringAttr)
    generic = opt_prop_def(UnitAttr)
    result = result_def(RegType)

    traits = traits_def(Pure())

    LOAD_TYPES: ClassVar[dict[str, str]] = {
        "b16": "b16",
        "b32": "u32",
        "b64": "u64",
        "f32": "f32",
    }

    def __init__(self, param: str, cls: str, generic: bool = False):
        props: dict[str, Attribute] = {"param": StringAttr(param)}
        if generic:
            props["generic"] = UnitAttr()
        super().__init__(properties=props, result_types=[_reg(cls)])

    def verify_(self) -> None:
        cls = register_class(self.result)
        if width(self.result) != 1 or cls not in self.LOAD_TYPES:
            raise VerifyException(
                "ptx.param: a parameter is one b16, b32, b64 or f32 register"
            )
        if self.generic and cls != "b64":
            raise VerifyException("ptx.param: a generic address is a b64 register")

    def print_ptx(self, out: Emitter) -> None:
        d = operand_text(self.result)
        if self.generic:
            out.line(f"mov.b64 {d}, {self.param.data};")
            out.line(f"cvta.param.u64 {d}, {d};")
        else:
            load = self.LOAD_TYPES[register_class(self.result)]
            out.line(f"ld.param.{load} {d}, [{self.param.data}];")


# ------------------------------------------------------------- arithmetic

ALU_OPCODES: dict[str, tuple[str, tuple[str, ...]]] = {}
"""opcode -> (result class, operand classes). The interpreter gives each its
meaning (`interp/thread_sim.py`); the verifier checks the classes."""


def _alu(result: str, operands: str, *opcodes: str) -> None:
    for opcode in opcodes:
        ALU_OPCODES[opcode] = (result, tuple(operands.split()))


_alu("f32", "f32 f32", "add.f32", "sub.f32", "mul.f32", "div.rn.f32", "max.f32")
_alu("f32", "f32 f32", "min.f32", "max.NaN.f32", "min.NaN.f32")
_alu("f32", "f32 f32 f32", "fma.rn.f32")
_alu("f32", "f32", "neg.f32", "abs.f32", "ex2.approx.ftz.f32", "lg2.approx.f32")
_alu("f32", "f32", "tanh.approx.f32", "sqrt.rn.f32", "rsqrt.approx.f32")
_alu("f32", "f32", "rcp.approx.ftz.f32", "cvt.rpi.f32.f32", "cvt.rmi.f32.f32")
_alu("f32", "f32", "cvt.rzi.f32.f32", "cvt.rni.f32.f32")
_alu("f32", "f32", "sin.approx.ftz.f32", "cos.approx.ftz.f32")
_alu("f32", "f32 f32", "copysign.f32")
_alu("f32", "f32", "mov.f32")
_alu("f32", "b32", "cvt.rn.f32.s32", "cvt.rn.f32.u32")
_alu("b32", "f32", "cvt.rzi.s32.f32", "cvt.rzi.u32.f32")
_alu("f32", "b16", "cvt.f32.bf16", "cvt.f32.f16")
_alu("b32", "f32 f32", "cvt.rn.bf16x2.f32", "cvt.rn.f16x2.f32")
_alu("b16", "f32 f32", "cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e5m2x2.f32")
_alu("b32", "b16", "cvt.rn.f16x2.e4m3x2", "cvt.rn.f16x2.e5m2x2")
_alu("b32", "b32 b32 b32", "prmt.b32")
_alu("b32", "b32 b32", "add.s32", "sub.s32", "mul.lo.s32", "and.b32", "or.b32")
_alu("b32", "b32 b32", "add.sat.s32")
_alu("b32", "b32 b32", "xor.b32", "shl.b32", "shr.u32", "shr.s32", "max.s32")
_alu("b32", "b32 b32", "min.s32", "max.u32", "min.u32", "div.s32", "rem.s32")
_alu("b32", "b32 b32", "div.u32", "rem.u32", "add.u32", "sub.u32", "mul.lo.u32")
_alu("b32", "b32 b32 b32", "mad.lo.u32", "mad.lo.s32", "bfe.u32")
_alu("b32", "b32", "mov.b32", "mov.u32", "cvt.s32.s8")
_alu("b32", "b32 b32 pred", "selp.b32")
_alu("b16", "b16 b16 pred", "selp.b16")
_alu("b64", "b64 b64 pred", "selp.b64")
_alu("f32", "f32 f32 pred", "selp.f32")
_alu("b32", "b32 b32", "mapa.shared::cluster.u32")
_alu("b64", "b32", "cvt.u64.u32", "cvt.s64.s32")
_alu("b32", "b64", "cvt.u32.u64")
_alu("f32", "b64", "cvt.rn.f32.s64", "cvt.rn.f32.u64")
_alu("b64", "b64 b64", "add.s64", "or.b64")
_alu("b64", "b64 b64 b64", "mad.lo.u64")
_alu("b64", "b32 b32 b64", "mad.wide.u32")
_alu("b64", "b64", "mov.b64", "mov.u64", "cvta.to.global.u64")
_alu("b16", "b16", "mov.b16")
_alu("pred", "pred", "mov.pred")
_alu("pred", "pred pred", "and.pred", "or.pred", "xor.pred")
for _cmp in ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"):
    _alu("pred", "b32 b32", f"setp.{_cmp}.s32", f"setp.{_cmp}.u32")
    _alu("pred", "b32 b32 pred", f"setp.{_cmp}.and.s32", f"setp.{_cmp}.and.u32")
F32_COMPARISONS = (
    *("eq", "ne", "lt", "le", "gt", "ge"),
    *("equ", "neu", "ltu", "leu", "gtu", "geu"),
    *("num", "nan"),
)
"""`setp.<cmp>.f32`: ordered, unordered (true where either side is NaN),
and the NaN tests."""
for _cmp in F32_COMPARISONS:
    _alu("pred", "f32 f32", f"setp.{_cmp}.f32")
    _alu("pred", "f32 f32 pred", f"setp.{_cmp}.or.f32")


def _class_matches(value: SSAValue, cls: str) -> bool:
    got = register_class(value)
    # 32-bit registers hold floats as bits: a b32 operand may be an f32 register
    # and an immediate of either 32-bit class fits both
    return got == cls or (
        {got, cls} == {"b32", "f32"} and isinstance(value.type, ImmType)
    )


@irdl_op_definition
class AluOp(Predicated):
    """One PTX arithmetic/logic instruction applied to every element:
    `%d = ptx.alu "add.f32" %a, %b : ... -> !ptx.reg<f32 x 64>` prints
    `add.f32 %f0, %f64, %f128;` and 63 more lines."""

    name = "ptx.alu"

    opcode = prop_def(StringAttr)
    args = var_operand_def(RegType | ImmType)
    maps = opt_prop_def(ArrayAttr[DenseArrayBase])
    result = result_def(RegType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        opcode: str,
        args: Sequence[SSAValue],
        count: int,
        maps: Sequence[Sequence[int] | None] | None = None,
        pred: SSAValue | None = None,
        negated: bool = False,
        pred_map: Sequence[int] | None = None,
    ):
        result_class = ALU_OPCODES[opcode][0] if opcode in ALU_OPCODES else "b32"
        props: dict[str, Attribute] = {"opcode": StringAttr(opcode)}
        if maps is not None and any(maps):
            props["maps"] = ArrayAttr(_map_attr(m) for m in maps)
        super().__init__(
            operands=[list(args), [pred] if pred is not None else []],
            properties={**props, **guard_properties(pred, negated, pred_map)},
            result_types=[_reg(result_class, count)],
        )

    def element(self, i: int, k: int) -> int:
        """The element of operand `i` that result element `k` reads."""
        return pick(self.args[i], self.maps.data[i] if self.maps else None, k)

    def _reads(self) -> list[tuple[SSAValue, DenseArrayBase | None]]:
        """Each operand with its map, the guard last: read from the operand
        list and the properties directly (every instruction is asked, and
        the accessors cost more than the work)."""
        operands = self.operands
        nargs = len(ALU_OPCODES[self.opcode.data][1])
        maps = self.properties.get("maps")
        reads: list[tuple[SSAValue, DenseArrayBase | None]] = [
            (a, maps.data[i] if isinstance(maps, ArrayAttr) else None)
            for i, a in enumerate(operands[:nargs])
        ]
        if len(operands) > nargs:
            pred_map = self.properties.get("pred_map")
            assert pred_map is None or isinstance(pred_map, DenseArrayBase)
            reads.append((operands[nargs], pred_map))
        return reads

    def reusable_operands(self) -> Sequence[SSAValue]:
        """Operands of the result's class and width read element for element
        (identity map) and nowhere else through another map, guard included.
        A `mov` shares with nothing: it exists to put a value in other
        registers (sharing would print `mov %f1, %f1;`)."""
        opcode = self.opcode.data
        if opcode.startswith("mov.") or opcode not in ALU_OPCODES:
            return ()
        t = self.results[0].type
        n, cls = t.count.data, t.cls.data
        nargs = len(ALU_OPCODES[opcode][1])
        same, other = [], []
        for i, (a, m) in enumerate(self._reads()):
            at = a.type
            if type(at) is RegType and at.count.data == n and _is_identity(m, n):
                if i < nargs and at.cls.data == cls:
                    same.append(a)
            else:
                other.append(a)
        return [a for a in same if all(a is not o for o in other)]

    def verify_(self) -> None:
        opcode = self.opcode.data
        if opcode not in ALU_OPCODES:
            raise VerifyException(f"ptx.alu: unknown opcode '{opcode}'")
        result_class, operand_classes = ALU_OPCODES[opcode]
        if register_class(self.result) != result_class:
            raise VerifyException(
                f"ptx.alu: {opcode} writes {result_class} registers, not "
                f"{register_class(self.result)}"
            )
        if len(self.args) != len(operand_classes):
            raise VerifyException(
                f"ptx.alu: {opcode} takes {len(operand_classes)} operands, got "
                f"{len(self.args)}"
            )
        maps = list(self.maps.data) if self.maps else [_map_attr(None)] * len(self.args)
        if len(maps) != len(self.args):
            raise VerifyException("ptx.alu: one map per operand")
        n = width(self.result)
        for i, (arg, cls) in enumerate(zip(self.args, operand_classes, strict=True)):
            if not _class_matches(arg, cls):
                raise VerifyException(
                    f"ptx.alu: operand {i} of {opcode} must be {cls}, not "
                    f"{register_class(arg)}"
                )
            _check_map(self, f"operand {i}", arg, maps[i], n)
        self.verify_guard(n)

    def print_ptx(self, out: Emitter) -> None:
        opcode = self.opcode.data
        result = self.results[0]
        n = result.type.count.data
        reads = self._reads()
        nargs = len(ALU_OPCODES[opcode][1])
        columns = [element_texts(a, m, n) for a, m in reads[:nargs]]
        guards = [""] * n
        if len(reads) > nargs:
            bang = "!" if self.properties.get("negated") is not None else ""
            guards = [f"@{bang}{p} " for p in element_texts(*reads[nargs], n)]
        for k, d in enumerate(element_texts(result)):
            srcs = ", ".join(c[k] for c in columns)
            out.line(f"{guards[k]}{opcode} {d}, {srcs};")


@irdl_op_definition
class UnpackOp(PTXOp):
    """Split 32-bit registers into their 16-bit halves (low first):
    `mov.b32 {%h0, %h1}, %r0;`."""

    name = "ptx.unpack"

    source = operand_def(RegType)
    result = result_def(RegType)

    traits = traits_def(Pure())

    def __init__(self, source: SSAValue):
        super().__init__(
            operands=[source], result_types=[_reg("b16", 2 * width(source))]
        )

    def verify_(self) -> None:
        if register_class(self.source) not in ("b32", "f32"):
            raise VerifyException("ptx.unpack: unpacks 32-bit registers")
        if register_class(self.result) != "b16" or width(self.result) != 2 * width(
            self.source
        ):
            raise VerifyException("ptx.unpack: two b16 registers per source register")

    def print_ptx(self, out: Emitter) -> None:
        for k in range(width(self.source)):
            lo, hi = (
                operand_text(self.result, 2 * k),
                operand_text(self.result, 2 * k + 1),
            )
            out.line(f"mov.b32 {{{lo}, {hi}}}, {operand_text(self.source, k)};")


@irdl_op_definition
class PackOp(PTXOp):
    """Join consecutive pairs of 16-bit registers into 32-bit ones (the first of
    a pair low): `mov.b32 %r0, {%h0, %h1};`."""

    name = "ptx.pack"

    source = operand_def(RegType)
    result = result_def(RegType)

    traits = traits_def(Pure())

    def __init__(self, source: SSAValue):
        super().__init__(
            operands=[source], result_types=[_reg("b32", width(source) // 2)]
        )

    def verify_(self) -> None:
        if register_class(self.source) != "b16" or width(self.source) % 2:
            raise VerifyException("ptx.pack: packs pairs of b16 registers")
        if register_class(self.result) != "b32" or 2 * width(self.result) != width(
            self.source
        ):
            raise VerifyException("ptx.pack: one b32 register per source pair")

    def print_ptx(self, out: Emitter) -> None:
        for k in range(width(self.result)):
            lo, hi = (
                operand_text(self.source, 2 * k),
                operand_text(self.source, 2 * k + 1),
            )
            out.line(f"mov.b32 {operand_text(self.result, k)}, {{{lo}, {hi}}};")


@irdl_op_definition
class ShflIdxOp(PTXOp):
    """Every element read from the lane of the warp that `lane` (one register,
    a lane number 0..31 in each thread) names:
    `shfl.sync.idx.b32 %d, %a, %lane, 31, -1;`."""

    name = "ptx.shfl_idx"

    source = operand_def(RegType)
    lane = operand_def(RegType)
    result = result_def(RegType)

    def __init__(self, source: SSAValue, lane: SSAValue):
        t = source.type
        assert isinstance(t, RegType)
        super().__init__(operands=[source, lane], result_types=[t.unallocated()])

    def verify_(self) -> None:
        if register_class(self.source) not in ("b32", "f32"):
            raise VerifyException("ptx.shfl_idx: shuffles 32-bit registers")
        if register_class(self.lane) != "b32" or width(self.lane) != 1:
            raise VerifyException("ptx.shfl_idx: the lane is one b32 register")

    def print_ptx(self, out: Emitter) -> None:
        lane = operand_text(self.lane)
        for k in range(width(self.result)):
            d, a = operand_text(self.result, k), operand_text(self.source, k)
            out.line(f"shfl.sync.idx.b32 {d}, {a}, {lane}, 31, -1;")


@irdl_op_definition
class ShflOp(Predicated):
    """A butterfly shuffle of every element across the lanes of a warp:
    `shfl.sync.bfly.b32 %d, %a, lane_mask, 31, -1;`."""

    name = "ptx.shfl_bfly"

    source = operand_def(RegType)
    lane_mask = prop_def(IntegerAttr[I32])
    result = result_def(RegType)

    def __init__(self, source: SSAValue, lane_mask: int):
        t = source.type
        assert isinstance(t, RegType)
        super().__init__(
            operands=[source, []],
            properties={"lane_mask": IntegerAttr(lane_mask, 32)},
            result_types=[t.unallocated()],
        )

    def verify_(self) -> None:
        if register_class(self.source) not in ("b32", "f32"):
            raise VerifyException("ptx.shfl_bfly: shuffles 32-bit registers")
        if not 1 <= self.lane_mask.value.data <= 31:
            raise VerifyException("ptx.shfl_bfly: the lane mask must be in [1, 31]")
        self.verify_guard(width(self.result))

    def print_ptx(self, out: Emitter) -> None:
        mask = self.lane_mask.value.data
        for k in range(width(self.result)):
            d, a = operand_text(self.result, k), operand_text(self.source, k)
            out.line(f"{self.guard(k)}shfl.sync.bfly.b32 {d}, {a}, {mask}, 31, -1;")


@irdl_op_definition
class VoteAnyOp(PTXOp):
    """True in every lane of the warp if the predicate is true in any:
    `vote.sync.any.pred %d, %p, 0xffffffff;`."""

    name = "ptx.vote_any"

    source = operand_def(RegType)
    result = result_def(RegType)

    def __init__(self, source: SSAValue):
        super().__init__(operands=[source], result_types=[_reg("pred")])

    def verify_(self) -> None:
        if register_class(self.source) != "pred" or width(self.source) != 1:
            raise VerifyException("ptx.vote_any: votes on one predicate")

    def reusable_operands(self) -> Sequence[SSAValue]:
        return (self.source,)

    def print_ptx(self, out: Emitter) -> None:
        d, a = operand_text(self.result), operand_text(self.source)
        out.line(f"vote.sync.any.pred {d}, {a}, 0xffffffff;")


@irdl_op_definition
class TileTicketOp(PTXOp):
    """A ticket from the kernel's tile counter (`tile.next_tile`): `counter` is
    a module-scope `.global .u32` (zero when the module loads, declared by the
    printer) that wraps to 0 after `bound`:
    `atom.global.inc.u32 %d, [counter], %bound;`."""

    name = "ptx.tile_ticket"

    counter = prop_def(StringAttr)
    bound = operand_def(RegType)
    result = result_def(RegType)

    def __init__(self, counter: str, bound: SSAValue):
        super().__init__(
            operands=[bound],
            properties={"counter": StringAttr(counter)},
            result_types=[_reg("b32")],
        )

    def verify_(self) -> None:
        if register_class(self.bound) != "b32" or width(self.bound) != 1:
            raise VerifyException("ptx.tile_ticket: the bound is one b32 register")

    def print_ptx(self, out: Emitter) -> None:
        d, b = operand_text(self.result), operand_text(self.bound)
        out.line(f"atom.global.inc.u32 {d}, [{self.counter.data}], {b};")


# ------------------------------------------------------------------ memory

MEMORY_TYPES = {"b16": "b16", "b32": "b32", "f32": "f32", "b64": "b64"}
BYTE_TYPES = {"ptx.ld": "s8", "ptx.st": "u8"}
"""The one-byte memory type of each op with `byte`: a load sign-extends the
byte into its `b32` register (an i8 element), a store writes the register's
low byte (PTX: a register wider than the instruction type)."""

HALF_TYPES = {"ptx.ld": "u16", "ptx.st": "u16"}
"""The two-byte memory type of an op with `half`: a store writes the
register's low 16 bits (two i8 elements packed, `prmt.b32`), a load
zero-extends them into it."""


class _Memory(Predicated):
    """Shared by loads and stores: an address register plus a byte offset, one
    instruction of 1, 2 or 4 registers. With `offsets`, one instruction per
    entry, each at its own extra byte offset, moving the next registers of the
    bundle: a thread's elements of a tile are one op. Instruction `i` uses
    address element `addr_map[i]` (no map: element 0 of one register, or
    element i of one address per instruction) and guard `pred_map[i]`."""

    space = prop_def(StringAttr)
    offset = prop_def(IntegerAttr[I64])
    offsets = opt_prop_def(DenseArrayBase)
    addr_map = opt_prop_def(DenseArrayBase)
    byte = opt_prop_def(UnitAttr)
    """Each instruction moves one byte of one `b32` register (`BYTE_TYPES`)."""
    half = opt_prop_def(UnitAttr)
    """Each instruction moves the low 16 bits of one `b32` register
    (`HALF_TYPES`: a load zero-extends them)."""
    nc = opt_prop_def(UnitAttr)
    """A global load through the read-only (non-coherent) cache: `ld.global.nc`,
    for data no thread of the launch writes."""

    SPACES: ClassVar[frozenset[str]] = frozenset({"global", "shared"})

    def instruction_offsets(self) -> tuple[int, ...]:
        """The extra byte offset of each instruction."""
        return map_values(self.offsets) if self.offsets is not None else (0,)

    def _registers(self) -> int:
        raise NotImplementedError

    @property
    def vector(self) -> int:
        """Registers each instruction moves."""
        return self._registers() // len(self.instruction_offsets())

    def _address(self, addr: SSAValue, i: int) -> str:
        off = self.offset.value.data + self.instruction_offsets()[i]
        reg = operand_text(addr, pick(addr, self.addr_map, i))
        return f"[{reg}{f'+{off}' if off else ''}]"

    def _addresses(self, addr: SSAValue) -> list[str]:
        """`_address` of every instruction (all at once: printing is hot)."""
        base, extra = self.offset.value.data, self.instruction_offsets()
        regs = element_texts(addr, self.addr_map, len(extra))
        return [
            f"[{r}+{base + e}]" if base + e else f"[{r}]"
            for r, e in zip(regs, extra, strict=True)
        ]

    @property
    def narrow(self) -> int | None:
        """Bytes each instruction moves of its one `b32` register (1: `byte`,
        2: `half`), or None: whole registers."""
        return 1 if self.byte else 2 if self.half else None

    def memory_type(self, cls: str) -> str:
        """The instruction type: the register class's, or a byte's or two's."""
        if self.half:
            return HALF_TYPES[self.name]
        return BYTE_TYPES[self.name] if self.byte else MEMORY_TYPES[cls]

    def _verify_memory(self, addr: SSAValue) -> None:
        if self.space.data not in self.SPACES:
            raise VerifyException(
                f"{self.name}: unknown state space '{self.space.data}'"
            )
        want = "b64" if self.space.data == "global" else "b32"
        if register_class(addr) != want:
            raise VerifyException(
                f"{self.name}: a {self.space.data} address is one {want} register"
            )
        n = len(self.instruction_offsets())
        if not n or self._registers() % n or self.vector not in (1, 2, 4):
            raise VerifyException(
                f"{self.name}: each instruction moves 1, 2 or 4 registers"
            )
        _check_map(self, "the address", addr, self.addr_map or _map_attr(None), n)
        self.verify_guard(n)
        data = self.operands[1] if isinstance(self, StoreOp) else self.results[0]
        if self.half and (self.byte or self.name not in HALF_TYPES):
            raise VerifyException(f"{self.name}: half is not with byte")
        if self.narrow and (register_class(data) != "b32" or self.vector != 1):
            moved = "a byte moves" if self.byte else "two bytes move"
            raise VerifyException(
                f"{self.name}: {moved} one b32 register per instruction"
            )


def _memory_properties(
    space: str,
    offset: int,
    offsets: Sequence[int] | None,
    addr_elements: Sequence[int] | None,
    byte: bool = False,
    half: bool = False,
) -> dict[str, Attribute]:
    props: dict[str, Attribute] = {"space": StringAttr(space), "offset": _i64(offset)}
    if byte:
        props["byte"] = UnitAttr()
    if half:
        props["half"] = UnitAttr()
    if offsets is not None:
        props["offsets"] = _i64_array(tuple(offsets))
    if addr_elements is not None:
        props["addr_map"] = _map_attr(addr_elements)
    return props


@functools.lru_cache(maxsize=1 << 10)
def _i64_array(values: tuple[int, ...]) -> DenseArrayBase:
    return DenseArrayBase(i64, BytesAttr(i64.pack(values)))


def _vector_suffix(n: int) -> str:
    return f"v{n}." if n > 1 else ""


def _braced(values: list[str]) -> str:
    return values[0] if len(values) == 1 else "{" + ", ".join(values) + "}"


@irdl_op_definition
class LoadOp(_Memory):
    """`ld.shared.v2.f32 {%f0, %f1}, [%r3+16];`: 1, 2 or 4 registers per
    instruction, the instructions filling the bundle in order."""

    name = "ptx.ld"

    addr = operand_def(RegType)
    result = result_def(RegType)

    traits = traits_def(MemoryReadEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        space: str,
        addr: SSAValue,
        cls: str,
        count: int,
        offset: int = 0,
        offsets: Sequence[int] | None = None,
        addr_elements: Sequence[int] | None = None,
        byte: bool = False,
        nc: bool = False,
        half: bool = False,
    ):
        props = _memory_properties(space, offset, offsets, addr_elements, byte, half)
        if nc:
            props["nc"] = UnitAttr()
        super().__init__(
            operands=[addr, []], properties=props, result_types=[_reg(cls, count)]
        )

    def _registers(self) -> int:
        return width(self.result)

    def verify_(self) -> None:
        self._verify_memory(self.addr)
        if register_class(self.result) not in MEMORY_TYPES:
            raise VerifyException("ptx.ld: cannot load predicates")
        if self.nc and self.space.data != "global":
            raise VerifyException("ptx.ld: nc is for global loads")

    def print_ptx(self, out: Emitter) -> None:
        n, cls = self.vector, register_class(self.result)
        names = element_texts(self.result)
        addresses = self._addresses(self.addr)
        guards = self.guards(len(addresses))
        space = f"{self.space.data}.nc" if self.nc else self.space.data
        opcode = f"ld.{space}.{_vector_suffix(n)}{self.memory_type(cls)}"
        for i, (guard, address) in enumerate(zip(guards, addresses, strict=True)):
            dst = _braced(list(names[i * n : i * n + n]))
            out.line(f"{guard}{opcode} {dst}, {address};")


@irdl_op_definition
class StoreOp(_Memory):
    """`st.global.v4.b32 [%rd9+32], {%r1, %r2, %r3, %r4};`: 1, 2 or 4 elements
    of `value` per instruction, chosen by `value_map` (the instructions'
    elements in order)."""

    name = "ptx.st"

    addr = operand_def(RegType)
    value = operand_def(RegType | ImmType)
    value_map = prop_def(DenseArrayBase)

    traits = traits_def(MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        space: str,
        addr: SSAValue,
        value: SSAValue,
        elements: Sequence[int],
        offset: int = 0,
        pred: SSAValue | None = None,
        negated: bool = False,
        offsets: Sequence[int] | None = None,
        addr_elements: Sequence[int] | None = None,
        pred_elements: Sequence[int] | None = None,
        byte: bool = False,
        half: bool = False,
    ):
        super().__init__(
            operands=[addr, value, [pred] if pred is not None else []],
            properties={
                **_memory_properties(space, offset, offsets, addr_elements, byte, half),
                "value_map": _map_attr(elements),
                **guard_properties(pred, negated, pred_elements),
            },
        )

    @property
    def elements(self) -> tuple[int, ...]:
        return map_values(self.value_map)

    def _registers(self) -> int:
        return len(self.elements)

    def verify_(self) -> None:
        self._verify_memory(self.addr)
        if any(not 0 <= e < width(self.value) for e in self.elements):
            raise VerifyException("ptx.st: the elements stored are outside the value")
        if register_class(self.value) not in MEMORY_TYPES:
            raise VerifyException("ptx.st: cannot store predicates")

    def print_ptx(self, out: Emitter) -> None:
        n, cls = self.vector, register_class(self.value)
        names = element_texts(self.value, self.value_map)
        addresses = self._addresses(self.addr)
        guards = self.guards(len(addresses))
        opcode = f"st.{self.space.data}.{_vector_suffix(n)}{self.memory_type(cls)}"
        for i, (guard, address) in enumerate(zip(guards, addresses, strict=True)):
            src = _braced(list(names[i * n : i * n + n]))
            out.line(f"{guard}{opcode} {address}, {src};")


# ------------------------------------------------------------ barriers


class _Barrier(Predicated):
    """An mbarrier in shared memory: its address (b32, operand `addr` of each
    subclass) and a byte offset."""

    offset = prop_def(IntegerAttr[I64])

    def __init__(
        self,
        addr: SSAValue,
        offset: int = 0,
        operands: Sequence[SSAValue] = (),
        properties: dict[str, Attribute] | None = None,
        result_types: Sequence[Attribute] = (),
        pred: SSAValue | None = None,
        negated: bool = False,
    ):
        super().__init__(
            operands=[addr, *operands, [pred] if pred is not None else []],
            properties={
                "offset": _i64(offset),
                **(properties or {}),
                **guard_properties(pred, negated),
            },
            result_types=result_types,
        )

    def _address(self) -> str:
        off = self.offset.value.data
        return f"[{operand_text(self.addr)}{f'+{off}' if off else ''}]"

    def _verify_barrier(self) -> None:
        if register_class(self.addr) != "b32" or width(self.addr) != 1:
            raise VerifyException(f"{self.name}: a barrier address is one b32 register")
        self.verify_guard(1)


@irdl_op_definition
class MBarrierInitOp(_Barrier):
    """`mbarrier.init.shared::cta.b64 [%r1+8], 2;`"""

    name = "ptx.mbarrier_init"

    addr = operand_def(RegType)

    count = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self, addr: SSAValue, count: int, offset: int = 0, pred: SSAValue | None = None
    ):
        super().__init__(addr, offset, properties={"count": _i64(count)}, pred=pred)

    def verify_(self) -> None:
        self._verify_barrier()
        if self.count.value.data < 1:
            raise VerifyException("ptx.mbarrier_init: the arrival count must be >= 1")

    def print_ptx(self, out: Emitter) -> None:
        out.line(
            f"{self.guard()}mbarrier.init.shared::cta.b64 {self._address()}, "
            f"{self.count.value.data};"
        )


@irdl_op_definition
class MBarrierArriveOp(_Barrier):
    """`mbarrier.arrive.shared::cta.b64 _, [%r];`, or with `remote` the
    `shared::cluster` form on an address from `mapa` (a peer block's barrier);
    with `expect_tx` bytes, `mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r], N;`."""

    name = "ptx.mbarrier_arrive"

    addr = operand_def(RegType)

    remote = opt_prop_def(UnitAttr)
    expect_tx = opt_prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        addr: SSAValue,
        offset: int = 0,
        expect_tx: int | None = None,
        remote: bool = False,
        pred: SSAValue | None = None,
    ):
        props: dict[str, Attribute] = {}
        if expect_tx is not None:
            props["expect_tx"] = _i64(expect_tx)
        if remote:
            props["remote"] = UnitAttr()
        super().__init__(addr, offset, properties=props, pred=pred)

    def verify_(self) -> None:
        self._verify_barrier()
        if self.remote and self.expect_tx is not None:
            raise VerifyException("ptx.mbarrier_arrive: expect_tx arrives locally")

    def print_ptx(self, out: Emitter) -> None:
        scope = "cluster" if self.remote else "cta"
        if self.expect_tx is not None:
            out.line(
                f"{self.guard()}mbarrier.arrive.expect_tx.shared::cta.b64 _, "
                f"{self._address()}, {self.expect_tx.value.data};"
            )
        else:
            out.line(
                f"{self.guard()}mbarrier.arrive.shared::{scope}.b64 _, {self._address()};"
            )


@irdl_op_definition
class CpAsyncArriveOp(_Barrier):
    """`cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%r];`: an arrival on the
    barrier once every earlier `cp.async` of this thread has landed. Without
    `noinc` the pending count goes up by one first, so the arrival cancels it:
    it only holds the phase open until the copies land, and the thread's own
    `mbarrier.arrive` counts (PTX ISA: cp.async.mbarrier.arrive)."""

    name = "ptx.cp_async_arrive"

    addr = operand_def(RegType)

    noinc = opt_prop_def(UnitAttr)

    traits = traits_def(MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, addr: SSAValue, noinc: bool, pred: SSAValue | None = None):
        props: dict[str, Attribute] = {"noinc": UnitAttr()} if noinc else {}
        super().__init__(addr, 0, properties=props, pred=pred)

    def verify_(self) -> None:
        self._verify_barrier()

    def print_ptx(self, out: Emitter) -> None:
        noinc = ".noinc" if self.noinc else ""
        out.line(
            f"{self.guard()}cp.async.mbarrier.arrive{noinc}.shared::cta.b64 "
            f"{self._address()};"
        )


CP_ASYNC_SIZES = (4, 8, 16)
"""Bytes one `cp.async` may copy (`cp-size`); `.cg` (L2 only) takes 16 only."""


@irdl_op_definition
class CpAsyncOp(PTXOp):
    """`cp.async.cg.shared.global [%r+16], [%rd], 16, %r2;`, one instruction per
    element of `src`: instruction i copies `size` bytes from global address
    `src[i]` to shared address `dst + size i`, of which it reads `src_size[i]`
    (at most `size`) and fills the rest with zeros. The copy is asynchronous:
    a `cp_async_arrive` on an mbarrier says when it has landed."""

    name = "ptx.cp_async"

    dst = operand_def(RegType)
    src = operand_def(RegType)
    src_size = operand_def(RegType | ImmType)
    size = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, dst: SSAValue, src: SSAValue, src_size: SSAValue, size: int):
        super().__init__(operands=[dst, src, src_size], properties={"size": _i64(size)})

    @property
    def bytes(self) -> int:
        return self.size.value.data

    def verify_(self) -> None:
        if register_class(self.dst) != "b32" or width(self.dst) != 1:
            raise VerifyException(
                "ptx.cp_async: the shared address is one b32 register"
            )
        if register_class(self.src) != "b64":
            raise VerifyException("ptx.cp_async: global addresses are b64 registers")
        if register_class(self.src_size) != "b32" or width(self.src_size) != width(
            self.src
        ):
            raise VerifyException(
                "ptx.cp_async: one b32 source size per global address"
            )
        if self.bytes not in CP_ASYNC_SIZES:
            raise VerifyException(
                f"ptx.cp_async: copies 4, 8 or 16 bytes, not {self.bytes}"
            )

    def print_ptx(self, out: Emitter) -> None:
        size, dst = self.bytes, operand_text(self.dst)
        cache = "cg" if size == 16 else "ca"
        sources = element_texts(self.src)
        sizes = element_texts(self.src_size)
        for i, (src, n) in enumerate(zip(sources, sizes, strict=True)):
            at = f"[{dst}+{size * i}]" if i else f"[{dst}]"
            out.line(f"cp.async.{cache}.shared.global {at}, [{src}], {size}, {n};")


@irdl_op_definition
class MBarrierWaitOp(_Barrier):
    """Spin until the phase of `parity` completed:

        L_wait_N:
        mbarrier.try_wait.parity.shared::cta.b64 %p, [%r], %parity;
        @!%p bra L_wait_N;

    `ready` is the predicate register the loop uses (allocated like any other)."""

    name = "ptx.mbarrier_wait"

    addr = operand_def(RegType)

    parity = operand_def(RegType | ImmType)
    ready = result_def(RegType)

    # a write too, as nvgpu_async.mbarrier_wait: the wait orders what follows
    # after the phase's writes, so it is never dead code (its `ready` is read
    # by its own loop only) and nothing moves across it
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, addr: SSAValue, parity: SSAValue, offset: int = 0):
        super().__init__(addr, offset, operands=[parity], result_types=[_reg("pred")])

    def verify_(self) -> None:
        self._verify_barrier()
        if register_class(self.parity) != "b32":
            raise VerifyException("ptx.mbarrier_wait: the parity is a b32 value")
        if register_class(self.ready) != "pred":
            raise VerifyException("ptx.mbarrier_wait: the loop's flag is a predicate")

    def print_ptx(self, out: Emitter) -> None:
        again = out.fresh_label("wait")
        ready = operand_text(self.ready)
        out.label(again)
        out.line(
            f"mbarrier.try_wait.parity.shared::cta.b64 {ready}, {self._address()}, "
            f"{operand_text(self.parity)};"
        )
        out.line(f"@!{ready} bra {again};")


FENCES = frozenset({"mbarrier_init.release.cluster", "proxy.async.shared::cta"})


@irdl_op_definition
class FenceOp(Predicated):
    """`fence.proxy.async.shared::cta;`, `fence.mbarrier_init.release.cluster;`."""

    name = "ptx.fence"

    kind = prop_def(StringAttr)

    def __init__(self, kind: str, pred: SSAValue | None = None):
        super().__init__(
            operands=[[pred] if pred is not None else []],
            properties={"kind": StringAttr(kind)},
        )

    def verify_(self) -> None:
        if self.kind.data not in FENCES:
            raise VerifyException(f"ptx.fence: unknown fence '{self.kind.data}'")
        self.verify_guard(1)

    def print_ptx(self, out: Emitter) -> None:
        out.line(f"{self.guard()}fence.{self.kind.data};")


GRID_DEPENDENCY_CONTROLS = frozenset({"wait", "launch_dependents"})


@irdl_op_definition
class GridDepControlOp(PTXOp):
    """`griddepcontrol.wait;` and `griddepcontrol.launch_dependents;`
    (programmatic dependent launch, PTX ISA 7.8, sm_90)."""

    name = "ptx.griddepcontrol"

    kind = prop_def(StringAttr)

    def __init__(self, kind: str):
        super().__init__(properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        if self.kind.data not in GRID_DEPENDENCY_CONTROLS:
            raise VerifyException(
                f"ptx.griddepcontrol: unknown control '{self.kind.data}'"
            )

    def print_ptx(self, out: Emitter) -> None:
        out.line(f"griddepcontrol.{self.kind.data};")


@irdl_op_definition
class BarOp(Predicated):
    """A named CTA barrier: `bar.sync 0;`, `bar.sync 1, 256;`, `bar.arrive %r, 256;`
    (`arrive` does not wait), optionally guarded (`@%p bar.arrive 2, 256;`: the
    last ping-pong warpgroup opens the first turn). The id is an immediate or a
    register."""

    name = "ptx.bar"

    barrier = operand_def(RegType | ImmType)
    threads = opt_prop_def(IntegerAttr[I64])
    arrive = opt_prop_def(UnitAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        barrier: SSAValue,
        threads: int | None = None,
        arrive: bool = False,
        pred: SSAValue | None = None,
    ):
        props: dict[str, Attribute] = {}
        if threads is not None:
            props["threads"] = _i64(threads)
        if arrive:
            props["arrive"] = UnitAttr()
        super().__init__(
            operands=[barrier, [pred] if pred is not None else []],
            properties={**props, **guard_properties(pred)},
        )

    def verify_(self) -> None:
        if register_class(self.barrier) != "b32" or width(self.barrier) != 1:
            raise VerifyException("ptx.bar: the barrier id is one b32 value")
        if self.threads is not None and (
            self.threads.value.data < 32 or self.threads.value.data % 32
        ):
            raise VerifyException("ptx.bar: the thread count is a multiple of 32")
        self.verify_guard(1)

    def print_ptx(self, out: Emitter) -> None:
        kind = "arrive" if self.arrive else "sync"
        count = f", {self.threads.value.data}" if self.threads is not None else ""
        out.line(f"{self.guard()}bar.{kind} {operand_text(self.barrier)}{count};")


@irdl_op_definition
class ClusterBarrierOp(PTXOp):
    """Every thread of every block of the cluster meets here (not `.aligned`:
    producer warps arrive from diverged branches)."""

    name = "ptx.cluster_barrier"

    def print_ptx(self, out: Emitter) -> None:
        out.line("barrier.cluster.arrive.release;")
        out.line("barrier.cluster.wait.acquire;")


# ------------------------------------------------------------------ TMA


@irdl_op_definition
class TMALoadOp(Predicated):
    """One box from global memory into shared memory, completing transaction
    bytes on a barrier, optionally multicast to the blocks in `mask` (b16):
    `cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
    [%r+off], [%rd, {%c0, %c1}], [%bar];` (coordinates innermost first)."""

    name = "ptx.tma_load"

    dst = operand_def(RegType)
    tensor_map = operand_def(RegType)
    coords = var_operand_def(RegType | ImmType)
    barrier = operand_def(RegType)
    mask = opt_operand_def(RegType)
    offset = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryWriteEffect(), MemoryReadEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        dst: SSAValue,
        tensor_map: SSAValue,
        coords: Sequence[SSAValue],
        barrier: SSAValue,
        offset: int = 0,
        mask: SSAValue | None = None,
        pred: SSAValue | None = None,
    ):
        super().__init__(
            operands=[
                dst,
                tensor_map,
                list(coords),
                barrier,
                [mask] if mask is not None else [],
                [pred] if pred is not None else [],
            ],
            properties={"offset": _i64(offset), **guard_properties(pred)},
        )

    def verify_(self) -> None:
        if not 1 <= len(self.coords) <= 5:
            raise VerifyException("ptx.tma_load: 1 to 5 coordinates")
        self.verify_guard(1)

    def print_ptx(self, out: Emitter) -> None:
        off = self.offset.value.data
        coords = ", ".join(operand_text(c) for c in self.coords)
        multicast = ".multicast::cluster" if self.mask is not None else ""
        tail = f", {operand_text(self.mask)}" if self.mask is not None else ""
        out.line(
            f"{self.guard()}cp.async.bulk.tensor.{len(self.coords)}d.shared::cluster.global."
            f"mbarrier::complete_tx::bytes{multicast} [{operand_text(self.dst)}"
            f"{f'+{off}' if off else ''}], [{operand_text(self.tensor_map)}, {{{coords}}}], "
            f"[{operand_text(self.barrier)}]{tail};"
        )


@irdl_op_definition
class TMAStoreOp(Predicated):
    """One box from shared memory to global memory, in the bulk group:
    `cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd, {..}], [%r+off];`."""

    name = "ptx.tma_store"

    tensor_map = operand_def(RegType)
    coords = var_operand_def(RegType | ImmType)
    src = operand_def(RegType)
    offset = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryWriteEffect(), MemoryReadEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        tensor_map: SSAValue,
        coords: Sequence[SSAValue],
        src: SSAValue,
        offset: int = 0,
        pred: SSAValue | None = None,
    ):
        super().__init__(
            operands=[
                tensor_map,
                list(coords),
                src,
                [pred] if pred is not None else [],
            ],
            properties={"offset": _i64(offset)},
        )

    def verify_(self) -> None:
        if not 1 <= len(self.coords) <= 5:
            raise VerifyException("ptx.tma_store: 1 to 5 coordinates")
        self.verify_guard(1)

    def print_ptx(self, out: Emitter) -> None:
        off = self.offset.value.data
        coords = ", ".join(operand_text(c) for c in self.coords)
        out.line(
            f"{self.guard()}cp.async.bulk.tensor.{len(self.coords)}d.global.shared::cta."
            f"bulk_group [{operand_text(self.tensor_map)}, {{{coords}}}], "
            f"[{operand_text(self.src)}{f'+{off}' if off else ''}];"
        )


@irdl_op_definition
class BulkCommitOp(Predicated):
    """`cp.async.bulk.commit_group;`: closes the bulk group of TMA stores."""

    name = "ptx.bulk_commit"

    def __init__(self, pred: SSAValue | None = None):
        super().__init__(operands=[[pred] if pred is not None else []])

    def print_ptx(self, out: Emitter) -> None:
        out.line(f"{self.guard()}cp.async.bulk.commit_group;")


@irdl_op_definition
class BulkWaitOp(Predicated):
    """`cp.async.bulk.wait_group.read N;`: at most N bulk groups still read
    shared memory; with `writes`, `cp.async.bulk.wait_group N;`: at most N
    still write global memory."""

    name = "ptx.bulk_wait"

    pending = prop_def(IntegerAttr[I64])
    writes = opt_prop_def(UnitAttr)

    def __init__(
        self, pending: int, pred: SSAValue | None = None, writes: bool = False
    ):
        properties: dict[str, Attribute] = {"pending": _i64(pending)}
        if writes:
            properties["writes"] = UnitAttr()
        super().__init__(
            operands=[[pred] if pred is not None else []], properties=properties
        )

    def print_ptx(self, out: Emitter) -> None:
        read = "" if self.writes else ".read"
        out.line(
            f"{self.guard()}cp.async.bulk.wait_group{read} {self.pending.value.data};"
        )


@irdl_op_definition
class PrefetchTensorMapOp(PTXOp):
    """`prefetch.tensormap [%rd];`"""

    name = "ptx.prefetch_tensormap"

    tensor_map = operand_def(RegType)

    def __init__(self, tensor_map: SSAValue):
        super().__init__(operands=[tensor_map])

    def print_ptx(self, out: Emitter) -> None:
        out.line(f"prefetch.tensormap [{operand_text(self.tensor_map)}];")


# ----------------------------------------------------------------- wgmma


@irdl_op_definition
class WgmmaFenceOp(PTXOp):
    """`wgmma.fence.sync.aligned;`: register and shared-memory operands written
    before it are visible to the wgmmas after it."""

    name = "ptx.wgmma_fence"

    def print_ptx(self, out: Emitter) -> None:
        out.line("wgmma.fence.sync.aligned;")


@irdl_op_definition
class WgmmaCommitOp(PTXOp):
    """`wgmma.commit_group.sync.aligned;`"""

    name = "ptx.wgmma_commit"

    def print_ptx(self, out: Emitter) -> None:
        out.line("wgmma.commit_group.sync.aligned;")


@irdl_op_definition
class WgmmaWaitOp(PTXOp):
    """`wgmma.wait_group.sync.aligned N;`"""

    name = "ptx.wgmma_wait"

    pending = prop_def(IntegerAttr[I64])

    def __init__(self, pending: int):
        super().__init__(properties={"pending": _i64(pending)})

    def print_ptx(self, out: Emitter) -> None:
        out.line(f"wgmma.wait_group.sync.aligned {self.pending.value.data};")


@irdl_op_definition
class WgmmaOp(PTXOp):
    """One `wgmma.mma_async` on registers `[start, start + n/2)` of the
    accumulator bundle `acc` (the result is the whole bundle, those registers
    updated): A from shared memory (a b64 descriptor) or from registers (four
    b32 of `a`, chosen by `a_map`), B from a descriptor; `scale_d` false ignores
    the accumulator's old value. Without `acc` (the first MMA of a chain that
    starts from zero, `scale_d` false) the result's other registers are not yet
    written.

    `wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {d..}, a, b, p, 1, 1[, 0], tB;`

    `dtype` is `bf16` or `f16` (both inputs), or `<a>.<b>` for 8-bit inputs
    (`e4m3.e5m2`): those take k32 steps and have no transpose immediates (both
    operands K-major, `transpose_b` 0). `transpose_a` 1 reads a 16-bit A from
    shared memory MN-major (stored K x M; the SS form's imm-trans-a).
    """

    name = "ptx.wgmma"

    acc = opt_operand_def(RegType)
    a = operand_def(RegType)
    b = operand_def(RegType)
    scale_d = operand_def(RegType)
    a_map = prop_def(DenseArrayBase)
    shape = prop_def(StringAttr)
    dtype = prop_def(StringAttr)
    start = prop_def(IntegerAttr[I64])
    transpose_b = prop_def(IntegerAttr[I64])
    transpose_a = opt_prop_def(IntegerAttr[I64])
    """1: A from shared memory MN-major; absent: K-major (or registers)."""
    result = result_def(RegType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    DTYPES_16: ClassVar[frozenset[str]] = frozenset({"bf16", "f16"})
    DTYPES_8: ClassVar[frozenset[str]] = frozenset({"e4m3", "e5m2"})

    def __init__(
        self,
        acc: SSAValue | RegType,
        a: SSAValue,
        b: SSAValue,
        scale_d: SSAValue,
        shape: str,
        dtype: str,
        start: int,
        transpose_b: int,
        a_elements: Sequence[int] = (),
        transpose_a: int = 0,
    ):
        t = acc if isinstance(acc, RegType) else acc.type
        assert isinstance(t, RegType)
        super().__init__(
            operands=[[] if isinstance(acc, RegType) else [acc], a, b, scale_d],
            properties={
                "a_map": _map_attr(a_elements),
                "shape": StringAttr(shape),
                "dtype": StringAttr(dtype),
                "start": _i64(start),
                "transpose_b": _i64(transpose_b),
                **({"transpose_a": _i64(1)} if transpose_a else {}),
            },
            result_types=[t.unallocated()],
        )

    @property
    def n(self) -> int:
        return int(self.shape.data.split("n")[1].split("k")[0])

    @property
    def a_transposed(self) -> bool:
        return self.transpose_a is not None and bool(self.transpose_a.value.data)

    @property
    def a_in_registers(self) -> bool:
        return register_class(self.a) == "b32"

    @property
    def input_types(self) -> tuple[str, str]:
        """The PTX types of A and B."""
        a, _, b = self.dtype.data.partition(".")
        return a, b or a

    @property
    def eight_bit(self) -> bool:
        return self.input_types[0] in self.DTYPES_8

    def tied_operand(self) -> SSAValue | None:
        return self.acc

    def verify_(self) -> None:
        a, b = self.input_types
        sixteen = a in self.DTYPES_16 and b == a and "." not in self.dtype.data
        eight = a in self.DTYPES_8 and b in self.DTYPES_8
        if not (sixteen or eight):
            raise VerifyException(
                f"ptx.wgmma: unsupported input types {self.dtype.data} (bf16, f16, "
                "or <a>.<b> of e4m3/e5m2)"
            )
        k = 32 if eight else 16
        if not self.shape.data.endswith(f"k{k}"):
            raise VerifyException(
                f"ptx.wgmma: {self.dtype.data} inputs take k{k} steps, not "
                f"{self.shape.data}"
            )
        if eight and (self.transpose_b.value.data or self.a_transposed):
            raise VerifyException("ptx.wgmma: 8-bit operands cannot be transposed")
        if self.a_transposed and self.a_in_registers:
            raise VerifyException(
                "ptx.wgmma: only an A operand in shared memory can be transposed"
            )
        if register_class(self.result) != "f32" or (
            self.acc is not None
            and _unallocated(self.result.type) != _unallocated(self.acc.type)
        ):
            raise VerifyException(
                "ptx.wgmma: the accumulator is an f32 bundle, as is the result"
            )
        half = self.n // 2
        if not 0 <= self.start.value.data <= width(self.result) - half:
            raise VerifyException(
                "ptx.wgmma: the accumulator registers are outside the bundle"
            )
        if self.a_in_registers:
            if len(map_values(self.a_map)) != 4:
                raise VerifyException(
                    "ptx.wgmma: a register A operand is four b32 registers"
                )
        elif register_class(self.a) != "b64":
            raise VerifyException("ptx.wgmma: A is a b64 descriptor or b32 registers")
        if register_class(self.b) != "b64" or register_class(self.scale_d) != "pred":
            raise VerifyException(
                "ptx.wgmma: B is a b64 descriptor, scale-d a predicate"
            )

    def print_ptx(self, out: Emitter) -> None:
        half, start = self.n // 2, self.start.value.data
        d = ", ".join(element_texts(self.result)[start : start + half])
        a_type, b_type = self.input_types
        opcode = f"wgmma.mma_async.sync.aligned.{self.shape.data}.f32.{a_type}.{b_type}"
        b, scale = operand_text(self.b), operand_text(self.scale_d)
        tb = self.transpose_b.value.data
        if self.a_in_registers:
            a = (
                "{"
                + ", ".join(operand_text(self.a, e) for e in map_values(self.a_map))
                + "}"
            )
            transposes = "" if self.eight_bit else f", {tb}"
        else:
            a = operand_text(self.a)
            ta = int(self.a_transposed)
            transposes = "" if self.eight_bit else f", {ta}, {tb}"
        out.line(f"{opcode} {{{d}}}, {a}, {b}, {scale}, 1, 1{transposes};")


@irdl_op_definition
class SetMaxNRegOp(PTXOp):
    """`setmaxnreg.inc.sync.aligned.u32 240;`"""

    name = "ptx.setmaxnreg"

    action = prop_def(StringAttr)
    regs = prop_def(IntegerAttr[I64])

    def __init__(self, action: str, regs: int):
        super().__init__(properties={"action": StringAttr(action), "regs": _i64(regs)})

    def verify_(self) -> None:
        if self.action.data not in ("inc", "dec"):
            raise VerifyException("ptx.setmaxnreg: the action is inc or dec")
        regs = self.regs.value.data
        if regs % 8 or not 24 <= regs <= 256:
            raise VerifyException("ptx.setmaxnreg: a multiple of 8 in [24, 256]")

    def print_ptx(self, out: Emitter) -> None:
        out.line(
            f"setmaxnreg.{self.action.data}.sync.aligned.u32 {self.regs.value.data};"
        )


# --------------------------------------------------------- control flow


@irdl_op_definition
class YieldOp(PTXOp):
    """Ends a `ptx.for` body, a `ptx.if` branch or a `ptx.while`'s `after`
    region with the values it passes on."""

    name = "ptx.yield"

    values = var_operand_def(RegType | ImmType)

    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(ForOp, IfOp, WhileOp)))

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])

    def print(self, printer: Printer) -> None:
        _print_typed_values(printer, self.values)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        return cls(*_parse_typed_values(parser))

    def print_ptx(self, out: Emitter) -> None:
        pass


@irdl_op_definition
class ForOp(PTXOp):
    """`for (iv = lb; iv < ub; iv += step)` (signed 32-bit compares), carrying
    bundles from one iteration to the next. The step saturates at 2^31 - 1
    (`add.sat.s32`): a bound within a step of it (K = 2^31 - 1) ends the
    loop, where a wrapping add would turn the counter negative and loop on
    for ever. `ptx-lower-control-flow` turns it into labels and branches
    after allocation."""

    name = "ptx.for"

    lb = operand_def(RegType | ImmType)
    ub = operand_def(RegType | ImmType)
    step = operand_def(RegType | ImmType)
    iter_args = var_operand_def(RegType | ImmType)
    res = var_result_def(RegType)
    body = region_def("single_block")

    traits = traits_def(SingleBlockImplicitTerminator(YieldOp))

    def __init__(
        self,
        lb: SSAValue,
        ub: SSAValue,
        step: SSAValue,
        iter_args: Sequence[SSAValue],
        body: Region,
        result_types: Sequence[Attribute],
    ):
        super().__init__(
            operands=[lb, ub, step, list(iter_args)],
            result_types=[list(result_types)],
            regions=[body],
        )

    def verify_(self) -> None:
        for bound in (self.lb, self.ub, self.step):
            if register_class(bound) != "b32" or width(bound) != 1:
                raise VerifyException("ptx.for: bounds and step are b32 scalars")
        block = self.body.block
        if len(block.args) != 1 + len(self.iter_args):
            raise VerifyException(
                "ptx.for: the body takes the counter and each carried value"
            )
        if len(self.res) != len(self.iter_args):
            raise VerifyException("ptx.for: one result per carried value")
        for arg, res in zip(block.args[1:], self.res, strict=True):
            if _unallocated(arg.type) != _unallocated(res.type):
                raise VerifyException("ptx.for: a carried value keeps its type")
        last = block.last_op
        if isinstance(last, YieldOp) and [
            _unallocated(v.type) for v in last.values
        ] != [_unallocated(r.type) for r in self.res]:
            raise VerifyException(
                "ptx.for: the body yields one value per result, typed alike"
            )

    def print(self, printer: Printer) -> None:
        block = self.body.block
        printer.print_string(" ")
        printer.print_operand(block.args[0])
        printer.print_string(" = ")
        printer.print_operand(self.lb)
        printer.print_string(" to ")
        printer.print_operand(self.ub)
        printer.print_string(" step ")
        printer.print_operand(self.step)
        printer.print_string(" : ")
        printer.print_function_type(
            [self.lb.type, self.ub.type, self.step.type], [block.args[0].type]
        )
        if self.iter_args:
            printer.print_string(" iter_args(")
            printer.print_list(
                zip(block.args[1:], self.iter_args, strict=True),
                lambda pair: _print_binding(printer, *pair),
            )
            printer.print_string(") -> (")
            printer.print_list(self.res, lambda r: printer.print_attribute(r.type))
            printer.print_string(")")
        printer.print_string(" ")
        printer.print_region(
            self.body,
            print_entry_block_args=False,
            print_block_terminators=bool(self.res),
        )

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        iv = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        bounds = [parser.parse_unresolved_operand()]
        for keyword in ("to", "step"):
            parser.parse_keyword(keyword)
            bounds.append(parser.parse_unresolved_operand())
        parser.parse_punctuation(":")
        signature = parser.parse_function_type()
        lb, ub, step = (
            parser.resolve_operand(b, t)
            for b, t in zip(bounds, signature.inputs.data, strict=True)
        )
        args = [iv.resolve(signature.outputs.data[0])]
        inits: list[SSAValue] = []
        result_types: list[Attribute] = []
        if parser.parse_optional_keyword("iter_args") is not None:
            carried, inits, result_types = _parse_bindings(parser)
            args += carried
        body = parser.parse_region(args)
        op = cls(lb, ub, step, inits, body, result_types)
        _ensure_yield(op.body)
        return op


def _print_binding(printer: Printer, arg: SSAValue, init: SSAValue) -> None:
    printer.print_operand(arg)
    printer.print_string(" = ")
    printer.print_operand(init)
    printer.print_string(" : ")
    printer.print_attribute(init.type)


def _parse_bindings(
    parser: Parser,
) -> tuple[list[Parser.Argument], list[SSAValue], list[Attribute]]:
    """`(%arg = %init : type, ...) -> (types)` of a `ptx.for` or `ptx.while`:
    the carried block arguments, their initial values and the result types."""
    args: list[Parser.Argument] = []
    inits: list[SSAValue] = []

    def binding() -> None:
        arg = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        init = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        inits.append(parser.resolve_operand(init, t))
        args.append(arg.resolve(t))

    parser.parse_comma_separated_list(parser.Delimiter.PAREN, binding)
    parser.parse_punctuation("->")
    result_types = parser.parse_comma_separated_list(
        parser.Delimiter.PAREN, parser.parse_type
    )
    return args, inits, result_types


def _print_typed_values(printer: Printer, values: Sequence[SSAValue]) -> None:
    """` %a, %b : type, type` after a terminator (nothing when there are none)."""
    if values:
        printer.print_string(" ")
        printer.print_list(values, printer.print_operand)
        printer.print_string(" : ")
        printer.print_list(values, lambda v: printer.print_attribute(v.type))


def _parse_typed_values(parser: Parser) -> list[SSAValue]:
    """What `_print_typed_values` prints."""
    values = parser.parse_optional_undelimited_comma_separated_list(
        parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
    )
    if not values:
        return []
    parser.parse_punctuation(":")
    types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
    return parser.resolve_operands(values, types, parser.pos)


def _ensure_yield(region: Region) -> None:
    """A body printed without its empty `ptx.yield` gets it back."""
    for block in region.blocks:
        if not isinstance(block.last_op, YieldOp):
            block.add_op(YieldOp())


def _unallocated(t: Attribute) -> Attribute:
    return t.unallocated() if isinstance(t, RegType) else t


@irdl_op_definition
class IfOp(PTXOp):
    """Run `then` where `cond` holds, `otherwise` elsewhere; results are what the
    branch taken yields. `uniform` promises the condition is the same in every
    lane of a warp (printed as `bra.uni`). `label` names the label its end
    lowers to (`L_<label>_<n>`, `endif` when absent), so that a branch made for
    one purpose reads as such in the PTX (`L_unit_scale_3`)."""

    name = "ptx.if"

    cond = operand_def(RegType)
    uniform = opt_prop_def(UnitAttr)
    label = opt_prop_def(StringAttr)
    res = var_result_def(RegType)
    then = region_def("single_block")
    otherwise = region_def()

    traits = traits_def(SingleBlockImplicitTerminator(YieldOp))

    def __init__(
        self,
        cond: SSAValue,
        then: Region,
        otherwise: Region,
        result_types: Sequence[Attribute] = (),
        uniform: bool = False,
        label: str | None = None,
    ):
        props: dict[str, Attribute] = {"uniform": UnitAttr()} if uniform else {}
        if label is not None:
            props["label"] = StringAttr(label)
        super().__init__(
            operands=[cond],
            result_types=[list(result_types)],
            regions=[then, otherwise],
            properties=props,
        )

    def verify_(self) -> None:
        if register_class(self.cond) != "pred" or width(self.cond) != 1:
            raise VerifyException("ptx.if: the condition is one predicate")
        if self.res and not self.otherwise.blocks:
            raise VerifyException("ptx.if: an if with results needs both branches")

    def print(self, printer: Printer) -> None:
        printer.print_string(" uniform" if self.uniform else "")
        printer.print_string(" ")
        printer.print_operand(self.cond)
        printer.print_string(" : ")
        printer.print_attribute(self.cond.type)
        if self.label is not None:
            printer.print_string(" label ")
            printer.print_string_literal(self.label.data)
        if self.res:
            printer.print_string(" -> (")
            printer.print_list(self.res, lambda r: printer.print_attribute(r.type))
            printer.print_string(")")
        printer.print_string(" ")
        printer.print_region(self.then, print_block_terminators=bool(self.res))
        if self.otherwise.blocks:
            printer.print_string(" else ")
            printer.print_region(self.otherwise, print_block_terminators=bool(self.res))

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        uniform = parser.parse_optional_keyword("uniform") is not None
        cond = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        cond_value = parser.resolve_operand(cond, parser.parse_type())
        label = None
        if parser.parse_optional_keyword("label") is not None:
            label = parser.parse_str_literal()
        result_types: list[Attribute] = []
        if parser.parse_optional_punctuation("->") is not None:
            result_types = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_type
            )
        then = parser.parse_region()
        otherwise = Region()
        if parser.parse_optional_keyword("else") is not None:
            otherwise = parser.parse_region()
        op = cls(cond_value, then, otherwise, result_types, uniform, label)
        _ensure_yield(op.then)
        _ensure_yield(op.otherwise)
        return op


@irdl_op_definition
class ConditionOp(PTXOp):
    """Ends a `ptx.while`'s `before` region: where `cond` holds, `values` go
    on to the `after` region; elsewhere they are the loop's results.
    `ptx.condition(%p : !ptx.reg<pred>) %a, %b : T, U`."""

    name = "ptx.condition"

    cond = operand_def(RegType)
    values = var_operand_def(RegType | ImmType)

    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(WhileOp)))

    def __init__(self, cond: SSAValue, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[cond, list(values)])

    def verify_(self) -> None:
        if register_class(self.cond) != "pred" or width(self.cond) != 1:
            raise VerifyException("ptx.condition: the condition is one predicate")

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_operand(self.cond)
        printer.print_string(" : ")
        printer.print_attribute(self.cond.type)
        printer.print_string(")")
        _print_typed_values(printer, self.values)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        parser.parse_punctuation("(")
        cond = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        cond_value = parser.resolve_operand(cond, parser.parse_type())
        parser.parse_punctuation(")")
        return cls(cond_value, _parse_typed_values(parser))


@irdl_op_definition
class WhileOp(PTXOp):
    """`scf.while` at the thread level: `before` (its arguments the carried
    bundles, first the initial values) computes a predicate and ends in
    `ptx.condition`; where it holds, the values the condition forwards are the
    arguments of `after`, whose `ptx.yield` carries bundles back to `before`;
    where it does not, they are the results. `ptx-lower-control-flow` turns it
    into labels and branches after allocation.

        %r = ptx.while (%a = %init : T) -> (U) {
          ...
          ptx.condition(%p : !ptx.reg<pred>) %x : U
        } do {
        ^bb0(%y : U):
          ...
          ptx.yield %z : T
        }"""

    name = "ptx.while"

    inits = var_operand_def(RegType | ImmType)
    res = var_result_def(RegType)
    before = region_def("single_block")
    after = region_def("single_block")

    def __init__(
        self,
        inits: Sequence[SSAValue],
        before: Region,
        after: Region,
        result_types: Sequence[Attribute],
    ):
        super().__init__(
            operands=[list(inits)],
            result_types=[list(result_types)],
            regions=[before, after],
        )

    def verify_(self) -> None:
        before, after = self.before.block, self.after.block
        if not isinstance(before.last_op, ConditionOp):
            raise VerifyException("ptx.while: the before region ends in ptx.condition")
        if not isinstance(after.last_op, YieldOp):
            raise VerifyException("ptx.while: the after region ends in ptx.yield")
        carried = [a.type for a in before.args]
        if len(carried) != len(self.inits) or any(
            not isinstance(t, RegType) or _bundle(v.type) != _bundle(t)
            for v, t in zip(self.inits, carried, strict=True)
        ):
            raise VerifyException(
                "ptx.while: the before region takes one argument per initial "
                "value, of its class and width"
            )
        results = [_unallocated(r.type) for r in self.res]
        for what, values in (
            ("the condition forwards", before.last_op.values),
            ("the after region takes", after.args),
        ):
            if [_unallocated(v.type) for v in values] != results:
                raise VerifyException(
                    f"ptx.while: {what} one value per result, typed alike"
                )
        if [_unallocated(v.type) for v in after.last_op.values] != [
            _unallocated(t) for t in carried
        ]:
            raise VerifyException(
                "ptx.while: the after region yields one value per carried value, "
                "typed alike"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" (")
        printer.print_list(
            zip(self.before.block.args, self.inits, strict=True),
            lambda pair: _print_binding(printer, *pair),
        )
        printer.print_string(") -> (")
        printer.print_list(self.res, lambda r: printer.print_attribute(r.type))
        printer.print_string(") ")
        printer.print_region(self.before, print_entry_block_args=False)
        printer.print_string(" do ")
        printer.print_region(self.after)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        args, inits, result_types = _parse_bindings(parser)
        before = parser.parse_region(args)
        parser.parse_keyword("do")
        after = parser.parse_region()
        return cls(inits, before, after, result_types)


def _bundle(t: Attribute) -> tuple[str, int] | None:
    """The class and width of a register bundle or an immediate."""
    return (t.register_class, t.size) if isinstance(t, RegType | ImmType) else None


STRUCTURED = (ForOp, IfOp, WhileOp)
"""The ops `ptx-lower-control-flow` lowers (the printer refuses them)."""


@irdl_op_definition
class LabelOp(PTXOp):
    """A branch target (after control flow is lowered)."""

    name = "ptx.label"

    label = prop_def(StringAttr)

    def __init__(self, label: str):
        super().__init__(properties={"label": StringAttr(label)})

    def print_ptx(self, out: Emitter) -> None:
        out.label(self.label.data)


@irdl_op_definition
class BraOp(Predicated):
    """`[@%p] bra[.uni] L;`"""

    name = "ptx.bra"

    target = prop_def(StringAttr)
    uniform = opt_prop_def(UnitAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        target: str,
        pred: SSAValue | None = None,
        negated: bool = False,
        uniform: bool = False,
    ):
        props: dict[str, Attribute] = {"target": StringAttr(target)}
        if uniform:
            props["uniform"] = UnitAttr()
        super().__init__(
            operands=[[pred] if pred is not None else []],
            properties={**props, **guard_properties(pred, negated)},
        )

    def print_ptx(self, out: Emitter) -> None:
        out.line(
            f"{self.guard()}bra{'.uni' if self.uniform else ''} {self.target.data};"
        )


def ops_in_order(region: Region) -> Iterator[Operation]:
    """Every op of a region, nested ones included, in program order."""
    for block in region.blocks:
        for op in block.ops:
            yield op
            for inner in op.regions:
                yield from ops_in_order(inner)


PTX = Dialect(
    "ptx",
    [
        ImmOp,
        SpecialOp,
        ParamOp,
        AluOp,
        UnpackOp,
        PackOp,
        ShflOp,
        ShflIdxOp,
        VoteAnyOp,
        TileTicketOp,
        LoadOp,
        StoreOp,
        MBarrierInitOp,
        MBarrierArriveOp,
        MBarrierWaitOp,
        CpAsyncArriveOp,
        CpAsyncOp,
        FenceOp,
        GridDepControlOp,
        BarOp,
        ClusterBarrierOp,
        TMALoadOp,
        TMAStoreOp,
        BulkCommitOp,
        BulkWaitOp,
        PrefetchTensorMapOp,
        WgmmaFenceOp,
        WgmmaCommitOp,
        WgmmaWaitOp,
        WgmmaOp,
        SetMaxNRegOp,
        YieldOp,
        ForOp,
        IfOp,
        ConditionOp,
        WhileOp,
        LabelOp,
        BraOp,
    ],
    [RegType, ImmType, ParamDeclAttr],
)
