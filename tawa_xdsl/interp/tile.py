"""Semantics of the tile ops over numpy arrays: the oracle every level is tested
against. Global tensors (`!tile.desc` values) are the caller's numpy arrays;
`tile.store` writes into them in place."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.lib.array_utils import byte_bounds
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import tile
from tawa_xdsl.dtypes import numpy_dtype
from tawa_xdsl.interp.elementwise import compare_floats, float_to_int, to_type
from tawa_xdsl.target import TMA_ALIGN


def box_slices(
    shape: Sequence[int], offsets: Sequence[int], box: Sequence[int]
) -> tuple[tuple[slice, ...], tuple[slice, ...]] | None:
    """The part of a box at `offsets` that lies inside a tensor of `shape`, as
    (slices into the tensor, slices into the box); None if it misses entirely."""
    inside, within = [], []
    for dim, off, extent in zip(shape, offsets, box, strict=True):
        lo, hi = max(off, 0), min(off + extent, dim)
        if lo >= hi:
            return None
        inside.append(slice(lo, hi))
        within.append(slice(lo - off, hi - off))
    return tuple(inside), tuple(within)


def read_box(
    array: np.ndarray, offsets: Sequence[int], box: Sequence[int]
) -> np.ndarray:
    """TMA-load semantics: the box at `offsets`, zero where it leaves the tensor."""
    out = np.zeros(tuple(box), dtype=array.dtype)
    if (parts := box_slices(array.shape, offsets, box)) is not None:
        inside, within = parts
        out[within] = array[inside]
    return out


def write_box(array: np.ndarray, offsets: Sequence[int], value: np.ndarray) -> None:
    """TMA-store semantics: write the box, dropping what falls outside the tensor."""
    if (parts := box_slices(array.shape, offsets, value.shape)) is not None:
        inside, within = parts
        array[inside] = value[within]


def write_tma_box(array: np.ndarray, offsets: Sequence[int], value: np.ndarray) -> None:
    """What a TMA store writes on the GPU: the box, dropping what falls outside
    the tensor, in whole `TMA_ALIGN`-byte granules. Where the box reaches past
    the last column and a row's bytes end inside a granule, the rest of that
    granule, past the tensor, is written too: here with all-ones bytes (NaN
    for floats), which the caller never wrote, wherever the array's memory
    holds them (a view of wider rows). `runtime.kernel.tma_problem` keeps
    such outputs off the TMA path; this makes a simulator see it if not."""
    write_box(array, offsets, value)
    tail = granule_tail(array, offsets, value.shape)
    if tail is None:
        return
    _, high = byte_bounds(_root(array))
    ones = np.array(-1, f"i{array.itemsize}").view(array.dtype)
    for row in np.ndindex(tail.shape[:-1]):
        if byte_bounds(tail[row])[1] <= high:  # the memory holds it
            tail[row] = ones


def boxes_overlap(
    first: tuple[np.ndarray, Sequence[int], Sequence[int]],
    second: tuple[np.ndarray, Sequence[int], Sequence[int]],
) -> bool:
    """Whether two TMA boxes, each (tensor, offsets, box shape), write common
    elements of one tensor (each clipped to it). Two TMA stores are not ordered
    among themselves: where they overlap, which one lands last is undefined."""
    (a, a_at, a_box), (b, b_at, b_box) = first, second
    if _where(a) != _where(b):
        return False
    return all(
        max(i, j, 0) < min(i + m, j + n, extent)
        for i, m, j, n, extent in zip(a_at, a_box, b_at, b_box, a.shape, strict=True)
    )


def _where(array: np.ndarray) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """A tensor's memory and layout: views of one tensor alike compare equal."""
    return array.__array_interface__["data"][0], array.shape, array.strides


