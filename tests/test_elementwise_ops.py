"""`math` ops at the thread level (found by the outside-user sweep: the tile
passes took ops that `-t ptx` refused). Each op here is lowered to PTX
instructions (`lowering/distribute/elementwise.py`) that ptxas takes; the thread
simulator must compute what the interpreter computes, and the interpreter what
float64 numpy computes, on edge tiles (100 x 200 elements in 64 x 128 tiles).
"""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.kernel import find_kernel
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.lowering.ptx_target import kernel_ptx

from .thread_level import simulate_output, to_thread_level

T = "tensor<64x128xf32>"
DESC = "!tile.desc<?x?xf32, box = [64, 128]>"


def kernel(op: str, arity: int) -> str:
    """out = op(x0, ..., x{arity-1}) elementwise, over f32 tiles (log10 of
    magnitudes)."""
    params = ", ".join(f"%x{i}: {DESC}" for i in range(arity))
    loads = "\n".join(
        f"  %t{i} = tile.load %x{i}[%m0, %n0] : {DESC} -> {T}" for i in range(arity)
    )
    operands = ", ".join(f"%t{i}" for i in range(arity))
    magnitude = f"%a = math.absf %t0 : {T}" if op == "math.log10" else ""
    if magnitude:
        operands = "%a"
    return f"""
func.func @k({params}, %o: {DESC}) attributes {{tile.kernel}} {{
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c128 : index
{loads}
  {magnitude}
  %y = {op} {operands} : {T}
  tile.store %y, %o[%m0, %n0] : {T} -> {DESC}
  func.return
}}"""


