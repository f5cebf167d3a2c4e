"""The precondition every pass after `aref-partition` shares: kernels that load
tiles must already be warp-specialized."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.kernel import kernels


def warp_specialized(module: ModuleOp, pass_name: str) -> list[aref.WarpSpecializeOp]:
    """Each kernel's `aref.warp_specialize`; a kernel that loads tiles without one
    is reported (the pass ran before aref-partition). Kernels without loads have
    nothing to specialize and are skipped."""
    found: list[aref.WarpSpecializeOp] = []
    for kernel in kernels(module):
        ops = list(kernel.walk())
        specialized = [o for o in ops if isinstance(o, aref.WarpSpecializeOp)]
        if not specialized and any(isinstance(o, tile.LoadOp) for o in ops):
            raise OpDiagnostic(
                kernel,
                f"{pass_name}: kernel @{kernel.sym_name.data} is not warp-specialized; "
                "run aref-partition first",
            )
        found += specialized
    return found
