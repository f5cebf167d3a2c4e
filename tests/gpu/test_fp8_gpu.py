"""FP8 kernels compiled by tawa-xdsl, run on the H100 on torch tensors (e4m3 /
e5m2 through DLPack), against the float64 product of their dequantized inputs:
GEMM relative error < 1e-2 (an e4m3 output: within half an e4m3 step plus
448 / 256 per 1024 of K for the tensor cores' narrower FP8 accumulation,
exactly 448 where it saturates), attention < 3e-2 with the bf16 kernel's error on the
same dequantized inputs asserted next to it."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16

from ..conftest import EXAMPLES
from ..test_fp8 import (
    ATTENTION_KERNELS,
    BF16_ATTENTION,
    EIGHT,
    GEMM_KERNELS,
    NARROW,
    Case,
    assert_e4m3_output,
    assert_e5m2_output,
    attention_case,
    cast_kernel,
    e5m2_case,
    e5m2_gemm,
    gemm_case,
    rel_l2,
)

GEMM_SHAPES = [(256, 512, 1024), (1000, 784, 2048), (4096, 4096, 4096)]


def device(torch, x):
    """A numpy argument on the GPU (8-bit floats as torch's float8 types)."""
    if not isinstance(x, np.ndarray):
        return x
    if x.dtype == bfloat16:
        return torch.from_numpy(x.view(np.int16)).view(torch.bfloat16).cuda()
    if x.dtype.itemsize == 1 and x.dtype != np.uint8:
        fp8 = torch.float8_e4m3fn if "e4m3" in x.dtype.name else torch.float8_e5m2
        return torch.from_numpy(x.view(np.uint8)).view(fp8).cuda()
    return torch.from_numpy(x).cuda()


def run_on_gpu(torch, path, case, **options):
    args = [device(torch, x) for x in case.fresh()]
    out = args[case.out]
    if out.dtype == torch.bfloat16:
        out.fill_(float("nan"))  # an element never written fails the check
    tawa_xdsl.compile(path, case.kernel, **options)(*args)
    torch.cuda.synchronize()
    return out.cpu().double().numpy()


@pytest.mark.parametrize("shape", GEMM_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("kernel", GEMM_KERNELS)
def test_fp8_gemm_matches_float64(torch, kernel, shape) -> None:
    case = gemm_case(kernel, shape, seed=0)
    got = run_on_gpu(torch, EXAMPLES / "gemm_fp8.mlir", case)
    if kernel == "gemm_fp8_e4m3_out":
        # the tensor cores' FP8 sums drift further the longer K is
        assert_e4m3_output(got, case.reference, slack=2.0**-8 * shape[2] / 1024)
    else:
        err = np.abs(got - case.reference).max() / np.abs(case.reference).max()
        assert err < 1e-2, err


@pytest.mark.parametrize("shape", GEMM_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_e5m2_gemm_matches_float64(torch, shape) -> None:
    """e5m2 operands and output (`test_fp8.e5m2_gemm`): torch float8_e5m2
    tensors through DLPack, `.e5m2.e5m2` wgmmas, saturating e5m2 stores."""
    case = e5m2_case(0, shape)
    args = [device(torch, x) for x in case.fresh()]
    tawa_xdsl.compile(e5m2_gemm(), case.kernel)(*args)
    torch.cuda.synchronize()
    got = args[case.out].cpu().view(torch.uint8).numpy().view(case.args[2].dtype)
    assert_e5m2_output(got, case.reference, slack=2.0**-8 * shape[2] / 1024)


@pytest.mark.parametrize("seq", [(150, 304), (1024, 1024)], ids=str)
@pytest.mark.parametrize("kernel", ATTENTION_KERNELS)
def test_fp8_attention_matches_float64(torch, kernel, seq) -> None:
    sq, sk = seq
    case, real = attention_case(kernel, seed=0, bh=4, sq=sq, sk=sk)
    got = run_on_gpu(torch, EXAMPLES / "attention_fp8.mlir", case)
    assert_fp8_attention_error(torch, got, case, real, f"{kernel} {seq}")


def assert_fp8_attention_error(torch, got, case, real, what: str) -> None:
    """`got` within 3e-2 of the float64 reference, and the bf16 kernel of the
    same head dim within 1e-2 on the dequantized inputs (both printed)."""
    fp8_error = rel_l2(got, case.reference)
    bf16 = Case(
        case.kernel.removesuffix("_v").removesuffix("_fp8"),
        [*(x.astype(bfloat16) for x in real), case.args[3], case.args[4]],
        3,
        case.reference,
    )
    bf16_path = EXAMPLES / BF16_ATTENTION[case.args[0].shape[-1]]
    bf16_error = rel_l2(run_on_gpu(torch, bf16_path, bf16), case.reference)
    print(f"{what}: fp8 {fp8_error:.2e}, bf16 {bf16_error:.2e}")
    assert fp8_error < 3e-2, (fp8_error, bf16_error)
    assert bf16_error < 1e-2, bf16_error


FP8_WALKS = [  # more query blocks than SMs, at lengths FP8_ATTENTION_WALK takes
    ("attention_d128_fp8", 64, 512),
    ("attention_causal_d128_fp8", 64, 1024),
    ("attention_d64_fp8", 32, 1024),
    ("attention_causal_d256_fp8", 32, 1024),
]


@pytest.mark.parametrize(("kernel", "bh", "seq"), FP8_WALKS, ids=str)
def test_fp8_attention_walk_matches_float64(torch, kernel, bh, seq) -> None:
    """The tuned plan at these shapes walks from the tile counter with Q in two
    slots (`heuristics.FP8_ATTENTION_WALK`); launched twice (the counter must
    be back at zero)."""
    case, _ = attention_case(kernel, seed=1, bh=bh, sq=seq, sk=seq)
    compiled = tawa_xdsl.compile(EXAMPLES / "attention_fp8.mlir", kernel)
    for _ in range(2):
        args = [device(torch, x) for x in case.fresh()]
        args[case.out].fill_(float("nan"))
        compiled(*args)
        torch.cuda.synchronize()
        assert compiled.options["dynamic_tiles"], "the rules did not pick the walk"
        got = args[case.out].cpu().double().numpy()
        assert rel_l2(got, case.reference) < 3e-2


@pytest.mark.parametrize(
    ("src", "dst"),
    [("bf16", "f8E4M3FN"), ("f16", "f8E5M2"), ("f8E4M3FN", "bf16"), ("f8E5M2", "f16")],
)
def test_casts_between_16_and_8_bit_tiles(torch, src, dst) -> None:
    """16-bit tiles truncated into fp8 (through f32) and fp8 tiles extended to
    bf16 or f16 (packed back into pairs) on the H100, bit for bit as the
    interpreter computes them."""
    rng = np.random.default_rng(4)
    dtypes = {**NARROW, **EIGHT}
    with np.errstate(over="ignore"):
        x = (rng.standard_normal((64, 128)) * 100).astype(dtypes[src])
    x[0, :3] = [np.nan, np.inf, -np.inf] if src in NARROW else [np.nan, 1.0, -1.0]
    expected = np.zeros((64, 128), dtypes[dst])
    tawa_xdsl.interpret(tawa_xdsl.parse(cast_kernel(src, dst)), "cast", x, expected)
    got = np.zeros_like(expected)
    tawa_xdsl.compile(cast_kernel(src, dst), "cast")(x, got)
    np.testing.assert_array_equal(got.astype(np.float32), expected.astype(np.float32))
