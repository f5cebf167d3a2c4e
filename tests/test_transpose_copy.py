"""FP8 attention with V as stored (examples/attention_fp8_v.mlir), on the CPU.

wgmma reads 8-bit operands K-major only; a V tile [keys, D] that TMA loads
from a [BH, SK, D] tensor is MN-major for P V. The producer's threads
transpose it: TMA into a one-slot staging buffer, a wait on its barrier, the
4x4-byte block copy into the ring slot (`nvgpu_async.transpose_copy`), the
proxy fence, the producer's named barrier (which also frees the staging
buffer for the next put), one arrive on `full`. The checks:

- the interpreter matches the float64 reference of the dequantized inputs;
- lowered to nvgpu_async as compile() lowers it, the barrier simulator
  computes bit for bit what the interpreter does;
- at the thread level, lane by lane, the output equals bit for bit that of
  attention_fp8.mlir's kernel reading V transposed (v_t) on the same data
  (SK = 304: two full key blocks and a partial one; causal and not): the
  slot holds the same bytes, so the wgmmas sum alike;
- a GEMM whose 8-bit B is stored K x N takes the same path (both simulators);
- mutations the simulators must catch: a wrong transposed index (the byte
  permutes of the halves swapped), no proxy fence, no producer barrier (the
  staging buffer refilled and the slot published before every thread is
  done), the staging wait passing before its copy lands;
- ptxas assembles the kernels with no spill; the dispatcher keeps the tile
  counter's walk off (the producer's threads cannot take tickets) and clusters
  are refused.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

import tawa_xdsl
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dtypes import bfloat16, float8_e4m3fn
from tawa_xdsl.interp.barrier_sim import Hazard, PredictedHang
from tawa_xdsl.kernel import find_kernel
from tawa_xdsl.lowering import aref_patterns
from tawa_xdsl.lowering.assemble import _ptxas, assemble
from tawa_xdsl.lowering.distribute import memory
from tawa_xdsl.lowering.ptx_target import kernel_ptx

from .conftest import EXAMPLES, example_module, sweep
from .test_dispatch import dispatcher, planned
from .test_fp8 import (
    TUNED,
    Case,
    assert_bitwise_equal,
    attention_case,
    hopper,
    interpreted,
    rel_error,
    rel_l2,
    run,
)
from .thread_level import to_thread_level

V_STORED = EXAMPLES / "attention_fp8_v.mlir"
V_TRANSPOSED = EXAMPLES / "attention_fp8.mlir"
KERNELS = [
    (f"attention{causal}_d{d}_fp8_v",)
    for d in (64, 128, 256)
    for causal in ("", "_causal")
]


def _kernels(fast: set[str], ci: set[str]) -> list[object]:
    """`KERNELS` as a sweep: `fast` in the fast tier, `ci` also in CI's slow
    one, the others under --exhaustive."""
    return sweep(
        KERNELS,
        {(k,) for k in fast},
        lambda c: c[0],
        slow={(k,) for k in ci},
    )


def cases(kernel: str, seed: int = 1) -> tuple[Case, Case]:
    """The same data for the kernel taking V as stored and for the one taking
    it transposed: SQ = 130 (two query blocks, one partial), SK = 304."""
    vt_case, _ = attention_case(kernel.removesuffix("_v"), seed, sq=130, sk=304)
    v = np.ascontiguousarray(vt_case.args[2].transpose(0, 2, 1))
    args = [*vt_case.args[:2], v, *vt_case.args[3:]]
    return Case(kernel, args, 3, vt_case.reference), vt_case


def test_interpreter_matches_the_dequantized_reference() -> None:
    """Within attention_fp8.mlir's bounds (e4m3's 3 mantissa bits on P)."""
    for kernel in ("attention_d64_fp8_v", "attention_causal_d128_fp8_v"):
        case, _ = cases(kernel)
        got = interpreted(V_STORED, case)
        assert rel_l2(got, case.reference) < 3.5e-2
        assert rel_error(got, case.reference) < 6e-2


@pytest.mark.parametrize(
    "kernel",
    _kernels({"attention_causal_d64_fp8_v"}, {"attention_d256_fp8_v"}),
)
def test_barrier_simulator_matches_the_interpreter(kernel: str) -> None:
    case, _ = cases(kernel)
    expected = interpreted(V_STORED, case)
    lowered = tawa_xdsl.apply(example_module(V_STORED.name, kernel), TUNED)
    for seed in range(2):
        assert_bitwise_equal(
            run(tawa_xdsl.simulate, lowered, case, seed=seed), expected
        )


def _thread_level(kernel: str) -> tuple[np.ndarray, np.ndarray]:
    """(V as stored, V transposed) lane by lane, as compile() lowers them."""
    case, vt_case = cases(kernel)
    stored = to_thread_level(example_module(V_STORED.name, kernel), TUNED)
    transposed = to_thread_level(
        example_module(V_TRANSPOSED.name, vt_case.kernel), TUNED
    )
    return (
        run(tawa_xdsl.simulate, stored, case),
        run(tawa_xdsl.simulate, transposed, vt_case),
    )


@pytest.mark.parametrize(
    "kernel",
    _kernels(
        {"attention_d64_fp8_v", "attention_causal_d128_fp8_v"},
        {"attention_d256_fp8_v"},
    ),
)
def test_thread_level_equals_the_transposed_v_kernel_bit_for_bit(kernel: str) -> None:
    got, expected = _thread_level(kernel)
    assert not np.isnan(got.astype(np.float32)).any()
    assert_bitwise_equal(got, expected)


# ----------------------------------------------------- a GEMM with B as K x N

GEMM_NN = (
    EXAMPLES.parent / "tests" / "filecheck" / "lowering" / "transpose-copy.mlir"
).read_text()


def _gemm_nn(
    ptx: bool,
    spec: str = hopper(num_stages=2),
    mutate: Callable[[ModuleOp], None] | None = None,
) -> None:
    """C = A @ B with B stored K x N (200 x 256 x 320: a partial M tile, a
    partial last K block), against float64, at the nvgpu_async level or the
    thread level; the nvgpu_async IR changed by `mutate` first where given."""
    rng = np.random.default_rng(3)
    m, n, k = 200, 256, 320
    a = rng.standard_normal((m, k)).astype(float8_e4m3fn)
    b = rng.standard_normal((k, n)).astype(float8_e4m3fn)
    c = np.full((m, n), np.nan, bfloat16)
    module = tawa_xdsl.apply(tawa_xdsl.parse(GEMM_NN), spec)
    if mutate is not None:
        mutate(module)
    if ptx:
        module = tawa_xdsl.apply(module, "distribute-fragments")
    tawa_xdsl.simulate(module, "gemm_fp8_nn", a, b, c, grid=(2, 2))
    expected = a.astype(np.float64) @ b.astype(np.float64)
    error = np.abs(c.astype(np.float64) - expected).max()
    assert error <= 1e-2 * np.abs(expected).max(), f"wrong result (error {error:.3g})"


@pytest.mark.parametrize("ptx", [False, True], ids=["barrier-sim", "thread-sim"])
def test_a_gemm_with_b_stored_k_by_n(ptx: bool) -> None:
    _gemm_nn(ptx)


@pytest.mark.parametrize("ptx", [False, True], ids=["barrier-sim", "thread-sim"])
def test_a_slot_with_a_thread_loaded_a_and_a_transposed_b(ptx: bool) -> None:
    """A loaded by the producer's threads (`cp.async`: each thread arrives for
    its own copies) and B transposed (one thread arrives after the producer
    barrier) in one slot: `full` counts 128 + 1 arrivals, no expect_tx (B's
    copy goes to the staging buffer), and the consumers fence for A."""
    _gemm_nn(ptx, hopper(num_stages=2, thread_loads="a"))


# ---------------------------------------------------------------- mutations


def _erase_in_put(kind: type[Operation], before: type[Operation]) -> Callable:
    """A mutation: erase each `kind` op that comes right before a `before` op
    (the transposing copies' publication sequence, not the other fences)."""

    def mutate(module: ModuleOp) -> None:
        doomed = [
            op
            for op in module.walk()
            if isinstance(op, kind) and isinstance(op.next_op, before)
        ]
        assert doomed, f"no {kind.name} before {before.name}"
        for op in doomed:
            op.detach()
            op.erase()

    return mutate


def test_a_wrong_transposed_index_gives_wrong_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second permute step's halves swapped: column j of a block lands in
    the wrong row of the K-major tile."""
    (pairs, halves) = memory.TRANSPOSE_4X4
    monkeypatch.setattr(memory, "TRANSPOSE_4X4", (pairs, halves[::-1]))
    with pytest.raises(AssertionError, match="wrong result"):
        _gemm_nn(ptx=True)


@pytest.mark.parametrize("ptx", [False, True], ids=["barrier-sim", "thread-sim"])
def test_a_missing_proxy_fence_is_flagged(ptx: bool) -> None:
    """Without the producer's `fence.proxy.async` the wgmma reads
    generic-proxy stores (the consumers do not fence for these rings)."""
    mutate = _erase_in_put(nv.FenceProxyAsyncOp, nv.ProducerBarrierOp)
    with pytest.raises(Hazard, match=r"missing fence.proxy.async"):
        _gemm_nn(ptx, mutate=mutate)


def test_a_missing_producer_barrier_is_flagged() -> None:
    """The producer's named barrier is what frees the staging buffer and
    what lets thread 0's arrive publish every warp's stores: without it the
    thread simulator flags the arrive (or the next copy into the staging
    buffer while other warps still read it)."""
    mutate = _erase_in_put(nv.ProducerBarrierOp, nv.MBarrierArriveOp)
    with pytest.raises(Hazard, match=r"no bar\.sync ordered|still writing"):
        _gemm_nn(ptx=True, mutate=mutate)


@pytest.mark.parametrize("ptx", [False, True], ids=["barrier-sim", "thread-sim"])
def test_reading_the_staging_buffer_before_its_copy_lands_is_flagged(
    monkeypatch: pytest.MonkeyPatch, ptx: bool
) -> None:
    """The staging wait with the other parity passes at once on the fresh
    barrier: the threads read bytes TMA is still writing (or, where the copy
    happened to land first, the next put waits for a phase that completed
    already: a hang)."""
    real = aref_patterns.staged_parity

    def flipped(rewriter, index):  # type: ignore[no-untyped-def]
        one = aref_patterns._const(rewriter, 1)
        parity = real(rewriter, index)
        return rewriter.insert(aref_patterns.arith.XOrIOp(parity, one)).result

    monkeypatch.setattr(aref_patterns, "staged_parity", flipped)
    with pytest.raises(
        (Hazard, PredictedHang), match=r"in flight|still writing|predicted hang"
    ):
        _gemm_nn(ptx)


# ------------------------------------------------ registers, dispatch, refusals


@pytest.mark.skipif(
    _ptxas() is None, reason="nvJitLink ignores setmaxnreg; needs a ptxas binary"
)
@pytest.mark.parametrize(
    "kernel",
    _kernels({"attention_causal_d128_fp8_v"}, {"attention_causal_d256_fp8_v"}),
)
def test_ptxas_assembles_without_spills(kernel: str) -> None:
    """The copy runs on the producer's `setmaxnreg` budget: one block's
    registers live per loop iteration."""
    lowered = tawa_xdsl.apply(example_module(V_STORED.name, kernel), TUNED)
    ptx = kernel_ptx(find_kernel(lowered, kernel))
    assert "prmt.b32" in ptx
    result = assemble(ptx)
    assert result.ok and result.remarks == [], result.log[-3000:]
    assert not result.spills, result.log[-3000:]


def test_the_dispatcher_keeps_the_tile_counter_walk_off() -> None:
    """Where attention_fp8.mlir's kernel walks from the tile counter (causal
    d128, 1024 keys, 128 rows of heads), this one does not, and says why."""
    kernel = "attention_causal_d128_fp8_v"
    options, _ = planned(
        dispatcher(V_TRANSPOSED.name, kernel.removesuffix("_v")),
        BH=128,
        SQ=1024,
        SK=1024,
        D=128,
    )
    assert options["dynamic_tiles"]
    d = dispatcher(V_STORED.name, kernel)
    plan = d.plan(d.key_for(BH=128, SQ=1024, SK=1024, D=128))
    assert not plan.options.as_dict()["dynamic_tiles"]
    (why,) = [r.text for r in plan.decision.reasons if r.rule == "attention walk"]
    assert "transpose" in why


def test_clusters_are_refused_at_the_dot() -> None:
    with pytest.raises(OpDiagnostic, match="do not multicast in a cluster"):
        tawa_xdsl.apply(tawa_xdsl.parse(GEMM_NN), hopper(num_stages=2, cluster=2))
