"""Register-tile stores (`KernelEmitter.store_tile`) run in a CPU model of the
consumer warps (`tests/ptx_lanes.py`): for random tile shapes, element types,
tensor extents, row strides and tile coordinates (negative, odd, past the end),
every element inside the tensor is written once with its own value, nothing
outside it is written, every store is aligned to its width and every branch is
uniform. This covers the three paths the printer chooses between at run time:
16-byte vectors after a quad transpose, element pairs and single elements."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    DictionaryAttr,
    Float32Type,
    IntegerAttr,
    i32,
)

from tawa_xdsl.dialects.nvgpu_async import FragmentKind
from tawa_xdsl.dialects.roles import THREADS_PER_WARPGROUP
from tawa_xdsl.lowering.fragments import Geometry
from tawa_xdsl.lowering.ptx_emitter import Frag, GlobalTensor, KernelEmitter

from ..ptx_lanes import Warp

BASE = 1 << 20  # the tensor's address: 16-byte aligned, as the runtime checks


@dataclass(frozen=True)
class Case:
    warpgroups: int
    rows: int  # tile
    cols: int
    bits: int  # 16 or 32
    extents: tuple[int, ...]  # tensor
    row_stride: int  # elements
    coords: tuple[int, ...]  # tile origin, leading dimension first

    @property
    def esize(self) -> int:
        return self.bits // 8


@st.composite
def cases(draw: st.DrawFn) -> Case:
    warpgroups = draw(st.integers(1, 2))
    rows = 64 * warpgroups * draw(st.integers(1, 2))
    cols = draw(st.sampled_from([8, 16, 32, 64, 128]))
    bits = draw(st.sampled_from([16, 32]))
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


def element_id(row: int, col: int, cols: int) -> int:
    """A distinct nonzero value per tile element (fits 16 bits for these tiles)."""
    return row * cols + col + 1


def run_store(case: Case) -> tuple[dict[int, int], Counter[str]]:
    """Print the store for `case` and run it on every consumer warp: the bytes
    written, and the store instructions run, by opcode."""
    kernel = func.FuncOp("k", ((), ()))
    threads = THREADS_PER_WARPGROUP * (case.warpgroups + 1)
    kernel.attributes["nvgpu_async.launch"] = DictionaryAttr(
        {"threads": IntegerAttr(threads, i32), "smem": IntegerAttr(0, i32)}
    )
    emitter = KernelEmitter(kernel)
    emitter._thread_ids()
    emitter._consumer_ids()
    prologue = len(emitter.lines)
    geom = Geometry(FragmentKind.ACC, (case.rows, case.cols), case.warpgroups)
    etype = BFloat16Type() if case.bits == 16 else Float32Type()
    per_reg = 2 if case.bits == 16 else 1
    regs = [f"%v{i}" for i in range(geom.count // per_reg)]
    rank = len(case.extents)
    strides = [case.row_stride * case.extents[-2]] * (rank - 2) + [case.row_stride]
    target = GlobalTensor(
        "%base",
        [f"%dim{k}" for k in range(rank)],
        [f"%stride{k}" for k in range(rank - 1)],
        etype,
    )
    emitter.store_tile(
        Frag(geom, etype, regs), target, [f"%at{k}" for k in range(rank)]
    )
    assert any("st.global" in line for line in emitter.lines[prologue:])

    memory: dict[int, int] = {}
    stores: Counter[str] = Counter()
    band = case.rows // case.warpgroups
    for first in range(THREADS_PER_WARPGROUP, threads, 32):
        tids = list(range(first, first + 32))
        start = []
        for tid in tids:
            ctid = tid - THREADS_PER_WARPGROUP
            cwg, warp, lane = ctid // 128, (ctid // 32) % 4, ctid % 32
            row0, col0 = cwg * band + 16 * warp + lane // 4, 2 * (lane % 4)
            values = {}
            for k in range(geom.count):
                dr, dc = geom.acc_offsets(k)
                values[k] = element_id(row0 + dr, col0 + dc, case.cols)
            r: dict[str, object] = {"%base": BASE}
            for i, name in enumerate(regs):
                if per_reg == 2:
                    r[name] = values[2 * i] | values[2 * i + 1] << 16
                else:
                    r[name] = values[i]
            r |= {f"%dim{k}": e for k, e in enumerate(case.extents)}
            r |= {f"%stride{k}": s for k, s in enumerate(strides)}
            r |= {f"%at{k}": c & 0xFFFFFFFF for k, c in enumerate(case.coords)}
            start.append(r)
        warp = Warp(tids, start)
        warp.run(emitter.lines, memory)
        stores += warp.stores
    return memory, stores


def expected_bytes(case: Case) -> dict[int, int]:
    expected: dict[int, int] = {}
    *lead, row, col = case.coords
    *lead_extents, n_rows, n_cols = case.extents
    if any(not 0 <= i < n for i, n in zip(lead, lead_extents, strict=True)):
        return expected
    offset = sum(i * case.row_stride * n_rows for i in lead)
    for r in range(case.rows):
        for c in range(case.cols):
            if 0 <= row + r < n_rows and 0 <= col + c < n_cols:
                addr = BASE + case.esize * (
                    offset + (row + r) * case.row_stride + col + c
                )
                value = element_id(r, c, case.cols)
                for byte in range(case.esize):
                    expected[addr + byte] = (value >> (8 * byte)) & 0xFF
    return expected


@given(case=cases())
def test_every_element_inside_lands_once_and_nothing_outside(case: Case) -> None:
    memory, _ = run_store(case)
    assert memory == expected_bytes(case)


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
    case = Case(2, 128, 128, 16, extents, 256, coords)
    memory, stores = run_store(case)
    assert memory == expected_bytes(case)
    assert set(stores) == kinds
