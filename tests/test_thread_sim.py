"""The thread-level simulator (`tawa_xdsl.interp.thread_sim`) on small kernels
written by hand, one op family at a time: each result is known, and each broken
kernel (a collective reached by part of a warp, an access outside memory, a
read of a register a guard skipped, a wrong barrier protocol) is caught."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.rewriter import InsertPoint, Rewriter

from tawa_xdsl.dialects import ptx
from tawa_xdsl.dialects.ptx import ALU_OPCODES
from tawa_xdsl.interp.barrier_sim import Hazard
from tawa_xdsl.interp.ptx_alu import ALU, APPROXIMATE, f32_bits
from tawa_xdsl.interp.thread_sim import Pointer

from .ptx_builder import Kernel

U32 = np.uint32


def u32(*xs: int) -> np.ndarray:
    return np.array([[x & 0xFFFFFFFF for x in xs]], dtype=U32)


def test_every_alu_opcode_has_a_meaning() -> None:
    assert set(ALU) == set(ALU_OPCODES)


@pytest.mark.parametrize(
    "opcode, args, expected",
    [
        ("add.s32", (u32(0x7FFFFFFF), u32(1)), u32(0x80000000)),
        ("sub.u32", (u32(0), u32(1)), u32(0xFFFFFFFF)),
        ("mul.lo.s32", (u32(-3), u32(5)), u32(-15)),
        ("shl.b32", (u32(1, 1, 1), u32(4, 31, 32)), u32(16, 1 << 31, 0)),
        ("shr.u32", (u32(-16, -16), u32(2, 40)), u32(0x3FFFFFFC, 0)),
        ("shr.s32", (u32(-16, -16), u32(2, 40)), u32(-4, -1)),
        ("div.s32", (u32(-7, 7), u32(2, -2)), u32(-3, -3)),
        ("rem.s32", (u32(-7, 7), u32(2, -2)), u32(-1, 1)),
        ("div.u32", (u32(-2), u32(2)), u32(0x7FFFFFFF)),
        ("bfe.u32", (u32(0b1101100), u32(2), u32(3)), u32(0b011)),
        ("bfe.u32", (u32(-1), u32(30), u32(8)), u32(3)),
        ("max.s32", (u32(-1), u32(1)), u32(1)),
        ("max.u32", (u32(-1), u32(1)), u32(-1)),
        ("mad.lo.u32", (u32(3), u32(4), u32(5)), u32(17)),
        ("setp.lt.s32", (u32(-1), u32(0)), np.array([[True]])),
        ("setp.lt.u32", (u32(-1), u32(0)), np.array([[False]])),
        ("setp.lo.s32", (u32(-1), u32(0)), np.array([[False]])),
        ("setp.ge.and.s32", (u32(1), u32(0), np.array([[False]])), np.array([[False]])),
        ("cvt.s32.s8", (u32(0x80, 0x17F, -251),), u32(-128, 127, 5)),
    ],
)
def test_integer_opcodes(opcode, args, expected) -> None:
    np.testing.assert_array_equal(ALU[opcode](*args), expected)


def test_float_opcodes() -> None:
    nan, one, two = (f32_bits(np.array([[x]])) for x in (np.nan, 1.0, 2.0))
    assert ALU["max.f32"](nan, one)[0, 0] == one[0, 0]
    assert np.isnan(ALU["max.NaN.f32"](nan, one).view(np.float32))[0, 0]
    assert not ALU["setp.ne.f32"](nan, one)[0, 0]
    assert ALU["setp.neu.f32"](nan, one)[0, 0]
    assert ALU["setp.neu.or.f32"](one, one, np.array([[True]]))[0, 0]
    # cvt.rn.bf16x2.f32 d, hi, lo: the first source lands in the upper half
    packed = ALU["cvt.rn.bf16x2.f32"](two, one)[0, 0]
    assert packed == (0x4000 << 16) | 0x3F80
    halves = np.array([[packed & 0xFFFF, packed >> 16]], dtype=np.uint16)
    np.testing.assert_array_equal(
        ALU["cvt.f32.bf16"](halves).view(np.float32), [[1.0, 2.0]]
    )
    tiny = f32_bits(np.array([[1e-40]]))
    assert ALU["ex2.approx.ftz.f32"](tiny).view(np.float32)[0, 0] == 1.0
    assert (
        ALU["cvt.rmi.f32.f32"](f32_bits(np.array([[-1.5]]))).view(np.float32)[0, 0]
        == -2
    )


def test_wide_opcodes() -> None:
    big = np.array([[0xFFFFFFFF]], dtype=U32)
    got = ALU["mad.wide.u32"](big, big, np.array([[1]], dtype=np.uint64))
    assert int(got[0, 0]) == 0xFFFFFFFF * 0xFFFFFFFF + 1
    assert int(ALU["cvt.s64.s32"](u32(-2))[0, 0]) == (1 << 64) - 2
    assert (
        int(ALU["mapa.shared::cluster.u32"](u32(0x410), u32(1))[0, 0])
        == (2 << 24) + 0x410
    )


# ----------------------------------------------------------------- kernels


def lane_address(k: Kernel, param: str, bytes_per_lane: int, tid=None):
    """param + bytes_per_lane * tid, as a b64 global address."""
    tid = tid if tid is not None else k.tid()
    off = k.alu("mul.lo.u32", tid, k.imm(bytes_per_lane))
    return k.alu("add.s64", k.param(param), k.alu("cvt.u64.u32", off))


def store(k: Kernel, addr, value, elements=(0,), **kw) -> None:
    from tawa_xdsl.dialects import ptx

    ptx.StoreOp("global", addr, value, list(elements), **kw)


@given(
    opcode=st.sampled_from(sorted(APPROXIMATE)),
    y=st.floats(allow_nan=False, allow_infinity=False, width=32),
)
def test_an_approximation_errs_within_its_bits(opcode: str, y: float) -> None:
    """`Approximation.round` moves a value by at most 2^-bits of it (or, where
    the error is absolute and the value below 1, by 2^-bits), as the PTX ISA
    bounds the instruction's error; zero stays zero."""
    a = APPROXIMATE[opcode]
    got = float(a.round(np.array([y]))[0])
    allowed = 2.0**-a.bits * (max(abs(y), 1) if a.absolute else abs(y))
    assert abs(got - y) <= allowed


