"""The tile dialect: what one thread block computes, written on whole tiles.

A tile kernel is a `func.func` carrying the unit attribute `tile.kernel`. Its
arguments are global tensors (`!tile.desc`) and scalars; tiles are builtin
`tensor` values, so elementwise math reuses `arith` and `math` unchanged. The ops
here are the ones MLIR lacks: block coordinates, boxed loads and stores of global
tensors (what TMA does), the tensor-core product, and the shape-changing ops an
online softmax needs.

Semantics (the reference interpreter implements exactly these):
- `tile.load %d[%i, %j]` reads the box of `%d` whose first element is at element
  offsets (i, j); elements outside the tensor read as zero.
- `tile.store %v, %d[%i, %j]` writes the box; elements outside the tensor are
  dropped. Together these make edge tiles of any problem size correct.
- `tile.dot %a, %b, %acc` is acc + a @ b with f32 accumulation; the inputs are
  both bf16, both f16, or 8-bit floats (`f8E4M3FN`, `f8E5M2`, mixed as wgmma
  allows). The product of the exact inputs is what the interpreter computes.
- A cast to an 8-bit float (`arith.truncf` to `f8E4M3FN` / `f8E5M2`) rounds to
  nearest even and saturates, as the GPU's `cvt.rn.satfinite` does: a magnitude
  beyond the largest finite value (448 for e4m3, 57344 for e5m2), infinities
  included, becomes that value with its sign; NaN stays NaN.
- `tile.cmpf` is LLVM's `fcmp`: an ordered predicate is false where either side
  is NaN, an unordered one true. `tile.fptosi` / `tile.fptoui` round towards
  zero and saturate to the integer range, NaN to 0, as PTX `cvt.rzi` does.
- Tile extents are in elements everywhere; byte sizes (TMA boxes, swizzle
  chunks, ring slots) follow from `element_bytes`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import auto
from typing import TYPE_CHECKING, ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    ArrayAttr,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    UnitAttr,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasCanonicalizationPatternsTrait,
    MemoryReadEffect,
    MemoryWriteEffect,
    Pure,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from tawa_xdsl.target import MAX_BOX_DIM

if TYPE_CHECKING:
    from xdsl.pattern_rewriter import RewritePattern

KERNEL_ATTR = "tile.kernel"
"""Unit attribute that marks a `func.func` as a tile kernel."""


FP8_TYPES = (Float8E4M3FNType, Float8E5M2Type)
"""The 8-bit floats the tensor cores read (wgmma `.e4m3`, `.e5m2`)."""
DOT_INPUT_TYPES = (BFloat16Type, Float16Type, *FP8_TYPES)
DESC_FLOAT_TYPES = (BFloat16Type, Float16Type, Float32Type, *FP8_TYPES)
DESC_ELEMENTS = "bf16, f16, f32, f8E4M3FN, f8E5M2, i8, i32 or i64"
"""The element types a `!tile.desc` holds, as its verifier names them."""
STORAGE_INTEGERS = (IntegerType(8), IntegerType(64))
"""Integer element types tensors hold but tiles do not compute in: i8 (labels,
quantized values; signed, a byte in memory, sign-extended in a 32-bit
register) and i64 (indices; a 64-bit register each). A tile of them is loaded,
stored, broadcast, and converted to and from i32 (`tile.extsi`, `tile.trunci`)."""


def is_i32(element_type: Attribute) -> bool:
    """The integer element type tiles compute in (compares, selects,
    reductions, arithmetic): signless 32-bit, one register per element like
    f32; i8 and i64 tiles (`STORAGE_INTEGERS`) convert to it first."""
    return element_type == IntegerType(32)


def is_i8(element_type: Attribute) -> bool:
    """A byte in memory, its value sign-extended in a 32-bit register: each
    element is loaded (`ld.shared.s8`) and stored (`st.u8`) on its own."""
    return element_type == IntegerType(8)


def is_storage_integer(element_type: Attribute) -> bool:
    """i8 or i64: an integer a tensor holds but a tile only moves (see
    `STORAGE_INTEGERS`)."""
    return element_type in STORAGE_INTEGERS


def desc_element_problem(element_type: Attribute) -> str | None:
    """Why `element_type` cannot be a descriptor's, or None."""
    if (
        isinstance(element_type, DESC_FLOAT_TYPES)
        or is_i32(element_type)
        or is_storage_integer(element_type)
    ):
        return None
    problem = f"!tile.desc element type must be {DESC_ELEMENTS}, got {element_type}"
    if isinstance(element_type, IntegerType):
        problem += (
            " (integer tensors are signless i8, i32 or i64; widen or narrow "
            "others to one of them outside the kernel)"
        )
    return problem


