"""The compiled-kernel record: what `compile` makes of one kernel, and all the
runtime reads (`runtime.Kernel` loads and launches it). It holds no IR: the
kernel's name, its PTX, its launch contract (`contract.LaunchContract`) and
the options it was compiled with, and it round-trips through JSON, so the disk
cache (`kernel_cache`) stores records and a second process launches without
compiling."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from tawa_xdsl.contract import LaunchContract, launch_contract
from tawa_xdsl.kernel import find_kernel


@dataclass(frozen=True)
class CompiledKernel:
    """One compiled kernel (see the module docstring)."""

    name: str
    ptx: str
    contract: LaunchContract
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """The resolved compile options (`CompileOptions.as_dict`), for reports."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ptx": self.ptx,
            "contract": self.contract.to_json(),
            "options": dict(self.options),
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> CompiledKernel:
        """The record `to_json` wrote; a malformed value raises."""
        if not isinstance(data["name"], str) or not isinstance(data["ptx"], str):
            raise TypeError("a compiled kernel has a name and PTX text")
        return CompiledKernel(
            data["name"],
            data["ptx"],
            LaunchContract.from_json(data["contract"]),
            MappingProxyType(dict(data["options"])),
        )


def from_lowered(
    module: ModuleOp, kernel_name: str, options: Mapping[str, Any] | None = None
) -> CompiledKernel:
    """The record of `kernel_name` of a module already lowered to nvgpu_async
    (by `compile`, or by a pass order of your own): its contract, then its PTX.
    `contract.NotLoweredError` for a kernel that is not lowered."""
    from tawa_xdsl.lowering.ptx_target import kernel_ptx

    kernel = find_kernel(module, kernel_name)
    contract = launch_contract(kernel)
    return CompiledKernel(
        kernel_name, kernel_ptx(kernel), contract, MappingProxyType(dict(options or {}))
    )