def test_byte_loads_sign_extend_and_byte_stores_keep_the_low_byte() -> None:
    """`ld.global.s8` into a b32 register, then `st.global.u8` of that plus
    300: each lane's signed byte widened, its sum's low byte written."""
    from tawa_xdsl.dialects import ptx

    k = Kernel()
    v = ptx.LoadOp("global", lane_address(k, "p_x", 1), "b32", 1, byte=True).result
    wide = k.alu("add.s32", v, k.imm(300))
    store(k, lane_address(k, "p_w", 4), wide)
    store(k, lane_address(k, "p_y", 1), wide, byte=True)
    x = np.arange(-64, 64, dtype=np.int8)
    w, y = np.zeros(128, np.int32), np.zeros(128, np.int8)
    k.run({"p_x": Pointer(x, "x"), "p_w": Pointer(w, "w"), "p_y": Pointer(y, "y")})
    np.testing.assert_array_equal(w, x.astype(np.int32) + 300)
    np.testing.assert_array_equal(y, (x.astype(np.int32) + 300).astype(np.int8))


def test_a_byte_moves_one_b32_register() -> None:
    from xdsl.utils.exceptions import VerifyException

    from tawa_xdsl.dialects import ptx

    k = Kernel()
    addr = lane_address(k, "p_x", 8)
    with pytest.raises(VerifyException, match="a byte moves one b32 register"):
        ptx.LoadOp("global", addr, "b64", 1, byte=True).verify_()
    with pytest.raises(VerifyException, match="a byte moves one b32 register"):
        ptx.LoadOp("global", addr, "b32", 2, byte=True).verify_()
    # an i8 pair's two bytes (st.u16): from one b32 register, by a store
    wide = ptx.LoadOp("global", addr, "b64", 1).result
    with pytest.raises(VerifyException, match="two bytes move one b32 register"):
        ptx.StoreOp("global", addr, wide, [0], half=True).verify_()
    narrow = ptx.LoadOp("global", addr, "b32", 1).result
    with pytest.raises(VerifyException, match="half is not with byte"):
        ptx.StoreOp("global", addr, narrow, [0], byte=True, half=True).verify_()
    # two bytes into the low half of a b32 register, zero-extended (ld.u16)
    ptx.LoadOp("global", addr, "b32", 1, half=True).verify_()
    with pytest.raises(VerifyException, match="two bytes move one b32 register"):
        ptx.LoadOp("global", addr, "b32", 2, half=True).verify_()


