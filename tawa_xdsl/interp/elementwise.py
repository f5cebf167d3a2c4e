"""`arith` and `math` on scalars and numpy tiles, for the reference interpreter.

xDSL's own arith interpreter works on Python scalars only; tile kernels apply the
same ops to whole tensors. Every op here computes with numpy and rounds its result
to the MLIR result type (so bf16 math is f32 math rounded to bf16, as on the GPU).
Integers wrap like the hardware: fixed-width ones at their width, index values
(Python ints) at `target.INDEX_BITS`, the signed registers the GPU computes
them in (`i + i` at i = 2^30 is -2^31 there, and so here).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    TensorType,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from tawa_xdsl.dialects import tile
from tawa_xdsl.dtypes import cast, numpy_dtype
from tawa_xdsl.target import INDEX_BITS

COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}
"""The comparisons by the stem their predicates share (`arith.cmpi`'s `slt` and
`ult`, `cmpf`'s `olt` and `ult`, `setp`'s `lt` and `ltu`: `ptx_alu`), elementwise."""


def to_type(value: Any, t: Attribute) -> Any:
    """Round or wrap a numpy/Python value to MLIR type `t` (into 8-bit floats
    saturating, as `dtypes.cast` says)."""
    if isinstance(t, TensorType):
        with np.errstate(over="ignore", invalid="ignore"):
            return cast(value, numpy_dtype(t.element_type))
    if isinstance(t, IndexType):
        return wrap_index(int(value))
    dtype = numpy_dtype(t)
    if dtype == np.bool_:
        return bool(value)
    with np.errstate(over="ignore", invalid="ignore"):
        return cast(value, dtype)[()]


def wrap_index(value: int) -> int:
    """`value` as the GPU's `INDEX_BITS`-bit signed register holds it."""
    half = 1 << (INDEX_BITS - 1)
    return (value + half) % (2 * half) - half


def _wide(x: Any) -> Any:
    """Integers widened to int64 so intermediate results do not wrap early."""
    return np.asarray(x, dtype=np.int64) if not isinstance(x, int) else x


def _div_trunc(a: Any, b: Any) -> Any:
    a, b = _wide(a), _wide(b)
    q = np.abs(a) // np.abs(b)
    return np.where((np.sign(a) * np.sign(b)) < 0, -q, q)


def _rem_trunc(a: Any, b: Any) -> Any:
    return _wide(a) - _wide(b) * _div_trunc(a, b)