def granule_tail(
    array: np.ndarray, offsets: Sequence[int], box: Sequence[int]
) -> np.ndarray | None:
    """The elements past `array`'s last column, up to the next `TMA_ALIGN`-byte
    boundary, that a TMA store of `box` at `offsets` overruns in each row it
    writes (a view into the array's memory, which may end inside the last
    row's), or None: the rows end on a boundary, the box stops inside the
    tensor, or the row pitch is none a tensor map has (not a multiple of
    `TMA_ALIGN` bytes, or no room for the granule: a contiguous array of
    such rows, which the runtime copies into padded rows)."""
    n, size = array.shape[-1], array.itemsize
    granule_end = -(-n * size // TMA_ALIGN) * TMA_ALIGN // size
    width = min(offsets[-1] + box[-1], granule_end)
    parts = box_slices(array.shape[:-1], offsets[:-1], box[:-1])
    if width <= n or offsets[-1] >= n or (parts is None and array.ndim > 1):
        return None
    pitches = [abs(d) for d in array.strides[:-1] if d]
    if any(p % TMA_ALIGN or p < granule_end * size for p in pitches):
        return None  # no tensor map has such rows: the runtime copies them
    wide = np.lib.stride_tricks.as_strided(
        array, (*array.shape[:-1], width), array.strides, writeable=True
    )
    return wide[parts[0] if parts is not None else ()][..., n:width]


def _root(array: np.ndarray) -> np.ndarray:
    """The array owning `array`'s memory."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


class TileCounter:
    """The counter `tile.next_tile` takes tickets from: one per launch, shared by
    its programs, counting modulo the tile count (see the op)."""

    def __init__(self) -> None:
        self.value = 0
        self.last: Operation | None = None

    def take(self, op: Operation, tiles: int) -> int:
        """The next ticket, taken by `op` (reported if the launch ends with the
        counter anywhere but zero)."""
        ticket = self.value
        self.value = 0 if ticket >= tiles - 1 else ticket + 1
        self.last = op
        return ticket

    def check_reset(self) -> None:
        """At the end of a launch: the counter is back at zero, as the next
        launch of the kernel expects it (each tile's ticket taken once)."""
        if self.value != 0:
            assert self.last is not None
            raise OpDiagnostic(
                self.last,
                f"the launch left its tile counter at {self.value}, not 0: its "
                "programs must take one ticket per tile (a program stops at the "
                "first ticket past the tiles), or the next launch starts there",
            )


REDUCERS = {
    tile.ReduceKind.MAX: np.max,
    tile.ReduceKind.MIN: np.min,
    tile.ReduceKind.SUM: np.sum,
}
"""numpy's form of each `tile.reduce` kind (NaN propagates, as max.NaN does)."""


def convert(
    self: Any, interpreter: Interpreter, op: Operation, args: PythonValues
) -> PythonValues:
    """A tile to the result's element type as numpy converts: to nearest for
    i32 -> f32, sign-extending or keeping the low bits between integers."""
    return (to_type(args[0], op.results[0].type),)


@register_impls
class TileFunctions(InterpreterFunctions):
    """Tile ops for one program; `program_id` and `grid` are set by the launcher."""

    def __init__(self) -> None:
        self.program_id: tuple[int, int, int] = (0, 0, 0)
        self.grid: tuple[int, int, int] = (1, 1, 1)
        self.cluster = 1
        self.running: Callable[[], tuple[int, int, int]] | None = None
        """Where several programs run at once (a cluster in the barrier
        simulator): the id of the one running now, instead of `program_id`."""
        self.tickets = TileCounter()
        """The launch's tile counter (`tile.next_tile`)."""

    def current(self) -> tuple[int, int, int]:
        return self.program_id if self.running is None else self.running()

    @impl(tile.ProgramIdOp)
    def run_program_id(
        self, interpreter: Interpreter, op: tile.ProgramIdOp, args: PythonValues
    ) -> PythonValues:
        return (self.current()[op.axis.index],)

    @impl(tile.ClusterIdOp)
    def run_cluster_id(
        self, interpreter: Interpreter, op: tile.ClusterIdOp, args: PythonValues
    ) -> PythonValues:
        return (self.current()[0] // self.cluster,)

    @impl(tile.ClusterRankOp)
    def run_cluster_rank(
        self, interpreter: Interpreter, op: tile.ClusterRankOp, args: PythonValues
    ) -> PythonValues:
        return (self.current()[0] % self.cluster,)

    @impl(tile.NumProgramsOp)
    def run_num_programs(
        self, interpreter: Interpreter, op: tile.NumProgramsOp, args: PythonValues
    ) -> PythonValues:
        return (self.grid[op.axis.index],)

    @impl(tile.NextTileOp)
    def run_next_tile(
        self, interpreter: Interpreter, op: tile.NextTileOp, args: PythonValues
    ) -> PythonValues:
        return (self.tickets.take(op, args[0]),)

    @impl(tile.DimOp)
    def run_dim(
        self, interpreter: Interpreter, op: tile.DimOp, args: PythonValues
    ) -> PythonValues:
        return (int(args[0].shape[op.axis.value.data]),)

    @impl(tile.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: tile.LoadOp, args: PythonValues
    ) -> PythonValues:
        desc = op.desc.type
        assert isinstance(desc, tile.DescType)
        array, *offsets = args
        box = read_box(array, offsets, desc.get_box())
        return (box.reshape(op.result.type.get_shape()),)

    @impl(tile.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: tile.StoreOp, args: PythonValues
    ) -> PythonValues:
        desc = op.desc.type
        assert isinstance(desc, tile.DescType)
        value, array, *offsets = args
        write_box(array, offsets, np.asarray(value).reshape(desc.get_box()))
        return ()

    @impl(tile.DotOp)
    def run_dot(
        self, interpreter: Interpreter, op: tile.DotOp, args: PythonValues
    ) -> PythonValues:
        a, b, acc = args
        prod = a.astype(np.float32) @ b.astype(np.float32)
        return ((acc + prod).astype(np.float32),)

    @impl(tile.TransOp)
    def run_trans(
        self, interpreter: Interpreter, op: tile.TransOp, args: PythonValues
    ) -> PythonValues:
        return (np.ascontiguousarray(args[0].T),)

    @impl(tile.ReduceOp)
    def run_reduce(
        self, interpreter: Interpreter, op: tile.ReduceOp, args: PythonValues
    ) -> PythonValues:
        reducer = REDUCERS[op.kind.data]
        x = args[0]
        if x.dtype != np.int32:  # 16-bit floats are reduced in f32, then rounded
            x = x.astype(np.float32)
        # an i32 sum is taken in int64 and wraps to i32 in to_type, as add.s32 does
        return (to_type(reducer(x, axis=op.axis.value.data), op.result.type),)

    @impl(tile.ExpandDimsOp)
    def run_expand_dims(
        self, interpreter: Interpreter, op: tile.ExpandDimsOp, args: PythonValues
    ) -> PythonValues:
        return (np.expand_dims(args[0], op.axis.value.data),)

    @impl(tile.BroadcastOp)
    def run_broadcast(
        self, interpreter: Interpreter, op: tile.BroadcastOp, args: PythonValues
    ) -> PythonValues:
        return (np.broadcast_to(args[0], op.result.type.get_shape()).copy(),)

    @impl(tile.SplatOp)
    def run_splat(
        self, interpreter: Interpreter, op: tile.SplatOp, args: PythonValues
    ) -> PythonValues:
        t = op.result.type
        return (np.full(t.get_shape(), args[0], dtype=numpy_dtype(t.element_type)),)

    @impl(tile.IotaOp)
    def run_iota(
        self, interpreter: Interpreter, op: tile.IotaOp, args: PythonValues
    ) -> PythonValues:
        t = op.result.type
        return (np.arange(t.get_shape()[0], dtype=numpy_dtype(t.element_type)),)

    @impl(tile.CmpiOp)
    def run_cmpi(
        self, interpreter: Interpreter, op: tile.CmpiOp, args: PythonValues
    ) -> PythonValues:
        compare = {
            tile.CmpiPredicate.EQ: np.equal,
            tile.CmpiPredicate.NE: np.not_equal,
            tile.CmpiPredicate.SLT: np.less,
            tile.CmpiPredicate.SLE: np.less_equal,
            tile.CmpiPredicate.SGT: np.greater,
            tile.CmpiPredicate.SGE: np.greater_equal,
        }[op.predicate.data]
        return (compare(args[0], args[1]),)

    @impl(tile.CmpfOp)
    def run_cmpf(
        self, interpreter: Interpreter, op: tile.CmpfOp, args: PythonValues
    ) -> PythonValues:
        return (compare_floats(op.predicate.data, args[0], args[1]),)

    run_sitofp = impl(tile.SIToFPOp)(convert)
    run_extsi = impl(tile.ExtSIOp)(convert)
    run_trunci = impl(tile.TruncIOp)(convert)
    run_fptosi = impl(tile.FPToSIOp)(float_to_int)
    run_fptoui = impl(tile.FPToUIOp)(float_to_int)

    @impl(tile.SelectOp)
    def run_select(
        self, interpreter: Interpreter, op: tile.SelectOp, args: PythonValues
    ) -> PythonValues:
        return (np.where(args[0], args[1], args[2]),)

    @impl(tile.ExtractOp)
    def run_extract(
        self, interpreter: Interpreter, op: tile.ExtractOp, args: PythonValues
    ) -> PythonValues:
        return (args[0][op.get_position()],)
