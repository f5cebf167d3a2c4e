"""Memory as a thread-level kernel sees it: global memory at device addresses,
a block's shared memory as bytes, tensor maps, and the 32/64/128-byte swizzles.

Global memory is the host's numpy arrays, each given a fake device address
(16-byte aligned, with unmapped gaps between arrays), so a kernel computes
addresses with its own integer instructions and the simulator decodes them back
to an array and a byte offset. An access that lands outside every array, or is
not aligned to its width, is an `AccessFault` naming the lanes and addresses:
that is how a wrong store address or a dropped store mask shows up on a CPU.
Every byte written is counted, so a test can ask that each element of a tile
was written exactly once.

A block's shared memory is a byte array; the dynamic `smem` region starts at
`SMEM_BASE`, only 16-byte aligned as on the GPU (kernels round it up to 1024
themselves), and holds `launch["smem"]` bytes. It starts out as seeded garbage,
so a read of bytes nobody wrote gives wrong results instead of lucky zeros.

Tensor maps are kernel parameters passed by value; a kernel only ever takes
their generic address (`ptx.param ... generic`), which the simulator resolves
to the array, box and swizzle of the map, as TMA does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dtypes import numpy_dtype
from tawa_xdsl.target import SWIZZLE_BYTES, SWIZZLE_SPANS

GLOBAL_BASE = 1 << 32
"""The first array's device address; 0 and small addresses are never mapped."""
GLOBAL_GAP = 1 << 16
"""Unmapped bytes between two arrays."""
SMEM_BASE = 1024 + 16
"""Where the dynamic shared memory starts in a block's shared window."""
PARAM_BASE = 1 << 44
"""Generic addresses of the tensor-map parameters, 128 bytes each."""


class AccessFault(Exception):
    """An access the GPU would fault on or that lands where nothing is."""


def swizzle(addr: np.ndarray, span: int = SWIZZLE_BYTES) -> np.ndarray:
    """The `span`-byte swizzle of shared addresses: the 16-byte piece bits [4, 4+b)
    XOR the row bits [7, 7+b), b = log2(span / 16) (3 bits for 128 bytes, 2 for
    64, 1 for 32), on the absolute address (so the +32-byte k step of wgmma stays
    inside the pattern)."""
    mask = span // 16 - 1
    return addr ^ (((addr >> 7) & mask) << 4)


def byte_span(array: np.ndarray) -> np.ndarray:
    """The bytes from an array's first element to its last, as a writable
    uint8 view of its memory (a strided view's padding included)."""
    if array.size == 0:
        return np.zeros(0, dtype=np.uint8)
    if any(s < 0 for s in array.strides) or (
        array.ndim and array.strides[-1] != array.itemsize
    ):
        raise AccessFault(
            "arrays in global memory need a contiguous last dimension and "
            f"non-negative strides (got strides {array.strides})"
        )
    span = sum((n - 1) * s for n, s in zip(array.shape, array.strides, strict=True))
    first = array[(0,) * (array.ndim - 1)][:1]  # a view, never a copy
    flat = first.view(np.uint8)
    return np.lib.stride_tricks.as_strided(flat, (span + array.itemsize,), (1,))


@dataclass(eq=False)
class Allocation:
    """One array in global memory: the bytes it spans (a strided view's padding
    included, so a write there is counted, not lost)."""

    name: str
    array: np.ndarray  # written in place
    base: int
    bytes: np.ndarray = field(init=False)
    writes: np.ndarray = field(init=False)  # per byte, how often it was written

    def __post_init__(self) -> None:
        self.bytes = byte_span(self.array)
        self.writes = np.zeros(len(self.bytes), dtype=np.uint32)

    @property
    def end(self) -> int:
        return self.base + len(self.bytes)


