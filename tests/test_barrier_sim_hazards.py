"""Protocol bugs the barrier simulator must name (issue 14.4), each a mutation of
a lowered example: a hang, a race or corrupted data on the GPU becomes a
`PredictedHang` or a `Hazard` that names the op and what goes wrong.

The statically visible ones (shared-memory allocations that overlap or pass the
launch's `smem`, register budgets the block cannot hold) are refused by the
verifier too; the simulator keeps its own check, since it also runs IR that was
built in Python and never verified (`simulate_unverified` below)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation
from xdsl.rewriter import Rewriter

import tawa_xdsl
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.interp.barrier_sim import Hazard, PredictedHang, run_lowered
from tawa_xdsl.kernel import find_kernel

from .conftest import EXAMPLES
from .test_examples import EXAMPLE_RUNS
from .test_lowering import hopper

GEMM_GRID = (2, 3)


def lowered(config: tuple[int, ...], file: str = "gemm.mlir", name: str = "gemm_nt"):
    module = tawa_xdsl.apply(tawa_xdsl.parse(EXAMPLES / file), hopper(config))
    return module, find_kernel(module, name)


def gemm_arrays() -> list[np.ndarray]:
    """Ten K steps: more than any ring holds, so a stalled consumer stalls the
    producer too."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 640)).astype(tawa_xdsl.dtypes.bfloat16)
    b = rng.standard_normal((300, 640)).astype(a.dtype)
    return [a, b, np.zeros((200, 300), dtype=a.dtype)]


def run_gemm(module: ModuleOp, seeds=range(2)) -> None:
    for seed in seeds:
        tawa_xdsl.simulate(module, "gemm_nt", *gemm_arrays(), grid=GEMM_GRID, seed=seed)


def simulate_unverified(module: ModuleOp, name: str = "gemm_nt") -> None:
    """The barrier simulator on IR nobody verified (as a Python-built module
    would reach it): its own checks must still name the bug."""
    run_lowered(module, find_kernel(module, name), gemm_arrays(), (*GEMM_GRID, 1), 0)


def ops(kernel: FuncOp, kind: type[Operation]) -> list[Any]:
    return [o for o in kernel.walk() if isinstance(o, kind)]


def dispatch(kernel: FuncOp) -> nv.RoleDispatchOp:
    return ops(kernel, nv.RoleDispatchOp)[0]


def role_start(block: Block, op: Operation) -> None:
    """Put `op` first in a role region, after its setmaxnreg (which must stay first)."""
    first = block.first_op
    assert first is not None
    if isinstance(first, nv.SetMaxNRegOp):
        block.insert_op_after(op, first)
    else:
        block.insert_op_before(op, first)


def erase(op: Operation) -> None:
    op.detach()
    op.erase()


# ------------------------------------------------------------ CTA barrier


def test_cta_barrier_in_the_consumer_only_is_a_predicted_hang() -> None:
    """`bar.sync 0` waits for every thread of the block: the consumer waits
    there while the producer, never reaching it, waits for slots the consumer
    would release."""
    module, kernel = lowered((2, 2, 1, 0))
    barrier = ops(kernel, nv.CTABarrierOp)[0]
    barrier.detach()
    role_start(dispatch(kernel).consumer.block, barrier)
    with pytest.raises(
        PredictedHang,
        match=r"producer waits at nvgpu_async.mbarrier_wait on %ring0_empty.*"
        r"consumer waits at nvgpu_async.cta_barrier on the CTA barrier "
        r"\(phases completed: 0; arrived: consumer of 2 warpgroups",
    ):
        run_gemm(module)


