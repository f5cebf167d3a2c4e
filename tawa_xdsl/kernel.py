"""What a tile kernel is to its callers: found by name, with typed parameters that
host arguments are checked against before anything runs."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    ModuleOp,
)
from xdsl.ir import Attribute

from tawa_xdsl.dialects.tile import KERNEL_ATTR, DescType
from tawa_xdsl.dtypes import numpy_dtype, type_name
from tawa_xdsl.interp.elementwise import to_type


class KernelArgumentError(ValueError):
    """A host argument does not fit the kernel parameter it is passed for."""


def kernels(module: ModuleOp) -> Iterator[func.FuncOp]:
    for op in module.walk():
        if isinstance(op, func.FuncOp) and KERNEL_ATTR in op.attributes:
            yield op


def find_kernel(module: ModuleOp, name: str) -> func.FuncOp:
    """The `tile.kernel` function called `name`, or an error listing the kernels."""
    found = {k.sym_name.data: k for k in kernels(module)}
    if name not in found:
        available = ", ".join(sorted(found)) or "none"
        raise KeyError(f"no tile kernel named '{name}' (kernels here: {available})")
    return found[name]


@dataclass(frozen=True)
class Param:
    """One kernel parameter: its name in the IR and its type."""

    name: str
    type: Attribute

    @property
    def is_tensor(self) -> bool:
        return isinstance(self.type, DescType)


CLUSTER_ATTR = "tile.cluster"
"""On a kernel: how many consecutive x programs form one cluster (set by `cluster`)."""
SIGNATURE_ATTR = "tile.signature"
ARG_NAMES_ATTR = "tile.arg_names"


def params(kernel: func.FuncOp) -> list[Param]:
    """The parameters callers pass: the tile-level ones, also after lowering (which
    records them in `tile.signature` / `tile.arg_names`)."""
    signature = kernel.attributes.get(SIGNATURE_ATTR)
    if isinstance(signature, FunctionType):
        names = kernel.attributes[ARG_NAMES_ATTR]
        assert isinstance(names, ArrayAttr)
        return [
            Param(n.data, t)
            for n, t in zip(names.data, signature.inputs.data, strict=True)
        ]
    return [
        Param(arg.name_hint or f"arg{i}", arg.type)
        for i, arg in enumerate(kernel.body.block.args)
    ]


def check_array(param: Param, value: Any) -> np.ndarray:
    """A numpy array that matches a `!tile.desc` parameter in rank, dtype and shape."""
    desc = param.type
    assert isinstance(desc, DescType)
    if not isinstance(value, np.ndarray):
        raise KernelArgumentError(
            f"argument '{param.name}' must be a numpy array for {desc}, got "
            f"{type(value).__name__}"
        )
    check_tensor(param, type_name(value.dtype), value.shape)
    return value


def check_tensor(
    param: Param, dtype: str, shape: Sequence[int], where: str = ""
) -> None:
    """Dtype (by name), rank and static extents of an array passed for a
    `!tile.desc` parameter; `where` prefixes the message (the kernel's name)."""
    desc = param.type
    assert isinstance(desc, DescType)
    want = type_name(numpy_dtype(desc.element_type))
    if dtype != want:
        raise KernelArgumentError(
            f"{where}argument '{param.name}' has dtype {dtype}, the kernel expects {want}"
        )
    if len(shape) != desc.rank:
        raise KernelArgumentError(
            f"{where}argument '{param.name}' has rank {len(shape)}, the kernel "
            f"expects {desc.rank}"
        )
    for axis, (got, expected) in enumerate(zip(shape, desc.get_shape(), strict=True)):
        if expected != DYNAMIC_INDEX and got != expected:
            raise KernelArgumentError(
                f"{where}argument '{param.name}' has extent {got} in dimension "
                f"{axis}, the kernel expects {expected}"
            )


def check_scalar(param: Param, value: Any) -> Any:
    """A Python/numpy number converted to the parameter's scalar type."""
    if isinstance(value, np.ndarray) and value.ndim:
        raise KernelArgumentError(
            f"argument '{param.name}' is a scalar of type {param.type}, got an array"
        )
    if not isinstance(value, int | float | np.number | np.ndarray):
        raise KernelArgumentError(
            f"argument '{param.name}' must be a number of type {param.type}, got "
            f"{type(value).__name__}"
        )
    if isinstance(param.type, IndexType):
        return int(value)
    return to_type(value, param.type)


def check_arguments(kernel: func.FuncOp, args: Sequence[Any]) -> tuple[Any, ...]:
    """Validate host arguments against the kernel's signature, in order."""
    ps = params(kernel)
    if len(args) != len(ps):
        names = ", ".join(p.name for p in ps)
        raise KernelArgumentError(
            f"kernel '{kernel.sym_name.data}' takes {len(ps)} arguments ({names}), "
            f"got {len(args)}"
        )
    return tuple(
        check_array(p, a) if p.is_tensor else check_scalar(p, a)
        for p, a in zip(ps, args, strict=True)
    )


def normalize_grid(grid: Sequence[int] | int) -> tuple[int, int, int]:
    """A 1- to 3-dimensional launch grid as (x, y, z), each extent >= 1."""
    dims = (grid,) if isinstance(grid, int) else tuple(grid)
    if not 1 <= len(dims) <= 3 or any(not isinstance(d, int) or d < 1 for d in dims):
        raise KernelArgumentError(
            f"grid must be 1 to 3 positive integers, got {grid!r}"
        )
    return (*dims, *(1,) * (3 - len(dims)))  # type: ignore[return-value]


def program_ids(grid: tuple[int, int, int]) -> Iterator[tuple[int, int, int]]:
    """Every (x, y, z) block coordinate of a grid."""
    for z, y, x in itertools.product(*(range(n) for n in reversed(grid))):
        yield x, y, z


def cluster_size(kernel: func.FuncOp) -> int:
    """The number of thread blocks per cluster (1 for a kernel without clusters)."""
    attr = kernel.attributes.get(CLUSTER_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else 1


def clusters(
    grid: tuple[int, int, int], size: int, name: str
) -> Iterator[list[tuple[int, int, int]]]:
    """The program ids of `grid` in clusters of `size` consecutive x programs, as
    the hardware groups them; a grid whose x extent is not a multiple of `size`
    cannot be launched."""
    if grid[0] % size:
        raise KernelArgumentError(
            f"{name}: runs in clusters of {size} programs along x; the grid's x "
            f"extent {grid[0]} is not a multiple of {size}"
        )
    ids = list(program_ids(grid))
    for start in range(0, len(ids), size):
        yield ids[start : start + size]