def test_divergent_if_merges_results_lane_by_lane() -> None:
    k = Kernel()
    tid = k.tid()
    low = k.alu("setp.lt.u32", tid, k.imm(40))
    results: list = []
    with k.if_(low, results=results, otherwise=[k.alu("add.u32", tid, k.imm(2000))]):
        results.append(k.alu("add.u32", tid, k.imm(1000)))
    store(k, lane_address(k, "p_out", 4), k.last.res[0])
    out = np.zeros(128, np.uint32)
    k.run({"p_out": Pointer(out, "out")})
    tids = np.arange(128)
    np.testing.assert_array_equal(out, np.where(tids < 40, tids + 1000, tids + 2000))


def test_for_runs_each_lane_its_own_trip_count() -> None:
    k = Kernel()
    tid = k.tid()
    trips = k.alu("rem.u32", tid, k.imm(5))
    with k.for_(k.imm(0), trips, k.imm(1), [k.alu("mov.b32", k.imm(0))]) as loop:
        loop.yields.append(k.alu("add.u32", loop.carried[0], loop.iv))
    store(k, lane_address(k, "p_out", 4), k.last.res[0])
    out = np.zeros(128, np.uint32)
    k.run({"p_out": Pointer(out, "out")})
    n = np.arange(128) % 5
    np.testing.assert_array_equal(out, n * (n - 1) // 2)


def test_uniform_branch_on_a_lane_varying_condition_is_a_hazard() -> None:
    k = Kernel()
    with k.if_(k.alu("setp.lt.u32", k.tid(), k.imm(5)), uniform=True):
        pass
    with pytest.raises(Hazard, match="uniform branch whose condition differs"):
        k.run()


def quad_sum(k: Kernel, v):
    s = k.alu("add.f32", v, ptx_shfl(v, 1))
    return k.alu("add.f32", s, ptx_shfl(s, 2))


def ptx_shfl(v, mask: int):
    from tawa_xdsl.dialects import ptx

    return ptx.ShflOp(v, mask).result


def test_shuffles_reduce_a_quad() -> None:
    from tawa_xdsl.dialects import ptx

    k = Kernel()
    v = ptx.LoadOp("global", lane_address(k, "p_x", 4), "f32", 1).result
    store(k, lane_address(k, "p_y", 4), quad_sum(k, v))
    x = np.random.default_rng(0).standard_normal(128).astype(np.float32)
    y = np.zeros(128, np.float32)
    k.run({"p_x": Pointer(x, "x"), "p_y": Pointer(y, "y")})
    np.testing.assert_allclose(y, x.reshape(-1, 4).sum(1).repeat(4), rtol=1e-6)


def test_shuffle_reached_by_part_of_a_warp_is_a_hazard() -> None:
    k = Kernel()
    with k.if_(k.alu("setp.lt.u32", k.tid(), k.imm(16))):
        ptx_shfl(k.alu("mov.f32", k.imm(1.0, "f32")), 1)
    with pytest.raises(Hazard, match="part of warp 0"):
        k.run()


def test_vote_any_is_per_warp() -> None:
    from tawa_xdsl.dialects import ptx

    k = Kernel()
    tid = k.tid()
    hit = k.alu("setp.eq.u32", tid, k.imm(37))
    vote = ptx.VoteAnyOp(hit).result
    one = k.alu("selp.b32", k.imm(1), k.imm(0), vote)
    store(k, lane_address(k, "p_out", 4), one)
    out = np.zeros(128, np.uint32)
    k.run({"p_out": Pointer(out, "out")})
    np.testing.assert_array_equal(out, (np.arange(128) // 32 == 1).astype(np.uint32))


def test_a_register_its_guard_skipped_cannot_be_read() -> None:
    k = Kernel()
    tid = k.tid()
    even = k.alu("setp.eq.u32", k.alu("and.b32", tid, k.imm(1)), k.imm(0))
    x = k.alu("add.u32", tid, k.imm(7), pred=even)
    addr = lane_address(k, "p_out", 4)
    store(k, addr, x, pred=even)  # fine: only where it was written
    out = np.zeros(128, np.uint32)
    k.run({"p_out": Pointer(out, "out")})
    np.testing.assert_array_equal(out[::2], np.arange(0, 128, 2) + 7)
    k = Kernel()
    tid = k.tid()
    even = k.alu("setp.eq.u32", k.alu("and.b32", tid, k.imm(1)), k.imm(0))
    x = k.alu("add.u32", tid, k.imm(7), pred=even)
    store(k, lane_address(k, "p_out", 4), x)
    with pytest.raises(
        Hazard, match=r"element 0 of .* in lane 1, which add.u32 did not write"
    ):
        k.run({"p_out": Pointer(out, "out")})


def test_stores_outside_the_array_are_caught_with_lane_and_address() -> None:
    k = Kernel()
    store(k, lane_address(k, "p_out", 4), k.tid())
    out = np.zeros(100, np.uint32)
    with pytest.raises(
        Hazard, match=r"outside every array .*0 bytes past the end of 'out'"
    ):
        k.run({"p_out": Pointer(out, "out")})


def test_misaligned_and_racing_stores_are_caught() -> None:
    k = Kernel()
    addr = lane_address(k, "p_out", 4)
    from tawa_xdsl.dialects import ptx

    ptx.StoreOp("global", addr, k.tid(), [0], offset=2)
    with pytest.raises(Hazard, match=r"lane 0 accesses 4 bytes .* not aligned to 4"):
        k.run({"p_out": Pointer(np.zeros(200, np.uint32), "out")})
    k = Kernel()
    store(k, k.param("p_out"), k.tid())
    with pytest.raises(Hazard, match="lanes 0 and 1 write different values"):
        k.run({"p_out": Pointer(np.zeros(4, np.uint32), "out")})


def test_every_byte_written_is_counted() -> None:
    k = Kernel()
    store(k, lane_address(k, "p_out", 4), k.tid())
    out = np.zeros(256, np.uint32)
    machine = k.run({"p_out": Pointer(out, "out")}, grid=(1, 1, 1))
    writes = machine.memory.allocations[0].writes.reshape(-1, 4)
    assert (writes[:128] == 1).all() and (writes[128:] == 0).all()


def test_shared_memory_round_trip_and_bounds() -> None:
    from tawa_xdsl.dialects import ptx

    k = Kernel(threads=128, smem=1024)
    tid = k.tid()
    base = k.special("smem")
    mine = k.alu("mad.lo.u32", tid, k.imm(4), base)
    ptx.StoreOp("shared", mine, tid, [0])
    ptx.BarOp(k.imm(0))
    other = k.alu("mad.lo.u32", k.alu("xor.b32", tid, k.imm(1)), k.imm(4), base)
    got = ptx.LoadOp("shared", other, "b32", 1).result
    store(k, lane_address(k, "p_out", 4), got)
    out = np.zeros(128, np.uint32)
    k.run({"p_out": Pointer(out, "out")})
    np.testing.assert_array_equal(out, np.arange(128) ^ 1)
    k = Kernel(threads=128, smem=256)
    mine = k.alu("mad.lo.u32", k.tid(), k.imm(4), k.special("smem"))
    ptx.StoreOp("shared", mine, k.tid(), [0])
    with pytest.raises(Hazard, match="outside the block's 256 bytes of shared memory"):
        k.run()


# --------------------------------------------------------- allocated registers


def allocate(module, share: tuple[str, str] | None = None) -> None:
    """Give every value registers of its own, except that a loop's counter start
    and counter, and its initial, carried, yielded and result values, share
    theirs (as `ptx-allocate` does); `share` names two more values (by name
    hint) that share registers."""
    from xdsl.rewriter import Rewriter

    from tawa_xdsl.dialects import ptx

    parent: dict = {}

    def find(v):
        while parent.get(v, v) is not v:
            v = parent[v]
        return v

    def union(a, b) -> None:
        if isinstance(a.type, ptx.RegType) and isinstance(b.type, ptx.RegType):
            parent[find(a)] = find(b)

    values, named = [], {}
    for op in module.walk():
        for v in [
            *op.results,
            *(a for r in op.regions for b in r.blocks for a in b.args),
        ]:
            if isinstance(v.type, ptx.RegType):
                values.append(v)
                named[v.name_hint] = v
        if isinstance(op, ptx.ForOp):
            args = op.body.block.args
            union(op.lb, args[0])
            for init, arg, out, res in zip(
                op.iter_args,
                args[1:],
                op.body.block.last_op.operands,
                op.res,
                strict=True,
            ):
                union(init, arg), union(out, arg), union(res, arg)
        if isinstance(op, ptx.IfOp):
            for region in (op.then, op.otherwise):
                if region.blocks:
                    for out, res in zip(
                        region.block.last_op.operands, op.res, strict=True
                    ):
                        union(out, res)
    if share:
        union(named[share[0]], named[share[1]])
    first, base = {}, {}
    for v in values:
        root = find(v)
        if root not in base:
            cls = v.type.register_class
            base[root] = first.get(cls, 0)
            first[cls] = base[root] + v.type.size
    for v in values:
        Rewriter.replace_value_with_new_type(v, v.type.allocated(base[find(v)]))


def loop_kernel() -> Kernel:
    """out[tid] = sum(range(tid % 5)) + tid, through a loop-carried sum."""
    k = Kernel()
    tid = k.tid()
    tid.name_hint = "tid"
    trips = k.alu("rem.u32", tid, k.imm(5))
    trips.name_hint = "trips"
    lb = k.alu("mov.u32", k.imm(0))
    init = k.alu("mov.b32", k.imm(0))
    with k.for_(lb, trips, k.imm(1), [init]) as loop:
        step = k.alu("add.u32", loop.carried[0], loop.iv)
        step.name_hint = "step"
        loop.yields.append(step)
    total = k.alu("add.u32", k.last.res[0], tid)
    store(k, lane_address(k, "p_out", 4), total)
    return k


def test_allocated_registers_hold_what_their_values_name() -> None:
    from tawa_xdsl.interp.thread_sim import run_threads

    n = np.arange(128) % 5
    k = loop_kernel()
    allocate(k.module())
    out = np.zeros(128, np.uint32)
    run_threads(k.module(), k.kernel, {"p_out": Pointer(out)}, (1, 1, 1))
    np.testing.assert_array_equal(out, n * (n - 1) // 2 + np.arange(128))
    k = loop_kernel()  # tid is read after the loop, which overwrites it
    allocate(k.module(), share=("tid", "step"))
    with pytest.raises(
        Hazard, match=r"reads %r\d+ as %tid in lane \d+, but the register holds"
    ):
        run_threads(k.module(), k.kernel, {"p_out": Pointer(out)}, (1, 1, 1))


def test_a_loop_edge_between_different_registers_is_caught() -> None:
    from xdsl.rewriter import Rewriter

    from tawa_xdsl.interp.thread_sim import run_threads

    k = loop_kernel()
    allocate(k.module())
    step = next(
        v for op in k.kernel.walk() for v in op.results if v.name_hint == "step"
    )
    Rewriter.replace_value_with_new_type(step, step.type.allocated(40))
    with pytest.raises(
        Hazard, match=r"becomes .* with no copy between their registers"
    ):
        run_threads(
            k.module(),
            k.kernel,
            {"p_out": Pointer(np.zeros(128, np.uint32))},
            (1, 1, 1),
        )


# ------------------------------------------------------------- while loops


def swap_kernel() -> Kernel:
    """Lane tid swaps (tid, tid + 1000) tid % 5 times in a `ptx.while` and
    stores the pair: each lane leaves the loop at its own trip, and the back
    edge is a parallel copy with a cycle."""
    k = Kernel()
    tid = k.tid()
    trips = k.alu("rem.u32", tid, k.imm(5))
    zero = k.alu("mov.b32", k.imm(0))
    pair = [k.alu("mov.b32", tid), k.alu("add.u32", tid, k.imm(1000))]

    def before(carried: list) -> tuple:
        return k.alu("setp.ne.s32", carried[0], trips), carried

    def after(forwarded: list) -> list:
        i, a, b = forwarded
        return [k.alu("add.s32", i, k.imm(1)), b, a]

    loop = k.while_([zero, *pair], before, after)
    store(k, lane_address(k, "p_a", 4), loop.res[1])
    store(k, lane_address(k, "p_b", 4), loop.res[2])
    return k


def run_swap(k: Kernel) -> tuple[np.ndarray, np.ndarray]:
    """The pair each lane stored, and the pair it should have."""
    from tawa_xdsl.interp.thread_sim import run_threads

    a, b = np.zeros(128, np.uint32), np.zeros(128, np.uint32)
    run_threads(k.module(), k.kernel, {"p_a": Pointer(a), "p_b": Pointer(b)}, (1, 1, 1))
    tid = np.arange(128)
    odd = tid % 5 % 2 == 1
    expected = np.where(odd, tid + 1000, tid), np.where(odd, tid, tid + 1000)
    return np.stack([a, b]), np.stack(expected)


def test_while_runs_each_lane_its_own_trip_count() -> None:
    got, expected = run_swap(swap_kernel())
    np.testing.assert_array_equal(got, expected)


def test_while_on_the_negated_condition_is_caught() -> None:
    """The loop taken where it should be left (`@p bra` for `@!p bra`; the
    condition is `i != trips`, so the mutant still ends)."""
    k = swap_kernel()
    k.module()  # built: new ops go where they are inserted
    condition = k.last.before.block.last_op
    cond = condition.cond
    true = ptx.AluOp("setp.eq.u32", [cond.owner.operands[1]] * 2, 1)
    flip = ptx.AluOp("xor.pred", [cond, true.result], 1)
    Rewriter.insert_op([true, flip], InsertPoint.before(condition))
    condition.operands[0] = flip.result
    got, expected = run_swap(k)
    assert not np.array_equal(got, expected)


def allocated_swap() -> tuple[Kernel, list]:
    """`swap_kernel` through `ptx-allocate`, and the copies it put before the
    back edge (through a temporary: the pair swaps registers)."""
    from tawa_xdsl.lowering.ptx_allocate import allocate_kernel

    k = swap_kernel()
    k.module()
    allocate_kernel(k.kernel)
    copies = [
        op
        for op in k.last.after.block.ops
        if isinstance(op, ptx.AluOp) and op.opcode.data == "mov.b32"
    ]
    assert len(copies) == 3
    return k, copies


def test_allocated_while_copies_its_back_edge_in_order() -> None:
    k, _ = allocated_swap()
    got, expected = run_swap(k)
    np.testing.assert_array_equal(got, expected)


def test_a_missing_back_edge_copy_is_caught() -> None:
    k, copies = allocated_swap()
    back = k.last.after.block.last_op
    index = list(back.operands).index(copies[1].result)
    back.operands[index] = copies[1].operands[0]  # yield a value where it is
    Rewriter.erase_op(copies[1])
    with pytest.raises(Hazard, match="with no copy between their registers"):
        run_swap(k)


def test_a_back_edge_copy_cycle_without_its_temporary_is_caught() -> None:
    k, (temp, _, last) = allocated_swap()
    last.operands[0] = temp.operands[0]  # read after the middle copy wrote it
    Rewriter.erase_op(temp)
    with pytest.raises(Hazard, match="but the register holds"):
        run_swap(k)
