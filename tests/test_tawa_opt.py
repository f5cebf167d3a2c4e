"""The tawa-opt driver: exit codes (0 ok, 1 a diagnostic, 2 usage, 3 our bug),
internal errors named by pass and op, option errors as written, the pass
listing, timings and dumps on stderr, `-` for stdin. Run in process (fast)."""

from __future__ import annotations

import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

import tawa_xdsl
from tawa_xdsl import registry
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.kernel import kernels
from tawa_xdsl.tawa_opt import InternalError, main

from .conftest import EXAMPLES

GEMM = EXAMPLES / "gemm.mlir"


@dataclass(frozen=True)
class CrashingPass(ModulePass):
    """Fails as a buggy pass does: a KeyError while it works on a kernel."""

    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            raise KeyError(kernel.sym_name.data)


@dataclass(frozen=True)
class ValueErrorPass(ModulePass):
    """A bare ValueError is a bug too, not a message for the user."""

    name = "test-value-error"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise ValueError("unexpected shape")


@dataclass(frozen=True)
class MisorderingPass(ModulePass):
    """Leaves invalid IR: moves the first `arith.muli` to the end of its block,
    after its uses."""

    name = "test-misorder"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        muli = next(o for o in op.walk() if isinstance(o, arith.MuliOp))
        block = muli.parent_block()
        muli.detach()
        block.insert_op_before(muli, block.last_op)