OPS = {  # op: (arity, float64 reference, the thread level's error: ulps, absolute)
    "math.sin": (1, np.sin, 1, 2e-6),  # after reducing |x| up to 100 into [-pi, pi]
    "math.cos": (1, np.cos, 1, 2e-6),
    "math.trunc": (1, np.trunc, 0, 0),
    "math.roundeven": (1, np.rint, 0, 0),
    "math.log10": (1, lambda x: np.log10(np.abs(x)), 4, 0),  # log2 x times log10 2
    "math.copysign": (2, np.copysign, 0, 0),
    "math.fma": (3, lambda a, b, c: a * b + c, 0, 0),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_math_op_at_the_thread_level(op: str) -> None:
    arity, reference, ulps, tolerance = OPS[op]
    source = kernel(op, arity)
    rng = np.random.default_rng(1)
    # halves (round-to-even ties) and large arguments (sin and cos reduce them)
    inputs = [
        (np.round(rng.standard_normal((100, 200)) * 8, 1) * 2.5).astype(np.float32)
        for _ in range(arity)
    ]
    args = [*inputs, np.full((100, 200), np.nan, np.float32)]
    grid = (2, 2)
    tawa_xdsl.interpret(tawa_xdsl.parse(source), "k", *args, grid=grid)
    expected = args[-1].copy()
    with np.errstate(divide="ignore"):  # log10 of 0
        exact = reference(*(x.astype(np.float64) for x in inputs))
    np.testing.assert_allclose(expected, exact, rtol=2.0**-23)
    module = to_thread_level(tawa_xdsl.parse(source), "tawa-hopper-pipeline")
    got = simulate_output(module, "k", args, len(args) - 1, grid)
    np.testing.assert_allclose(got, expected, rtol=ulps * 2.0**-23, atol=tolerance)


APPROXIMATE = {  # op: (float64 reference, input, the PTX ISA's error bound)
    "math.tanh": (np.tanh, lambda x: 3 * x, lambda y: 2.0**-10.987 * np.abs(y)),
    "math.exp2": (np.exp2, lambda x: 8 * x, lambda y: 2.0**-22 * y),
    "math.log2": (
        np.log2,
        lambda x: np.abs(x) + 0.25,
        lambda y: 2.0**-22 * np.maximum(np.abs(y), 1),
    ),
    "math.rsqrt": (
        lambda x: 1 / np.sqrt(x),
        lambda x: np.abs(x) + 0.25,
        lambda y: 2.0**-22.9 * y,
    ),
}
"""The math ops that are one `.approx` instruction, each with its input range
and the error the ISA allows it (lg2's is absolute near x = 1)."""


@pytest.mark.parametrize("op", sorted(APPROXIMATE))
def test_approximate_ops_err_as_the_gpu_may(op: str) -> None:
    """The thread level computes an `.approx` op within the ISA's bound of the
    exact value (plus the f32 rounding of the result), erring by more than a
    quarter of it somewhere: a tolerance tighter than the GPU's fails here as
    it could there. With `exact_math` it is exact to the f32 rounding."""
    reference, given, bound = APPROXIMATE[op]
    source = kernel(op, 1)
    x = given(np.random.default_rng(2).standard_normal((64, 128))).astype(np.float32)
    exact = reference(x.astype(np.float64))
    module = to_thread_level(tawa_xdsl.parse(source), "tawa-hopper-pipeline")
    args = [x, np.full_like(x, np.nan)]
    error = np.abs(simulate_output(module, "k", args, 1, (1, 1)) - exact)
    rounding = 2.0**-24 * np.abs(exact)
    assert (error <= bound(exact) + rounding).all()
    assert (error > bound(exact) / 4).any()
    got = simulate_output(module, "k", args, 1, (1, 1), exact_math=True)
    assert (np.abs(got - exact) <= rounding).all()


SUBNORMAL = {  # op: float64 reference
    "math.log": np.log,
    "math.log2": np.log2,
    "math.log10": lambda x: np.log10(np.abs(x)),
    "math.rsqrt": lambda x: 1 / np.sqrt(x),
}


@pytest.mark.parametrize("op", sorted(SUBNORMAL))
def test_logs_and_rsqrt_read_subnormal_inputs(op: str) -> None:
    """lg2 and rsqrt are the forms without .ftz: a subnormal input is read,
    as numpy reads it (the .ftz forms flushed it to zero: log 1e-40 was -inf
    for -92.1, rsqrt 1e-40 inf for 1e20); ex2 keeps .ftz (a subnormal
    result is less than 2^-126 from the exact one)."""
    x = np.full((64, 128), 2.0, np.float32)
    x[0, :4] = [1e-40, 1.4e-45, 1.1e-38, 5e-39]
    module = to_thread_level(tawa_xdsl.parse(kernel(op, 1)), "tawa-hopper-pipeline")
    got = simulate_output(module, "k", [x, np.full_like(x, np.nan)], 1, (1, 1))
    np.testing.assert_allclose(got, SUBNORMAL[op](x.astype(np.float64)), rtol=2e-6)


def test_math_ops_assemble() -> None:
    """Every op above in one kernel's PTX, which ptxas takes for sm_90a."""
    lowered = [
        tawa_xdsl.apply(tawa_xdsl.parse(kernel(op, OPS[op][0])), "tawa-hopper-pipeline")
        for op in OPS
    ]
    for module in lowered:
        result = assemble(kernel_ptx(find_kernel(module, "k")))
        assert result.ok and not result.remarks, result.log[-2000:]


def test_every_lowered_op_is_listed() -> None:
    """`LOWERED` (the arith and math ops the tile passes accept) is what the
    thread level converts: an op listed but not lowered would reach -t ptx and
    be refused there, one lowered but not listed would be refused at the
    first pass."""
    from tawa_xdsl.analysis.elementwise import LOWERED
    from tawa_xdsl.lowering.distribute import FAMILIES

    converted: dict[str, set[str]] = {dialect: set() for dialect in LOWERED}
    for family in FAMILIES:
        for pattern in family.patterns(None):
            for t in pattern.OPS:
                if t.dialect_name() in LOWERED:
                    converted[t.dialect_name()].add(t.name.split(".", 1)[1])
    assert converted == LOWERED


def scalar_kernel(body: str) -> str:
    """Stores a tile of the f32 scalar `%v` that `body` computes from the
    parameters %a, %b (f32) and %n (i32)."""
    return f"""
func.func @s(%o: {DESC}, %a: f32, %b: f32, %n: i32) attributes {{tile.kernel}} {{
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
{body}
  %t = tile.splat %v : f32 -> {T}
  tile.store %t, %o[%c0, %c0] : {T} -> {DESC}
  func.return
}}"""


PREDICATES = [
    "false",
    "oeq",
    "ogt",
    "oge",
    "olt",
    "ole",
    "one",
    "ord",
    "ueq",
    "ugt",
    "uge",
    "ult",
    "ule",
    "une",
    "uno",
    "true",
]
CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
SCALARS = {
    # every cmpf predicate, predicate k adding 2^k
    "cmpf": "\n".join(
        f"  %p{k} = arith.cmpf {p}, %a, %b : f32\n"
        f"  %w{k} = arith.constant {float(2**k)} : f32\n"
        f"  %s{k} = arith.select %p{k}, %w{k}, %zero : f32\n"
        f"  %v{k} = arith.addf {'%zero' if k == 0 else f'%v{k - 1}'}, %s{k} : f32"
        for k, p in enumerate(PREDICATES)
    )
    + f"\n  %v = arith.addf %v{len(PREDICATES) - 1}, %zero : f32",
    "fptosi": "  %i = arith.fptosi %a : f32 to i32\n  %v = arith.sitofp %i : i32 to f32",
    "fptoui": "  %i = arith.fptoui %a : f32 to i32\n  %v = arith.uitofp %i : i32 to f32",
    "uitofp": "  %v = arith.uitofp %n : i32 to f32",
    "shrui": "  %c3 = arith.constant 3 : i32\n  %i = arith.shrui %n, %c3 : i32\n"
    "  %v = arith.uitofp %i : i32 to f32",
    # every cmpi predicate of %n against 5, predicate k adding 2^k
    "cmpi": "  %c5 = arith.constant 5 : i32\n"
    + "\n".join(
        f"  %p{k} = arith.cmpi {p}, %n, %c5 : i32\n"
        f"  %w{k} = arith.constant {float(2**k)} : f32\n"
        f"  %s{k} = arith.select %p{k}, %w{k}, %zero : f32\n"
        f"  %v{k} = arith.addf {'%zero' if k == 0 else f'%v{k - 1}'}, %s{k} : f32"
        for k, p in enumerate(CMPI)
    )
    + f"\n  %v = arith.addf %v{len(CMPI) - 1}, %zero : f32",
    **{
        op: f"  %c5 = arith.constant 5 : i32\n  %i = arith.{op} %n, %c5 : i32\n"
        "  %v = arith.uitofp %i : i32 to f32"
        for op in ("divui", "remui", "ceildivui", "maxui", "minui")
    },
    "ceildivsi": "  %cm2 = arith.constant -2 : i32\n  %i = arith.ceildivsi %n, %cm2 : i32\n"
    "  %v = arith.sitofp %i : i32 to f32",
    "ceildivsi3": "  %c3 = arith.constant 3 : i32\n  %i = arith.ceildivsi %n, %c3 : i32\n"
    "  %v = arith.sitofp %i : i32 to f32",
}
NAN = float("nan")
EXPECTED = {  # (a, b, n) -> the value, as the GPU computes it
    "fptosi": {(-7.9, 0, 0): -7.0, (3e9, 0, 0): 2.0**31 - 1, (NAN, 0, 0): 0.0},
    "fptoui": {(-7.9, 0, 0): 0.0, (3e9, 0, 0): 3e9, (5e9, 0, 0): 2.0**32 - 1},
    "uitofp": {(0, 0, -7): 2.0**32 - 7},
    "shrui": {(0, 0, -8): 2.0**29 - 1},
    # -7 is 2^32 - 7 to the unsigned ops (the interpreter read it signed)
    "cmpi": {
        (0, 0, -7): sum(
            2.0 ** CMPI.index(p) for p in ["ne", "slt", "sle", "ugt", "uge"]
        ),
        (0, 0, 5): sum(
            2.0 ** CMPI.index(p) for p in ["eq", "sle", "sge", "ule", "uge"]
        ),
    },
    "divui": {(0, 0, -7): 858993457.0},
    "remui": {(0, 0, -7): 4.0},
    "ceildivui": {(0, 0, -7): 858993458.0},
    "maxui": {(0, 0, -7): 2.0**32 - 7},
    "minui": {(0, 0, -7): 5.0},
    # a negative divisor: the quotient towards zero is the ceiling where the
    # signs differ (the thread level added one: 7 / -2 gave -2)
    "ceildivsi": {(0, 0, 7): -3.0, (0, 0, -7): 4.0, (0, 0, -8): 4.0, (0, 0, 0): 0.0},
    "ceildivsi3": {(0, 0, -(2**31)): -715827882.0, (0, 0, 7): 3.0},
    "cmpf": {  # ord: bit 7, uno: bit 14, true: bit 15
        (1.0, 2.0, 0): sum(
            2.0 ** PREDICATES.index(p)
            for p in ["one", "olt", "ole", "ord", "une", "ult", "ule", "true"]
        ),
        (NAN, 2.0, 0): sum(
            2.0 ** PREDICATES.index(p)
            for p in ["ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]
        ),
    },
}


@pytest.mark.parametrize("op", sorted(SCALARS))
def test_scalar_op_at_the_thread_level(op: str) -> None:
    """Scalar comparisons, conversions and integer quotients: what the GPU
    computes (saturating float-to-integer conversions, unsigned integers read
    as unsigned, NaN compares unordered, ceilings of negative quotients), in
    the interpreter and in the thread simulator."""
    source = scalar_kernel(SCALARS[op])
    module = to_thread_level(tawa_xdsl.parse(source), "tawa-hopper-pipeline")
    for (a, b, n), value in EXPECTED[op].items():
        args = [np.full((64, 128), np.nan, np.float32), np.float32(a), np.float32(b), n]
        tawa_xdsl.interpret(tawa_xdsl.parse(source), "s", *args)
        assert args[0][0, 0] == np.float32(value), (a, b, n)
        got = simulate_output(module, "s", args, 0, (1,))
        np.testing.assert_array_equal(got, args[0])


def test_integer_quotients_assemble() -> None:
    """The ceilings of signed and unsigned quotients (a remainder's sign
    compared with the divisor's, `setp.ge.and.s32`) are PTX ptxas takes."""
    body = """  %c5 = arith.constant 5 : i32
  %cm2 = arith.constant -2 : i32
  %q = arith.ceildivsi %n, %cm2 : i32
  %u = arith.ceildivui %n, %c5 : i32
  %s = arith.addi %q, %u : i32
  %v = arith.sitofp %s : i32 to f32"""
    module = tawa_xdsl.apply(
        tawa_xdsl.parse(scalar_kernel(body)), "tawa-hopper-pipeline"
    )
    result = assemble(kernel_ptx(find_kernel(module, "s")))
    assert result.ok and not result.remarks, result.log[-2000:]


def test_interpreter_refuses_an_op_it_cannot_run_where_written() -> None:
    """An op no level compiles is named at its line, as the lowering names it
    (xDSL's interpreter said 'Could not find interpretation function', at no
    line)."""
    source = kernel("math.atan", 1)
    args = [np.zeros((64, 128), np.float32), np.zeros((64, 128), np.float32)]
    with pytest.raises(
        OpDiagnostic, match=r"<string>:11:3: error: math.atan has no thread-level form"
    ):
        tawa_xdsl.interpret(tawa_xdsl.parse(source), "k", *args)
