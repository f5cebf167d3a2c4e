"""Host arguments checked against a tile kernel's parameters before anything runs
(the parameters themselves, and the shape contract, are `tawa_xdsl.signature`'s).

Every executor (`interpret`, `simulate`, the compiled GPU kernel) runs the same
checks, `check_arguments`, so a bad argument is refused alike on a CPU and on the
GPU, and CI can test the refusals without a GPU. An executor turns each array
argument into an array of its own (a numpy array on the CPU, a device array on
the GPU) together with an `ArrayView` of it; the checks see only the views:
dtype, rank and static extents against the parameter's type, the shape
contract, writability of the arrays the kernel stores into, the type and
range of every scalar, and memory shared between arrays (an input sharing an
output's memory is read from a copy: `check_overlaps`). The GPU then adds only
what TMA needs (alignment).
"""

from __future__ import annotations

import itertools
import math
import numbers
import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, IntegerType
from xdsl.ir import Attribute

from tawa_xdsl.dialects.tile import DescType
from tawa_xdsl.dlpack import ArrayError, as_host_array, dlpack_device
from tawa_xdsl.dtypes import is_float_dtype, numpy_dtype, type_name
from tawa_xdsl.signature import (
    ARG_DIMS_ATTR,
    ARG_NAMES_ATTR,
    DIMS_ATTR,
    OUTPUTS_ATTR,
    SIGNATURE_ATTR,
    Param,
    find_kernel,
    first_mismatch,
    kernels,
    params,
    signature_record,
    verify_signatures,
)
from tawa_xdsl.target import INDEX_BITS, INDEX_MAX

__all__ = [  # the signature, re-exported: callers know kernels by this module
    "ARG_DIMS_ATTR",
    "ARG_NAMES_ATTR",
    "DIMS_ATTR",
    "OUTPUTS_ATTR",
    "SIGNATURE_ATTR",
    "ArrayView",
    "KernelArgumentError",
    "Param",
    "check_arguments",
    "check_host_arguments",
    "check_scalar",
    "cluster_size",
    "clusters",
    "find_kernel",
    "kernel_grid",
    "kernels",
    "normalize_grid",
    "params",
    "program_ids",
    "signature_record",
    "verify_signatures",
]


class KernelArgumentError(ValueError):
    """A host argument does not fit the kernel parameter it is passed for."""


CLUSTER_ATTR = "tile.cluster"
"""On a kernel: how many consecutive x programs form one cluster (set by `cluster`)."""
PERSISTENT_ATTR = "tile.persistent"
"""The grid rule of a persistent kernel's tiles (`persistent`): the runtime
launches min(resident programs, tiles) programs from it."""


# ------------------------------------------------------------------ arguments


@dataclass(frozen=True)
class ArrayView:
    """What the shared checks see of an array, whichever library made it: its
    dtype by name (`dtypes.DTYPES`), shape, strides in elements, whether the
    kernel may write into it, and the bytes of memory it spans, where known
    (`byte_span`; not part of its value: buffers of ours leave it out)."""

    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    writeable: bool = True
    span: tuple[int, int] | None = field(default=None, compare=False)


def byte_span(
    address: int, shape: Sequence[int], strides: Sequence[int], itemsize: int
) -> tuple[int, int] | None:
    """The bytes [first, past the last) that an array at `address` with `shape`
    and `strides` (in elements) spans; None for an empty array."""
    if any(d == 0 for d in shape):
        return None
    low = sum(min(0, (d - 1) * s) for d, s in zip(shape, strides, strict=True))
    high = sum(max(0, (d - 1) * s) for d, s in zip(shape, strides, strict=True))
    return address + low * itemsize, address + (high + 1) * itemsize


