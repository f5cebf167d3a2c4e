"""Scalars and elementwise ops (pattern family 1).

A scalar op is one instruction; an op on register tiles is one `ptx.alu` whose
elements are the registers the thread holds, each operand read through its map
(a broadcast) or as one register (a splat). Constants are immediates; a splat
constant tile is one. Where PTX wants a register (the first source, a `setp`'s
left side) an immediate is moved into one first, as the printer did.

16-bit tiles hold element pairs in one `b32`: `arith.truncf` packs two f32 with
`cvt.rn.bf16x2.f32` (first source to the upper half), `arith.extf` unpacks
(`mov.b32 {lo, hi}`) and converts each half. 8-bit tiles hold pairs in one
`b16`: `cvt.rn.satfinite.e4m3x2.f32` (or e5m2) packs and saturates, and
`cvt.rn.f16x2.e4m3x2` widens a pair to two f16 halves on the way back.
Arithmetic on 16- or 8-bit values is refused (`refuse_narrow`): compute in f32.
"""

from __future__ import annotations

import struct

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import (
    PatternRewriter,
)

from tawa_xdsl.analysis.elementwise import narrow_arithmetic
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import ptx, tile
from tawa_xdsl.dialects.nvgpu_async import FragmentKind
from tawa_xdsl.lowering.distribute.context import (
    KernelState,
    Lowered,
    Ops,
    geometry,
    is_16bit,
    register_type,
    scalar_class,
)
from tawa_xdsl.lowering.distribute.kernel import DistributePattern

F32_BINARY: dict[type[Operation], str] = {
    arith.AddfOp: "add.f32",
    arith.SubfOp: "sub.f32",
    arith.MulfOp: "mul.f32",
    arith.DivfOp: "div.rn.f32",
    arith.MaximumfOp: "max.NaN.f32",
    arith.MinimumfOp: "min.NaN.f32",
    arith.MaxnumfOp: "max.f32",
    arith.MinnumfOp: "min.f32",
    mathd.CopySignOp: "copysign.f32",
}
SWAPPED = (mathd.CopySignOp,)
"""Ops whose PTX instruction takes the operands the other way round
(`copysign.f32 d, a, b` gives b's magnitude with a's sign)."""
I32_BINARY: dict[type[Operation], str] = {
    arith.AddiOp: "add.s32",
    arith.SubiOp: "sub.s32",
    arith.MuliOp: "mul.lo.s32",
    arith.AndIOp: "and.b32",
    arith.OrIOp: "or.b32",
    arith.XOrIOp: "xor.b32",
    arith.ShLIOp: "shl.b32",
    arith.ShRUIOp: "shr.u32",
    arith.ShRSIOp: "shr.s32",
    arith.MaxSIOp: "max.s32",
    arith.MinSIOp: "min.s32",
    arith.MaxUIOp: "max.u32",
    arith.MinUIOp: "min.u32",
    arith.DivSIOp: "div.s32",
    arith.RemSIOp: "rem.s32",
    arith.DivUIOp: "div.u32",
    arith.RemUIOp: "rem.u32",
}
PRED_BINARY: dict[type[Operation], str] = {
    arith.AndIOp: "and.pred",
    arith.OrIOp: "or.pred",
    arith.XOrIOp: "xor.pred",
}
"""The integer ops on i1 values (predicate registers, not `b32`): a mask or
a loop condition combined with another."""


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


LOG2E, LN2 = _f32(0x3FB8AA3B), _f32(0x3F317218)
LOG10_2 = _f32(0x3E9A209B)
INV_2PI, TWO_PI_HI, TWO_PI_LO = _f32(0x3E22F983), _f32(0x40C90FDB), -1.7484555e-07
"""1 / (2 pi), and 2 pi as the f32 nearest it plus the rest (Cody and Waite)."""

X = "x"
"""In a step's operands: the op's operand (an int is an earlier step's result,
a float an f32 literal)."""
Step = tuple[str, tuple[str | int | float, ...]]


def _chain(*steps: tuple[str, float | None]) -> list[Step]:
    """Instructions each on the previous result (the first on the operand),
    with an f32 literal as second source where given."""
    return [
        (opcode, (i - 1 if i else X, *(() if literal is None else (literal,))))
        for i, (opcode, literal) in enumerate(steps)
    ]


