"""The reference interpreter agrees with direct numpy formulas (in float64) on the
bundled kernels, for random inputs and problem sizes that are not tile multiples."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.interp.tile import read_box, write_box
from tawa_xdsl.kernel import KernelArgumentError

from ..conftest import example_module

TILE = 128


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def rel_err(out: np.ndarray, ref: np.ndarray) -> float:
    out64 = out.astype(np.float64)
    assert not np.isnan(out64).any(), "some outputs were never written"
    return float(np.linalg.norm(out64 - ref) / np.linalg.norm(ref))


def poisoned(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return np.full(shape, np.nan, dtype=dtype)


@pytest.fixture(scope="module")
def gemm_module():
    return example_module("gemm.mlir")


@pytest.fixture(scope="module")
def epilogue_module():
    return example_module("gemm_epilogue.mlir")


@pytest.fixture(scope="module")
def attention_module():
    return example_module("attention.mlir")


sizes = st.integers(min_value=1, max_value=300)


@given(
    m=sizes,
    n=sizes,
    k=sizes,
    layout=st.sampled_from(["nt", "nn"]),
    dtype=st.sampled_from(["bf16", "f16"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_gemm_matches_numpy(gemm_module, m, n, k, layout, dtype, seed) -> None:
    np_dtype = bfloat16 if dtype == "bf16" else np.dtype(np.float16)
    kernel = f"gemm_{layout}" + ("_f16" if dtype == "f16" else "")
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np_dtype)
    b_nk = rng.standard_normal((n, k)).astype(np_dtype)
    b = b_nk if layout == "nt" else np.ascontiguousarray(b_nk.T)
    c = poisoned((m, n), np_dtype)
    tawa_xdsl.interpret(
        gemm_module, kernel, a, b, c, grid=(cdiv(m, TILE), cdiv(n, TILE))
    )
    ref = a.astype(np.float64) @ b_nk.astype(np.float64).T
    assert rel_err(c, ref) < 1e-2


class Epilogue(NamedTuple):
    """An epilogue kernel's run: its inputs in float64 (A @ B^T, the bias, the
    residual or None) and its output."""

    product: np.ndarray
    bias: np.ndarray
    residual: np.ndarray | None
    out: np.ndarray


def run_epilogue(
    module, kernel: str, m: int, n: int, k: int, seed: int, *scalars, residual=False
) -> Epilogue:
    """Run an epilogue kernel on random inputs (with an M x N residual tile
    before the output when `residual`)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(bfloat16)
    b = rng.standard_normal((n, k)).astype(bfloat16)
    bias = rng.standard_normal(n).astype(bfloat16)
    r = rng.standard_normal((m, n)).astype(bfloat16) if residual else None
    c = poisoned((m, n), bfloat16)
    grid = (cdiv(m, TILE), cdiv(n, TILE))
    inputs = [a, b, bias] if r is None else [a, b, bias, r]
    tawa_xdsl.interpret(module, kernel, *inputs, c, *scalars, grid=grid)
    out = c.astype(np.float64)
    assert not np.isnan(out).any(), "some outputs were never written"
    product = a.astype(np.float64) @ b.astype(np.float64).T
    return Epilogue(
        product,
        bias.astype(np.float64),
        None if r is None else r.astype(np.float64),
        out,
    )


def assert_close(out: np.ndarray, ref: np.ndarray) -> None:
    assert np.allclose(out, ref, rtol=2e-2, atol=2e-2 * (np.abs(ref).max() + 1))


def gelu(x: np.ndarray) -> np.ndarray:
    """The tanh approximation the examples compute."""
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


@given(
    m=sizes, n=sizes, k=sizes, alpha=st.floats(-2, 2), seed=st.integers(0, 2**32 - 1)
)
def test_epilogue_relu_matches_numpy(epilogue_module, m, n, k, alpha, seed) -> None:
    run = run_epilogue(epilogue_module, "gemm_scale_bias_relu", m, n, k, seed, alpha)
    assert_close(run.out, np.maximum(np.float32(alpha) * run.product + run.bias, 0))


@given(m=sizes, n=sizes, k=sizes, seed=st.integers(0, 2**32 - 1))
def test_epilogue_gelu_matches_numpy(epilogue_module, m, n, k, seed) -> None:
    run = run_epilogue(epilogue_module, "gemm_bias_gelu", m, n, k, seed)
    assert_close(run.out, gelu(run.product + run.bias))


