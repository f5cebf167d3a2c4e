"""The `.approx` instructions on the H100 within the bounds the thread simulator
models them at (`interp/ptx_alu.APPROXIMATE`, the PTX ISA's): the one-instruction
math ops of tests/test_elementwise_ops.py (tanh, exp2, log2, rsqrt) against
float64 on the same inputs. A bound here that the hardware passes is one the
simulator's errors reach: a kernel's tolerance that holds in the simulator holds
on the GPU."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl

from ..test_elementwise_ops import APPROXIMATE, SUBNORMAL, kernel


@pytest.mark.parametrize("op", sorted(APPROXIMATE))
def test_approximate_ops_stay_within_the_isa_bound(torch, op: str) -> None:
    reference, given, bound = APPROXIMATE[op]
    rng = np.random.default_rng(3)
    x = given(rng.standard_normal((1000, 1000))).astype(np.float32)
    out = np.full_like(x, np.nan)
    tawa_xdsl.compile(tawa_xdsl.parse(kernel(op, 1)), "k")(x, out)
    exact = reference(x.astype(np.float64))
    error = np.abs(out - exact)
    worst = float((error / (bound(exact) + 2.0**-24 * np.abs(exact))).max())
    print(f"{op}: largest error {worst:.3g} of the bound")
    assert worst <= 1


@pytest.mark.parametrize("op", sorted(SUBNORMAL))
def test_logs_and_rsqrt_of_subnormal_inputs(torch, op: str) -> None:
    """lg2.approx.f32 and rsqrt.approx.f32 (not .ftz) read subnormal inputs
    on the H100 as the thread simulator does (log 1e-40 is -92.1, not -inf)."""
    x = np.full((64, 128), 2.0, np.float32)
    x[0, :4] = [1e-40, 1.4e-45, 1.1e-38, 5e-39]
    out = np.full_like(x, np.nan)
    tawa_xdsl.compile(tawa_xdsl.parse(kernel(op, 1)), "k")(x, out)
    np.testing.assert_allclose(out, SUBNORMAL[op](x.astype(np.float64)), rtol=2e-6)