def element_bytes(element_type: Attribute) -> int:
    """Size in bytes of one element of a supported tile element type."""
    if isinstance(element_type, FP8_TYPES):
        return 1
    if isinstance(element_type, BFloat16Type | Float16Type):
        return 2
    if isinstance(element_type, Float32Type):
        return 4
    if isinstance(element_type, IntegerType):
        return max(1, element_type.width.data // 8)
    raise ValueError(f"unsupported element type {element_type}")


def is_fp8(element_type: Attribute) -> bool:
    return isinstance(element_type, FP8_TYPES)


def dot_input_problem(lhs: Attribute, rhs: Attribute) -> str | None:
    """Why two element types cannot be the inputs of one tensor-core product, or
    None. wgmma takes two equal 16-bit types, or any two 8-bit floats (e4m3 and
    e5m2 mix freely); it never mixes a 16-bit with an 8-bit input."""
    if not isinstance(lhs, DOT_INPUT_TYPES) or not isinstance(rhs, DOT_INPUT_TYPES):
        problem = f"inputs must be bf16, f16, f8E4M3FN or f8E5M2, got {lhs} and {rhs}"
        if isinstance(lhs, IntegerType) or isinstance(rhs, IntegerType):
            problem += " (integer tiles have no tensor-core product here)"
        return problem
    if (is_fp8(lhs) and is_fp8(rhs)) or lhs == rhs:
        return None
    return (
        f"input element types {lhs} and {rhs} do not mix: both bf16, both f16, "
        "or both 8-bit floats"
    )


def tile_bytes(shape: Sequence[int], element_type: Attribute) -> int:
    """Bytes of a dense tile (or TMA box) of `shape`: its elements times their
    size. Ring slots, staging tiles, expect-tx counts, TMA boxes and the tuning's
    shared-memory estimates all size tiles with it."""
    return element_bytes(element_type) * math.prod(shape)


def splat_value(attr: DenseIntOrFPElementsAttr) -> int | float | None:
    """The one value of a splat tile constant (None if its elements differ): what
    `tile-shape` can resize and a register tile can hold as one value."""
    raw, n = attr.data.data, len(attr)
    if n and raw == raw[: len(raw) // n] * n:  # the common case, without unpacking
        return next(iter(attr.iter_values()))
    values = set(attr.get_values())
    return values.pop() if len(values) == 1 else None


def shape_str(shape: Sequence[int]) -> str:
    """`128x?x64`: a shape as MLIR types print it, `?` for a dynamic extent."""
    return "x".join("?" if d == DYNAMIC_INDEX else str(d) for d in shape)


def _tensor(value: SSAValue) -> TensorType[Attribute]:
    assert isinstance(value.type, TensorType)
    return value.type


# --------------------------------------------------------------------------- types


@irdl_attr_definition
class DescType(ParametrizedAttribute, TypeAttribute):
    """A global tensor, read and written in boxes: `!tile.desc<?x?xbf16, box = [128, 64]>`.

    The shape may be dynamic (`?`); the runtime reads it off the array it is given.
    The box is the tile one load or store moves; the runtime builds the TMA tensor
    map from it, so it obeys TMA's limits on each dimension (1 to 256). Its rows
    need a multiple of 16 bytes only where TMA moves them: every load (refused
    by the first pass otherwise, `analysis.levels`); a tensor only stored may
    have any box (an M x 1 column is stored from registers).
    """

    name = "tile.desc"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    box: ArrayAttr[IntAttr]

    def __init__(
        self,
        shape: Sequence[int],
        element_type: Attribute,
        box: Sequence[int],
    ):
        super().__init__(
            ArrayAttr(IntAttr(d) for d in shape),
            element_type,
            ArrayAttr(IntAttr(d) for d in box),
        )

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    def get_box(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.box.data)

    @property
    def rank(self) -> int:
        return len(self.shape.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shape, element_type = parser.parse_ranked_shape()
            parser.parse_punctuation(",")
            parser.parse_keyword("box")
            parser.parse_punctuation("=")
            box = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_integer
            )
        return (
            ArrayAttr(IntAttr(d) for d in shape),
            element_type,
            ArrayAttr(IntAttr(d) for d in box),
        )

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(shape_str(self.get_shape()) + "x")
            printer.print_attribute(self.element_type)
            printer.print_string(", box = [")
            printer.print_list(self.get_box(), lambda d: printer.print_string(str(d)))
            printer.print_string("]")

    def verify(self) -> None:
        shape, box = self.get_shape(), self.get_box()
        if not shape:
            raise VerifyException("!tile.desc must have rank >= 1")
        if problem := desc_element_problem(self.element_type):
            raise VerifyException(problem)
        if any(d != DYNAMIC_INDEX and d <= 0 for d in shape):
            raise VerifyException(
                f"!tile.desc dimensions must be positive or '?', got {shape_str(shape)}"
            )
        if len(box) != len(shape):
            raise VerifyException(
                f"!tile.desc box has rank {len(box)} but the tensor has rank {len(shape)}"
            )
        if any(not 1 <= b <= MAX_BOX_DIM for b in box):
            raise VerifyException(
                f"!tile.desc box dimensions must be in [1, {MAX_BOX_DIM}], got {list(box)}"
            )

    def tile_shape(self) -> tuple[int, ...]:
        """Shape of the tile a load returns: the box without its leading unit dims."""
        box = list(self.get_box())
        while len(box) > 1 and box[0] == 1:
            box.pop(0)
        return tuple(box)


class ProgramAxis(StrEnum):
    X = auto()
    Y = auto()
    Z = auto()


@irdl_attr_definition
class ProgramAxisAttr(EnumAttribute[ProgramAxis], SpacedOpaqueSyntaxAttribute):
    """Grid axis of a program id: `x`, `y` or `z`."""

    name = "tile.axis"

    @property
    def index(self) -> int:
        return list(ProgramAxis).index(self.data)


class ReduceKind(StrEnum):
    MAX = auto()
    MIN = auto()
    SUM = auto()

    def identity(self, is_float: bool) -> float | int:
        """What combines with any x to x: what padding rows of a tile hold
        for a reduction over it (-0.0 for a float sum: -0.0 + -0.0 is -0.0)."""
        if self is ReduceKind.SUM:
            return -0.0 if is_float else 0
        if is_float:
            return -math.inf if self is ReduceKind.MAX else math.inf
        return -(2**31) if self is ReduceKind.MAX else 2**31 - 1  # i32


@irdl_attr_definition
class ReduceKindAttr(EnumAttribute[ReduceKind], SpacedOpaqueSyntaxAttribute):
    """Combiner of a `tile.reduce`: `max`, `min` or `sum`."""

    name = "tile.reduce_kind"


class _PredicateAttr:
    """A compare's predicate; a word it does not know is refused naming the
    op and listing the predicates it takes (xDSL's error named neither)."""

    OP: ClassVar[str]

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> StrEnum:
        assert issubclass(cls, EnumAttribute)
        start = parser.pos
        word = parser.parse_optional_identifier()
        if word not in cls.enum_type.__members__.values():
            what = f"has no predicate {word}" if word else "needs a predicate here"
            parser.raise_error(
                f"{cls.OP} {what}; it takes {', '.join(cls.enum_type)}",
                start,
                parser.pos if word else None,
            )
        return cls.enum_type(word)


class CmpiPredicate(StrEnum):
    EQ = auto()
    NE = auto()
    SLT = auto()
    SLE = auto()
    SGT = auto()
    SGE = auto()


@irdl_attr_definition
class CmpiPredicateAttr(
    _PredicateAttr, EnumAttribute[CmpiPredicate], SpacedOpaqueSyntaxAttribute
):
    """Signed integer comparison of a `tile.cmpi`."""

    name = "tile.cmpi_predicate"
    OP: ClassVar = "tile.cmpi"


class CmpfPredicate(StrEnum):
    """`arith.cmpf`'s predicates but the constant `false` and `true`."""

    OEQ = auto()
    OGT = auto()
    OGE = auto()
    OLT = auto()
    OLE = auto()
    ONE = auto()
    ORD = auto()
    UEQ = auto()
    UGT = auto()
    UGE = auto()
    ULT = auto()
    ULE = auto()
    UNE = auto()
    UNO = auto()


@irdl_attr_definition
class CmpfPredicateAttr(
    _PredicateAttr, EnumAttribute[CmpfPredicate], SpacedOpaqueSyntaxAttribute
):
    """Float comparison of a `tile.cmpf`."""

    name = "tile.cmpf_predicate"
    OP: ClassVar = "tile.cmpf"


# ----------------------------------------------------------------------------- ops


class _GridQueryOp(IRDLOperation):
    axis = prop_def(ProgramAxisAttr)
    result = result_def(IndexType)

    traits = traits_def(Pure())
    assembly_format = "$axis attr-dict"

    def __init__(self, axis: ProgramAxis | str):
        super().__init__(
            properties={"axis": ProgramAxisAttr(ProgramAxis(axis))},
            result_types=[IndexType()],
        )


@irdl_op_definition
class ProgramIdOp(_GridQueryOp):
    """Coordinate of this thread block in the launch grid."""

    name = "tile.program_id"


@irdl_op_definition
class NumProgramsOp(_GridQueryOp):
    """Extent of the launch grid along one axis."""

    name = "tile.num_programs"


class _ClusterQueryOp(IRDLOperation):
    result = result_def(IndexType)

    traits = traits_def(Pure())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[IndexType()])


@irdl_op_definition
class ClusterIdOp(_ClusterQueryOp):
    """Which cluster along x this thread block belongs to: program_id(x) div S,
    for a kernel whose `tile.cluster` attribute groups S consecutive x programs.
    The same in every block of a cluster."""

    name = "tile.cluster_id"


@irdl_op_definition
class ClusterRankOp(_ClusterQueryOp):
    """This thread block's place in its cluster: program_id(x) mod S."""

    name = "tile.cluster_rank"


@irdl_op_definition
class NextTileOp(IRDLOperation):
    """A ticket from the launch's tile counter, for a dynamically scheduled
    persistent kernel (`persistent{dynamic=true}`): the counter's value, which
    is then advanced atomically, so the programs of one launch get 0, 1, 2, ...
    in the order they ask, each ticket once. The counter counts modulo `tiles`
    (it wraps to 0 after handing out `tiles` - 1; `atom.inc` on the GPU): a
    launch whose programs take exactly `tiles` tickets leaves it at zero for
    the next launch, with no workspace to allocate or clear.

    The op has a side effect (it is not `Pure`): two of them are two tickets."""

    name = "tile.next_tile"

    tiles = operand_def(IndexType)
    result = result_def(IndexType)

    assembly_format = "$tiles attr-dict"

    def __init__(self, tiles: SSAValue | Operation):
        super().__init__(operands=[tiles], result_types=[IndexType()])


@irdl_op_definition
class DimOp(IRDLOperation):
    """Run-time extent of one dimension of a global tensor."""

    name = "tile.dim"

    desc = operand_def(DescType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(IndexType)

    traits = traits_def(Pure())
    assembly_format = "$desc `,` $axis attr-dict `:` type($desc)"

    def __init__(self, desc: SSAValue | Operation, axis: int):
        super().__init__(
            operands=[desc],
            properties={"axis": IntegerAttr(axis, 64)},
            result_types=[IndexType()],
        )

    def verify_(self) -> None:
        assert isinstance(self.desc.type, DescType)
        rank = self.desc.type.rank
        if not 0 <= self.axis.value.data < rank:
            raise VerifyException(
                f"tile.dim axis {self.axis.value.data} is out of range for a rank-{rank} tensor"
            )


def _verify_box_access(
    op_name: str, desc: DescType, indices: Sequence[SSAValue], tile: TensorType
) -> None:
    if len(indices) != desc.rank:
        raise VerifyException(
            f"{op_name} needs {desc.rank} indices for a rank-{desc.rank} tensor, got {len(indices)}"
        )
    if tile.element_type != desc.element_type:
        raise VerifyException(
            f"{op_name} tile element type {tile.element_type} does not match the tensor's {desc.element_type}"
        )
    shape, box, squeezed = tile.get_shape(), desc.get_box(), desc.tile_shape()
    if shape not in (box, squeezed):
        also = (
            ""
            if squeezed == box
            else f" (a tile is the box, or the box without its leading unit "
            f"dimensions: {shape_str(squeezed)}; other unit dimensions stay)"
        )
        raise VerifyException(
            f"{op_name} tile shape {shape_str(shape)} does not match the box "
            f"{shape_str(box)}{also}"
        )


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Read the box at element offsets `[indices]`; out-of-bounds elements read as 0."""

    name = "tile.load"

    desc = operand_def(DescType)
    indices = var_operand_def(IndexType)
    result = result_def(TensorType)

    traits = traits_def(MemoryReadEffect())
    assembly_format = (
        "$desc `[` $indices `]` attr-dict `:` type($desc) `->` type($result)"
    )

    def __init__(
        self,
        desc: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
        result_type: Attribute,
    ):
        super().__init__(operands=[desc, indices], result_types=[result_type])

    def verify_(self) -> None:
        assert isinstance(self.desc.type, DescType)
        _verify_box_access(
            "tile.load", self.desc.type, self.indices, _tensor(self.result)
        )


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write a tile to the box at `[indices]`; out-of-bounds elements are dropped."""

    name = "tile.store"

    value = operand_def(TensorType)
    desc = operand_def(DescType)
    indices = var_operand_def(IndexType)

    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$value `,` $desc `[` $indices `]` attr-dict `:` type($value) `->` type($desc)"
    )

    def __init__(
        self,
        value: SSAValue | Operation,
        desc: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
    ):
        super().__init__(operands=[value, desc, indices])

    def verify_(self) -> None:
        assert isinstance(self.desc.type, DescType)
        _verify_box_access(
            "tile.store", self.desc.type, self.indices, _tensor(self.value)
        )


@irdl_op_definition
class DotOp(IRDLOperation):
    """`acc + a @ b`: 16-bit or 8-bit float inputs, f32 accumulation (one
    tensor-core GEMM; see `dot_input_problem` for the pairs)."""

    name = "tile.dot"

    C: ClassVar = VarConstraint("C", base(TensorType))
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    acc = operand_def(C)
    result = result_def(C)

    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs `,` $acc attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(
        self,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        acc: SSAValue | Operation,
    ):
        acc_type = SSAValue.get(acc).type
        super().__init__(operands=[lhs, rhs, acc], result_types=[acc_type])

    def verify_(self) -> None:
        a, b, c = _tensor(self.lhs), _tensor(self.rhs), _tensor(self.acc)
        if (a.get_num_dims(), b.get_num_dims(), c.get_num_dims()) != (2, 2, 2):
            raise VerifyException("tile.dot operands must all be rank-2 tiles")
        if (problem := dot_input_problem(a.element_type, b.element_type)) is not None:
            raise VerifyException(f"tile.dot {problem}")
        if not isinstance(c.element_type, Float32Type):
            raise VerifyException(
                f"tile.dot accumulates in f32, got accumulator {c.element_type}"
            )
        (m, k), (k2, n) = a.get_shape(), b.get_shape()
        if k != k2:
            raise VerifyException(
                f"tile.dot contraction mismatch: lhs is {m}x{k}, rhs is {k2}x{n}"
            )
        if c.get_shape() != (m, n):
            raise VerifyException(
                f"tile.dot accumulator is {shape_str(c.get_shape())}, expected {m}x{n}"
            )


class TransOpCanonicalization(HasCanonicalizationPatternsTrait):
    """A transpose of a computed tile moves up to where it came from
    (`transforms/transposes.py`, imported only when canonicalizing)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from tawa_xdsl.transforms.transposes import PATTERNS

        return PATTERNS


@irdl_op_definition
class TransOp(IRDLOperation):
    """Transpose of a rank-2 tile (free when it feeds `tile.dot`: a layout
    choice); of a computed tile, canonicalization moves it up to the loaded
    tiles (`transforms/transposes.py`), unless it is `pinned`: the transpose
    `swap-operands` puts in front of a store, which stays there (the store
    writes the register tile transposed) while the one under it moves up."""

    name = "tile.trans"

    source = operand_def(TensorType)
    result = result_def(TensorType)
    pinned = opt_prop_def(UnitAttr)

    traits = traits_def(Pure(), TransOpCanonicalization())
    assembly_format = (
        "$source (`pinned` $pinned^)? attr-dict `:` type($source) `->` type($result)"
    )

    def __init__(self, source: SSAValue | Operation, pinned: bool = False):
        t = _tensor(SSAValue.get(source))
        rows, cols = t.get_shape()
        super().__init__(
            operands=[source],
            result_types=[TensorType(t.element_type, (cols, rows))],
            properties={"pinned": UnitAttr()} if pinned else {},
        )

    def verify_(self) -> None:
        src, res = _tensor(self.source), _tensor(self.result)
        if src.get_num_dims() != 2:
            raise VerifyException("tile.trans needs a rank-2 tile")
        if (
            res.element_type != src.element_type
            or res.get_shape() != src.get_shape()[::-1]
        ):
            raise VerifyException(
                f"tile.trans of {shape_str(src.get_shape())}x{src.element_type} must give "
                f"{shape_str(src.get_shape()[::-1])}x{src.element_type}"
            )


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Reduce one axis of a float or i32 tile with max, min or sum (i32 sums
    wrap, as `add.s32` does)."""

    name = "tile.reduce"

    kind = prop_def(ReduceKindAttr)
    source = operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$kind $source `,` `axis` `=` $axis attr-dict `:` type($source) `->` type($result)"

    def __init__(
        self,
        kind: ReduceKind | str,
        source: SSAValue | Operation,
        axis: int,
        result_type: Attribute,
    ):
        super().__init__(
            operands=[source],
            properties={
                "kind": ReduceKindAttr(ReduceKind(kind)),
                "axis": IntegerAttr(axis, 64),
            },
            result_types=[result_type],
        )

    def verify_(self) -> None:
        src, res = _tensor(self.source), _tensor(self.result)
        axis, shape = self.axis.value.data, src.get_shape()
        if not 0 <= axis < len(shape):
            raise VerifyException(
                f"tile.reduce axis {axis} is out of range for a rank-{len(shape)} tile"
            )
        floats = Float32Type | Float16Type | BFloat16Type
        if not (isinstance(src.element_type, floats) or is_i32(src.element_type)):
            hint = (
                " (tile.extsi or tile.trunci it to i32 first)"
                if is_storage_integer(src.element_type)
                else ""
            )
            raise VerifyException(
                f"tile.reduce needs a float or i32 tile, got {src.element_type}{hint}"
            )
        expected = shape[:axis] + shape[axis + 1 :]
        if res.get_shape() != expected or res.element_type != src.element_type:
            raise VerifyException(
                f"tile.reduce along axis {axis} of {shape_str(shape)}x{src.element_type} "
                f"gives {shape_str(expected)}x{src.element_type}, not "
                f"{shape_str(res.get_shape())}x{res.element_type}"
            )


@irdl_op_definition
class ExpandDimsOp(IRDLOperation):
    """Insert a unit dimension at `axis` (before a broadcast)."""

    name = "tile.expand_dims"

    source = operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = (
        "$source `,` `axis` `=` $axis attr-dict `:` type($source) `->` type($result)"
    )

    def __init__(self, source: SSAValue | Operation, axis: int):
        t = _tensor(SSAValue.get(source))
        shape = list(t.get_shape())
        shape.insert(axis, 1)
        super().__init__(
            operands=[source],
            properties={"axis": IntegerAttr(axis, 64)},
            result_types=[TensorType(t.element_type, shape)],
        )

    def verify_(self) -> None:
        src, res = _tensor(self.source), _tensor(self.result)
        axis, shape = self.axis.value.data, list(src.get_shape())
        if not 0 <= axis <= len(shape):
            raise VerifyException(
                f"tile.expand_dims axis {axis} is out of range for a rank-{len(shape)} tile"
            )
        shape.insert(axis, 1)
        if res.get_shape() != tuple(shape) or res.element_type != src.element_type:
            raise VerifyException(
                f"tile.expand_dims at axis {axis} must give {shape_str(shape)}x{src.element_type}"
            )


@irdl_op_definition
class BroadcastOp(IRDLOperation):
    """Repeat a tile along its unit dimensions to a larger shape of the same rank."""

    name = "tile.broadcast"

    source = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        src, res = _tensor(self.source), _tensor(self.result)
        if src.element_type != res.element_type:
            raise VerifyException("tile.broadcast cannot change the element type")
        s, r = src.get_shape(), res.get_shape()
        if len(s) != len(r) or any(a not in (1, b) for a, b in zip(s, r, strict=False)):
            raise VerifyException(
                f"tile.broadcast cannot broadcast {shape_str(s)} to {shape_str(r)}: "
                "ranks must match and only unit dimensions may grow"
            )


@irdl_op_definition
class SplatOp(IRDLOperation):
    """A tile with every element equal to a scalar."""

    name = "tile.splat"

    source = operand_def()
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        res = _tensor(self.result)
        if self.source.type != res.element_type:
            raise VerifyException(
                f"tile.splat of a {self.source.type} cannot make a tile of {res.element_type}"
            )


@irdl_op_definition
class IotaOp(IRDLOperation):
    """The rank-1 tile [0, 1, ..., n-1] (row and column ids for masks)."""

    name = "tile.iota"

    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: Attribute):
        super().__init__(result_types=[result_type])

    def verify_(self) -> None:
        res = _tensor(self.result)
        if res.get_num_dims() != 1 or not isinstance(res.element_type, IntegerType):
            raise VerifyException(f"tile.iota gives a rank-1 integer tile, not {res}")


