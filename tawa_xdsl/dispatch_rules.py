"""Rules a shape-aware dispatcher applies per call, from the problem's shape
alone (no search): pure functions of the sizes, so they are cheap to run on
every launch and to test.

Wave quantization. A GEMM launches one program per output tile; the GPU runs
one at a time per SM (our kernels fill an SM's shared memory), so T tiles on P
SMs take ceil(T / P) waves of the K loop, and a last wave of T mod P tiles
leaves the other SMs idle. Below one wave (T < P) most of the GPU idles for the
whole kernel: 128 x 128 x 8192 with 128 x 128 tiles is one tile, so one SM of
132 runs all 128 K iterations. Splitting K S ways (`split-k`) runs T * S
programs of about I / S iterations each, plus a reduction over S f32 partial
tiles per output tile.

Stream-K (`stream-k`) cuts the same work into units of one K iteration of one
tile and deals the T * I units evenly to one program per SM: every SM runs
ceil(T * I / P) iterations, whatever T is, and a tile that programs share is
summed from its R partial slots by the reduce kernel (`partials.stream_k_slots`).
Where T * S programs of a split cannot fill whole waves (48 tiles split 2 ways
are 96 programs on 132 SMs), stream-K keeps every SM busy.
"""

from __future__ import annotations

from tawa_xdsl.target import MAX_GRID, SM_COUNT

MIN_SLICE_ITERATIONS = 4
"""The fewest K iterations a slice keeps. A slice runs its loop through a ring
of 3-4 stages: one shorter than that spends its time filling the ring and
draining the MMAs instead of overlapping loads with them, and every slice adds
an f32 tile written and read back by the reduction."""


TILE_ITERATION_US = 0.88
"""Microseconds one SM takes for one K iteration of a 128x256x64 bf16 tile at
the tuned kernel's 632 TFLOP/s (`heuristics.GEMM_RATES`): 2 * 128 * 256 * 64
flop over 632e12 / 132 flop/s. It converts the wave model's costs to time.

It holds for FP8 kernels too, whose K iterations are 128 elements: every
iteration reads 128 bytes of each operand row, and the tensor cores multiply
8-bit inputs at twice the 16-bit rate (1979 against 989 TFLOP/s dense), so an
FP8 iteration takes the time of a bf16 one. Measured: per-tensor FP8 GEMM at
1316-1367 TFLOP/s (benchmarks/NOTES.md 3.36) does a 128x256x128 iteration's
work in 0.80-0.83 us."""

HBM_BYTES_PER_US = 3.0e6
"""Bytes per microsecond a streaming kernel moves through an H100 SXM's HBM3
(3.35 TB/s peak)."""

GEMM_STREAM_BYTES_PER_US = 2.0e6
"""Bytes per microsecond a GEMM's K loop reads from HBM when every program waits
on memory (few output rows, long K: `128 x 6144 x 4096` reads 51 MB of B for
1 MFLOP per 8 KB). Measured on the H100 (benchmarks/results/tile_widths.csv):
our best tile shapes took 29-39 us on the M = 128 and 256 rows, 1.6-1.9 TB/s
after `PROGRAM_FIXED_US`; cuBLAS reached 1.7-2.2 TB/s on the same rows."""

MEMORY_ROUND_TRIP_US = 3.6
"""How long a ring slot takes from its TMA load's issue to its data's arrival
when HBM is the bottleneck (queued, not idle, latency). A program waiting on
memory streams its loads in flight (all ring slots but the one being
consumed) once per round trip. Fitted on the H100 at 128 x 4096 x 4096: 86
programs of 64x96 tiles (20 KB per slot, 4 slots) streamed 1.45 TB/s, 17 GB/s
each (benchmarks/results/tile_widths.csv)."""


