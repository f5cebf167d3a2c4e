"""The PTX printer: thread-level kernels, lowered all the way, as PTX text.

It only prints. Each kernel must be flat (`ptx-lower-control-flow`) and
allocated (`ptx-allocate`); every op prints its own lines (`PTXOp.print_ptx`).
What is left here is the frame around them:

    <module header: .version 8.0, .target sm_90a, .address_size 64, smem>
    [.global .align 4 .u32 <name>__tile_counter;]   a `tile.next_tile` kernel's
    .visible .entry <name>(
        <the kernel's ptx.params declarations>
    )
    .maxntid <threads>, 1, 1
    .minnctapersm 1
    [.reqnctapercluster <cluster>, 1, 1]
    {
        .reg .f32 %f<n>;  ...     one per register class used, in the old
                                  printer's order (f, h, p, r, rd), each
                                  declaring up to the highest register + 1
        <op lines>
        ret;
    }

The launch facts (threads, cluster) come from the kernel's launch contract
(`tawa_xdsl.contract.kernel_launch`). `.maxntid` with `.minnctapersm 1` gives ptxas the register cap at
entry that `setmaxnreg` needs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr

from tawa_xdsl.contract import NotLoweredError, kernel_launch
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects.nvgpu_async import LAUNCH_ATTR
from tawa_xdsl.dialects.ptx import (
    PARAMS_ATTR,
    REGISTER_CLASSES,
    STRUCTURED,
    LabelOp,
    ParamDeclAttr,
    PTXOp,
    RegType,
    TileTicketOp,
)

HEADER = """.version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 1024 .b8 smem[];
"""

_NUMBERED = re.compile(r"L_\w+_(\d+)$")


class KernelText:
    """The `Emitter` ops print through: body lines and label names."""

    def __init__(self, first_label: int):
        self.lines: list[str] = []
        self.labels = first_label

    def line(self, text: str) -> None:
        self.lines.append("    " + text)

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def fresh_label(self, stem: str) -> str:
        self.labels += 1
        return f"L_{stem}_{self.labels}"


def _launch(kernel: func.FuncOp) -> tuple[int, int]:
    """(threads, cluster size) from the kernel's launch attribute."""
    try:
        launch = kernel_launch(kernel)
    except NotLoweredError:
        raise OpDiagnostic(
            kernel, f"PTX printer: the kernel has no {LAUNCH_ATTR} with its threads"
        ) from None
    return launch.threads, launch.cluster


def _params(kernel: func.FuncOp) -> list[str]:
    params = kernel.attributes.get(PARAMS_ATTR)
    if not isinstance(params, ArrayAttr) or not all(
        isinstance(p, ParamDeclAttr) for p in params.data
    ):
        raise OpDiagnostic(
            kernel,
            f"PTX printer: the kernel lists no parameters ({PARAMS_ATTR}: "
            "run distribute-fragments)",
        )
    return [p.declaration() for p in params.data if isinstance(p, ParamDeclAttr)]


ENTRY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_$]*|[_$][A-Za-z0-9_$]+")
"""A PTX identifier an entry may have (PTX ISA, "Identifiers"; those that
start with % are predefined, %tid, or registers). MLIR's symbol names take
more (`@gemm.v2`, `@"gemm-v2"`, `@_`), which ptxas rejects: a syntax error."""

PREDEFINED = frozenset({"WARP_SZ"})
"""The predefined identifier that does not start with %."""


def check_entry_name(kernel: func.FuncOp) -> None:
    """Refuse, at the kernel, a name that cannot be its `.entry` name."""
    name = kernel.sym_name.data
    if not ENTRY_NAME.fullmatch(name) or name in PREDEFINED:
        raise OpDiagnostic(
            kernel,
            f"@{name} cannot be a PTX entry name, which the kernel's name is: "
            "PTX names are a letter followed by letters, digits, _ or $ (or "
            "_ or $ followed by at least one of those), and not WARP_SZ; rename "
            "the kernel",
        )


def print_kernel(kernel: func.FuncOp) -> str:
    """One `.entry`."""
    check_entry_name(kernel)
    threads, cluster = _launch(kernel)
    params = _params(kernel)
    used: dict[str, int] = {}
    first_label = 0
    ops = list(kernel.body.block.ops)
    for op in ops:
        kind = type(op)
        if kind in STRUCTURED:
            raise OpDiagnostic(
                op, "PTX printer: lower control flow first (ptx-lower-control-flow)"
            )
        if kind is LabelOp and (m := _NUMBERED.match(op.label.data)):
            first_label = max(first_label, int(m.group(1)))
    text = KernelText(first_label)
    for op in ops:
        for value in op.results:
            t = value.type
            if type(t) is not RegType:
                continue
            if not t.is_allocated:
                raise OpDiagnostic(
                    op, "PTX printer: registers are not allocated (run ptx-allocate)"
                )
            cls, end = t.cls.data, t.first.data + t.count.data
            if end > used.get(cls, 0):
                used[cls] = end
        if isinstance(op, PTXOp):
            op.print_ptx(text)
        elif type(op) is not func.ReturnOp:
            raise OpDiagnostic(op, "PTX printer: not a thread-level (ptx) op")
    prefixes = sorted((REGISTER_CLASSES[c][0][1:], c) for c in used)
    # tile counters start at zero when the module loads; each launch leaves
    # its counter at zero again (`tile.next_tile`)
    counters = sorted({op.counter.data for op in ops if type(op) is TileTicketOp})
    out = [f".global .align 4 .u32 {c};" for c in counters]
    out += [
        f".visible .entry {kernel.sym_name.data}(",
        ",\n".join("    " + p for p in params),
        ")",
        f".maxntid {threads}, 1, 1",
        ".minnctapersm 1",
    ]
    if cluster > 1:
        out.append(f".reqnctapercluster {cluster}, 1, 1")
    out.append("{")
    out += [f"    .reg {REGISTER_CLASSES[c][1]} %{p}<{used[c]}>;" for p, c in prefixes]
    out += text.lines
    out += ["    ret;", "}", ""]
    return "\n".join(out)


def print_module(kernels: Sequence[func.FuncOp]) -> str:
    """A complete PTX module with one entry per kernel."""
    return HEADER + "\n" + "\n".join(print_kernel(k) for k in kernels)