def _periodic(opcode: str) -> list[Step]:
    """sin or cos of x reduced into [-pi, pi] first: x - 2 pi rint(x / 2 pi),
    2 pi in two parts so the reduction loses no bits the `.approx`
    instruction (absolute error 2^-20.5 in that range) could keep."""
    return [
        ("mul.f32", (X, INV_2PI)),
        ("cvt.rni.f32.f32", (0,)),
        ("fma.rn.f32", (1, -TWO_PI_HI, X)),
        ("fma.rn.f32", (1, -TWO_PI_LO, 2)),
        (opcode, (3,)),
    ]


ERF_SMALL = [_f32(b) for b in (0x3E0375D4, 0xBEC0939F, 0x3DE7167C, 0xBCDBFC86)]
ERF_SMALL += [_f32(b) for b in (0x3BAA02D8, 0xBA51FB79, 0x38A4B506)]
"""erf(x) = x + x Q(x^2) for |x| < 1: Q's coefficients, lowest first."""
ERF_LARGE = [_f32(b) for b in (0xBF9CE473, 0xBF6BFD55, 0x3E67C3AC, 0xBD753D2D)]
ERF_LARGE += [_f32(b) for b in (0x3C69CA7F, 0xBB2CA862, 0x398C5C1D)]
"""erf(a) = 1 - 2^(L(a - 1) - a^2 log2 e) for 1 <= a <= 4: L's coefficients."""
ERF_ONE = 4.0
"""Past this |x|, erf(x) rounds to +-1 in f32 (1 - erf(4) = 1.5e-8)."""


def _erf() -> list[Step]:
    """erf without an instruction: two polynomials fitted for this lowering
    (weighted least squares on a dense grid, refined toward minimax by Lawson
    reweighting, against `math.erf` in float64; coefficients rounded to f32;
    tests/test_erf.py measures the result). Below |x| = 1 the Maclaurin form
    x (2 / sqrt(pi) + ...) as x + x Q(x^2) (the fused add keeps the leading
    term exact); above it the exponential form erf(a) = 1 - erfc(a), erfc(a) =
    2^(L(a) - a^2 log2 e) (Abramowitz and Stegun 7.1.26's shape, with log2 of
    its rational factor as a polynomial), |x| clamped at 4 where erf is +-1.
    Both are computed and one is selected: NaN fails `|x| >= 1` and takes the
    first, which keeps it. Relative error at most 8e-8 with an exact 2^x
    (2e6 points), 1.3e-7 with ex2.approx's 2^-22 (erfc is at most 0.16 of erf
    there)."""
    steps: list[Step] = []

    def add(opcode: str, *operands: str | int | float) -> int:
        steps.append((opcode, operands))
        return len(steps) - 1

    def horner(t: int, coefficients: list[float]) -> int:
        *rest, second, last = coefficients
        p = add("fma.rn.f32", t, last, second)
        for c in reversed(rest):
            p = add("fma.rn.f32", p, t, c)
        return p

    a = add("abs.f32", X)
    small = add("fma.rn.f32", X, horner(add("mul.f32", X, X), ERF_SMALL), X)
    clamped = add("min.f32", a, ERF_ONE)
    log2_erfc = add(
        "fma.rn.f32",
        add("mul.f32", clamped, clamped),
        -LOG2E,
        horner(add("sub.f32", clamped, 1.0), ERF_LARGE),
    )
    large = add("fma.rn.f32", add("ex2.approx.ftz.f32", log2_erfc), -1.0, 1.0)
    signed = add("copysign.f32", X, large)
    add("selp.f32", signed, small, add("setp.ge.f32", a, 1.0))
    return steps


