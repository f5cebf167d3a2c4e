"""convert-aref-to-nvgpu-async: warp-specialized aref IR -> the Hopper machine.

Contract. Input: kernels after `aref-partition` (and usually `pipeline`): the
body holds `aref.create`s and one `aref.warp_specialize`. Output, per kernel:

- Parameters: each `!tile.desc` becomes what its uses need: a TMA tensor map if
  the producer loads it (or a consumer stores it through TMA), a plain global
  tensor if the consumer stores it from registers, and an index parameter per
  `tile.dim`; scalars stay. The ABI is recorded in `nvgpu_async.abi` (one
  "kind:arg[:axis]" entry per parameter) for the runtime.
- Each aref becomes one shared-memory ring per payload tile (`depth` 1024-byte
  aligned slots in the swizzled TMA layout) and two mbarrier arrays, `full` (count
  1: the producer's expect_tx arrival) and `empty` (one arrival per consumer
  warpgroup, or per consumer thread when the tiles are read with plain loads).
- Producer: `aref.put %r[i]` waits on `empty[i mod D]` with parity
  ((i div D) + 1) mod 2 (a fresh barrier passes parity 1), arms `full[i mod D]`
  with the slot's exact byte count and issues one TMA load per tile.
- Consumer: `aref.get %r[i]` waits on `full[i mod D]` with parity (i div D) mod 2
  and yields shared-memory views; `tile.dot` becomes fence + wgmma + commit;
  `aref.consumed` arrives on `empty`; `wgmma_wait_group` is placed by
  `wgmma_waits.plan_waits`; register tiles get fragment layouts
  (`analysis.layouts`); `tile.store` goes through a staging tile and TMA, or
  from registers (`store_global`).
- Clusters (`cluster{size=S}`): the producer loads every block of a cluster
  issues alike (`analysis.uniformity.cluster_uniform`) are multicast: each block
  copies 1/S of the tile into the slot of all S blocks. Their aref's `empty`
  barriers count the consumer warpgroups of all S blocks, which each release the
  slot in every block; cluster barriers follow the barrier init and precede exit.
- Register budgets (`setmaxnreg`) come from `register-budget`, or default to
  `compiler.default_registers`; the consumer only raises its budget when the
  launch leaves it below that.

How. Per kernel, `KernelPlan.of` (`analysis.kernel_plan`) decides the
parameters, the shared-memory layout, the multicast loads, the store paths and
the launch; the consumer's polymorphic tiles are copied per use, the layout
analysis places every consumer tile and `wgmma_waits` plans the waits
(inserted at once, as they are read off aref-level IR). Then one walk of the
patterns in `aref_patterns`, one per op, rewrites the module.

Kernels outside what the hardware path supports get a diagnostic at the op
before anything is rewritten: the plan's (MMA shapes wgmma cannot issue, tiles
TMA cannot move in the swizzled layout, too much shared memory (rings,
staging tiles and the column reductions' scratch), ...), the layout analysis's (transposed register tiles, tiles with no
or conflicting layouts), and `refuse_unsupported`'s (wgmma operands, shared
tiles read where no register tile results, non-splat register constants).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    ModuleOp,
    TensorType,
    UnknownLoc,
)
from xdsl.ir import Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.traits import IsTerminator

from tawa_xdsl.analysis.carried import STRUCTURED
from tawa_xdsl.analysis.kernel_plan import KernelPlan
from tawa_xdsl.analysis.layouts import ConsumerLayouts, Smem
from tawa_xdsl.compiler import DEFAULTS, thread_load_names
from tawa_xdsl.diagnostics import OpDiagnostic, in_pass
from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.dialects.tile import splat_value
from tawa_xdsl.lowering.aref_patterns import (
    CopyPolymorphicPerUse,
    InsertWgmmaWaits,
    Lowering,
    WidenNarrowReduce,
    patterns,
)
from tawa_xdsl.lowering.wgmma_waits import ReleaseBeforeReadError, plan_waits
from tawa_xdsl.transforms.specialized import warp_specialized


@dataclass(frozen=True)
class ConvertArefToNVGPUAsyncPass(ModulePass):
    """Lower warp-specialized aref IR to mbarriers, TMA and wgmma."""

    name = "convert-aref-to-nvgpu-async"

    tma_store: bool = DEFAULTS.tma_store
    thread_loads: str = ""
    """Tensor parameters (comma-separated names) whose tiles the producer's
    threads load instead of TMA (`compiler.CompileOptions.thread_loads`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lowering = Lowering()
        for ws in warp_specialized(op):
            kernel = ws.parent_op()
            assert isinstance(kernel, func.FuncOp), "aref-partition nests it directly"
            with in_pass(self.name):
                plan = KernelPlan.of(
                    kernel, ws, self.tma_store, thread_load_names(self.thread_loads)
                )
                layouts = _analyse_consumer(ws, plan)
            lowering.add(plan, layouts)
        walker = PatternRewriteWalker(
            KeepLocations(
                GreedyRewritePatternApplier(patterns(lowering), dce_enabled=False)
            )
        )
        walker.rewrite_module(op)


@dataclass(frozen=True)
class KeepLocations(RewritePattern):
    """Ops a pattern inserts take the source location of the op it rewrites, so
    a later diagnostic about one of them (distribute-fragments', the printer's)
    names the user's line."""

    inner: RewritePattern

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        def locate(new: Operation) -> None:
            for inner in new.walk():
                if isinstance(inner.location, UnknownLoc):
                    inner.location = op.location

        rewriter.operation_insertion_handler.append(locate)
        try:
            self.inner.match_and_rewrite(op, rewriter)
        finally:
            rewriter.operation_insertion_handler.remove(locate)


def _analyse_consumer(ws: aref.WarpSpecializeOp, plan: KernelPlan) -> ConsumerLayouts:
    """Place the consumer's tiles and put its wgmma waits; refuse what the
    hardware path cannot do there."""
    consumer = ws.consumer
    layouts = place_consumer_tiles(ws, plan.transposed_gets())
    try:
        waits = plan_waits(consumer)
    except ReleaseBeforeReadError as e:
        raise OpDiagnostic(ws, str(e)) from e
    refuse_unsupported(consumer, layouts)
    _walk_once(consumer, InsertWgmmaWaits(dict(waits)))
    return layouts


def place_consumer_tiles(
    ws: aref.WarpSpecializeOp, transposed: frozenset[SSAValue] = frozenset()
) -> ConsumerLayouts:
    """Copy the consumer's polymorphic tiles per use and place each of its
    tiles over the warpgroups `cooperative` gave it (in place), refusing a
    tile no layout holds (`compiler` asks this of given tile sizes at once);
    `transposed`: the `aref.get` results whose rings hold them transposed."""
    _walk_once(ws.consumer, CopyPolymorphicPerUse())
    _walk_once(ws.consumer, WidenNarrowReduce())
    return ConsumerLayouts(ws.consumer, ws.num_consumers.value.data, transposed)


def _walk_once(region: Region, pattern: RewritePattern) -> None:
    """Apply `pattern` to each op of `region` once, in order."""
    PatternRewriteWalker(pattern, apply_recursively=False).rewrite_region(region)


def refuse_unsupported(consumer: Region, layouts: ConsumerLayouts) -> None:
    """What the placed consumer asks that wgmma and the register path cannot do:
    a B operand in registers, a transposed A operand, a register constant that is
    not a splat, a shared tile read where no register tile results (a store
    of a loaded tile reads it into registers first). Reported in that order, as each kind is met
    first in the consumer."""
    ops = list(consumer.walk())
    for op in ops:
        if isinstance(op, tile.DotOp):
            if not layouts.in_smem(op.rhs):
                raise OpDiagnostic(
                    op,
                    "the B operand of tile.dot must come from shared memory (an aref tile)",
                )
            lhs = layouts.placement.get(op.lhs)
            a_type = op.lhs.type
            assert isinstance(a_type, TensorType)
            if (
                isinstance(lhs, Smem)
                and lhs.transposed
                and tile.is_fp8(a_type.element_type)
            ):
                raise OpDiagnostic(
                    op,
                    "a transposed 8-bit A operand is not supported (wgmma reads "
                    "8-bit operands K-major only); load A as M x K",
                )
    for op in ops:
        if (
            isinstance(op, arith.ConstantOp)
            and isinstance(op.value, DenseIntOrFPElementsAttr)
            and splat_value(op.value) is None
        ):
            raise OpDiagnostic(op, "only splat constants can live in register tiles")
    for op in ops:
        if isinstance(op, tile.StoreOp) and layouts.in_smem(op.value):
            view = layouts.placement[op.value]
            if isinstance(view, Smem) and view.transposed:
                raise OpDiagnostic(
                    op,
                    f"%{op.value.name_hint} is a transposed loaded tile: "
                    "a transposed shared tile is neither stored nor read into "
                    "registers; load the tile in the orientation the store uses",
                )
            _refuse_late_copy(op)
        if isinstance(
            op, tile.DotOp | tile.TransOp | tile.ExtractOp | tile.StoreOp | STRUCTURED
        ) or op.has_trait(IsTerminator):
            continue  # wgmma, transposes, extracts and copies read views; structured ops pass them on
        if any(layouts.in_smem(v) for v in op.operands) and not any(
            isinstance(r.type, TensorType) and not layouts.in_smem(r)
            for r in op.results
        ):
            shared = next(v for v in op.operands if layouts.in_smem(v))
            raise OpDiagnostic(
                op, f"cannot read the shared tile %{shared.name_hint} here"
            )


def _refuse_late_copy(store: tile.StoreOp) -> None:
    """A loaded tile stored as it is is read from its slot at the store: the
    store (or the loop or branch it sits in) must come after the `aref.get`
    that returned the slot and before the `aref.consumed` that frees it."""
    get = store.value.owner
    at: Operation | None = store  # the store, or the op holding it, in get's block
    while (
        isinstance(get, aref.GetOp)
        and at is not None
        and at.parent_block() is not get.parent_block()
    ):
        at = at.parent_op()
    if not isinstance(get, aref.GetOp) or at is None:
        raise OpDiagnostic(
            store,
            f"internal error: tile.store of %{store.value.name_hint} reads a "
            "shared tile that no aref.get around it returned",
        )
    op = get.next_op
    while op is not None and op is not at:
        if (
            isinstance(op, aref.ConsumedOp)
            and op.aref is get.aref
            and op.index is get.index
        ):
            raise OpDiagnostic(
                store,
                f"reads %{store.value.name_hint} from its slot after "
                "aref.consumed released it: store it first",
            )
        op = op.next_op
