"""The `ptx` target: `tawa-opt ... -t ptx` prints a PTX module for sm_90a.

It runs whatever the IR still needs, judged from the IR itself, then prints
(`ptx_printer.py`):
- kernels at the nvgpu_async level (what `tawa-hopper-pipeline` leaves: block
  arguments, ops of other dialects) go through `select-store-path` and
  `distribute-fragments`;
- thread-level kernels not yet allocated through `ptx-skip-unit-scale` and
  `ptx-allocate`;
- kernels with structured control flow through `ptx-lower-control-flow`.
So `-t ptx` works on the output of any prefix of that chain.

The CLI target verifies what these stages leave, as `tawa-opt` verifies IR
between passes: a stage that leaves invalid IR is an internal error at the op,
naming the stage, never a PTX file printed from it. Verifying thread-level IR
costs about as much as lowering it, so the target verifies once, after the
last stage, and only when that fails (or a stage crashes) reruns the stages on
a copy of its input, verifying after each, to name the first at fault.
`--disable-verify` turns this off, as it does between passes
(`UnverifiedPTXTarget`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from tawa_xdsl.contract import is_lowered
from tawa_xdsl.diagnostics import (
    InternalError,
    OpDiagnostic,
    each_kernel,
    is_user_error,
    stage,
    verify_located,
)
from tawa_xdsl.dialects.ptx import PTX, STRUCTURED, RegType
from tawa_xdsl.kernel import kernels
from tawa_xdsl.lowering import get_all_lowering_passes
from tawa_xdsl.lowering.ptx_allocate import allocate_kernel
from tawa_xdsl.lowering.ptx_contract_fma import contract_fma
from tawa_xdsl.lowering.ptx_control_flow import lower_control_flow
from tawa_xdsl.lowering.ptx_printer import print_module
from tawa_xdsl.lowering.ptx_skip_unit_scale import skip_unit_scale

DISTRIBUTION = ("select-store-path", "distribute-fragments")
"""The passes from nvgpu_async IR to thread-level IR, in order."""

AfterStage = Callable[[str, Operation], None]
"""Called with a stage's name and the IR it changed (the module, or a kernel)."""


def lowered_kernels(module: ModuleOp) -> list[func.FuncOp]:
    return [k for k in kernels(module) if is_lowered(k)]


def is_thread_level(kernel: func.FuncOp) -> bool:
    """No block arguments and nothing but ptx ops (and the return)."""
    prefix = PTX.name + "."
    return not kernel.body.block.args and all(
        op.name.startswith(prefix) or isinstance(op, func.ReturnOp)
        for op in kernel.body.walk()
    )


def is_allocated(kernel: func.FuncOp) -> bool:
    return all(
        not isinstance(r.type, RegType) or r.type.is_allocated
        for op in kernel.body.walk()
        for r in op.results
    )


def _lowered(module: ModuleOp) -> list[func.FuncOp]:
    """The module's kernels, refused at the first one not lowered yet."""
    found = list(kernels(module))
    if not found:
        raise DiagnosticException(
            "-t ptx: the module has no tile kernels (func.func with the "
            "tile.kernel attribute) to print"
        )
    for kernel in found:
        if not is_lowered(kernel):
            raise OpDiagnostic(
                kernel,
                f"-t ptx needs lowered kernels; @{kernel.sym_name.data} is not: run "
                "tawa-hopper-pipeline (or aref-partition,pipeline,"
                "convert-aref-to-nvgpu-async) first",
            )
    return found


def lower_to_ptx(
    ctx: Context, module: ModuleOp, after: AfterStage | None = None
) -> list[func.FuncOp]:
    """Run the stages the module's kernels still need, in place, calling
    `after` once each has run; returns the kernels, ready to print."""
    lowered = _lowered(module)
    if not all(is_thread_level(k) for k in lowered):
        passes = get_all_lowering_passes()
        for name in DISTRIBUTION:
            with stage(f"-t ptx: {name}"):
                passes[name]()().apply(ctx, module)
            if after is not None:
                after(f"-t ptx: {name}", module)
        lowered = lowered_kernels(module)
    each_kernel(lowered, lambda kernel: _finish(kernel, after))
    return lowered


def _finish(kernel: func.FuncOp, after: AfterStage | None) -> None:
    """Allocate a thread-level kernel's registers and lower its control flow."""
    if not is_allocated(kernel):
        _step("ptx-skip-unit-scale", skip_unit_scale, kernel, after)
        _step("ptx-contract-fma", contract_fma, kernel, after)
        _step("ptx-allocate", allocate_kernel, kernel, after)
    if any(isinstance(op, STRUCTURED) for op in kernel.body.walk()):
        _step("ptx-lower-control-flow", lower_control_flow, kernel, after)


def _step(
    name: str,
    run: Callable[[func.FuncOp], None],
    kernel: func.FuncOp,
    after: AfterStage | None,
) -> None:
    with stage(f"-t ptx: {name}"):
        run(kernel)
    if after is not None:
        after(f"-t ptx: {name}", kernel)


def lower_verified(ctx: Context, module: ModuleOp) -> list[func.FuncOp]:
    """`lower_to_ptx`, the IR verified after every stage (see the module
    docstring)."""
    untouched = module.clone()
    try:
        ready = lower_to_ptx(ctx, module)
        verify_stage("-t ptx", module)
    except Exception as e:
        if is_user_error(e):
            raise
        lower_to_ptx(ctx, untouched, verify_stage)  # raises at the stage at fault
        raise
    return ready


def verify_stage(name: str, op: Operation) -> None:
    """The IR a stage of the target left must verify: if not, that stage has a
    bug, reported at the op (the IR came verified from the driver)."""
    try:
        verify_located(op)
    except OpDiagnostic as e:
        raise InternalError(
            name, f"left invalid IR: {e.op.name}: {e.message}", e.op
        ) from e
    except DiagnosticException as e:
        raise InternalError.wrap(name, e) from e


def _ptx(ctx: Context, module: ModuleOp, verify: bool = False) -> str:
    ready = (lower_verified if verify else lower_to_ptx)(ctx, module)
    with stage("-t ptx: the PTX printer"):
        return print_module(ready)


def kernel_ptx(kernel: func.FuncOp) -> str:
    """PTX text for one lowered kernel, which is left as it is (what `compile`
    records beside the kernel's launch contract, `compiled.from_lowered`)."""
    from tawa_xdsl.registry import make_context

    return _ptx(make_context(), ModuleOp([kernel.clone()]))


def to_ptx(module: ModuleOp) -> str:
    """PTX text for every lowered kernel of `module`, which is left as it is."""
    from tawa_xdsl.registry import make_context

    return _ptx(make_context(), module.clone())


@dataclass(frozen=True)
class PTXTarget(Target):
    """PTX ISA 8.0 for sm_90a, one `.entry` per kernel."""

    name = "ptx"
    verify: ClassVar[bool] = True
    """Verify what the stages leave (`lower_verified`)."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(_ptx(ctx, module, verify=self.verify))


@dataclass(frozen=True)
class UnverifiedPTXTarget(PTXTarget):
    """`-t ptx` under `--disable-verify`: the stages' IR is not verified, as
    the IR between passes is not."""

    verify = False
