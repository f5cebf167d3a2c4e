"""distribute-fragments: nvgpu_async IR -> ptx IR (what one thread executes).

Contract. Input: kernels lowered by `convert-aref-to-nvgpu-async` (optionally
after `select-store-path` and `ping-pong`): whole register tiles
(fragment-typed tensors), shared-memory rings, mbarriers, TMA and wgmma ops
under one `role_dispatch`. Output, per kernel: only `ptx` ops, `func.func` and
`func.return`; no value has a tensor type; the kernel has no block arguments
(it reads its parameters with `ptx.param` and lists their declarations,
`#ptx.param_decl`, in its `ptx.params` attribute) and keeps its launch
attribute. Anything the thread level cannot express gets a diagnostic at the op.

One module per family of ops (`kernel`, `elementwise`, `reductions`, `control`, `barriers`,
`wgmma`, `memory`): each pattern converts one op, leaving a cast of its ptx
value(s) to the old type for the users not yet converted (`context`). Ops are
visited once, in program order, so a value's definition is converted before
its uses; the casts are erased at the end.

Where the stream differs from the printer's (the ops carry no registers, so
the printer's copies between its registers are left to `ptx-allocate`):
- no `mov` copies into loop-carried or branch registers (phi copies), no
  `mov.pred ok, true` before a store's bounds checks, no `mov.f32` of a
  reduction's first partial result before the quad shuffles;
- a 16-byte store path computes its quad transpose's lane predicates for both
  polarities (+2 `setp.ne.u32` per such store), so each transpose round is one
  bundle;
- a literal first operand of `tile.cmpi` (`tile.cmpf`) is moved into a
  register once, not per element; the row bases of tiles are computed once at
  the top of the consumer region, not where first used; `tile.select` of
  integer tiles uses `selp.b32` (the printer wrote `selp.f32`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from tawa_xdsl.contract import is_lowered
from tawa_xdsl.diagnostics import OpDiagnostic, each_kernel
from tawa_xdsl.dialects import ptx
from tawa_xdsl.kernel import kernels
from tawa_xdsl.lowering.distribute import (
    barriers,
    control,
    elementwise,
    kernel,
    memory,
    reductions,
    wgmma,
)
from tawa_xdsl.lowering.distribute.kernel import DistributePattern

FAMILIES = (kernel, elementwise, reductions, control, barriers, wgmma, memory)


class ByOpType(RewritePattern):
    """Applies the pattern that converts an op's type; an op no family
    converts, other than what distribution leaves, has no thread-level form.
    (Each op is looked up once: the families' patterns do not overlap.)"""

    KEPT = (ptx.PTXOp, func.ReturnOp)

    def __init__(self, patterns: list[DistributePattern]):
        self.table: dict[type[Operation], DistributePattern] = {}
        for p in patterns:
            for t in p.OPS:
                assert t not in self.table, f"two patterns convert {t.name}"
                self.table[t] = p

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        pattern = self.table.get(type(op))
        if pattern is not None:
            pattern.rewrite(op, rewriter)
        elif not isinstance(op, self.KEPT):
            raise OpDiagnostic(op, f"the thread level does not handle '{op.name}'")


def distribute_kernel(kernel_op: func.FuncOp) -> None:
    """Distribute one lowered kernel (see the module docstring); an op no
    pattern can convert is refused where it stands."""
    k = kernel.begin_kernel(kernel_op)
    patterns = [p for f in FAMILIES for p in f.patterns(k)]
    PatternRewriteWalker(ByOpType(patterns), apply_recursively=False).rewrite_region(
        kernel_op.body
    )
    k.finish()


def lowered_kernels(module: ModuleOp) -> list[func.FuncOp]:
    """Kernels lowered to nvgpu_async and not yet distributed."""
    return [
        k
        for k in kernels(module)
        if is_lowered(k) and ptx.PARAMS_ATTR not in k.attributes
    ]


@dataclass(frozen=True)
class DistributeFragmentsPass(ModulePass):
    """Lower nvgpu_async kernels to the thread level (the ptx dialect)."""

    name = "distribute-fragments"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        each_kernel(lowered_kernels(op), distribute_kernel)