@pytest.fixture
def buggy_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    ours = registry.all_passes
    extra = {
        p.name: (lambda p=p: p) for p in (CrashingPass, ValueErrorPass, MisorderingPass)
    }
    monkeypatch.setattr(registry, "all_passes", lambda: {**ours(), **extra})


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_exit_codes(capsys, buggy_passes, tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text(
        GEMM.read_text().replace("%bk = arith.constant", "%bk = arith.constnt", 1)
    )
    assert run(capsys, str(GEMM))[0] == 0
    assert run(capsys, str(bad))[0] == 1
    assert run(capsys, str(GEMM), "--no-such-flag")[0] == 2
    assert run(capsys, str(GEMM), "-p", "test-crash")[0] == 3


@pytest.mark.parametrize("target", ["x86-asm", "riscv-asm", "arm-asm", "llvm", "mps"])
def test_only_our_targets_are_offered(capsys, target) -> None:
    """xDSL's machine targets print dialects tawa-xdsl never produces; on tile
    IR they crashed (exit 3, 'a bug in tawa-xdsl'): they are not offered."""
    rc, out, err = run(capsys, str(GEMM), "-t", target)
    assert rc == 2 and out == ""
    assert "invalid choice" in err and "(choose from mlir, ptx)" in err


@pytest.mark.parametrize("target", ["", "  "])
def test_an_empty_target_says_so(capsys, target) -> None:
    """`-t ''` was reported as a pass pipeline that failed to parse
    ("Expected pass name here", exit 1): a usage error of -t, which lists the
    targets."""
    rc, out, err = run(capsys, str(GEMM), "-t", target)
    assert rc == 2 and out == ""
    assert "argument -t/--target: the target is empty; the targets are mlir, ptx" in err
    assert "pipeline" not in err


def test_internal_error_names_the_pass_and_the_op(capsys, buggy_passes) -> None:
    rc, out, err = run(capsys, str(GEMM), "-p", "canonicalize,test-crash")
    assert rc == 3 and out == ""
    assert err.startswith(
        f"tawa-opt: {GEMM}:9:1: internal error in test-crash: KeyError: 'gemm_nt'"
    )
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_bare_value_error_is_ours_not_the_users(capsys, buggy_passes) -> None:
    rc, _, err = run(capsys, str(GEMM), "-p", "test-value-error")
    assert rc == 3
    assert "internal error in test-value-error: ValueError: unexpected shape" in err


def test_a_pass_that_leaves_invalid_ir_is_blamed(capsys, buggy_passes) -> None:
    rc, _, err = run(capsys, str(GEMM), "-p", "test-misorder,cse")
    assert rc == 3
    assert "internal error in test-misorder: left invalid IR: " in err
    assert (
        "tile.load: %m0 is used where its definition (at line 19) does not dominate"
        in err
    )


@pytest.mark.parametrize(
    ("passes", "message"),
    [
        (  # the kernel's body split into blocks: it was a ValueError of ours
            "convert-scf-to-cf,aref-partition",
            f"{GEMM}:9:1: error: func.func: aref-partition takes a kernel whose "
            "body is one block of structured control flow (scf.for, scf.while, "
            "scf.if); @gemm_nt's has 4 blocks (cf branches, as convert-scf-to-cf "
            "leaves)",
        ),
        (  # a role's region split into blocks: it was 'a bug in tawa-xdsl'
            "tawa-hopper-pipeline,convert-scf-to-cf",
            f"{GEMM}:9:1: error: nvgpu_async.role_dispatch: convert-scf-to-cf (an "
            "xDSL pass) left IR that does not verify: Region 'producer' at "
            "position 0 expected a single block, but got 7 blocks",
        ),
    ],
)
def test_an_xdsl_pass_that_unstructures_a_kernel_is_a_refusal(
    capsys, passes: str, message: str
) -> None:
    """xDSL's convert-scf-to-cf before our passes, or after them, leaves
    control flow in blocks that our passes and ops do not take: a diagnostic at
    the kernel or the op, naming the pass, not an internal error."""
    rc, out, err = run(capsys, str(GEMM), "-p", passes)
    assert rc == 1 and out == ""
    assert err.splitlines()[0] == f"tawa-opt: {message}"
    assert "internal error" not in err


OFFSET_ROWS = """\
func.func @rows(%x: !tile.desc<?x?xf32, box = [64, 64]>,
    %y: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.addi %pid, %c64 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  tile.store %t, %y[%m0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
"""
"""A kernel whose arith.addi (line 6) adds a program id: no constant."""


def test_an_xdsl_pass_failing_in_its_own_code_is_a_refusal_at_the_op(
    capsys, tmp_path: Path
) -> None:
    """xDSL's test-constant-folding asserts that every arith.addi adds two
    constants: on our kernels it raised an AssertionError, reported as our bug
    ('internal error in test-constant-folding: AssertionError: '). A failure in
    the code of an xDSL pass the user ran is a diagnostic at the op it was on,
    naming the pass, as when such a pass leaves invalid IR."""
    path = tmp_path / "rows.mlir"
    path.write_text(OFFSET_ROWS)
    rc, out, err = run(capsys, str(path), "-p", "test-constant-folding")
    assert (rc, out) == (1, "")
    # (pytest rewrites xDSL's assert: `AssertionError: assert False` here)
    assert re.fullmatch(
        rf"tawa-opt: {path}:6:3: error: arith\.addi: test-constant-folding "
        r"\(an xDSL pass\) failed on this op \(AssertionError.*\): it does not "
        r"take this IR\n",
        err,
    ), err
    with pytest.raises(OpDiagnostic, match=r"test-constant-folding \(an xDSL pass\)"):
        tawa_xdsl.apply(tawa_xdsl.parse(OFFSET_ROWS), "test-constant-folding")


def test_our_code_failing_under_an_xdsl_pass_is_ours(capsys, monkeypatch) -> None:
    """canonicalize applies our ops' patterns: one that crashes is our bug,
    though the pass is xDSL's (here `isinstance(src, None)` in
    TransposeOfTranspose, on gemm.mlir's tile.trans)."""
    from tawa_xdsl.transforms import transposes

    monkeypatch.setattr(transposes, "OpResult", None)
    rc, out, err = run(capsys, str(GEMM), "-p", "canonicalize")
    assert (rc, out) == (3, "")
    assert "internal error in canonicalize: TypeError: isinstance()" in err
    with pytest.raises(InternalError, match="internal error in canonicalize"):
        tawa_xdsl.apply(tawa_xdsl.parse(GEMM), "canonicalize")


def test_a_bug_inside_a_named_pipeline_is_blamed_on_its_pass(
    capsys, monkeypatch
) -> None:
    """tawa-hopper-pipeline runs each kernel through its own passes; a crash or
    invalid IR left by one of them names that pass, not the pipeline."""
    from xdsl.transforms.canonicalize import CanonicalizePass

    from tawa_xdsl.transforms.pipeline import PipelinePass
    from tawa_xdsl.transforms.tile_shape import TileShapePass

    monkeypatch.setattr(PipelinePass, "apply", ValueErrorPass.apply)
    rc, _, err = run(capsys, str(GEMM), "-p", "tawa-hopper-pipeline")
    assert rc == 3
    assert "internal error in pipeline: ValueError: unexpected shape" in err
    monkeypatch.setattr(TileShapePass, "apply", MisorderingPass.apply)
    rc, _, err = run(capsys, str(GEMM), "-p", "tawa-hopper-pipeline")
    assert rc == 3
    assert "internal error in tile-shape: left invalid IR: " in err
    # xDSL's cleanups the pipeline runs are ours too (canonicalize applies our
    # ops' patterns): not a refusal, as the same pass run by the user is
    monkeypatch.undo()
    monkeypatch.setattr(CanonicalizePass, "apply", MisorderingPass.apply)
    rc, _, err = run(capsys, str(GEMM), "-p", "tawa-hopper-pipeline")
    assert rc == 3
    assert "internal error in canonicalize: left invalid IR: " in err


def test_a_bug_inside_the_ptx_target_names_its_stage(
    capsys, monkeypatch, lowered_gemm: Path
) -> None:
    """-t ptx runs distribute-fragments, ptx-allocate ... before printing: a bug
    in one of them is an internal error of that stage, at the op it was on."""
    from tawa_xdsl.lowering.distribute import memory

    def crash(self, op, rewriter) -> None:
        raise KeyError("slot")

    monkeypatch.setattr(memory.SmemStore, "rewrite", crash)
    rc, out, err = run(capsys, str(lowered_gemm), "-t", "ptx")
    assert (rc, out) == (3, "")
    assert re.match(
        rf"tawa-opt: {lowered_gemm}:\d+:\d+: internal error in -t ptx: "
        "distribute-fragments: "
        "KeyError: 'slot'",
        err,
    ), err


@pytest.fixture(scope="module")
def lowered_gemm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """gemm.mlir's first kernel (alone: cheaper) through tawa-hopper-pipeline:
    what -t ptx takes."""
    module = tawa_xdsl.parse(GEMM)
    for kernel in list(kernels(module))[1:]:
        kernel.detach()
    path = tmp_path_factory.mktemp("lowered") / "gemm.mlir"
    path.write_text(str(tawa_xdsl.apply(module, "tawa-hopper-pipeline")))
    return path


def misorder(root: Operation) -> None:
    """Leave `root` invalid: the first op whose result is used in its own
    block moves to the block's end, after that use."""
    for op in root.walk():
        block = op.parent_block()
        used_here = any(
            u.operation.parent_block() is block for r in op.results for u in r.uses
        )
        if used_here and block is not None and block.last_op is not op:
            op.detach()
            block.insert_op_before(op, block.last_op)
            return
    raise AssertionError("nothing to misorder")


def break_stage(monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    """Make the -t ptx stage `stage` (distribute-fragments, a module stage, or
    ptx-allocate, a kernel stage) leave invalid IR (`misorder`)."""
    from tawa_xdsl.lowering import ptx_target
    from tawa_xdsl.lowering.distribute import DistributeFragmentsPass

    if stage == "distribute-fragments":
        distribute = DistributeFragmentsPass.apply

        def broken(self, ctx, op) -> None:
            distribute(self, ctx, op)
            misorder(op)

        monkeypatch.setattr(DistributeFragmentsPass, "apply", broken)
    else:
        allocate = ptx_target.allocate_kernel
        monkeypatch.setattr(
            ptx_target, "allocate_kernel", lambda k: (allocate(k), misorder(k))
        )


@pytest.mark.parametrize("stage", ["distribute-fragments", "ptx-allocate"])
def test_invalid_ir_inside_the_ptx_target_is_blamed_on_its_stage(
    capsys, monkeypatch, lowered_gemm: Path, stage: str
) -> None:
    """-t ptx verifies what its stages leave: a stage that leaves invalid IR is
    an internal error of that stage at the op, not a PTX file printed from it
    (exit 0). A module stage and a kernel stage are each made to break it."""
    break_stage(monkeypatch, stage)
    rc, out, err = run(capsys, str(lowered_gemm), "-t", "ptx")
    assert (rc, out) == (3, "")
    assert re.match(
        rf"tawa-opt: {lowered_gemm}:\d+:\d+: internal error in -t ptx: {stage}: left "
        r"invalid IR: ptx\.\w+: operand #\d+ is used before it is defined",
        err,
    ), err
    assert len(err.strip().splitlines()) == 1


def test_disable_verify_leaves_the_ptx_stages_unverified(
    capsys, monkeypatch, lowered_gemm: Path
) -> None:
    """`--disable-verify` turns the stages' verification off, as it does
    between passes: the IR distribute-fragments broke is printed."""
    break_stage(monkeypatch, "distribute-fragments")
    rc, out, err = run(capsys, str(lowered_gemm), "--disable-verify", "-t", "ptx")
    assert (rc, err) == (0, "")
    assert out.startswith(".version 8.0")


def test_the_traceback_on_request(capsys, buggy_passes, monkeypatch) -> None:
    monkeypatch.setenv("TAWA_TRACEBACK", "1")
    with pytest.raises(InternalError) as raised:
        main([str(GEMM), "-p", "test-crash"])
    assert isinstance(raised.value.__cause__, KeyError)


def test_dash_reads_stdin(capsys, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GEMM.read_bytes())))
    rc, out, _ = run(capsys, "-", "-p", "aref-partition")
    assert rc == 0 and "aref.warp_specialize" in out


