"""Register-tile stores run in the thread-level simulator: a tile kernel whose
tile holds a distinct value per element (A times an identity, exact) stores it
through the register paths (`tma-store=false`: 16-byte vectors after a quad
transpose, element pairs (an i8 pair's bytes as one `st.u16`), single
elements, as `select-store-path` allows and
`distribute-fragments` writes them), lowered to the thread level and run lane by
lane. For random tile shapes, element types, tensor extents, row strides and
tile coordinates (negative, odd, past the end), every element inside the tensor
is written exactly once with its own value and nothing outside it is written
(the padding between rows included); the simulator itself rejects a store that
is misaligned or lands outside the array, and a uniform branch that is not."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.interp.thread_sim import ThreadFunctions, launch_parameters, run_threads
from tawa_xdsl.kernel import check_host_arguments, find_kernel

from ..thread_level import to_thread_level

SENTINEL = 0xFF  # bytes of the output before the kernel runs (a NaN pattern)


@dataclass(frozen=True)
class Case:
    warpgroups: int
    rows: int  # tile
    cols: int
    bits: int  # 8 (i8), 16 (bf16) or 32 (f32)
    extents: tuple[int, ...]  # tensor
    row_stride: int  # elements
    coords: tuple[int, ...]  # tile origin, leading dimension first

    @property
    def dtype(self) -> np.dtype:
        return {8: np.dtype(np.int8), 16: bfloat16}.get(self.bits, np.dtype(np.float32))

    @property
    def depth(self) -> int:
        """K of the identity product: whole 64-wide steps covering the columns."""
        return 64 * -(-self.cols // 64)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    warpgroups = draw(st.integers(1, 2))
    rows = 64 * warpgroups * draw(st.integers(1, 2))
    cols = draw(st.sampled_from([8, 16, 32, 64, 128]))
    bits = draw(st.sampled_from([8, 16, 32]))
    n_rows, n_cols = draw(st.integers(1, 3 * rows)), draw(st.integers(1, 3 * cols))
    per_16_bytes = 16 // (bits // 8)
    row_stride = -(-n_cols // per_16_bytes) * per_16_bytes
    row_stride += per_16_bytes * draw(st.integers(0, 2))
    row = draw(st.integers(-rows - 8, n_rows + 8))
    col = draw(
        st.one_of(
            st.integers(-cols - 8, n_cols + 8),  # anywhere: odd, negative, past the end
            st.integers(0, max(0, (n_cols - cols) // 8)).map(lambda k: 8 * k),
        )
    )
    extents: tuple[int, ...] = (n_rows, n_cols)
    coords: tuple[int, ...] = (row, col)
    if draw(st.booleans()):  # a leading dimension (heads of attention)
        heads = draw(st.integers(1, 3))
        extents = (heads, *extents)
        coords = (draw(st.integers(-1, heads)), *coords)
    return Case(warpgroups, rows, cols, bits, extents, row_stride, coords)


def kernel_text(rows: int, cols: int, bits: int, rank: int) -> str:
    """`out[coords] = A I`: a tile of `rows x cols` values picked from A."""
    et = {8: "i8", 16: "bf16"}.get(bits, "f32")
    lead, box = "?x" * (rank - 2), "1, " * (rank - 2)
    out = f"!tile.desc<{lead}?x?x{et}, box = [{box}{rows}, {cols}]>"
    a = f"!tile.desc<?x?xbf16, box = [{rows}, 64]>"
    b = f"!tile.desc<?x?xbf16, box = [{cols}, 64]>"
    acc = f"tensor<{rows}x{cols}xf32>"
    heads = ["%h"] if rank == 3 else []
    params = ", ".join(f"{p}: index" for p in [*heads, "%r", "%c"])
    coords = ", ".join([*heads, "%r", "%c"])
    value = "%acc"
    convert = ""
    if bits == 16:
        convert = f"%v = arith.truncf %acc : {acc} to tensor<{rows}x{cols}xbf16>"
        value = "%v"
    if bits == 8:  # small integers, exact in f32
        i32 = f"tensor<{rows}x{cols}xi32>"
        convert = (
            f"%i = tile.fptosi %acc : {acc} -> {i32}\n"
            f"  %v = tile.trunci %i : {i32} -> tensor<{rows}x{cols}xi8>"
        )
        value = "%v"
    return f"""
