"""Repeated calls launched from `launch_cache` on the H100: each output is
poisoned before the call and checked against float64, across calls that hit
the cache, miss it (another shape, another pitch, another tensor), replace an
aligning buffer, split K, or must not be served from it (host arrays, autograd
tensors, a torch stream other than the launch's)."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.kernel import KernelArgumentError
from tawa_xdsl.launch_cache import call_signature

from .conftest import rel_err
from .test_dispatch_gpu import GEMM, gemm_inputs
from .test_realign_gpu import off_grid


def checked_call(torch, kernel, a, b, c, ref) -> None:
    c.fill_(float("nan"))
    kernel(a, b, c)
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 1e-2


def test_hits_skip_the_conversion_and_stay_right(torch, monkeypatch) -> None:
    kernel = tawa_xdsl.compile(GEMM, "gemm_nt")
    a, b, c, ref = gemm_inputs(torch, 256, 384, 512)
    checked_call(torch, kernel, a, b, c, ref)

    def converted(*_: object) -> None:
        raise AssertionError("a repeated call was converted again")

    monkeypatch.setattr(kernel, "_convert", converted)
    for _ in range(3):
        checked_call(torch, kernel, a, b, c, ref)
    a.copy_(torch.randn_like(a, dtype=torch.float32))  # same address, new values
    checked_call(torch, kernel, a, b, c, a.double() @ b.double().t())


def test_calls_of_other_shapes_pitches_and_splits_interleave(torch) -> None:
    """Every call is right whatever the order: a miss never reuses another
    call's launch, a hit reruns its own, and `current` names what ran."""
    kernel = tawa_xdsl.compile(GEMM, "gemm_nt")
    calls = []
    for shape in [(256, 384, 512), (128, 128, 8192), (300, 500, 999), (64, 256, 64)]:
        calls.append(gemm_inputs(torch, *shape))
    a, b, c, ref = calls[0]
    wide = off_grid(torch, a, column=8)  # same values, rows farther apart
    calls.append((wide, b, c, ref))
    specs = {}
    for round_ in range(2):
        for i, (a, b, c, ref) in enumerate(calls):
            checked_call(torch, kernel, a, b, c, ref)
            if round_ == 0:
                specs[i] = kernel.current
            else:
                assert kernel.current is specs[i]
    assert specs[1].plan.decision.split_k > 1  # one tile, long K: split


def test_a_replaced_aligning_buffer_is_not_reused(torch) -> None:
    """K = 999 runs through an aligned copy of A and B; another K replaces
    those buffers, and the first shape's call copies into the new ones."""
    kernel = tawa_xdsl.compile(GEMM, "gemm_nt")
    first = gemm_inputs(torch, 300, 500, 999)
    second = gemm_inputs(torch, 300, 500, 1001)
    for a, b, c, ref in (first, second, first, second, first):
        checked_call(torch, kernel, a, b, c, ref)


def test_calls_that_must_be_converted_are(torch) -> None:
    kernel = tawa_xdsl.compile(GEMM, "gemm_nt")
    a, b, c, ref = gemm_inputs(torch, 128, 256, 256)
    checked_call(torch, kernel, a, b, c, ref)
    # host arrays: copied in and out per call
    ha, hb = a.float().cpu().numpy(), b.float().cpu().numpy()
    import ml_dtypes

    hc = np.full((128, 256), np.nan, dtype=ml_dtypes.bfloat16)
    assert call_signature((ha, hb, hc), None, 0) is None
    kernel(ha.astype(ml_dtypes.bfloat16), hb.astype(ml_dtypes.bfloat16), hc)
    assert rel_err(torch.from_numpy(hc.astype(np.float64)), ref.cpu()) < 1e-2
    # a tensor DLPack refuses stays refused after its address was served
    a.requires_grad_(True)
    assert call_signature((a, b, c), None, 0) is None
    with pytest.raises(KernelArgumentError, match="require gradient"):
        kernel(a, b, c)
    a.requires_grad_(False)
    # torch on another stream: the export orders its work before ours
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        assert call_signature((a, b, c), None, 0) is None
        assert call_signature((a, b, c), None, side.cuda_stream) is not None
        a.copy_(2 * a)  # queued on the side stream, before the launch reads it
        c.fill_(float("nan"))
        kernel(a, b, c)
    torch.cuda.synchronize()
    assert rel_err(c, 2 * ref) < 1e-2


def test_an_empty_call_is_remembered_as_empty(torch) -> None:
    kernel = tawa_xdsl.compile(GEMM, "gemm_nt")
    a, b, c, ref = gemm_inputs(torch, 128, 256, 256)
    empty_a = torch.empty(0, 256, device="cuda", dtype=torch.bfloat16)
    empty_c = torch.empty(0, 256, device="cuda", dtype=torch.bfloat16)
    for _ in range(2):
        checked_call(torch, kernel, a, b, c, ref)
        assert kernel.options
        kernel(empty_a, b, empty_c)
        assert kernel.options == {} and "empty" in kernel.explain(empty_a, b, empty_c)


def test_explain_names_the_grid_of_a_repeated_call(torch) -> None:
    """explain() of the last call says the grid it passed, also when that
    call was served from the cache after a call without one."""
    kernel = tawa_xdsl.compile(GEMM, "gemm_nt", persistent=True)
    a, b, c, ref = gemm_inputs(torch, 256, 384, 512)
    for grid in ((3,), None, (3,)):  # the third from the cache
        c.fill_(float("nan"))
        kernel(a, b, c, grid=grid)
        torch.cuda.synchronize()
        assert rel_err(c, ref) < 1e-2
    given = "grid (3, 1, 1) given: one kernel, K not split; 3 persistent programs"
    assert given in kernel.explain()


def test_cupy_calls_hit_the_cache_and_stay_right(torch, monkeypatch) -> None:
    """cupy arrays are keyed by `__cuda_array_interface__`: repeated calls skip
    the conversion, see new values written at the same addresses, and a call
    with cupy's work on another stream than the launch's is converted."""
    cupy = pytest.importorskip("cupy")
    kernel = tawa_xdsl.compile(GEMM, "gemm_nt_f16")
    rng = np.random.default_rng(3)

    def inputs() -> tuple[np.ndarray, np.ndarray]:
        return tuple(
            rng.standard_normal(shape).astype(np.float16)
            for shape in ((256, 512), (384, 512))
        )

    a_h, b_h = inputs()
    a, b = cupy.asarray(a_h), cupy.asarray(b_h)
    c = cupy.empty((256, 384), dtype=cupy.float16)

    def checked(a_h: np.ndarray, b_h: np.ndarray) -> None:
        c.fill(cupy.nan)
        kernel(a, b, c)
        cupy.cuda.Device().synchronize()
        ref = a_h.astype(np.float64) @ b_h.astype(np.float64).T
        out = cupy.asnumpy(c).astype(np.float64)
        assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-2

    checked(a_h, b_h)
    assert call_signature((a, b, c), None, 0) is not None

    def converted(*_: object) -> None:
        raise AssertionError("a repeated call was converted again")

    with monkeypatch.context() as patch:
        patch.setattr(kernel, "_convert", converted)
        for _ in range(3):
            checked(a_h, b_h)
        a_h, b_h = inputs()  # same addresses, new values
        a.set(a_h)
        b.set(b_h)
        checked(a_h, b_h)
    with cupy.cuda.Stream(non_blocking=True):
        assert call_signature((a, b, c), None, 0) is None