def test_list_passes(capsys) -> None:
    rc, out, _ = run(capsys, "--list-passes")
    assert rc == 0
    lines = out.splitlines()
    entry = lines.index(
        "pipeline{num-stages=3 mma-depth=1 two-stage=false outer-stages=2}"
    )
    assert lines[entry + 1].startswith("    Deepen aref rings")
    assert "split-k{splits=required}" in lines  # no default: the user gives it
    assert "aref-partition" in lines and any(
        line.startswith("tawa-hopper-pipeline{") for line in lines
    )


def test_timings_and_dumps_go_to_stderr(capsys) -> None:
    rc, out, err = run(
        capsys,
        str(GEMM),
        "-p",
        "aref-partition,pipeline",
        "--time-passes",
        "--print-between-passes",
    )
    assert rc == 0
    tawa_xdsl.parse(out)  # stdout is the IR alone
    assert "tawa-opt: aref-partition took" in err and "tawa-opt: pipeline took" in err
    assert "// -----// IR after aref-partition //----- //" in err


def test_named_pipelines_run_pass_by_pass(capsys) -> None:
    rc, _, err = run(capsys, str(GEMM), "-p", "tawa-hopper-pipeline", "--time-passes")
    assert rc == 0
    for name in ("aref-partition", "pipeline", "convert-aref-to-nvgpu-async", "dce"):
        assert f"tawa-opt: {name} took" in err
    assert "ms on @gemm_nt\n" in err  # each kernel has its own options
    assert "tawa-hopper-pipeline took" not in err


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        (
            "pipeline{num-stages=x}",
            "pipeline{num-stages=x}: num-stages takes an integer, got x",
        ),
        (
            "tawa-hopper-pipeline{two-stage=3}",
            "tawa-hopper-pipeline{two-stage=3}: two-stage takes true or false, got 3",
        ),
        (
            "pipeline{stages=3}",
            "pipeline{stages=3}: pipeline has no option 'stages' (it takes num-stages, mma-depth, two-stage, outer-stages)",
        ),
        ("pipelin", "unknown pass 'pipelin' (did you mean 'pipeline'?)"),
        ("split-k", "split-k needs option splits, an integer: split-k{splits=...}"),
        ("cluster{size=0}", "cluster{size=0}: size must be a power of two from 1 to 8"),
        (
            "tawa-hopper-pipeline{cluster=0}",
            "tawa-hopper-pipeline{cluster=0}: cluster must be a power of two from 1 to 8",
        ),
        (  # an integer, refused for its value (it said 'takes an integer, got -1')
            "tawa-hopper-pipeline{split-k=-1}",
            "tawa-hopper-pipeline{split-k=-1}: option split_k must be 0 or more, got -1",
        ),
        # `true` is no integer (Python's bool is an int: xDSL took it as 1)
        (
            "split-k{splits=true}",
            "split-k{splits=true}: splits takes an integer, got true",
        ),
        (
            "tawa-hopper-pipeline{num-stages=true}",
            "tawa-hopper-pipeline{num-stages=true}: num-stages takes an integer, got true",
        ),
        # an optional option without a value was taken as not given
        (
            "tawa-hopper-pipeline{persistent}",
            "tawa-hopper-pipeline{persistent}: persistent takes true or false, got nothing",
        ),
        # an option given twice: xDSL kept the last value
        (
            "pipeline{num-stages=2 mma-depth=1 num_stages=4}",
            "pipeline: option num-stages is given twice",
        ),
        # values refused together keep the reason
        (
            "tawa-hopper-pipeline{split-k=2 stream-k=true}",
            "tawa-hopper-pipeline{split-k=2 stream-k=true}: options split_k and "
            "stream_k=True both choose how K is cut: give one of them",
        ),
    ],
)
def test_option_errors_name_the_option_as_written(capsys, pipeline, message) -> None:
    rc, out, err = run(capsys, str(GEMM), "-p", pipeline)
    assert (rc, out, err) == (1, "", f"tawa-opt: {message}\n")


