"""Float comparisons and float-to-integer casts on tiles on the H100 (the
kernels of tests/kernels/cmpf.mlir, compiled with the tuned options, run from
host arrays): the row kernels give their references bit for bit (NaN, signed
zeros, a subnormal, infinities and values past the i32 and u32 ranges: what
`setp.<cmp>.f32` and `cvt.rzi` do is what tile.cmpf and tile.fptosi / fptoui
mean); the leaky-ReLU GEMM its float64 reference."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl

from ..test_cmpf import F32, KERNELS, RUNS


@pytest.mark.parametrize("kernel", sorted(RUNS))
def test_a_cmpf_kernel_computes_its_reference(torch, kernel: str) -> None:
    run = RUNS[kernel]
    args = run.arrays(seed=11)
    tawa_xdsl.compile(KERNELS, kernel)(*args)
    for out, want in zip(run.output_indices(args), run.reference(*args), strict=True):
        if run.exact:
            np.testing.assert_array_equal(args[out], want.astype(F32))
        else:
            err = np.linalg.norm(args[out] - want) / np.linalg.norm(want)
            assert err < 1e-2
