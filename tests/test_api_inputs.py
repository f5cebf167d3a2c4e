"""`parse`, `apply`, `interpret` and `simulate` refuse arguments of the wrong
kind by name (they failed on an attribute of them: `'str' object has no
attribute 'verify'`), and verify a module they are handed with located
diagnostics, not xDSL's dump of the whole module."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.utils.exceptions import DiagnosticException

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.kernel import KernelArgumentError

from .conftest import EXAMPLES, REPO

GEMM = EXAMPLES / "gemm.mlir"


def gemm_arrays() -> list[np.ndarray]:
    return [np.zeros((128, 128), bfloat16) for _ in range(3)]


@pytest.mark.parametrize("run", [tawa_xdsl.interpret, tawa_xdsl.simulate])
@pytest.mark.parametrize("source", [GEMM, str(GEMM), GEMM.read_text()])
def test_executors_take_a_module(run, source) -> None:
    name = run.__name__
    with pytest.raises(
        TypeError, match=rf"{name} takes a module \(tawa_xdsl.parse\(text or Path\)\)"
    ):
        run(source, "gemm_nt", *gemm_arrays())


def test_apply_takes_a_module_and_a_pipeline_text() -> None:
    with pytest.raises(TypeError, match=r"apply takes a module .*, got str"):
        tawa_xdsl.apply(GEMM.read_text(), "aref-partition")
    with pytest.raises(TypeError, match=r"pipeline as text .*, got NoneType"):
        tawa_xdsl.apply(tawa_xdsl.parse(GEMM), None)


def test_parse_takes_text_bytes_or_a_path() -> None:
    assert tawa_xdsl.parse(GEMM.read_bytes()).ops
    # a byte order mark leads no text (Path input had it skipped; str did not)
    assert tawa_xdsl.parse("\ufeff" + GEMM.read_text()).ops
    with pytest.raises(TypeError, match="parse takes MLIR text or a Path, got int"):
        tawa_xdsl.parse(3)
    with pytest.raises(DiagnosticException, match=r"<bytes>:1:1: error: the input"):
        tawa_xdsl.parse(b"\xff")


@pytest.mark.parametrize("run", [tawa_xdsl.interpret, tawa_xdsl.simulate])
def test_a_broken_module_is_reported_at_its_op(run) -> None:
    """A module edited after parsing gets the verifier's located diagnostic."""
    module = tawa_xdsl.parse(GEMM)
    muli = next(o for o in module.walk() if isinstance(o, arith.MuliOp))
    muli.detach()
    block = module.body.block.first_op.body.block
    block.insert_op_before(muli, block.last_op)  # after its uses
    with pytest.raises(DiagnosticException, match=r"gemm.mlir:\d+:\d+: error: "):
        run(module, "gemm_nt", *gemm_arrays())


def test_interpreting_lowered_ir_names_the_simulator() -> None:
    module = tawa_xdsl.apply(tawa_xdsl.parse(GEMM), "aref-partition")
    with pytest.raises(DiagnosticException, match=r"tawa_xdsl\.simulate runs"):
        tawa_xdsl.interpret(module, "gemm_nt", *gemm_arrays())


ROWS = """func.func @k(%x: !tile.desc<?x?xf32, box = [64, 64]>,
    %y: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  OP
  tile.store %r, %y[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
"""


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (
            "%r = math.powf %t, %t : tensor<64x64xf32>",
            r"math.powf has no thread-level form \(PTX has no instruction for it\); "
            "write it with the math ops that do: absf, ",
        ),
        (
            "%e = tensor.empty() : tensor<64x64xf32>\n"
            "  %r = arith.addf %t, %e : tensor<64x64xf32>",
            "tensor.empty is not an op of tile kernels: the interpreter has no "
            "meaning for it",
        ),
    ],
    ids=["math.powf", "tensor.empty"],
)
def test_an_op_no_tile_kernel_has_is_refused_as_such(op, message) -> None:
    """An op of no level (an arith or math op PTX lacks, another dialect's op)
    is refused by the interpreter as the lowering refuses it, or as not a tile
    kernel's op: it was sent to tawa_xdsl.simulate, which has no meaning for
    it either."""
    module = tawa_xdsl.parse(ROWS.replace("OP", op))
    x = np.zeros((64, 64), np.float32)
    with pytest.raises(DiagnosticException, match=rf"<string>:5:3: error: {message}"):
        tawa_xdsl.interpret(module, "k", x, x.copy())


@pytest.mark.parametrize(
    ("run", "level"),
    [
        (tawa_xdsl.interpret, "tile"),
        (tawa_xdsl.simulate, "tile"),
        (tawa_xdsl.simulate, "thread"),
    ],
)
def test_without_a_grid_every_tile_is_computed(run, level) -> None:
    """With no grid given, `interpret` and `simulate` run the grid a compiled
    kernel launches on (read off the stores): they ran one program, leaving
    the other tiles unwritten without a word."""
    module = tawa_xdsl.parse(GEMM)
    if level == "thread":
        module = tawa_xdsl.apply(
            module, "tawa-hopper-pipeline{tuned=false},distribute-fragments"
        )
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 64)).astype(bfloat16)
    b = rng.standard_normal((136, 64)).astype(bfloat16)
    c = np.full((200, 136), np.nan, bfloat16)
    run(module, "gemm_nt", a, b, c)
    expected = a.astype(np.float64) @ b.astype(np.float64).T
    assert np.abs(c.astype(np.float64) - expected).max() < 0.05 * np.abs(expected).max()


def test_without_a_grid_a_kernel_whose_stores_do_not_give_one_is_refused() -> None:
    path = REPO / "tests" / "kernels" / "gemm_outside8.mlir"
    c = np.zeros((200, 136), np.float32)
    a, b = np.zeros((200, 330), bfloat16), np.zeros((136, 330), bfloat16)
    with pytest.raises(
        KernelArgumentError, match=r"@gemm_kpair: cannot tell .*; pass grid=$"
    ):
        tawa_xdsl.interpret(tawa_xdsl.parse(path), "gemm_kpair", a, b, c, 1, 300)
