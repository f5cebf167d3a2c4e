"""The `ptx` target: `tawa-opt ... -t ptx` prints a PTX module for sm_90a."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from tawa_xdsl.lowering.aref_to_nvgpu import LAUNCH_ATTR
from tawa_xdsl.lowering.ptx_emitter import emit_module
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.kernel import kernels


def to_ptx(module: ModuleOp) -> str:
    """PTX text for every kernel of `module`, which must all be lowered."""
    found = list(kernels(module))
    if not found:
        raise DiagnosticException(
            "-t ptx: the module has no tile kernels (func.func with the "
            "tile.kernel attribute) to print"
        )
    for kernel in found:
        if LAUNCH_ATTR not in kernel.attributes:
            raise OpDiagnostic(
                kernel,
                f"-t ptx needs lowered kernels; @{kernel.sym_name.data} is not: run "
                "tawa-hopper-pipeline (or aref-partition,pipeline,"
                "convert-aref-to-nvgpu-async) first",
            )
    return emit_module(found)


@dataclass(frozen=True)
class PTXTarget(Target):
    """PTX ISA 8.0 for sm_90a, one `.entry` per kernel."""

    name = "ptx"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(to_ptx(module))
