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
from xdsl.utils.exceptions import PassFailedException

from tawa_xdsl.lowering.aref_to_nvgpu import (
    ConvertArefToNVGPUAsyncPass,
    default_registers,
)
from tawa_xdsl.transforms.aref_partition import ArefPartitionPass
from tawa_xdsl.transforms.cluster import ClusterPass
from tawa_xdsl.transforms.cluster import check_size as check_cluster_size
from tawa_xdsl.transforms.cooperative import CooperativePass
from tawa_xdsl.transforms.persistent import PersistentPass
from tawa_xdsl.transforms.ping_pong import PingPongPass
from tawa_xdsl.transforms.pipeline import PipelinePass
from tawa_xdsl.transforms.register_budget import RegisterBudgetPass
from tawa_xdsl.transforms.reverse_grid import ReverseGridPass
from tawa_xdsl.transforms.tile_shape import TileShapePass


@dataclass(frozen=True)
class TawaHopperPipeline(ModulePass):
    """Tile IR -> lowered nvgpu_async IR, ready for `-t ptx`:

    tile-shape{block-m block-n block-k}, [reverse-grid{axis=x}], [cluster{size}],
    [persistent{group-m longest-first}],
    canonicalize,
    cse, aref-partition, cooperative{num-consumers},
    [register-budget{producer consumer}],
    pipeline{num-stages mma-depth two-stage outer-stages},
    convert-aref-to-nvgpu-async{tma-store}, [ping-pong], canonicalize, cse, dce.

    Block sizes of 0 keep the kernel's written tile shape; `producer-registers` /
    `consumer-registers` of 0 leave the budgets to the lowering's defaults for the
    number of consumer warpgroups.
    """

    name = "tawa-hopper-pipeline"

    num_stages: int = 3
    mma_depth: int = 2
    two_stage: bool = False
    num_consumers: int = 1
    producer_registers: int = 0
    consumer_registers: int = 0
    block_m: int = 0
    block_n: int = 0
    block_k: int = 0
    persistent: bool = False
    group_m: int = 8
    longest_first: bool = False
    tma_store: bool = True
    ping_pong: bool = False
    outer_stages: int = 2
    cluster: int = 1
    reverse_x: bool = False

    def passes(self) -> list[ModulePass]:
        check_cluster_size(self.cluster, self.name, "cluster")
        if self.reverse_x and self.persistent:
            raise PassFailedException(
                "tawa-hopper-pipeline: reverse-x orders how the GPU starts the "
                "programs of a grid; a persistent kernel walks its tiles itself "
                "(use longest-first)"
            )
        return [
            self.tile_shape(),
            *([ReverseGridPass("x")] if self.reverse_x else []),
            *([ClusterPass(self.cluster)] if self.cluster > 1 else []),
            *(
                [PersistentPass(self.group_m, self.longest_first)]
                if self.persistent
                else []
            ),
            CanonicalizePass(),
            CommonSubexpressionElimination(),
            ArefPartitionPass(),
            CooperativePass(self.num_consumers),
            *self.register_budget(),
            PipelinePass(
                self.num_stages, self.mma_depth, self.two_stage, self.outer_stages
            ),
            ConvertArefToNVGPUAsyncPass(self.tma_store),
            *([PingPongPass()] if self.ping_pong else []),
            CanonicalizePass(),
            CommonSubexpressionElimination(),
            DeadCodeElimination(),
        ]

    def tile_shape(self) -> TileShapePass:
        return TileShapePass(self.block_m, self.block_n, self.block_k)

    def register_budget(self) -> list[ModulePass]:
        if not (self.producer_registers or self.consumer_registers):
            return []
        default = default_registers(self.num_consumers)
        return [
            RegisterBudgetPass(
                self.producer_registers or default[0],
                self.consumer_registers or default[1],
            )
        ]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for p in self.passes():
            p.apply(ctx, op)