F32_UNARY: dict[type[Operation], list[Step]] = {
    arith.NegfOp: _chain(("neg.f32", None)),
    mathd.Exp2Op: _chain(("ex2.approx.ftz.f32", None)),
    mathd.ExpOp: _chain(("mul.f32", LOG2E), ("ex2.approx.ftz.f32", None)),
    mathd.TanhOp: _chain(("tanh.approx.f32", None)),
    mathd.Log2Op: _chain(("lg2.approx.f32", None)),
    mathd.LogOp: _chain(("lg2.approx.f32", None), ("mul.f32", LN2)),
    mathd.Log10Op: _chain(("lg2.approx.f32", None), ("mul.f32", LOG10_2)),
    mathd.SqrtOp: _chain(("sqrt.rn.f32", None)),
    mathd.RsqrtOp: _chain(("rsqrt.approx.f32", None)),
    mathd.AbsFOp: _chain(("abs.f32", None)),
    mathd.CeilOp: _chain(("cvt.rpi.f32.f32", None)),
    mathd.FloorOp: _chain(("cvt.rmi.f32.f32", None)),
    mathd.TruncOp: _chain(("cvt.rzi.f32.f32", None)),
    mathd.RoundEvenOp: _chain(("cvt.rni.f32.f32", None)),
    mathd.SinOp: _periodic("sin.approx.ftz.f32"),
    mathd.CosOp: _periodic("cos.approx.ftz.f32"),
    mathd.ErfOp: _erf(),
}
"""Each op as instructions on its operand and earlier results: e^x = 2^(x log2 e)."""

CMP = {
    "eq": "eq",
    "ne": "ne",
    "slt": "lt",
    "sle": "le",
    "sgt": "gt",
    "sge": "ge",
    "ult": "lo",
    "ule": "ls",
    "ugt": "hi",
    "uge": "hs",
}
"""arith/tile comparison -> PTX `setp` comparison."""


def refuse_narrow(op: Operation) -> None:
    """Arithmetic on 16- or 8-bit floats (held in pairs) has no thread-level
    form (the tile passes refuse it first: `analysis.levels`)."""
    if (why := narrow_arithmetic(op)) is not None:
        raise OpDiagnostic(op, why)


def element_type(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, TensorType) else t


def fragment_count(t: Attribute) -> int:
    return geometry(t).count


def splat_value(v: DenseIntOrFPElementsAttr) -> int | float | None:
    """The one value of a splat constant (None: not a splat), read from its
    bytes (a tile constant holds thousands of equal elements)."""
    et = v.get_element_type()
    size = et.compile_time_size
    data = v.data.data
    first = data[:size]
    if not first or data != first * (len(data) // size):
        return None
    return et.unpack(first, 1)[0]


def _power_of_two(n: int | float | None) -> bool:
    return isinstance(n, int) and n > 0 and n & (n - 1) == 0


class Constant(DistributePattern):
    """Scalars and splat tiles become immediates; i1 scalars the constant
    predicates."""

    OPS = (arith.ConstantOp,)

    def rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter):
        k, v, t = self.k, op.value, op.result.type
        if isinstance(v, DenseIntOrFPElementsAttr):
            x = splat_value(v)
            if x is None:
                raise OpDiagnostic(
                    op, "only splat constants can live in register tiles"
                )
            et = element_type(t)
        elif isinstance(v, FloatAttr | IntegerAttr):
            x, et = v.value.data, t
        else:
            raise OpDiagnostic(op, f"constant {v} is not supported")
        cls = scalar_class(et)
        if cls == "pred" and isinstance(t, IntegerType):
            self.k.define(rewriter, op, [], Lowered(k.true if x else k.false))
        elif cls in ("f32", "b32", "b64") and not is_16bit(et):
            self.k.define(
                rewriter,
                op,
                [],
                Lowered(k.imm(float(x) if cls == "f32" else int(x), cls)),
            )
        elif isinstance(t, TensorType) and et.name in PAIR_CONVERSIONS:
            # a 16- or 8-bit splat tile: one register holds the pair every element
            # reads, converted from f32 as arith.truncf would (exact: x is such a value)
            ops = Ops(k)
            f = ops.reg(Lowered(k.imm(float(x), "f32")))
            d = ops.alu(PAIR_CONVERSIONS[et.name], f, f)
            self.k.define(rewriter, op, ops, Lowered(d))
        else:
            raise OpDiagnostic(op, f"constants of type {t} are not supported")


WIDTH_CASTS = {("b64", "b32"): "cvt.u32.u64", ("b32", "b64"): "cvt.s64.s32"}
"""index_cast between a 64-bit integer and a 32-bit one: the low word, or
sign-extended (index is signed)."""


