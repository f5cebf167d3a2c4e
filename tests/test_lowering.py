"""The Hopper lowering without a GPU: every example, lowered with several
(num-stages, mma-depth, num-consumers, two-stage, ping-pong), runs in the barrier
simulator (one actor per consumer warpgroup) bit for bit
like the reference interpreter and assembles for sm_90a without a single ptxas
remark (C75xx); and the barrier simulator predicts the hangs and races that broken
synchronisation would cause on the hardware, naming the barrier."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith

import tawa_xdsl
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import tile
from tawa_xdsl.interp.barrier_sim import Hazard, PredictedHang, run_lowered
from tawa_xdsl.kernel import (
    KernelArgumentError,
    check_host_arguments,
    cluster_size,
    find_kernel,
    normalize_grid,
)
from tawa_xdsl.lowering.assemble import _ptxas, assemble
from tawa_xdsl.lowering.ptx_target import kernel_ptx, to_ptx
from tawa_xdsl.pipelines import TawaHopperPipeline

from .conftest import example_module, rotation, sweep
from .test_examples import EXAMPLE_RUNS, reference_run

# (num-stages, mma-depth, num-consumers, two-stage[, ping-pong])
GEMM_CONFIGS = [
    (1, 1, 1, 0),
    (2, 1, 1, 0),
    (3, 2, 1, 0),
    (4, 2, 2, 0),
    (4, 3, 2, 0),
    (3, 2, 2, 0, 1),
]
ATTENTION_CONFIGS = [
    (2, 1, 2, 0),
    (3, 2, 2, 0),
    (2, 1, 2, 1),
    (3, 2, 2, 1),
    (2, 1, 2, 1, 1),
]


def exact_options(config: tuple[int, ...], **extra: Any) -> dict[str, Any]:
    """A config of the lists above, (num-stages, mma-depth, num-consumers,
    two-stage[, ping-pong]), as untuned pipeline options."""
    stages, mma, consumers, two_stage, *ping_pong = config
    return dict(
        num_stages=stages,
        mma_depth=mma,
        num_consumers=consumers,
        two_stage=bool(two_stage),
        ping_pong=bool(ping_pong and ping_pong[0]),
        tuned=False,
        **extra,
    )


def hopper(config: tuple[int, ...], **registers: int) -> str:
    """The `tawa-hopper-pipeline` pass spec of `exact_options`."""
    return str(
        TawaHopperPipeline(**exact_options(config, **registers)).pipeline_pass_spec()
    )


def configs_for(kernel: str):
    return ATTENTION_CONFIGS if kernel.startswith("attention") else GEMM_CONFIGS


CASES = [(k, c) for k in sorted(EXAMPLE_RUNS) for c in configs_for(k)]
# the fast tier: one and two consumers; ping-pong, which implies two consumers
# and mma-depth 2, for GEMM; attention with and without two-stage and ping-pong
FAST_CONFIGS = {(1, 1, 1, 0), (3, 2, 2, 0, 1), (3, 2, 2, 0), (2, 1, 2, 1, 1)}


ROTATED_CONFIGS = {
    *rotation(
        [k for k in sorted(EXAMPLE_RUNS) if not k.startswith("attention")],
        [c for c in GEMM_CONFIGS if c not in FAST_CONFIGS],
        2,
    ),
    *rotation(
        [k for k in sorted(EXAMPLE_RUNS) if k.startswith("attention")],
        [c for c in ATTENTION_CONFIGS if c not in FAST_CONFIGS],
        2,
    ),
}
"""CI's slow tier: each kernel under two of its other configurations in turn,
every configuration reached (the whole grid under `--exhaustive`)."""


@pytest.mark.parametrize(
    ("kernel", "config"),
    sweep(
        CASES,
        [c for c in CASES if c[1] in FAST_CONFIGS],
        lambda c: f"{c[0]}-{c[1]}",
        slow=ROTATED_CONFIGS,
    ),
)
def test_lowered_examples_compute_the_reference(kernel, config) -> None:
    run = EXAMPLE_RUNS[kernel]
    inputs, expected = reference_run(kernel, 3)
    lowered = tawa_xdsl.apply(example_module(run.file, kernel), hopper(config))
    for seed in range(2):
        out = np.full(run.out_shape, np.nan, dtype=expected.dtype)
        tawa_xdsl.simulate(
            lowered, kernel, *inputs, out, *run.scalars, grid=run.grid, seed=seed
        )
        assert np.array_equal(out.view(np.uint16), expected.view(np.uint16))


PTX_CASES = (
    [("gemm.mlir", c) for c in GEMM_CONFIGS]
    + [("gemm_epilogue.mlir", c) for c in GEMM_CONFIGS[1:4]]
    + [
        (f, c)
        for f in (
            "attention.mlir",
            "attention_f16.mlir",
            "attention_d80_d96.mlir",
            "attention_d256.mlir",
        )
        for c in ATTENTION_CONFIGS
        if f != "attention_d256.mlir" or c[:2] == (2, 1)
    ]
)


# the fast tier assembles every file once, with the configuration that needs the
# most of the wgmma wait planning
FAST_PTX_CASES = {
    ("gemm.mlir", (3, 2, 2, 0, 1)),
    ("gemm_epilogue.mlir", (4, 2, 2, 0)),
    ("attention.mlir", (2, 1, 2, 1, 1)),
    ("attention_f16.mlir", (3, 2, 2, 1)),
    ("attention_d80_d96.mlir", (3, 2, 2, 1)),
    ("attention_d256.mlir", (2, 1, 2, 1)),
}


@pytest.mark.parametrize(
    ("example", "config"),
    sweep(
        PTX_CASES,
        FAST_PTX_CASES,
        lambda c: f"{c[0]}-{c[1]}",
        # the f16 file is attention.mlir in another dtype, the head dims 80
        # and 96 its kernels in narrower chunks, d256 its kernels with wider
        # rows: their other configurations under --exhaustive, as are
        # attention.mlir's but the one of two-stage with two consumers
        slow={
            c
            for c in PTX_CASES
            if c[0].startswith("gemm") or c == ("attention.mlir", (3, 2, 2, 1))
        },
    ),
)
def test_ptx_assembles_without_remarks(example, config) -> None:
    lowered = tawa_xdsl.apply(example_module(example), hopper(config))
    ptx = to_ptx(lowered)
    assert ptx.startswith(".version 8.0\n.target sm_90a\n")
    result = assemble(ptx)
    assert result.ok, result.log[-3000:]
    assert result.remarks == [], result.remarks
    assert not result.spills, result.log[-3000:]


@pytest.mark.skipif(
    _ptxas() is None, reason="nvJitLink ignores setmaxnreg; needs a ptxas binary"
)
def test_ptxas_honours_the_register_budget() -> None:
    """Causal head-dim-256 attention with the two-stage overlap needs more than 200
    registers per consumer thread: it spills at 200 and fits at 240."""
    config = (2, 1, 2, 1)
    spills = {}
    for consumer in (200, 240):
        lowered = tawa_xdsl.apply(
            example_module("attention_d256.mlir", "attention_causal_d256"),
            hopper(config, producer_registers=24, consumer_registers=consumer),
        )
        ptx = kernel_ptx(find_kernel(lowered, "attention_causal_d256"))
        assert f"setmaxnreg.inc.sync.aligned.u32 {consumer};" in ptx
        spills[consumer] = assemble(ptx).spills
    assert spills == {200: True, 240: False}


# ---------------------------------------------------------------- broken sync


def lowered_gemm(config=(2, 2, 1, 0)):
    module = tawa_xdsl.apply(example_module("gemm.mlir", "gemm_nt"), hopper(config))
    return module, find_kernel(module, "gemm_nt")


def run_gemm(module, simulate=tawa_xdsl.simulate) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 600)).astype(tawa_xdsl.dtypes.bfloat16)
    b = rng.standard_normal((300, 600)).astype(tawa_xdsl.dtypes.bfloat16)
    c = np.zeros((200, 300), dtype=a.dtype)
    for seed in range(4):
        simulate(module, "gemm_nt", a, b, c, grid=(2, 3), seed=seed)


def simulate_unverified(module, name: str, *args, grid, seed: int) -> None:
    """`tawa_xdsl.simulate` of a lowered kernel without verifying it first:
    how the barrier simulator meets what the verifier would refuse (a
    mismatch it cannot see statically)."""
    kernel = find_kernel(module, name)
    checked = check_host_arguments(kernel, args)
    grid3 = normalize_grid(grid, name, cluster_size(kernel))
    run_lowered(module, kernel, checked, grid3, seed)


def test_correct_lowering_is_clean() -> None:
    run_gemm(lowered_gemm()[0])


@pytest.mark.parametrize(
    ("scale", "error", "pattern"),
    [
        (
            2,
            PredictedHang,
            r"consumer waits at nvgpu_async.mbarrier_wait on %ring0_full\[0\].*"
            r"32768 transaction bytes outstanding",
        ),
        (
            0.5,
            Hazard,
            r"a phase of %ring0_full\[0\] completes while copies it tracks are still in flight",
        ),
    ],
)
def test_wrong_expect_tx_bytes(scale, error, pattern) -> None:
    """The verifier refuses the count at the expect_tx (the loads follow it in
    its block); unverified, the barrier simulator finds the hang or the race."""
    module, kernel = lowered_gemm()
    arm = next(
        op for op in kernel.walk() if isinstance(op, nv.MBarrierArriveExpectTxOp)
    )
    armed = int(arm.bytes.value.data * scale)
    arm.properties["bytes"] = type(arm.bytes)(armed, 64)
    with pytest.raises(
        OpDiagnostic,
        match=rf"gemm\.mlir:\d+:\d+: error: nvgpu_async\.mbarrier_arrive_expect_tx: "
        rf"arms {armed} bytes, but the TMA loads that complete on "
        r"%ring0_full\[%slot\] after it in this block bring 32768",
    ):
        run_gemm(module)
    with pytest.raises(error, match=pattern):
        run_gemm(module, simulate_unverified)


def test_wrong_initial_parity_is_a_predicted_hang() -> None:
    """The producer must wait on a fresh `empty` barrier with parity 1."""
    module, kernel = lowered_gemm()
    flip = next(op for op in kernel.walk() if isinstance(op, arith.XOrIOp))
    flip.result.replace_all_uses_with(flip.lhs)
    with pytest.raises(
        PredictedHang,
        match=r"producer waits at nvgpu_async.mbarrier_wait on %ring0_empty\[0\] for parity 0",
    ):
        run_gemm(module)


def test_missing_arrive_is_a_predicted_hang() -> None:
    module, kernel = lowered_gemm()
    release = next(op for op in kernel.walk() if isinstance(op, nv.MBarrierArriveOp))
    release.detach()
    release.erase()
    with pytest.raises(
        PredictedHang, match=r"%ring0_empty\[\d\].*1 of 1 arrivals missing"
    ):
        run_gemm(module)


def test_missing_wgmma_wait_is_a_race() -> None:
    """Releasing a slot before the MMA reading it retired lets TMA overwrite it."""
    module, kernel = lowered_gemm()
    for wait in [op for op in kernel.walk() if isinstance(op, nv.WgmmaWaitGroupOp)]:
        if wait.pending.value.data == 1:
            wait.detach()
            wait.erase()
    with pytest.raises(
        Hazard, match=r"writes slot \d of %ring0 while a wgmma group that reads it"
    ):
        run_gemm(module)


def test_reading_an_unretired_result_is_a_hazard() -> None:
    """The softmax must wait for the S = Q K^T group before reading S."""
    module = tawa_xdsl.apply(
        example_module("attention.mlir", "attention_d64"), hopper((2, 1, 2, 0))
    )
    kernel = find_kernel(module, "attention_d64")
    row_max = next(
        op
        for op in kernel.walk()
        if isinstance(op, tile.ReduceOp) and op.source.name_hint == "s"
    )
    wait = row_max.prev_op
    assert isinstance(wait, nv.WgmmaWaitGroupOp)
    wait.detach()
    wait.erase()
    run = EXAMPLE_RUNS["attention_d64"]
    rng = np.random.default_rng(0)
    inputs = [make(rng) for make in run.inputs]
    out = np.zeros(run.out_shape, dtype=inputs[0].dtype)
    with pytest.raises(
        Hazard, match=r"tile\.reduce reads %s before a wgmma_wait_group retired"
    ):
        tawa_xdsl.simulate(
            module, "attention_d64", *inputs, out, *run.scalars, grid=run.grid
        )


def lowered_persistent_gemm(num_consumers: int = 1):
    pipeline = TawaHopperPipeline(
        num_stages=2,
        mma_depth=1,
        persistent=True,
        num_consumers=num_consumers,
        tuned=False,
    )
    module = tawa_xdsl.apply(
        example_module("gemm.mlir", "gemm_nt"), str(pipeline.pipeline_pass_spec())
    )
    return module, find_kernel(module, "gemm_nt")


def run_persistent_gemm(module) -> np.ndarray:
    """Two programs walk the 2 x 3 output tiles, three stores each."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 130)).astype(tawa_xdsl.dtypes.bfloat16)
    b = rng.standard_normal((300, 130)).astype(tawa_xdsl.dtypes.bfloat16)
    c = np.full((200, 300), np.nan, dtype=a.dtype)
    for seed in range(3):
        tawa_xdsl.simulate(module, "gemm_nt", a, b, c, grid=(2,), seed=seed)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    return np.abs(c.astype(np.float64) - ref).max() / np.abs(ref).max()