@pytest.mark.parametrize("where", ["deleted", "producer"])
def test_barriers_used_before_the_cta_barrier_published_them(where: str) -> None:
    """The barriers are initialised by thread 0; the consumer warpgroups may use
    them only after a CTA barrier: without it they may see uninitialised memory."""
    module, kernel = lowered((2, 2, 1, 0))
    barrier = ops(kernel, nv.CTABarrierOp)[0]
    barrier.detach()
    if where == "producer":
        role_start(dispatch(kernel).producer.block, barrier)
    else:
        barrier.erase()
    with pytest.raises(
        Hazard,
        match=r"nvgpu_async.mbarrier_wait: consumer uses %ring0_full\[0\], which thread 0 "
        r"initialised, before a CTA barrier made the init visible to it",
    ):
        run_gemm(module)


def test_missing_fence_mbarrier_init_is_a_hazard() -> None:
    """TMA completes its bytes on the barrier through the async proxy, which sees
    the init only after `fence.mbarrier_init`."""
    module, kernel = lowered((2, 2, 1, 0))
    erase(ops(kernel, nv.FenceMBarrierInitOp)[0])
    with pytest.raises(
        Hazard,
        match=r"nvgpu_async.tma_load completes on %ring0_full\[0\], whose mbarrier_init "
        r"no fence_mbarrier_init has made visible to the TMA unit",
    ):
        run_gemm(module)


# ------------------------------------------------------------- wgmma.fence


def test_missing_wgmma_fence_before_the_first_wgmma() -> None:
    """The accumulator's zeros are written by ordinary instructions: the first
    wgmma of a warpgroup must be fenced."""
    module, kernel = lowered((2, 2, 1, 0))
    for fence in ops(kernel, nv.WgmmaFenceOp):
        erase(fence)
    with pytest.raises(
        Hazard,
        match=r"nvgpu_async.wgmma: consumer reads %acc_k, written by arith.constant "
        r"after its last wgmma_fence",
    ):
        run_gemm(module)


def test_missing_wgmma_fence_before_p_times_v() -> None:
    """Attention writes P (the softmax, in registers) between its two wgmmas: the
    P.V wgmma needs a fence of its own, though S = QK^T had one."""
    module, kernel = lowered((2, 1, 2, 0), "attention.mlir", "attention_d64")
    pv = next(
        o
        for o in ops(kernel, nv.WgmmaOp)
        if not isinstance(o.lhs.type, nv.SmemViewType)
    )
    assert isinstance(pv.prev_op, nv.WgmmaFenceOp)
    erase(pv.prev_op)
    run = EXAMPLE_RUNS["attention_d64"]
    inputs = [make(np.random.default_rng(0)) for make in run.inputs]
    out = np.zeros(run.out_shape, dtype=inputs[0].dtype)
    with pytest.raises(
        Hazard,
        match=r"nvgpu_async.wgmma: consumer\d reads %p_lo, written by arith.truncf "
        r"after its last wgmma_fence",
    ):
        tawa_xdsl.simulate(
            module, "attention_d64", *inputs, out, *run.scalars, grid=run.grid
        )


# ------------------------------------------------------------ shared memory


def _move(kernel: FuncOp, kind: type[Operation], which: int, offset: int) -> None:
    ops(kernel, kind)[which].properties["offset"] = IntegerAttr(offset, 64)


def _launch_smem(kernel: FuncOp, smem: int) -> None:
    launch = kernel.attributes[nv.LAUNCH_ATTR]
    assert isinstance(launch, nv.LaunchAttr)
    kernel.attributes[nv.LAUNCH_ATTR] = nv.LaunchAttr(
        launch.threads.data, smem, launch.cluster.data
    )


