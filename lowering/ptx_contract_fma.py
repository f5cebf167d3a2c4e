"""ptx-contract-fma: an f32 multiply whose only use is an add becomes one `fma`.

Contract. Input: thread-level kernels, not yet allocated (run before
`ptx-allocate`, after `ptx-skip-unit-scale`, whose guarded rescales it leaves
alone). Output: every unguarded `add.f32` one of whose operands is the result of
an unguarded `mul.f32` of the same block, used by that add alone, replaced by
`fma.rn.f32` of the multiply's operands and the add's other operand, each read
through its composed element map:

    %m = ptx.alu "mul.f32" %p, %s {maps = [[], [0, 0, 1, 1]]}
    %d = ptx.alu "add.f32" %acc, %m
  ->
    %d = ptx.alu "fma.rn.f32" %p, %s, %acc {maps = [[], [0, 0, 1, 1], []]}

Why: PTX lets ptxas contract a `mul.f32` / `add.f32` pair (no rounding
modifier) into one FFMA, and it usually does, but not where the product is made
of wgmma accumulator registers: the block-scaled GEMM's promotion
`acc + partial * scale` ran as FMUL then FADD, twice the FMA-pipe instructions
of cuBLAS's kernel (ncu, benchmarks/NOTES.md 3.43). Contracting in our IR makes
the choice ours and visible to the thread simulator, which rounds an `fma` once;
the tile-level interpreter rounds the product and the sum apart, so the two
agree to an ulp of f32 (the simulators' comparisons allow a few).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from tawa_xdsl.dialects.ptx import AluOp, width
from tawa_xdsl.kernel import kernels
from tawa_xdsl.lowering.ptx_skip_unit_scale import refuse_allocated


def _product(add: AluOp) -> tuple[int, AluOp] | None:
    """The operand of `add` that a contractible multiply makes, and the multiply."""
    for i, arg in enumerate(add.args):
        mul = arg.owner
        if (
            isinstance(mul, AluOp)
            and mul.opcode.data == "mul.f32"
            and mul.pred is None
            and mul.parent is add.parent
            and mul.result.has_one_use()
        ):
            return i, mul
    return None


@dataclass
class ContractMulAdd(RewritePattern):
    """`add.f32(x, mul.f32(p, q))` -> `fma.rn.f32(p, q, x)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AluOp, rewriter: PatternRewriter) -> None:
        if op.opcode.data != "add.f32" or op.pred is not None:
            return
        found = _product(op)
        if found is None:
            return
        i, mul = found
        other = 1 - i
        n = width(op.result)
        product = [op.element(i, k) for k in range(n)]
        maps = [
            [mul.element(0, e) for e in product],
            [mul.element(1, e) for e in product],
            [op.element(other, k) for k in range(n)],
        ]
        args = [*mul.args, op.args[other]]
        fma = AluOp(
            "fma.rn.f32",
            args,
            n,
            [_compact(m, a) for m, a in zip(maps, args, strict=True)],
        )
        rewriter.replace(op, fma)
        rewriter.erase(mul)


def _compact(element_map: list[int], value: SSAValue) -> list[int] | None:
    """None where the map reads element k as element k (or a single register)."""
    if width(value) == 1 or element_map == list(range(len(element_map))):
        return None
    return element_map


def contract_fma(kernel: func.FuncOp) -> None:
    PatternRewriteWalker(ContractMulAdd(), apply_recursively=False).rewrite_region(
        kernel.body
    )


@dataclass(frozen=True)
class PtxContractFmaPass(ModulePass):
    """Contract f32 multiply-adds (see the module docstring)."""

    name = "ptx-contract-fma"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            refuse_allocated(
                kernel,
                "ptx-contract-fma runs before ptx-allocate (an fma needs registers of its own)",
            )
            contract_fma(kernel)