class IndexCast(DistributePattern):
    """index and i32 share a `b32` register; an i64 (a scalar parameter) is
    converted."""

    OPS = (arith.IndexCastOp,)

    def rewrite(self, op: arith.IndexCastOp, rewriter: PatternRewriter):
        x = self.k.lowered(op.input, op)
        classes = (scalar_class(op.input.type), scalar_class(op.result.type))
        if classes[0] == classes[1]:
            self.k.define(rewriter, op, [], x)
            return
        if classes not in WIDTH_CASTS or isinstance(op.result.type, TensorType):
            raise OpDiagnostic(
                op, f"arith.index_cast of {op.input.type} is not supported"
            )
        ops = Ops(self.k)
        self.k.define(rewriter, op, ops, Lowered(ops.alu(WIDTH_CASTS[classes], x)))


def refuse_wide(op: Operation) -> None:
    """64-bit integers (scalar parameters) only convert at the thread level."""
    if any(scalar_class(element_type(v.type)) == "b64" for v in op.operands):
        raise OpDiagnostic(
            op,
            f"{op.name} on i64 values has no thread-level form; convert an i64 "
            "with arith.index_cast or arith.sitofp first",
        )


class Binary(DistributePattern):
    """`arith` binary ops on scalars and register tiles."""

    OPS = (*F32_BINARY, *I32_BINARY)

    def rewrite(self, op: Operation, rewriter: PatternRewriter):
        opcode = F32_BINARY.get(type(op)) or I32_BINARY[type(op)]
        t = op.results[0].type
        refuse_narrow(op)
        refuse_wide(op)
        if scalar_class(element_type(t)) == "pred":
            if type(op) not in PRED_BINARY:
                raise OpDiagnostic(
                    op,
                    f"{op.name} on i1 values has no thread-level form; combine "
                    "i1 values with arith.andi, arith.ori or arith.xori",
                )
            opcode = PRED_BINARY[type(op)]
        a, b = (self.k.lowered(v, op) for v in op.operands)
        if isinstance(op, SWAPPED):
            a, b = b, a
        ops = Ops(self.k)
        if isinstance(t, TensorType) and a.uniform and b.uniform:
            raise OpDiagnostic(
                op, "fold tile constants before lowering (run canonicalize)"
            )
        if not isinstance(t, TensorType):
            lhs = ops.reg(a)
            n = b.imm_value()
            if opcode == "div.u32" and _power_of_two(n):
                d = ops.alu("shr.u32", lhs, ops.imm(int(n).bit_length() - 1, "b32"))
            elif opcode == "rem.u32" and _power_of_two(n):
                d = ops.alu("and.b32", lhs, ops.imm(int(n) - 1, "b32"))
            else:
                d = ops.alu(opcode, lhs, b)
            self.k.define(rewriter, op, ops, Lowered(d))
            return
        first = Lowered(ops.reg(a)) if a.uniform else a
        d = ops.alu(opcode, first, b, count=fragment_count(t))
        self.k.define(rewriter, op, ops, Lowered(d))


class Unary(DistributePattern):
    """f32 `arith.negf` and one-operand `math` ops: the instructions
    `F32_UNARY` lists, per element."""

    OPS = tuple(F32_UNARY)

    def rewrite(self, op: Operation, rewriter: PatternRewriter):
        t = op.results[0].type
        refuse_narrow(op)
        a = self.k.lowered(op.operands[0], op)
        ops = Ops(self.k)
        count = 1 if a.uniform else fragment_count(t)
        x: Lowered = Lowered(ops.reg(a)) if a.uniform else a
        results: list[Lowered] = []
        for opcode, operands in F32_UNARY[type(op)]:
            args = [
                x
                if v == X
                else results[v]
                if isinstance(v, int)
                else Lowered(ops.imm(v, "f32"))
                for v in operands
            ]
            results.append(Lowered(ops.alu(opcode, *args, count=count)))
        self.k.define(rewriter, op, ops, results[-1])


