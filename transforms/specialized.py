"""The precondition every pass after `aref-partition` shares: every kernel is
already warp-specialized (one without loads has a consumer role only)."""

from __future__ import annotations

from tawa_xdsl.dialects import aref
from xdsl.dialects.builtin import ModuleOp

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.kernel import kernels


def warp_specialized(module: ModuleOp, pass_name: str) -> list[aref.WarpSpecializeOp]:
    """Each kernel's `aref.warp_specialize`; a kernel without one is reported (the
    pass ran before aref-partition)."""
    found: list[aref.WarpSpecializeOp] = []
    for kernel in kernels(module):
        specialized = [o for o in kernel.walk() if isinstance(o, aref.WarpSpecializeOp)]
        if not specialized:
            raise OpDiagnostic(
                kernel,
                f"{pass_name}: kernel @{kernel.sym_name.data} is not warp-specialized; "
                "run aref-partition first",
            )
        found += specialized
    return found
