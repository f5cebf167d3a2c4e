"""What an elementwise tile op is.

Tiles are builtin tensors, so elementwise math on them is plain `arith` and
`math` (xDSL's ops accept tensors), plus the tile dialect's own compares, casts
and select (xDSL's `arith.cmpi` / `cmpf` / `select` / `sitofp` / `fptosi` take
scalars only). Such an op reads and writes tiles of one shape, element by
element: the shape pass ties all its operands and results to one shape, the
layout analysis to one register layout, and the wgmma wait analysis knows its
result can live in an operand's registers.
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import BFloat16Type, Float16Type, TensorType
from xdsl.ir import Operation

from tawa_xdsl.dialects import tile

TILE_ELEMENTWISE = (
    tile.CmpiOp,
    tile.CmpfOp,
    tile.SIToFPOp,
    tile.FPToSIOp,
    tile.FPToUIOp,
    tile.ExtSIOp,
    tile.TruncIOp,
    tile.SelectOp,
)
"""The tile forms of `arith` ops xDSL gives scalars only."""


def is_elementwise(op: Operation) -> bool:
    """Whether `op` computes element by element: `arith` and `math` (constants
    aside: they make a tile, they do not map one), the tile dialect's compares,
    casts and `tile.select`."""
    return isinstance(op, TILE_ELEMENTWISE) or (
        op.dialect_name() in (arith.Arith.name, math.Math.name)
        and not isinstance(op, arith.ConstantOp)
    )


LOWERED: dict[str, frozenset[str]] = {
    arith.Arith.name: frozenset(
        [
            "addf",
            "addi",
            "andi",
            "ceildivsi",
            "ceildivui",
            "cmpf",
            "cmpi",
            "constant",
            "divf",
            "divsi",
            "divui",
            "extf",
            "fptosi",
            "fptoui",
            "index_cast",
            "maximumf",
            "maxnumf",
            "maxsi",
            "maxui",
            "minimumf",
            "minnumf",
            "minsi",
            "minui",
            "mulf",
            "muli",
            "negf",
            "ori",
            "remsi",
            "remui",
            "select",
            "shli",
            "shrsi",
            "shrui",
            "sitofp",
            "subf",
            "subi",
            "truncf",
            "uitofp",
            "xori",
        ]
    ),
    math.Math.name: frozenset(
        [
            "absf",
            "ceil",
            "copysign",
            "cos",
            "erf",
            "exp",
            "exp2",
            "floor",
            "fma",
            "log",
            "log10",
            "log2",
            "roundeven",
            "rsqrt",
            "sin",
            "sqrt",
            "tanh",
            "trunc",
        ]
    ),
}
"""The `arith` and `math` ops the thread level lowers, by dialect
(`lowering/distribute/elementwise.py` has their instructions; a test keeps
the two in step)."""


CONVERSIONS = (arith.ExtFOp, arith.TruncFOp, arith.ConstantOp)
"""The arith ops that take or make 16- and 8-bit floats (in registers, those
are packed in pairs: arithmetic on them has no thread-level form)."""


def narrow_arithmetic(op: Operation) -> str | None:
    """Why an `arith` or `math` op or a `tile.select` computing 16- or 8-bit
    floats, or one of those, a `tile.cmpi` or a `tile.extract` on i8 or i64
    tiles (`tile.STORAGE_INTEGERS`), cannot be compiled, or None (conversions
    and constants are fine; the thread level refuses a comparison or a
    conversion of them where it meets one). A select too: the two elements of
    a register pair take different mask bits."""
    computes = isinstance(
        op, tile.SelectOp | tile.CmpiOp | tile.ExtractOp
    ) or op.dialect_name() in (
        arith.Arith.name,
        math.Math.name,
    )
    if not computes or isinstance(op, CONVERSIONS):
        return None
    for v in op.results:
        t = v.type.element_type if isinstance(v.type, TensorType) else v.type
        if isinstance(t, BFloat16Type | Float16Type) or tile.is_fp8(t):
            return (
                f"{op.name} on {t} values: compute in f32 (arith.extf first, "
                "arith.truncf after)"
            )
    for v in (*op.operands, *op.results):
        if isinstance(v.type, TensorType) and tile.is_storage_integer(
            t := v.type.element_type
        ):
            return (
                f"{op.name} on {t} tiles: compute in i32 (tile.extsi first, "
                "tile.trunci after)"
            )
    return None


def unsupported_elementwise(op: Operation) -> str | None:
    """Why an `arith` or `math` op cannot be compiled (the thread level has
    no instructions for it), or None."""
    dialect = op.dialect_name()
    lowered = LOWERED.get(dialect)
    name = op.name.removeprefix(f"{dialect}.")
    if lowered is None or name in lowered:
        return None
    why = " (PTX has no instruction for it)" if dialect == math.Math.name else ""
    return (
        f"{op.name} has no thread-level form{why}; write it with the {dialect} "
        f"ops that do: {', '.join(sorted(lowered))}"
    )
