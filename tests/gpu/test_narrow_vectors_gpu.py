"""16- and 8-bit vectors broadcast into tiles on the H100 (the kernels of
tests/test_row_vectors.py): their pairs go through f32 registers, bit for bit
as the interpreter computes them."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl

from ..test_row_vectors import BROADCASTS, NARROW, broadcast_kernel


@pytest.mark.parametrize("shape", sorted(BROADCASTS))
@pytest.mark.parametrize("t", sorted(NARROW))
def test_a_narrow_vector_broadcast_on_the_gpu(torch, shape: str, t: str) -> None:
    source = broadcast_kernel(BROADCASTS[shape], t)
    x = (4 * np.random.default_rng(1).standard_normal((64, 128))).astype(NARROW[t])
    expected = np.zeros_like(x)
    tawa_xdsl.interpret(tawa_xdsl.parse(source), "k", x, expected, grid=(1,))
    got = np.full_like(x, np.nan)
    tawa_xdsl.compile(source, "k")(x, got)
    np.testing.assert_array_equal(got.astype(np.float32), expected.astype(np.float32))
