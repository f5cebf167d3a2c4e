"""Arrays a kernel is called with, as the GPU sees them, whatever library made them.

- Device arrays are passed by pointer: anything with DLPack on a CUDA device
  (torch, cupy, JAX; bf16 and fp8 included), or, for libraries without DLPack,
  `__cuda_array_interface__`. Their DLPack capsule is held through the launch.
- Host arrays (numpy, and DLPack arrays on the CPU such as CPU torch tensors) are
  copied into a device temporary that lives through the launch and, if the kernel
  stores into them, copied back into the caller's memory afterwards, through a
  view that shares it (so a non-contiguous output is written too). The
  temporary's rows are padded to a multiple of `SECTOR_BYTES` (`row_strides`),
  so TMA can describe a host array of any extents, and reads it at full speed.

Each becomes a `DeviceArray`: an `ArrayView` (dtype, shape, element strides as
the kernel reads them) and a pointer, which the shared argument checks of
`tawa_xdsl.kernel` and the TMA checks of `Kernel` then inspect.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tawa_xdsl.dlpack import (
    GPU_DEVICES,
    ArrayError,
    DLPackArray,
    as_host_array,
    dlpack_device,
    export,
)
from tawa_xdsl.dtypes import DTYPES, type_name
from tawa_xdsl.kernel import ArrayView, byte_span, numpy_view
from tawa_xdsl.runtime.driver import check, context
from tawa_xdsl.target import SECTOR_BYTES

DEVICE = 0
"""The CUDA device kernels run on (`driver.context` uses device 0)."""


def compact_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major element strides of a contiguous array of `shape`."""
    return tuple(
        int(np.prod(shape[k + 1 :], dtype=np.int64)) for k in range(len(shape))
    )