def stream_bytes_per_us(programs: int, stages: int, read_bytes: int) -> float:
    """What `programs` running at once, each through a ring of `stages` slots
    of which `read_bytes` come from HBM (rows past the operand's end are filled
    with zeros, not read), stream per microsecond: Little's law per program,
    capped by HBM (`GEMM_STREAM_BYTES_PER_US`). A ring of one slot (num_stages=1
    given) still has one load in flight, between the MMAs (counted as 0 loads,
    it divided by zero)."""
    in_flight = max(stages - 1, 1)
    per_program = in_flight * read_bytes / MEMORY_ROUND_TRIP_US
    return min(GEMM_STREAM_BYTES_PER_US, programs * per_program)


UNHIDDEN_SHARE = 0.1
"""The share of the shorter of a K loop's MMA time and its operands' stream
from HBM that the ring does not hide behind the longer. Without it every tile
shape of a problem few rows tall costs the same (the stream), and the model
picked 128-row tiles at M = 16 and 64, whose MMAs are mostly padding; with
0.1 it picks 64-row tiles there, as measured best (tile_widths.csv)."""


def loop_time_us(mma_us: float, stream_us: float) -> float:
    """A launch's K loops: MMAs and the operands' stream overlap, but not
    entirely (`UNHIDDEN_SHARE`)."""
    return max(mma_us, stream_us) + UNHIDDEN_SHARE * min(mma_us, stream_us)


PROGRAM_FIXED_US = 7.2
"""What one launch of a GEMM costs besides its K loop: the launch, the ring's
first fill and the epilogue's stores. Fitted on the H100 at 1000 x 1000 x 1000
(16 K iterations), where 128x128 tiles (64 programs) ran 1.43x faster than
128x256 (32 programs) against 1.84x for their K loops alone; it predicts the
same pair at 768 x 3072 x 8192 within 2% (benchmarks/results/tile_widths.csv).
A persistent program pays it once, since its next tile's loads overlap the last
one's epilogue."""

SPLIT_LAUNCH_US = 3.0
"""A K split's fixed cost: the reduce kernel's launch after the partials
kernel's, and its own fill and drain."""

REDUCE_SLOT_US = 0.55
"""What each slot a reduce program sums adds to its time when the partial
tiles are small: the program waits on each slot's load in turn. Measured
under ncu on the H200 at 1 x 4096 x 4096 (`benchmarks/NOTES.md` 3.60): the
reduce kernel of 64x256 tiles took 6.1 us over 4 slots and 8.3 us over 8,
reading 80 and 145 KB; with `SPLIT_LAUNCH_US` it keeps a 4-way split's cost
at the 5 us this constant alone had."""


REDUCE_PROGRAMS = 64
"""The programs a pair's reduce kernel is given at least, where its output
allows, by narrowing the partials' tiles (`dispatch._narrowed`). Each
program sums its slots in turn, so its time follows the slots, not the bytes:
measured on the H200 (NOTES 3.73), 12 programs of 64x96 over 11 slots took
8.8 us, 64 of 64x16 7.6 us; 4 programs over 32 slots 15.3 us, 16 11.5 us;
43 programs of 64x96 over 3 slots 5.4 us, and 256 of 64x16 6.5 us (so not
past about half the SMs)."""

REDUCE_MIN_WIDTH = 16
"""The narrowest reduce tile (columns): 32-byte rows of bf16 output, whole
groups of the accumulator layout's 8 columns."""


def split_overhead_us(m: int, n: int, splits: int) -> float:
    """What splitting an M x N output's K `splits` ways adds: the f32 partial
    sums written by the partials kernel and read back by the reduce kernel
    (8 bytes per slot and element), the reduce's wait on each slot
    (`REDUCE_SLOT_US`), and `SPLIT_LAUNCH_US`."""
    reduce_us = SPLIT_LAUNCH_US + REDUCE_SLOT_US * splits
    return reduce_us + 8 * splits * m * n / HBM_BYTES_PER_US


