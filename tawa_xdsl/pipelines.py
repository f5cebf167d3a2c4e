"""Named pass pipelines: the whole compiler in one `-p` entry."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import (
    CommonSubexpressionElimination,
)
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from tawa_xdsl.lowering.aref_to_nvgpu import (
    ConvertArefToNVGPUAsyncPass,
    default_registers,
)
from tawa_xdsl.transforms.aref_partition import ArefPartitionPass
from tawa_xdsl.transforms.cooperative import CooperativePass
from tawa_xdsl.transforms.pipeline import PipelinePass
from tawa_xdsl.transforms.register_budget import RegisterBudgetPass


@dataclass(frozen=True)
class TawaHopperPipeline(ModulePass):
    """Tile IR -> lowered nvgpu_async IR, ready for `-t ptx`:

    canonicalize, cse, aref-partition, cooperative{num-consumers},
    [register-budget{producer consumer}], pipeline{num-stages mma-depth two-stage},
    convert-aref-to-nvgpu-async, canonicalize, cse, dce.

    `producer-registers` / `consumer-registers` of 0 leave the budgets to the
    lowering's defaults for the number of consumer warpgroups.
    """

    name = "tawa-hopper-pipeline"

    num_stages: int = 3
    mma_depth: int = 2
    two_stage: bool = False
    num_consumers: int = 1
    producer_registers: int = 0
    consumer_registers: int = 0

    def passes(self) -> list[ModulePass]:
        return [
            CanonicalizePass(),
            CommonSubexpressionElimination(),
            ArefPartitionPass(),
            CooperativePass(self.num_consumers),
            *self.register_budget(),
            PipelinePass(self.num_stages, self.mma_depth, self.two_stage),
            ConvertArefToNVGPUAsyncPass(),
            CanonicalizePass(),
            CommonSubexpressionElimination(),
            DeadCodeElimination(),
        ]

    @classmethod
    def spec(cls, **options: Any) -> str:
        """`tawa-hopper-pipeline{...}` for keyword options named like the fields."""
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise TypeError(
                f"unknown option(s) {', '.join(unknown)}; the options of {cls.name} "
                f"are {', '.join(known)}"
            )
        return (
            cls.name
            + "{"
            + " ".join(
                f"{k.replace('_', '-')}={str(v).lower() if isinstance(v, bool) else v}"
                for k, v in options.items()
            )
            + "}"
        )

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
