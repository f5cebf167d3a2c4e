"""Scalar parameters of each type (bf16, f16, i64, i1) on the H100: each is
packed as its `.param` declares it (`runtime.kernel.scalar_ctype`) and the
kernel adds the value the interpreter computes (tests/test_scalar_params.py
checks the same on the CPU)."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl

from ..test_scalar_params import SCALARS, _args, _type, scalar_kernel


@pytest.mark.parametrize("case", sorted(SCALARS))
def test_scalar_parameter_on_the_gpu(torch, case: str) -> None:
    to_f32, value, added = SCALARS[case]
    args = _args(value)
    tawa_xdsl.compile(scalar_kernel(_type(case), to_f32), "s")(*args)
    np.testing.assert_array_equal(args[0], args[1] + np.float32(added))