OFF_SECTOR_SLOWDOWN = 0.2
"""The share of a GEMM's time TMA loses when an operand's rows are off the
`target.SECTOR_BYTES` grid: on the H200 every tile shape ran 1.11-1.31x longer
at K = 1000 and 3000 than at 1008 and 3008, the large compute-bound shapes
the most (4096 x 4096 x 3000: 1.31; `benchmarks/NOTES.md` 3.58)."""

OFF_SECTOR_L2_BYTES_PER_US = 4.8e6
"""Bytes per microsecond all SMs together pull out of L2 when the operands'
rows are off the `target.SECTOR_BYTES` grid (each 128-byte box row then spans
five sectors, not four). A tile shape reads each input once per tile of the
other operand, (M N K) (1/BM + 1/BN) elements in all, so narrow tiles hit this
ceiling first: on the H200 at 1000^3, 128x64 tiles ran 0.84x as fast as
128x128 ones where at 1000 x 1000 x 1008 they ran 1.20x as fast, and at
768 x 1536 x 1000 128x128 beat the 64x160 pick 1.21x (`benchmarks/NOTES.md`
3.63). Fitted there: above 4.1e6 128x128 tiles are not bound at 1000^3, and
at 4.8e6 the model predicts the measured gains of 128x128 over the narrow
picks (1.18-1.25x) at 1000^3 and 1024 x 1024 x 3000. Coarse: the rule using it
(`heuristics._off_sector_rule`) overrides a pick only by `MARGIN`."""


def off_sector_floor_us(
    m: int,
    n: int,
    k: int,
    operand_bytes: int,
    tile: tuple[int, int],
    off: tuple[bool, bool],
) -> float:
    """The least time BM x BN tiles need to read in place the inputs off the
    sector grid, `off` = (the row operand A, the column operand B): A passes
    through L2 once per column of tiles (M K N / BN elements), B once per row
    of tiles (N K M / BM), at `OFF_SECTOR_L2_BYTES_PER_US`. Operands on the
    grid are not counted (on the H200, moving 128x64 to 128x128 won 10% at
    1000 x 1000 x 1000 with B stored K x N and both off the grid, lost 7% at
    K = 1024 with only B off: the same B traffic in either tile)."""
    bm, bn = tile
    share = off[0] / bn + off[1] / bm
    return m * n * k * operand_bytes * share / OFF_SECTOR_L2_BYTES_PER_US


COPY_LAUNCH_US = 3.0
"""What one strided device-to-device copy (`cuMemcpy2DAsync`) costs besides
its bytes: its launch and ramp on the stream, before the kernel's."""


def realign_us(copy_bytes: int, copies: int) -> float:
    """What copying `copies` inputs of `copy_bytes` in all onto the sector grid
    costs before each launch: each byte read and written once through HBM."""
    return copies * COPY_LAUNCH_US + 2 * copy_bytes / HBM_BYTES_PER_US


def realign_pays(kernel_us: float, copy_bytes: int, copies: int) -> bool:
    """Whether reading inputs off the sector grid through aligned copies is
    predicted faster than reading them in place: the kernel, predicted at
    `kernel_us` with its inputs aligned, saves `OFF_SECTOR_SLOWDOWN` of that."""
    return OFF_SECTOR_SLOWDOWN * kernel_us > realign_us(copy_bytes, copies)


THREAD_LOAD_MAX_READS = 0
"""The most programs that read each tile of an input TMA cannot describe (a
bf16 K = 999, a view one column in) for the producer's threads to load it in
the kernel (`thread_loads`) instead of its being copied into a buffer with
aligned rows before each launch (`realign_us`). The copy reads and writes the
whole input once per launch; the threads' loads cost nothing extra where each
tile is read once (a decode GEMM's weight B when M fits one tile row), but
where an input's base, pitch and row length are only 2-byte aligned (odd K
in bf16) they are synchronous: a thread has one 16-byte piece in flight,
about a microsecond each, where TMA keeps the ring's stages in flight.
Measured on every odd-K row tried, decode included, they ran 2-5x slower
than the copy (NOTES 3.80), so 0: no input is read by the threads unless
`thread_loads` names it. Where those are 4-byte aligned the threads' copies
are `cp.async`, in flight across slots like TMA's, with their own bound
(`CP_ASYNC_MAX_READS`)."""


