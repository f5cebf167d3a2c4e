"""The runtime takes numpy and cupy arrays as well as torch tensors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_numpy_arrays_are_copied_in_and_out(torch) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((300, 256)).astype(bfloat16)
    b = rng.standard_normal((200, 256)).astype(bfloat16)
    c = np.full((300, 200), np.nan, dtype=bfloat16)
    tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt")(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    out = c.astype(np.float64)
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-2


def test_cupy_arrays(torch) -> None:
    cupy = pytest.importorskip("cupy")
    a = cupy.random.standard_normal((256, 128), dtype=cupy.float32).astype(cupy.float16)
    b = cupy.random.standard_normal((384, 128), dtype=cupy.float32).astype(cupy.float16)
    c = cupy.full((256, 384), cupy.nan, dtype=cupy.float16)
    tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt_f16")(a, b, c)
    cupy.cuda.Device().synchronize()
    ref = a.astype(cupy.float64) @ b.astype(cupy.float64).T
    err = float(cupy.linalg.norm(c.astype(cupy.float64) - ref) / cupy.linalg.norm(ref))
    assert err < 1e-2


def test_register_budgets_reach_the_jit(torch) -> None:
    """Causal head-dim-256 attention with the two-stage overlap fits 240 registers
    per consumer thread (the default) but spills at 200: the driver JIT sees the
    budget we ask for, and allow_spills runs the spilling kernel anyway."""
    gen = torch.Generator(device="cuda").manual_seed(5)
    q, k, v = (
        torch.randn(2, 256, 256, device="cuda", generator=gen).to(torch.bfloat16)
        for _ in range(3)
    )
    source = EXAMPLES / "attention_d256.mlir"
    options = dict(num_stages=2, mma_depth=1, two_stage=True, tuned=False)
    tight = dict(producer_registers=24, consumer_registers=200)
    with pytest.raises(tawa_xdsl.runtime.ResourceError, match="spills"):
        tawa_xdsl.compile(source, "attention_causal_d256", **options, **tight).load()
    ref = torch.nn.functional.scaled_dot_product_attention(
        q.double(), k.double(), v.double(), is_causal=True
    )
    for extra in ({}, dict(tight, allow_spills=True)):
        o = torch.full_like(q, float("nan"))
        kernel = tawa_xdsl.compile(source, "attention_causal_d256", **options, **extra)
        kernel(q, k, v, o, 1 / 16)
        torch.cuda.synchronize()
        err = float((o.double() - ref).norm() / ref.norm())
        assert err < 1e-2


SHIFTED_GEMM = """
func.func @shifted(%a: !tile.desc<?x?xbf16, box = [128, 64]>,
    %b: !tile.desc<?x?xbf16, box = [128, 64]>,
    %c: !tile.desc<?x?xbf16, box = [128, 128]>) attributes {{tile.kernel}} {{
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %bk = arith.constant 64 : index
  %bm = arith.constant 128 : index
  %load_shift = arith.constant {load} : index
  %store_shift = arith.constant {store} : index
  %store_col = arith.constant {col} : index
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %m0 = arith.muli %pid, %bm : index
  %src = arith.subi %m0, %load_shift : index
  %dst = arith.subi %m0, %store_shift : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {{
    %ta = tile.load %a[%src, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }}
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%dst, %store_col] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}}
"""


def run_shifted(load: int, store: int, col: int, width: int, tma_store: bool) -> None:
    """SHIFTED_GEMM on 3 row tiles of C (384 x width) against the interpreter:
    the same elements written (the others stay NaN), with the same values."""
    source = SHIFTED_GEMM.format(load=load, store=store, col=col)
    rng = np.random.default_rng([load, store, col + 64])
    a = rng.standard_normal((384, 64)).astype(bfloat16)
    b = rng.standard_normal((128, 64)).astype(bfloat16)
    expected = np.full((384, width), np.nan, dtype=bfloat16)
    tawa_xdsl.interpret(tawa_xdsl.parse(source), "shifted", a, b, expected, grid=(3,))
    c = np.full((384, width), np.nan, dtype=bfloat16)
    kernel = tawa_xdsl.compile(
        source, "shifted", tuned=False, num_consumers=2, tma_store=tma_store
    )
    kernel(a, b, c, grid=(3,))
    written = ~np.isnan(expected.astype(np.float64))
    np.testing.assert_array_equal(~np.isnan(c.astype(np.float64)), written)
    ref, out = expected.astype(np.float64), c.astype(np.float64)
    assert (
        np.abs(out[written] - ref[written]).max() <= 2e-2 * np.abs(ref[written]).max()
    )


@pytest.mark.parametrize("tma_store", [True, False])
@pytest.mark.parametrize("load, store", [(128, 0), (64, 0), (0, 128), (0, 64)])
def test_coordinates_before_the_start(torch, load, store, tma_store) -> None:
    """Rows before the start of a tensor read as zeros and are not written, as the
    interpreter says: a TMA store there faults the H100, so such stores go from
    registers, whose bounds checks are unsigned."""
    run_shifted(load, store, 0, 128, tma_store)


@pytest.mark.parametrize("tma_store", [True, False])
@pytest.mark.parametrize("col", [0, 8, 16, 24, 2, 1, -8, -1])
def test_store_columns(torch, col, tma_store) -> None:
    """Tiles stored at any first column, into a tensor 144 columns wide: the
    register epilogue's three paths (16-byte vectors at 0, 8 and 16; pairs at
    24, 2 and -8; single elements at 1 and -1) write what the interpreter does."""
    run_shifted(0, 0, col, 144, tma_store)