class _CompareOp(IRDLOperation):
    """Elementwise comparison of two tiles, giving an i1 tile (a mask for
    `tile.select`). xDSL's `arith.cmpi` / `arith.cmpf` compare scalars only;
    a subclass is the tile form of one, with its `name`, `predicate` property,
    the `ELEMENTS` it compares and how errors name them (`COMPARES`)."""

    PREDICATE: ClassVar[type[EnumAttribute[StrEnum]]]
    ELEMENTS: ClassVar[tuple[type[Attribute], ...]]
    COMPARES: ClassVar[str]

    T: ClassVar = VarConstraint("T", base(TensorType))
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = (
        "$predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)"
    )

    def __init__(
        self,
        predicate: StrEnum | str,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
    ):
        t = _tensor(SSAValue.get(lhs))
        enum = self.PREDICATE.enum_type
        super().__init__(
            operands=[lhs, rhs],
            properties={"predicate": self.PREDICATE(enum(predicate))},
            result_types=[TensorType(IntegerType(1), t.get_shape(), t.encoding)],
        )

    def verify_(self) -> None:
        operand, res = _tensor(self.lhs), _tensor(self.result)
        if not isinstance(operand.element_type, self.ELEMENTS):
            raise VerifyException(
                f"{self.name} compares {self.COMPARES}, not {operand.element_type}"
            )
        if res.get_shape() != operand.get_shape() or res.element_type != IntegerType(1):
            raise VerifyException(
                f"{self.name} of {shape_str(operand.get_shape())} tiles gives an i1 "
                "tile of the same shape"
            )


