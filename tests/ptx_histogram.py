"""Opcode histograms of a kernel: from PTX text, and from distributed ptx IR.

The migration oracle of issue 15: distributing a kernel must produce the
instructions today's PTX printer (`lowering/ptx_emitter.py`) prints. Until the
new printer prints distributed IR, `ir_histogram` prints each ptx op's lines
itself with throwaway register names (one per element of every value) and
adds what structured control flow will cost once lowered: a loop's compare of
its counter and its increment. Copies (`mov`), branches and labels depend on
register allocation and control-flow lowering, so `comparable` leaves them
out, as well as the unit-rescale skip (`ptx-skip-unit-scale` adds it after
distribution).
"""

from __future__ import annotations

import re
from collections import Counter

from tawa_xdsl.dialects import ptx
from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

GUARD = re.compile(r"^@!?%\w+\s+")
UNIT_SCALE = frozenset({"setp.neu.f32", "setp.neu.or.f32", "vote.sync.any.pred"})
"""The printer's unit-rescale skip (before its `bra.uni`)."""


def opcode(line: str) -> str | None:
    """The opcode of one PTX body line (None: a label, a directive, a brace)."""
    text = GUARD.sub("", line.strip())
    if not text or text.endswith(":") or text[0] in ".{}/()":
        return None
    return text.split()[0].rstrip(";")


def text_histogram(ptx_text: str) -> Counter[str]:
    """Opcodes of one `.entry` as printed (its body lines)."""
    return Counter(op for line in ptx_text.splitlines() if (op := opcode(line)))


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.labels = 0

    def line(self, text: str) -> None:
        self.lines.append(text)

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def fresh_label(self, stem: str) -> str:
        self.labels += 1
        return f"L_{stem}_{self.labels}"


def _name_registers(kernel: func.FuncOp) -> None:
    """Give every bundle of `kernel` registers of its own (in place)."""
    first: Counter[str] = Counter()

    def name(v: SSAValue) -> None:
        t = v.type
        if isinstance(t, ptx.RegType) and not t.is_allocated:
            v._type = t.allocated(first[t.register_class])
            first[t.register_class] += t.size

    for op in kernel.walk():
        for r in op.results:
            name(r)
        for region in op.regions:
            for block in region.blocks:
                for a in block.args:
                    name(a)


def ir_histogram(kernel: func.FuncOp) -> Counter[str]:
    """Opcodes the distributed `kernel` prints (registers named in place: pass
    a clone)."""
    _name_registers(kernel)
    out = _Lines()
    for op in kernel.walk():
        if isinstance(op, ptx.ForOp):  # setp.ge.s32 ... ; add.s32 iv, iv, step
            out.line("setp.ge.s32 _;")
            out.line("add.s32 _;")
        elif isinstance(op, ptx.IfOp | ptx.YieldOp | func.FuncOp | func.ReturnOp):
            continue  # branches only
        elif isinstance(op, ptx.PTXOp):
            op.print_ptx(out)
        else:
            raise AssertionError(f"{op.name} is not a ptx op")
    return text_histogram("\n".join(out.lines))


def comparable(h: Counter[str]) -> Counter[str]:
    """What must match between the printer and distribution."""
    return Counter(
        {
            k: n
            for k, n in h.items()
            if not k.startswith(("mov.", "bra")) and k not in UNIT_SCALE and k != "ret"
        }
    )


def is_ptx(op: Operation) -> bool:
    return isinstance(op, ptx.PTXOp | func.FuncOp | func.ReturnOp)
