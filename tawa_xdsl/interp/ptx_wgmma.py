"""How one `wgmma.mma_async` (`m64nNk16` for 16-bit inputs, `m64nNk32` for 8-bit
ones: 32 bytes of K either way) finds its operands: shared-memory matrix
descriptors and the register layouts of a warpgroup (docs/hopper.md, "wgmma":
descriptors and register fragments; `lowering/fragments.py` for the same layouts
at tile level).

A descriptor (64 bits) holds the start address (bits 0-13, in 16-byte units),
the leading and stride byte offsets LBO (16-29) and SBO (32-45), a base offset
(49-51) and the swizzle mode (62-63: 1 = 128-byte, 2 = 64-byte, 3 = 32-byte
rows). With elements of `e` bytes and a swizzle span of `S` bytes, the
operand's element addresses before swizzling are:

- K-major (A, and B with `transpose_b = 0`, given as its N x K tile): row r, k:
  `start + (r / 8) SBO + (r % 8) S + e k` (LBO unused: one step's 32 bytes fit
  a row);
- MN-major (B with `transpose_b = 1`, 16-bit only; K x N with N contiguous in
  column chunks of C = S / 2 elements): k, column n:
  `start + (n / C) LBO + (k / 8) SBO + (k % 8) S + 2 (n % C)` (the PTX ISA's
  canonical MN-major layouts: `((T, S / 16, m), (8, k)) : ((1, T, LBO), (S / 2, SBO))`
  in elements, T = 8 16-bit elements);

then the absolute-address swizzle (`ptx_memory.swizzle`). Register layouts,
for thread `tid` of the warpgroup, w = tid / 32, g = (tid % 32) / 4, t = tid % 4:
accumulator element i is (16 w + g + 8 ((i >> 1) & 1), 8 (i >> 2) + 2 t + (i & 1));
a 16-bit A fragment's value v (register v / 2, low half first) follows the same
rule with N = 16; an 8-bit one's byte v (register v / 4, lowest byte first) is
(16 w + g + 8 ((v >> 2) & 1), 16 (v >> 3) + 4 t + (v & 3)).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from tawa_xdsl.interp.ptx_memory import AccessFault, swizzle

M = 64
K_BYTES = 32
"""The K extent of one instruction, in bytes of either input type."""
LANES = 128
SPAN_OF_MODE = {1: 128, 2: 64, 3: 32}
"""Row bytes of the descriptor's swizzle modes."""


@dataclass(frozen=True)
class Descriptor:
    """A decoded shared-memory matrix descriptor (byte units)."""

    start: int
    lbo: int
    sbo: int
    base_offset: int
    swizzle: int

    @staticmethod
    def decode(bits: int) -> Descriptor:
        field = lambda lo, n: (bits >> lo) & ((1 << n) - 1)  # noqa: E731
        return Descriptor(
            start=field(0, 14) << 4,
            lbo=field(16, 14) << 4,
            sbo=field(32, 14) << 4,
            base_offset=field(49, 3),
            swizzle=field(62, 2),
        )

    @property
    def span(self) -> int:
        return SPAN_OF_MODE[self.swizzle]

    def check(self, what: str, k_major: bool) -> None:
        if self.swizzle not in SPAN_OF_MODE or self.base_offset:
            raise AccessFault(
                f"{what}: the simulator models swizzled {'K' if k_major else 'MN'}-major "
                f"operands with base offset 0 (swizzle modes "
                f"{', '.join(map(str, SPAN_OF_MODE))}); this descriptor has swizzle mode "
                f"{self.swizzle}, base offset {self.base_offset}"
            )


def k_major_addresses(d: Descriptor, rows: int, esize: int) -> np.ndarray:
    """Shared addresses of a K-major operand's elements, `[rows, 32 / esize]`."""
    r = np.arange(rows)[:, None]
    k = np.arange(K_BYTES // esize)[None, :]
    linear = d.start + (r // 8) * d.sbo + (r % 8) * d.span + esize * k
    return swizzle(linear, d.span)


def mn_major_addresses(d: Descriptor, cols: int) -> np.ndarray:
    """Shared addresses of a 16-bit MN-major operand's elements, `[16, cols]`."""
    k = np.arange(K_BYTES // 2)[:, None]
    n = np.arange(cols)[None, :]
    chunk = d.span // 2
    linear = d.start + (n // chunk) * d.lbo + (k // 8) * d.sbo + (k % 8) * d.span
    return swizzle(linear + 2 * (n % chunk), d.span)


@cache
def fragment_positions(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) `[128, n / 2]` of the accumulator elements of an m64nN tile
    (with n = 16: the values of an A fragment) each thread holds."""
    tid = np.arange(LANES)[:, None]
    i = np.arange(n // 2)[None, :]
    w, lane = tid // 32, tid % 32
    g, t = lane // 4, lane % 4
    rows = 16 * w + g + 8 * ((i >> 1) & 1)
    cols = 8 * (i >> 2) + 2 * t + (i & 1)
    return rows, cols


def accumulator_matrix(bits: np.ndarray, n: int) -> np.ndarray:
    """The m64nN f32 tile that a warpgroup's accumulator registers hold."""
    rows, cols = fragment_positions(n)
    d = np.empty((M, n), dtype=np.float32)
    d[rows, cols] = bits.view(np.float32)
    return d


def accumulator_bits(d: np.ndarray) -> np.ndarray:
    """The registers `[128, n / 2]` (f32 bits) that hold the tile `d`."""
    rows, cols = fragment_positions(d.shape[1])
    return np.ascontiguousarray(d.astype(np.float32)[rows, cols]).view(np.uint32)


@cache
def byte_fragment_positions() -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) `[128, 16]` of the bytes of an 8-bit A fragment."""
    tid = np.arange(LANES)[:, None]
    v = np.arange(16)[None, :]
    w, lane = tid // 32, tid % 32
    g, t = lane // 4, lane % 4
    return 16 * w + g + 8 * ((v >> 2) & 1), 16 * (v >> 3) + 4 * t + (v & 3)


def a_fragment_matrix(regs: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The 64 x (32 bytes) A tile held by four b32 registers per thread,
    `[128, 4]`: two 16-bit values or four 8-bit ones per register."""
    regs = np.ascontiguousarray(regs.astype(np.uint32))
    k = K_BYTES // dtype.itemsize
    values = regs.view(dtype).reshape(LANES, k // 2).astype(np.float32)
    rows, cols = (
        fragment_positions(k) if dtype.itemsize == 2 else byte_fragment_positions()
    )
    a = np.empty((M, k), dtype=np.float32)
    a[rows, cols] = values
    return a


def mma(acc: np.ndarray, a: np.ndarray, b: np.ndarray, accumulate: bool) -> np.ndarray:
    """D = (acc if accumulate) + A B, products summed in f64, rounded to f32."""
    product = a.astype(np.float64) @ b.astype(np.float64)
    if accumulate:
        product += acc
    return product.astype(np.float32)