def numpy_view(array: np.ndarray) -> ArrayView:
    strides = tuple(s // array.itemsize for s in array.strides)
    return ArrayView(
        type_name(array.dtype),
        tuple(array.shape),
        strides,
        bool(array.flags.writeable),
        byte_span(array.ctypes.data, array.shape, strides, array.itemsize),
    )


A = TypeVar("A")


def check_arguments(
    kernel_name: str,
    ps: Sequence[Param],
    args: Sequence[Any],
    to_array: Callable[[Any], tuple[A, ArrayView]],
    copy: Callable[[A, str], A],
) -> list[Any]:
    """Validate host arguments against the parameters, in order: their count; each
    array (made by the executor's `to_array`, which raises `ArrayError` for what
    it cannot take) against its parameter; the shape contract across arrays; each
    scalar's type and range; no two arrays the kernel writes sharing memory
    (`check_overlaps`). An array only read that shares memory with one the
    kernel writes is replaced by the executor's `copy` of it (given the
    written parameter's name), made before the launch. Returns the executor's
    arrays and the scalars converted to their parameter types."""
    if len(args) != len(ps):
        names = ", ".join(p.name for p in ps)
        raise KernelArgumentError(
            f"{kernel_name}: takes {len(ps)} arguments ({names}), got {len(args)}"
        )
    values: list[Any] = []
    extents: list[tuple[Param, tuple[int, ...]]] = []
    views: list[tuple[int, Param, ArrayView]] = []
    for p, arg in zip(ps, args, strict=True):
        where = f"{kernel_name}: argument '{p.name}'"
        if not p.is_tensor:
            values.append(check_scalar(where, p.type, arg))
            continue
        try:
            array, view = to_array(arg)
        except ArrayError as e:
            raise KernelArgumentError(
                f"{where} {e} (the kernel expects {p.type})"
            ) from None
        _check_array(where, p, view)
        views.append((len(values), p, view))
        values.append(array)
        extents.append((p, view.shape))
    check_contract(kernel_name, extents)
    for i, writer in check_overlaps(kernel_name, views).items():
        values[i] = copy(values[i], writer.name)
    return values


def check_overlaps(
    kernel_name: str, views: Sequence[tuple[int, Param, ArrayView]]
) -> dict[int, Param]:
    """The arrays only read that share bytes with one the kernel writes (by
    their index in `views`' first field), each with the first such written
    parameter. The kernel would read what it overwrote (D = A @ B + R with R
    in D's memory: one program's stores reach another's loads), so the
    executor reads them from a copy made before the launch, which is right for
    every kernel. Two written arrays that share bytes are refused: no copy
    tells which store should land. Arrays only read may share memory with each
    other (A and its transpose for A @ A^T). Compared by the bytes each spans,
    first to last, so interleaved views of one buffer count as sharing."""
    copied: dict[int, Param] = {}
    for n, (i, p, view) in enumerate(views):
        for j, q, other in views[n + 1 :]:
            if not (p.written or q.written) or view.span is None or other.span is None:
                continue
            if not (view.span[0] < other.span[1] and other.span[0] < view.span[1]):
                continue
            if p.written and q.written:
                raise KernelArgumentError(
                    f"{kernel_name}: arguments '{p.name}' and '{q.name}', which "
                    "the kernel both writes, overlap in memory; pass arrays that "
                    "share no memory"
                )
            read, writer = (j, p) if p.written else (i, q)
            copied.setdefault(read, writer)
    return copied


def _check_array(where: str, p: Param, view: ArrayView) -> None:
    desc = p.type
    assert isinstance(desc, DescType)
    want = type_name(numpy_dtype(desc.element_type))
    if view.dtype != want:
        raise KernelArgumentError(
            f"{where} has dtype {view.dtype}, the kernel expects {want}"
        )
    if len(view.shape) != desc.rank:
        raise KernelArgumentError(
            f"{where} has rank {len(view.shape)}, the kernel expects {desc.rank}"
        )
    for axis, (got, expected) in enumerate(
        zip(view.shape, desc.get_shape(), strict=True)
    ):
        if expected != DYNAMIC_INDEX and got != expected:
            raise KernelArgumentError(
                f"{where} has extent {got} in dimension {axis}, the kernel expects "
                f"{expected}"
            )
        if got > INDEX_MAX:  # the kernel reads extents as index values
            raise KernelArgumentError(
                f"{where} has extent {got} in dimension {axis}; kernels index "
                f"with {INDEX_BITS}-bit integers (at most {INDEX_MAX})"
            )
    if p.written and not view.writeable:
        raise KernelArgumentError(
            f"{where} is read-only, but the kernel stores into it"
        )


def check_contract(
    kernel_name: str, shapes: Sequence[tuple[Param, tuple[int, ...]]]
) -> None:
    """Dimensions of one name have one extent across all arrays (`tile.dims`);
    the message names both arguments, their dimensions and extents."""
    mismatch = first_mismatch(shapes)
    if mismatch:
        raise KernelArgumentError(f"{kernel_name}: {mismatch}")


def check_scalar(where: str, t: Attribute, value: Any) -> Any:
    """`value` as a scalar of type `t` (a Python int for `index`, a numpy scalar
    otherwise), or an error: integer parameters take integers only (not bools,
    floats or non-integral numpy values) in the range of their width (`index`:
    `INDEX_BITS`, signed), `i1` takes bools, float parameters take real numbers
    that do not overflow the type (inf and nan pass as themselves)."""
    what = f"{where} is a scalar of type {t}"
    if isinstance(value, np.ndarray):
        if value.ndim:
            raise KernelArgumentError(f"{what}, got an array of shape {value.shape}")
        value = value[()]
    if isinstance(t, IntegerType) and t.width.data == 1:
        if not isinstance(value, bool | np.bool_):
            raise KernelArgumentError(f"{what}, got {_describe(value)}; pass a bool")
        return bool(value)
    if isinstance(t, IndexType | IntegerType):
        if isinstance(value, bool | np.bool_):
            raise KernelArgumentError(f"{what}, got a bool; pass an integer")
        try:
            number = operator.index(value)
        except TypeError:
            raise KernelArgumentError(
                f"{what}, got {_describe(value)}; pass an integer"
            ) from None
        bits = INDEX_BITS if isinstance(t, IndexType) else t.width.data
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        if not low <= number <= high:
            raise KernelArgumentError(
                f"{what}, got {_short(number)}, outside [{low}, {high}]"
                + (
                    f" ({INDEX_BITS}-bit on the GPU)"
                    if isinstance(t, IndexType)
                    else ""
                )
            )
        return number if isinstance(t, IndexType) else numpy_dtype(t).type(number)
    try:
        dtype = numpy_dtype(t)
    except TypeError:  # not a scalar type we know
        dtype = None
    if dtype is None or not is_float_dtype(dtype):
        raise KernelArgumentError(f"{where} has type {t}, which no executor can pass")
    if isinstance(value, bool | np.bool_) or not (
        isinstance(value, numbers.Real) or _is_float_scalar(value)
    ):
        raise KernelArgumentError(f"{what}, got {_describe(value)}; pass a real number")
    overflow = KernelArgumentError(f"{what}, got {_short(value)}, which overflows {t}")
    try:
        real = float(value)
    except OverflowError:  # an int beyond every float
        raise overflow from None
    with np.errstate(over="ignore"):
        converted = np.asarray(real).astype(dtype)[()]
    if math.isfinite(real) and not math.isfinite(float(converted)):
        raise overflow
    return converted


def _is_float_scalar(value: Any) -> bool:
    """numpy scalars of float dtypes numbers.Real does not know (bf16, fp8)."""
    return isinstance(value, np.generic) and is_float_dtype(value.dtype)


def _describe(value: Any) -> str:
    if isinstance(value, np.generic):
        return f"a numpy {type_name(value.dtype)} ({_short(value)})"
    return f"{type(value).__name__} {_short(value)}"


def _short(value: Any) -> str:
    """A value as messages show it: its repr, cut short (2**1000 is long)."""
    text = repr(value) if not isinstance(value, np.generic) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def host_array(value: Any) -> tuple[np.ndarray, ArrayView]:
    """An argument of `interpret` / `simulate` as a numpy array sharing its memory:
    numpy arrays, and anything with DLPack on the CPU (torch CPU tensors, ...)."""
    array = as_host_array(value)
    if array is None:
        if dlpack_device(value) is not None or hasattr(
            value, "__cuda_array_interface__"
        ):
            raise ArrayError(
                "is on a GPU; interpret and simulate run on the CPU (pass a host "
                "copy, e.g. tensor.cpu(), and copy it back)"
            )
        raise ArrayError(
            f"must be an array (numpy, or any array with __dlpack__ on the CPU), "
            f"got {type(value).__name__}"
        )
    return array, numpy_view(array)


def check_host_arguments(kernel: func.FuncOp, args: Sequence[Any]) -> list[Any]:
    """The CPU executors' arguments: numpy arrays for the tensors, checked scalars."""
    return check_arguments(
        kernel.sym_name.data, params(kernel), args, host_array, _host_copy
    )


def _host_copy(array: np.ndarray, writer: str) -> np.ndarray:
    """A read-only host array that shares memory with `writer`, copied before
    the CPU executors run any program (`check_overlaps`)."""
    return array.copy()


# ------------------------------------------------------------------------ grid


def normalize_grid(
    grid: Any, kernel_name: str, cluster: int = 1, persistent: bool = False
) -> tuple[int, int, int]:
    """A launch grid of 1 to 3 positive integers as (x, y, z); a kernel that runs
    in clusters needs an x extent that is a multiple of the cluster size, a
    persistent one a grid along x only (its programs walk every tile by x:
    more along y or z would each compute every tile again)."""
    dims: tuple[Any, ...] | None = None
    if isinstance(grid, Sequence) and not isinstance(grid, str | bytes):
        dims = tuple(grid)
    if dims is None or not 1 <= len(dims) <= 3 or not all(is_extent(d) for d in dims):
        raise KernelArgumentError(
            f"{kernel_name}: grid must be 1 to 3 positive integers in a tuple, "
            f"e.g. grid=(4, 2); got {grid!r}"
        )
    x, y, z = (*(operator.index(d) for d in dims), *(1,) * (3 - len(dims)))
    if x % cluster:
        raise KernelArgumentError(
            f"{kernel_name}: runs in clusters of {cluster} programs along x; the "
            f"grid's x extent {x} is not a multiple of {cluster}"
        )
    if persistent and (y, z) != (1, 1):
        raise KernelArgumentError(
            f"{kernel_name}: is persistent (its programs walk the output tiles "
            f"along x), so its grid is (programs,); got {grid!r}"
        )
    return x, y, z


def kernel_grid(kernel: func.FuncOp, grid: Any) -> tuple[int, int, int]:
    """`grid` normalized and checked against what `kernel` was made for: its
    clusters and its persistent walk."""
    return normalize_grid(
        grid,
        kernel.sym_name.data,
        cluster_size(kernel),
        PERSISTENT_ATTR in kernel.attributes,
    )


def is_extent(value: object) -> bool:
    """Whether `value` is an extent a kernel can index: a positive integer
    (Python's or numpy's, not a bool) that fits its index registers, as an
    array's extent must (`check_arguments`); a grid's extents and those
    `explain(M=...)` takes alike."""
    if isinstance(value, bool | np.bool_):
        return False
    try:
        return 1 <= operator.index(value) <= INDEX_MAX  # type: ignore[arg-type]
    except TypeError:
        return False


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
    the hardware groups them (`normalize_grid` checks that they divide it)."""
    normalize_grid(grid, name, size)
    ids = list(program_ids(grid))
    for start in range(0, len(ids), size):
        yield ids[start : start + size]
