"""Named pass pipelines: the whole compiler in one `-p` entry."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import (
    CommonSubexpressionElimination,
)
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import PassFailedException

from tawa_xdsl.compiler import CompileOptions, check_options
from tawa_xdsl.diagnostics import OpDiagnostic, each_kernel
from tawa_xdsl.grid import launch_pass_applied
from tawa_xdsl.kernel import cluster_size, kernels, params
from tawa_xdsl.lowering.aref_to_nvgpu import ConvertArefToNVGPUAsyncPass
from tawa_xdsl.target import SM_COUNT
from tawa_xdsl.transforms.aref_partition import ArefPartitionPass
from tawa_xdsl.transforms.cluster import ClusterPass
from tawa_xdsl.transforms.cluster import check_size as check_cluster_size
from tawa_xdsl.transforms.cooperative import CooperativePass
from tawa_xdsl.transforms.persistent import PersistentPass
from tawa_xdsl.transforms.ping_pong import PingPongPass
from tawa_xdsl.transforms.pipeline import PipelinePass
from tawa_xdsl.transforms.register_budget import RegisterBudgetPass
from tawa_xdsl.transforms.reverse_grid import ReverseGridPass
from tawa_xdsl.transforms.swap_operands import SwapOperandsPass
from tawa_xdsl.transforms.tile_shape import TileShapePass


@dataclass(frozen=True)
class TawaHopperPipeline(CompileOptions, ModulePass):
    """Tile IR -> lowered nvgpu_async IR, ready for `-t ptx`:

    tile-shape{block-m block-n block-k}, [swap-operands], [reverse-grid{axis=x}],
    [cluster{size}],
    [persistent{group-m longest-first dynamic}],
    canonicalize,
    cse, aref-partition, cooperative{num-consumers},
    register-budget{producer consumer},
    pipeline{num-stages mma-depth two-stage outer-stages},
    convert-aref-to-nvgpu-async{tma-store thread-loads}, [ping-pong], canonicalize, cse, dce.

    Its options are the fields of `CompileOptions`; those not given are resolved
    for each kernel as `compile` resolves them (tuning rules unless
    `tuned=false`, then the kernel's structure, then the static defaults), so the
    PTX printed after this pipeline is the kernel `compile` runs; but for
    `stream-k` and `split-k`, which are refused (a call's choice: run the
    stream-k or split-k pass). Each kernel is
    lowered in a module of its own with its own options.

    `shape="M=512,N=4096,K=4096"` (extents by `tile.dims` name) lowers each
    kernel as `compile` specializes it for a call of that shape (aligned
    operands, an H100's 132 SMs): the shape rules of `tawa_xdsl.heuristics`
    take part in resolving the options. A kernel takes the extents of the
    names it has; a name no kernel has is an error.
    """

    name = "tawa-hopper-pipeline"

    shape: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.run(ctx, op, None)

    def run(
        self, ctx: Context, op: ModuleOp, between: PassPipelineCallbackType | None
    ) -> None:
        """Each kernel through the passes of its own resolved options, `between`
        called around each pass (`tawa-opt` verifies, times and dumps there);
        the kernels refused are reported together, after the others."""
        if self.stream_k is not None:
            raise PassFailedException(
                "tawa-hopper-pipeline: stream-k is a choice of compile()'s calls "
                "(which run a GEMM as its stream-K pair); the pipeline lowers the "
                "kernels it is given: run the stream-k pass first"
            )
        if self.split_k is not None:
            raise PassFailedException(
                "tawa-hopper-pipeline: split-k is a choice of compile()'s calls "
                "(which run a GEMM as its split-K pair); the pipeline lowers the "
                "kernels it is given: run the split-k pass first"
            )
        if self.cluster is not None:
            check_cluster_size(self.cluster, self.name, "cluster")
        extents = self._extents(op)

        def lower(kernel: func.FuncOp) -> None:
            refuse_launch_passes(kernel)
            shaped = {} if extents is None else _shaped(kernel, extents, self)
            check_options(self, kernel, shaped)
            passes = hopper_passes(self.resolve(kernel, shaped))
            with _alone(kernel) as module:
                PassPipeline(tuple(passes), between).apply(ctx, module)

        each_kernel(list(kernels(op)), lower)

    def _extents(self, op: ModuleOp) -> dict[str, int] | None:
        """The `shape` option's extents, each named by some kernel's tile.dims."""
        if self.shape is None:
            return None
        from tawa_xdsl.dispatch import fixed_elsewhere, parse_shape

        try:
            extents = parse_shape(self.shape)
        except ValueError as e:
            raise PassFailedException(f"tawa-hopper-pipeline: {e}") from None
        signatures = [params(k) for k in kernels(op)]
        named = {n for ps in signatures for p in ps for n in p.dims if n}
        unknown = sorted(set(extents) - named)
        if unknown:
            raise PassFailedException(
                f"tawa-hopper-pipeline: shape names {', '.join(unknown)}, which no "
                f"kernel here names (tile.dims: {', '.join(sorted(named)) or 'none'})"
            )
        for name, extent in extents.items():
            fixed = [
                fixed_elsewhere(ps, name, extent)
                for ps in signatures
                if any(name in p.dims for p in ps)
            ]
            if None not in fixed:  # every kernel naming it fixes it to another
                raise PassFailedException(f"tawa-hopper-pipeline: shape: {fixed[0]}")
        return extents


def refuse_launch_passes(kernel: func.FuncOp) -> None:
    """The pipeline runs tile-shape, reverse-grid, cluster and persistent
    itself, in that order, with the options it resolves for the kernel as it
    was written: one of them run before it would be resized, resolved or
    run a second time on a grid it already changed."""
    done = launch_pass_applied(kernel)
    if done is None:
        return
    option = {
        "persistent": "persistent=true",
        "reverse-grid": "reverse-x=true",
        "cluster": f"cluster={cluster_size(kernel)}",
    }[done]
    raise OpDiagnostic(
        kernel,
        f"tawa-hopper-pipeline: kernel @{kernel.sym_name.data} went through "
        f"{done}, which the pipeline runs itself (after tile-shape): give it "
        f"the kernel before {done} and the option {option}",
    )


def _shaped(
    kernel: func.FuncOp, extents: dict[str, int], options: CompileOptions
) -> dict[str, Any]:
    """The shape rules' options for `kernel` on `extents` (those it names and
    its types do not fix to others: a file's attention kernels of head dims 64
    and 128 under D=64)."""
    from tawa_xdsl.dispatch import fixed_elsewhere, shape_decision, shape_key
    from tawa_xdsl.heuristics import Structure

    ps = params(kernel)
    own = {
        n: e
        for n, e in extents.items()
        if any(n in p.dims for p in ps) and fixed_elsewhere(ps, n, e) is None
    }
    key = shape_key(ps, own)
    return dict(shape_decision(Structure.of(kernel), key, options, SM_COUNT).options)


OPTION_OF_FIELD = {
    ("cluster", "size"): "cluster",
    ("persistent", "dynamic"): "dynamic_tiles",
}
"""(pass name, field) -> the compile option `hopper_passes` fills that field
from, where the names differ (the others are the field's own name)."""


def option_of_field(p: ModulePass, field_name: str) -> str:
    """The `CompileOptions` field that `hopper_passes` passes to `p`'s field
    `field_name`: a refusal of the pass's value names the option the caller
    gave (`cluster=3`, not the pass's `size`)."""
    return OPTION_OF_FIELD.get((p.name, field_name), field_name)


def hopper_passes(options: CompileOptions) -> list[ModulePass]:
    """The passes of `tawa-hopper-pipeline` for resolved `options` (which
    refuse persistent with reverse_x, and dynamic_tiles without persistent,
    when they are made: `CompileOptions`)."""
    return [
        TileShapePass(options.block_m, options.block_n, options.block_k),
        *([SwapOperandsPass()] if options.swap_ab else []),
        *([ReverseGridPass("x")] if options.reverse_x else []),
        *([ClusterPass(options.cluster)] if options.cluster != 1 else []),
        *(
            [
                PersistentPass(
                    options.group_m, options.longest_first, options.dynamic_tiles
                )
            ]
            if options.persistent
            else []
        ),
        CanonicalizePass(),
        CommonSubexpressionElimination(),
        ArefPartitionPass(),
        CooperativePass(options.num_consumers),
        RegisterBudgetPass(options.producer_registers, options.consumer_registers),
        PipelinePass(
            options.num_stages,
            options.mma_depth,
            options.two_stage,
            options.outer_stages,
        ),
        ConvertArefToNVGPUAsyncPass(options.tma_store, options.thread_loads or ""),
        *([PingPongPass()] if options.ping_pong else []),
        CanonicalizePass(),
        CommonSubexpressionElimination(),
        DeadCodeElimination(),
    ]


@contextmanager
def _alone(kernel: func.FuncOp) -> Iterator[ModuleOp]:
    """`kernel` in a module of its own while the block is run, then back in its
    place: the passes work on whole modules, the options differ per kernel."""
    block = kernel.parent_block()
    assert block is not None
    after = kernel.next_op
    kernel.detach()
    module = ModuleOp([kernel])
    try:
        yield module
    finally:
        for op in list(module.ops):
            op.detach()
            if after is None:
                block.add_op(op)
            else:
                block.insert_op_before(op, after)
