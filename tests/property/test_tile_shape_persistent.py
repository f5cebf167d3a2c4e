"""tile-shape, persistent and reverse-grid change how a kernel is cut into
programs, never what it computes:

- resized GEMM and attention kernels (random block sizes, random problem sizes
  that are not block multiples) still match a float64 numpy formula;
- a persistent generated kernel, run by any number of programs, computes bit for
  bit what the original computes over its whole grid, before and after the
  warp-specialization passes (the aref indices keep counting across tiles),
  walking its tiles statically or taking them from the tile counter;
- a kernel with its program ids reversed, alone or then made persistent,
  computes bit for bit what the original computes, before and after the
  warp-specialization passes."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16

from ..conftest import example_module
from .programs import tile_programs
from .test_warp_specialize import pipelines, reference_output


def _random(rng, *shape):
    return rng.standard_normal(shape).astype(bfloat16)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


@given(
    bm=st.sampled_from([16, 64, 128]),
    bn=st.sampled_from([16, 64, 256]),
    bk=st.sampled_from([16, 64]),
    mnk=st.tuples(*[st.integers(1, 200)] * 3),
    layout=st.sampled_from(["nt", "nn"]),
)
def test_resized_gemm_matches_numpy(bm, bn, bk, mnk, layout) -> None:
    m, n, k = mnk
    rng = np.random.default_rng(m * n + k)
    a, b_nk = _random(rng, m, k), _random(rng, n, k)
    b = b_nk if layout == "nt" else np.ascontiguousarray(b_nk.T)
    c = np.full((m, n), np.nan, dtype=bfloat16)
    module = tawa_xdsl.apply(
        example_module("gemm.mlir", f"gemm_{layout}"),
        f"tile-shape{{block-m={bm} block-n={bn} block-k={bk}}}",
    )
    tawa_xdsl.interpret(
        module, f"gemm_{layout}", a, b, c, grid=(_ceil(m, bm), _ceil(n, bn))
    )
    ref = a.astype(np.float64) @ b_nk.astype(np.float64).T
    assert np.abs(c.astype(np.float64) - ref).max() <= 1e-2 * (1 + np.abs(ref).max())


def _attention_reference(q, k, v, causal: bool) -> np.ndarray:
    s = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2)
    s /= np.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)


@given(
    bm=st.sampled_from([32, 64, 128, 192]),
    bn=st.sampled_from([32, 64, 128]),
    seq=st.integers(1, 260),
    causal=st.booleans(),
)
def test_resized_attention_matches_numpy(bm, bn, seq, causal) -> None:
    rng = np.random.default_rng(seq)
    q, k, v = (_random(rng, 2, seq, 64) for _ in range(3))
    o = np.full((2, seq, 64), np.nan, dtype=bfloat16)
    name = f"attention{'_causal' if causal else ''}_d64"
    module = tawa_xdsl.apply(
        example_module("attention.mlir", name),
        f"tile-shape{{block-m={bm} block-n={bn}}}",
    )
    tawa_xdsl.interpret(module, name, q, k, v, o, 0.125, grid=(_ceil(seq, bm), 2))
    ref = _attention_reference(q, k, v, causal)
    assert np.abs(o.astype(np.float64) - ref).max() < 2e-2


@given(
    program=tile_programs(),
    programs=st.integers(1, 5),
    group_m=st.integers(1, 3),
    dynamic=st.booleans(),
    pipeline=pipelines(),
    seed=st.integers(0, 2**16),
)
def test_persistent_kernel_is_the_same_function(
    program, programs, group_m, dynamic, pipeline, seed
) -> None:
    spec, *_ = pipeline
    args, expected = reference_output(program, seed)
    persistent = tawa_xdsl.apply(
        tawa_xdsl.parse(program.text),
        f"persistent{{group-m={group_m} dynamic={str(dynamic).lower()}}}",
    )
    out = args[-2]
    out[...] = np.nan
    tawa_xdsl.interpret(persistent, program.name, *args, grid=(programs,))
    np.testing.assert_array_equal(out, expected)
    specialized = tawa_xdsl.apply(persistent, spec)
    out[...] = np.nan
    tawa_xdsl.simulate(specialized, program.name, *args, grid=(programs,), seed=seed)
    np.testing.assert_array_equal(out, expected)


@given(
    program=tile_programs(),
    persistent=st.booleans(),
    pipeline=pipelines(),
    seed=st.integers(0, 2**16),
)
def test_reversed_kernel_is_the_same_function(
    program, persistent, pipeline, seed
) -> None:
    spec, *_ = pipeline
    args, expected = reference_output(program, seed)
    passes = "reverse-grid" + (",persistent" if persistent else "")
    reversed_ = tawa_xdsl.apply(tawa_xdsl.parse(program.text), passes)
    grid = (2,) if persistent else program.grid
    out = args[-2]
    out[...] = np.nan
    tawa_xdsl.interpret(reversed_, program.name, *args, grid=grid)
    np.testing.assert_array_equal(out, expected)
    specialized = tawa_xdsl.apply(reversed_, spec)
    out[...] = np.nan
    tawa_xdsl.simulate(specialized, program.name, *args, grid=grid, seed=seed)
    np.testing.assert_array_equal(out, expected)
