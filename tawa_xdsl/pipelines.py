"""Named pass pipelines: the whole compiler in one `-p` entry."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import (
    CommonSubexpressionElimination,
)
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from tawa_xdsl.lowering.aref_to_nvgpu import ConvertArefToNVGPUAsyncPass
from tawa_xdsl.transforms.aref_partition import ArefPartitionPass
from tawa_xdsl.transforms.cooperative import CooperativePass
from tawa_xdsl.transforms.pipeline import PipelinePass


@dataclass(frozen=True)
class TawaHopperPipeline(ModulePass):
    """Tile IR -> lowered nvgpu_async IR, ready for `-t ptx`:

    canonicalize, cse, aref-partition, cooperative{num-consumers},
    pipeline{num-stages mma-depth two-stage}, convert-aref-to-nvgpu-async,
    canonicalize, cse, dce.
    """

    name = "tawa-hopper-pipeline"

    num_stages: int = 3
    mma_depth: int = 2
    two_stage: bool = False
    num_consumers: int = 1

    def passes(self) -> list[ModulePass]:
        return [
            CanonicalizePass(),
            CommonSubexpressionElimination(),
            ArefPartitionPass(),
            CooperativePass(self.num_consumers),
            PipelinePass(self.num_stages, self.mma_depth, self.two_stage),
            ConvertArefToNVGPUAsyncPass(),
            CanonicalizePass(),
            CommonSubexpressionElimination(),
            DeadCodeElimination(),
        ]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for p in self.passes():
            p.apply(ctx, op)