def test_persistent_tma_store_epilogue_is_clean() -> None:
    assert run_persistent_gemm(lowered_persistent_gemm()[0]) < 1e-2


@pytest.mark.parametrize(
    ("victim", "which", "pattern"),
    [
        (nv.FenceProxyAsyncOp, 0, r"not yet fenced: TMA may see stale data"),
        (nv.TMAStoreWaitOp, 0, r"writes slot 0 of %c_staging while a TMA store"),
        (nv.TMAStoreWaitOp, -1, r"exits before a tma_store_wait saw its TMA stores"),
    ],
    ids=["no-fence", "no-wait-before-rewrite", "no-wait-before-exit"],
)
def test_broken_tma_store_protocol(victim, which, pattern) -> None:
    module, kernel = lowered_persistent_gemm()
    op = [o for o in kernel.walk() if isinstance(o, victim)][which]
    op.detach()
    op.erase()
    with pytest.raises(Hazard, match=pattern):
        run_persistent_gemm(module)


# ------------------------------------------------ consumer warpgroups as actors


def lowered_attention(ping_pong: bool):
    module = tawa_xdsl.apply(
        example_module("attention.mlir", "attention_causal_d128"),
        hopper((2, 1, 2, 1, int(ping_pong))),
    )
    return module, find_kernel(module, "attention_causal_d128")


