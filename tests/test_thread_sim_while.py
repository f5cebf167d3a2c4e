"""gemm_while at the thread level: its `scf.while` loops (the K bound, a trip
count read from K, in both roles; the epilogue halving the accumulator a
run-time number of times) become `ptx.while` and run in the thread simulator,
before and after `ptx-allocate`, computing what the reference interpreter
computes on the tile kernel. A wrong lowering must not pass: the epilogue's
loop taken where it should be left (the branch on `p` for `!p`), or the
accumulator entering the loop without its copy into the loop's registers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import InsertPoint, Rewriter

import tawa_xdsl
from tawa_xdsl.dialects import ptx
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.interp.barrier_sim import Hazard

from .thread_level import assert_close, simulate_output, to_thread_level

KERNEL = Path(__file__).parent / "kernels" / "gemm_while.mlir"
GRID = (2, 2)


def arguments(halvings: int, negate: int) -> list:
    """Inputs whose K (136) is not a multiple of the 64-wide slabs, so the K
    bound's loop runs three trips; rows padded to 16 bytes."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((200, 136)).astype(bfloat16)
    b = rng.standard_normal((152, 136)).astype(bfloat16)
    return [a, b, np.full((200, 152), np.nan, bfloat16), halvings, negate]


def reference(args: list) -> np.ndarray:
    args = list(args)
    args[2] = args[2].copy()
    tawa_xdsl.interpret(tawa_xdsl.parse(KERNEL), "gemm_while", *args, grid=GRID)
    return args[2]


def simulated(module: ModuleOp, args: list) -> np.ndarray:
    return simulate_output(module, "gemm_while", args, 2, GRID)


@pytest.fixture(scope="module")
def distributed() -> ModuleOp:
    return to_thread_level(tawa_xdsl.parse(KERNEL), "tawa-hopper-pipeline")


def allocated(module: ModuleOp) -> ModuleOp:
    clone = module.clone()
    tawa_xdsl.apply(clone, "ptx-skip-unit-scale,ptx-allocate")
    return clone


def epilogue_loop(module: ModuleOp) -> ptx.WhileOp:
    """The while loop that carries the accumulator (and its trip counter)."""
    (loop,) = (
        op for op in module.walk() if isinstance(op, ptx.WhileOp) and len(op.res) == 2
    )
    return loop


@pytest.mark.parametrize("allocate", [False, True], ids=["virtual", "allocated"])
@pytest.mark.parametrize(("halvings", "negate"), [(3, 1), (0, 0)])
def test_while_loops_compute_the_reference(
    distributed, allocate, halvings, negate
) -> None:
    module = allocated(distributed) if allocate else distributed
    args = arguments(halvings, negate)
    assert_close(simulated(module, args), reference(args))


def test_the_loop_taken_on_the_negated_condition_is_caught(distributed) -> None:
    """`@p bra L_while_done` for `@!p bra`: the epilogue leaves at once where
    it should halve three times (and loops where it should leave, so
    `halvings` must not be 0: the mutant would never end)."""
    module = distributed.clone()
    condition = epilogue_loop(module).before.block.last_op
    cond = condition.cond
    true = ptx.AluOp("setp.eq.u32", [cond.owner.operands[0]] * 2, 1)
    flip = ptx.AluOp("xor.pred", [cond, true.result], 1)
    Rewriter.insert_op([true, flip], InsertPoint.before(condition))
    condition.operands[0] = flip.result
    args = arguments(3, 1)
    with pytest.raises(AssertionError, match="elements differ"):
        assert_close(simulated(module, args), reference(args))


def test_an_accumulator_entering_without_its_copy_is_caught(distributed) -> None:
    """ptx-allocate copies the accumulator (a wgmma result) into the loop's
    registers; entering the loop in the accumulator's own registers is read as
    the carried value in registers that do not hold it."""
    module = allocated(distributed)
    loop = epilogue_loop(module)
    copy = loop.inits[1].owner
    assert isinstance(copy, ptx.AluOp) and copy.opcode.data == "mov.f32"
    loop.operands[1] = copy.operands[0]
    Rewriter.erase_op(copy)
    with pytest.raises(Hazard, match="with no copy between their registers"):
        simulated(module, arguments(3, 1))
