"""cooperative{num-consumers=N}: N consumer warpgroups share each output tile.

The consumer role stays one region; at lowering, its register tiles are split by
rows over the N warpgroups (each owns M / N rows of every M-row tile) and each
warpgroup issues the wgmmas for its rows. This halves (for N = 2) the registers a
warpgroup needs for an accumulator, which is what lets a 128 x 256 tile fit.
Without `num-consumers`, N follows from the tile rows
(`compiler.default_consumers`: 1 for 64 rows, 2 for 128, 3 for 192).
Precondition, checked with a diagnostic: every `tile.dot` has M divisible by 64 N,
and with N > 1 so has every other tile the warpgroups split (a reduced or a
stored matrix).

It runs once per kernel (`transforms/once.py`, on the N it resolves): again
with the same N it changes nothing; with another N it refuses the kernel,
naming both (a second run used to replace the first silently).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException, VerifyException

from tawa_xdsl.analysis.shapes import split_tiles
from tawa_xdsl.compiler import default_consumers
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.dialects.roles import check_register_budget
from tawa_xdsl.transforms.once import ran_before, record_run
from tawa_xdsl.transforms.specialized import kernel_roles

_ROLE = {
    tile.DotOp: "M = {} rows",
    tile.ReduceOp: "the reduced tile's {} rows",
    tile.StoreOp: "the stored tile's {} rows",
}
"""How a message names the tile `split_tiles` found at an op of each type."""


@dataclass(frozen=True)
class CooperativePass(ModulePass):
    """Split each consumer role over `num-consumers` warpgroups."""

    name = "cooperative"

    num_consumers: int | None = None

    def check_options(self) -> None:
        if self.num_consumers is not None and not 1 <= self.num_consumers <= 3:
            raise PassFailedException(
                f"cooperative: num-consumers must be 1, 2 or 3, got {self.num_consumers}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        for kernel, ws in kernel_roles(op):
            n = self.num_consumers or default_consumers(consumer_rows(ws))
            resolved = CooperativePass(n)
            if ran_before(kernel, resolved, OPTIONS_ATTR):
                continue
            for op, t in split_tiles(ws.consumer.walk()):
                rows = t.type.get_shape()[0]
                dot = isinstance(op, tile.DotOp)  # other tiles may be short
                if rows % (64 * n) and (dot or n > 1):
                    raise OpDiagnostic(
                        op,
                        f"cooperative: {_ROLE[type(op)].format(rows)} cannot be "
                        f"split into 64-row {'wgmma ' if dot else ''}blocks over {n} "
                        f"warpgroup{'s' if n > 1 else ''}",
                    )
            ws.properties["num_consumers"] = IntegerAttr(n, 64)
            record_run(kernel, resolved, OPTIONS_ATTR)
            if ws.registers is not None:
                try:
                    check_register_budget("cooperative", n, *ws.registers)
                except VerifyException as e:
                    raise OpDiagnostic(
                        ws, f"{e}; run register-budget after cooperative"
                    ) from None


OPTIONS_ATTR = "aref.cooperative"
"""On a kernel `cooperative` ran on: its options, resolved (`transforms/once.py`)."""


def consumer_rows(ws: aref.WarpSpecializeOp) -> list[int]:
    """The rows of the tiles the consumer warpgroups split (`split_tiles`)."""
    return [t.type.get_shape()[0] for _, t in split_tiles(ws.consumer.walk())]