@irdl_op_definition
class CmpiOp(_CompareOp):
    """Elementwise signed comparison of two integer tiles (`tile.iota` positions:
    causal and padding masks)."""

    name = "tile.cmpi"
    PREDICATE: ClassVar = CmpiPredicateAttr
    ELEMENTS: ClassVar = (IntegerType, IndexType)
    COMPARES: ClassVar = "integer tiles"
    predicate = prop_def(CmpiPredicateAttr)


@irdl_op_definition
class CmpfOp(_CompareOp):
    """Elementwise comparison of two f32, bf16 or f16 tiles (leaky ReLU's
    `x > 0`, a threshold mask, a NaN guard), as `arith.cmpf` and LLVM's `fcmp`
    define it: an ordered predicate is false where either side is NaN, an
    unordered one (`u...`) true; `ord` / `uno` say whether neither / either is
    NaN. A 16-bit tile compares its own values (the thread level widens them
    to f32, exactly); an 8-bit one is widened with `arith.extf` first."""

    name = "tile.cmpf"
    PREDICATE: ClassVar = CmpfPredicateAttr
    ELEMENTS: ClassVar = (Float32Type, BFloat16Type, Float16Type)
    COMPARES: ClassVar = "f32, bf16 or f16 tiles (arith.extf an 8-bit tile first)"
    predicate = prop_def(CmpfPredicateAttr)


