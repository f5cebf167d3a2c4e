"""A tile kernel's signature as callers see it: its parameters (names, types, the
dimension names of the shape contract, which ones it stores into), read from the
tile-level arguments or, after lowering, from the record lowering leaves. Kept
apart from the argument checks (`tawa_xdsl.kernel`) and free of numpy, so tools
that only parse IR can verify `tile.dims` without importing it.

The shape contract: a `!tile.desc` parameter may name its dimensions with the
argument attribute `tile.dims = ["M", "K"]` ("" leaves a dimension unnamed).
Dimensions of one name must have one extent across all arguments, so a GEMM
called with A of K = 128 and B of K = 64 is refused instead of reading B's
missing columns as zeros (`tawa_xdsl.kernel.check_arguments`; static extents
that disagree are refused here). Lowering records the names with the rest of the
tile-level signature (`tile.signature`, `tile.arg_names`, `tile.arg_dims`,
`tile.outputs`), so `params` reads the same contract at every level."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    VectorType,
)
from xdsl.ir import Attribute

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects.tile import KERNEL_ATTR, DescType, StoreOp


def kernels(module: ModuleOp) -> Iterator[func.FuncOp]:
    """The functions marked `tile.kernel`. The marker is a unit attribute on a
    `func.func`; any other value (`tile.kernel = 3`, a string, an array) or
    carrier is refused where it is written, not taken as the marker."""
    for op in module.walk():
        marker = op.attributes.get(KERNEL_ATTR)
        if marker is None:
            continue
        if not isinstance(marker, UnitAttr):
            raise OpDiagnostic(
                op,
                f"{KERNEL_ATTR} = {marker}: the kernel marker is a unit attribute "
                f"(write `attributes {{{KERNEL_ATTR}}}`), it takes no value",
            )
        if not isinstance(op, func.FuncOp):
            raise OpDiagnostic(
                op, f"{KERNEL_ATTR} marks a func.func; {op.name} cannot be a kernel"
            )
        yield op


class UnknownKernelError(KeyError):
    """No tile kernel of that name in the module; the message lists those there.
    (A KeyError that prints its message as written, not quoted.)"""

    def __str__(self) -> str:
        return str(self.args[0])


def find_kernel(module: ModuleOp, name: str) -> func.FuncOp:
    """The `tile.kernel` function called `name`, or an error listing the kernels
    (at a function of that name not marked as a kernel: the marker forgotten).
    A name that is no `str` is a `TypeError` (it was looked up as text: "no
    tile kernel named 'None'"); one written with its `@` says to drop it."""
    if not isinstance(name, str):
        raise TypeError(
            "the kernel name must be a str (its function's name, without @), got "
            f"{type(name).__name__}"
        )
    found = {k.sym_name.data: k for k in kernels(module)}
    if name in found:
        return found[name]
    if name.startswith("@") and name[1:] in found:
        raise UnknownKernelError(
            f"no tile kernel named '{name}': name it without the @ ('{name[1:]}')"
        )
    for op in module.walk():
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            raise OpDiagnostic(
                op,
                f"@{name} is not marked as a tile kernel: write `attributes "
                f"{{{KERNEL_ATTR}}}` after its parameters",
            )
    available = ", ".join(sorted(found)) or "none"
    raise UnknownKernelError(
        f"no tile kernel named '{name}' (kernels here: {available})"
    )


@dataclass(frozen=True)
class Param:
    """One kernel parameter: its name in the IR, its type, the names of its
    dimensions (`tile.dims`; empty when it names none) and whether the kernel
    stores into it (then the caller's array must be writable, and a copy of it is
    written back)."""

    name: str
    type: Attribute
    dims: tuple[str, ...] = ()
    written: bool = False

    @property
    def is_tensor(self) -> bool:
        return isinstance(self.type, DescType)


DIMS_ATTR = "tile.dims"
"""On a `!tile.desc` parameter: the names of its dimensions (the shape contract)."""
SIGNATURE_ATTR = "tile.signature"
"""On a lowered kernel: the tile-level parameter types callers pass."""
ARG_NAMES_ATTR = "tile.arg_names"
"""On a lowered kernel: the tile-level parameter names."""
ARG_DIMS_ATTR = "tile.arg_dims"
"""On a lowered kernel: each tile-level parameter's `tile.dims` ([] for none)."""
OUTPUTS_ATTR = "tile.outputs"
"""On a lowered kernel: the names of the tile-level parameters it stores into."""


def params(kernel: func.FuncOp) -> list[Param]:
    """The parameters callers pass: the tile-level ones, also after lowering (which
    records them in `tile.signature` / `tile.arg_names` / `tile.arg_dims` /
    `tile.outputs`). A malformed `tile.dims` is reported at the kernel."""
    signature = kernel.attributes.get(SIGNATURE_ATTR)
    if isinstance(signature, FunctionType):
        found = _recorded_params(kernel, signature)
    else:
        found = _tile_params(kernel)
    _check_static_contract(kernel, found)
    return found


def _tile_params(kernel: func.FuncOp) -> list[Param]:
    if len(kernel.body.blocks) != 1:
        raise OpDiagnostic(kernel, "a tile kernel needs a body of one block")
    if kernel.function_type.outputs.data:
        raise OpDiagnostic(
            kernel,
            f"@{kernel.sym_name.data} returns a value; a tile kernel returns "
            "nothing and writes its outputs with tile.store",
        )
    args = kernel.body.block.args
    stored = {op.desc for op in kernel.walk() if isinstance(op, StoreOp)}
    if not stored <= set(args):  # a descriptor passed on (not by our passes)
        stored = {a for a in args if isinstance(a.type, DescType)}  # assume all
    attrs = kernel.arg_attrs.data if kernel.arg_attrs else [None] * len(args)
    if len(attrs) != len(args):
        raise OpDiagnostic(
            kernel, f"has {len(args)} arguments but {len(attrs)} argument attributes"
        )
    found = []
    for i, (arg, entry) in enumerate(zip(args, attrs, strict=True)):
        name = arg.name_hint or f"arg{i}"
        if isinstance(arg.type, TensorType | MemRefType | VectorType):
            raise OpDiagnostic(
                kernel,
                f"parameter %{name} has type {arg.type}; a tile kernel takes "
                "tensors as !tile.desc and scalars (index, integers, floats)",
            )
        value = entry.data.get(DIMS_ATTR) if isinstance(entry, DictionaryAttr) else None
        dims = _dims(kernel, name, arg.type, value)
        found.append(Param(name, arg.type, dims, arg in stored))
    return found


def _recorded_params(kernel: func.FuncOp, signature: FunctionType) -> list[Param]:
    types = signature.inputs.data
    names = _record(kernel, ARG_NAMES_ATTR, len(types), StringAttr)
    if names is None:
        raise OpDiagnostic(kernel, f"{SIGNATURE_ATTR} needs {ARG_NAMES_ATTR}")
    dims = _record(kernel, ARG_DIMS_ATTR, len(types), ArrayAttr)
    outputs = _record(kernel, OUTPUTS_ATTR, None, StringAttr)
    written = {s.data for s in outputs} if outputs is not None else None
    return [
        Param(
            name.data,
            t,
            _dims(kernel, name.data, t, d if d is not None and d.data else None),
            written is None or name.data in written,  # unrecorded: assume written
        )
        for name, t, d in zip(
            names, types, dims if dims is not None else [None] * len(types), strict=True
        )
    ]


def _record(
    kernel: func.FuncOp, attr: str, count: int | None, kind: type[Attribute]
) -> list[Any] | None:
    """A lowered kernel's record `attr`: an array of `count` entries of `kind`."""
    value = kernel.attributes.get(attr)
    if value is None:
        return None
    if (
        not isinstance(value, ArrayAttr)
        or not all(isinstance(v, kind) for v in value.data)
        or (count is not None and len(value.data) != count)
    ):
        raise OpDiagnostic(
            kernel,
            f"{attr} must be an array of {kind.__name__}"
            + (f", one per parameter of {SIGNATURE_ATTR}" if count is not None else ""),
        )
    return list(value.data)


def _dims(
    kernel: func.FuncOp, name: str, t: Attribute, value: Attribute | None
) -> tuple[str, ...]:
    """The dimension names `value` gives parameter `name`, checked against its type."""
    if value is None:
        return ()
    where = f"{DIMS_ATTR} of %{name}"
    if not isinstance(t, DescType):
        raise OpDiagnostic(
            kernel, f"{where}: only !tile.desc parameters have dimensions"
        )
    if not isinstance(value, ArrayAttr) or not all(
        isinstance(n, StringAttr) for n in value.data
    ):
        raise OpDiagnostic(
            kernel,
            f'{where} must be an array of strings (one per dimension, "" for none)',
        )
    if len(value.data) != t.rank:
        raise OpDiagnostic(
            kernel,
            f"{where} names {len(value.data)} dimensions but {t} has {t.rank}",
        )
    return tuple(n.data for n in value.data if isinstance(n, StringAttr))


def first_mismatch(shapes: Sequence[tuple[Param, Sequence[int]]]) -> str | None:
    """The first two dimensions of one name whose extents differ, described
    (extents unknown in a type are skipped); None when all agree."""
    first: dict[str, tuple[Param, int, int]] = {}
    for p, shape in shapes:
        for axis, name in enumerate(p.dims):
            if not name or shape[axis] == DYNAMIC_INDEX:
                continue
            pa, axis_a, extent_a = first.setdefault(name, (p, axis, shape[axis]))
            if extent_a != shape[axis]:
                return (
                    f"argument '{p.name}' dimension {axis} ({name}) has extent "
                    f"{shape[axis]} but argument '{pa.name}' dimension {axis_a} "
                    f"({name}) has extent {extent_a}"
                )
    return None


def _check_static_contract(kernel: func.FuncOp, ps: Sequence[Param]) -> None:
    """Static extents under one dimension name must agree in the types."""
    mismatch = first_mismatch(
        [(p, p.type.get_shape()) for p in ps if isinstance(p.type, DescType)]
    )
    if mismatch:
        raise OpDiagnostic(kernel, f"{DIMS_ATTR}: {mismatch}")


def signature_record(ps: Sequence[Param]) -> dict[str, Attribute]:
    """The attributes by which a lowered kernel keeps its tile-level parameters
    (read back by `params`): types, names, dimension names and outputs."""
    return {
        SIGNATURE_ATTR: FunctionType.from_lists([p.type for p in ps], []),
        ARG_NAMES_ATTR: ArrayAttr(StringAttr(p.name) for p in ps),
        ARG_DIMS_ATTR: ArrayAttr(ArrayAttr(StringAttr(n) for n in p.dims) for p in ps),
        OUTPUTS_ATTR: ArrayAttr(StringAttr(p.name) for p in ps if p.written),
    }


def verify_signatures(module: ModuleOp) -> None:
    """Check every kernel's `tile.dims` (as `params` does), for tools that only parse."""
    for kernel in kernels(module):
        params(kernel)