SMEM_MUTATIONS: dict[str, tuple[Callable[[FuncOp], None], str]] = {
    "aliasing-rings": (
        lambda k: _move(k, nv.SmemAllocOp, 1, 0),  # B's ring onto A's
        r"nvgpu_async.smem_alloc: %ring0 \(bytes 0 to 32768\) overlaps %ring0 "
        r"\(bytes 0 to 32768\): TMA copies into one overwrite the tiles of the other",
    ),
    "barrier-in-ring": (
        lambda k: _move(k, nv.MBarrierAllocOp, 1, 1024),
        r"nvgpu_async.mbarrier_alloc: %ring0_empty \(bytes 1024 to 1040\) overlaps "
        r"%ring0 \(bytes 0 to 32768\): TMA copies into the ring overwrite the barriers",
    ),
    "launch-too-small": (
        lambda k: _launch_smem(k, 65536),
        r"nvgpu_async.smem_alloc: %ring0 ends at byte 65536; with 1024 bytes to "
        r"align the base the kernel needs 66560, past the 65536 bytes of shared "
        r"memory the launch gives: accesses past the end fault",
    ),
}


@pytest.mark.parametrize("mutation", sorted(SMEM_MUTATIONS))
def test_shared_memory_layout_errors(mutation: str) -> None:
    """Refused by the verifier, and named by the simulator where nothing verified."""
    mutate, pattern = SMEM_MUTATIONS[mutation]
    module, kernel = lowered((2, 2, 1, 0))
    mutate(kernel)
    with pytest.raises(OpDiagnostic, match=pattern):  # located by the verifier
        run_gemm(module, seeds=[0])
    with pytest.raises(Hazard, match=pattern):
        simulate_unverified(module)


def _resize(kernel: FuncOp, name: str, depth: int) -> None:
    old = next(
        o
        for o in kernel.walk()
        if isinstance(o, nv.SmemAllocOp | nv.MBarrierAllocOp)
        and o.result.name_hint == name
    )
    offset = old.offset.value.data
    if isinstance(old, nv.SmemAllocOp):
        t = old.result.type
        new = nv.SmemAllocOp(offset, nv.SmemType(depth, t.get_tile(), t.element_type))
    else:
        new = nv.MBarrierAllocOp(offset, depth)
    new.result.name_hint = name
    Rewriter.replace_op(old, new)


@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        (
            "ring0",
            r"nvgpu_async.tma_load: slot 2 of %ring0, a ring of 2 slots: the access "
            r"lands past the ring",
        ),
        (
            "ring0_full",
            r"nvgpu_async.mbarrier_arrive_expect_tx: barrier 2 of %ring0_full, an array of 2: "
            r"the access lands past the array",
        ),
    ],
    ids=["ring", "barriers"],
)
def test_index_past_the_ring_is_a_hazard(name: str, pattern: str) -> None:
    """Three slots indexed, two allocated: not a numpy IndexError but the op."""
    module, kernel = lowered((3, 2, 1, 0))
    _resize(kernel, name, 2)
    with pytest.raises(Hazard, match=pattern):
        run_gemm(module, seeds=[0])


# ---------------------------------------------------------------- registers


@pytest.mark.parametrize(
    ("role", "regs", "pattern"),
    [
        (
            "consumer",
            248,
            r"need 66560 registers; an SM has 65536",
        ),
        (
            "producer",
            32,
            r"need 65536 registers; the block's 384 threads start with 168 each "
            r"\(64512\)",
        ),
    ],
)
def test_register_budgets_beyond_the_block(role: str, regs: int, pattern: str) -> None:
    """Two consumers raising to 248 need more registers than an SM has; a
    producer keeping 32 leaves the block's pool (384 x 168 at launch) 1024
    registers short. Either way the second consumer's `setmaxnreg.inc` waits for
    registers that never come."""
    module, kernel = lowered((2, 1, 2, 0))
    region = getattr(dispatch(kernel), role)
    budget = region.block.first_op
    assert isinstance(budget, nv.SetMaxNRegOp)
    budget.properties["regs"] = IntegerAttr(regs, 64)
    with pytest.raises(
        OpDiagnostic,
        match=r"nvgpu_async.role_dispatch: after setmaxnreg, budgets .*" + pattern,
    ):
        run_gemm(module, seeds=[0])
    with pytest.raises(
        PredictedHang,
        match=r"consumer\d waits at nvgpu_async.setmaxnreg inc \d+ for \d+ registers; "
        r"the block's pool holds \d+",
    ):
        simulate_unverified(module)