class _CastOp(IRDLOperation):
    """Elementwise conversion of a tile between element types; xDSL's `arith`
    casts convert scalars only. A subclass names the op and the
    `CONVERSIONS` (source, result) it makes."""

    CONVERSIONS: ClassVar[tuple[tuple[Attribute, Attribute], ...]]

    source = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue | Operation, result: Attribute | None = None):
        """`result`: the result's element type, where the source's has more
        than one conversion."""
        t = _tensor(SSAValue.get(source))
        if result is None:
            (result,) = (r for s, r in self.CONVERSIONS if s == t.element_type)
        super().__init__(
            operands=[source],
            result_types=[TensorType(result, t.get_shape(), t.encoding)],
        )

    def verify_(self) -> None:
        src, res = _tensor(self.source), _tensor(self.result)
        if (src.element_type, res.element_type) not in self.CONVERSIONS:
            made = " or ".join(f"{s} tiles to {r}" for s, r in self.CONVERSIONS)
            raise VerifyException(
                f"{self.name} converts {made}, not {src.element_type} to "
                f"{res.element_type}"
            )
        if src.get_shape() != res.get_shape():
            raise VerifyException(
                f"{self.name} of a {shape_str(src.get_shape())} tile gives one of "
                "the same shape"
            )


I8, I32, I64 = IntegerType(8), IntegerType(32), IntegerType(64)


