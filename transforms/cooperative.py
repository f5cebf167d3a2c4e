"""cooperative{num-consumers=N}: N consumer warpgroups share each output tile.

The consumer role stays one region; at lowering, its register tiles are split by
rows over the N warpgroups (each owns M / N rows of every M-row tile) and each
warpgroup issues the wgmmas for its rows. This halves (for N = 2) the registers a
warpgroup needs for an accumulator, which is what lets a 128 x 256 tile fit.
Without `num-consumers`, N follows from the tile rows
(`compiler.default_consumers`: 1 for 64 rows, 2 for 128, 3 for 192).
Precondition, checked with a diagnostic: every `tile.dot` has M divisible by 64 N,
and with N > 1 so has every stored matrix tile.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException, VerifyException

from tawa_xdsl.compiler import default_consumers
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.dialects.roles import check_register_budget
from tawa_xdsl.transforms.specialized import warp_specialized


@dataclass(frozen=True)
class CooperativePass(ModulePass):
    """Split each consumer role over `num-consumers` warpgroups."""

    name = "cooperative"

    num_consumers: int | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.num_consumers is not None and not 1 <= self.num_consumers <= 3:
            raise PassFailedException(
                f"cooperative: num-consumers must be 1, 2 or 3, got {self.num_consumers}"
            )
        for ws in warp_specialized(op, self.name):
            n = self.num_consumers or default_consumers(consumer_rows(ws))
            for op in ws.consumer.walk():
                if isinstance(op, tile.DotOp):
                    m = op.lhs.type.get_shape()[0]
                    if m % (64 * n):
                        raise OpDiagnostic(
                            op,
                            f"cooperative: M = {m} rows cannot be split into 64-row "
                            f"wgmma blocks over {n} warpgroups",
                        )
                elif isinstance(op, tile.StoreOp) and n > 1:
                    # a kernel without dots: its stored tiles are what is split
                    shape = op.value.type.get_shape()
                    if len(shape) == 2 and shape[0] % (64 * n):
                        raise OpDiagnostic(
                            op,
                            f"cooperative: the stored tile's {shape[0]} rows cannot "
                            f"be split into 64-row blocks over {n} warpgroups",
                        )
            ws.properties["num_consumers"] = IntegerAttr(n, 64)
            if ws.registers is not None:
                try:
                    check_register_budget("cooperative", n, *ws.registers)
                except VerifyException as e:
                    raise OpDiagnostic(
                        ws, f"{e}; run register-budget after cooperative"
                    ) from None


def consumer_rows(ws: aref.WarpSpecializeOp) -> list[int]:
    """The rows of the tiles the consumer warpgroups split: every dot's result and
    every stored matrix."""
    return [
        t.type.get_shape()[0]
        for op in ws.consumer.walk()
        for t in (
            [op.result]
            if isinstance(op, tile.DotOp)
            else [op.value]
            if isinstance(op, tile.StoreOp)
            else []
        )
        if len(t.type.get_shape()) == 2
    ]
