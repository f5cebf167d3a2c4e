"""Two TMA stores of one block are not ordered: `cp.async.bulk.wait_group.read`
frees the first one's staging tile but says nothing of when its global writes
land, so a second store to the same bytes may land first. A store that may
write what an earlier one wrote (another store of the same tensor, or itself
again in a loop) first waits for those writes (`cp.async.bulk.wait_group`,
`tma_store_wait ... writes`); both simulators flag two overlapping stores with
no such wait between them. Found by the fifth outside sweep (@overwrite: y =
x + 1, then y = 2 x, over one tile)."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import ptx
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.interp.scheduler import SimulationError
from tawa_xdsl.kernel import find_kernel

from .conftest import EXAMPLES, REPO
from .thread_level import to_thread_level

ROWS = REPO / "tests" / "kernels" / "rows_outside5.mlir"
GEMM = EXAMPLES / "gemm.mlir"


def overwrite_args() -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(0).standard_normal((100, 70)).astype(np.float32)
    return x, np.full_like(x, np.nan)


def nv_level(path, pipeline: str = "tawa-hopper-pipeline"):
    return tawa_xdsl.apply(tawa_xdsl.parse(path), pipeline)


def waits(module, kind) -> list:
    return [op for op in module.walk() if isinstance(op, kind)]


def test_a_second_store_of_one_tile_waits_for_the_first_ones_writes() -> None:
    module = nv_level(ROWS)
    kernel = find_kernel(module, "overwrite")
    staged = [op for op in kernel.walk() if isinstance(op, nv.TMAStoreWaitOp)]
    # before each of the two stores, and the exit's (reads only)
    assert [op.writes is not None for op in staged] == [True, True, False]


def test_a_single_store_outside_any_loop_waits_for_reads_only() -> None:
    module = nv_level(GEMM, "tawa-hopper-pipeline{persistent=false}")
    kernel = find_kernel(module, "gemm_nt")
    staged = [op for op in kernel.walk() if isinstance(op, nv.TMAStoreWaitOp)]
    assert staged and all(op.writes is None for op in staged)


def test_a_persistent_kernels_store_waits_for_the_last_tiles_writes() -> None:
    module = nv_level(GEMM)
    kernel = find_kernel(module, "gemm_nt")
    staged = [op for op in kernel.walk() if isinstance(op, nv.TMAStoreWaitOp)]
    assert [op.writes is not None for op in staged] == [True, False]


class Lines:
    """An emitter that keeps the lines an op prints."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def line(self, text: str) -> None:
        self.lines.append(text)


def printed(op: ptx.BulkWaitOp) -> list[str]:
    out = Lines()
    op.print_ptx(out)  # type: ignore[arg-type]
    return out.lines


def test_the_ptx_of_a_full_wait_has_no_read_qualifier() -> None:
    assert printed(ptx.BulkWaitOp(0, writes=True)) == ["cp.async.bulk.wait_group 0;"]
    assert printed(ptx.BulkWaitOp(1)) == ["cp.async.bulk.wait_group.read 1;"]


def drop_write_waits(module, kind) -> None:
    for op in waits(module, kind):
        if op.writes is not None:
            del op.properties["writes"]


@pytest.mark.parametrize("level", ["nvgpu_async", "thread"])
def test_the_simulators_catch_two_stores_of_one_tile_without_a_full_wait(
    level: str,
) -> None:
    module = nv_level(ROWS)
    if level == "thread":
        module = tawa_xdsl.apply(module, "distribute-fragments")
    kind = nv.TMAStoreWaitOp if level == "nvgpu_async" else ptx.BulkWaitOp
    x, y = overwrite_args()
    tawa_xdsl.simulate(module, "overwrite", x, y, grid=(2, 2), seed=0)
    np.testing.assert_array_equal(y, 2 * x)
    drop_write_waits(module, kind)
    with pytest.raises(SimulationError, match="TMA stores are not ordered"):
        tawa_xdsl.simulate(module, "overwrite", *overwrite_args(), grid=(2, 2), seed=0)


def test_stores_of_disjoint_tiles_need_no_full_wait() -> None:
    """The persistent GEMM's tiles never overlap: with its full waits dropped the
    thread level still runs clean (the check is on bytes, not on stores)."""
    module = to_thread_level(tawa_xdsl.parse(GEMM), "tawa-hopper-pipeline")
    drop_write_waits(module, ptx.BulkWaitOp)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((300, 64)).astype(bfloat16)
    b = rng.standard_normal((520, 64)).astype(bfloat16)
    c = np.full((300, 520), np.nan, dtype=bfloat16)
    tawa_xdsl.simulate(module, "gemm_nt", a, b, c, grid=(3,), seed=0)
    assert not np.isnan(c.astype(np.float32)).any()