@given(
    m=sizes, n=sizes, k=sizes, alpha=st.floats(-2, 2), seed=st.integers(0, 2**32 - 1)
)
def test_epilogue_residual_gelu_matches_numpy(
    epilogue_module, m, n, k, alpha, seed
) -> None:
    run = run_epilogue(
        epilogue_module, "gemm_residual_gelu", m, n, k, seed, alpha, residual=True
    )
    assert run.residual is not None
    x = np.float32(alpha) * run.product + run.bias
    assert_close(run.out, gelu(x) + run.residual)


def attention_reference(q, k, v, scale: float, causal: bool) -> np.ndarray:
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    s = q64 @ k64.transpose(0, 2, 1) * scale
    if causal:
        seq = q.shape[1]
        s = np.where(np.tril(np.ones((seq, seq), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v64


@given(
    bh=st.integers(1, 3),
    seq=st.integers(1, 400),
    d=st.sampled_from([64, 128]),
    causal=st.booleans(),
    sharpness=st.sampled_from([1.0, 12.0]),
    ramp=st.sampled_from([0.0, 0.02]),
    seed=st.integers(0, 2**32 - 1),
)
def test_attention_matches_softmax_formula(
    attention_module, bh, seq, d, causal, sharpness, ramp, seed
) -> None:
    """The examples keep their running max in steps of 8 (log2 units); sharp
    scores and scores that grow along the keys make it move within a row, the
    ramp at every key block."""
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((bh, seq, d)) for _ in range(3))
    if ramp:
        q = np.abs(q)
        k = k + ramp * np.arange(seq)[None, :, None]
    q, k, v = (x.astype(bfloat16) for x in (q, k, v))
    o = poisoned((bh, seq, d), bfloat16)
    scale = sharpness / np.sqrt(d)
    kernel = f"attention{'_causal' if causal else ''}_d{d}"
    tawa_xdsl.interpret(
        attention_module, kernel, q, k, v, o, scale, grid=(cdiv(seq, TILE), bh)
    )
    assert rel_err(o, attention_reference(q, k, v, scale, causal)) < 1e-2


@given(
    shape=st.lists(st.integers(1, 9), min_size=1, max_size=3),
    data=st.data(),
)
def test_boxes_zero_fill_and_clip(shape, data) -> None:
    """`tile.load` reads zeros outside the tensor; `tile.store` drops what falls outside."""
    rank = len(shape)
    box = data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank))
    offsets = data.draw(st.lists(st.integers(-7, 10), min_size=rank, max_size=rank))
    array = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
    pad = 20  # more than any offset or box extent drawn above
    padded = np.zeros([s + 2 * pad for s in shape], dtype=np.float32)
    inner = tuple(slice(pad, pad + s) for s in shape)
    padded[inner] = array
    window = tuple(
        slice(pad + o, pad + o + b) for o, b in zip(offsets, box, strict=True)
    )
    assert np.array_equal(read_box(array, offsets, box), padded[window])

    value = -np.arange(np.prod(box), dtype=np.float32).reshape(box) - 1
    write_box(array, offsets, value)
    padded[window] = value
    assert np.array_equal(array, padded[inner])


def test_interpret_rejects_bad_arguments(gemm_module) -> None:
    a = np.zeros((128, 64), dtype=bfloat16)
    c = np.zeros((128, 128), dtype=bfloat16)
    with pytest.raises(
        KernelArgumentError, match="argument 'b' has dtype f32, the kernel expects bf16"
    ):
        tawa_xdsl.interpret(gemm_module, "gemm_nt", a, a.astype(np.float32), c)
    with pytest.raises(
        KernelArgumentError, match="argument 'a' has rank 1, the kernel expects 2"
    ):
        tawa_xdsl.interpret(gemm_module, "gemm_nt", a[0], a, c)
    with pytest.raises(
        KernelArgumentError, match=r"takes 3 arguments \(a, b, c\), got 2"
    ):
        tawa_xdsl.interpret(gemm_module, "gemm_nt", a, a)
    with pytest.raises(
        KernelArgumentError, match="grid must be 1 to 3 positive integers"
    ):
        tawa_xdsl.interpret(gemm_module, "gemm_nt", a, a, c, grid=(0, 1))
    with pytest.raises(KeyError, match="no tile kernel named 'gemm'"):
        tawa_xdsl.interpret(gemm_module, "gemm", a, a, c)