@irdl_op_definition
class SIToFPOp(_CastOp):
    """i32 -> f32, rounded to nearest even (positions and distances from
    `tile.iota` in float arithmetic: ALiBi, relative-position biases)."""

    name = "tile.sitofp"
    CONVERSIONS: ClassVar = ((I32, Float32Type()),)


@irdl_op_definition
class FPToSIOp(_CastOp):
    """f32 -> i32 towards zero, as PTX `cvt.rzi.s32.f32`: saturating (a value
    beyond the i32 range, infinities included, becomes the nearest end of it)
    and NaN to 0 (a class index from a float score, a quantized value)."""

    name = "tile.fptosi"
    CONVERSIONS: ClassVar = ((Float32Type(), I32),)


@irdl_op_definition
class FPToUIOp(_CastOp):
    """f32 -> unsigned 32-bit integer towards zero, as PTX `cvt.rzi.u32.f32`:
    saturating to [0, 2^32 - 1], NaN to 0; the signless i32 holds its bits
    (2^32 - 1 reads as -1 where a signed op reads it)."""

    name = "tile.fptoui"
    CONVERSIONS: ClassVar = ((Float32Type(), I32),)


@irdl_op_definition
class ExtSIOp(_CastOp):
    """Sign extension, i8 -> i32 (int8 labels or quantized values into the
    type tiles compute in) or i32 -> i64 (an index into an int64 tensor)."""

    name = "tile.extsi"
    CONVERSIONS: ClassVar = ((I8, I32), (I32, I64))


