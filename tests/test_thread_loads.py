"""Inputs the producer warpgroup's threads load (`thread_loads`), on the CPU.

A tensor whose base or row pitch TMA cannot describe (K = 999 in bf16, a
view one column into its storage, an odd K of 8-bit elements) is read by the
128 producer threads into the slot at the addresses TMA would have used
(`lowering/distribute/memory.ThreadLoad`): with `cp.async` copies left in
flight where every extent is 4-byte aligned, else with plain loads and
stores the thread fences itself; each thread then arrives on `full`
(`thread_loads_arrive`), and the consumer fences for the async proxy after
its wait. The checks:

- the thread simulator's output with thread loads equals bit for bit its
  output with TMA reading an aligned copy (the slots hold the same bytes, the
  wgmmas sum in the same order), and both are close to float64; the barrier
  simulator's too. Tiles of 64 rows (decode), 128 rows and two M tiles, B
  tiles of two 128-byte swizzle boxes (B stored K x N), 1-, 2-, 4-, 8- and
  16-byte copies, a slot mixing cp.async and stored tiles;
- a mistake in the swizzle, the `full` arrival count (one arrival, or the
  TMA copies' forgotten), the consumer's proxy fence, the zero fill, or a
  noinc arrive publishing stores fails on the CPU (each mutation is made
  here);
- ptxas assembles the loads on the producer's register budget, no spills;
- the option: its type, its names, and the kernels it refuses.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

import tawa_xdsl
from tawa_xdsl.analysis import kernel_plan
from tawa_xdsl.api import parse_kernel
from tawa_xdsl.compiler import CompileOptions, describe
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dtypes import bfloat16, float8_e4m3fn
from tawa_xdsl.interp.barrier_sim import Hazard, PredictedHang
from tawa_xdsl.kernel import find_kernel
from tawa_xdsl.lowering.assemble import _ptxas, assemble
from tawa_xdsl.lowering.distribute import barriers, memory
from tawa_xdsl.lowering.ptx_target import kernel_ptx
from tawa_xdsl.target import THREADS_PER_WARPGROUP
from tests.conftest import EXAMPLES, sweep
from tests.thread_level import simulate_output


def _module(kernel: str) -> ModuleOp:
    source = "gemm_fp8.mlir" if "fp8" in kernel else "gemm.mlir"
    return parse_kernel((EXAMPLES / source).read_text(), kernel)


def _lower(kernel: str, loads: str, options: str, ptx: bool) -> ModuleOp:
    pipeline = (
        f'tawa-hopper-pipeline{{thread-loads="{loads}" tuned=false num-stages=2 '
        f"{options}}}"
    )
    return tawa_xdsl.apply(
        _module(kernel), pipeline + (",distribute-fragments" if ptx else "")
    )


def _operands(
    kernel: str, m: int, n: int, k: int, view: bool
) -> tuple[list[object], np.ndarray]:
    """The arguments (A one column into wider rows when `view`) and the
    float64 product."""
    rng = np.random.default_rng(7)
    dtype = float8_e4m3fn if "fp8" in kernel else bfloat16
    a = rng.standard_normal((m, k + view)).astype(dtype)[:, view:]
    b_shape = (k, n) if kernel == "gemm_nn" else (n, k)
    b = rng.standard_normal(b_shape).astype(dtype)
    wide = b.astype(np.float64) if kernel == "gemm_nn" else b.astype(np.float64).T
    expected = a.astype(np.float64) @ wide
    args: list[object] = [a, b, np.zeros((m, n), bfloat16)]
    if "fp8" in kernel:
        args += [np.float32(1), np.float32(1)]
    return args, expected


CASES = [
    # kernel, loads, (M, N, K), A a view one column in, options
    ("gemm_nt", "b", (8, 256, 999), False, "block-m=64"),  # decode, 2-byte loads
    # 128 rows, two M tiles; a: 2-byte loads, b: 16-byte cp.async, one slot
    ("gemm_nt", "a,b", (200, 128, 1000), True, ""),
    ("gemm_nn", "b", (64, 301, 1000), False, "block-m=64"),  # two swizzle boxes
    ("gemm_fp8_tensorwise", "a,b", (64, 128, 999), False, "block-m=64"),  # bytes
    ("gemm_nt", "a,b", (64, 128, 1002), False, "block-m=64"),  # 4-byte cp.async
    ("gemm_nt", "a,b", (64, 128, 1004), False, "block-m=64"),  # 8-byte cp.async
    ("gemm_nn", "b", (64, 302, 1000), False, "block-m=64"),  # two boxes, 4-byte
    ("gemm_nt", "b", (8, 256, 1002), False, "block-m=64"),  # decode, cp.async
    # 8-row B tiles: 64 pieces, loaded by the first half of the threads
    ("gemm_nt", "b", (64, 20, 999), False, "block-m=64 block-n=8"),
]
ASYNC = CASES[4]
"""Both operands through 4-byte cp.async, zeros in both K tails."""
MIXED = CASES[7]
"""A slot of a TMA copy (A) and 4-byte cp.async copies (B)."""


def _grid(m: int, n: int, options: str) -> tuple[int, int]:
    """The tile grid of a GEMM under these pipeline options."""
    sizes = dict(o.split("=") for o in options.split())
    return -(-m // int(sizes.get("block-m", 128))), -(
        -n // int(sizes.get("block-n", 128))
    )


@pytest.mark.parametrize(
    "kernel, loads, shape, view, options",
    sweep(
        CASES,
        fast={CASES[0], CASES[2], CASES[6], CASES[-1]},
        slow={CASES[1], CASES[3], CASES[4], CASES[7]},
        ids=lambda c: f"{c[0]}-{c[1]}-{'x'.join(map(str, c[2]))}",
    ),
)
def test_thread_loads_match_tma(
    kernel: str, loads: str, shape: tuple[int, int, int], view: bool, options: str
) -> None:
    """Thread-loaded tiles give the TMA path's output bit for bit (its inputs
    copied aligned) at the thread level, and the product at both levels."""
    m, n, k = shape
    args, expected = _operands(kernel, m, n, k, view)
    grid = _grid(m, n, options)
    threads = simulate_output(
        _lower(kernel, loads, options, True), kernel, args, 2, grid
    )
    tma = simulate_output(_lower(kernel, "", options, True), kernel, args, 2, grid)
    np.testing.assert_array_equal(threads.view(np.uint16), tma.view(np.uint16))
    lowered = simulate_output(
        _lower(kernel, loads, options, False), kernel, args, 2, grid
    )
    for out in (threads, lowered):
        error = np.abs(out.astype(np.float64) - expected).max()
        assert error <= 1e-2 * np.abs(expected).max()


# ---------------------------------------------------------------- mutations


def _check(case: tuple, ptx: bool, mutate=None) -> None:
    """`case` simulated against float64 (over its whole grid), its lowered
    IR changed by `mutate` first where given."""
    kernel, loads, (m, n, k), view, options = case
    args, expected = _operands(kernel, m, n, k, view)
    module = _lower(kernel, loads, options, ptx=False)
    if mutate is not None:
        mutate(module)
    if ptx:
        module = tawa_xdsl.apply(module, "distribute-fragments")
    out = simulate_output(module, kernel, args, 2, _grid(m, n, options))
    error = np.abs(out.astype(np.float64) - expected).max()
    assert error <= 1e-2 * np.abs(expected).max(), f"wrong result (error {error:.3g})"


def test_unswizzled_stores_give_wrong_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces stored at their plain row-major place (no XOR of the row's
    phase) are read by wgmma as other K columns."""
    _check(CASES[0], ptx=True)
    swizzled = memory.swizzled_piece

    def plain(*args: object) -> object:
        return swizzled(*args).owner.operands[0]  # the offset before its XOR

    monkeypatch.setattr(memory, "swizzled_piece", plain)
    with pytest.raises(AssertionError, match="wrong result"):
        _check(CASES[0], ptx=True)