class Fma(DistributePattern):
    """`math.fma` on f32: one `fma.rn.f32` per element."""

    OPS = (mathd.FmaOp,)

    def rewrite(self, op: mathd.FmaOp, rewriter: PatternRewriter):
        t = op.result.type
        refuse_narrow(op)
        a, b, c = (self.k.lowered(v, op) for v in (op.a, op.b, op.c))
        ops = Ops(self.k)
        uniform = a.uniform and b.uniform and c.uniform
        count = 1 if uniform or not isinstance(t, TensorType) else fragment_count(t)
        first = Lowered(ops.reg(a)) if a.uniform else a
        d = ops.alu("fma.rn.f32", first, b, c, count=count)
        self.k.define(rewriter, op, ops, Lowered(d))


class CeilDiv(DistributePattern):
    """ceil(a / b) as the quotient towards zero plus one where a remainder is
    left on the side of the quotient's ceiling: (a + b - 1) / b wrapped past
    2^31 - 1 for a within b of it (a K loop's trip count at K = 2^31 - 1, a
    persistent kernel's tile count at M = 2^31 - 1) and gave no iterations. A
    signed remainder takes a's sign, and the quotient towards zero is already
    the ceiling where a and b differ in sign, so one is added only where the
    remainder is not zero and has b's sign (7 / -2 is -3, not -2). A positive
    power of two shifts (arithmetic for ceildivsi: the floor, right for
    negative a too) and masks."""

    OPS = (arith.CeilDivSIOp, arith.CeilDivUIOp)

    def rewrite(self, op: Operation, rewriter: PatternRewriter):
        assert isinstance(op, arith.CeilDivSIOp | arith.CeilDivUIOp)
        kind = "s32" if isinstance(op, arith.CeilDivSIOp) else "u32"
        ops = Ops(self.k)
        a, b = ops.reg(self.k.lowered(op.lhs, op)), self.k.lowered(op.rhs, op)
        n = b.imm_value()
        if _power_of_two(n):
            shift = ops.imm(int(n).bit_length() - 1, "b32")
            q = ops.alu(f"shr.{kind}", a, shift)
            r = ops.alu("and.b32", a, ops.imm(int(n) - 1, "b32"))
            left = ops.alu("setp.ne.u32", r, ops.imm(0, "b32"))
        else:
            q = ops.alu(f"div.{kind}", a, b)
            r = ops.alu(f"rem.{kind}", a, b)
            left = ops.alu("setp.ne.u32", r, ops.imm(0, "b32"))
            if kind == "s32":  # and r, so a, has b's sign
                same = ops.alu("xor.b32", r, b)
                left = ops.alu("setp.ge.and.s32", same, ops.imm(0, "b32"), left)
        one = ops.alu("selp.b32", ops.imm(1, "b32"), ops.imm(0, "b32"), left)
        self.k.define(rewriter, op, ops, Lowered(ops.alu("add.s32", q, one)))


class Cmpi(DistributePattern):
    """Scalar `arith.cmpi`: one `setp`, unsigned for the unsigned predicates."""

    OPS = (arith.CmpiOp,)

    def rewrite(self, op: arith.CmpiOp, rewriter: PatternRewriter):
        # on tiles refused where IR is verified (`ir_checks.tile_compares`)
        pred = CMP[arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]]
        kind = "u32" if pred in ("lo", "ls", "hi", "hs") else "s32"
        refuse_wide(op)
        ops = Ops(self.k)
        lhs = ops.reg(self.k.lowered(op.lhs, op))
        p = ops.alu(f"setp.{pred}.{kind}", lhs, self.k.lowered(op.rhs, op))
        self.k.define(rewriter, op, ops, Lowered(p))


CMPF = {
    "oeq": "eq",
    "ogt": "gt",
    "oge": "ge",
    "olt": "lt",
    "ole": "le",
    "one": "ne",
    "ord": "num",
    "ueq": "equ",
    "ugt": "gtu",
    "uge": "geu",
    "ult": "ltu",
    "ule": "leu",
    "une": "neu",
    "uno": "nan",
}
"""arith.cmpf predicate -> PTX `setp.<cmp>.f32` (`false` and `true` are the
constant predicates)."""


