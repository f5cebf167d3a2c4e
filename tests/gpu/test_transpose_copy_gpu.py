"""FP8 attention with V as stored (examples/attention_fp8_v.mlir: the producer
transposes each V tile) and an FP8 GEMM with B stored K x N, on the H100
against float64 of the dequantized inputs, outputs poisoned with NaN:
attention relative error < 3e-2 with the bf16 kernel's error on the same
inputs asserted next to it (as tests/gpu/test_fp8_gpu.py does for the kernels
taking V transposed), and the output within 1e-3 of that of
attention_fp8.mlir's kernel taking V transposed on the same data (the slots
hold the same bytes: equal, unless the dispatcher gave the two calls different
tile plans); the GEMM < 1e-2."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16, float8_e4m3fn

from ..conftest import EXAMPLES
from ..test_fp8 import Case, attention_case, rel_l2
from ..test_transpose_copy import GEMM_NN, KERNELS
from .test_fp8_gpu import assert_fp8_attention_error, device, run_on_gpu


@pytest.mark.parametrize("seq", [(150, 304), (1024, 1024), (640, 4096)], ids=str)
@pytest.mark.parametrize("kernel", [k for (k,) in KERNELS])
def test_fp8_attention_with_v_as_stored_matches_float64(torch, kernel, seq) -> None:
    sq, sk = seq
    vt_case, real = attention_case(
        kernel.removesuffix("_v"), seed=0, bh=4, sq=sq, sk=sk
    )
    v = np.ascontiguousarray(vt_case.args[2].transpose(0, 2, 1))
    case = Case(kernel, [*vt_case.args[:2], v, *vt_case.args[3:]], 3, vt_case.reference)
    got = run_on_gpu(torch, EXAMPLES / "attention_fp8_v.mlir", case)
    assert_fp8_attention_error(torch, got, case, real, f"{kernel} {seq}")
    transposed = run_on_gpu(torch, EXAMPLES / "attention_fp8.mlir", vt_case)
    # the same bytes in the slots: equal but where the calls' tile plans differ
    assert rel_l2(got, transposed) < 1e-3


@pytest.mark.parametrize("shape", [(200, 256, 320), (4096, 4096, 4096)], ids=str)
def test_fp8_gemm_with_b_stored_k_by_n_matches_float64(torch, shape) -> None:
    m, n, k = shape
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(float8_e4m3fn)
    b = rng.standard_normal((k, n)).astype(float8_e4m3fn)
    c = device(torch, np.full((m, n), np.nan, bfloat16))
    kernel = tawa_xdsl.compile(tawa_xdsl.parse(GEMM_NN), "gemm_fp8_nn")
    kernel(device(torch, a), device(torch, b), c)
    torch.cuda.synchronize()
    got = c.cpu().double().numpy()
    expected = a.astype(np.float64) @ b.astype(np.float64)
    assert np.linalg.norm(got - expected) / np.linalg.norm(expected) < 1e-2