CP_ASYNC_MAX_READS = 2
"""`THREAD_LOAD_MAX_READS` for an input whose base, pitch and row length are
4-byte aligned (a bf16 K = 1002), which the producer's threads copy with
`cp.async`, several slots in flight as with TMA (docs/hopper.md, "Loads by
the producer's threads"). Measured on the H200 (NOTES 3.85, tawa/cuBLAS, B
copied -> B loaded by the threads, K = 4094): tiles read once 0.45 -> 0.63 at
M = 8, 0.45 -> 0.56 at 64, 0.37 -> 0.45 at 64 x 14336; read twice 0.53 ->
0.63 at M = 128; read 4 times 1.02 -> 0.68 at M = 512, and A's tiles, read
by 43-64 programs, lost on every row."""


def thread_loads_pay(reads: int, asynchronous: bool) -> bool:
    """Whether an input TMA cannot describe, each of whose tiles `reads`
    programs load, is loaded by the producer's threads rather than copied;
    `asynchronous`: they would copy it with `cp.async` (4-byte aligned)."""
    return reads <= (CP_ASYNC_MAX_READS if asynchronous else THREAD_LOAD_MAX_READS)


def split_count(
    m: int,
    n: int,
    k: int,
    block_m: int,
    block_n: int,
    block_k: int,
    sms: int = SM_COUNT,
) -> int:
    """How many ways to split K for an M x N x K GEMM with block_m x block_n
    output tiles and block_k-wide K steps on `sms` SMs; 1: do not split.

    Only when the tiles do not fill one wave: then as many slices as fit the
    idle SMs in the same wave (T * S <= P: one wave still, each slice about
    I / S iterations, so the K loop's time falls by S), but no more than keep
    `MIN_SLICE_ITERATIONS` per slice. At one wave or more, splitting would add
    waves as fast as it shortens them, and the reduction on top."""
    tiles = -(-m // block_m) * -(-n // block_n)
    iterations = -(-k // block_k)
    if tiles >= sms:
        return 1
    return max(1, min(sms // tiles, iterations // MIN_SLICE_ITERATIONS))


def given_splits(splits: int, iterations: int) -> int:
    """The K split a call given `split_k=splits` runs over a K loop of
    `iterations`: no more slices than iterations (the others would compute
    nothing, their workspace slots zeros: `split_k=10**6` on K = 128 asked for
    a 64 GB workspace) nor than CUDA launches along z (the partials kernel's
    grid axis of slices)."""
    return max(1, min(splits, iterations, MAX_GRID[2]))


STREAM_K_GAIN = 0.15
"""How much cheaper (as a fraction) the wave model must predict stream-K to be
than the best of the unsplit kernel and split-K before a call picks it by
default (`CompileOptions.stream_k` None). Above `heuristics.MARGIN` because
stream-K adds what the model does not see: every program starts and drains its
ring once per tile it touches, and its first and last tiles are partial."""

STREAM_K_SLOWDOWN = 2.0
"""How much longer our stream-K partials kernel takes per unit of work than the
tile kernel it streams (the model's rates are the tile kernel's). Measured on
the H100 (`benchmarks/stream_k_sweep.py`, NOTES 3.46): forced stream-K ran 1.1x
to 2.1x slower than the split or unsplit pick on all 17 rows, and the rule
without this factor streamed 768x3072x8192, 1024x2560x8192 and
1536x1536x16384 at 0.53, 0.41 and 0.41 of cuBLAS against 0.66-0.73 unsplit.
With it the rule streams nothing the sweep measured: stream-K stays an option
to force (`stream_k=True`) until its kernel pipelines across tiles."""


def stream_k_programs(tiles: int, iterations: int, sms: int = SM_COUNT) -> int:
    """Programs a stream-K launch runs: one per SM, but no more than there are
    units of work (a program without units would only store zeros)."""
    return max(1, min(sms, tiles * max(iterations, 1)))


SWAP_AB_MAX_M = 16
"""The most output rows M at which the shape rules weigh a GEMM with its
operands swapped (`swap_ab`: C^T = B A^T, the weights on wgmma's 64-row side,
A's rows on its N side) against the unswapped pick (`SWAP_AB_STREAM_GAIN`). Measured
on the H200 (lead, issue 16; of cuBLAS, unswapped by the rules / swapped on
64 weight rows): 1x4096x4096 0.900 / 0.929, 8x4096x4096 0.909 / 0.937,
16x6144x4096 0.937 / 0.970, but 64x6144x4096 0.958 / 0.941; at M = 32 only
a row the rules split was measured. 128x4096x4096 ran 0.857 / 0.882, a
single row against three tile shapes' worth of rules, so the ceiling stays
where the measured wins are."""

SWAP_AB_TUNED_M = 256
"""The most output rows M at which `autotune=True` also times the swapped
form of a GEMM (issue 16's small-M range)."""

SWAP_AB_BLOCK_N = 64
"""Weight rows per swapped tile (`block_n`): one 64-row wgmma block, the tile
of one consumer warpgroup. On the H200 (lead, issue 16) 64 rows beat 128
(two warpgroups) on all seven rows measured: 0.929 / 0.925 of cuBLAS at
1x4096x4096, 0.970 / 0.956 at 16x6144x4096, 0.941 / 0.822 at 64x6144x4096;
cuBLAS's own small-M kernels (`nvjet_sm90_tst_64x{8..48}`) are 64 weight
rows by M padded to 8-48."""

SWAP_AB_RATE = 0.35
"""The swapped tile's MMA rate relative to 128x256 (as `GEMM_RATES`): one
warpgroup's 64-row wgmma, as the unswapped 64x64 tile's. At M <= 16 the
swapped K loop waits on HBM, so the model's time is its stream; the rate
only keeps a swapped tile whose MMAs are the work from looking free."""

SWAP_AB_STREAM_GAIN = 1.6
"""How much faster a swapped program streams its ring than Little's law over
`MEMORY_ROUND_TRIP_US` says (`stream_bytes_per_us`, fitted on 20 KB slots of
64x96 tiles), counting in each slot only its weight rows (the few rows of A
are the same slice for every program, served by L2). Fitted on the H200
(lead, issue 16; tawa/cuBLAS, the rules' unswapped pick / swapped uncut on
64 weight rows): 1x4096x4096 0.900 (K split 3 ways) / 0.929 and 8x4096x4096
0.909 (split 3) / 0.937 need at least 1.55 and 1.53 for the model to swap
them; 16x4096x14336 0.939 (split 3) / 0.895 needs under 1.65 for it not to,
and 16x6144x4096 0.937 (uncut) / 0.970 swaps at any gain. At 1.6 the model
has the swapped 64 programs at N = 4096 streaming 1.6 TB/s against the
split's 2.0 (`GEMM_STREAM_BYTES_PER_US`): faster where the reduce kernel's
fixed cost is a large share, slower on a long K."""

SWAP_AB_MAX_BLOCK_M = 64
"""The widest swapped tile's A side (`block_m`, wgmma's N): a multiple of 8
from 8 up; past 64 rows a second row of tiles is cheaper than a 128-column
accumulator per 64 weight rows."""


def swap_block_m(m: int) -> int:
    """A swapped GEMM's `block_m` for M rows: M rounded up to a multiple of 8
    (wgmma's N step), at most `SWAP_AB_MAX_BLOCK_M`."""
    return min(SWAP_AB_MAX_BLOCK_M, max(8, -(-m // 8) * 8))