func.func @store(%a: {a}, %b: {b}, %out: {out}, {params}) attributes {{tile.kernel}} {{
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %K = tile.dim %a, 1 : {a}
  %zero = arith.constant dense<0.0> : {acc}
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> ({acc}) {{
    %ta = tile.load %a[%c0, %k] : {a} -> tensor<{rows}x64xbf16>
    %tb = tile.load %b[%c0, %k] : {b} -> tensor<{cols}x64xbf16>
    %tbt = tile.trans %tb : tensor<{cols}x64xbf16> -> tensor<64x{cols}xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<{rows}x64xbf16>, tensor<64x{cols}xbf16> -> {acc}
    scf.yield %next : {acc}
  }}
  {convert}
  tile.store {value}, %out[{coords}] : tensor<{rows}x{cols}x{et}> -> {out}
  func.return
}}
"""


@cache
def lowered(warpgroups: int, rows: int, cols: int, bits: int, rank: int) -> ModuleOp:
    """The store kernel at the thread level (compiled once per shape)."""
    options = (
        f"tawa-hopper-pipeline{{num-stages=1 mma-depth=1 num-consumers={warpgroups} "
        "tma-store=false}"
    )
    return to_thread_level(
        tawa_xdsl.parse(kernel_text(rows, cols, bits, rank)), options
    )


def element_values(case: Case) -> np.ndarray:
    """A distinct finite bf16 per tile element (exact in f32 too); for an i8
    tile, integers -127..127 in turn (distinct within 255 elements)."""
    ids = np.arange(1, case.rows * case.cols + 1)
    if case.bits == 8:
        return (ids % 255 - 127).astype(bfloat16).reshape(case.rows, case.cols)
    positive = 0x7F7F  # the largest finite positive bf16 pattern
    bits = np.where(ids <= positive, ids, ids - positive + 0x8000).astype(np.uint16)
    return bits.view(bfloat16).reshape(case.rows, case.cols)


def store_module(case: Case) -> ModuleOp:
    return lowered(case.warpgroups, case.rows, case.cols, case.bits, len(case.extents))


def run_store(
    case: Case, module: ModuleOp | None = None
) -> tuple[np.ndarray, ThreadFunctions]:
    """Run the store for `case` (in `module`, by default the lowered store
    kernel): the output's backing memory (padding included) and the machine
    (its byte write counts and store instructions)."""
    values = element_values(case)
    a = np.zeros((case.rows, case.depth), bfloat16)
    a[:, : case.cols] = values
    identity = np.zeros((case.cols, case.depth), bfloat16)
    identity[:, : case.cols] = np.eye(case.cols)
    *lead, n_rows, n_cols = case.extents
    backing = np.full(
        (*lead, n_rows, case.row_stride * case.dtype.itemsize), SENTINEL, np.uint8
    ).view(case.dtype)
    out = backing[..., :n_cols]
    module = module or store_module(case)
    kernel = find_kernel(module, "store")
    args = check_host_arguments(kernel, (a, identity, out, *case.coords))
    machine = run_threads(module, kernel, launch_parameters(kernel, args), (1, 1, 1))
    return backing, machine


def tile_region(case: Case) -> np.ndarray:
    """Which elements of the output's backing memory the tile covers."""
    *lead, n_rows, n_cols = case.extents
    inside = np.zeros((*lead, n_rows, case.row_stride), bool)
    *lead_at, row, col = case.coords
    if all(0 <= i < n for i, n in zip(lead_at, lead, strict=True)):
        target = inside[tuple(lead_at)] if lead else inside
        r1, c1 = max(row + case.rows, 0), max(min(col + case.cols, n_cols), 0)
        target[max(row, 0) : r1, max(col, 0) : c1] = True
    return inside


def check(case: Case, module: ModuleOp | None = None) -> ThreadFunctions:
    backing, machine = run_store(case, module)
    inside = tile_region(case)
    row, col = case.coords[-2:]
    rows, cols = np.nonzero(inside.reshape(-1, case.row_stride))
    expected = np.full(backing.view(np.uint8).shape, SENTINEL, np.uint8)
    expected = expected.view(case.dtype)
    values = element_values(case).astype(case.dtype)
    flat = expected.reshape(-1, case.row_stride)
    flat[rows, cols] = values[rows % case.extents[-2] - row, cols - col]
    np.testing.assert_array_equal(backing.view(np.uint8), expected.view(np.uint8))
    (written,) = [a for a in machine.memory.allocations if a.name == "p_out_ptr"]
    bytes_inside = np.repeat(inside.reshape(-1), case.dtype.itemsize)
    bytes_inside = bytes_inside[: len(written.writes)]
    assert (written.writes[bytes_inside] == 1).all(), "an element was not written once"
    assert (written.writes[~bytes_inside] == 0).all(), (
        "a byte outside the tile was written"
    )
    return machine


@given(case=cases())
def test_every_element_inside_lands_once_and_nothing_outside(case: Case) -> None:
    """As many cases as the hypothesis profile asks for (`--hypothesis-profile`)."""
    check(case)


# (tensor rows, cols), tile origin, the only store instructions that may run
PATHS = [
    ((300, 256), (64, 128), {"st.global.v4.b32"}),  # whole, aligned: vectors
    ((300, 249), (64, 128), {"st.global.b32", "st.global.b16"}),  # past the end
    ((300, 256), (64, 124), {"st.global.b32"}),  # even, not 16-byte aligned
    ((300, 256), (64, 3), {"st.global.b16"}),  # odd: single elements
    ((300, 256), (-8, -8), {"st.global.b32"}),  # before the start
]


@pytest.mark.parametrize("extents, coords, kinds", PATHS)
def test_each_bf16_tile_takes_its_path(extents, coords, kinds) -> None:
    machine = check(Case(2, 128, 128, 16, extents, 256, coords))
    assert set(machine.stores) == kinds


# i8: pairs of bytes packed into one 16-bit store where the column is even
I8_PATHS = [
    ((300, 256), (64, 128), {"st.global.u16"}),  # whole, aligned: pairs only
    ((300, 249), (64, 128), {"st.global.u16", "st.global.u8"}),  # the last alone
    ((300, 256), (64, 3), {"st.global.u8"}),  # odd: single bytes
    ((300, 256), (-8, -8), {"st.global.u16"}),  # before the start
]


@pytest.mark.parametrize("extents, coords, kinds", I8_PATHS)
def test_each_i8_tile_takes_its_path(extents, coords, kinds) -> None:
    """Every byte inside lands once with its value, none outside (`check`),
    by the stores the tile's column and the bounds allow."""
    machine = check(Case(2, 128, 128, 8, extents, 256, coords))
    assert set(machine.stores) == kinds
