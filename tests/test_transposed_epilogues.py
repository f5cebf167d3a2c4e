"""GEMMs storing an epilogue that reads the accumulator twice, transposed
(`kernels/transposed_epilogues.mlir`: `acc + relu(acc)`, `acc * sigmoid(acc)`).
Canonicalization moves the transposes up once every read of a value is
transposed (`transforms/transposes.py`), so the dot is computed once, as
B A^T; they were refused ("a register tile cannot be transposed"). The
interpreter computes the float64 reference (on the kernel as written); the
barrier simulator and the thread level compute what it does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dialects import tile
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.kernel import find_kernel

from .conftest import sweep
from .thread_level import assert_close, simulate_output, to_thread_level

SOURCE = Path(__file__).parent / "kernels" / "transposed_epilogues.mlir"
M, N, K = 200, 100, 72  # edge tiles both ways, a partial K step
GRID = (2, 2)

CASES: dict[str, tuple[type, Callable[[np.ndarray], np.ndarray]]] = {
    # kernel: (output dtype, epilogue on the float64 accumulator)
    "gemm_trans_twice": (bfloat16, lambda acc: acc + np.maximum(acc, 0)),
    "gemm_trans_silu": (np.float32, lambda acc: acc / (1 + np.exp(-acc))),
}


def interpreted(kernel: str) -> tuple[list[np.ndarray], np.ndarray]:
    """(arguments with the interpreter's output, the float64 reference)."""
    dtype, epilogue = CASES[kernel]
    rng = np.random.default_rng(12)
    a = rng.standard_normal((M, K)).astype(bfloat16)
    b = rng.standard_normal((N, K)).astype(bfloat16)
    args = [a, b, np.full((N, M), np.nan, dtype)]
    tawa_xdsl.interpret(tawa_xdsl.parse(SOURCE), kernel, *args, grid=GRID)
    acc = a.astype(np.float64) @ b.astype(np.float64).T
    return args, epilogue(acc).T


@pytest.mark.parametrize("kernel", sorted(CASES))
def test_the_dot_is_transposed_once(kernel: str) -> None:
    module = tawa_xdsl.apply(tawa_xdsl.parse(SOURCE), "canonicalize")
    ops = list(find_kernel(module, kernel).walk())
    assert len([op for op in ops if isinstance(op, tile.DotOp)]) == 1
    for op in ops:  # only loaded tiles are transposed
        if isinstance(op, tile.TransOp):
            assert isinstance(op.source.owner, tile.LoadOp)


@pytest.mark.parametrize("kernel", sorted(CASES))
def test_the_interpreter_computes_the_reference(kernel: str) -> None:
    args, expected = interpreted(kernel)
    # f32 sums of bf16 products in another order: a few f32 units of |acc|
    np.testing.assert_allclose(
        args[-1].astype(np.float64),
        expected.astype(args[-1].dtype).astype(np.float64),
        rtol=1e-2 if args[-1].dtype == bfloat16 else 1e-5,
        atol=1e-4,
    )


@pytest.mark.exhaustive  # CI: the thread level runs the same lowered kernel
def test_the_barrier_simulator_agrees() -> None:
    kernel = "gemm_trans_twice"
    args, _ = interpreted(kernel)
    lowered = tawa_xdsl.apply(tawa_xdsl.parse(SOURCE), "tawa-hopper-pipeline")
    # the dot as B A^T sums in another order: bf16 results may round apart
    assert_close(simulate_output(lowered, kernel, args, 2, GRID), args[-1])


CONFIGS = [("gemm_trans_twice", ""), ("gemm_trans_silu", "tma-store=false")]


@pytest.mark.parametrize(
    ("kernel", "options"),
    sweep(CONFIGS, {CONFIGS[0]}, lambda c: "-".join(filter(None, c)), slow=()),
)
def test_the_thread_level_agrees(kernel: str, options: str) -> None:
    args, _ = interpreted(kernel)
    module = to_thread_level(
        tawa_xdsl.parse(SOURCE), f"tawa-hopper-pipeline{{{options}}}"
    )
    # ex2.approx and rcp.approx in the sigmoid: a few f32 units
    ulps = 2 if args[-1].dtype == bfloat16 else 8
    assert_close(simulate_output(module, kernel, args, 2, GRID), args[-1], ulps)