def run_attention(module) -> None:
    run = EXAMPLE_RUNS["attention_causal_d128"]
    rng = np.random.default_rng(0)
    inputs = [make(rng) for make in run.inputs]
    out = np.zeros(run.out_shape, dtype=inputs[0].dtype)
    for seed in range(3):
        tawa_xdsl.simulate(
            module,
            "attention_causal_d128",
            *inputs,
            out,
            *run.scalars,
            grid=run.grid,
            seed=seed,
        )


@pytest.mark.parametrize(
    ("victim", "error", "pattern"),
    [
        (
            nv.MmaTurnInitOp,
            PredictedHang,
            r"consumer0 waits at nvgpu_async.mma_turn_begin on the MMA turn barrier of "
            r"consumer0 \(phases completed: 0; arrived: consumer0 of 2",
        ),
        (
            nv.MmaTurnEndOp,
            PredictedHang,
            r"consumer1 waits at nvgpu_async.mma_turn_begin on the MMA turn barrier of "
            r"consumer1",
        ),
        (
            nv.MmaTurnBeginOp,
            Hazard,
            r"consumer1 arrives twice at the MMA turn barrier of consumer0 in one phase",
        ),
    ],
    ids=["no-init", "no-end", "no-begin"],
)
def test_broken_mma_turns(victim, error, pattern) -> None:
    """Each broken turn protocol is caught, naming the warpgroup and the barrier."""
    module, kernel = lowered_attention(ping_pong=True)
    for op in [o for o in kernel.walk() if isinstance(o, victim)]:
        op.detach()
        op.erase()
    with pytest.raises(error, match=pattern):
        run_attention(module)


