"""The thread-level simulator's asynchronous machinery on hand-written kernels:
mbarriers (phases, parity, arrival counts, publication of the init), TMA loads
into the 128-byte swizzled layout (and multicast in a cluster), TMA stores from
a staging tile with bulk groups, wgmma through shared-memory descriptors
(K-major and MN-major B) and from A registers, named barriers and setmaxnreg.
Each protocol break is caught: a hang as `PredictedHang`, a race as `Hazard`."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type

from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import ptx
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.interp.barrier_sim import Hazard, PredictedHang
from tawa_xdsl.interp.ptx_wgmma import accumulator_matrix, fragment_positions
from tawa_xdsl.interp.thread_sim import MapParam, Pointer
from tawa_xdsl.interp.tile import read_box

from .ptx_builder import Kernel

K_MAJOR = (1 << 62) | (64 << 32) | (1 << 16)
MN_MAJOR = (1 << 62) | (64 << 32) | ((8192 >> 4) << 16)
BOX = 8192  # a 64 x 64 bf16 box


def aligned_smem(k: Kernel):
    """The dynamic shared memory rounded up to 1024 bytes, as kernels do."""
    s = k.alu("add.u32", k.special("smem"), k.imm(1023))
    return k.alu("and.b32", s, k.imm(-1024))


def lane_address(k: Kernel, param: str, bytes_per_lane: int, extra=None):
    off = k.alu("mul.lo.u32", k.tid(), k.imm(bytes_per_lane))
    if extra is not None:
        off = k.alu("add.u32", off, extra)
    return k.alu("add.s64", k.param(param), k.alu("cvt.u64.u32", off))


def copy_out(k: Kernel, src, param: str, extra=None) -> None:
    """Each lane copies 64 bytes of shared memory at `src + 64 tid` to `param`."""
    addr = k.alu("mad.lo.u32", k.tid(), k.imm(64), src)
    v = ptx.LoadOp("shared", addr, "b32", 16, offsets=[0, 16, 32, 48]).result
    dst = lane_address(k, param, 64, extra)
    for j in range(4):
        ptx.StoreOp("global", dst, v, list(range(4 * j, 4 * j + 4)), offset=16 * j)


def swizzled(image: np.ndarray) -> np.ndarray:
    """Bytes of a 1024-aligned tile as the 128-byte swizzle lays them out."""
    p = np.arange(len(image))
    return image[p ^ (((p >> 7) & 7) << 4)]


def bf16_map(shape) -> nv.TensorMapType:
    return nv.TensorMapType(shape, BFloat16Type(), (64, 64), 128)


def tma_kernel(
    expect: int = BOX, wait: bool = True, coords=(32, 50), cluster: int = 1
) -> Kernel:
    """Thread 0 loads one 64 x 64 box (coordinates innermost first) and every
    lane copies shared memory out; with a cluster, block 0 multicasts."""
    k = Kernel(threads=128, smem=BOX + 1024 + 64, cluster=cluster)
    s = aligned_smem(k)
    bar = k.alu("add.u32", s, k.imm(BOX))
    tid = k.tid()
    leader = k.alu("setp.eq.u32", tid, k.imm(0))
    ptx.MBarrierInitOp(bar, 1, pred=leader)
    ptx.FenceOp("mbarrier_init.release.cluster", pred=leader)
    if cluster > 1:
        ptx.ClusterBarrierOp()
        rank = k.special("%cluster_ctarank")
        issues = k.alu("and.pred", leader, k.alu("setp.eq.u32", rank, k.imm(0)))
        mask = k.alu("mov.b16", k.imm((1 << cluster) - 1, "b16"))
    else:
        ptx.BarOp(k.imm(0))
        issues, mask = leader, None
    tmap = k.param("p_map", generic=True)
    with k.if_(leader):
        ptx.MBarrierArriveOp(bar, expect_tx=expect)
    with k.if_(issues):
        ptx.TMALoadOp(s, tmap, [k.imm(c) for c in coords], bar, mask=mask)
    if wait:
        ptx.MBarrierWaitOp(bar, k.imm(0))
    extra = None
    if cluster > 1:
        extra = k.alu("mul.lo.u32", k.special("%cluster_ctarank"), k.imm(BOX))
    copy_out(k, s, "p_out", extra)
    if cluster > 1:
        ptx.ClusterBarrierOp()
    return k


def test_tma_load_writes_the_swizzled_box_with_zeros_outside() -> None:
    a = np.random.default_rng(1).standard_normal((100, 70)).astype(bfloat16)
    out = np.zeros(BOX, np.uint8)
    tma_kernel().run(
        {"p_map": MapParam(a, bf16_map(a.shape), "a"), "p_out": Pointer(out, "out")}
    )
    box = read_box(a, (50, 32), (64, 64))
    assert box[50:].max() == 0 and box[:, 38:].max() == 0  # outside the tensor
    np.testing.assert_array_equal(out, swizzled(box.reshape(-1).view(np.uint8)))


@pytest.mark.parametrize(
    "kernel, error, message",
    [
        (
            lambda: tma_kernel(expect=BOX // 2),
            Hazard,
            "more bytes than expect_tx armed",
        ),
        (
            lambda: tma_kernel(expect=2 * BOX),
            PredictedHang,
            "parity 0 .*8192 transaction bytes",
        ),
        (lambda: tma_kernel(wait=False), Hazard, "TMA copy still in flight"),
    ],
)
def test_tma_load_protocol_breaks(kernel, error, message) -> None:
    a = np.zeros((100, 70), bfloat16)
    params = {
        "p_map": MapParam(a, bf16_map(a.shape)),
        "p_out": Pointer(np.zeros(BOX, np.uint8)),
    }
    with pytest.raises(error, match=message):
        kernel().run(params)


def test_tma_multicast_fills_every_block_of_the_cluster() -> None:
    a = np.random.default_rng(2).standard_normal((64, 64)).astype(bfloat16)
    out = np.zeros(2 * BOX, np.uint8)
    tma_kernel(coords=(0, 0), cluster=2).run(
        {"p_map": MapParam(a, bf16_map(a.shape)), "p_out": Pointer(out, "out")},
        grid=(2, 1, 1),
    )
    image = swizzled(a.reshape(-1).view(np.uint8))
    np.testing.assert_array_equal(out.reshape(2, -1), [image, image])


def test_a_peer_barrier_used_before_the_cluster_barrier_is_a_hazard() -> None:
    k = tma_kernel(coords=(0, 0), cluster=2)
    first = next(op for op in k.block.ops if isinstance(op, ptx.ClusterBarrierOp))
    first.detach()
    first.erase()
    a = np.zeros((64, 64), bfloat16)
    with pytest.raises(
        Hazard, match=r"before that block fenced its init|no initialised"
    ):
        k.run(
            {
                "p_map": MapParam(a, bf16_map(a.shape)),
                "p_out": Pointer(np.zeros(2 * BOX, np.uint8)),
            },
            grid=(2, 1, 1),
        )


def tma_store_kernel(fence: bool = True, wait: bool = True) -> Kernel:
    """Every lane writes 64 bytes of the staging tile (from `p_img`), then
    thread 0 stores the tile with TMA at (row 70, column 24)."""
    k = Kernel(threads=128, smem=BOX + 1024)
    s = aligned_smem(k)
    src = lane_address(k, "p_img", 64)
    v = ptx.LoadOp("global", src, "b32", 16, offsets=[0, 16, 32, 48]).result
    dst = k.alu("mad.lo.u32", k.tid(), k.imm(64), s)
    for j in range(4):
        ptx.StoreOp("shared", dst, v, list(range(4 * j, 4 * j + 4)), offset=16 * j)
    if fence:
        ptx.FenceOp("proxy.async.shared::cta")
    ptx.BarOp(k.imm(0))
    leader = k.alu("setp.eq.u32", k.tid(), k.imm(0))
    tmap = k.param("p_map", generic=True)
    ptx.TMAStoreOp(tmap, [k.imm(24), k.imm(70)], s, pred=leader)
    ptx.BulkCommitOp(pred=leader)
    if wait:
        ptx.BulkWaitOp(0, pred=leader)
    return k


def test_tma_store_writes_the_box_inside_the_tensor() -> None:
    tile = np.random.default_rng(3).standard_normal((64, 64)).astype(bfloat16)
    c = np.full((100, 70), -1, bfloat16)
    image = swizzled(tile.reshape(-1).view(np.uint8))
    tma_store_kernel().run(
        {"p_map": MapParam(c, bf16_map(c.shape)), "p_img": Pointer(image, "img")}
    )
    expected = np.full((100, 70), -1, bfloat16)
    expected[70:, 24:] = tile[:30, :46]
    np.testing.assert_array_equal(c.view(np.uint16), expected.view(np.uint16))


@pytest.mark.parametrize(
    "kernel, message",
    [
        (lambda: tma_store_kernel(fence=False), "missing fence.proxy.async"),
        (
            lambda: tma_store_kernel(wait=False),
            "exits before a cp.async.bulk.wait_group.read",
        ),
    ],
)
def test_tma_store_protocol_breaks(kernel, message) -> None:
    c = np.zeros((100, 70), bfloat16)
    params = {
        "p_map": MapParam(c, bf16_map(c.shape)),
        "p_img": Pointer(np.zeros(BOX, np.uint8)),
    }
    with pytest.raises(Hazard, match=message):
        kernel().run(params)


# ------------------------------------------------------------------ wgmma


def descriptor(k: Kernel, addr, const: int):
    t = k.alu("bfe.u32", addr, k.imm(4), k.imm(14))
    return k.alu("or.b64", k.alu("cvt.u64.u32", t), k.imm(const, "b64"))


def wgmma_kernel(
    transpose_b: int = 0,
    a_in_registers: bool = False,
    read_early: bool = False,
    partial: bool = False,
    overwrite: bool = False,
) -> Kernel:
    """D (64 x 64) = A (64 x 64) B over four k16 steps: A and B loaded by TMA
    (A from registers when `a_in_registers`); every lane stores its 32
    accumulator registers to `p_out` in order."""
    k = Kernel(threads=128, smem=2 * BOX + 1024 + 64)
    s = aligned_smem(k)
    b_smem = k.alu("add.u32", s, k.imm(BOX))
    bar = k.alu("add.u32", s, k.imm(2 * BOX))
    tid = k.tid()
    leader = k.alu("setp.eq.u32", tid, k.imm(0))
    ptx.MBarrierInitOp(bar, 1, pred=leader)
    ptx.BarOp(k.imm(0))
    a_map, b_map = k.param("p_a", generic=True), k.param("p_b", generic=True)
    zero = k.imm(0)
    with k.if_(leader):
        ptx.MBarrierArriveOp(bar, expect_tx=2 * BOX)
        ptx.TMALoadOp(s, a_map, [zero, zero], bar)
        ptx.TMALoadOp(b_smem, b_map, [zero, zero], bar)
    ptx.MBarrierWaitOp(bar, k.imm(0))
    true = k.alu("setp.eq.u32", tid, tid)
    false = k.alu("setp.ne.u32", tid, tid)
    acc = k.alu("mov.f32", k.imm(0.0, "f32"), n=32)
    a_desc = descriptor(k, s, K_MAJOR)
    b_desc = descriptor(k, b_smem, MN_MAJOR if transpose_b else K_MAJOR)
    a_regs = None
    if a_in_registers:
        a_regs = ptx.LoadOp(
            "global", lane_address(k, "p_afrag", 64), "b32", 16, offsets=[0, 16, 32, 48]
        ).result
    cond = k.alu("setp.lt.u32", tid, k.imm(64 if partial else 128))
    with k.if_(cond):
        ptx.WgmmaFenceOp()
        for step in range(4):
            b_d = k.alu(
                "add.s64", b_desc, k.imm(128 * step if transpose_b else 2 * step, "b64")
            )
            if a_in_registers:
                a_op, a_map_ = a_regs, list(range(4 * step, 4 * step + 4))
            else:
                a_op, a_map_ = k.alu("add.s64", a_desc, k.imm(2 * step, "b64")), ()
            acc = ptx.WgmmaOp(
                acc,
                a_op,
                b_d,
                false if step == 0 else true,
                "m64n64k16",
                "bf16",
                0,
                transpose_b,
                a_map_,
            ).result
        ptx.WgmmaCommitOp()
        if overwrite:
            with k.if_(leader):
                ptx.TMALoadOp(s, a_map, [zero, zero], bar)
        if read_early:
            ptx.StoreOp("global", lane_address(k, "p_out", 128), acc, [0])
        ptx.WgmmaWaitOp(0)
        out = lane_address(k, "p_out", 128)
        for j in range(8):
            ptx.StoreOp(
                "global", out, acc, list(range(4 * j, 4 * j + 4)), offset=16 * j
            )
    return k


def a_fragments(a: np.ndarray) -> np.ndarray:
    """The A registers `[128, 16]` (4 per k16 step) of a 64 x 64 bf16 tile."""
    rows, cols = fragment_positions(16)  # [128, 8]
    regs = np.zeros((128, 16), np.uint32)
    bits = a.view(np.uint16).astype(np.uint32)
    for step in range(4):
        v = bits[rows, 16 * step + cols]  # [128, 8]
        regs[:, 4 * step : 4 * step + 4] = v[:, 0::2] | (v[:, 1::2] << 16)
    return regs


def run_wgmma(kernel: Kernel, transpose_b: int = 0):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((64, 64)).astype(bfloat16)
    b = rng.standard_normal((64, 64)).astype(bfloat16)  # N x K, or K x N transposed
    out = np.zeros((128, 32), np.float32)
    kernel.run(
        {
            "p_a": MapParam(a, bf16_map(a.shape), "a"),
            "p_b": MapParam(b, bf16_map(b.shape), "b"),
            "p_afrag": Pointer(a_fragments(a), "afrag"),
            "p_out": Pointer(out, "out"),
        }
    )
    b64 = b.astype(np.float64)
    expected = a.astype(np.float64) @ (b64 if transpose_b else b64.T)
    return accumulator_matrix(out.view(np.uint32), 64), expected


@pytest.mark.parametrize(
    "transpose_b, a_in_registers", [(0, False), (1, False), (0, True), (1, True)]
)
def test_wgmma_computes_a_b(transpose_b, a_in_registers) -> None:
    got, expected = run_wgmma(wgmma_kernel(transpose_b, a_in_registers), transpose_b)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"read_early": True}, "before a wgmma.wait_group retired"),
        ({"partial": True}, "reached by 64 of the warpgroup's 128 threads"),
        ({"overwrite": True}, "a wgmma group still in flight reads"),
    ],
)
def test_wgmma_protocol_breaks(options, message) -> None:
    with pytest.raises(Hazard, match=message):
        run_wgmma(wgmma_kernel(**options))


# ------------------------------------------------- mbarriers between roles


def handoff_kernel(
    arrive: bool = True, publish: bool = True, parity: int = 0
) -> Kernel:
    """Warpgroup 0's thread 0 writes 42 to shared memory and arrives; warpgroup
    1 waits for the phase and reads it."""
    k = Kernel(threads=256, smem=1024)
    s = k.special("smem")
    tid = k.tid()
    leader = k.alu("setp.eq.u32", tid, k.imm(0))
    ptx.MBarrierInitOp(s, 1, pred=leader)
    if publish:
        ptx.BarOp(k.imm(0))
    producer = k.alu("setp.lt.u32", tid, k.imm(128))
    with k.if_(producer, uniform=True), k.if_(leader):
        ptx.StoreOp("shared", s, k.imm(42), [0], offset=64)
        if arrive:
            ptx.MBarrierArriveOp(s)
    with k.if_(k.alu("setp.ge.u32", tid, k.imm(128)), uniform=True):
        ptx.MBarrierWaitOp(s, k.imm(parity))
        v = ptx.LoadOp("shared", s, "b32", 1, offset=64).result
        addr = k.alu("sub.u32", tid, k.imm(128))
        out = k.alu(
            "add.s64",
            k.param("p_out"),
            k.alu("cvt.u64.u32", k.alu("mul.lo.u32", addr, k.imm(4))),
        )
        ptx.StoreOp("global", out, v, [0])
    return k


def test_mbarrier_hands_data_from_one_warpgroup_to_another() -> None:
    for seed in range(3):
        out = np.zeros(128, np.uint32)
        handoff_kernel().run({"p_out": Pointer(out)}, seed=seed)
        assert (out == 42).all()


def test_mbarrier_protocol_breaks() -> None:
    params = {"p_out": Pointer(np.zeros(128, np.uint32))}
    with pytest.raises(
        PredictedHang, match=r"wg1 waits at .*parity 0 \(phases completed: 0; 1 of 1"
    ):
        handoff_kernel(arrive=False).run(params)
    with pytest.raises(
        Hazard, match=r"before a bar.sync published its init|no initialised mbarrier"
    ):
        handoff_kernel(publish=False).run(params, seed=1)
    # parity 1 passes at once on a fresh barrier: the consumer reads garbage, or,
    # where the phase completed first, waits for one that never comes
    caught = []
    for seed in range(4):
        out = np.zeros(128, np.uint32)
        try:
            handoff_kernel(parity=1).run({"p_out": Pointer(out)}, seed=seed)
            caught.append(not (out == 42).all())
        except PredictedHang:
            caught.append(True)
    assert all(caught)


# ------------------------------------------- named barriers and registers


def three_warpgroups(body) -> Kernel:
    k = Kernel(threads=384)
    wg = k.alu("shr.u32", k.tid(), k.imm(7))
    body(k, wg)
    return k


def test_named_barriers_count_threads() -> None:
    def consumers_meet(threads):
        def body(k, wg):
            with k.if_(k.alu("setp.ne.u32", wg, k.imm(0)), uniform=True):
                ptx.BarOp(k.imm(1), threads)

        return body

    three_warpgroups(consumers_meet(256)).run()
    with pytest.raises(
        PredictedHang, match="barrier 1: phases completed: 0; 256 of 384"
    ):
        three_warpgroups(consumers_meet(384)).run()

    def half_warp(k, wg):
        with k.if_(k.alu("setp.lt.u32", k.tid(), k.imm(16))):
            ptx.BarOp(k.imm(1), 32)

    with pytest.raises(Hazard, match="part of warp 0"):
        three_warpgroups(half_warp).run()


def budgets(producer: int, consumer: int):
    def body(k, wg):
        with k.if_(k.alu("setp.eq.u32", wg, k.imm(0)), uniform=True):
            ptx.SetMaxNRegOp("dec", producer)
        with k.if_(k.alu("setp.ne.u32", wg, k.imm(0)), uniform=True):
            ptx.SetMaxNRegOp("inc", consumer)

    return body


def test_setmaxnreg_moves_registers_through_the_pool() -> None:
    three_warpgroups(budgets(24, 240)).run()
    with pytest.raises(PredictedHang, match=r"setmaxnreg.* for 9216 registers"):
        three_warpgroups(budgets(40, 240)).run()

    def partial(k, wg):
        with k.if_(k.alu("setp.lt.u32", k.tid(), k.imm(64))):
            ptx.SetMaxNRegOp("dec", 40)

    with pytest.raises(Hazard, match="reached by 64 of the warpgroup's 128 threads"):
        three_warpgroups(partial).run()
