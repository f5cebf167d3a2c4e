"""Pass orders an outside user scripts: xDSL's cleanups (canonicalize, cse,
dce) between our passes at every level, down to the thread level, keep what
the kernel computes (the thread simulator against the reference
interpreter)."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl

from .test_sweep_kernels import RUNS, _interpreted, _module
from .thread_level import assert_close

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
    got = [
        np.full_like(a, np.nan) if i in run.outputs else a for i, a in enumerate(args)
    ]
    tawa_xdsl.simulate(module, kernel, *got, grid=run.grid, seed=1)
    for out in run.outputs:  # f32 sums in another order: a few f32 ulps
        f32 = got[out].dtype == np.float32
        assert_close(got[out], expected[out], bits=20 if f32 else None)