def test_cluster_0_is_refused_by_the_api_too() -> None:
    module = tawa_xdsl.parse(GEMM)
    with pytest.raises(DiagnosticException, match=r"cluster=0\}: cluster must be"):
        tawa_xdsl.apply(module, "tawa-hopper-pipeline{cluster=0}")


def test_input_file_errors_are_diagnostics(capsys, tmp_path: Path) -> None:
    text = tmp_path / "kernel.txt"
    text.write_text(GEMM.read_text())
    assert run(capsys, str(text)) == (
        1,
        "",
        f"tawa-opt: {text}: error: unknown file extension '.txt'; `-f mlir` reads "
        "it as MLIR\n",
    )
    assert run(capsys, str(text), "-f", "mlir")[0] == 0
    rc, _, err = run(capsys, str(tmp_path / "missing.mlir"))
    assert (rc, err) == (
        1,
        f"tawa-opt: {tmp_path}/missing.mlir: error: No such file or directory\n",
    )


def test_binary_input_is_located(capsys, tmp_path: Path) -> None:
    binary = tmp_path / "binary.mlir"
    binary.write_bytes(b"func.func @k() {\n  \xff\xfe\n}\n")
    rc, _, err = run(capsys, str(binary))
    assert rc == 1
    assert err == (
        f"tawa-opt: {binary}:2:3: error: the input is not UTF-8 text (byte 0xff); "
        "tawa-opt reads MLIR source\n"
    )
    with pytest.raises(DiagnosticException, match=r"binary.mlir:2:3: error"):
        tawa_xdsl.parse(binary)


