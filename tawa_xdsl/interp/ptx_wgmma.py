"""How one `wgmma.mma_async.m64nNk16` finds its operands: shared-memory matrix
descriptors and the register layouts of a warpgroup (docs/hopper.md, "wgmma":
descriptors and register fragments; `lowering/fragments.py` for the same layouts
at tile level).

A descriptor (64 bits) holds the start address (bits 0-13, in 16-byte units),
the leading and stride byte offsets LBO (16-29) and SBO (32-45), a base offset
(49-51) and the swizzle mode (62-63, 1 = 128-byte). With the 128-byte swizzle
and 16-bit elements, the operand's element addresses before swizzling are:

- K-major (A, and B with `transpose_b = 0`, given as its N x K tile): row r, k:
  `start + (r / 8) SBO + (r % 8) 128 + 2 k` (LBO unused: 16 k fit one row);
- MN-major (B with `transpose_b = 1`, K x N with N contiguous): k, column n:
  `start + (n / 64) LBO + (k / 8) SBO + (k % 8) 128 + 2 (n % 64)`;

then the absolute-address swizzle (`ptx_memory.swizzle128`). Register layouts,
for thread `tid` of the warpgroup, w = tid / 32, g = (tid % 32) / 4, t = tid % 4:
accumulator element i is (16 w + g + 8 ((i >> 1) & 1), 8 (i >> 2) + 2 t + (i & 1));
the A fragment's value v (register v / 2, low half first) follows the same rule
with N = 16.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from tawa_xdsl.interp.ptx_memory import AccessFault, swizzle128

M = 64
K = 16
LANES = 128
SWIZZLE_128B = 1


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

    def check(self, what: str) -> None:
        if self.swizzle != SWIZZLE_128B or self.base_offset:
            raise AccessFault(
                f"{what}: the simulator models 128-byte swizzled operands with base "
                f"offset 0; this descriptor has swizzle mode {self.swizzle}, base "
                f"offset {self.base_offset}"
            )


def k_major_addresses(d: Descriptor, rows: int) -> np.ndarray:
    """Shared addresses of a K-major operand's elements, `[rows, 16]`."""
    r = np.arange(rows)[:, None]
    k = np.arange(K)[None, :]
    return swizzle128(d.start + (r // 8) * d.sbo + (r % 8) * 128 + 2 * k)


def mn_major_addresses(d: Descriptor, cols: int) -> np.ndarray:
    """Shared addresses of an MN-major operand's elements, `[16, cols]`."""
    k = np.arange(K)[:, None]
    n = np.arange(cols)[None, :]
    linear = d.start + (n // 64) * d.lbo + (k // 8) * d.sbo + (k % 8) * 128
    return swizzle128(linear + 2 * (n % 64))


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


def a_fragment_matrix(regs: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The 64 x 16 A tile held by four b32 registers per thread, `[128, 4]`."""
    halves = np.stack([regs & 0xFFFF, regs >> 16], axis=-1).astype(np.uint16)
    values = halves.reshape(LANES, 8).view(dtype).astype(np.float32)
    rows, cols = fragment_positions(K)
    a = np.empty((M, K), dtype=np.float32)
    a[rows, cols] = values
    return a


def mma(acc: np.ndarray, a: np.ndarray, b: np.ndarray, accumulate: bool) -> np.ndarray:
    """D = (acc if accumulate) + A B, products summed in f64, rounded to f32."""
    product = a.astype(np.float64) @ b.astype(np.float64)
    if accumulate:
        product += acc
    return product.astype(np.float32)
