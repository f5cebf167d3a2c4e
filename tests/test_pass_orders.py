"""Pass orders an outside user scripts: xDSL's cleanups (canonicalize, cse,
dce) between our passes at every level, down to the thread level, keep what
the kernel computes (the thread simulator against the reference
interpreter); and any two passes in a row either run or are refused with
diagnostics located in the source."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

import tawa_xdsl

from .conftest import EXAMPLES
from .test_sweep_kernels import RUNS, _interpreted, _module, poisoned
from .thread_level import assert_close, program_grid

CLEAN = "canonicalize,cse,dce"
ORDERS = {
    "between-every-pass": ",".join(
        [
            CLEAN,
            "aref-partition",
            CLEAN,
            "cooperative",
            CLEAN,
            "pipeline{num-stages=2}",
            CLEAN,
            "convert-aref-to-nvgpu-async",
            CLEAN,
            "select-store-path",
            CLEAN,
            "distribute-fragments",
            CLEAN,
        ]
    ),
    "after-the-pipeline": f"tawa-hopper-pipeline,distribute-fragments,{CLEAN}",
}


@pytest.mark.parametrize("order", sorted(ORDERS))
@pytest.mark.parametrize("kernel", ["gemm_64x64", "row_softmax"])
def test_cleanups_anywhere_keep_the_kernel(kernel: str, order: str) -> None:
    run = RUNS[kernel]
    args, expected = _interpreted(kernel, seed=5)
    module = tawa_xdsl.apply(_module(kernel), ORDERS[order])
    got = [poisoned(a) if i in run.outputs else a for i, a in enumerate(args)]
    grid = program_grid(module, kernel, run.grid)
    tawa_xdsl.simulate(module, kernel, *got, grid=grid, seed=1)
    for out in run.outputs:  # f32 sums in another order: a few f32 ulps
        f32 = got[out].dtype == np.float32
        assert_close(got[out], expected[out], bits=20 if f32 else None)


PASSES = [
    "tile-shape{block-n=64}",
    "reverse-grid",
    "cluster",
    "persistent",
    "persistent{dynamic=true}",
    "split-k{splits=2}",
    "stream-k",
    "aref-partition",
    "cooperative",
    "register-budget{producer=40 consumer=232}",
    "pipeline{num-stages=4}",
    "convert-aref-to-nvgpu-async",
    "ping-pong",
    "select-store-path",
    "distribute-fragments",
    "ptx-allocate",
    "canonicalize",
    "cse",
    "dce",
    "tawa-hopper-pipeline",
]
LOCATED = re.compile(r"^\S+\.mlir:\d+:\d+: error: ")


def _outcome(module: ModuleOp, spec: str) -> ModuleOp | None:
    """`module` after `spec`, or None where a pass refused it with diagnostics
    that are each located in the source file (a bug of ours escapes)."""
    try:
        return tawa_xdsl.apply(module, spec)
    except DiagnosticException as e:
        lines = str(e).splitlines()
        assert all(LOCATED.match(line) for line in lines), f"{spec}: {e}"
        return None


@pytest.mark.parametrize(
    "file",
    [
        pytest.param("gemm.mlir", marks=pytest.mark.slow),
        # the same passes on the epilogue's kernel: under --exhaustive
        pytest.param("gemm_epilogue.mlir", marks=pytest.mark.exhaustive),
    ],
)
def test_every_ordered_pair_of_passes_runs_or_is_refused_at_the_op(file: str) -> None:
    """Every pass, then every pass again: the result verifies (apply checks
    it), or each refusal is a diagnostic located in the file; never a
    traceback, an internal error or a bare `error:` (split-k then cluster
    reported the reduce kernel's load without a location)."""
    source = tawa_xdsl.parse(EXAMPLES / file)
    for first in PASSES:
        after = _outcome(source.clone(), first)
        if after is None:
            continue
        for second in PASSES:
            _outcome(after.clone(), second)
