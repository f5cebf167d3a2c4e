"""The Hopper facts the compiler relies on (sm_90a, the H100 SXM), in one place.

Every pass, analysis, simulator and the runtime read these here: a limit
written twice drifts. Where a fact comes from (the PTX ISA, the CUDA driver
API, a measurement) is in docs/hopper.md.
"""

from __future__ import annotations

SM_COUNT = 132
"""Streaming multiprocessors of an H100 SXM: the wave model's default when no
GPU is there to ask (the runtime asks the driver)."""

# -------------------------------------------------------------------- index

INDEX_BITS = 32
"""Width of `index` values on the GPU: the PTX printer declares index and integer
parameters `.u32` and computes on them with 32-bit signed instructions, so the
parser (index literals) and the executors (parameters, array and grid extents)
accept only what those registers hold."""
INDEX_MAX = 2 ** (INDEX_BITS - 1) - 1
"""The largest `index` value: a literal, parameter, array extent or grid extent."""

# ------------------------------------------------------------------- launch

MAX_GRID = (2**31 - 1, 65535, 65535)
"""The most thread blocks a launch takes along x, y and z (cuLaunchKernel
refuses more with CUDA_ERROR_INVALID_VALUE)."""

# ---------------------------------------------------------------- registers

REGISTERS_PER_SM = 65536
"""32-bit registers of one SM, shared by the threads of its resident blocks."""
MAX_REGISTERS_PER_THREAD = 255
"""The most registers ptxas gives one thread."""
MIN_REGS, MAX_REGS = 24, 256
"""The range `setmaxnreg` accepts (in steps of 8)."""
THREADS_PER_WARPGROUP = 128
"""Four warps: the unit that issues one wgmma and that `setmaxnreg` sizes."""

# ------------------------------------------------------------ shared memory

MAX_SMEM_BYTES = 232448
"""Opt-in dynamic shared memory per block (227 KB)."""
MBARRIER_BYTES = 8
"""One mbarrier object in shared memory."""
SWIZZLE_BYTES = 128
"""Width of one swizzle span: a chunk row of a shared-memory tile."""
NARROW_SWIZZLES = (32, 64)
"""Row widths in bytes below 128 that the shape rules (`heuristics`) resize
matrix tiles to: a tile of exactly one narrow chunk, the layout the GPU runs
were measured with. Rows of several 32- or 64-byte chunks lower too
(`swizzle_span`), but no rule picks them for a tile it resizes."""
SWIZZLE_SPANS = (128, 64, 32)
"""The swizzle modes TMA and wgmma share, by their row width in bytes, widest first."""


def swizzle_span(row_bytes: int) -> int | None:
    """The swizzle of a matrix tile whose rows are `row_bytes` wide: the widest
    span that divides its rows (the tile is cut into column chunks of that many
    bytes; CUTLASS picks its shared-memory atoms the same way), None when no
    span does (rows not a multiple of 32 bytes: no TMA swizzle and no wgmma
    descriptor describe them). A 16-bit head dim of 96 is three 64-byte
    chunks, one of 80 five 32-byte chunks."""
    return next((s for s in SWIZZLE_SPANS if row_bytes % s == 0), None)


SLOT_ALIGN = 1024
"""128-byte swizzling repeats every 8 rows of 128 bytes; tiles start on that boundary."""

# ---------------------------------------------------------------------- TMA

TMA_ALIGN = 16
"""TMA describes a tensor whose base address and row pitches are multiples of
this many bytes (cuTensorMapEncodeTiled refuses any other), and starts a box
only on a 16-byte boundary of its rows. Its stores clip a box at the tensor's
last column only to this granule: with rows of 685 bf16 (1370 bytes) in a
wider allocation, the H200 wrote columns 685-687 too. Outputs whose rows are
not a multiple of it are stored from registers."""
SECTOR_BYTES = 32
"""TMA reads a tensor at full speed only when its base address and row pitches
are multiples of this many bytes (an L2 sector). Rows 16 bytes off that grid
(K = 1000 bf16: 2000 bytes apart) are legal but slow: every GEMM tile shape ran
1.1-1.3x longer at K = 1000 and 3000 than at K = 1008 and 3008 on the H200
(`benchmarks/NOTES.md` 3.58). Copies the runtime makes pad rows onto it."""
MAX_BOX_DIM = 256
"""Largest box extent a TMA tensor map accepts, per dimension."""

# -------------------------------------------------------------------- wgmma

WGMMA_ROWS = 64
"""Rows of one wgmma: the slice of a tile one consumer warpgroup computes at once."""
WGMMA_K_BYTES = 32
"""K bytes one wgmma reads per row: k16 for 16-bit inputs, k32 for 8-bit ones."""
MAX_PENDING = 7
"""`wgmma.wait_group` takes 0..7; waiting with fewer pending groups is always safe."""

# ----------------------------------------------------------------- clusters

MAX_CLUSTER = 8
"""The largest portable cluster."""