def row_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """Row-major element strides of a device copy of an array (a host array's
    temporary, an aligned buffer): compact, except that each row (the last
    dimension) starts on a multiple of `SECTOR_BYTES`, where TMA needs
    `TMA_ALIGN` of every pitch and reads whole sectors fastest."""
    if len(shape) < 2:
        return compact_strides(shape)
    per_row = SECTOR_BYTES // itemsize if SECTOR_BYTES % itemsize == 0 else 1
    strides = [1, -(-shape[-1] // per_row) * per_row]
    for extent in reversed(shape[1:-1]):
        strides.append(strides[-1] * extent)
    return tuple(reversed(strides))


@dataclass
class DeviceArray:
    """One array argument on the device. `host` is the caller's host memory when
    the array was a host array (then `ptr` is a temporary made by `stage`);
    `keep` holds what keeps a device array's memory valid (its DLPack capsule);
    `overlaps` names the argument the kernel writes that this array, only
    read, shares memory with (`copy_on_launch`)."""

    view: ArrayView
    ptr: int = 0
    host: np.ndarray | None = None
    keep: Any = None
    owned: int = 0
    overlaps: str | None = None

    @property
    def dtype(self) -> str:
        return self.view.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.view.shape

    @property
    def strides(self) -> tuple[int, ...]:
        return self.view.strides

    def stage(self) -> None:
        """Copy a host array into a new device temporary (laid out with the
        view's strides)."""
        if self.host is None or self.owned:
            return
        cu, _ = context()
        padded, inside = self._padded()
        inside[...] = self.host
        self.owned = self.ptr = int(
            check(cu.cuMemAlloc(max(1, padded.nbytes)), "cuMemAlloc")
        )
        check(
            cu.cuMemcpyHtoD(self.ptr, padded.ctypes.data, padded.nbytes),
            "cuMemcpyHtoD",
        )

    def copy_back(self) -> None:
        """Write a host array's temporary back into the caller's memory (after the
        launch has finished); `np.copyto` goes through the caller's strides."""
        assert self.host is not None and self.owned
        cu, _ = context()
        padded, inside = self._padded()
        check(
            cu.cuMemcpyDtoH(padded.ctypes.data, self.ptr, padded.nbytes),
            "cuMemcpyDtoH",
        )
        np.copyto(self.host, inside)

    def _padded(self) -> tuple[np.ndarray, np.ndarray]:
        """A host buffer as large as the temporary, and the host array's view
        of it through the temporary's strides."""
        assert self.host is not None
        shape, strides = self.host.shape, self.view.strides
        span = 1 + sum((d - 1) * s for d, s in zip(shape, strides, strict=True))
        padded = np.zeros(span if all(shape) else 1, self.host.dtype)
        return padded, strided(padded, shape, strides)

    def free(self) -> None:
        if self.owned:
            cu, _ = context()
            check(cu.cuMemFree(self.owned), "cuMemFree")
            self.owned = self.ptr = 0


def device_array(value: Any, stream: int) -> tuple[DeviceArray, ArrayView]:
    """A `DeviceArray` (and its view) for one argument of a launch on `stream`;
    host arrays are not copied yet (`stage`), so nothing is allocated for an
    argument list the checks refuse. Raises `ArrayError` for what is no array.
    A `DeviceArray` passes through: the dispatcher converts a call's arguments
    once, reads the shapes and alignment that pick the specialization off them,
    and hands them on."""
    if isinstance(value, DeviceArray):
        return value, value.view
    host = as_host_array(value)
    if host is not None:
        view = ArrayView(
            type_name(host.dtype),
            tuple(host.shape),
            row_strides(tuple(host.shape), host.dtype.itemsize),  # the temporary's
            bool(host.flags.writeable),
            numpy_view(host).span,  # the caller's memory, written back
        )
        return DeviceArray(view, host=host), view
    device = dlpack_device(value)
    if device is not None:
        if device[0] not in GPU_DEVICES:
            raise ArrayError(
                f"lives on DLPack device type {device[0]}, neither the host nor a "
                "CUDA device"
            )
        # DLPack numbers the legacy default stream 1 (0 is not allowed)
        return _from_dlpack(export(value, stream or 1))
    if hasattr(value, "__cuda_array_interface__"):
        return _from_cuda_array_interface(value)
    raise ArrayError(
        "must be an array: a DLPack array (torch, cupy, JAX), an array with "
        f"__cuda_array_interface__ or a numpy array, not {type(value).__name__}"
    )


def copy_on_launch(array: DeviceArray, writer: str) -> DeviceArray:
    """`array`, only read, which shares memory with `writer` (written), marked
    to be read from a copy made before each launch (`kernel.check_overlaps`):
    a host array's temporary is that copy already (`stage`); a device array is
    copied by the dispatcher (`Dispatcher.realigned`)."""
    return dataclasses.replace(array, overlaps=writer)


def strided(
    buffer: np.ndarray, shape: Sequence[int], strides: Sequence[int]
) -> np.ndarray:
    """A view of the flat `buffer` with `shape` and `strides` in elements.
    Taken over the buffer's raw bits: numpy's `as_strided` cannot rebuild some
    ml_dtypes types from their array interface (float8_e5m2's '<f1')."""
    bits = buffer.view(f"u{buffer.itemsize}")
    byte_strides = tuple(s * buffer.itemsize for s in strides)
    view = np.lib.stride_tricks.as_strided(bits, tuple(shape), byte_strides)
    return view.view(buffer.dtype)


def _device_span(array: DeviceArray) -> tuple[np.ndarray, np.ndarray]:
    """A device array's memory from its first to its last element, copied to
    the host, and the view of it through the array's strides."""
    cu, _ = context()
    span = 1 + sum((d - 1) * s for d, s in zip(array.shape, array.strides, strict=True))
    flat = np.empty(span, DTYPES[array.dtype])
    check(cu.cuMemcpyDtoH(flat.ctypes.data, array.ptr, flat.nbytes), "cuMemcpyDtoH")
    return flat, strided(flat, array.shape, array.strides)


def read(array: DeviceArray) -> np.ndarray:
    """A host copy of `array` (of the caller's host array, for a host argument:
    the launch wrote it back there)."""
    if array.host is not None:
        return np.array(array.host)
    return _device_span(array)[1].copy()


def fill(array: DeviceArray, value: float) -> None:
    """Set every element of `array` to `value`; memory between its rows keeps
    what it holds (the span is read, changed through the strides, written back)."""
    if array.host is not None:
        array.host[...] = value
        return
    cu, _ = context()
    flat, view = _device_span(array)
    view[...] = value
    check(cu.cuMemcpyHtoD(array.ptr, flat.ctypes.data, flat.nbytes), "cuMemcpyHtoD")


def _from_dlpack(array: DLPackArray) -> tuple[DeviceArray, ArrayView]:
    if array.device[1] != DEVICE:
        raise ArrayError(
            f"is on CUDA device {array.device[1]}; kernels run on device {DEVICE}"
        )
    view = ArrayView(
        array.dtype,
        array.shape,
        array.strides,
        not array.read_only,
        byte_span(array.ptr, array.shape, array.strides, DTYPES[array.dtype].itemsize),
    )
    return DeviceArray(view, array.ptr, keep=array), view


def _from_cuda_array_interface(value: Any) -> tuple[DeviceArray, ArrayView]:
    cai = value.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise ArrayError("is a masked array")
    dtype = np.dtype(cai["typestr"])
    name = type_name(dtype)
    if name not in DTYPES:  # e.g. bf16, which the interface cannot spell
        raise ArrayError(
            f"has __cuda_array_interface__ type {cai['typestr']}; pass it through "
            "DLPack for bf16 or fp8"
        )
    shape = tuple(int(d) for d in cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        element_strides = compact_strides(shape)
    elif any(s % dtype.itemsize for s in strides):
        raise ArrayError(f"has strides {tuple(strides)} bytes, not whole elements")
    else:
        element_strides = tuple(s // dtype.itemsize for s in strides)
    ptr, read_only = cai["data"]
    span = byte_span(int(ptr or 0), shape, element_strides, dtype.itemsize)
    view = ArrayView(name, shape, element_strides, not read_only, span)
    return DeviceArray(view, int(ptr or 0), keep=value), view
