"""A TMA store writes whole 16-byte granules: on the GPU, storing a tensor
whose rows end inside a granule overruns the last column up to the boundary
(memory that may be another array's). `runtime.kernel.tma_problem` keeps such
outputs off the TMA path (the dispatcher stores them from registers); the
simulators model the overrun (`interp.tile.write_tma_box`), so a plan that
TMA-stores such an output corrupts the columns past it on the CPU too."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.compiler import CompileOptions, lower
from tawa_xdsl.dispatch import Dispatcher, dispatch_key
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.interp.tile import granule_tail, write_tma_box
from tawa_xdsl.runtime import kernel as runtime_kernel

from .test_contracts_dlpack import gpu

COLUMNS, PITCH = 685, 696
"""685 bf16 columns are 1370 bytes: the granule ends at column 688."""
DESC = "!tile.desc<?x?xbf16, box = [64, 128]>"
COPY = f"""
func.func @copy(%x: {DESC}, %o: {DESC}) attributes {{tile.kernel}} {{
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %n0 = arith.muli %pid, %c128 : index
  %t = tile.load %x[%c0, %n0] : {DESC} -> tensor<64x128xbf16>
  tile.store %t, %o[%c0, %n0] : tensor<64x128xbf16> -> {DESC}
  func.return
}}"""
"""o = x by 64 x 128 tiles along the columns: the last tile reaches the last
column."""


pytestmark = pytest.mark.usefixtures("fresh_cache")


@pytest.mark.parametrize("level", ["lowered", "thread"])
@pytest.mark.parametrize("guard", [True, False], ids=["guarded", "unguarded"])
def test_tma_store_overruns_a_row_ending_inside_a_granule(
    monkeypatch: pytest.MonkeyPatch, level: str, guard: bool
) -> None:
    """COPY of a view of 685 columns in rows of 696, planned by the
    dispatcher as a call with such device arrays would be: with the
    `tma_problem` guard the output is stored from registers and the columns
    past it keep their values; without it the TMA store's granule overruns
    columns 685-687 in both simulators."""
    if not guard:
        monkeypatch.setattr(runtime_kernel, "tma_problem", lambda p, a: None)
    d = Dispatcher(COPY, "copy", CompileOptions())
    views = [gpu((64, COLUMNS), strides=(PITCH, 1)) for _ in range(2)]
    plan = d._runnable(d.plan(dispatch_key(d.params, d._convert(views, 0))))
    assert plan.options.tma_store is (not guard)
    module = lower(tawa_xdsl.parse(COPY), plan.options)
    if level == "thread":
        module = tawa_xdsl.apply(module, "distribute-fragments")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, PITCH)).astype(bfloat16)
    out = np.zeros((64, PITCH), bfloat16)
    tawa_xdsl.simulate(module, "copy", x[:, :COLUMNS], out[:, :COLUMNS], grid=(6,))
    np.testing.assert_array_equal(out[:, :COLUMNS], x[:, :COLUMNS])
    tail = out[:, COLUMNS:].astype(np.float32)
    if guard:
        assert not tail.any()
    else:
        assert np.isnan(tail[:, :3]).all() and not tail[:, 3:].any()


def test_granule_tail_stops_where_memory_or_the_box_does() -> None:
    """No overrun when the box stops inside the tensor or rows end on a
    boundary; none past the array's memory (a contiguous array's last row)."""
    buf = np.zeros((4, 24), np.float32)
    view = buf[:, :13]  # 52-byte rows: the granule ends at column 16
    assert granule_tail(view, (0, 0), (4, 8)) is None  # box inside
    assert granule_tail(buf[:, :12], (0, 8), (4, 8)) is None  # 48-byte rows
    assert granule_tail(view, (0, 8), (2, 8)).shape == (2, 3)
    write_tma_box(view, (1, 8), np.ones((2, 8), np.float32))
    assert np.isnan(buf[1:3, 13:16]).all() and not buf[1:3, 16:].any()
    assert not buf[0].any() and not buf[3].any()
    flat = np.zeros(4 * 16 - 3, np.float32)  # rows of 16, the last one short
    rows = np.lib.stride_tricks.as_strided(flat, (4, 13), (64, 4))
    write_tma_box(rows, (0, 0), np.ones((4, 16), np.float32))
    assert np.isnan(flat[13:16]).all() and np.isnan(flat[45:48]).all()
    assert (flat.reshape(-1)[48:] == 1).all()  # the last row: its own columns only
