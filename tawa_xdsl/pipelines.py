"""Named pass pipelines: the whole compiler in one `-p` entry."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import (
    CommonSubexpressionElimination,
)
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import PassFailedException

from tawa_xdsl.compiler import CompileOptions
from tawa_xdsl.kernel import kernels
from tawa_xdsl.lowering.aref_to_nvgpu import ConvertArefToNVGPUAsyncPass
from tawa_xdsl.transforms.aref_partition import ArefPartitionPass
from tawa_xdsl.transforms.cluster import ClusterPass
from tawa_xdsl.transforms.cooperative import CooperativePass
from tawa_xdsl.transforms.persistent import PersistentPass
from tawa_xdsl.transforms.ping_pong import PingPongPass
from tawa_xdsl.transforms.pipeline import PipelinePass
from tawa_xdsl.transforms.register_budget import RegisterBudgetPass
from tawa_xdsl.transforms.reverse_grid import ReverseGridPass
from tawa_xdsl.transforms.tile_shape import TileShapePass


@dataclass(frozen=True)
class TawaHopperPipeline(CompileOptions, ModulePass):
    """Tile IR -> lowered nvgpu_async IR, ready for `-t ptx`:

    tile-shape{block-m block-n block-k}, [reverse-grid{axis=x}], [cluster{size}],
    [persistent{group-m longest-first}],
    canonicalize,
    cse, aref-partition, cooperative{num-consumers},
    register-budget{producer consumer},
    pipeline{num-stages mma-depth two-stage outer-stages},
    convert-aref-to-nvgpu-async{tma-store}, [ping-pong], canonicalize, cse, dce.

    Its options are the fields of `CompileOptions`; those not given are resolved
    for each kernel as `compile` resolves them (tuning rules unless
    `tuned=false`, then the kernel's structure, then the static defaults), so the
    PTX printed after this pipeline is the kernel `compile` runs. Each kernel is
    lowered in a module of its own with its own options.
    """

    name = "tawa-hopper-pipeline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in list(kernels(op)):
            passes = hopper_passes(self.resolve(kernel))
            with _alone(kernel) as module:
                for p in passes:
                    p.apply(ctx, module)


def hopper_passes(options: CompileOptions) -> list[ModulePass]:
    """The passes of `tawa-hopper-pipeline` for resolved `options`."""
    if options.reverse_x and options.persistent:
        raise PassFailedException(
            "tawa-hopper-pipeline: reverse-x orders how the GPU starts the "
            "programs of a grid; a persistent kernel walks its tiles itself "
            "(use longest-first)"
        )
    return [
        TileShapePass(options.block_m, options.block_n, options.block_k),
        *([ReverseGridPass("x")] if options.reverse_x else []),
        *([ClusterPass(options.cluster)] if options.cluster != 1 else []),
        *(
            [PersistentPass(options.group_m, options.longest_first)]
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
        ConvertArefToNVGPUAsyncPass(options.tma_store),
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
