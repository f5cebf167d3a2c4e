"""The tuned defaults follow the kernel's structure (see `tawa_xdsl.tuning`), and
`compile` and `tawa-hopper-pipeline` resolve options alike (`CompileOptions`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import func
from xdsl.passes import PassPipeline

import tawa_xdsl
from tawa_xdsl.compiler import DEFAULTS, CompileOptions
from tawa_xdsl.contract import kernel_launch
from tawa_xdsl.kernel import find_kernel, kernels
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.lowering.ptx_target import kernel_ptx
from tawa_xdsl.pipelines import TawaHopperPipeline
from tawa_xdsl.registry import all_passes
from tawa_xdsl.target import MAX_SMEM_BYTES
from tawa_xdsl.transforms.pipeline import PipelinePass
from tawa_xdsl.tuning import default_options

from .conftest import EXAMPLES, example_module

KERNELS = Path(__file__).parent / "kernels"


def kernel_of(file: str | Path, name: str) -> func.FuncOp:
    if isinstance(file, Path):
        return find_kernel(tawa_xdsl.parse(file), name)
    return find_kernel(example_module(file, name), name)


def options_for(file: str | Path, name: str) -> dict:
    return default_options(kernel_of(file, name))


def resolved(file: str | Path, name: str, **given) -> CompileOptions:
    return CompileOptions(**given).resolve(kernel_of(file, name))


@pytest.mark.parametrize("d", [64, 128])
def test_equal_work_attention_is_persistent_with_one_q_slot(d) -> None:
    options = options_for("attention.mlir", f"attention_d{d}")
    assert options["persistent"] and options["outer_stages"] == 1
    assert options["group_m"] == 1 and options["num_stages"] == 3
    assert "cluster" not in options  # measured: multicasting K and V did not pay


@pytest.mark.parametrize("d", [64, 128])
def test_causal_attention_keeps_one_program_per_tile_longest_first(d) -> None:
    """The causal key loop ends at the query block: its bound depends on the
    program id, so tiles differ in work; the hardware starts the longest first."""
    options = options_for("attention.mlir", f"attention_causal_d{d}")
    assert "persistent" not in options and options["two_stage"]
    assert "cluster" not in options and options["reverse_x"]
    assert "reverse_x" not in options_for("attention.mlir", f"attention_d{d}")


@pytest.mark.parametrize(
    ("file", "name", "two_stage"),
    [
        ("attention_d256.mlir", "attention_d256", False),
        ("attention_d256.mlir", "attention_causal_d256", False),
        ("attention.mlir", "attention_d128", True),
        ("attention.mlir", "attention_causal_d64", True),
        ("attention_fp8.mlir", "attention_d256_fp8", False),
        ("attention_fp8.mlir", "attention_causal_d128_fp8", True),
        ("attention_fp8.mlir", "attention_d128_fp8", False),
        ("attention_fp8.mlir", "attention_d64_fp8", False),
        ("attention_fp8.mlir", "attention_causal_d64_fp8", True),
    ],
)
def test_which_attention_runs_the_two_stage_overlap(file, name, two_stage) -> None:
    """Measured: O's 128 accumulator registers leave no room for a second score
    tile in flight at head dim 256, in bf16 and in FP8 (NOTES 3.40); FP8 tiles
    of equal work (not causal) run faster without it (NOTES 3.42); the rest
    keep the overlap."""
    assert options_for(file, name)["two_stage"] is two_stage
    assert resolved(file, name).two_stage is two_stage


def test_head_dim_64_takes_192_rows_over_three_warpgroups() -> None:
    """The rule picks the rows; the consumer count follows from them."""
    options = options_for("attention.mlir", "attention_d64")
    assert options["block_m"] == 192 and "num_consumers" not in options
    assert resolved("attention.mlir", "attention_d64").num_consumers == 3
    assert "block_m" not in options_for("attention.mlir", "attention_d128")
    assert resolved("attention.mlir", "attention_d128").num_consumers == 2


def test_gemm_is_persistent_on_128x256_tiles() -> None:
    options = options_for("gemm.mlir", "gemm_nt")
    assert options["block_n"] == 256 and options["persistent"]
    assert options["group_m"] == 16 and options["num_stages"] == 3


@pytest.mark.parametrize(
    ("file", "name", "stages", "block_n"),
    [
        ("gemm_epilogue.mlir", "gemm_scale_bias_relu", 3, 256),
        ("gemm_epilogue.mlir", "gemm_residual_gelu", 3, 192),
        (KERNELS / "gemm_residual.mlir", "gemm_residual", 3, 192),
    ],
)
def test_gemm_tiles_leave_room_for_the_epilogue_tiles(
    file: str | Path, name: str, stages: int, block_n: int | None
) -> None:
    """The tiles the epilogue loads after the K loop get a ring of their own:
    next to a bias alone the tuned 128 x 256 tiles keep gemm_nt's 3 stages;
    with a residual as wide as the output, 128 x 256 tiles leave room for two
    stages only (even with one slot of the residual), so the tile narrows to
    128 x 192, whose three stages fit next to one slot of the residual and the
    staging tile (it ran 1.00-1.11x faster than 128 x 128, NOTES 3.65)."""
    options = options_for(file, name)
    assert options["num_stages"] == stages
    assert options.get("block_n") == block_n
    kernel = kernel_of(file, name)
    module = kernel.parent_op()
    tawa_xdsl.compiler.lower(module, CompileOptions().resolve(kernel))
    lowered = find_kernel(module, name)
    assert any(op.name == "nvgpu_async.tma_store" for op in lowered.walk())


# ------------------------------------------------------------ compile options


def test_options_resolve_given_then_tuned_then_structure_then_static() -> None:
    options = resolved("gemm.mlir", "gemm_nt", num_consumers=1, mma_depth=2)
    assert (options.num_consumers, options.mma_depth) == (1, 2)  # given
    assert (options.block_n, options.group_m) == (256, 16)  # tuned
    assert (options.producer_registers, options.consumer_registers) == (40, 232)
    assert options.outer_stages == DEFAULTS.outer_stages  # static
    untuned = resolved("gemm.mlir", "gemm_nt", tuned=False)
    assert (untuned.block_n, untuned.persistent, untuned.num_consumers) == (0, False, 2)
    assert untuned.given() == {**DEFAULTS.given(), **untuned.given()}


def test_a_given_option_turns_off_a_tuned_one_it_excludes() -> None:
    """GEMM is tuned persistent, which reverse-x excludes: given reverse-x, the
    kernel is not made persistent (and the other way round for causal attention)."""
    gemm = resolved("gemm.mlir", "gemm_nt", reverse_x=True)
    assert gemm.reverse_x and not gemm.persistent
    assert resolved("gemm.mlir", "gemm_nt").persistent
    causal = resolved("attention.mlir", "attention_causal_d128", persistent=True)
    assert causal.persistent and not causal.reverse_x
    with pytest.raises(Exception, match="reverse-x"):
        tawa_xdsl.apply(
            tawa_xdsl.parse(EXAMPLES / "gemm.mlir"),
            "tawa-hopper-pipeline{reverse-x=true persistent=true}",
        )


def test_a_tuned_tile_gives_way_to_a_given_consumer_count() -> None:
    """Head dim 64 is tuned to 192 rows, which two consumer warpgroups cannot
    share in 64-row slices: given two, the kernel keeps its written rows (and
    lowers); a given tile size is never overridden (cooperative says why)."""
    two = resolved("attention.mlir", "attention_d64", num_consumers=2)
    assert (two.block_m, two.num_consumers) == (0, 2)
    assert resolved("attention.mlir", "attention_d64", num_consumers=3).block_m == 192
    tawa_xdsl.apply(
        tawa_xdsl.parse(EXAMPLES / "attention.mlir"),
        "tawa-hopper-pipeline{num-consumers=2 ping-pong=true}",
    )
    # ping-pong needs two consumers: a shape rule's 64-row tile gives way too
    shaped = CompileOptions(ping_pong=True).resolve(
        kernel_of("attention.mlir", "attention_causal_d128"), {"block_m": 64}
    )
    assert (shaped.block_m, shaped.num_consumers) == (0, 2)
    with pytest.raises(Exception, match="192 rows cannot be split"):
        tawa_xdsl.apply(
            tawa_xdsl.parse(EXAMPLES / "attention.mlir"),
            "tawa-hopper-pipeline{num-consumers=2 block-m=192}",
        )


def test_the_passes_take_the_static_defaults() -> None:
    """`pipeline` alone and the untuned `tawa-hopper-pipeline` agree."""
    assert (PipelinePass().num_stages, PipelinePass().mma_depth) == (
        DEFAULTS.num_stages,
        DEFAULTS.mma_depth,
    )


@pytest.mark.parametrize(
    ("file", "name", "block_m"),
    [
        (KERNELS / "attention_i32.mlir", "attention_i32", None),
        ("gemm.mlir", "gemm_nt", 64),
    ],
)
def test_64_row_tiles_get_one_consumer_warpgroup(file, name, block_m) -> None:
    """compile() used to force two consumer warpgroups, which 64 rows cannot split."""
    given = {} if block_m is None else {"block_m": block_m}
    for tuned in (True, False):
        source = file if isinstance(file, Path) else EXAMPLES / file
        kernel = tawa_xdsl.compile(source, name, tuned=tuned, **given)
        assert kernel.options["num_consumers"] == 1
        assert kernel.kernel.threads == 256  # the producer and one consumer warpgroup


def test_the_cli_pipeline_lowers_what_compile_runs() -> None:
    """`tawa-opt -p tawa-hopper-pipeline` resolves each kernel's options as
    compile() does (tuned per kernel: 3 consumer warpgroups at head dim 64, 2 for
    causal head dim 128), so the PTX a user inspects is the kernel compile() runs,
    and it assembles without a ptxas remark (it had C7511 with the old defaults)."""
    names = ("attention_d64", "attention_causal_d128")
    module = tawa_xdsl.parse(EXAMPLES / "attention.mlir")
    for k in list(kernels(module)):
        if k.sym_name.data not in names:
            k.detach()
            k.erase()
    text = str(module)
    lowered = tawa_xdsl.apply(module, "tawa-hopper-pipeline")
    for name, threads in zip(names, (512, 384), strict=True):
        kernel = find_kernel(lowered, name)
        assert kernel_launch(kernel).threads == threads
        ptx = kernel_ptx(kernel)
        assert ptx == tawa_xdsl.compile(text, name).ptx
        result = assemble(ptx)
        assert result.ok and result.remarks == [], result.remarks


def test_pipeline_options_are_compile_options() -> None:
    (pipeline,) = PassPipeline.parse_spec(
        all_passes(),
        "tawa-hopper-pipeline{num-stages=4 tuned=false}",
    ).passes
    assert isinstance(pipeline, TawaHopperPipeline)
    assert pipeline.given() == {"num_stages": 4} and not pipeline.tuned


def test_compile_refuses_unknown_and_ill_typed_options() -> None:
    with pytest.raises(TypeError, match=r"unknown option.*num_stage\b"):
        tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt", num_stage=3)
    with pytest.raises(TypeError, match="option num_stages must be int, got '3'"):
        tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt", num_stages="3")
    with pytest.raises(TypeError, match="option persistent must be bool, got 1"):
        CompileOptions(persistent=1)


ONE_PROGRAM = """
func.func @one(%a: !tile.desc<?x?xbf16, box = [64, 64]>,
    %b: !tile.desc<?x?xbf16, box = [64, 64]>,
    %c: !tile.desc<?x?xbf16, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%s = %zero) -> (tensor<64x64xf32>) {
    %ta = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%k, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %n = tile.dot %ta, %tb, %s : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %n : tensor<64x64xf32>
  }
  %o = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %o, %c[%c0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x?xbf16, box = [64, 64]>
  func.return
}
"""


def test_a_one_program_kernel_is_not_made_persistent() -> None:
    """With no program id there are no tiles to walk: the tuning leaves it on its
    one-program grid, and `persistent` asked for explicitly says why not."""
    kernel = find_kernel(tawa_xdsl.parse(ONE_PROGRAM), "one")
    assert not default_options(kernel).get("persistent")
    tawa_xdsl.apply(tawa_xdsl.parse(ONE_PROGRAM), "tawa-hopper-pipeline")
    with pytest.raises(Exception, match="reads no program id"):
        tawa_xdsl.apply(tawa_xdsl.parse(ONE_PROGRAM), "persistent")


def test_a_kernel_without_a_rule_gets_the_stages_that_fit() -> None:
    """Stream-K's reduce kernel has no tuning rule, but at 128 x 256 tiles the
    default 3 slots of its f32 partial tiles (128 KiB each) overflow shared
    memory: it gets the stages that fit, so the pair lowers at that tile."""
    module = tawa_xdsl.apply(tawa_xdsl.parse(EXAMPLES / "gemm.mlir"), "stream-k")
    reduce = find_kernel(module, "gemm_nt_stream_k_reduce")
    assert default_options(reduce) == {}
    assert default_options(reduce, {"BN": 256}) == {"num_stages": 1}
    tawa_xdsl.apply(module, "tawa-hopper-pipeline{block-n=256}")


def test_a_wide_tile_given_keeps_one_slot_of_the_epilogue_tiles() -> None:
    """block_n=256 given next to a residual as wide as the output and a bias:
    two ring stages and the epilogue's tiles double buffered for the
    persistent walk overflowed shared memory by 64 bytes (found by the sweep
    of issue 16); the epilogue's tiles get one slot, as attention's Q does,
    and the kernel lowers. A 128 x 128 tile has room for two slots and three
    stages."""
    kernel = kernel_of(KERNELS / "gemm_user.mlir", "nn_f16_bias_res")
    options = CompileOptions(block_n=256).resolve(kernel)
    assert options.persistent and options.outer_stages == 1
    assert options.num_stages == 2
    narrow = CompileOptions(block_n=128).resolve(kernel)
    assert narrow.outer_stages == DEFAULTS.outer_stages and narrow.num_stages >= 3
    tawa_xdsl.compiler.lower(kernel.parent_op(), options)


def test_given_stages_keep_one_slot_of_the_epilogue_tiles() -> None:
    """num_stages=6 given to a persistent GEMM with a bias: six slots, the
    staging tile and the bias double buffered overflowed shared memory by 128
    bytes; the bias gets one slot and the kernel lowers. Without stages given
    the tuned five leave room for two."""
    kernel = kernel_of("gemm_epilogue.mlir", "gemm_scale_bias_relu")
    options = CompileOptions(num_stages=6).resolve(kernel)
    assert options.persistent and options.outer_stages == 1
    tawa_xdsl.compiler.lower(kernel.parent_op(), options)
    assert CompileOptions().resolve(kernel).outer_stages == DEFAULTS.outer_stages


@pytest.mark.parametrize(
    ("cut", "name", "given", "stages", "staged"),
    [
        ("stream-k", "gemm_nt_stream_k", {}, 4, False),  # two before
        ("", "gemm_nt", {"tma_store": False}, 4, False),  # three before
        ("", "gemm_nt", {}, 3, True),
        ("split-k{splits=2}", "gemm_nt_split_k", {"block_n": 256}, 2, True),
    ],
)
def test_stages_take_the_room_of_staging_tiles_never_laid_out(
    cut: str, name: str, given: dict, stages: int, staged: bool
) -> None:
    """The tuning reserves shared memory for a staging tile only where the
    lowering stages the store (`kernel_plan.staged_store`): stream-K's f32
    partial tiles (their rows are not proven non-negative) and outputs stored
    from registers (`tma_store=False`) left 128 x 256 tiles two or three
    stages for 128 or 64 KB never laid out (NOTES 3.72); now four. The stores
    that stage keep their counts (split-K's partial tiles stage 128 KB next to
    two). Each lowers as tuned, within a block's shared memory."""
    module = tawa_xdsl.parse(EXAMPLES / "gemm.mlir")
    if cut:
        tawa_xdsl.apply(module, cut)
    for kernel in [k for k in kernels(module) if k.sym_name.data != name]:
        kernel.detach()
        kernel.erase()
    options = CompileOptions(**given).resolve(find_kernel(module, name))
    assert (options.num_stages, options.block_n) == (stages, 256)
    tawa_xdsl.compiler.lower(module, options)
    lowered = find_kernel(module, name)
    tma = any(op.name == "nvgpu_async.tma_store" for op in lowered.walk())
    assert tma is staged
    assert kernel_launch(lowered).smem <= MAX_SMEM_BYTES
