"""GEMM kernels compiled by tawa-xdsl, run on the H100, against a float64 reference.

Inputs are random, outputs are poisoned with NaN before each run (so elements the
kernel never writes fail the check), and sizes include ones that are not tile
multiples. Tolerance: |out - ref| / |ref| < 1e-2 (bf16/f16 output rounding is
about 2e-3)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import tawa_xdsl
from tawa_xdsl.kernel import KernelArgumentError

from .conftest import rel_err

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def config_id(config: tuple[int, int, int]) -> str:
    return "D{}-P{}-W{}".format(*config)


SIZES = [
    (128, 128, 128),
    (1000, 1000, 1000),
    (4096, 3000, 1024),
    (264, 136, 2056),
    (2048, 2048, 2048),
    (8192, 8192, 8192),
]
CONFIGS = [  # (num_stages, mma_depth, num_consumers)
    (1, 1, 1),
    (2, 1, 1),
    (2, 2, 2),
    (3, 2, 1),
    (4, 1, 2),
    (4, 2, 2),
]


def config_options(config: tuple[int, int, int] | None) -> dict:
    """The compile options of `config` = (num_stages, mma_depth,
    num_consumers), exactly (untuned); none for None (the tuned defaults)."""
    if config is None:
        return {}
    stages, mma, consumers = config
    return dict(num_stages=stages, mma_depth=mma, num_consumers=consumers, tuned=False)


def run_gemm(torch, kernel: str, m: int, n: int, k: int, dtype, config=None, **options):
    """Run `kernel` with the tuned defaults (config None) or exactly `config` =
    (num_stages, mma_depth, num_consumers) plus `options`."""
    gen = torch.Generator(device="cuda").manual_seed(m * 7 + n * 13 + k)
    a = torch.randn(m, k, device="cuda", generator=gen).to(dtype)
    b_nk = torch.randn(n, k, device="cuda", generator=gen).to(dtype)
    b = b_nk if "_nt" in kernel else b_nk.t().contiguous()
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
    options |= config_options(config)
    compiled = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", kernel, **options)
    compiled(a, b, c)
    torch.cuda.synchronize()
    return c, a.double() @ b_nk.double().t()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_gemm_matches_float64(torch, dtype, layout, size) -> None:
    """The tuned defaults (128x256 tiles, persistent, TMA-store epilogue)."""
    kernel = f"gemm_{layout}" + ("_f16" if dtype == "f16" else "")
    torch_dtype = torch.bfloat16 if dtype == "bf16" else torch.float16
    c, ref = run_gemm(torch, kernel, *size, torch_dtype)
    assert rel_err(c, ref) < 1e-2


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: config_id(c))
@pytest.mark.parametrize(
    "size", [(1000, 1000, 1000), (4096, 3000, 1024), (128, 384, 64)], ids=str
)
@pytest.mark.parametrize("kernel", ["gemm_nt", "gemm_nn"])
def test_gemm_pipeline_configurations(torch, kernel, size, config) -> None:
    c, ref = run_gemm(torch, kernel, *size, torch.bfloat16, config)
    assert rel_err(c, ref) < 1e-2


@pytest.mark.parametrize("ping_pong", [False, True], ids=["", "ping-pong"])
@pytest.mark.parametrize("tma_store", [True, False], ids=["tma-store", "direct"])
@pytest.mark.parametrize("persistent", [True, False], ids=["persistent", "grid"])
@pytest.mark.parametrize("block_n", [128, 256], ids=lambda n: f"BN{n}")
@pytest.mark.parametrize(
    "size", [(1000, 1000, 1000), (4096, 3000, 1024), (264, 136, 2056)], ids=str
)
@pytest.mark.parametrize("kernel", ["gemm_nt", "gemm_nn"])
def test_tile_shape_persistent_and_epilogue(
    torch, kernel, size, block_n, persistent, tma_store, ping_pong
) -> None:
    c, ref = run_gemm(
        torch,
        kernel,
        *size,
        torch.bfloat16,
        (3, 1, 2),
        block_n=block_n,
        persistent=persistent,
        tma_store=tma_store,
        ping_pong=ping_pong,
    )
    assert rel_err(c, ref) < 1e-2


@pytest.mark.parametrize("persistent", [True, False], ids=["persistent", "grid"])
@pytest.mark.parametrize("block_n", [128, 256], ids=lambda n: f"BN{n}")
@pytest.mark.parametrize(
    "size",
    [(1000, 1000, 1000), (4096, 3000, 1024), (264, 136, 2056), (384, 512, 320)],
    ids=str,
)
@pytest.mark.parametrize("kernel", ["gemm_nt", "gemm_nn"])
def test_clusters_of_two(torch, kernel, size, block_n, persistent) -> None:
    """B is multicast to both blocks of a cluster (whole from block 0 in gemm_nt,
    one box each in gemm_nn); odd tile counts leave a block past the edge."""
    c, ref = run_gemm(
        torch,
        kernel,
        *size,
        torch.bfloat16,
        (3, 1, 2),
        block_n=block_n,
        persistent=persistent,
        cluster=2,
    )
    assert rel_err(c, ref) < 1e-2


def test_cluster_grid_is_checked(torch) -> None:
    compiled = tawa_xdsl.compile(
        EXAMPLES / "gemm.mlir", "gemm_nt", cluster=2, persistent=False
    )
    a = torch.randn(384, 128, device="cuda").bfloat16()
    c = torch.empty(384, 384, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(
        KernelArgumentError, match="grid's x extent 3 is not a multiple of 2"
    ):
        compiled(a, a, c, grid=(3, 3))
    assert compiled.kernel.resident_clusters() >= 1


@pytest.mark.parametrize(
    "config", [None, (3, 2, 1), (4, 2, 2)], ids=lambda c: config_id(c) if c else "tuned"
)
@pytest.mark.parametrize("size", [(1000, 1000, 1000), (4096, 3000, 1024)], ids=str)
@pytest.mark.parametrize(
    "kernel", ["gemm_scale_bias_relu", "gemm_bias_gelu", "gemm_bias_gelu_erf"]
)
def test_fused_epilogue(torch, kernel, size, config) -> None:
    m, n, k = size
    a = torch.randn(m, k, device="cuda").bfloat16()
    b = torch.randn(n, k, device="cuda").bfloat16()
    bias = torch.randn(n, device="cuda").bfloat16()
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    options = config_options(config)
    compiled = tawa_xdsl.compile(EXAMPLES / "gemm_epilogue.mlir", kernel, **options)
    x = a.double() @ b.double().t()
    if kernel == "gemm_scale_bias_relu":
        compiled(a, b, bias, c, 0.5)
        ref = (0.5 * x + bias.double()).relu()
    elif kernel == "gemm_bias_gelu":
        compiled(a, b, bias, c)
        x = x + bias.double()
        ref = 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x**3)))
    else:  # exact GELU: math.erf as the lowering's polynomials
        compiled(a, b, bias, c)
        x = x + bias.double()
        ref = 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))
    torch.cuda.synchronize()
    assert rel_err(c, ref) < 1e-2


@pytest.mark.parametrize(
    "config", [None, (2, 1, 1), (3, 2, 2)], ids=lambda c: config_id(c) if c else "tuned"
)
@pytest.mark.parametrize(
    "size", [(1000, 1000, 1000), (264, 136, 2056), (4096, 3000, 1024)], ids=str
)
def test_residual_epilogue(torch, size, config) -> None:
    """C = gelu(alpha A @ B^T + bias) + R: the residual tile goes through the
    producer's ring and is read from shared memory into the accumulator
    layout; edge tiles read zeros outside R."""
    m, n, k = size
    gen = torch.Generator(device="cuda").manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda", generator=gen).bfloat16()
    b = torch.randn(n, k, device="cuda", generator=gen).bfloat16()
    bias = torch.randn(n, device="cuda", generator=gen).bfloat16()
    r = (8 * torch.randn(m, n, device="cuda", generator=gen)).bfloat16()
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    options = config_options(config)
    compiled = tawa_xdsl.compile(
        EXAMPLES / "gemm_epilogue.mlir", "gemm_residual_gelu", **options
    )
    compiled(a, b, bias, r, c, 0.5)
    torch.cuda.synchronize()
    x = 0.5 * (a.double() @ b.double().t()) + bias.double()
    gelu = 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x**3)))
    ref = gelu + r.double()
    assert rel_err(c, ref) < 1e-2
    assert rel_err(c - gelu, r.double()) < 5e-2  # the residual is really added


@pytest.mark.parametrize(
    "config", [None, (3, 2, 1), (4, 2, 2)], ids=lambda c: config_id(c) if c else "tuned"
)
@pytest.mark.parametrize("size", [(1000, 1000, 1000), (4096, 3000, 1024)], ids=str)
def test_a_stored_k_by_m(torch, size, config) -> None:
    """tests/kernels/gemm_at.mlir: A stored K x M, read by wgmma MN-major
    (imm-trans-a 1); the simulator's model of it checked on the hardware."""
    m, n, k = size
    a_km = torch.randn(k, m, device="cuda").bfloat16()
    b = torch.randn(n, k, device="cuda").bfloat16()
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    options = config_options(config)
    kernel = Path(__file__).resolve().parents[1] / "kernels" / "gemm_at.mlir"
    tawa_xdsl.compile(kernel, "gemm_at", **options)(a_km, b, c)
    torch.cuda.synchronize()
    assert rel_err(c, a_km.double().t() @ b.double().t()) < 1e-2


