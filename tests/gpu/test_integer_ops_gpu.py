"""Scalar integer quotients, remainders, extrema and compares on the H100
(the kernels of tests/test_elementwise_ops.py): unsigned ops read their
operands' bits unsigned, and the ceiling of a signed quotient by a negative
divisor is the quotient towards zero where the signs differ, as the
interpreter and the thread simulator compute them."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl

from ..test_elementwise_ops import EXPECTED, SCALARS, scalar_kernel

OPS = ["cmpi", "divui", "remui", "ceildivui", "maxui", "minui"]
OPS += ["ceildivsi", "ceildivsi3"]


@pytest.mark.parametrize("op", OPS)
def test_integer_op_on_the_gpu(torch, op: str) -> None:
    kernel = tawa_xdsl.compile(scalar_kernel(SCALARS[op]), "s")
    for (a, b, n), value in EXPECTED[op].items():
        out = np.full((64, 128), np.nan, np.float32)
        kernel(out, np.float32(a), np.float32(b), n, grid=(1,))
        assert out[0, 0] == np.float32(value), (op, n)
        assert (out == out[0, 0]).all()
