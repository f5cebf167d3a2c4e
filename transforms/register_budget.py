"""register-budget{producer=P consumer=C}: per-role register budgets.

The producer warpgroup only issues TMA loads and their index math, so it gives
registers back (`setmaxnreg.dec P`) and the consumer warpgroups take them
(`setmaxnreg.inc C`). The pass records the budgets on each
`aref.warp_specialize`; the lowering emits the `setmaxnreg`s. Run it after
`cooperative`: whether P + N x C registers per thread fit the SM's 64K depends on
the number N of consumer warpgroups. A budget not given, and both without this
pass (the lowering), is `compiler.default_registers(N)`. It runs once per
kernel (`transforms/once.py`, on the budgets it resolves): again with the same
budgets it changes nothing; with others it refuses the kernel, naming both (a
second run used to replace the first silently).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from tawa_xdsl.compiler import default_registers
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects.roles import check_register_budget
from tawa_xdsl.transforms.once import ran_before, record_run
from tawa_xdsl.transforms.specialized import kernel_roles


@dataclass(frozen=True)
class RegisterBudgetPass(ModulePass):
    """Set the `setmaxnreg` budgets of every warp-specialized kernel."""

    name = "register-budget"

    producer: int | None = None
    consumer: int | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel, ws in kernel_roles(op):
            num_consumers = ws.num_consumers.value.data
            default = default_registers(num_consumers)
            producer = default[0] if self.producer is None else self.producer
            consumer = default[1] if self.consumer is None else self.consumer
            resolved = RegisterBudgetPass(producer, consumer)
            if ran_before(kernel, resolved, OPTIONS_ATTR):
                continue
            try:
                check_register_budget(
                    "register-budget", num_consumers, producer, consumer
                )
            except VerifyException as e:
                raise OpDiagnostic(
                    ws, f"{e} ({self._sources(num_consumers)})"
                ) from None
            ws.producer_regs = IntegerAttr(producer, 64)
            ws.consumer_regs = IntegerAttr(consumer, 64)
            record_run(kernel, resolved, OPTIONS_ATTR)

    def _sources(self, num_consumers: int) -> str:
        """Each budget with where it came from: given, or the default for
        `num_consumers` consumer warpgroups (a refusal of a budget nobody
        gave read as if the caller had chosen it)."""
        default = default_registers(num_consumers)
        return ", ".join(
            f"{role}={value} given"
            if value is not None
            else f"{role}={fallback} the default for {num_consumers} consumer "
            f"warpgroup{'s' if num_consumers > 1 else ''}"
            for role, value, fallback in (
                ("producer", self.producer, default[0]),
                ("consumer", self.consumer, default[1]),
            )
        )


OPTIONS_ATTR = "aref.register_budget"
"""On a kernel `register-budget` ran on: its budgets, resolved (`transforms/once.py`)."""