class GlobalMemory:
    """The host arrays at their device addresses."""

    def __init__(self) -> None:
        self.allocations: list[Allocation] = []
        self._next = GLOBAL_BASE

    def allocate(self, name: str, array: np.ndarray) -> Allocation:
        """Map an array (contiguous in its last dimension) at the next free
        address."""
        a = Allocation(name, array, self._next)
        self.allocations.append(a)
        self._next = -(-(a.end + GLOBAL_GAP) // 256) * 256
        return a

    def locate(
        self, addrs: np.ndarray, width: int, what: str
    ) -> tuple[np.ndarray, np.ndarray]:
        """(allocation index, byte offset) of each address, every access of
        `width` bytes lying wholly inside one array; else an `AccessFault`."""
        bases = np.array([a.base for a in self.allocations], dtype=np.uint64)
        ends = np.array([a.end for a in self.allocations], dtype=np.uint64)
        addrs = addrs.astype(np.uint64)
        misaligned = addrs % np.uint64(width) != 0
        if np.any(misaligned):
            bad = int(np.flatnonzero(misaligned)[0])
            raise AccessFault(
                f"{what} at address {int(addrs[bad]):#x} is not aligned to its "
                f"{width} bytes (the GPU faults: misaligned address)"
            )
        index = np.searchsorted(bases, addrs, side="right").astype(np.int64) - 1
        ok = index >= 0
        safe = np.maximum(index, 0)
        ok &= addrs + np.uint64(width) <= ends[safe] if len(ends) else False
        if not np.all(ok):
            bad = int(np.flatnonzero(~ok)[0])
            raise AccessFault(
                f"{what} at address {int(addrs[bad]):#x} ({width} bytes) lies outside "
                f"every array{self._nearest(int(addrs[bad]))}"
            )
        return index, (addrs - bases[index]).astype(np.int64)

    def _nearest(self, addr: int) -> str:
        best = min(
            self.allocations,
            key=lambda a: min(abs(addr - a.base), abs(addr - a.end)),
            default=None,
        )
        if best is None:
            return ""
        if addr < best.base:
            return f" ({best.base - addr} bytes before '{best.name}')"
        return f" ({addr - best.end} bytes past the end of '{best.name}')"

    def read(self, addrs: np.ndarray, width: int, what: str) -> np.ndarray:
        """`width` bytes at each address: uint8 `[len(addrs), width]`."""
        index, offset = self.locate(addrs, width, what)
        out = np.empty((len(addrs), width), dtype=np.uint8)
        span = np.arange(width)
        for i in np.unique(index):
            rows = index == i
            out[rows] = self.allocations[i].bytes[offset[rows, None] + span]
        return out

    def write(self, addrs: np.ndarray, data: np.ndarray, what: str) -> None:
        """Write `data[k]` (uint8 rows) at `addrs[k]`, counting every byte."""
        width = data.shape[1]
        index, offset = self.locate(addrs, width, what)
        span = np.arange(width)
        for i in np.unique(index):
            rows = index == i
            a = self.allocations[i]
            where = (offset[rows, None] + span).reshape(-1)
            a.bytes[where] = data[rows].reshape(-1)
            np.add.at(a.writes, where, 1)


@dataclass(frozen=True)
class TensorMap:
    """A TMA descriptor: the array it addresses (lifted to the map's rank), the
    box, the element type and the swizzle."""

    name: str
    array: np.ndarray
    type: nv.TensorMapType

    @staticmethod
    def of(name: str, array: np.ndarray, t: nv.TensorMapType) -> TensorMap:
        rank = len(t.get_box())
        lifted = array[(None,) * (rank - array.ndim)]  # a view: stores land in `array`
        dtype = numpy_dtype(t.element_type)
        if lifted.dtype != dtype:
            raise AccessFault(
                f"tensor map '{name}' is for {dtype} elements, the array holds {lifted.dtype}"
            )
        return TensorMap(name, lifted, t)

    @property
    def box(self) -> tuple[int, ...]:
        return self.type.get_box()

    @property
    def swizzle(self) -> int:
        return self.type.swizzle.data

    @property
    def box_bytes(self) -> int:
        return self.type.box_bytes


def box_addresses(dst: int, tmap: TensorMap) -> np.ndarray:
    """Shared addresses of every byte of a box written at `dst`, in the box's
    row-major byte order: rows of the box's inner extent, swizzled when the map
    says so (then a row is exactly one swizzle span: 32, 64 or 128 bytes)."""
    row_bytes = tmap.box[-1] * tmap.array.itemsize
    rows = tmap.box_bytes // row_bytes
    linear = dst + np.arange(rows * row_bytes, dtype=np.int64)
    if tmap.swizzle == 0:
        return linear
    if tmap.swizzle not in SWIZZLE_SPANS or row_bytes != tmap.swizzle:
        raise AccessFault(
            f"tensor map '{tmap.name}': the simulator models swizzled boxes whose "
            f"rows are one swizzle span, not rows of {row_bytes} bytes with swizzle "
            f"{tmap.swizzle}"
        )
    return swizzle(linear, tmap.swizzle)


class SharedMemory:
    """One block's shared window: `size` dynamic bytes from `SMEM_BASE`."""

    def __init__(self, size: int, rng: np.random.Generator):
        self.size = size
        self.bytes = rng.integers(0, 256, SMEM_BASE + size, dtype=np.uint8)

    @property
    def end(self) -> int:
        return SMEM_BASE + self.size

    def check(self, addrs: np.ndarray, width: int, what: str) -> None:
        """Every access of `width` bytes lies in the dynamic shared memory."""
        a = np.asarray(addrs, dtype=np.int64)
        bad = (a < SMEM_BASE) | (a + width > self.end)
        if np.any(bad):
            addr = int(a[np.flatnonzero(bad)[0]])
            raise AccessFault(
                f"{what} at shared address {addr:#x} ({width} bytes) lies outside the "
                f"block's {self.size} bytes of shared memory "
                f"[{SMEM_BASE:#x}, {self.end:#x})"
            )
