"""`simulate`: run a kernel at whatever level it is, checking its synchronisation.

Tile and aref IR run in the aref simulator (roles as coroutines over the slot
protocol); lowered nvgpu_async IR runs in the barrier simulator (mbarriers, TMA
transactions, wgmma groups); thread-level ptx IR (after `distribute-fragments`)
runs in the thread simulator (lanes, registers, addresses). Each computes the
kernel's output, so every stage of the compiler can be compared with the
reference interpreter on the same inputs. At the thread level, arrays TMA
cannot describe are read (and written) through aligned copies, as a call
through `tawa_xdsl.compile` reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from tawa_xdsl.contract import is_lowered
from tawa_xdsl.diagnostics import require_module, verify_located
from tawa_xdsl.dialects.ptx import PARAMS_ATTR
from tawa_xdsl.grid import default_grid
from tawa_xdsl.interp.aref_sim import run_aref_level
from tawa_xdsl.interp.barrier_sim import run_lowered
from tawa_xdsl.interp.thread_sim import launch_parameters, run_threads
from tawa_xdsl.kernel import (
    check_host_arguments,
    find_kernel,
    kernel_grid,
    params,
)


def simulate(
    module: ModuleOp,
    kernel_name: str,
    *args: Any,
    grid: Sequence[int] | None = None,
    seed: int = 0,
    exact_math: bool = False,
) -> None:
    """Run `kernel_name` on host arrays (as `interpret` takes them, with the same
    checks, and on the same default grid) with its roles interleaved as `seed` chooses; stores write into the
    arrays. Raises `Deadlock` (`PredictedHang` for lowered and thread-level IR),
    `ProtocolViolation` or `Hazard` when synchronisation is broken (at the thread
    level also for an access outside the arrays or misaligned, or a collective
    reached by part of a warp). At the thread level the `.approx` instructions
    (tanh, ex2, lg2, rsqrt, sin, cos) err as much as the PTX ISA lets them, as
    on the GPU; `exact_math` computes them exactly, as the interpreter does
    (to compare a lowering with it more tightly than their error)."""
    verify_located(require_module(module, "simulate"))
    kernel = find_kernel(module, kernel_name)
    checked = check_host_arguments(kernel, args)
    grid3 = kernel_grid(kernel, default_grid(kernel, checked) if grid is None else grid)
    if PARAMS_ATTR in kernel.attributes:
        realigned: list[tuple[int, Any]] = []
        parameters = launch_parameters(kernel, checked, realigned)
        run_threads(module, kernel, parameters, grid3, seed, exact_math)
        written = [p.written for p in params(kernel)]
        for index, copy in realigned:
            if written[index]:
                checked[index][...] = copy
    elif is_lowered(kernel):
        run_lowered(module, kernel, checked, grid3, seed)
    else:
        run_aref_level(module, kernel_name, checked, grid3, seed)
