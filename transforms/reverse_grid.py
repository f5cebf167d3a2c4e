"""reverse-grid{axis=x}: the programs along one grid axis start from the last.

Contract. Input: a tile kernel, before `persistent`. Output: the same kernel
with every `tile.program_id <axis>` replaced by
`num_programs(<axis>) - 1 - program_id(<axis>)`, and the launch grid its stores
show recorded as `tile.grid` (the relabelled ids no longer show it). The same
programs compute the same tiles; only which thread block takes which tile
changes.

Why: the GPU hands out thread blocks in increasing id order, x fastest, to the
SMs as they free up. In causal attention the key loop of query block x grows
with x, so in the written order the longest blocks of a head start last and the
grid ends on a tail of long blocks. Reversed, the longest start first and the
short ones fill the tail: longest-processing-time-first, on the hardware's own
dynamic scheduler (`persistent{longest-first}` is the static counterpart).
With `cluster{size}` the grid is rounded up to whole clusters, so a block may
take a tile past the edge; TMA loads read zeros there and stores clip, as for
any rounded grid.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import tile
from tawa_xdsl.grid import GRID_ATTR, GridInferenceError, encode_rules, grid_rule
from tawa_xdsl.kernel import kernels
from tawa_xdsl.transforms.persistent import PERSISTENT_ATTR

AXES = ("x", "y", "z")


@dataclass(frozen=True)
class ReverseGridPass(ModulePass):
    """Relabel the program ids along `axis` so the last tile starts first."""

    name = "reverse-grid"

    axis: str = "x"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.axis not in AXES:
            raise PassFailedException(
                f"reverse-grid: axis must be one of x, y, z, got {self.axis!r}"
            )
        for kernel in kernels(op):
            if PERSISTENT_ATTR in kernel.attributes:
                raise OpDiagnostic(
                    kernel,
                    f"reverse-grid: kernel @{kernel.sym_name.data} is already "
                    "persistent; run reverse-grid before persistent (or use "
                    "persistent{longest-first=true})",
                )
            if GRID_ATTR not in kernel.attributes:
                # without a rule the kernel is launched with an explicit grid
                with contextlib.suppress(GridInferenceError):
                    kernel.attributes[GRID_ATTR] = encode_rules(grid_rule(kernel))
            axis = AXES.index(self.axis)
            for pid in [
                o
                for o in kernel.walk()
                if isinstance(o, tile.ProgramIdOp) and o.axis.index == axis
            ]:
                raw = tile.ProgramIdOp(self.axis)
                count = tile.NumProgramsOp(self.axis)
                one = arith.ConstantOp(IntegerAttr(1, IndexType()))
                last = arith.SubiOp(count, one)
                reversed_id = arith.SubiOp(last, raw)
                Rewriter.insert_op(
                    [raw, count, one, last, reversed_id], InsertPoint.before(pid)
                )
                reversed_id.result.name_hint = pid.result.name_hint
                pid.result.replace_all_uses_with(reversed_id.result)
                pid.detach()
                pid.erase()
