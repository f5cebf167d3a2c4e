"""Tile widths that are not multiples of 64 (the wave model's 96 and 160) and
192, lowered to the thread level and run lane by lane in the thread simulator
on a problem with partial edge tiles: bf16 (B stored N x K) and FP8, bit for
bit against the reference interpreter."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.compiler import CompileOptions, lower
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.lowering.ptx_target import DISTRIBUTION

from .conftest import example_module
from .test_fp8 import Case, gemm_case, run


def thread_level(file: str, kernel: str, **options: int):
    module = example_module(file, kernel)
    lower(module, CompileOptions(tuned=False, num_stages=2, **options))
    return tawa_xdsl.apply(module, ",".join(DISTRIBUTION))


def same_as_the_interpreter(file: str, case: Case, **options: int) -> None:
    """Equal to the interpreter's output up to one rounding of the output type,
    and an f32 sum's reordering where a result cancels to near zero: the tiles'
    f32 sums run in another order than the kernel as written (its 128x256
    tiles). A tile mapped to the wrong place is off by the outputs' scale."""
    expected = run(tawa_xdsl.interpret, example_module(file, case.kernel), case)
    got = run(tawa_xdsl.simulate, thread_level(file, case.kernel, **options), case)
    want, have = expected.astype(np.float64), got.astype(np.float64)
    assert not np.isnan(have).any()
    ulp = np.abs(want) * 2.0 ** -ml_dtypes.finfo(got.dtype).nmant
    assert (np.abs(have - want) <= ulp + 1e-5 * np.abs(want).max()).all()


@pytest.mark.parametrize(("bm", "bn"), [(128, 160), (64, 96), (128, 192)], ids=str)
def test_bf16_widths_compute_the_reference(bm: int, bn: int) -> None:
    m, n, k = bm + 40, 2 * bn - 24, 192  # a partial tile along each output axis
    rng = np.random.default_rng(bn)
    a = rng.standard_normal((m, k)).astype(bfloat16)
    b = rng.standard_normal((n, k)).astype(bfloat16)
    c = np.zeros((m, n), dtype=bfloat16)
    case = Case("gemm_nt", [a, b, c], 2, a.astype(np.float64) @ b.astype(np.float64).T)
    same_as_the_interpreter("gemm.mlir", case, block_m=bm, block_n=bn)


def test_fp8_width_160_computes_the_reference() -> None:
    case = gemm_case("gemm_fp8_tensorwise", (96, 200, 256), seed=2)
    same_as_the_interpreter("gemm_fp8.mlir", case, block_n=160)
