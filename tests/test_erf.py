"""`math.erf` at the thread level: PTX has no erf instruction, so the lowering
computes it from two polynomials (`lowering/distribute/elementwise._erf`).
Its instructions, run with the thread simulator's meaning of each opcode, are
measured here against `math.erf` on a million points; the exact-GELU example
(`@gemm_bias_gelu_erf`) runs at the thread level in
`test_thread_sim_examples.py` and on the GPU in `tests/gpu/test_gemm_gpu.py`."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import math as mathd

import tawa_xdsl
from tawa_xdsl.interp.ptx_alu import ALU, APPROXIMATE, f32, f32_bits
from tawa_xdsl.lowering.distribute.elementwise import F32_UNARY, X

from .thread_level import simulate_output, to_thread_level

ERF_KERNEL = (Path(__file__).parent / "kernels" / "erf.mlir").read_text()
ERF = np.vectorize(math.erf, otypes=[np.float64])
EX2 = APPROXIMATE["ex2.approx.ftz.f32"]
EX2_ERROR = 2.0**-EX2.bits
"""ex2.approx.f32's relative error bound (PTX ISA)."""


def erf_steps(x: np.ndarray, ex2_scale: float | None = None) -> np.ndarray:
    """The lowering's erf instructions on f32 `x`, each opcode as the thread
    simulator computes it; given `ex2_scale`, 2^x exact times it instead (1:
    the polynomials' own error; 1 +- EX2_ERROR: the hardware's at its bound)."""
    results: list[np.ndarray] = []
    for opcode, operands in F32_UNARY[mathd.ErfOp]:  # x^2 overflows past 1.8e19
        args = [
            f32_bits(x)
            if v == X
            else results[v]
            if isinstance(v, int)
            else f32_bits(np.float32(v))
            for v in operands
        ]
        with np.errstate(over="ignore"):
            out = ALU[opcode](*args)
        if opcode.startswith("ex2") and ex2_scale is not None:
            out = f32_bits(f32(EX2.exact()(*args)) * np.float32(ex2_scale))
        results.append(out)
    return f32(results[-1])


def relative_error(x: np.ndarray, got: np.ndarray) -> np.ndarray:
    expected = ERF(x.astype(np.float64))
    return np.abs(got.astype(np.float64) - expected) / np.abs(expected)


@pytest.fixture(scope="module")
def points() -> np.ndarray:
    """A million f32 points: uniform over [-5, 5] (both branches, the clamp at
    4) and normal (the GELU argument's usual spread), none zero."""
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [rng.uniform(-5, 5, 500_000), rng.standard_normal(500_000)]
    ).astype(np.float32)
    return x[x != 0]


def test_erf_is_within_8e_8_relative_with_an_exact_exp2(points) -> None:
    assert relative_error(points, erf_steps(points, 1.0)).max() < 8e-8


@pytest.mark.parametrize("ex2_scale", [1 - EX2_ERROR, 1 + EX2_ERROR])
def test_erf_is_within_1_3e_7_relative_with_the_hardware_exp2(points, ex2_scale):
    """ex2's error scales erfc = 1 - erf, at most 0.16 of erf where it is used."""
    assert relative_error(points, erf_steps(points, ex2_scale)).max() < 1.3e-7


def test_erf_near_zero_and_at_the_branch() -> None:
    """Tiny x (erf(x) = 2 x / sqrt(pi)), either side of |x| = 1 where the two
    polynomials meet; subnormal x to the nearest subnormal (their spacing,
    2^-149, is all the precision they have)."""
    x = np.array([1e-37, 1e-30, 1e-7, 0.999999, 1.0, 1.000001], np.float32)
    x = np.concatenate([x, -x])
    assert relative_error(x, erf_steps(x, 1.0)).max() < 8e-8
    tiny = np.array([1e-40, -3e-42, 2e-45], np.float32)
    exact = ERF(tiny.astype(np.float64))
    assert np.abs(erf_steps(tiny) - exact).max() <= 2.0**-149


def test_erf_of_special_values() -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, 4.0, -7.5, 1e30, np.nan], np.float32)
    got = erf_steps(x)
    np.testing.assert_array_equal(got[:7], [0.0, -0.0, 1.0, -1.0, 1.0, -1.0, 1.0])
    assert np.signbit(got[1]) and np.isnan(got[7])


def test_the_erf_kernel_at_the_thread_level() -> None:
    """tests/kernels/erf.mlir (what the GPU test runs), lowered as compile()
    lowers it, lane by lane: the instructions measured above, as the kernel
    issues them."""
    module = to_thread_level(tawa_xdsl.parse(ERF_KERNEL), "tawa-hopper-pipeline")
    x = np.random.default_rng(1).uniform(-5, 5, (200, 128)).astype(np.float32)
    got = simulate_output(module, "erf", [x, np.empty_like(x)], 1, (4,))
    np.testing.assert_array_equal(got, erf_steps(x))
    assert relative_error(x, got).max() < 1.3e-7
