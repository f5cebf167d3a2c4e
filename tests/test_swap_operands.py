"""GEMMs computed with their operands swapped (`swap-operands`, `swap_ab`):
C^T = B A^T on the weight rows, the few rows of A on wgmma's N side, the
output stored transposed from registers (`store_global transposed`).

The interpreter computes the reference on the kernel as written (at the same
tile sizes); the swapped kernel must agree in the interpreter, the barrier
simulator and the thread level, at M of 1 to 64 and an N that leaves an
edge tile of 3 columns (odd), K with a partial step. A store whose element
index is wrong (the mutation) must be caught. The dispatcher's option is
checked, explained, refused where it cannot apply and weighed by autotune.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i32
from xdsl.utils.exceptions import DiagnosticException

import tawa_xdsl
from tawa_xdsl import heuristics
from tawa_xdsl.autotune import candidates
from tawa_xdsl.compiler import CompileOptions, describe
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import ptx, tile
from tawa_xdsl.dispatch import Dispatcher
from tawa_xdsl.dispatch_rules import swap_block_m
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.kernel import find_kernel
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.pass_pipeline import OptionValueError

from .conftest import EXAMPLES, example_module, sweep
from .test_fp8 import gemm_case
from .thread_level import assert_close, simulate_output, to_thread_level

N, K = 131, 72  # an edge tile of 3 columns (odd), a partial K step
BN = 128


def tiles(m: int) -> str:
    return f"tile-shape{{block-m={swap_block_m(m)} block-n={BN}}}"


def grid(m: int) -> tuple[int, int]:
    return (-(-m // swap_block_m(m)), -(-N // BN))


def arguments(file: str, kernel: str, m: int) -> list[Any]:
    """Inputs (and a NaN output) of a call of `kernel` with M = `m`."""
    rng = np.random.default_rng(m)
    dtype = np.float16 if kernel.endswith("f16") else bfloat16
    a = rng.standard_normal((m, K)).astype(dtype)
    nn = "_nn" in kernel
    b = rng.standard_normal((K, N) if nn else (N, K)).astype(dtype)
    c = np.full((m, N), np.nan, dtype)
    if file == "gemm.mlir":
        return [a, b, c]
    bias = rng.standard_normal(N).astype(bfloat16)
    scalars = [np.float32(0.75)] if kernel == "gemm_scale_bias_relu" else []
    return [a, b, bias, c, *scalars]


def output(file: str) -> int:
    return 2 if file == "gemm.mlir" else 3


def reference(file: str, kernel: str, m: int) -> tuple[list[Any], np.ndarray]:
    """The arguments, and the output of the kernel as written (unswapped) in
    the interpreter, at the tile sizes the swapped one runs."""
    args = arguments(file, kernel, m)
    module = tawa_xdsl.apply(example_module(file, kernel), tiles(m))
    tawa_xdsl.interpret(module, kernel, *args, grid=grid(m))
    return args, args[output(file)].copy()


def pipeline(m: int, consumers: int) -> str:
    return f"{tiles(m)},swap-operands,tawa-hopper-pipeline{{num-consumers={consumers}}}"


GEMMS = ("gemm_nt", "gemm_nn", "gemm_nt_f16")
ROWS = (1, 8, 16, 40, 64)


@pytest.mark.parametrize("m", ROWS)
@pytest.mark.parametrize("kernel", GEMMS)
def test_the_interpreter_agrees(kernel: str, m: int) -> None:
    args, expected = reference("gemm.mlir", kernel, m)
    swapped = tawa_xdsl.apply(
        example_module("gemm.mlir", kernel), f"{tiles(m)},swap-operands"
    )
    dots = [o for o in find_kernel(swapped, kernel).walk() if isinstance(o, tile.DotOp)]
    assert [d.result.type.get_shape() for d in dots] == [(BN, swap_block_m(m))]
    args[2] = np.full_like(args[2], np.nan)
    tawa_xdsl.interpret(swapped, kernel, *args, grid=grid(m))
    assert_close(args[2], expected, 1)  # f32 sums of the same products


CASES = [(k, m, w) for k in GEMMS for m in ROWS for w in (1, 2)]
FAST = {("gemm_nt", 16, 1), ("gemm_nn", 40, 2), ("gemm_nt_f16", 1, 1)}
CI = FAST | {("gemm_nt", 64, 2), ("gemm_nn", 8, 1), ("gemm_nt_f16", 40, 2)}


@pytest.mark.parametrize(
    ("kernel", "m", "consumers"),
    sweep(CASES, FAST, lambda c: f"{c[0]}-M{c[1]}-W{c[2]}", slow=CI - FAST),
)
def test_the_thread_level_agrees(kernel: str, m: int, consumers: int) -> None:
    args, expected = reference("gemm.mlir", kernel, m)
    module = to_thread_level(
        example_module("gemm.mlir", kernel), pipeline(m, consumers)
    )
    assert_close(simulate_output(module, kernel, args, 2, grid(m)), expected)


def test_the_barrier_simulator_agrees() -> None:
    kernel, m = "gemm_nt", 40
    args, expected = reference("gemm.mlir", kernel, m)
    lowered = tawa_xdsl.apply(example_module("gemm.mlir", kernel), pipeline(m, 2))
    stores = [
        o
        for o in find_kernel(lowered, kernel).walk()
        if isinstance(o, nv.StoreGlobalOp)
    ]
    assert [s.transposed is not None for s in stores] == [True]
    assert_close(simulate_output(lowered, kernel, args, 2, grid(m)), expected)


@pytest.mark.parametrize(
    ("kernel", "m"),
    sweep(
        [("gemm_scale_bias_relu", 40), ("gemm_bias_gelu", 1)],
        {("gemm_scale_bias_relu", 40)},
        lambda c: f"{c[0]}-M{c[1]}",
    ),
)
def test_a_bias_row_becomes_a_column(kernel: str, m: int) -> None:
    """The bias (one value per column of C) is a row vector of the swapped
    accumulator's rows: a 16-bit row tile read from shared memory, one
    `ld.shared.b16` per row, packed in pairs."""
    args, expected = reference("gemm_epilogue.mlir", kernel, m)
    module = to_thread_level(
        example_module("gemm_epilogue.mlir", kernel), pipeline(m, 1)
    )
    got = simulate_output(module, kernel, args, 3, grid(m), exact_math=True)
    assert_close(got, expected, 4)  # GELU's tanh rounds apart


def test_the_residual_epilogue_is_refused_at_the_store() -> None:
    module = example_module("gemm_epilogue.mlir", "gemm_residual_gelu")
    with pytest.raises(DiagnosticException) as refused:
        tawa_xdsl.apply(module, "swap-operands")
    message = str(refused.value)
    assert "tile.store: swap-operands cannot compute this store's GEMM" in message
    assert "%res_t is a loaded tile computed on" in message


def rotated_values(module: ModuleOp, kernel: str) -> ModuleOp:
    """Every global store writes its neighbour's element: the element index
    of a transposed store off by one (the wrong (r, c) at a place)."""
    clone = module.clone()
    for op in find_kernel(clone, kernel).walk():
        if isinstance(op, ptx.StoreOp) and op.space.data == "global":
            picks = list(op.elements)
            picks = picks[1:] + picks[:1]
            op.properties["value_map"] = DenseArrayBase.from_list(i32, picks)
    return clone


def test_a_wrong_transposed_store_index_is_caught() -> None:
    kernel, m = "gemm_nt", 40
    args, expected = reference("gemm.mlir", kernel, m)
    module = to_thread_level(example_module("gemm.mlir", kernel), pipeline(m, 1))
    assert_close(simulate_output(module, kernel, args, 2, grid(m)), expected)
    with pytest.raises(AssertionError, match="elements differ"):
        got = simulate_output(rotated_values(module, kernel), kernel, args, 2, grid(m))
        assert_close(got, expected)


STORED_BOTH_WAYS = """
func.func @both(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>,
    %c: !tile.desc<?x?xf32, box = [64, 64]>, %ct: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x64xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  %acc_t = tile.trans %acc : tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %acc_t, %ct[%n0, %m0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
"""


def test_a_register_tile_stored_transposed() -> None:
    """The user's form: the accumulator stored as it is and transposed (the
    transpose cannot move up without computing the dot twice) was refused
    ("a register tile cannot be transposed"); the second store writes the
    same registers transposed."""
    m, n = 100, 72
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, K)).astype(bfloat16)
    b = rng.standard_normal((n, K)).astype(bfloat16)
    args = [a, b, np.zeros((m, n), np.float32), np.zeros((n, m), np.float32)]
    module = to_thread_level(
        tawa_xdsl.parse(STORED_BOTH_WAYS), "tawa-hopper-pipeline{tuned=false}"
    )
    c = simulate_output(module, "both", args, 2, (2, 2))
    ct = simulate_output(module, "both", args, 3, (2, 2))
    expected = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(ct, c.T)


def bias_gemm(dtype: str, nn: bool) -> str:
    """`C = dtype(A B^T + bias)` (`nn`: B stored K x N), tile names BM, BN,
    BK: the bias GEMM in either B layout and 16-bit type, which the GPU tests
    run swapped (`tests/gpu/test_swap_ab_gpu.py`)."""
    b_box, b_names, b_dims = (
        ("[64, 128]", '["BK", "BN"]', '["K", "N"]')
        if nn
        else ("[128, 64]", '["BN", "BK"]', '["N", "K"]')
    )
    b_desc = f"!tile.desc<?x?x{dtype}, box = {b_box}>"
    if nn:
        load_b = f"""%tb = tile.load %b[%k, %n0] : {b_desc} -> tensor<64x128x{dtype}>"""
        operand = "%tb"
    else:
        load_b = f"""%tb0 = tile.load %b[%n0, %k] : {b_desc} -> tensor<128x64x{dtype}>
    %tb = tile.trans %tb0 : tensor<128x64x{dtype}> -> tensor<64x128x{dtype}>"""
        operand = "%tb"
    return f"""
func.func @gemm_bias(%a: !tile.desc<?x?x{dtype}, box = [128, 64]> {{tile.box = ["BM", "BK"], tile.dims = ["M", "K"]}},
    %b: {b_desc} {{tile.box = {b_names}, tile.dims = {b_dims}}},
    %bias: !tile.desc<?x{dtype}, box = [128]> {{tile.box = ["BN"], tile.dims = ["N"]}},
    %c: !tile.desc<?x?x{dtype}, box = [128, 128]> {{tile.box = ["BM", "BN"], tile.dims = ["M", "N"]}}) attributes {{tile.kernel}} {{
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?x{dtype}, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant {{tile.size = "BK"}} 64 : index
  %bm = arith.constant {{tile.size = "BM"}} 128 : index
  %bn = arith.constant {{tile.size = "BN"}} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {{
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?x{dtype}, box = [128, 64]> -> tensor<128x64x{dtype}>
    {load_b}
    %next = tile.dot %ta, {operand}, %acc_k : tensor<128x64x{dtype}>, tensor<64x128x{dtype}> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }}
  %bias_t = tile.load %bias[%n0] : !tile.desc<?x{dtype}, box = [128]> -> tensor<128x{dtype}>
  %bias_f = arith.extf %bias_t : tensor<128x{dtype}> to tensor<128xf32>
  %bias_row = tile.expand_dims %bias_f, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %bias_b = tile.broadcast %bias_row : tensor<1x128xf32> -> tensor<128x128xf32>
  %sum = arith.addf %acc, %bias_b : tensor<128x128xf32>
  %out = arith.truncf %sum : tensor<128x128xf32> to tensor<128x128x{dtype}>
  tile.store %out, %c[%m0, %n0] : tensor<128x128x{dtype}> -> !tile.desc<?x?x{dtype}, box = [128, 128]>
  func.return
}}
"""


def test_a_16_bit_bias_gemm_with_b_stored_k_by_n() -> None:
    """The GPU tests' bias kernel, f16 and B stored K x N, swapped at the
    thread level against the interpreter's unswapped kernel."""
    m = 16
    rng = np.random.default_rng(3)
    a = rng.standard_normal((m, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    bias = rng.standard_normal(N).astype(np.float16)
    args = [a, b, bias, np.full((m, N), np.nan, np.float16)]
    text = bias_gemm("f16", nn=True)
    shaped = tawa_xdsl.apply(tawa_xdsl.parse(text), tiles(m))
    tawa_xdsl.interpret(shaped, "gemm_bias", *args, grid=grid(m))
    expected = args[3].copy()
    module = to_thread_level(tawa_xdsl.parse(text), pipeline(m, 2))
    assert_close(simulate_output(module, "gemm_bias", args, 3, grid(m)), expected)


@pytest.mark.parametrize(
    "kernel",
    sweep(
        [("gemm_fp8_rowwise",), ("gemm_fp8_tensorwise",)],
        {("gemm_fp8_rowwise",)},
        lambda c: c[0],
    ),
)
def test_an_fp8_gemm_swapped(kernel: str) -> None:
    """e4m3 operands, both K-major either way round (m64n16k32 wgmmas on the
    weight rows); the row-wise kernel's scale of A's rows becomes a column
    vector of the swapped accumulator."""
    m = 16
    case = gemm_case(kernel, (m, N, 256), seed=2)
    args = case.fresh()
    shaped = tawa_xdsl.apply(example_module("gemm_fp8.mlir", kernel), tiles(m))
    tawa_xdsl.interpret(shaped, kernel, *args, grid=grid(m))
    expected = args[case.out].copy()
    module = to_thread_level(example_module("gemm_fp8.mlir", kernel), pipeline(m, 1))
    got = simulate_output(module, kernel, case.args, case.out, grid(m))
    assert_close(got, expected)


# ----------------------------------------------------------------- compile()


@pytest.mark.parametrize("block_m", [16, 64])
def test_ptxas_assembles_the_swapped_kernel_without_spills(block_m: int) -> None:
    d = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt", swap_ab=True)
    text = d.for_shape(M=block_m, N=4096, K=4096).ptx
    assert f"wgmma.mma_async.sync.aligned.m64n{block_m}k16.f32.bf16.bf16" in text
    assert "st.global.b16" in text
    result = assemble(text)
    assert result.ok, result.log[-3000:]
    if result.tool != "ptxas":
        pytest.skip("nvJitLink ignores setmaxnreg: its spills differ")
    assert not result.spills, result.log[-3000:]


@pytest.mark.parametrize(
    ("given", "refusal"),
    [
        ({"block_m": 12}, "block_m=12 with swap_ab=True: the rows of A are wgmma's N"),
        ({"split_k": 2}, "swap_ab=True with a K cut"),
        ({"stream_k": True}, "swap_ab=True with a K cut"),
    ],
)
def test_options_swap_ab_cannot_take(given: dict[str, Any], refusal: str) -> None:
    with pytest.raises(OptionValueError, match=refusal):
        CompileOptions(swap_ab=True, **given)


def test_compile_refuses_swap_ab_for_a_kernel_it_cannot_swap() -> None:
    with pytest.raises(DiagnosticException) as refused:
        tawa_xdsl.compile(EXAMPLES / "attention.mlir", "attention_d64", swap_ab=True)
    assert "swap-operands cannot compute this store's GEMM" in str(refused.value)
    assert "(options for @attention_d64: swap-ab=true given)" in str(refused.value)


def gemm(**given: Any) -> Dispatcher:
    return tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt", **given)


def test_explain_says_swap_ab_is_off_above_its_ceiling() -> None:
    text = gemm().explain(M=32, N=4096, K=4096)
    assert "swap-ab: off: M = 32 > SWAP_AB_MAX_M = 16" in text
    assert "swap_ab = False (default)" in text


def test_explain_says_why_operands_were_swapped_when_given() -> None:
    text = gemm(swap_ab=True).explain(M=16, N=4096, K=4096)
    assert "swap-ab: operands swapped (swap_ab=True given)" in text
    assert "64 weight rows (wgmma's M side) by 16 rows of A" in text
    assert "swap_ab = True (given)" in text and "block_m = 16 (shape)" in text
    assert "split-K" not in text and "-ba " in text  # K uncut; describe's tag
    off = gemm(swap_ab=False).explain(M=16, N=4096, K=4096)
    assert "swap-ab: off: swap_ab=False given" in off


# (M, N, K): swapped by the rules, and the unswapped pick's K split. The
# H200's verdicts (lead, issue 16; tawa/cuBLAS, unswapped rules / swapped on 64
# weight rows): 0.900 (split 3) / 0.929, 0.909 (split 3) / 0.937, 0.937 / 0.970,
# 0.939 (split 3) / 0.895, and 0.967 (split 4) / 0.707 at M = 32.
MEASURED = [
    ((1, 4096, 4096), True, 3),
    ((8, 4096, 4096), True, 3),
    ((16, 6144, 4096), True, 1),
    ((16, 4096, 14336), False, 3),
    ((32, 2048, 8192), False, 4),
]


@pytest.mark.parametrize(("mnk", "swapped", "splits"), MEASURED)
def test_the_rule_swaps_the_rows_the_gpu_ran_faster_swapped(
    mnk: tuple[int, int, int], swapped: bool, splits: int
) -> None:
    m, n, k = mnk
    d = gemm()
    plan = d.plan(d.key_for(M=m, N=n, K=k))
    assert plan.options.swap_ab is swapped
    assert plan.decision.split_k == (1 if swapped else splits)
    if swapped:
        assert (plan.options.block_m, plan.options.block_n) == (swap_block_m(m), 64)
    text = d.explain(M=m, N=n, K=k)
    if m <= 16:  # weighed: the reason gives both times and the unswapped cut
        cut = "" if splits == 1 else f", K split {splits} ways"
        said = re.search(
            r"swap-ab: (off: )?the wave model predicts ([\d.]+) us swapped "
            rf"\(uncut\) against ([\d.]+) us unswapped{cut}\n",
            text,
        )
        assert said is not None, text
        assert (said[1] is None) is swapped
        assert (float(said[2]) < float(said[3])) is swapped


def test_the_rule_swaps_neither_what_the_caller_held_nor_above_its_ceiling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    d = gemm(split_k=2)
    assert d.plan(d.key_for(M=1, N=4096, K=4096)).options.swap_ab is False
    assert "swap-ab: off: split_k=2 given" in d.explain(M=1, N=4096, K=4096)
    d = gemm(ping_pong=True)  # two consumers: not one warpgroup's 64 weight rows
    assert d.plan(d.key_for(M=1, N=4096, K=4096)).options.swap_ab is False
    assert "swap-ab: off: ping_pong=True given" in d.explain(M=1, N=4096, K=4096)
    monkeypatch.setattr(heuristics, "SWAP_AB_MAX_M", 0)
    d = gemm()
    assert d.plan(d.key_for(M=1, N=4096, K=4096)).options.swap_ab is False
    residual = tawa_xdsl.compile(
        EXAMPLES / "gemm_epilogue.mlir", "gemm_residual_gelu"
    ).explain(M=1, N=4096, K=4096)
    assert "swap-ab: off: swap-operands cannot compute this store's GEMM" in residual


def configurations(m: int) -> list[str]:
    module = example_module("gemm.mlir", "gemm_nt")
    d = Dispatcher(str(module), "gemm_nt", CompileOptions())
    key = d.key_for(M=m, N=4096, K=4096)
    found = candidates(
        d.structure,
        key.problem,
        {},
        132,
        d.plan(key).decision,
        lambda shaped: CompileOptions().resolve(d.tile_kernel, shaped),
    )
    return [describe(c.as_dict()) for c in found]


def test_autotune_weighs_the_swapped_form_at_small_m() -> None:
    found = configurations(16)  # the rules swap it: the unswapped pick too
    assert "D8-P1-W1-BM16-BN64-ba" in found and "D8-P1-W1-BM64-BN96" in found
    assert not any(name.endswith("-ba") for name in configurations(512))