@pytest.mark.parametrize("ptx", [False, True], ids=["barrier-sim", "thread-sim"])
@pytest.mark.parametrize(
    "case, arrivals",
    [(CASES[0], 1), (MIXED, 1), (CASES[0], THREADS_PER_WARPGROUP)],
    ids=["stored-one", "cp.async-one", "stored-no-tma"],
)
def test_wrong_full_count_is_flagged(
    monkeypatch: pytest.MonkeyPatch, ptx: bool, case: tuple, arrivals: int
) -> None:
    """A `full` barrier expecting one arrival (the expect_tx completes it, the
    threads' arrivals run into the next phase), or the threads' 128 without
    the TMA copies' expect_tx in a slot that has both: both simulators flag
    the extra arrivals. (`test_thread_loads_match_tma` runs these kernels
    unchanged.)"""
    monkeypatch.setattr(
        kernel_plan.ChannelPlan, "full_arrivals", property(lambda _: arrivals)
    )
    with pytest.raises(Hazard, match="arrivals"):
        _check(case, ptx)


@pytest.mark.parametrize("ptx", [False, True], ids=["barrier-sim", "thread-sim"])
def test_full_count_above_the_arrivals_hangs(
    monkeypatch: pytest.MonkeyPatch, ptx: bool
) -> None:
    """One arrival more than the expect_tx and the threads' 128: the slot
    never fills, the consumers wait for ever; both simulators predict it."""
    monkeypatch.setattr(
        kernel_plan.ChannelPlan,
        "full_arrivals",
        property(lambda _: THREADS_PER_WARPGROUP + 2),
    )
    with pytest.raises(PredictedHang):
        _check(MIXED, ptx)


def _drop_consumer_fences(module: ModuleOp) -> None:
    """Erase the proxy fence after each consumer wait on `full`."""
    for op in list(module.walk()):
        if isinstance(op, nv.FenceProxyAsyncOp) and isinstance(
            op.prev_op, nv.MBarrierWaitOp
        ):
            op.detach()
            op.erase()


