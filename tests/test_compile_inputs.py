"""`tawa_xdsl.compile` refuses a bad source, options or flags at once, by name,
before any lowering (which waits for the first call): no attribute error of
ours, no option found out of range only when the kernel is first run or
described by `explain()` as if it could run. No GPU needed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.utils.exceptions import DiagnosticException

import tawa_xdsl
from tawa_xdsl.compiler import CompileOptions

from .conftest import EXAMPLES

GEMM = EXAMPLES / "gemm.mlir"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"num_stages": 0}, "pipeline: num-stages must be at least 1, got 0"),
        ({"num_stages": -1}, "pipeline: num-stages must be at least 1, got -1"),
        ({"num_stages": 2, "mma_depth": 3}, "mma-depth must be between 1 and"),
        (  # at the kernel, saying which values were chosen for it
            {"mma_depth": 7},
            r"gemm.mlir:\d+:1: error: .* got 7: each MMA in flight holds a slot "
            r"\(options for @gemm_nt: num-stages=\d+ tuned, mma-depth=7 given",
        ),
        ({"cluster": 3}, "size must be a power of two from 1 to 8"),
        ({"num_consumers": 4}, "num-consumers must be 1, 2 or 3, got 4"),
        ({"persistent": True, "group_m": 0}, "group-m must be at least 1, got 0"),
        ({"block_m": 1}, "tile-shape: BM must be at least 2, got 1"),
        (  # no TMA box is wider: found only when a call lowered it
            {"block_k": 512},
            r"tile-shape: BK must be at most 256 \(a TMA box dimension\), got 512",
        ),
        (  # what setmaxnreg takes, whatever the consumer count
            {"producer_registers": 7},
            r"producer register budget 7 must be a multiple of 8 in \[24, 256\] "
            r"\(options for @gemm_nt: producer-registers=7 given\)",
        ),
        (
            {"consumer_registers": -8},
            r"consumer register budget -8 must be a multiple of 8 in \[24, 256\]",
        ),
        ({"dynamic_tiles": True, "persistent": False}, "give persistent=True too"),
    ],
)
def test_out_of_range_options_are_refused_at_compile(options, message) -> None:
    with pytest.raises(DiagnosticException, match=message):
        tawa_xdsl.compile(GEMM, "gemm_nt", **options)


BUDGET = r"error: func\.func: register-budget: budgets .* registers per thread need"


@pytest.mark.parametrize(
    ("options", "sources"),
    [
        (
            {"num_consumers": 2, "consumer_registers": 248},
            "num-consumers=2 given, producer-registers=24 structure, "
            "consumer-registers=248 given",
        ),
        (
            {"producer_registers": 256, "consumer_registers": 256},
            "num-consumers=2 structure, producer-registers=256 given, "
            "consumer-registers=256 given",
        ),
    ],
)
def test_register_budgets_no_call_can_run_are_refused_at_compile(
    options, sources
) -> None:
    """The budgets are checked against the register file at compile(), each
    value with its source (the one not given was the pass's default, which
    the refusal presented as chosen)."""
    with pytest.raises(
        DiagnosticException, match=rf"{BUDGET}.*\(options for @gemm_nt: {sources}\)"
    ):
        tawa_xdsl.compile(GEMM, "gemm_nt", **options)


def test_register_budgets_some_calls_run_are_refused_at_those_that_cannot() -> None:
    """producer_registers=200 fits one consumer warpgroup (64-row tiles, M =
    64) but not two: the calls that would use two are refused, saying the
    consumers and the consumer budget were the structure's, not given (the
    pipeline sees every resolved value as given)."""
    kernel = tawa_xdsl.compile(GEMM, "gemm_nt", producer_registers=200)
    assert kernel.for_shape(M=64, N=512, K=512).options["num_consumers"] == 1
    with pytest.raises(
        DiagnosticException,
        match=rf"{BUDGET}.*\(options for @gemm_nt: num-consumers=2 structure, "
        r"producer-registers=200 given, consumer-registers=240 structure\)",
    ):
        kernel.for_shape(M=4096, N=4096, K=4096)


@pytest.mark.parametrize(
    ("source", "options", "message"),
    [
        (3, {}, "source must be a module, MLIR text or a path, got int"),
        (None, {}, "source must be a module, MLIR text or a path, got NoneType"),
        (GEMM, {"options": {"num_stages": 2}}, "options must be a CompileOptions"),
        (GEMM, {"allow_spills": "no"}, "allow_spills must be a bool, got 'no'"),
        (GEMM, {"autotune": 1}, "autotune must be a bool, got 1"),
        (GEMM, {"tuned": None}, "option tuned must be bool, got None"),
    ],
)
def test_ill_typed_arguments_are_named(source, options, message) -> None:
    with pytest.raises(TypeError, match=message):
        tawa_xdsl.compile(source, "gemm_nt", **options)


def test_a_source_file_that_is_not_utf8_is_located(tmp_path: Path) -> None:
    source = tmp_path / "k.mlir"
    source.write_bytes(b"// kernels\n  \xff\n")
    for given in (source, str(source)):
        with pytest.raises(
            DiagnosticException, match=rf"{source}:2:3: error: the input is not UTF-8"
        ):
            tawa_xdsl.compile(given, "k")


def test_valid_options_still_compile_lazily() -> None:
    kernel = tawa_xdsl.compile(GEMM, "gemm_nt", num_stages=4, options=CompileOptions())
    assert "options D4-" in kernel.explain(M=256, N=256, K=256)


def test_a_kernel_that_writes_no_output_is_refused_at_compile(tmp_path: Path) -> None:
    source = tmp_path / "k.mlir"
    source.write_text(
        "func.func @k(%a: !tile.desc<?x?xbf16, box = [128, 64]>) "
        "attributes {tile.kernel} {\n"
        "  %c0 = arith.constant 0 : index\n"
        "  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [128, 64]> "
        "-> tensor<128x64xbf16>\n"
        "  func.return\n}\n"
    )
    with pytest.raises(
        DiagnosticException,
        match=rf"{source}:1:1: error: func.func: @k writes no output",
    ):
        tawa_xdsl.compile(source, "k")


def test_a_box_name_compile_cannot_read_is_refused_without_a_pass_name(
    tmp_path: Path,
) -> None:
    """compile()'s rules read the box names before any pass runs: the refusal
    names the parameter, not `tile-shape` (which the caller never ran)."""
    source = tmp_path / "k.mlir"
    source.write_text(
        GEMM.read_text().replace('{tile.box = ["BM", "BK"]', '{tile.box = ["BQ", "BK"]')
    )
    with pytest.raises(DiagnosticException) as refused:
        tawa_xdsl.compile(source, "gemm_nt")
    message = str(refused.value)
    assert "tile.box of %a names an unknown tile dimension 'BQ'" in message
    assert "tile-shape" not in message


def test_a_kernel_without_its_marker_is_named_at_its_function(tmp_path: Path) -> None:
    """A func.func the caller names but did not mark `tile.kernel` (the marker
    forgotten) is refused at it, saying how to mark it, where the error was
    that no kernel of that name exists."""
    source = tmp_path / "k.mlir"
    source.write_text(
        GEMM.read_text().replace(") attributes {tile.kernel} {", ") {", 1)
    )
    with pytest.raises(
        DiagnosticException,
        match=rf"{source}:9:1: error: func.func: @gemm_nt is not marked as a tile "
        r"kernel: write `attributes \{tile.kernel\}` after its parameters$",
    ):
        tawa_xdsl.compile(source, "gemm_nt")


def test_a_tuned_tile_size_is_refused_at_an_untagged_tile_offset(
    tmp_path: Path,
) -> None:
    """gemm_nt with its BM offset constant untagged: the tuning picks 64-row
    tiles for M = 200, and tile-shape refuses the constant that would keep
    striding the programs by 128 (the call ran, leaving rows 64..127 of each
    block unwritten)."""
    source = tmp_path / "k.mlir"
    source.write_text(GEMM.read_text().replace('{tile.size = "BM"} 128', "128", 1))
    kernel = tawa_xdsl.compile(source, "gemm_nt")
    with pytest.raises(
        DiagnosticException,
        match=rf"{source}:17:3: error: arith.constant: tile-shape: this 128 is in "
        r"the coordinate of tile.load \(line 23\) along its BM axis, which becomes 64",
    ):
        kernel.for_shape(M=200, N=136, K=200)


@pytest.mark.parametrize(
    ("options", "taken"),
    [
        ({"cluster": 3}, "cluster=3 given"),
        (
            {"persistent": True, "dynamic_tiles": True, "group_m": 0},
            "group-m=0 given, longest-first=false default, dynamic-tiles=true given",
        ),
    ],
)
def test_a_refusal_names_the_options_as_given(options, taken) -> None:
    """A pass field holding a compile option of another name (cluster's
    `size`, persistent's `dynamic`) is listed under the option's name: the
    list was empty for `cluster=3` and left dynamic_tiles out."""
    with pytest.raises(
        DiagnosticException, match=rf"\(options for @gemm_nt: {taken}\)"
    ):
        tawa_xdsl.compile(GEMM, "gemm_nt", **options)


def test_every_option_a_pass_checks_is_a_compile_option() -> None:
    """Each field of a pass `check_options` refuses maps to a `CompileOptions`
    field, so a refusal can say where its value came from."""
    from dataclasses import fields

    from tawa_xdsl.pass_pipeline import ChecksOptions
    from tawa_xdsl.pipelines import hopper_passes, option_of_field

    every = CompileOptions(
        **{"persistent": True, "cluster": 2, "ping_pong": True}
    ).resolve(tawa_xdsl.parse(GEMM).body.block.first_op)
    known = {f.name for f in fields(CompileOptions)}
    checked = [p for p in hopper_passes(every) if isinstance(p, ChecksOptions)]
    assert {p.name for p in checked} >= {"cluster", "persistent", "pipeline"}
    for p in checked:
        for f in fields(p):
            assert option_of_field(p, f.name) in known, (p.name, f.name)


@pytest.mark.parametrize("name", [None, 3, b"gemm_nt"])
def test_a_kernel_name_that_is_no_str_is_a_type_error(name) -> None:
    with pytest.raises(TypeError, match="the kernel name must be a str"):
        tawa_xdsl.compile(GEMM, name)
    with pytest.raises(TypeError, match="the kernel name must be a str"):
        tawa_xdsl.interpret(tawa_xdsl.parse(GEMM), name)


def test_a_kernel_name_written_with_its_at_sign_says_to_drop_it() -> None:
    with pytest.raises(KeyError, match=r"name it without the @ \('gemm_nt'\)"):
        tawa_xdsl.compile(GEMM, "@gemm_nt")


def test_numpy_integers_and_bools_are_options() -> None:
    """A sweep over `np.arange` passes NumPy scalars: taken as the Python
    values they stand for (refused before: "must be int, got np.int64(4)"),
    which the cache's JSON keys hold; a NumPy bool is still no int."""
    np = pytest.importorskip("numpy")
    options = CompileOptions(num_stages=np.int64(4), persistent=np.bool_(False))
    assert options.num_stages == 4 and type(options.num_stages) is int
    assert options.persistent is False
    with pytest.raises(TypeError, match="option num_stages must be int"):
        CompileOptions(num_stages=np.bool_(True))
    with pytest.raises(TypeError, match="option persistent must be bool"):
        CompileOptions(persistent=np.int64(1))
    kernel = tawa_xdsl.compile(GEMM, "gemm_nt", num_stages=np.int32(4))
    assert "num_stages = 4 (given)" in kernel.explain(M=256, N=256, K=256)


def test_a_path_given_as_text_is_read_whatever_its_suffix(tmp_path: Path) -> None:
    """A `str` naming a file not ending in `.mlir` was parsed as MLIR text
    ("<string>:1:1: Could not parse entire input!" at the path); a one-line
    kernel too long for a file name is still MLIR."""
    source = tmp_path / "kernel.tile"
    source.write_text(GEMM.read_text())
    assert "options" in tawa_xdsl.compile(str(source), "gemm_nt").explain()
    one_line = " ".join(
        line
        for line in GEMM.read_text().splitlines()
        if not line.lstrip().startswith("//")
    )
    assert "options" in tawa_xdsl.compile(one_line, "gemm_nt").explain()


@pytest.mark.parametrize("name", ["gemm.v2", '"gemm-v2"', "_", "WARP_SZ", '"%tid"'])
def test_a_kernel_name_ptx_cannot_name_is_refused_at_it(
    name: str, tmp_path: Path
) -> None:
    """MLIR's symbol names take more than PTX's identifiers: the PTX of
    `@gemm.v2` read `.entry gemm.v2(`, which ptxas rejects (a syntax error
    on the GPU). compile() refuses it at once, at the kernel; the PTX printer
    too (`tawa-opt -t ptx`). `$` is PTX's: `@gemm$v2` compiles."""
    source = tmp_path / "k.mlir"
    source.write_text(GEMM.read_text().replace("@gemm_nt(", f"@{name}(", 1))
    bare = name.strip('"')
    message = rf"k.mlir:\d+:1: error: func.func: @{re.escape(bare)} cannot be a PTX"
    with pytest.raises(DiagnosticException, match=message):
        tawa_xdsl.compile(source, bare)
    source.write_text(GEMM.read_text().replace("@gemm_nt(", "@gemm$v2(", 1))
    assert tawa_xdsl.compile(source, "gemm$v2")


def test_the_ptx_printer_refuses_a_name_ptx_cannot_name() -> None:
    from tawa_xdsl.api import parse_kernel
    from tawa_xdsl.lowering.ptx_target import to_ptx

    text = GEMM.read_text().replace("@gemm_nt(", "@gemm.v2(", 1)
    module = parse_kernel(text, "gemm.v2", str(GEMM))
    tawa_xdsl.apply(module, "tawa-hopper-pipeline{tuned=false num-consumers=1}")
    with pytest.raises(DiagnosticException, match=r"@gemm\.v2 cannot be a PTX entry"):
        to_ptx(module)


SWEEP = Path(__file__).parent / "kernels"


@pytest.mark.parametrize(
    ("source", "kernel", "options", "message"),
    [
        (  # no tile.box / tile.size tags at all
            SWEEP / "attention_outside4.mlir",
            "attention_lse",
            {"block_m": 128},
            r"attention_outside4.mlir:\d+:1: error: func.func: tile-shape: "
            r"@attention_lse does not name BM; .* \(options for @attention_lse: "
            r"block-m=128 given\)",
        ),
        (  # BM and BN named, BK not
            EXAMPLES / "attention.mlir",
            "attention_d64",
            {"block_k": 32},
            r"@attention_d64 does not name BK; .* \(options for @attention_d64: "
            r"block-k=32 given\)",
        ),
        (  # every load follows program_id(x): nothing to multicast
            SWEEP / "attention_outside7.mlir",
            "attention_softcap_window",
            {"cluster": 2},
            r"error: tile.load: cluster: no tile.load of @attention_softcap_window "
            r"is the same in every block .* \(options for @attention_softcap_window: "
            r"cluster=2 given\)",
        ),
        (  # its own grid-stride loop: the stores give no tile count
            SWEEP / "gemm_outside4.mlir",
            "gemm_grid_stride",
            {"persistent": True},
            r"error: tile.store: persistent: kernel @gemm_grid_stride: cannot tell "
            r"how many programs .* \(options for @gemm_grid_stride: persistent=true "
            r"given\)",
        ),
        (  # 96 rows: neither whole 64-row wgmma blocks nor one 64-row warpgroup
            GEMM,
            "gemm_nt",
            {"block_m": 96},
            r"gemm.mlir:\d+:\d+: error: tile.dot: cooperative: M = 96 rows cannot be "
            r"split into 64-row wgmma blocks over 1 warpgroup \(options for "
            r"@gemm_nt: block-m=96 given\)",
        ),
        (  # 64 rows are one block: two warpgroups cannot share it
            GEMM,
            "gemm_nt",
            {"block_m": 64, "num_consumers": 2},
            r"M = 64 rows cannot be split into 64-row wgmma blocks over 2 "
            r"warpgroups \(options for @gemm_nt: block-m=64 given, "
            r"num-consumers=2 given\)",
        ),
    ],
)
def test_an_option_the_kernel_cannot_take_is_refused_at_compile(
    source, kernel, options, message
) -> None:
    """A tile size given for a dimension the kernel does not name, a cluster
    for a kernel whose blocks share no load, persistent for one whose stores
    give no tile count: accepted and shown by explain() as a plan, refused
    only by the first call's lowering."""
    with pytest.raises(DiagnosticException, match=message):
        tawa_xdsl.compile(source, kernel, **options)


def test_a_parsed_module_keeps_its_locations() -> None:
    """compile() of a module parsed from a file: its refusals point into the
    file (the module was printed without its locations and parsed again, so
    they pointed at "<string>:2:3" of text the caller never saw)."""
    source = SWEEP / "attention_outside4.mlir"
    module = tawa_xdsl.parse(source)
    line = 1 + next(
        i
        for i, text in enumerate(source.read_text().splitlines())
        if text.startswith("func.func @attention_lse(")
    )
    with pytest.raises(DiagnosticException, match=rf"^{source}:{line}:1: error: "):
        tawa_xdsl.compile(module, "attention_lse", block_m=128)


ROW_KERNEL = """\
func.func @double(%x: !tile.desc<?x?xf32, box = [128, 64]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [128, 64]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 64 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [128, 64]> -> tensor<128x64xf32>
  %two = arith.constant dense<2.000000e+00> : tensor<128x64xf32>
  %r = arith.mulf %t, %two : tensor<128x64xf32>
  tile.store %r, %y[%m0, %n0] : tensor<128x64xf32> -> !tile.desc<?x?xf32, box = [128, 64]>
  func.return
}
"""
"""A kernel with no `tile.dot` whose tiles are named: `y = 2 x` by row tiles."""


@pytest.mark.parametrize(
    ("block_m", "why"),
    [
        (96, "96 rows: the accumulator layout holds whole 64-row blocks"),
        (12, "12 rows: a tile under 64 rows is held in whole 8-row halves"),
    ],
)
def test_rows_no_register_layout_holds_are_refused_at_compile(
    tmp_path: Path, block_m: int, why: str
) -> None:
    """A given block_m whose register tiles of a kernel with no `tile.dot` no
    layout holds is refused at once at the tile (its resized constant keeps
    its line), naming the option: it was accepted, described by explain(),
    and refused only by the first call's lowering."""
    source = tmp_path / "rows.mlir"
    source.write_text(ROW_KERNEL)
    with pytest.raises(DiagnosticException) as refused:
        tawa_xdsl.compile(source, "double", block_m=block_m)
    assert re.search(
        rf"rows.mlir:10:3: error: arith.constant: cannot hold the "
        rf"tensor<{block_m}x64xf32> value %two in registers: {why}.* \(options for "
        r"@double: block-m=\d+ given\)",
        str(refused.value),
    ), str(refused.value)


def test_short_rows_a_register_layout_holds_are_compiled(tmp_path: Path) -> None:
    """32 rows are held padded to one 64-row block: block_m=32 of the same
    kernel lowers (the check refuses only what the lowering refuses)."""
    source = tmp_path / "rows.mlir"
    source.write_text(ROW_KERNEL)
    spec = tawa_xdsl.compile(source, "double", block_m=32).for_shape(M=256, N=128)
    assert ".entry double(" in spec.ptx
