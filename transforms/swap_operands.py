"""swap-operands: a GEMM computed as C^T = B A^T, its output stored transposed.

Contract. Input: tile kernels (before `aref-partition`) whose stored tiles
are computed from a `tile.dot` of A loaded M x K and B loaded N x K and
transposed (`C = A B^T`), or of 16-bit B loaded K x N, through ops the
transposes rules move through.
Output: each such `tile.store(v, c[i, j])` becomes
`tile.store(trans_pinned(trans(v)), c[i, j])`, and the inner transpose is
moved up (`transforms/transposes.py`) to the loaded tiles: the dot reads B
(the N side) as its A operand and A transposed as its B operand,
`dot(b, trans(a), trans(acc))`, so wgmma's 64-row M side walks the weight
rows and the few rows of A become its N (8 to 256, a multiple of 8). The
pinned transpose stays in front of the store (canonicalize moves it nowhere),
which writes the register tile transposed (`store_global transposed`).

Why: a decode GEMM of M = 16 rows computed as written issues m64nN wgmmas
whose 64 rows are 48 of padding; swapped, m64n16 wgmmas on the weight rows
do no padded work, and a ring slot holds more weight bytes.

Refused, at the store, with the transposes rules' reason (`blocker`): a
dot of other operands (an 8-bit B loaded K x N would be an MN-major A,
which wgmma does not read for 8-bit inputs; a computed operand), an epilogue
tile also read untransposed, a loaded tile computed on (a residual); and an
8-bit float output (stored through TMA only). At the kernel: one that stores
no tile computed by a dot. Stores of other tiles (a row reduction) are left
as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from tawa_xdsl.analysis.transposable import blocker
from tawa_xdsl.analysis.uniformity import computed_from
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import tile
from tawa_xdsl.kernel import kernels
from tawa_xdsl.transforms.transposes import sink_transposes


def swapped(store: tile.StoreOp) -> bool:
    """Whether `store` writes a pinned transpose (swap-operands' output)."""
    owner = store.value.owner
    return isinstance(owner, tile.TransOp) and owner.pinned is not None


@dataclass
class SwapStoredGemm(RewritePattern):
    """`store(v)` -> `store(trans_pinned(trans(v)))` for a GEMM's output tile
    `v` (a matrix computed by a dot), refused where the inner transpose could
    not move up."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, store: tile.StoreOp, rewriter: PatternRewriter, /):
        v = store.value
        if (
            swapped(store)
            or not isinstance(v.type, TensorType)
            or v.type.get_num_dims() != 2
            or not computed_from(v, tile.DotOp, through_regions=True)
        ):
            return
        if tile.is_fp8(v.type.element_type):
            raise OpDiagnostic(
                store,
                "swap-operands: an 8-bit float output is stored through TMA only "
                "(its registers hold element pairs, which a transposed store, one "
                "element at a time, does not split)",
            )
        inner = tile.TransOp(v)
        outer = tile.TransOp(inner, pinned=True)
        for op in (inner, outer):
            op.location = store.location
        rewriter.insert([inner, outer], InsertPoint.before(store))
        store.operands[0] = outer.result
        rewriter.notify_op_modified(store)
        if (why := blocker(v)) is not None:  # with the store reading it transposed
            raise OpDiagnostic(
                store,
                f"swap-operands cannot compute this store's GEMM as C^T = B A^T: {why}",
            )


@dataclass(frozen=True)
class SwapOperandsPass(ModulePass):
    """Compute each GEMM's output tile transposed, weights on wgmma's M side."""

    name = "swap-operands"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            stores = [o for o in kernel.walk() if isinstance(o, tile.StoreOp)]
            PatternRewriteWalker(
                SwapStoredGemm(), apply_recursively=False
            ).rewrite_region(kernel.body)
            if not any(swapped(s) for s in stores):
                raise OpDiagnostic(
                    kernel,
                    f"swap-operands: @{kernel.sym_name.data} stores no matrix tile "
                    "computed by a tile.dot: there are no operands to swap",
                )
            sink_transposes(kernel)