class Cmpf(DistributePattern):
    """`arith.cmpf` of f32 scalars (xDSL's takes no tiles): one `setp`."""

    OPS = (arith.CmpfOp,)

    def rewrite(self, op: arith.CmpfOp, rewriter: PatternRewriter):
        name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        if scalar_class(op.lhs.type) != "f32":
            raise OpDiagnostic(
                op, f"arith.cmpf of {op.lhs.type} is not supported: compare f32 values"
            )
        if name in ("false", "true"):
            self.k.define(rewriter, op, [], Lowered(getattr(self.k, name)))
            return
        ops = Ops(self.k)
        lhs = ops.reg(self.k.lowered(op.lhs, op))
        d = ops.alu(f"setp.{CMPF[name]}.f32", lhs, self.k.lowered(op.rhs, op))
        self.k.define(rewriter, op, ops, Lowered(d))


CONVERSIONS: dict[type[Operation], str] = {
    arith.SIToFPOp: "cvt.rn.f32.s32",
    tile.SIToFPOp: "cvt.rn.f32.s32",
    tile.FPToSIOp: "cvt.rzi.s32.f32",
    tile.FPToUIOp: "cvt.rzi.u32.f32",
    arith.UIToFPOp: "cvt.rn.f32.u32",
    arith.FPToSIOp: "cvt.rzi.s32.f32",
    arith.FPToUIOp: "cvt.rzi.u32.f32",
}
"""Conversions between f32 and 32-bit integers (float to integer rounds
towards zero and saturates, as the interpreter does)."""
FROM_64 = {"cvt.rn.f32.s32": "cvt.rn.f32.s64", "cvt.rn.f32.u32": "cvt.rn.f32.u64"}
"""The same conversions from a 64-bit integer."""


SELECT = {"f32": "selp.f32", "b32": "selp.b32"}


class Select(DistributePattern):
    """Scalar `arith.select`: one `selp`."""

    OPS = (arith.SelectOp,)

    def rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter):
        opcode = SELECT.get(scalar_class(op.result.type) or "")
        if opcode is None:  # tiles: `ir_checks.tile_compares`
            raise OpDiagnostic(op, f"arith.select of {op.result.type} is not supported")
        ops = Ops(self.k)
        d = ops.alu(opcode, *(self.k.lowered(v, op) for v in (op.lhs, op.rhs, op.cond)))
        self.k.define(rewriter, op, ops, Lowered(d))


PAIR_CONVERSIONS = {
    "bf16": "cvt.rn.bf16x2.f32",
    "f16": "cvt.rn.f16x2.f32",
    "f8E4M3FN": "cvt.rn.satfinite.e4m3x2.f32",
    "f8E5M2": "cvt.rn.satfinite.e5m2x2.f32",
}
"""f32 pair -> one register of two narrower floats (first source the upper one)."""
WIDENINGS = {"f8E4M3FN": "cvt.rn.f16x2.e4m3x2", "f8E5M2": "cvt.rn.f16x2.e5m2x2"}
"""An 8-bit pair -> two f16 halves (exact), on the way back to f32."""


class TruncF(DistributePattern):
    """f32 tile (or a 16-bit one, widened to f32 first: exact, so the value
    is rounded once) -> 16- or 8-bit tile: one conversion per element pair
    (`narrow`)."""

    OPS = (arith.TruncFOp,)

    def rewrite(self, op: arith.TruncFOp, rewriter: PatternRewriter):
        et = element_type(op.result.type)
        if (
            not isinstance(op.result.type, TensorType)
            or et.name not in PAIR_CONVERSIONS
        ):
            raise OpDiagnostic(
                op,
                "arith.truncf is supported on f32, bf16 and f16 register tiles to "
                "bf16, f16, f8E4M3FN or f8E5M2",
            )
        ops = Ops(self.k)
        src = self.k.lowered(op.input, op)
        if not isinstance(element_type(op.input.type), Float32Type):
            src = widen(ops, src, op.input.type)
        self.k.define(rewriter, op, ops, narrow(ops, src, op.result.type))


def narrow(ops: Ops, src: Lowered, t: TensorType) -> Lowered:
    """An f32 tile as the 16- or 8-bit tile type `t`: one conversion per
    element pair (odd element first: it goes to the upper half). A splat is
    one register holding the pair every element reads."""
    opcode = PAIR_CONVERSIONS[element_type(t).name]
    if src.uniform:
        x = ops.reg(src)
        return Lowered(ops.alu(opcode, x, x))
    pairs = fragment_count(t) // 2
    d = ops.alu(
        opcode,
        src.select([2 * i + 1 for i in range(pairs)]),
        src.select([2 * i for i in range(pairs)]),
    )
    # one register of two elements (a row vector's rows r and r + 8) is not
    # a splat: a map says so (`Lowered.uniform` read it as one)
    return Lowered(d, (0,) if pairs == 1 else None)


