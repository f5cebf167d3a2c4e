"""Inputs the producer warpgroup's threads load (`thread_loads`, issue 16 item
4), on the H100: odd K (rows off the 16-byte grid: 2-byte loads for bf16 and
f16, 1-byte loads for e4m3), views one column in, and rows 4, 8 or 16 bytes
aligned (`cp.async` copies of that size, in flight across the ring's slots),
at decode size (M <= 64) and large M, each forced both ways (every input by
the threads; every input copied) and as the rule decides (every input copied:
NOTES 3.80), against float64 with the outputs poisoned. The kernel must also
load without spills in the producer (whose `setmaxnreg` budget is 24 or 40
registers)."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl

from ..conftest import EXAMPLES
from ..test_fp8 import gemm_case
from .conftest import rel_err
from .test_dispatch_gpu import GEMM
from .test_fp8_gpu import device
from .test_realign_gpu import off_grid

FORCED = {"threads": "a,b", "copied": "", "rule": None}
"""How the inputs are read: `thread_loads` given, or left to the rule."""


def inputs(torch, m: int, n: int, k: int, dtype, view: bool):
    """A, B (n x k) and a NaN output of `dtype`; A a view one column in if
    `view`; the float64 product."""
    gen = torch.Generator(device="cuda").manual_seed(m + 7 * n + 13 * k)
    a = torch.randn(m, k, device="cuda", generator=gen).to(dtype)
    b = torch.randn(n, k, device="cuda", generator=gen).to(dtype)
    ref = a.double() @ b.double().t()
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
    return (off_grid(torch, a) if view else a), b, c, ref


@pytest.mark.parametrize("how", list(FORCED))
@pytest.mark.parametrize(
    ("kernel", "shape", "view"),
    [
        ("gemm_nt", (8, 4096, 999), False),  # decode: B read once
        ("gemm_nt", (64, 2048, 4095), True),  # decode, A a view
        ("gemm_nt", (1000, 768, 999), False),  # large M
        ("gemm_nt_f16", (16, 4096, 1001), False),
        ("gemm_nt_f16", (2000, 512, 1003), True),
    ],
    ids=str,
)
def test_16bit_inputs(torch, kernel, shape, view, how) -> None:
    dtype = torch.float16 if kernel.endswith("f16") else torch.bfloat16
    a, b, c, ref = inputs(torch, *shape, dtype, view)
    options = {} if FORCED[how] is None else {"thread_loads": FORCED[how]}
    compiled = tawa_xdsl.compile(GEMM, kernel, **options)
    compiled(a, b, c)
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 1e-2, compiled.explain(a, b, c)
    copied = compiled.realigned(compiled.current, compiled._convert((a, b, c), 0))
    if how == "threads":
        assert copied == [], compiled.explain(a, b, c)
    if how == "copied":
        assert copied == [0, 1], compiled.explain(a, b, c)
    if how == "rule":  # the threads' loads are slower than the copy
        assert copied == [0, 1], compiled.explain(a, b, c)


@pytest.mark.parametrize("how", ["threads", "copied"])
@pytest.mark.parametrize(
    ("kernel", "shape"),
    [
        ("gemm_nt", (8, 4096, 1002)),  # decode, 4-byte cp.async
        ("gemm_nt", (64, 2048, 1004)),  # decode, 8-byte
        ("gemm_nt", (1000, 768, 1000)),  # large M, 16-byte (forced)
        ("gemm_nt_f16", (2000, 512, 1002)),  # large M, 4-byte
    ],
    ids=str,
)
def test_cp_async_inputs(torch, kernel, shape, how) -> None:
    """Rows 4, 8 or 16 bytes aligned: the threads copy with cp.async."""
    dtype = torch.float16 if kernel.endswith("f16") else torch.bfloat16
    a, b, c, ref = inputs(torch, *shape, dtype, view=False)
    compiled = tawa_xdsl.compile(GEMM, kernel, thread_loads=FORCED[how])
    compiled(a, b, c)
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 1e-2, compiled.explain(a, b, c)


@pytest.mark.parametrize("how", ["threads", "copied"])
@pytest.mark.parametrize(
    "shape", [(16, 2048, 999), (512, 384, 1001), (16, 2048, 1004)], ids=str
)
def test_fp8_inputs_with_odd_k(torch, shape, how) -> None:
    """e4m3 operands (K-major, as FP8 wgmma reads them) with K odd: rows 999
    bytes apart, loaded a byte at a time; 1004 apart: 4-byte cp.async."""
    case = gemm_case("gemm_fp8_tensorwise", shape, seed=5)
    args = [device(torch, x) for x in case.fresh()]
    args[case.out].fill_(float("nan"))
    compiled = tawa_xdsl.compile(
        EXAMPLES / "gemm_fp8.mlir", "gemm_fp8_tensorwise", thread_loads=FORCED[how]
    )
    compiled(*args)
    torch.cuda.synchronize()
    got = args[case.out].cpu().double().numpy()
    err = np.abs(got - case.reference).max() / np.abs(case.reference).max()
    assert err < 1e-2, (err, compiled.explain(*args))
