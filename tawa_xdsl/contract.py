"""The launch contract of a lowered kernel: what a launch passes, and how.

Lowering (`convert-aref-to-nvgpu-async`) records it on the kernel as attributes:

- `nvgpu_async.abi`: one `#nvgpu_async.param<kind arg (axis a) : type>` per
  parameter, in order: a tensor map, a global tensor (pointer, extents, row
  strides) or one extent of tile-level argument `arg`, or the scalar `arg`;
- `nvgpu_async.launch`: `#nvgpu_async.launch<threads, smem, cluster>`;
- `tile.grid` / `tile.persistent`: the grid rules (`grid.Rule`), the launch
  grid of an ordinary kernel or the tiles a persistent one walks;
- `tile.signature` and its companions: the tile-level parameters callers pass
  (`signature.params`); `tile.split_k`: a split pair's `partials.Record`.

`launch_contract` is the one reader of them: the PTX printer, the runtime and
the simulators see only the `LaunchContract` it returns (`kernel_launch` for the
launch alone, which hand-written thread-level kernels carry without an ABI).
The contract is a value, not IR: `compile` keeps it in the compiled-kernel
record (`tawa_xdsl.compiled`) beside the PTX, and `to_json` / `from_json` let
the disk cache store it (types as their MLIR syntax).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, Builtin
from xdsl.ir import Attribute
from xdsl.parser import Parser

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import get_all_dialects
from tawa_xdsl.dialects.nvgpu_async import (
    ABI_ATTR,
    LAUNCH_ATTR,
    LaunchAttr,
    ParamAttr,
    ParamKind,
)
from tawa_xdsl.grid import GRID_ATTR, Rule, decode_rules
from tawa_xdsl.kernel import PERSISTENT_ATTR, KernelArgumentError
from tawa_xdsl.partials import Record, record
from tawa_xdsl.signature import Param, params


class NotLoweredError(KernelArgumentError):
    """The kernel has no launch contract yet: it is not lowered to nvgpu_async."""


@dataclass(frozen=True)
class Launch:
    """Threads per block, bytes of dynamic shared memory, blocks per cluster."""

    threads: int
    smem: int
    cluster: int


@dataclass(frozen=True)
class AbiParam:
    """One parameter of the lowered kernel: how the launch fills it from
    tile-level argument `arg` (`ParamKind`), `axis` for an extent, and its
    lowered type (a `TensorMapType` for a tensor map)."""

    kind: ParamKind
    arg: int
    type: Attribute
    axis: int | None = None


@dataclass(frozen=True)
class LaunchContract:
    """Everything a launch of a lowered kernel needs besides its code."""

    name: str
    params: tuple[Param, ...]
    """The tile-level parameters callers pass."""
    abi: tuple[AbiParam, ...]
    """The lowered kernel's parameters, in order."""
    launch: Launch
    grid: tuple[Rule, ...] | None
    """The launch grid's rule, when the stores show it."""
    persistent: tuple[Rule, ...] | None
    """A persistent kernel's tile grid: it launches at most that many programs."""
    split: Record | None
    """For one kernel of a split pair, how it is called (`partials`)."""

    @property
    def tensor_maps(self) -> frozenset[int]:
        """The tile-level arguments passed as TMA tensor maps."""
        return frozenset(p.arg for p in self.abi if p.kind == ParamKind.MAP)

    def to_json(self) -> dict[str, Any]:
        """A JSON value `from_json` reads back."""

        def rules(rs: tuple[Rule, ...] | None) -> list[list[int]] | None:
            return None if rs is None else [list(r) for r in rs]

        return {
            "name": self.name,
            "params": [
                {
                    "name": p.name,
                    "type": str(p.type),
                    "dims": list(p.dims),
                    "written": p.written,
                }
                for p in self.params
            ],
            "abi": [
                {"kind": str(p.kind), "arg": p.arg, "type": str(p.type), "axis": p.axis}
                for p in self.abi
            ],
            "launch": asdict(self.launch),
            "grid": rules(self.grid),
            "persistent": rules(self.persistent),
            "split": None if self.split is None else asdict(self.split),
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> LaunchContract:
        """The contract `to_json` wrote; a malformed value raises (KeyError,
        TypeError, ValueError or a parse error)."""

        def rules(rs: list[list[int]] | None) -> tuple[Rule, ...] | None:
            return None if rs is None else tuple(Rule(*r) for r in rs)

        split = data["split"]
        return LaunchContract(
            data["name"],
            tuple(
                Param(p["name"], _type(p["type"]), tuple(p["dims"]), p["written"])
                for p in data["params"]
            ),
            tuple(
                AbiParam(ParamKind(p["kind"]), p["arg"], _type(p["type"]), p["axis"])
                for p in data["abi"]
            ),
            Launch(**data["launch"]),
            rules(data["grid"]),
            rules(data["persistent"]),
            None
            if split is None
            else Record(**{**split, "args": tuple(split["args"])}),
        )


@functools.cache
def _types_context() -> Context:
    """Builtin and our dialects: what the types of a contract are made of."""
    ctx = Context()
    ctx.load_dialect(Builtin)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def _type(text: str) -> Attribute:
    parser = Parser(_types_context(), text)
    t = parser.parse_attribute()
    if parser.pos != len(text):
        raise ValueError(f"not one type: {text!r}")
    return t


def _not_lowered(kernel: func.FuncOp) -> NotLoweredError:
    return NotLoweredError(
        f"@{kernel.sym_name.data} is not lowered to nvgpu_async; run "
        "convert-aref-to-nvgpu-async (or tawa-hopper-pipeline) first"
    )


def is_lowered(kernel: func.FuncOp) -> bool:
    """Whether the kernel carries a launch (it is lowered to nvgpu_async, or
    further)."""
    return LAUNCH_ATTR in kernel.attributes


def kernel_launch(kernel: func.FuncOp) -> Launch:
    """The kernel's launch; `NotLoweredError` when it has none."""
    attr = LaunchAttr.of(kernel)
    if attr is None:
        raise _not_lowered(kernel)
    return Launch(attr.threads.data, attr.smem.data, attr.cluster.data)


def launch_contract(kernel: func.FuncOp) -> LaunchContract:
    """The launch contract lowering recorded on `kernel` (see the module
    docstring). `NotLoweredError` for a kernel that is not lowered; a malformed
    ABI, or one that contradicts the kernel's parameters, is reported at the
    kernel."""
    abi = kernel.attributes.get(ABI_ATTR)
    if abi is None or LAUNCH_ATTR not in kernel.attributes:
        raise _not_lowered(kernel)
    if not isinstance(abi, ArrayAttr) or not all(
        isinstance(p, ParamAttr) for p in abi.data
    ):
        raise OpDiagnostic(
            kernel, f"{ABI_ATTR} lists one #{ParamAttr.name} per parameter, got {abi}"
        )
    entries = [p for p in abi.data if isinstance(p, ParamAttr)]
    inputs = list(kernel.function_type.inputs.data)  # none at the thread level
    if inputs and len(inputs) != len(entries):
        raise OpDiagnostic(
            kernel,
            f"{ABI_ATTR} lists {len(entries)} parameters, the kernel has {len(inputs)}",
        )
    if inputs and inputs != [p.type for p in entries]:
        raise OpDiagnostic(
            kernel,
            f"{ABI_ATTR} gives the parameter types "
            f"({', '.join(str(p.type) for p in entries)}), the kernel takes "
            f"({', '.join(map(str, inputs))})",
        )
    callers = tuple(params(kernel))
    stray = next((p for p in entries if p.arg.data >= len(callers)), None)
    if stray is not None:
        raise OpDiagnostic(
            kernel,
            f"{ABI_ATTR}: {stray} passes argument {stray.arg.data}; callers pass "
            f"{len(callers)}",
        )
    grid, persistent = (
        tuple(decode_rules(kernel.attributes[a])) if a in kernel.attributes else None
        for a in (GRID_ATTR, PERSISTENT_ATTR)
    )
    return LaunchContract(
        kernel.sym_name.data,
        callers,
        tuple(
            AbiParam(p.param_kind, p.arg.data, p.type, p.axis_index) for p in entries
        ),
        kernel_launch(kernel),
        grid,
        persistent,
        record(kernel),
    )
