"""Device arrays TMA cannot describe, read and written through an aligned copy.

TMA describes a tensor by its base address and row pitches, and each must be a
multiple of 16 bytes (`TMA_ALIGN`; docs/hopper.md). A device array off that grid
(K = 999 bf16 rows lie 1998 bytes apart; a view that starts one element into its
storage) cannot be handed to a tensor map. The dispatcher gives such an array a
`DeviceBuffer` of the same shape whose rows are padded onto the grid
(`arrays.row_strides`), copies the array into it before each launch, hands the
buffer to the kernel in its place and, if the kernel writes the array, copies
it back afterwards.

The copies are strided 2-D copies on the launch's stream (`cuMemcpy2DAsync`:
rows of the last dimension's bytes, any pitch), so they are ordered with the
kernel without synchronizing; an array whose outer dimensions are evenly spaced
is one copy, any other one copy per plane of its last two dimensions. What it
costs: one more read and write of the array through HBM per launch (for a GEMM
with K = 4095, reading A and B twice), paid only by the calls whose arrays TMA
cannot describe.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product
from typing import Any

from tawa_xdsl.dtypes import DTYPES
from tawa_xdsl.kernel import ArrayView
from tawa_xdsl.runtime.arrays import DeviceArray
from tawa_xdsl.runtime.driver import check, context


class DeviceBuffer:
    """Device memory for one array of `view`'s dtype, shape and element strides,
    freed when neither the object nor its `array` is referenced: `array` keeps
    the buffer, so a launcher bound to it (a split pair's workspace, an aligned
    copy) stays valid after the dispatcher that made the buffer is gone."""

    def __init__(self, view: ArrayView) -> None:
        self._cu, _ = context()
        span = 1 + sum(
            (d - 1) * s for d, s in zip(view.shape, view.strides, strict=True)
        )
        size = max(1, span * DTYPES[view.dtype].itemsize)
        self._ptr = int(check(self._cu.cuMemAlloc(size), f"cuMemAlloc ({size} bytes)"))
        self.array = DeviceArray(view, ptr=self._ptr, keep=self)

    def __del__(self) -> None:
        # no imports here: at interpreter exit they fail; a context already
        # gone took the memory with it, so the result is not checked
        if getattr(self, "_ptr", 0):
            self._cu.cuMemFree(self._ptr)


def _evenly_spaced(array: DeviceArray) -> bool:
    """Whether every row of `array` lies one pitch after the one before: each
    outer stride is the next one times its extent."""
    shape, strides = array.shape, array.strides
    return all(
        strides[k] == strides[k + 1] * shape[k + 1] for k in range(len(shape) - 2)
    )


def _runs(
    array: DeviceArray, itemsize: int, whole: bool
) -> Iterator[tuple[int, int, int]]:
    """(byte offset, row pitch in bytes, rows) of the runs of evenly spaced rows
    `array` is copied as: all its rows at once if `whole`, else one run per
    plane of its last two dimensions."""
    shape, strides = array.shape, array.strides
    if len(shape) == 1:
        yield 0, shape[0] * itemsize, 1
    elif whole:
        yield 0, strides[-2] * itemsize, math.prod(shape[:-1])
    else:
        for index in product(*(range(d) for d in shape[:-2])):
            offset = sum(i * s for i, s in zip(index, strides, strict=False))
            yield offset * itemsize, strides[-2] * itemsize, shape[-2]


def copy_array(dst: DeviceArray, src: DeviceArray, stream: int) -> None:
    """Enqueue on `stream` the copy of `src` into `dst`: device arrays of one
    dtype and shape, each contiguous in its last dimension, any pitches."""
    assert dst.shape == src.shape and dst.dtype == src.dtype
    cu, _ = context()
    itemsize = DTYPES[src.dtype].itemsize
    whole = _evenly_spaced(src) and _evenly_spaced(dst)
    device = cu.CUmemorytype.CU_MEMORYTYPE_DEVICE
    for (s_off, s_pitch, rows), (d_off, d_pitch, _) in zip(
        _runs(src, itemsize, whole), _runs(dst, itemsize, whole), strict=True
    ):
        copy = cu.CUDA_MEMCPY2D()
        copy.srcMemoryType = copy.dstMemoryType = device
        copy.srcDevice, copy.srcPitch = src.ptr + s_off, s_pitch
        copy.dstDevice, copy.dstPitch = dst.ptr + d_off, d_pitch
        copy.WidthInBytes, copy.Height = src.shape[-1] * itemsize, rows
        check(cu.cuMemcpy2DAsync(copy, stream), "cuMemcpy2DAsync (aligning an array)")


@dataclass(frozen=True)
class Copy:
    """One enqueued copy of a bound launch (`Dispatcher.bind`); it holds the
    buffer and the caller's array (with its DLPack capsule) while it lives."""

    dst: DeviceArray
    src: DeviceArray
    stream: int
    buffer: Any

    def __call__(self) -> None:
        copy_array(self.dst, self.src, self.stream)

    def detached(self) -> Copy:
        """This copy holding neither array's owner (the buffer stays held):
        for a caller that passes live arrays at the same addresses each time
        (`launch_cache`)."""
        return dataclasses.replace(
            self,
            dst=dataclasses.replace(self.dst, keep=None),
            src=dataclasses.replace(self.src, keep=None),
        )


__all__ = ["Copy", "DeviceBuffer", "copy_array"]