def _ceil_div(a: Any, b: Any) -> Any:
    return -(-_wide(a) // _wide(b))  # negated wide: -(-2^31) is 2^31, not -2^31


def _binary(fn: Callable[[Any, Any], Any]):
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return (to_type(fn(args[0], args[1]), op.results[0].type),)

    return run


def _unary(fn: Callable[[Any], Any]):
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        x = args[0]
        if isinstance(x, np.ndarray | np.generic) and x.dtype.itemsize < 4:
            x = x.astype(np.float32)  # 16-bit math is computed in f32, then rounded
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return (to_type(fn(x), op.results[0].type),)

    return run


def _cast(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
    return (to_type(args[0], op.results[0].type),)


def _int_bits(t: Attribute) -> int | None:
    """Bits of a fixed-width integer type (or tile of them); None for index."""
    et = t.element_type if isinstance(t, TensorType) else t
    return None if isinstance(et, IndexType) else np.iinfo(numpy_dtype(et)).bits


def unsigned(x: Any, t: Attribute) -> Any:
    """The bits of integer `x` of type `t` read as an unsigned number: the
    values hold signless integers sign-extended, and the `...ui` ops, like the
    GPU's `.u32` instructions, read the bits (-1 in i32 is 2^32 - 1; index
    at `INDEX_BITS`, the register it lives in)."""
    bits = _int_bits(t)
    return _wide(x) % (1 << (INDEX_BITS if bits is None else bits))


def _unsigned_binary(fn: Callable[[Any, Any], Any]):
    """`_binary` of `fn` on both operands' bits read as unsigned numbers."""

    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        t = op.operands[0].type
        a, b = unsigned(args[0], t), unsigned(args[1], t)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return (to_type(fn(a, b), op.results[0].type),)

    return run


def float_to_int(
    self: Any, interpreter: Interpreter, op: Operation, args: PythonValues
):
    """Towards zero, saturating to the result's range (signed for fptosi,
    unsigned for fptoui, whose bits the signless result holds), NaN to 0, as
    the GPU's `cvt.rzi` does."""
    x = np.nan_to_num(np.trunc(np.asarray(args[0], dtype=np.float64)), nan=0.0)
    t = op.results[0].type
    if (bits := _int_bits(t)) is not None:
        signed = isinstance(op, arith.FPToSIOp | tile.FPToSIOp)
        low, high = (
            (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
        )
        x = np.clip(x, low, high)
        if not signed:  # the unsigned value's bits, as the signless type holds them
            x = np.where(x > 2 ** (bits - 1) - 1, x - 2**bits, x)
    return (to_type(x, t),)


def compare_floats(predicate: str, a: Any, b: Any) -> np.ndarray:
    """`arith.cmpf`'s `predicate` (not `false` / `true`) elementwise, as LLVM's
    `fcmp`: an ordered predicate (`o...`) is false where either side is NaN, an
    unordered one (`u...`) true; `ord` / `uno` say whether neither / either is.
    Compared in float64, which holds every f64, f32, bf16 and f16 exactly."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    unordered = np.isnan(a) | np.isnan(b)
    if predicate in ("ord", "uno"):
        return unordered == (predicate == "uno")
    with np.errstate(invalid="ignore"):
        holds = COMPARE[predicate[1:]](a, b)
    return holds | unordered if predicate.startswith("u") else holds & ~unordered


def _uitofp(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
    """The integer's bits read as an unsigned number."""
    return (to_type(unsigned(args[0], op.operands[0].type), op.results[0].type),)


_erf = np.vectorize(math.erf, otypes=[np.float64])


@register_impls
class ElementwiseFunctions(InterpreterFunctions):
    """Numpy implementations of the `arith` and `math` ops tile kernels use."""

    @impl(arith.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues
    ) -> PythonValues:
        value, t = op.value, op.result.type
        if isinstance(value, DenseIntOrFPElementsAttr):
            assert isinstance(t, TensorType)
            data = np.asarray(value.get_values(), dtype=np.float64)
            if data.size == 1:
                data = np.full(t.get_shape(), data[0])
            return (to_type(data.reshape(t.get_shape()), t),)
        if isinstance(value, IntegerAttr | FloatAttr):
            return (to_type(value.value.data, t),)
        interpreter.raise_error(f"arith.constant of {value} is not supported")

    run_addi = impl(arith.AddiOp)(_binary(lambda a, b: _wide(a) + _wide(b)))
    run_subi = impl(arith.SubiOp)(_binary(lambda a, b: _wide(a) - _wide(b)))
    run_muli = impl(arith.MuliOp)(_binary(lambda a, b: _wide(a) * _wide(b)))
    run_divsi = impl(arith.DivSIOp)(_binary(_div_trunc))
    run_divui = impl(arith.DivUIOp)(_unsigned_binary(lambda a, b: a // b))
    run_remsi = impl(arith.RemSIOp)(_binary(_rem_trunc))
    run_remui = impl(arith.RemUIOp)(_unsigned_binary(lambda a, b: a % b))
    run_ceildivsi = impl(arith.CeilDivSIOp)(_binary(_ceil_div))
    run_ceildivui = impl(arith.CeilDivUIOp)(_unsigned_binary(_ceil_div))
    run_floordivsi = impl(arith.FloorDivSIOp)(
        _binary(lambda a, b: _wide(a) // _wide(b))
    )
    run_minsi = impl(arith.MinSIOp)(_binary(np.minimum))
    run_maxsi = impl(arith.MaxSIOp)(_binary(np.maximum))
    run_minui = impl(arith.MinUIOp)(_unsigned_binary(np.minimum))
    run_maxui = impl(arith.MaxUIOp)(_unsigned_binary(np.maximum))
    run_andi = impl(arith.AndIOp)(_binary(np.bitwise_and))
    run_ori = impl(arith.OrIOp)(_binary(np.bitwise_or))
    run_xori = impl(arith.XOrIOp)(_binary(np.bitwise_xor))
    run_shli = impl(arith.ShLIOp)(_binary(lambda a, b: _wide(a) << _wide(b)))
    run_shrsi = impl(arith.ShRSIOp)(_binary(lambda a, b: _wide(a) >> _wide(b)))

    run_shrui = impl(arith.ShRUIOp)(_unsigned_binary(lambda a, b: a >> b))

    run_addf = impl(arith.AddfOp)(_binary(np.add))
    run_subf = impl(arith.SubfOp)(_binary(np.subtract))
    run_mulf = impl(arith.MulfOp)(_binary(np.multiply))
    run_divf = impl(arith.DivfOp)(_binary(np.divide))
    run_maximumf = impl(arith.MaximumfOp)(_binary(np.maximum))
    run_minimumf = impl(arith.MinimumfOp)(_binary(np.minimum))
    run_maxnumf = impl(arith.MaxnumfOp)(_binary(np.fmax))
    run_minnumf = impl(arith.MinnumfOp)(_binary(np.fmin))
    run_negf = impl(arith.NegfOp)(_unary(np.negative))

    run_extf = impl(arith.ExtFOp)(_cast)
    run_truncf = impl(arith.TruncFOp)(_cast)
    run_sitofp = impl(arith.SIToFPOp)(_cast)
    run_uitofp = impl(arith.UIToFPOp)(_uitofp)
    run_fptosi = impl(arith.FPToSIOp)(float_to_int)
    run_fptoui = impl(arith.FPToUIOp)(float_to_int)
    run_index_cast = impl(arith.IndexCastOp)(_cast)
    run_extsi = impl(arith.ExtSIOp)(_cast)
    run_extui = impl(arith.ExtUIOp)(_cast)
    run_trunci = impl(arith.TruncIOp)(_cast)

    @impl(arith.CmpiOp)
    def run_cmpi(
        self, interpreter: Interpreter, op: arith.CmpiOp, args: PythonValues
    ) -> PythonValues:
        name = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        a, b = args
        if name.startswith("u"):  # ult, ule, ugt, uge: the bits, unsigned
            a, b = unsigned(a, op.lhs.type), unsigned(b, op.lhs.type)
        return (bool(COMPARE[name.lstrip("su")](a, b)),)

    @impl(arith.CmpfOp)
    def run_cmpf(
        self, interpreter: Interpreter, op: arith.CmpfOp, args: PythonValues
    ) -> PythonValues:
        name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        if name in ("false", "true"):
            return (name == "true",)
        return (bool(compare_floats(name, args[0], args[1])),)

    @impl(arith.SelectOp)
    def run_select(
        self, interpreter: Interpreter, op: arith.SelectOp, args: PythonValues
    ) -> PythonValues:
        return (args[1] if args[0] else args[2],)

    run_exp = impl(mathd.ExpOp)(_unary(np.exp))
    run_exp2 = impl(mathd.Exp2Op)(_unary(np.exp2))
    run_log = impl(mathd.LogOp)(_unary(np.log))
    run_log2 = impl(mathd.Log2Op)(_unary(np.log2))
    run_sqrt = impl(mathd.SqrtOp)(_unary(np.sqrt))
    run_rsqrt = impl(mathd.RsqrtOp)(_unary(lambda x: 1 / np.sqrt(x)))
    run_tanh = impl(mathd.TanhOp)(_unary(np.tanh))
    run_erf = impl(mathd.ErfOp)(_unary(_erf))
    run_absf = impl(mathd.AbsFOp)(_unary(np.abs))
    run_floor = impl(mathd.FloorOp)(_unary(np.floor))
    run_ceil = impl(mathd.CeilOp)(_unary(np.ceil))
    run_trunc = impl(mathd.TruncOp)(_unary(np.trunc))
    run_roundeven = impl(mathd.RoundEvenOp)(_unary(np.rint))
    run_sin = impl(mathd.SinOp)(_unary(np.sin))
    run_cos = impl(mathd.CosOp)(_unary(np.cos))
    run_log10 = impl(mathd.Log10Op)(_unary(np.log10))
    run_copysign = impl(mathd.CopySignOp)(_binary(np.copysign))

    @impl(mathd.FmaOp)
    def run_fma(
        self, interpreter: Interpreter, op: mathd.FmaOp, args: PythonValues
    ) -> PythonValues:
        a, b, c = (np.asarray(x, dtype=np.float64) for x in args)
        return (to_type(a * b + c, op.result.type),)  # the product exact, as fma.rn
