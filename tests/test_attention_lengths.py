"""The multi-head attention examples when queries and keys differ in length (the
contract names SQ and SK apart): in the interpreter against a float64
reference. Causal kernels let query i see keys 0 .. i, so a query block that
starts past the last key sees every key, the last block masked at SK."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16

from .conftest import EXAMPLES
from .test_attention_gqa import reference, rel_err


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("seq_q, seq_k", [(300, 72), (72, 200)])
def test_queries_and_keys_of_different_lengths(causal, seq_q, seq_k) -> None:
    rng = np.random.default_rng(seq_q + seq_k)
    q = rng.standard_normal((2, seq_q, 64)).astype(bfloat16)
    k, v = (rng.standard_normal((2, seq_k, 64)).astype(bfloat16) for _ in range(2))
    o = np.full(q.shape, np.nan, dtype=bfloat16)
    module = tawa_xdsl.parse(EXAMPLES / "attention.mlir")
    name = f"attention{'_causal' if causal else ''}_d64"
    grid = (-(-seq_q // 128), 2)
    tawa_xdsl.interpret(module, name, q, k, v, o, 0.125, grid=grid)
    assert rel_err(o, reference(q, k, v, 0.125, causal)) < 1e-2
