"""Which elements of a register tile each consumer thread holds.

Notation (per consumer warpgroup): tid in 0..127, w = tid / 32, lane = tid % 32,
g = lane / 4, t = lane % 4. With W warpgroups sharing an M x N tile, warpgroup c
owns rows [c M / W, (c + 1) M / W), cut into 64-row blocks b. In each block the
wgmma m64nNk16 f32 accumulator layout (docs/hopper.md, "Register fragments")
gives register i:

    row = 64 b + 16 w + g + 8 ((i >> 1) & 1)
    col = 8 (i >> 2) + 2 t + (i & 1)

Each thread holds `(M / 64 / W) * N / 2` accumulator elements, numbered
`b * N/2 + i`. A row tile (one value per row) holds the 2 rows per block a thread
touches, numbered `2 b + h` for rows 64 b + 16 w + g + 8 h; a column tile holds the
N / 4 columns 8 j + 2 t + e, numbered `2 j + e`. 16-bit tiles pack element pairs
(2k, 2k + 1), adjacent columns, into one 32-bit register: this is exactly the
wgmma A-operand layout, so P = bf16(S) feeds the next MMA without shuffles.

A tile of 8 to 56 rows a warpgroup, a multiple of 8 (a row kernel, an epilogue
over a short tile), is held padded to one 64-row block: the rows past its own
are padding, which read the tile's own rows (`row 16 w + g + 8 h` wrapped
modulo the rows: every address stays inside the tile) and are never stored
(`padded`). A warp holds a 16-row slab, rows g and g + 8 of it in each lane: a
tile of 8, 24, 40 or 56 rows ends in half a slab (`half_slab`), whose lanes
hold a row of the tile for h = 0 and padding for h = 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from tawa_xdsl.dialects.nvgpu_async import FragmentKind, FragmentLayoutAttr
from tawa_xdsl.target import THREADS_PER_WARPGROUP


@dataclass(frozen=True)
class Geometry:
    """A register tile's shape and layout, as counts and per-element offsets."""

    kind: FragmentKind
    shape: tuple[int, ...]
    warpgroups: int

    @staticmethod
    def of(shape: tuple[int, ...], layout: FragmentLayoutAttr) -> Geometry:
        return Geometry(FragmentKind(layout.kind.data), shape, layout.warpgroups.data)

    @property
    def rows(self) -> int:
        return self.shape[0] if self.kind != FragmentKind.COL else 1

    @property
    def cols(self) -> int:
        return self.shape[-1] if self.kind != FragmentKind.ROW else 1

    @property
    def blocks(self) -> int:
        """64-row blocks per warpgroup."""
        return max(1, self.rows // (64 * self.warpgroups))

    @property
    def rows_per_warpgroup(self) -> int:
        return self.rows // self.warpgroups

    @property
    def padded(self) -> bool:
        """Whether the tile is held padded to one 64-row block a warpgroup
        (its warps past `rows_per_warpgroup` hold rows never stored)."""
        return self.kind != FragmentKind.COL and self.rows_per_warpgroup < 64

    @property
    def half_slab(self) -> bool:
        """Whether the padded tile ends in half a 16-row warp slab (its last
        warp's lanes hold a row of it at g and padding at g + 8)."""
        return self.padded and self.rows_per_warpgroup % 16 != 0

    @property
    def held_lanes(self) -> tuple[int, int]:
        """Lanes of a warpgroup (32 a warp, 16 rows) whose row g (h = 0) and
        row g + 8 (h = 1) of their slab are rows of the padded tile: the
        warps the rows reach, and the warps they fill."""
        band = self.rows_per_warpgroup
        return 32 * -(-band // 16), 32 * (band // 16)

    @property
    def count(self) -> int:
        """Elements one thread holds."""
        if self.kind == FragmentKind.ACC:
            return self.blocks * self.cols // 2
        if self.kind == FragmentKind.ROW:
            return 2 * self.blocks
        return self.cols // 4

    def row_offset(self, k: int) -> int:
        """Row offset of row-tile element k from the thread's row base."""
        b, h = divmod(k, 2)
        return 64 * b + 8 * h

    def col_offset(self, k: int) -> int:
        """Column offset of column-tile element k from the thread's column base."""
        j, e = divmod(k, 2)
        return 8 * j + e

    def row_of_acc(self, k: int) -> int:
        """Index of the row-tile element that accumulator element k broadcasts from."""
        b, i = divmod(k, self.cols // 2)
        return 2 * b + ((i >> 1) & 1)

    def col_of_acc(self, k: int) -> int:
        """Index of the column-tile element that accumulator element k broadcasts from."""
        i = k % (self.cols // 2)
        return 2 * (i >> 2) + (i & 1)

    @property
    def threads(self) -> int:
        """Consumer threads sharing the tile."""
        return THREADS_PER_WARPGROUP * self.warpgroups

    def col_members(self, c: int) -> list[int]:
        """Accumulator elements this thread holds of column-tile element c (a
        column): its two rows of every 64-row block."""
        j, e = divmod(c, 2)
        half = self.cols // 2
        return [
            b * half + 4 * j + 2 * h + e for b in range(self.blocks) for h in (0, 1)
        ]

    def row_members(self, r: int) -> list[int]:
        """Accumulator elements this thread holds of row-tile element r (a row)."""
        b, h = divmod(r, 2)
        half = self.cols // 2
        return [b * half + i for i in range(half) if (i >> 1) & 1 == h]


def row_problem(rows: int, warpgroups: int) -> str | None:
    """Why an accumulator-layout or row tile of `rows` rows shared by
    `warpgroups` warpgroups cannot be held in registers, or None: each
    warpgroup holds whole 64-row blocks, or one block padded from a multiple
    of 8 rows: whole halves of a warp slab (rows g and g + 8 of a lane's),
    so a padding row reads a row of the tile with the same g, the phase of
    the swizzle its address takes."""
    band, rest = divmod(rows, warpgroups)
    per = f" ({band} a warpgroup, over {warpgroups})" if warpgroups > 1 else ""
    if rest or (band >= 64 and band % 64):
        return (
            f"{rows} rows{per}: the accumulator layout holds whole 64-row blocks "
            "per warpgroup, or one block padded from 8 to 56 rows, a multiple of 8"
        )
    if band < 64 and band % 8:
        return (
            f"{rows} rows{per}: a tile under 64 rows is held in whole 8-row halves "
            "of a warp slab (the accumulator layout's lanes hold rows g and g + 8 "
            "of a 16-row slab): use a multiple of 8"
        )
    return None
