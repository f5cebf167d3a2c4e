"""Valid kernels that stages of the compiler once refused or broke (issue 14.3).

Each kernel in `tests/kernels/` is transformed with a few pass lists (to aref
IR, and through the whole Hopper pipeline); the simulators must compute bit for
bit what the reference interpreter computes on the tile kernel, and the PTX of
lowered kernels must assemble for sm_90a without a ptxas remark (C75xx) or a
spill.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.contract import is_lowered
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.grid import grid_rule, infer_grid
from tawa_xdsl.kernel import find_kernel
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.lowering.ptx_target import kernel_ptx

from .thread_level import program_grid

KERNELS = Path(__file__).parent / "kernels"


def _random(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.standard_normal(shape).astype(bfloat16)


@dataclass(frozen=True)
class Run:
    """A kernel of `tests/kernels/<file>`, its inputs, output and grid."""

    file: str
    inputs: tuple[Callable[[np.random.Generator], np.ndarray], ...]
    out_shape: tuple[int, ...]
    grid: tuple[int, ...]
    scalars: tuple[Any, ...] = ()


RUNS = {  # small problems that still take every path (edge tiles, several trips)
    "attention_i32": Run(
        "attention_i32.mlir", (_random(2, 128, 64),) * 3, (2, 128, 64), (2, 2), (2,)
    ),
    "gemm_two_loops": Run(
        "gemm_two_loops.mlir",
        (_random(200, 130), _random(150, 130), _random(200, 70), _random(150, 70)),
        (200, 150),
        (2, 2),
    ),
    "gemm_rows": Run(
        "gemm_rows.mlir",
        (_random(200, 130), _random(150, 130)),
        (200, 150),
        (2, 2),
        (128,),
    ),
    "gemm_while": Run(
        "gemm_while.mlir",
        (_random(200, 130), _random(150, 130)),
        (200, 150),
        (2, 2),
        (3, 1),
    ),
}

OPTIONS = {  # the tuned defaults, as compile() lowers, and exact configurations
    "attention_i32": [
        "tawa-hopper-pipeline",
        "aref-partition,pipeline{num-stages=3 two-stage=true}",
        "tawa-hopper-pipeline{tuned=false num-stages=2 mma-depth=1}",
        "tawa-hopper-pipeline{tuned=false num-stages=3 mma-depth=1 two-stage=true}",
        "tawa-hopper-pipeline{tuned=false num-stages=3 mma-depth=2 persistent=true}",
    ],
    "gemm_two_loops": [
        "tawa-hopper-pipeline",
        "tawa-hopper-pipeline{tuned=false num-stages=4 mma-depth=2 num-consumers=2}",
        "tawa-hopper-pipeline{tuned=false num-stages=3 mma-depth=1 num-consumers=2 persistent=true}",
    ],
    "gemm_rows": [
        "tawa-hopper-pipeline",
        "tawa-hopper-pipeline{tuned=false num-stages=3 mma-depth=2 persistent=true}",
    ],
    "gemm_while": [
        "tawa-hopper-pipeline",
        "aref-partition,pipeline{num-stages=2}",
        "tawa-hopper-pipeline{tuned=false num-stages=3 mma-depth=2}",
        "tawa-hopper-pipeline{tuned=false num-stages=4 mma-depth=1 num-consumers=2 persistent=true}",
    ],
}

CASES = [(k, o) for k, options in OPTIONS.items() for o in options]


def _reference(run: Run, kernel: str, inputs: list[np.ndarray]) -> np.ndarray:
    expected = np.full(run.out_shape, np.nan, dtype=bfloat16)
    module = tawa_xdsl.parse(KERNELS / run.file)
    tawa_xdsl.interpret(module, kernel, *inputs, expected, *run.scalars, grid=run.grid)
    return expected


@pytest.mark.parametrize(("kernel", "options"), CASES)
def test_lowered_kernel_computes_the_reference(kernel: str, options: str) -> None:
    run = RUNS[kernel]
    rng = np.random.default_rng(5)
    inputs = [make(rng) for make in run.inputs]
    expected = _reference(run, kernel, inputs)
    assert not np.isnan(expected.astype(np.float32)).any()
    lowered = tawa_xdsl.apply(tawa_xdsl.parse(KERNELS / run.file), options)
    for seed in range(2):
        out = np.full(run.out_shape, np.nan, dtype=bfloat16)
        grid = program_grid(lowered, kernel, run.grid)
        tawa_xdsl.simulate(
            lowered, kernel, *inputs, out, *run.scalars, grid=grid, seed=seed
        )
        assert np.array_equal(out.view(np.uint16), expected.view(np.uint16))
    if not is_lowered(find_kernel(lowered, kernel)):
        return  # aref level: no PTX yet
    result = assemble(kernel_ptx(find_kernel(lowered, kernel)))
    assert result.ok, result.log[-3000:]
    assert result.remarks == [], result.remarks
    assert not result.spills, result.log[-3000:]


def test_grid_from_a_scalar_and_a_row_offset() -> None:
    """gemm_rows stores at program_id(x) * rows + a row offset, rows a scalar:
    the rule reads the grid off it, at launch and in `persistent`, whose kernel
    run by two programs writes what the original writes over its grid."""
    run = RUNS["gemm_rows"]
    rng = np.random.default_rng(9)
    inputs = [make(rng) for make in run.inputs]
    kernel = find_kernel(tawa_xdsl.parse(KERNELS / run.file), "gemm_rows")
    out = np.full(run.out_shape, np.nan, dtype=bfloat16)
    assert infer_grid(grid_rule(kernel), [*inputs, out, *run.scalars]) == (2, 2, 1)
    assert infer_grid(grid_rule(kernel), [*inputs, out, 64]) == (4, 2, 1)
    expected = _reference(run, "gemm_rows", inputs)
    persistent = tawa_xdsl.apply(tawa_xdsl.parse(KERNELS / run.file), "persistent")
    tawa_xdsl.interpret(persistent, "gemm_rows", *inputs, out, *run.scalars, grid=(2,))
    assert np.array_equal(out.view(np.uint16), expected.view(np.uint16))
