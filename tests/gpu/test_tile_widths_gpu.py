"""The tile widths the wave model weighs besides 128 and 256 (96, 160, 192), and
a K split given with `split_k`, on the H100: bf16 GEMM with B stored N x K and
the FP8 GEMMs, at shapes with partial edge tiles, against float64."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl

from ..conftest import EXAMPLES
from ..test_fp8 import gemm_case
from .conftest import rel_err
from .test_dispatch_gpu import GEMM, gemm_inputs
from .test_fp8_gpu import run_on_gpu

TILES = [(128, 192), (128, 160), (64, 96), (64, 160), (64, 192)]


@pytest.mark.parametrize("split", [1, 3])
@pytest.mark.parametrize(("bm", "bn"), TILES, ids=str)
def test_bf16_tiles_of_every_width(torch, bm, bn, split) -> None:
    a, b, c, ref = gemm_inputs(torch, 1000, 1000, 1000)
    kernel = tawa_xdsl.compile(
        GEMM, "gemm_nt", block_m=bm, block_n=bn, split_k=split, stream_k=False
    )
    kernel(a, b, c)
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 1e-2
    assert (kernel.options["block_m"], kernel.options["block_n"]) == (bm, bn)
    assert kernel.current.plan.decision.split_k == split


@pytest.mark.parametrize("bn", [96, 160, 192])
@pytest.mark.parametrize("kernel", ["gemm_fp8_tensorwise", "gemm_fp8_rowwise"])
def test_fp8_tiles_of_every_width(torch, kernel, bn) -> None:
    case = gemm_case(kernel, (1000, 784, 2048), seed=1)
    got = run_on_gpu(torch, EXAMPLES / "gemm_fp8.mlir", case, block_n=bn)
    err = np.abs(got - case.reference).max() / np.abs(case.reference).max()
    assert err < 1e-2, err