@irdl_op_definition
class TruncIOp(_CastOp):
    """Truncation to the low bits, i32 -> i8 or i64 -> i32, as `arith.trunci`
    (a value out of the narrower range wraps: 200 becomes -56 in i8)."""

    name = "tile.trunci"
    CONVERSIONS: ClassVar = ((I32, I8), (I64, I32))


@irdl_op_definition
class SelectOp(IRDLOperation):
    """Elementwise `mask ? on_true : on_false` (xDSL's `arith.select` takes a scalar
    condition only)."""

    name = "tile.select"

    T: ClassVar = VarConstraint("T", base(TensorType))
    mask = operand_def(TensorType)
    on_true = operand_def(T)
    on_false = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())
    assembly_format = (
        "$mask `,` $on_true `,` $on_false attr-dict `:` type($mask) `,` type($result)"
    )

    def __init__(
        self,
        mask: SSAValue | Operation,
        on_true: SSAValue | Operation,
        on_false: SSAValue | Operation,
    ):
        super().__init__(
            operands=[mask, on_true, on_false],
            result_types=[SSAValue.get(on_true).type],
        )

    def verify_(self) -> None:
        mask, res = _tensor(self.mask), _tensor(self.result)
        if mask.element_type != IntegerType(1) or mask.get_shape() != res.get_shape():
            raise VerifyException(
                f"tile.select needs an i1 mask of shape {shape_str(res.get_shape())}, "
                f"got {shape_str(mask.get_shape())}x{mask.element_type}"
            )


