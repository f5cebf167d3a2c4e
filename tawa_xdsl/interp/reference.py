"""The reference interpreter: runs a tile kernel for every program id of a grid
over numpy arrays. It is the oracle every transformation is checked against."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions

from tawa_xdsl.analysis.levels import unsupported_op
from tawa_xdsl.diagnostics import OpDiagnostic, require_module, verify_located
from tawa_xdsl.grid import default_grid
from tawa_xdsl.interp.elementwise import ElementwiseFunctions
from tawa_xdsl.interp.tile import TileFunctions
from tawa_xdsl.kernel import (
    check_host_arguments,
    cluster_size,
    find_kernel,
    kernel_grid,
    program_ids,
)


def make_interpreter(module: ModuleOp) -> tuple[Interpreter, TileFunctions]:
    """An xDSL interpreter with func, scf, arith/math on numpy and the tile ops."""
    interpreter = Interpreter(module)
    tile_functions = TileFunctions()
    for functions in (
        FuncFunctions(),
        ScfFunctions(),
        ElementwiseFunctions(),
        tile_functions,
    ):
        interpreter.register_implementations(functions)
    return interpreter, tile_functions


LOWER_DIALECTS = ("aref", "nvgpu_async", "ptx")
"""The dialects of the levels below tile IR, which `tawa_xdsl.simulate` runs."""


def refuse_unknown_ops(interpreter: Interpreter, kernel: func.FuncOp) -> None:
    """A diagnostic at the first op of `kernel` the interpreter has no meaning
    for (xDSL's says 'Could not find interpretation function', at no line):
    an op of a lower level points to the simulator; an op no level compiles
    (math.powf) is refused as the lowering refuses it (it was pointed to the
    simulator too, which has no meaning for it either); any other op is not
    one of a tile kernel's."""
    known = interpreter._impls._impl_dict  # xDSL has no public query
    for op in kernel.body.walk():
        if type(op) in known:
            continue
        if op.dialect_name() in LOWER_DIALECTS:
            raise OpDiagnostic(
                op,
                f"{op.name} has no meaning in the interpreter, which runs tile IR "
                "(tawa_xdsl.simulate runs the warp-specialized and lowered levels)",
            )
        raise OpDiagnostic(
            op,
            unsupported_op(op)
            or f"{op.name} is not an op of tile kernels: the interpreter has no "
            "meaning for it",
        )


def interpret(
    module: ModuleOp,
    kernel_name: str,
    *args: Any,
    grid: Sequence[int] | None = None,
) -> None:
    """Run `kernel_name` for every program id of `grid` (by default the grid a
    compiled kernel launches on, `grid.default_grid`); stores write into the
    arrays passed as arguments (numpy arrays, or DLPack arrays on the CPU such as
    torch CPU tensors). The arguments get the checks the GPU kernel runs."""
    verify_located(require_module(module, "interpret"))
    kernel = find_kernel(module, kernel_name)
    checked = check_host_arguments(kernel, args)
    grid3 = kernel_grid(kernel, default_grid(kernel, checked) if grid is None else grid)
    interpreter, tile_functions = make_interpreter(module)
    refuse_unknown_ops(interpreter, kernel)
    tile_functions.grid = grid3
    tile_functions.cluster = cluster_size(kernel)
    for pid in program_ids(grid3):
        tile_functions.program_id = pid
        interpreter.call_op(kernel, checked)
    tile_functions.tickets.check_reset()