@pytest.mark.parametrize("text", ["", "\n\n", "// only a comment\n"])
def test_an_empty_input_says_so(capsys, tmp_path: Path, text: str) -> None:
    """xDSL said "Could not parse entire input!" about a file with nothing in it."""
    empty = tmp_path / "empty.mlir"
    empty.write_text(text)
    rc, out, err = run(capsys, str(empty))
    assert (rc, out) == (1, "")
    assert err.startswith(f"tawa-opt: {empty}:")
    assert "error: the input is empty: there is no op to read\n" in err
    assert len(err.splitlines()) <= 3  # the message and an empty source line


def test_a_byte_order_mark_is_no_character(capsys, tmp_path: Path) -> None:
    """A UTF-8 byte order mark before the text was refused as an invisible
    "Unexpected character"."""
    marked = tmp_path / "marked.mlir"
    marked.write_bytes(b"\xef\xbb\xbf" + GEMM.read_bytes())
    assert run(capsys, str(marked))[0] == 0
    assert tawa_xdsl.parse(marked).ops


def test_an_invisible_character_is_escaped(capsys, tmp_path: Path) -> None:
    nul = tmp_path / "nul.mlir"
    nul.write_bytes(b"func.func @k() {\n \x00 }\n")
    rc, _, err = run(capsys, str(nul))
    assert rc == 1
    assert err.startswith(f"tawa-opt: {nul}:2:2: error: Unexpected character: \\x00\n")