class ElementReadOp(IRDLOperation):
    """An op that reads one element of a tile at constant coordinates into a
    scalar: `%s = <name> %t[0, 2] : type`. The tile level (`tile.extract`) and the
    shared-memory level (`nvgpu_async.smem_extract`) share syntax and checks;
    a subclass gives the `name`, the `source` operand and `SOURCE_TYPES`."""

    SOURCE_TYPES: ClassVar[tuple[type[Attribute], ...]]
    position = prop_def(ArrayAttr[IntAttr])
    result = result_def()

    def __init__(self, source: SSAValue | Operation, position: Sequence[int]):
        t = SSAValue.get(source).type
        assert isinstance(t, self.SOURCE_TYPES)
        super().__init__(
            operands=[source],
            properties={"position": ArrayAttr(IntAttr(i) for i in position)},
            result_types=[t.element_type],  # type: ignore[attr-defined]
        )

    def get_position(self) -> tuple[int, ...]:
        return tuple(i.data for i in self.position.data)

    @classmethod
    def parse(cls, parser: Parser) -> ElementReadOp:
        source = parser.parse_unresolved_operand()
        position = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_integer
        )
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        source_type = parser.parse_type()
        if not isinstance(source_type, cls.SOURCE_TYPES):
            parser.raise_error(f"{cls.name} cannot read a {source_type}")
        op = cls(parser.resolve_operand(source, source_type), position)
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        source = self.operands[0]
        printer.print_string(" ")
        printer.print_operand(source)
        printer.print_string(f"[{', '.join(map(str, self.get_position()))}]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(source.type)

    def verify_(self) -> None:
        t = self.operands[0].type
        shape, position = t.get_shape(), self.get_position()  # type: ignore[attr-defined]
        if len(position) != len(shape) or any(
            not 0 <= i < d for i, d in zip(position, shape, strict=True)
        ):
            raise VerifyException(
                f"{self.name} position {list(position)} is not an element of a "
                f"{shape_str(shape)} tile"
            )
        element = t.element_type  # type: ignore[attr-defined]
        if self.result.type != element:
            raise VerifyException(
                f"{self.name} of a {element} tile gives {element}, not {self.result.type}"
            )


@irdl_op_definition
class ExtractOp(ElementReadOp):
    """One element of a tile, at constant coordinates, as a scalar:
    `tile.extract %t[0] : tensor<4xf32>`.

    What a tile kernel needs to use a loaded value as a scalar factor: a TMA box
    is at least 16 bytes wide, so a single scale (the B scale of one 128 x 128
    block in block-scaled FP8 GEMM) arrives as the first element of a small box.
    Its result is tile data: no load address may depend on it."""

    name = "tile.extract"
    SOURCE_TYPES: ClassVar = (TensorType,)
    source = operand_def(TensorType)

    traits = traits_def(Pure())


Tile = Dialect(
    "tile",
    [
        ProgramIdOp,
        NumProgramsOp,
        ClusterIdOp,
        ClusterRankOp,
        NextTileOp,
        DimOp,
        LoadOp,
        StoreOp,
        DotOp,
        TransOp,
        ReduceOp,
        ExpandDimsOp,
        BroadcastOp,
        SplatOp,
        IotaOp,
        CmpiOp,
        CmpfOp,
        SIToFPOp,
        FPToSIOp,
        FPToUIOp,
        ExtSIOp,
        TruncIOp,
        SelectOp,
        ExtractOp,
    ],
    [DescType, ProgramAxisAttr, ReduceKindAttr, CmpiPredicateAttr, CmpfPredicateAttr],
)