def test_missing_consumer_barrier_is_a_race() -> None:
    """Before the staging tile is rewritten, warpgroup 0 waits for the last TMA
    store to read it, and the other warpgroups must wait for warpgroup 0: without
    the consumer barrier a lagging warpgroup is free to write too early. (With the
    warpgroups in lock step the simulator could not see this.)"""
    module, kernel = lowered_persistent_gemm(num_consumers=2)
    for op in [o for o in kernel.walk() if isinstance(o, nv.ConsumerBarrierOp)]:
        op.detach()
        op.erase()
    with pytest.raises(
        Hazard, match=r"smem_store writes slot 0 of %c_staging while a TMA store"
    ):
        run_persistent_gemm(module)


# ------------------------------------------------------------------ clusters


def lowered_cluster(
    kernel: str, persistent: bool, num_consumers: int = 2, file: str = "gemm.mlir"
):
    module = example_module(file, kernel)
    pipeline = TawaHopperPipeline(
        num_stages=2,
        mma_depth=1,
        num_consumers=num_consumers,
        persistent=persistent,
        cluster=2,
        tuned=False,
    )
    module = tawa_xdsl.apply(module, str(pipeline.pipeline_pass_spec()))
    return module, find_kernel(module, kernel)


def run_cluster_gemm(
    module, kernel: str, grid, seeds=range(3), simulate=tawa_xdsl.simulate
) -> None:
    """A 300 x 300 output: three 128-row tiles, so the last cluster's second
    block computes rows past the edge."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((300, 200)).astype(tawa_xdsl.dtypes.bfloat16)
    nn = kernel == "gemm_nn"
    b = rng.standard_normal((200, 300) if nn else (300, 200)).astype(a.dtype)
    expected = np.full((300, 300), np.nan, dtype=a.dtype)
    source = example_module("gemm.mlir", kernel)
    tawa_xdsl.interpret(source, kernel, a, b, expected, grid=(3, 3))
    for seed in seeds:
        c = np.full((300, 300), np.nan, dtype=a.dtype)
        simulate(module, kernel, a, b, c, grid=grid, seed=seed)
        assert np.array_equal(c.view(np.uint16), expected.view(np.uint16))


CLUSTER_CASES = [
    ("gemm_nn", False, (4, 3)),  # B in two boxes: one from each block
    ("gemm_nt", False, (4, 3)),  # B in one box: block 0 sends it to both
    ("gemm_nn", True, (4,)),
    ("gemm_nt", True, (2,)),
]


@pytest.mark.parametrize(
    ("kernel", "persistent", "grid"),
    # the fast tier: both ways of splitting the boxes, one of them persistent
    sweep(CLUSTER_CASES, [CLUSTER_CASES[0], CLUSTER_CASES[3]], str, slow=()),
)
def test_cluster_gemm_computes_the_reference(kernel, persistent, grid) -> None:
    module, lowered = lowered_cluster(kernel, persistent)
    assert any(
        isinstance(o, nv.TMALoadOp) and o.cluster_size == 2 for o in lowered.walk()
    )
    run_cluster_gemm(module, kernel, grid)


def test_cluster_attention_computes_the_reference() -> None:
    """K and V, the same for the two query blocks of a cluster, are multicast."""
    module, _ = lowered_cluster(
        "attention_d128", persistent=True, file="attention.mlir"
    )
    run = EXAMPLE_RUNS["attention_causal_d128"]
    rng = np.random.default_rng(0)
    inputs = [make(rng) for make in run.inputs]
    expected = np.full(run.out_shape, np.nan, dtype=inputs[0].dtype)
    tawa_xdsl.interpret(
        example_module("attention.mlir", "attention_d128"),
        "attention_d128",
        *inputs,
        expected,
        *run.scalars,
        grid=run.grid,
    )
    for seed in range(2):
        out = np.full(run.out_shape, np.nan, dtype=inputs[0].dtype)
        tawa_xdsl.simulate(
            module, "attention_d128", *inputs, out, *run.scalars, grid=(4,), seed=seed
        )
        assert np.array_equal(out.view(np.uint16), expected.view(np.uint16))


def test_cluster_grid_must_hold_whole_clusters() -> None:
    module, _ = lowered_cluster("gemm_nn", persistent=False)
    with pytest.raises(
        KernelArgumentError, match=r"grid's x extent 3 is not a multiple of 2"
    ):
        run_cluster_gemm(module, "gemm_nn", (3, 3), seeds=[0])


def _drop(kernel, victim: type, which: int) -> None:
    op = [o for o in kernel.walk() if isinstance(o, victim)][which]
    op.detach()
    op.erase()


def _any_seed(
    module, kernel: str, error: type, pattern: str, simulate=tawa_xdsl.simulate
) -> None:
    """Some interleaving of the cluster's blocks shows the bug."""
    with pytest.raises(error, match=pattern):
        run_cluster_gemm(module, kernel, (4, 3), seeds=range(12), simulate=simulate)