SPLIT = """func.func @first() {
  func.return
}
// -----
func.func @broken( {
}
// -----
func.func @returns() {
  %x = arith.constant 1 : i32
  func.return %x : i32
}
// -----
func.func @last() {
  func.return
}
"""


def test_split_input_file_runs_every_chunk(capsys, tmp_path: Path) -> None:
    """Each chunk is processed and each bad one reported, as mlir-opt does: the
    first error ended the run, so the later chunks' errors and output were lost."""
    split = tmp_path / "split.mlir"
    split.write_text(SPLIT)
    rc, out, err = run(capsys, str(split), "--split-input-file")
    assert rc == 1
    assert "@first" in out and "@last" in out and out.count("// -----") == 3
    errors = [line for line in err.splitlines() if line.startswith("tawa-opt:")]
    assert errors == [
        f"tawa-opt: {split}:5:20: error: Expected argument or type",
        f"tawa-opt: {split}:10:3: error: func.return: Expected arguments to have "
        "the same types as the function output types: expected [], got [i32]",
    ]


def nested_loops(depth: int) -> str:
    lines = ["func.func @deep(%n: index) {", "  %c0 = arith.constant 0 : index"]
    lines.append("  %c1 = arith.constant 1 : index")
    lines += [f"scf.for %i{d} = %c0 to %n step %c1 {{" for d in range(depth)]
    lines += ["}"] * depth + ["  func.return", "}"]
    return "\n".join(lines) + "\n"


def test_deep_nesting_gets_a_located_diagnostic(capsys, tmp_path: Path) -> None:
    deep = tmp_path / "deep.mlir"
    deep.write_text(nested_loops(150))
    rc, _, err = run(capsys, str(deep))
    assert rc == 1
    # the func is one level, so the 64th loop is the first too deep
    assert err.startswith(
        f"tawa-opt: {deep}:67:1: error: ops nested more than 64 regions deep"
    )
    deep.write_text(nested_loops(63))
    rc, out, _ = run(capsys, str(deep), "-p", "canonicalize,cse")
    assert rc == 0
    deep.write_text(out)  # the printed module is explicit: the same depth
    rc, generic, _ = run(capsys, str(deep), "--print-op-generic")
    deep.write_text(generic)
    assert rc == 0 and run(capsys, str(deep))[0] == 0


NO_LOADS = Path(__file__).parent / "filecheck" / "tawa-opt" / "no-loads.mlir"


@pytest.mark.parametrize("tma_store", ["true", "false"])
@pytest.mark.parametrize(
    "kernel, args, grid",
    [("fill", [(256, 256), 2.5], (2, 1, 1)), ("ones", [(128, 128)], (1, 1, 1))],
)
def test_kernels_without_loads_store_uniform_tiles(kernel, args, grid, tma_store):
    """A kernel that loads nothing stores a uniform tile (a splat truncated to bf16,
    a bf16 splat constant): -t ptx lowers it rather than refusing it, and at the
    thread level it writes what the interpreter writes, through both store paths."""
    import numpy as np

    from tawa_xdsl.dtypes import bfloat16

    from .thread_level import simulate_output, to_thread_level

    text = NO_LOADS.read_text()
    args = [np.zeros(a, bfloat16) if isinstance(a, tuple) else a for a in args]
    expected = [
        np.full_like(a, np.nan) if isinstance(a, np.ndarray) else a for a in args
    ]
    tawa_xdsl.interpret(tawa_xdsl.parse(text), kernel, *expected, grid=grid)
    module = to_thread_level(
        tawa_xdsl.parse(text), f"tawa-hopper-pipeline{{tma-store={tma_store}}}"
    )
    got = simulate_output(module, kernel, args, 0, grid)
    np.testing.assert_array_equal(
        got.astype(np.float32), expected[0].astype(np.float32)
    )


def test_every_pass_states_the_level_it_takes() -> None:
    """The drivers check a pass's input level (`analysis.levels`): a pass of
    ours missing from the table would take any IR unchecked."""
    from tawa_xdsl.analysis.levels import PASS_LEVELS
    from tawa_xdsl.registry import all_passes

    assert set(all_passes()) == set(PASS_LEVELS)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_failed_write_is_a_diagnostic(capsys) -> None:
    """A full disk was an internal error; the device is not removed."""
    rc, _, err = run(capsys, str(GEMM), "-o", "/dev/full")
    assert (rc, err) == (1, "tawa-opt: /dev/full: error: No space left on device\n")
    assert Path("/dev/full").exists()