def widen(ops: Ops, src: Lowered, t: Attribute) -> Lowered:
    """A 16- or 8-bit tile (or 16-bit scalar) of type `t` as f32, exactly:
    unpack each pair, convert each half (an 8-bit pair through two f16
    halves). A splat or a 16-bit scalar (a parameter) is one pair register
    holding the value twice: its low half converted is the uniform f32."""
    et = element_type(t)
    rt = register_type(t)
    assert rt is not None
    pairs = ops.reg(src) if src.uniform else ops.materialize(src, rt)
    half = "bf16" if isinstance(et, BFloat16Type) else "f16"
    if et.name in WIDENINGS:
        pairs = ops.alu(WIDENINGS[et.name], pairs)
    halves = ops.add(ptx.UnpackOp(pairs)).results[0]
    if src.uniform:
        return Lowered(ops.alu(f"cvt.f32.{half}", Lowered(halves, (0,)), count=1))
    return Lowered(ops.alu(f"cvt.f32.{half}", halves))


class ExtF(DistributePattern):
    """16- or 8-bit tile -> f32 tile (`widen`); an 8-bit tile -> bf16 or f16
    through f32 (`narrow`: exact, every 8-bit value is one of theirs). The
    result was left in f32 registers typed as 16-bit pairs: e4m3 1.0 stored
    as bf16 read 0."""

    OPS = (arith.ExtFOp,)

    def rewrite(self, op: arith.ExtFOp, rewriter: PatternRewriter):
        et = element_type(op.input.type)
        if not (is_16bit(et) or et.name in WIDENINGS):
            raise OpDiagnostic(
                op,
                "arith.extf is supported on bf16, f16 and 8-bit float register "
                "tiles and bf16 and f16 scalars",
            )
        ops = Ops(self.k)
        d = widen(ops, self.k.lowered(op.input, op), op.input.type)
        if not isinstance(element_type(op.result.type), Float32Type):
            assert isinstance(op.result.type, TensorType)  # 8-bit: tiles only
            d = narrow(ops, d, op.result.type)
        self.k.define(rewriter, op, ops, d)


class Convert(DistributePattern):
    """f32 <-> i32 scalars and tiles (`tile.sitofp`, `tile.fptosi`,
    `tile.fptoui`; xDSL's ops take scalars only): one `cvt` per element."""

    OPS = tuple(CONVERSIONS)

    def rewrite(self, op: Operation, rewriter: PatternRewriter):
        source, result = op.operands[0].type, op.results[0].type
        opcode = CONVERSIONS[type(op)]
        classes = {scalar_class(element_type(t)) for t in (source, result)}
        if classes == {"f32", "b64"} and opcode in FROM_64:
            opcode = FROM_64[opcode]  # from an i64 scalar parameter
        elif classes != {"f32", "b32"} or element_type(result) == IndexType():
            raise OpDiagnostic(
                op,
                f"{op.name} converts between f32 and 32-bit integers (and from "
                "i64 to f32) only",
            )
        a = self.k.lowered(op.operands[0], op)
        ops = Ops(self.k)
        if a.uniform:
            d = ops.alu(opcode, ops.reg(a))
        else:
            d = ops.alu(opcode, a, count=fragment_count(result))
        self.k.define(rewriter, op, ops, Lowered(d))


INTEGER_CASTS: dict[tuple[int, int], str | None] = {
    (8, 32): None,
    (32, 8): "cvt.s32.s8",
    (32, 64): "cvt.s64.s32",
    (64, 32): "cvt.u32.u64",
}
"""`tile.extsi` / `tile.trunci` by (source, result) width. An i8 element is
its value sign-extended in a `b32` register (`ld.shared.s8` loads it so), so
widening it is no instruction and narrowing to it keeps the low byte
sign-extended; an i64 is one `b64` register."""


