"""The Hopper lowering's plan, on its own: for every example kernel under the
configurations the tests use, the shared memory it lays out is aligned, disjoint
and within a block's, its byte counts are the tiles', and it says which loads
are multicast, which stores go through TMA, and what the parameters are."""

from __future__ import annotations

import itertools
import re

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, BFloat16Type

import tawa_xdsl
from tawa_xdsl.analysis.kernel_plan import SMEM_BUDGET, KernelPlan
from tawa_xdsl.compiler import CompileOptions, default_registers
from tawa_xdsl.diagnostics import DiagnosticException
from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects.nvgpu_async import ParamKind
from tawa_xdsl.dialects.tile import tile_bytes
from tawa_xdsl.kernel import find_kernel
from tawa_xdsl.lowering.aref_to_nvgpu import ConvertArefToNVGPUAsyncPass
from tawa_xdsl.pipelines import hopper_passes
from tawa_xdsl.registry import make_context
from tawa_xdsl.target import SLOT_ALIGN

from .conftest import EXAMPLES, rotation, sweep
from .gpu.test_runtime_gpu import SHIFTED_GEMM


def planned(file: str, kernel: str, tma_store: bool = True, **options) -> KernelPlan:
    """The plan of `kernel` after the pipeline's passes that precede the lowering,
    with exactly `options` (untuned)."""
    module = tawa_xdsl.parse(EXAMPLES / file)
    for other in [k for k in module.ops if k.sym_name.data != kernel]:
        other.detach()
        other.erase()
    k = find_kernel(module, kernel)
    chosen = CompileOptions(tma_store=tma_store, tuned=False, **options).resolve(k)
    ctx = make_context()
    for p in hopper_passes(chosen):
        if isinstance(p, ConvertArefToNVGPUAsyncPass):
            break
        p.apply(ctx, module)
    k = find_kernel(module, kernel)
    (ws,) = [o for o in k.body.block.ops if isinstance(o, aref.WarpSpecializeOp)]
    return KernelPlan.of(k, ws, tma_store)


def _kernels(file: str) -> list[str]:
    return re.findall(r"func\.func @(\w+)", (EXAMPLES / file).read_text())


OPTIONS = {
    "one": dict(num_stages=2, mma_depth=1),
    "two": dict(num_stages=3, mma_depth=2, num_consumers=2),
    "persistent": dict(num_stages=2, mma_depth=1, num_consumers=2, persistent=True),
    "two-stage": dict(num_stages=2, mma_depth=1, num_consumers=2, two_stage=True),
}
CASES = [
    (f, k, name)
    for f in sorted(p.name for p in EXAMPLES.glob("*.mlir"))
    for k in _kernels(f)
    for name in OPTIONS
    if name != "two-stage" or f.startswith("attention")
]


FAST = {
    (f, k, name)
    for (f, k), name in rotation(
        sorted({(f, k) for f, k, _ in CASES}), ["one", "two", "persistent"], 1
    )
}
"""Each kernel under one of the common option sets in turn (every kernel and
set reached), attention's two-stage in CI, the rest under `--exhaustive`."""


@pytest.mark.parametrize(
    ("file", "kernel", "options"),
    sweep(
        CASES,
        FAST,
        lambda c: f"{c[0]}-{c[1]}-{c[2]}",
        slow={c for c in CASES if c[2] == "two-stage"},
    ),
)
def test_shared_memory_is_aligned_disjoint_and_fits(file, kernel, options) -> None:
    try:
        plan = planned(file, kernel, **OPTIONS[options])
    except DiagnosticException as e:  # the plan refuses rings that do not fit
        assert "bytes of shared memory" in str(e)
        return
    allocations = sorted(plan.allocations, key=lambda a: a.offset)
    for a, b in itertools.pairwise(allocations):
        assert a.end <= b.offset, f"{a} overlaps {b}"
    for a in allocations:
        align = SLOT_ALIGN if isinstance(a.type, nv.SmemType) else 8
        assert a.offset % align == 0, a
    assert plan.smem_end == max(a.end for a in allocations) <= SMEM_BUDGET
    assert plan.smem_bytes == plan.smem_end + nv.SMEM_ALIGN_SLACK
    for ch in plan.channels.values():
        payload = ch.create.result.type.types
        assert ch.slot_bytes == sum(
            tile_bytes(t.get_shape(), t.element_type) for t in payload
        )
        flips = ch.transposed or (False,) * len(payload)
        assert [r.type for r in ch.rings] == [  # an 8-bit B tile held N x K
            nv.SmemType(ch.depth, t.get_shape()[:: -1 if flip else 1], t.element_type)
            for t, flip in zip(payload, flips, strict=True)
        ]
        assert [s.type for s in ch.staging] == [  # one slot, as TMA loads it
            nv.SmemType(1, t.get_shape(), t.element_type)
            for t, flip in zip(payload, flips, strict=True)
            if flip
        ]
        assert (ch.staged is None) == (not ch.staging)
        assert ch.full.type == ch.empty.type == nv.MBarrierType(ch.depth)
        per_warpgroup = 128 if ch.thread_release else 1
        assert ch.empty_arrivals == per_warpgroup * plan.num_consumers
    assert plan.threads == 128 * (1 + plan.num_consumers)
    assert plan.registers == default_registers(plan.num_consumers)