def test_the_output_of_a_failed_run_is_removed(capsys, tmp_path: Path) -> None:
    """As mlir-opt keeps its output only on success: a failed run left an empty
    (or, with --split-input-file, partial) file that looked like a result."""
    out = tmp_path / "out.mlir"
    assert run(capsys, str(GEMM), "-o", str(out), "-p", "pipeline")[0] == 1
    assert not out.exists()
    assert run(capsys, str(GEMM), "-o", str(out), "-p", "aref-partition")[0] == 0
    assert "aref.warp_specialize" in out.read_text()


def test_the_output_may_be_the_input(capsys, tmp_path: Path) -> None:
    """`-o` naming the input: the file was opened (emptied) before the input
    was read, so the run read nothing, failed ("the input is empty") and
    removed the file: the user's source was lost. Now a run that succeeds
    rewrites it in place, and one that fails leaves it as it was."""
    source = tmp_path / "k.mlir"
    source.write_text(GEMM.read_text())
    assert run(capsys, str(source), "-o", str(source), "-p", "pipeline")[0] == 1
    assert source.read_text() == GEMM.read_text()
    assert run(capsys, str(source), "-o", str(source), "-p", "aref-partition")[0] == 0
    assert "aref.warp_specialize" in source.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["k.mlir"]  # no temporary left


def test_dash_as_the_output_is_stdout(capsys, tmp_path, monkeypatch) -> None:
    """As `-` is stdin: `-o -` wrote a file named `-`."""
    monkeypatch.chdir(tmp_path)
    rc, out, _ = run(capsys, str(GEMM), "-o", "-")
    assert rc == 0 and "@gemm_nt" in out
    assert list(tmp_path.iterdir()) == []


def test_the_output_is_written_through_a_link(capsys, tmp_path: Path) -> None:
    """The output replaces the file a link names, not the link."""
    (tmp_path / "out.mlir").write_text("")
    link = tmp_path / "link.mlir"
    link.symlink_to("out.mlir")
    assert run(capsys, str(GEMM), "-o", str(link))[0] == 0
    assert link.is_symlink()
    assert "@gemm_nt" in (tmp_path / "out.mlir").read_text()


def test_a_malformed_target_is_a_diagnostic(capsys) -> None:
    rc, out, err = run(capsys, str(GEMM), "-t", "ptx{")
    assert (rc, out) == (1, "")
    assert err.startswith("tawa-opt: Error parsing pass pipeline specification:")
    assert "Traceback" not in err


def test_a_diagnostic_at_an_op_a_pass_made_points_at_the_op_around_it() -> None:
    """An op a pass builds has no source location; a diagnostic about it is
    located at the nearest op around it that has one (here its kernel), never
    a bare `error:`."""
    module = tawa_xdsl.parse(GEMM)
    kernel = next(kernels(module))
    made = arith.ConstantOp(IntegerAttr(0, IndexType()))
    kernel.body.block.insert_op_before(made, kernel.body.block.first_op)
    lines = GEMM.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "@gemm_nt(" in text)
    assert str(OpDiagnostic(made, "why")) == (
        f"{GEMM}:{line}:1: error: arith.constant: why"
    )


def test_the_api_reports_our_bugs_as_internal_errors(buggy_passes) -> None:
    """`tawa_xdsl.apply` blames a pass that crashed or left invalid IR as the
    driver does, with an `InternalError`: it raised the verifier's diagnostic,
    which a script (scripts/pass_order.py) took for a refusal of its order."""
    with pytest.raises(InternalError, match="internal error in test-misorder: left"):
        tawa_xdsl.apply(tawa_xdsl.parse(GEMM), "cse,test-misorder")
    with pytest.raises(InternalError, match="internal error in test-crash: KeyError"):
        tawa_xdsl.apply(tawa_xdsl.parse(GEMM), "aref-partition,test-crash")
    with pytest.raises(DiagnosticException, match="run aref-partition first") as e:
        tawa_xdsl.apply(tawa_xdsl.parse(GEMM), "cse,pipeline")
    assert not isinstance(e.value, InternalError)
