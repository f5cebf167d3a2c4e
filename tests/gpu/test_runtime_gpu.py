"""The runtime takes numpy, cupy and CPU torch arrays as well as CUDA torch
tensors (through DLPack, or `__cuda_array_interface__`), writes host outputs back
(also non-contiguous ones), and refuses bad arguments before anything launches."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.kernel import KernelArgumentError

from ..test_contracts import SHIFTED, shifted_reference

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def gemm_error(c, a, b) -> float:
    """|C - A B^T| / |A B^T| in float64, for torch or numpy arrays."""
    ref = np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64).T
    return float(
        np.linalg.norm(np.asarray(c, dtype=np.float64) - ref) / np.linalg.norm(ref)
    )


def test_k_mismatch_is_refused_before_launch(torch) -> None:
    """B shorter in K than A used to run and read B's missing columns as zeros."""
    compiled = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt")
    a = torch.randn(256, 128, device="cuda").bfloat16()
    b = torch.randn(256, 64, device="cuda").bfloat16()
    c = torch.full((256, 256), float("nan"), device="cuda", dtype=torch.bfloat16)
    with pytest.raises(
        KernelArgumentError,
        match=re.escape(
            "gemm_nt: argument 'b' dimension 1 (K) has extent 64 but argument 'a' "
            "dimension 1 (K) has extent 128"
        ),
    ):
        compiled(a, b, c)
    torch.cuda.synchronize()
    assert c.isnan().all()  # nothing ran


def test_cpu_torch_tensors_are_copied_in_and_out(torch) -> None:
    """A CPU torch output used to be copied to the GPU and never back."""
    compiled = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt")
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(300, 256, generator=gen).bfloat16()
    b = torch.randn(200, 256, generator=gen).bfloat16()
    c = torch.full((300, 200), float("nan"), dtype=torch.bfloat16)
    compiled(a, b, c)
    assert gemm_error(c.float(), a.float(), b.float()) < 1e-2
    wide = torch.full((300, 400), float("nan"), dtype=torch.bfloat16)
    compiled(a, b, wide[:, ::2])  # non-contiguous: written through its strides
    assert gemm_error(wide[:, ::2].float(), a.float(), b.float()) < 1e-2
    assert wide[:, 1::2].isnan().all()


def test_non_contiguous_numpy_outputs_are_written_back(torch) -> None:
    """Such an output used to be copied to a temporary and silently dropped."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((300, 256)).astype(bfloat16)
    b = rng.standard_normal((200, 256)).astype(bfloat16)
    wide = np.full((300, 400), np.nan, dtype=bfloat16)
    tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt")(a, b, wide[:, 1::2])
    assert gemm_error(wide[:, 1::2], a, b) < 1e-2
    assert np.isnan(wide[:, ::2].astype(np.float32)).all()
    frozen = np.zeros((300, 200), dtype=bfloat16)
    frozen.flags.writeable = False
    with pytest.raises(KernelArgumentError, match="argument 'c' is read-only"):
        tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt")(a, b, frozen)


def test_scalars_are_range_checked_before_launch(torch) -> None:
    """2**32 + 128 used to reach the kernel as 128, and -64 as 2**32 - 64 read
    by 32-bit signed instructions; now the first is refused and the second is
    the same value on the CPU and the GPU."""
    kernel = tawa_xdsl.compile(SHIFTED, "shifted", tuned=False, num_consumers=2)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((256, 64)).astype(bfloat16)
    b = rng.standard_normal((128, 64)).astype(bfloat16)
    c = np.full((256, 128), np.nan, dtype=bfloat16)
    for shift, scale, message in [
        (
            2**32 + 128,
            1.0,
            "'shift' is a scalar of type index, got 4294967424, outside",
        ),
        (-(2**31) - 1, 1.0, "'shift' .* outside"),
        (64.0, 1.0, "'shift' .* got float 64.0; pass an integer"),
        (True, 1.0, "'shift' .* got a bool"),
        (0, 1e39, "'scale' .* overflows f32"),
        (0, "2", "'scale' .* pass a real number"),
    ]:
        with pytest.raises(KernelArgumentError, match=f"shifted: argument {message}"):
            kernel(a, b, c, shift, scale, grid=(2,))
    assert np.isnan(c.astype(np.float32)).all()
    for shift in (-64, 64):
        kernel(a, b, c, shift, 0.5, grid=(2,))
        ref = shifted_reference(a, b, shift, 0.5)
        assert np.abs(c.astype(np.float64) - ref).max() < 2e-2 * np.abs(ref).max()
    for grid in (5, (0, 1), (1.5,), "a"):
        with pytest.raises(KernelArgumentError, match="grid must be 1 to 3 positive"):
            kernel(a, b, c, 0, 0.5, grid=grid)


def test_dlpack_views_and_the_interface_fallback(torch) -> None:
    """torch views at an offset go through DLPack; an object with only
    `__cuda_array_interface__` still works; a tensor DLPack cannot export is
    refused with the producer's reason."""
    compiled = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt_f16")
    big = torch.randn(512, 128, device="cuda").half()
    a, b = big[128:384], big[:200]  # starting 256 rows and 0 rows in
    c = torch.full((256, 200), float("nan"), device="cuda", dtype=torch.float16)
    compiled(a, b, c)
    torch.cuda.synchronize()
    assert gemm_error(c.cpu().float(), a.cpu().float(), b.cpu().float()) < 1e-2

    class InterfaceOnly:
        def __init__(self, tensor) -> None:
            self.tensor = tensor
            self.__cuda_array_interface__ = tensor.__cuda_array_interface__

    c2 = torch.full_like(c, float("nan"))
    compiled(InterfaceOnly(a), InterfaceOnly(b), InterfaceOnly(c2))
    torch.cuda.synchronize()
    assert torch.equal(c, c2)
    with pytest.raises(
        KernelArgumentError, match="argument 'a' cannot be read through DLPack"
    ):
        compiled(a.clone().requires_grad_(), b, c)


def test_bind_holds_its_arrays(torch) -> None:
    """A bound launcher keeps temporaries passed to `bind` alive: their memory is
    not handed to later allocations while the launcher can still use it."""
    compiled = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt")
    a = torch.randn(512, 256, device="cuda").bfloat16()
    b = torch.randn(384, 256, device="cuda").bfloat16()
    c = torch.full((512, 384), float("nan"), device="cuda", dtype=torch.bfloat16)
    launch = compiled.bind(a.clone(), b.clone(), c)  # only the launcher holds them
    _reuse = [torch.full_like(x, float("nan")) for x in (a, b) for _ in range(4)]
    launch()  # with the clones' memory reused by _reuse, this would read NaNs
    torch.cuda.synchronize()
    assert gemm_error(c.cpu().float(), a.cpu().float(), b.cpu().float()) < 1e-2


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
        tawa_xdsl.compile(
            source, "attention_causal_d256", **options, **tight
        ).kernel.load()
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