@pytest.mark.parametrize(
    ("which", "pattern"),
    [
        (0, r"reaches %ring0_full of block\d before that block initialised it"),
        (-1, r"has exited \(missing cluster_barrier before exit\?\)"),
    ],
    ids=["after-init", "before-exit"],
)
def test_missing_cluster_barrier_is_a_hazard(which, pattern) -> None:
    """Without the first barrier a block can multicast into a peer that has not
    set up its barriers; without the last, a block can exit while its peer still
    sends it copies or arrivals."""
    module, kernel = lowered_cluster("gemm_nn", persistent=False)
    _drop(kernel, nv.ClusterBarrierOp, which)
    _any_seed(module, "gemm_nn", Hazard, pattern)


def test_local_release_of_a_multicast_slot_is_caught() -> None:
    """A slot that both producers write must be released in both blocks: with
    local releases only, each `empty` waits for arrivals that never come."""
    module, kernel = lowered_cluster("gemm_nn", persistent=False)
    for op in kernel.walk():
        if isinstance(op, nv.MBarrierArriveOp):
            del op.properties["cluster"]
    _any_seed(module, "gemm_nn", PredictedHang, r"%block\d\.ring0_empty\[\d\].*2 of 4")


def test_peer_bytes_before_the_arm_are_counted() -> None:
    """A peer's half of a slot may land before this block's producer armed the
    barrier (the transaction count goes negative); arming for only the local
    bytes is caught when the phase completes with bytes to spare."""
    module, kernel = lowered_cluster("gemm_nn", persistent=False)
    arm = next(
        op for op in kernel.walk() if isinstance(op, nv.MBarrierArriveExpectTxOp)
    )
    local = arm.bytes.value.data - 64 * 64 * 2  # without the peer's B box
    arm.properties["bytes"] = type(arm.bytes)(local, 64)
    _any_seed(
        module,
        "gemm_nn",
        OpDiagnostic,
        rf"arms {local} bytes, but the TMA loads .* bring {local + 64 * 64 * 2}",
    )
    _any_seed(
        module,
        "gemm_nn",
        Hazard,
        r"received 8192 more bytes than expect_tx|expect_tx armed fewer bytes",
        simulate_unverified,
    )