def test_gemm_plan() -> None:
    """Two 3-slot rings of 128x64 bf16 tiles, the 128x128 staging tile of C,
    then the barriers; A, B and C are tensor maps, K an extent."""
    plan = planned("gemm.mlir", "gemm_nt", num_stages=3, mma_depth=2)
    assert [(p.param_kind, p.arg.data, p.axis_index) for p in plan.abi] == [
        (ParamKind.MAP, 0, None),
        (ParamKind.DIM, 0, 1),
        (ParamKind.MAP, 1, None),
        (ParamKind.MAP, 2, None),
    ]
    assert isinstance(plan.abi[0].type, nv.TensorMapType)
    assert [(a.offset, a.name) for a in plan.allocations] == [
        (0, "ring0"),
        (49152, "ring0"),
        (98304, "c_staging"),
        (131072, "ring0_full"),
        (131096, "ring0_empty"),
    ]
    (ch,) = plan.channels.values()
    assert (ch.depth, ch.slot_bytes) == (3, 2 * 128 * 64 * 2)
    assert plan.smem_bytes == 132144
    ((store, staging),) = plan.staging.items()
    assert isinstance(store, tile.StoreOp) and staging.type == nv.SmemType(
        1, (128, 128), store.value.type.element_type
    )
    assert plan.multicast == set() and plan.cluster == 1


def test_register_stores() -> None:
    """tma-store=false: C is a global tensor stored from registers, no staging."""
    plan = planned("gemm.mlir", "gemm_nt", tma_store=False, num_stages=3)
    assert plan.staging == {}
    assert plan.abi[-1] == nv.ParamAttr(
        ParamKind.GLOBAL, 2, nv.GlobalTensorType((DYNAMIC_INDEX,) * 2, BFloat16Type())
    )
    (c,) = [p for p in plan.params if p.arg == 2]
    assert c.kind == ParamKind.GLOBAL and isinstance(c.type, nv.GlobalTensorType)


def test_the_epilogue_bias_is_read_by_threads() -> None:
    """The bias vector is read with plain shared loads: each consumer thread
    releases its slot."""
    plan = planned("gemm_epilogue.mlir", "gemm_bias_gelu", num_consumers=2)
    release = {ch.create.result.name_hint: ch for ch in plan.channels.values()}
    threads = [ch for ch in release.values() if ch.thread_release]
    assert len(threads) == 1 and threads[0].empty_arrivals == 2 * 128
    (types,) = {
        tuple(t.get_shape() for t in ch.create.result.type.types) for ch in threads
    }
    assert all(len(shape) == 1 for shape in types)


@pytest.mark.parametrize("kernel", ["gemm_nt", "gemm_nn"])
def test_clusters_multicast_b(kernel) -> None:
    """In clusters of two, B (the same in both blocks) is multicast, A is not;
    the ring's slots are released in both blocks."""
    plan = planned(
        "gemm.mlir", kernel, num_stages=2, mma_depth=1, num_consumers=2, cluster=2
    )
    assert plan.cluster == 2
    names = {load.desc.name_hint for load in plan.multicast}
    assert names == {"b"}
    (ch,) = plan.channels.values()
    assert ch.multicast and ch.empty_arrivals == 2 * 2


def test_attention_clusters_multicast_k_and_v() -> None:
    plan = planned(
        "attention.mlir",
        "attention_d128",
        num_stages=2,
        mma_depth=1,
        num_consumers=2,
        persistent=True,
        cluster=2,
    )
    assert {load.desc.name_hint for load in plan.multicast} == {"k", "v"}
    multicast = [ch for ch in plan.channels.values() if ch.multicast]
    assert len(multicast) == 1 and len(multicast[0].rings) == 2


@pytest.mark.parametrize(
    ("store", "col", "tma"),
    [(0, 0, True), (64, 0, False), (0, 8, True), (0, 2, False), (0, -8, False)],
)
def test_stores_take_tma_only_where_it_cannot_fault(store, col, tma) -> None:
    """A TMA store faults below 0 and off a 16-byte boundary: such stores go
    from registers."""
    module = tawa_xdsl.parse(SHIFTED_GEMM.format(load=0, store=store, col=col))
    tawa_xdsl.apply(
        module, "canonicalize,cse,aref-partition,cooperative{num-consumers=2},pipeline"
    )
    kernel = find_kernel(module, "shifted")
    assert isinstance(kernel, func.FuncOp)
    (ws,) = [o for o in kernel.walk() if isinstance(o, aref.WarpSpecializeOp)]
    plan = KernelPlan.of(kernel, ws)
    assert bool(plan.staging) == tma
    last = plan.abi[-1]
    assert (last.param_kind, last.arg.data) == (
        ParamKind.MAP if tma else ParamKind.GLOBAL,
        2,
    )