class IntegerCast(DistributePattern):
    """`tile.extsi` and `tile.trunci`: one `cvt` per element, or none."""

    OPS = (tile.ExtSIOp, tile.TruncIOp)

    def rewrite(self, op: tile.ExtSIOp | tile.TruncIOp, rewriter: PatternRewriter):
        widths = tuple(element_type(v.type).width.data for v in (op.source, op.result))
        a = self.k.lowered(op.source, op)
        if (opcode := INTEGER_CASTS[widths]) is None:
            self.k.define(rewriter, op, [], a)
            return
        ops = Ops(self.k)
        if a.uniform:
            d = ops.alu(opcode, ops.reg(a))
        else:
            d = ops.alu(opcode, a, count=fragment_count(op.result.type))
        self.k.define(rewriter, op, ops, Lowered(d))


class Iota(DistributePattern):
    """Row (or column) indices of the elements a thread holds: its row base
    (column base 2 t) plus each element's offset, a constant bundle."""

    OPS = (tile.IotaOp,)

    def rewrite(self, op: tile.IotaOp, rewriter: PatternRewriter):
        geom = geometry(op.result.type)
        ops = Ops(self.k)
        if geom.kind == FragmentKind.ROW:
            base = self.k.row0(geom.shape[0], op)
            offsets = [geom.row_offset(k) for k in range(geom.count)]
        elif geom.kind == FragmentKind.COL:
            base = self.k.consumer_ids(op).col0
            offsets = [geom.col_offset(k) for k in range(geom.count)]
        else:
            raise OpDiagnostic(op, "tile.iota is supported on row and column tiles")
        d = ops.alu("add.u32", base, ops.imm(offsets, "b32"))
        self.k.define(rewriter, op, ops, Lowered(d))


class TileCompare(DistributePattern):
    """`tile.cmpi` (signed) and `tile.cmpf`: one `setp` per element, a
    literal left side moved into a register first. 16-bit float tiles are
    widened to f32 first (`widen`: exact, so every predicate, NaN included,
    answers as on the 16-bit values; their registers hold pairs, which one
    `setp` per element cannot read), a tile compared with itself once."""

    OPS = (tile.CmpiOp, tile.CmpfOp)

    def rewrite(self, op: tile.CmpiOp | tile.CmpfOp, rewriter: PatternRewriter):
        ops = Ops(self.k)
        a, b = self.k.lowered(op.lhs, op), self.k.lowered(op.rhs, op)
        if is_16bit(element_type(op.lhs.type)):
            a = widen(ops, a, op.lhs.type)
            b = a if op.rhs == op.lhs else widen(ops, b, op.rhs.type)
        lhs = Lowered(ops.reg(a)) if a.is_imm else a
        if isinstance(op, tile.CmpfOp):
            opcode = f"setp.{CMPF[op.predicate.data]}.f32"
        else:
            opcode = f"setp.{CMP[op.predicate.data]}.s32"
        d = ops.alu(opcode, lhs, b, count=fragment_count(op.result.type))
        self.k.define(rewriter, op, ops, Lowered(d))


class TileSelect(DistributePattern):
    OPS = (tile.SelectOp,)

    def rewrite(self, op: tile.SelectOp, rewriter: PatternRewriter):
        m, a, b = (self.k.lowered(v, op) for v in (op.mask, op.on_true, op.on_false))
        if m.uniform and a.uniform and b.uniform:
            raise OpDiagnostic(
                op, "fold tile constants before lowering (run canonicalize)"
            )
        cls = scalar_class(element_type(op.result.type))
        if cls not in SELECT:
            raise OpDiagnostic(op, f"tile.select of {op.result.type} is not supported")
        ops = Ops(self.k)
        d = ops.alu(SELECT[cls], a, b, m, count=fragment_count(op.result.type))
        self.k.define(rewriter, op, ops, Lowered(d))


def patterns(k: KernelState) -> list[DistributePattern]:
    return [
        Constant(k),
        IndexCast(k),
        Binary(k),
        Unary(k),
        Fma(k),
        CeilDiv(k),
        Cmpi(k),
        Select(k),
        TruncF(k),
        ExtF(k),
        Cmpf(k),
        Convert(k),
        IntegerCast(k),
        Iota(k),
        TileCompare(k),
        TileSelect(k),
    ]
