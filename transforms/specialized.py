"""What every pass after `aref-partition` works on: each kernel's roles."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tawa_xdsl.dialects import aref
from tawa_xdsl.kernel import kernels


def warp_specialized(module: ModuleOp) -> list[aref.WarpSpecializeOp]:
    """Each kernel's `aref.warp_specialize` (the pass drivers refuse kernels
    at another level first: `analysis.levels`)."""
    return [ws for _, ws in kernel_roles(module)]


def kernel_roles(
    module: ModuleOp,
) -> list[tuple[func.FuncOp, aref.WarpSpecializeOp]]:
    """Each kernel with its `aref.warp_specialize`, for a pass that records
    on the kernel how it ran (`transforms/once.py`)."""
    return [
        (kernel, o)
        for kernel in kernels(module)
        for o in kernel.walk()
        if isinstance(o, aref.WarpSpecializeOp)
    ]
