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


def test_math_ops_assemble() -> None:
    """Every op above in one kernel's PTX, which ptxas takes for sm_90a."""
    lowered = [
        tawa_xdsl.apply(tawa_xdsl.parse(kernel(op, OPS[op][0])), "tawa-hopper-pipeline")
        for op in OPS
    ]
    for module in lowered:
        result = assemble(kernel_ptx(find_kernel(module, "k")))
        assert result.ok and not result.remarks, result.log[-2000:]
