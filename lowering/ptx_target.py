"""The `ptx` target: `tawa-opt ... -t ptx` prints a PTX module for sm_90a."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from tawa_xdsl.dialects.nvgpu_async import LAUNCH_ATTR
from tawa_xdsl.kernel import kernels
from tawa_xdsl.lowering.ptx_emitter import emit_module


def lowered_kernels(module: ModuleOp) -> list:
    return [k for k in kernels(module) if LAUNCH_ATTR in k.attributes]


def to_ptx(module: ModuleOp) -> str:
    """PTX text for every lowered kernel of `module`."""
    lowered = lowered_kernels(module)
    if not lowered:
        raise DiagnosticException(
            "-t ptx needs lowered kernels: run tawa-hopper-pipeline (or "
            "aref-partition,pipeline,convert-aref-to-nvgpu-async) first"
        )
    return emit_module(lowered)


@dataclass(frozen=True)
class PTXTarget(Target):
    """PTX ISA 8.0 for sm_90a, one `.entry` per kernel."""

    name = "ptx"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(to_ptx(module))
