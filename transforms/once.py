"""Passes that transform a kernel once (`persistent`, `pipeline`, `stream-k`,
whose pair record says nothing of its group-m; `cooperative` and
`register-budget`, on the options they resolve).

Each records on the kernel the options it ran with (as `-p` spells them).
Given the kernel again, a pass leaves it as it is when its options are the
same, and refuses it, naming both runs, when they differ: the second run was
skipped silently (`persistent`), replaced it silently (`cooperative`,
`register-budget`) or compounded the first (two `pipeline`s delayed the
releases twice, and the producer deadlocked on a slot nobody released).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr
from xdsl.passes import ModulePass

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.pass_pipeline import spelled_pass


def ran_before(
    kernel: func.FuncOp, p: ModulePass, attr: str, transformed: bool = False
) -> bool:
    """Whether `p` ran on `kernel` already with these options (recorded under
    `attr`); a diagnostic at the kernel when it ran with others, or when
    `transformed` says the kernel shows the pass's work without a record (IR
    written by hand)."""
    recorded = kernel.attributes.get(attr)
    if recorded is None and not transformed:
        return False
    spelled = spelled_pass(p)
    if recorded == StringAttr(spelled):
        return True
    was = (
        recorded.data
        if isinstance(recorded, StringAttr)
        else f"{p.name} without a record of its options ({attr})"
    )
    raise OpDiagnostic(
        kernel,
        f"{p.name}: kernel @{kernel.sym_name.data} went through {was} already; "
        f"{spelled} would transform it again: run {p.name} once",
    )


def record_run(kernel: func.FuncOp, p: ModulePass, attr: str) -> None:
    """Record on `kernel` that `p` ran on it, for `ran_before`."""
    kernel.attributes[attr] = StringAttr(spelled_pass(p))