@pytest.mark.parametrize("regs", [264, 236])
def test_setmaxnreg_outside_its_range_is_a_hazard(regs: int) -> None:
    """ptxas refuses a budget above 256 or off a multiple of 8; the simulator
    names it even in IR nobody verified."""
    module, kernel = lowered((2, 1, 2, 0))
    budget = dispatch(kernel).consumer.block.first_op
    assert isinstance(budget, nv.SetMaxNRegOp)
    budget.properties["regs"] = IntegerAttr(regs, 64)
    with pytest.raises(
        Hazard,
        match=rf"nvgpu_async.setmaxnreg {regs}: the budget must be a multiple of 8 in "
        r"\[24, 256\]",
    ):
        simulate_unverified(module)


# ------------------------------------------------- epilogue tiles in registers

RESIDUAL = "gemm_residual_gelu"


def residual_kernel(pipeline: str) -> tuple[ModuleOp, FuncOp, nv.SmemLoadOp]:
    """gemm_residual_gelu lowered with `pipeline`, and its read of the residual."""
    module = tawa_xdsl.apply(tawa_xdsl.parse(EXAMPLES / "gemm_epilogue.mlir"), pipeline)
    kernel = find_kernel(module, RESIDUAL)
    load = next(
        o for o in ops(kernel, nv.SmemLoadOp) if len(o.source.type.get_shape()) == 2
    )
    return module, kernel, load


def guarding_wait(load: nv.SmemLoadOp) -> nv.MBarrierWaitOp:
    """The full-barrier wait before `load`'s slot."""
    op = load.source.owner
    while not isinstance(op, nv.MBarrierWaitOp):
        op = op.prev_op
    return op


def run_residual(module: ModuleOp, seed: int, grid: tuple[int, ...]) -> None:
    run = EXAMPLE_RUNS[RESIDUAL]
    rng = np.random.default_rng(0)
    inputs = [make(rng) for make in run.inputs]
    out = np.zeros(run.out_shape, inputs[0].dtype)
    tawa_xdsl.simulate(
        module, RESIDUAL, *inputs, out, *run.scalars, grid=grid, seed=seed
    )


READ_IN_FLIGHT = (
    r"nvgpu_async.smem_load: consumer[01] reads slot 0 of %\w+ while a TMA copy into "
    r"it is in flight"
)


def test_reading_the_residual_before_its_wait_is_a_race() -> None:
    """Without the full barrier's wait the consumer reads the residual's slot
    while TMA may still be writing it: wrong data on the GPU, a hazard here
    wherever the schedule lets the read overtake the copy."""
    module, _, load = residual_kernel("tawa-hopper-pipeline{tuned=false num-stages=2}")
    erase(guarding_wait(load))
    raised = 0
    for seed in range(4):
        try:
            run_residual(module, seed, EXAMPLE_RUNS[RESIDUAL].grid)
        except Hazard as e:
            assert re.search(READ_IN_FLIGHT, str(e)), e
            raised += 1
    assert raised


def test_releasing_epilogue_slots_before_reading_them_is_a_race() -> None:
    """With one slot for the epilogue's tiles, a persistent kernel's producer
    refills it for the next output tile as soon as it is released: a release
    before the reads lets the copy overwrite what the consumer still reads."""
    module, _, load = residual_kernel(
        "tawa-hopper-pipeline{tuned=false num-stages=2 outer-stages=1 persistent=true}"
    )
    wait = guarding_wait(load)
    release = load.next_op
    while not isinstance(release, nv.MBarrierArriveOp):
        release = release.next_op
    slot = release.operands[1].owner
    for op in (release, slot):
        op.detach()
        wait.parent_block().insert_op_after(op, wait)
    for seed in range(2):
        with pytest.raises(Hazard, match=READ_IN_FLIGHT):
            run_residual(module, seed, (1,))