@pytest.mark.parametrize(
    "case, ptx",
    [(CASES[0], False), (ASYNC, False), (ASYNC, True)],
    ids=["barrier-sim-stored", "barrier-sim-cp.async", "thread-sim-cp.async"],
)
def test_missing_consumer_fence_is_flagged(case: tuple, ptx: bool) -> None:
    """Without `fence.proxy.async` after its wait, the consumer's wgmma
    reads the cp.async copies' generic-proxy writes (the kernels unchanged:
    `test_thread_loads_match_tma`). (Stored pieces are
    fenced by the threads that store them; the barrier simulator, which does
    not know which copies run, asks for the fence either way.)"""
    with pytest.raises(Hazard, match="fence"):
        _check(case, ptx, mutate=_drop_consumer_fences)


def test_missing_zero_fill_gives_wrong_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """`cp.async` reading whole copies outside the tensor too (the base, where
    the source size should be 0) puts data in both K tails, which the
    product sums."""
    _check(ASYNC, ptx=True)
    real = memory.ptx.CpAsyncOp

    def unfilled(dst: SSAValue, src: SSAValue, size: SSAValue, n: int) -> object:
        return real(dst, src, size.owner.operands[0], n)  # the full size always

    monkeypatch.setattr(memory.ptx, "CpAsyncOp", unfilled)
    with pytest.raises(AssertionError, match="wrong result"):
        _check(ASYNC, ptx=True)


def test_noinc_arrive_after_stores_is_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    """The threads' own stores (2-byte loads) are published by a release
    arrive; a noinc cp.async arrive releases only copies: the thread
    simulator flags it."""
    monkeypatch.setattr(
        barriers, "uniform_branch", lambda cond, then, otherwise: then[0]
    )
    with pytest.raises(Hazard, match="does not publish"):
        _check(CASES[0], ptx=True)


# ------------------------------------------------------------------ option


def test_option_values() -> None:
    """Names, comma-separated, in a canonical order (one cache key); not a
    list; shown by `describe`."""
    assert CompileOptions(thread_loads=" b, a").thread_loads == "a,b"
    with pytest.raises(TypeError, match="thread_loads must be str"):
        CompileOptions(thread_loads=["a"])  # type: ignore[arg-type]
    assert describe({"thread_loads": "a,b"}).endswith("tl-a.b")
    assert "tl" not in describe({"thread_loads": ""})


def test_option_refuses_names_not_loaded() -> None:
    """A name the producer does not load (the output, a typo) is refused,
    naming what it loads."""
    with pytest.raises(OpDiagnostic, match=r"does not load .*it loads a, b"):
        _lower("gemm_nt", "c", "", ptx=False)


def test_option_refuses_clusters() -> None:
    with pytest.raises(OpDiagnostic, match="do not multicast"):
        _lower("gemm_nt", "b", "cluster=2", ptx=False)


def test_option_refuses_batched_tiles_and_tile_counters() -> None:
    """Rank-3 tensors (a batch axis) and a producer taking tiles from a
    counter (each of its threads would take one) are refused at the op."""
    batched = parse_kernel(
        (EXAMPLES.parent / "tests" / "kernels" / "gemm_batched.mlir").read_text(),
        "bgemm",
    )
    with pytest.raises(OpDiagnostic, match="rank-2 tensors only"):
        tawa_xdsl.apply(batched, 'tawa-hopper-pipeline{thread-loads="b" tuned=false}')
    with pytest.raises(OpDiagnostic, match=r"tile\.next_tile with thread_loads"):
        _lower("gemm_nt", "b", "persistent=true dynamic-tiles=true", ptx=False)


@pytest.mark.skipif(
    _ptxas() is None, reason="nvJitLink ignores setmaxnreg; needs a ptxas binary"
)
@pytest.mark.parametrize(
    ("kernel", "options"),
    [("gemm_nt", ""), ("gemm_fp8_tensorwise", "block-m=64")],
)
def test_threads_loads_fit_the_producer_budget(kernel: str, options: str) -> None:
    """The producer's threads load on its `setmaxnreg` budget (24 registers
    beside two consumer warpgroups, 40 beside one) without spills or ptxas
    remarks, cp.async and synchronous paths alike: one piece per loop
    iteration (unrolled, ptxas hoisted every piece's loads and spilled up to
    1.9 KB)."""
    pipeline = f'tawa-hopper-pipeline{{thread-loads="a,b" {options}}}'
    lowered = tawa_xdsl.apply(_module(kernel), pipeline)
    ptx = kernel_ptx(find_kernel(lowered, kernel))
    assert "ld.global.nc" in ptx and "cp.async.cg.shared.global" in ptx
    result = assemble(ptx)
    assert result.ok and result.remarks == [], result.log[-3000:]
    assert not result.spills, result.log[-3000:]