def test_setmaxnreg_is_honoured(torch) -> None:
    """With two consumer warpgroups the kernel starts capped at 168 registers and
    the JIT keeps setmaxnreg (no C75xx remark, e.g. C7508 'setmaxnreg ignored')."""
    compiled = tawa_xdsl.compile(
        EXAMPLES / "gemm.mlir", "gemm_nt", num_stages=4, num_consumers=2, tuned=False
    )
    compiled.kernel.load()
    assert compiled.kernel.num_regs == 168
    assert "C75" not in compiled.kernel.jit_log, compiled.kernel.jit_log


def test_illegal_arguments_are_refused_before_launch(torch) -> None:
    compiled = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt")
    a = torch.randn(256, 128, device="cuda").bfloat16()
    b = torch.randn(256, 128, device="cuda").bfloat16()
    c = torch.empty(256, 256, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(
        KernelArgumentError, match="argument 'a' has dtype f32, the kernel expects bf16"
    ):
        compiled(a.float(), b, c)
    with pytest.raises(
        KernelArgumentError,
        match="argument 'b' must be contiguous in its last dimension",
    ):
        compiled(a, torch.randn(128, 256, device="cuda").bfloat16().t(), c)
    odd = torch.randn(256, 130, device="cuda").bfloat16()
    with pytest.raises(  # the runtime kernel alone: TMA cannot describe it
        KernelArgumentError, match="argument 'a' has a stride of 260 bytes"
    ):
        compiled.kernel(odd, odd, c)
    compiled(odd, odd, c)  # the dispatcher reads it through aligned buffers
    torch.cuda.synchronize()
    assert rel_err(c, odd.double() @ odd.double().t()) < 1e-2
    with pytest.raises(
        KernelArgumentError, match=r"takes 3 arguments \(a, b, c\), got 2"
    ):
        compiled(a, b)
