"""Shapes at the limits, on a CPU: empty extents (K = 0 sums no products, M or
N = 0 writes nothing) through every executor and the runtime's checks and
plans; grids CUDA cannot launch, refused by name before the launch; and the
64-bit arithmetic of every global address the thread-level lowering builds
(a row times a row pitch overflows 32 bits past 4 GiB).

The runtime tests hand the compiled kernels made-up device arrays (never
dereferenced): without a GPU a launch would raise `GPUUnavailable`, so a test
that passes here proves nothing reached the driver."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

import tawa_xdsl
from tawa_xdsl.api import apply as apply_passes
from tawa_xdsl.dialects import ptx, tile
from tawa_xdsl.dialects.nvgpu_async import ParamKind
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.interp.ptx_alu import ALU
from tawa_xdsl.interp.thread_sim import Pointer
from tawa_xdsl.kernel import KernelArgumentError
from tawa_xdsl.lowering.distribute import memory
from tawa_xdsl.partials import stream_k_slots
from tawa_xdsl.runtime.arrays import DeviceArray, device_array
from tawa_xdsl.runtime.kernel import (
    check_device_array,
    sector_problem,
    tma_problem,
)

from .conftest import EXAMPLES, EncodedMap, rotation, sweep
from .ptx_builder import Kernel as PtxKernel
from .test_contracts_dlpack import gpu
from .test_split_k import EPILOGUE, _pair, _run_pair
from .test_thread_sim import lane_address, store
from .thread_level import assert_close, program_grid, to_thread_level

GEMM = EXAMPLES / "gemm.mlir"
KERNELS = EXAMPLES.parent / "tests" / "kernels"
ALPHA = np.float32(0.75)
DOUBLE_TILES = EXAMPLES.parent / "tests" / "kernels" / "double_tiles.mlir"

# ------------------------------------------------------------- empty extents

PLANS = {
    "aref": "aref-partition,pipeline",
    "lowered": "tawa-hopper-pipeline",
    "persistent-mma2": "tawa-hopper-pipeline{persistent=true mma-depth=2 num-stages=4}",
    "registers": "tawa-hopper-pipeline{tma-store=false persistent=false num-stages=2}",
}


def _epilogue_args(m: int, n: int, k: int) -> list:
    """gemm_scale_bias_relu's A, B, bias, a poisoned output and alpha."""
    rng = np.random.default_rng(m + 3 * n + 7 * k)
    a = rng.standard_normal((m, k)).astype(bfloat16)
    b = rng.standard_normal((n, k)).astype(bfloat16)
    bias = rng.standard_normal(n).astype(bfloat16)
    return [a, b, bias, np.full((m, n), np.nan, bfloat16), ALPHA]


def _relu_bias(args: list) -> np.ndarray:
    """What a K = 0 call stores: the epilogue of a zero product."""
    m, n = args[3].shape
    return np.broadcast_to(np.maximum(args[2].astype(np.float32), 0), (m, n))


@pytest.mark.parametrize("level", ["interpret", *PLANS, "thread"])
@pytest.mark.parametrize("m", [200, 1])
def test_k_zero_stores_the_epilogue_of_zero(level: str, m: int) -> None:
    """K = 0: no K iteration, no ring slot put or gotten (no role waits for
    one), and the output is relu(alpha * 0 + bias) in every row, at every
    level down to the lanes."""
    args = _epilogue_args(m, 136, 0)
    module = tawa_xdsl.parse(EPILOGUE)
    grid = (-(-m // 128), 2)
    name = "gemm_scale_bias_relu"
    if level == "interpret":
        tawa_xdsl.interpret(module, name, *args, grid=grid)
    else:
        pipeline = PLANS.get(level, PLANS["persistent-mma2"])
        if level == "thread":
            module = to_thread_level(module, pipeline)
        else:
            module = tawa_xdsl.apply(module, pipeline)
        tawa_xdsl.simulate(
            module, name, *args, grid=program_grid(module, name, grid), seed=1
        )
    np.testing.assert_array_equal(args[3].astype(np.float32), _relu_bias(args))


@pytest.mark.parametrize("m", [1, 130])
def test_k_zero_on_64_row_tiles_stores_zeros(m: int) -> None:
    """A plain GEMM at K = 0 on 64-row tiles stored from registers (one
    consumer warpgroup, the small-M plan) stores zeros, as cuBLAS does."""
    a, b = np.ones((m, 0), bfloat16), np.ones((72, 0), bfloat16)
    c = np.full((m, 72), np.nan, bfloat16)
    module = to_thread_level(
        tawa_xdsl.parse(GEMM),
        "tawa-hopper-pipeline{block-m=64 tma-store=false persistent=false}",
    )
    tawa_xdsl.simulate(module, "gemm_nt", a, b, c, grid=(-(-m // 64), 1))
    assert not c.astype(np.float32).any()


@pytest.mark.parametrize(
    ("pipeline", "slots", "programs"),
    [("split-k{splits=1}", 1, 1), ("split-k{splits=3}", 3, 1), ("stream-k", 1, 3)],
)
def test_k_zero_pairs_sum_empty_slices(
    pipeline: str, slots: int, programs: int
) -> None:
    """The split-K and stream-K pairs at K = 0: every slot is stored with
    zeros (a stream-K tile without K iterations is still one unit of work,
    `partials.stream_k_slots`), and the reduce kernel stores their epilogue."""
    args = _epilogue_args(200, 136, 0)
    module = tawa_xdsl.apply(tawa_xdsl.parse(EPILOGUE), pipeline)
    assert len(_pair(module, "gemm_scale_bias_relu")) == 2
    assert stream_k_slots(4, 0, programs) == slots or pipeline != "stream-k"
    ws = np.full((slots, 200, 136), np.nan, np.float32)
    _run_pair(module, "gemm_scale_bias_relu", args, ws, programs=programs)
    assert not ws.any(), "every slot holds zeros"
    np.testing.assert_array_equal(args[3].astype(np.float32), _relu_bias(args))


@pytest.mark.parametrize("level", ["interpret", "lowered", "thread"])
@pytest.mark.parametrize(("m", "n"), [(0, 136), (200, 0)])
def test_empty_outputs_store_nothing(level: str, m: int, n: int) -> None:
    """M or N = 0: the programs a grid of one still runs store nothing (every
    store is out of bounds) and no role waits forever."""
    args = _epilogue_args(m, n, 64)
    module = tawa_xdsl.parse(EPILOGUE)
    if level == "lowered":
        module = tawa_xdsl.apply(module, PLANS["persistent-mma2"])
    elif level == "thread":
        module = to_thread_level(module, PLANS["registers"])
    run = tawa_xdsl.interpret if level == "interpret" else tawa_xdsl.simulate
    grid = program_grid(module, "gemm_scale_bias_relu", (1, 1))
    run(module, "gemm_scale_bias_relu", *args, grid=grid)
    assert args[3].shape == (m, n)


@pytest.mark.parametrize(("bh", "sq"), [(0, 200), (2, 0)])
def test_empty_attention_stores_nothing(bh: int, sq: int) -> None:
    """Attention with no heads, or no queries: nothing is stored, no hang."""
    q = np.ones((bh, sq, 64), bfloat16)
    kv = np.ones((bh, 200, 64), bfloat16)
    o = np.full((bh, sq, 64), np.nan, bfloat16)
    module = to_thread_level(
        tawa_xdsl.parse(EXAMPLES / "attention.mlir"),
        "tawa-hopper-pipeline{persistent=false}",
    )
    tawa_xdsl.simulate(module, "attention_d64", q, kv, kv, o, 0.125, grid=(1, 1))
    assert o.size == 0


# ----------------------------------------------------------------------- one

ONE_PLANS = [
    'tawa-hopper-pipeline{{shape="M={m},N={n},K={k}"}}',
    "tawa-hopper-pipeline{{persistent=true}}",
    "tawa-hopper-pipeline{{block-m=64 tma-store=false}}",
    "split-k{{splits=2}},tawa-hopper-pipeline{{block-m=64 tuned=false}}",
    "stream-k,tawa-hopper-pipeline{{tuned=false}}",
]
"""The plans a small call can get: the dispatcher's own for the shape, a
persistent grid, 64-row tiles stored from registers, the split-K pair and the
stream-K pair (128 x 128 tiles, three programs)."""


def _rows_16_bytes(rng: np.random.Generator | None, shape: tuple[int, int]):
    """A bf16 array whose rows start 16-byte multiples apart, as the runtime's
    aligned copy (`runtime.realign`) hands a K = 1 operand to the kernel;
    NaN when no `rng` (an output)."""
    storage = np.zeros((shape[0], -(-shape[1] // 16) * 16), bfloat16)
    view = storage[:, : shape[1]]
    view[...] = np.nan if rng is None else rng.standard_normal(shape)
    return view


ONE_SHAPES = [(1, 1, 1), (1, 200, 1), (130, 1, 70)]
ONE_CASES = [(shape, plan) for shape in ONE_SHAPES for plan in ONE_PLANS]
ONE_CI = rotation(ONE_SHAPES, ONE_PLANS, 2)
"""CI's share: each shape through two plans in turn (every pair under
`--exhaustive`); the fast tier runs the dispatcher's plan at one row."""


@pytest.mark.parametrize(
    ("shape", "plan"),
    sweep(
        ONE_CASES,
        {((1, 200, 1), ONE_PLANS[0])},
        lambda c: f"{c[0]}-{c[1].split('{')[0][:12]}",
        slow=ONE_CI,
    ),
)
def test_one_row_or_column_through_every_plan(
    plan: str, shape: tuple[int, int, int]
) -> None:
    """M = N = K = 1, one row, one column: every plan at the thread level
    computes what the interpreter does."""
    m, n, k = shape
    rng = np.random.default_rng(m + n + k)
    a, b = _rows_16_bytes(rng, (m, k)), _rows_16_bytes(rng, (n, k))
    expected = np.full((m, n), np.nan, bfloat16)
    grid = (-(-m // 128), -(-n // 128))
    tawa_xdsl.interpret(tawa_xdsl.parse(GEMM), "gemm_nt", a, b, expected, grid=grid)
    c = _rows_16_bytes(None, (m, n))
    module = to_thread_level(tawa_xdsl.parse(GEMM), plan.format(m=m, n=n, k=k))
    if plan.startswith(("split", "stream")):
        slots = (
            2
            if plan.startswith("split")
            else stream_k_slots(grid[0] * grid[1], -(-k // 64), 3)
        )
        ws = np.full((slots, m, -(-n // 4) * 4), np.nan, np.float32)[:, :, :n]
        _run_pair(module, "gemm_nt", [a, b, c], ws, programs=3, run=tawa_xdsl.simulate)
    else:
        grid = program_grid(module, "gemm_nt", (-(-m // 64), -(-n // 64)))
        tawa_xdsl.simulate(module, "gemm_nt", a, b, c, grid=grid)
    assert_close(c, expected)


# ----------------------------------------------------------- the runtime side


@pytest.fixture(scope="module")
def epilogue():
    return tawa_xdsl.compile(EPILOGUE, "gemm_scale_bias_relu")


def _device_args(m: int, n: int, k: int) -> list:
    """Made-up device arrays (1 TiB apart, never dereferenced) for
    gemm_scale_bias_relu, and alpha."""
    at = itertools.count(1 << 40, 1 << 40)
    shapes = [(m, k), (n, k), (n,), (m, n)]
    return [*(gpu(s, address=next(at)) for s in shapes), ALPHA]


@pytest.mark.parametrize(("m", "n"), [(0, 136), (200, 0), (0, 0)])
def test_empty_outputs_launch_nothing(epilogue, m: int, n: int) -> None:
    """A call whose every output is empty returns at once: nothing compiled,
    nothing launched (a persistent kernel would get a grid of zero programs,
    which CUDA refuses); `bind` gives a launcher that does nothing. Without a
    GPU any launch would raise."""
    args = _device_args(m, n, 64)
    epilogue(*args)
    epilogue.bind(*args)()
    with pytest.raises(KernelArgumentError, match="grid must be 1 to 3"):
        epilogue(*args, grid=(0, 1))


def test_empty_host_output_is_left_alone(epilogue) -> None:
    """Host arrays too: an empty numpy output returns without a GPU."""
    args = _epilogue_args(0, 136, 64)
    epilogue(*args)
    assert args[3].shape == (0, 136)


def test_empty_arrays_pass_the_device_checks() -> None:
    """An empty array's strides address nothing (numpy gives (M, 0) a zero
    row pitch): the checks pass it, and TMA reads it through a stand-in map
    (`driver.standin`), not an aligned copy."""
    (p,) = (q for q in tawa_xdsl.compile(GEMM, "gemm_nt").params if q.name == "a")
    array, _ = device_array(np.zeros((256, 0), bfloat16), 0)
    check_device_array("gemm_nt", p, array)
    assert tma_problem(p, array) is None and sector_problem(p, array) is None
    view = DeviceArray(array.view, ptr=0x1001)  # unaligned, but empty
    assert tma_problem(p, view) is None
    (c,) = (q for q in tawa_xdsl.compile(GEMM, "gemm_nt").params if q.name == "c")
    odd_rows, _ = device_array(gpu((0, 685)), 0)  # a store would overrun: none
    assert tma_problem(c, odd_rows) is None


STANDINS = {False: 0x7000_0000, True: 0x7100_0000}


def test_empty_arrays_are_mapped_as_unit_extents_over_a_stand_in(
    monkeypatch, encoded_maps: list[EncodedMap]
) -> None:
    """What `cuTensorMapEncodeTiled` is given for an empty array (TMA takes no
    zero extent): unit extents, 16-byte pitches, the zeroed stand-in's
    address (a written array's own one, so its stores are never read back);
    a non-empty array keeps its own. A fake driver records the calls."""
    from tawa_xdsl.compiled import from_lowered
    from tawa_xdsl.runtime import kernel as runtime_kernel

    monkeypatch.setattr(runtime_kernel, "standin", STANDINS.__getitem__)
    lowered = tawa_xdsl.apply(
        tawa_xdsl.parse(EPILOGUE), "tawa-hopper-pipeline{tuned=false}"
    )
    compiled = runtime_kernel.Kernel(from_lowered(lowered, "gemm_bias_gelu"))
    maps = [e for e in compiled.contract.abi if e.kind == ParamKind.MAP]
    assert {compiled.params[e.arg].name for e in maps} == {"a", "b", "bias", "c"}
    shapes = {"a": (200, 0), "b": (136, 0), "bias": (0,), "c": (200, 0)}
    for e in maps:
        p = compiled.params[e.arg]
        compiled._tensor_map(device_array(gpu(shapes[p.name]), 0)[0], e.type, p)
        _, ptr, dims, strides, box = encoded_maps.pop()
        assert ptr == STANDINS[p.written], p.name
        assert dims == [1] * len(box) and all(s % 16 == 0 for s in strides)
    a = next(e for e in maps if compiled.params[e.arg].name == "a")
    compiled._tensor_map(device_array(gpu((200, 64)), 0)[0], a.type, compiled.params[0])
    assert encoded_maps.pop().dims == [64, 200]


@pytest.mark.parametrize(("m", "n", "k"), [(200, 136, 0), (0, 136, 64), (1, 1, 0)])
def test_empty_extents_are_planned_as_one(epilogue, m: int, n: int, k: int) -> None:
    """The shape rules count tiles and K iterations over positive extents: an
    empty one is planned as 1 (a rule dividing by zero tiles was a
    ZeroDivisionError), and K = 0 is never split."""
    spec = epilogue.specialize(*_device_args(m, n, k))
    assert dict(spec.plan.key.extents)["K"] >= 1
    assert spec.plan.decision.split_k <= 1 and not spec.plan.decision.stream_k


# --------------------------------------------------------------- grid limits


def test_gemm_grid_past_cuda_y_limit_is_refused() -> None:
    """N = 2^24 + 256 on 256-column tiles is 65537 programs along y: refused
    with the axis, the extent, where it comes from and the limit (it was a
    CUDA launch error)."""
    gemm = tawa_xdsl.compile(GEMM, "gemm_nt", persistent=False, swap_ab=False)
    at = itertools.count(1 << 40, 1 << 40)
    n = 2**24 + 256
    args = [gpu(s, address=next(at)) for s in [(1, 64), (n, 64), (1, n)]]
    with pytest.raises(
        KernelArgumentError,
        match=r"65537 programs along y \(.*argument 'c' dimension 1 \(N\) "
        r"16777472 over blocks of 256\); CUDA launches at most 65535; "
        r"compile\(\.\.\., persistent=True\)",
    ):
        gemm(*args)


def test_attention_heads_past_cuda_y_limit_walk_persistently() -> None:
    """Causal attention runs a plain grid, heads along y: 65536 of them (past
    CUDA's 65535; it was refused) run persistent, one program per SM walking
    the tiles along x, and explain says why; 65535 keep the plain grid (at
    4096 keys, past where the attention walk takes the grid persistent by
    itself)."""
    att = tawa_xdsl.compile(EXAMPLES / "attention.mlir", "attention_causal_d128")
    at = itertools.count(1 << 40, 1 << 40)
    for heads, walks in ((65536, True), (65535, False)):
        args = [gpu((heads, 4096, 128), address=next(at)) for _ in range(4)]
        assert att.specialize(*args, 0.125).options["persistent"] is walks
        assert ("grid limits: persistent" in att.explain(*args, 0.125)) is walks


def test_rows_past_cuda_y_limit_walk_persistently() -> None:
    """A kernel of 70000 tiles along y (tests/gpu/test_limits_gpu.py runs it)
    is planned persistent; its persistent form computes the kernel in the
    barrier simulator (on 5 tiles: the walk numbers tiles the same way)."""
    kernel = tawa_xdsl.compile(DOUBLE_TILES, "double_tiles")
    at = itertools.count(1 << 40, 1 << 40)
    args = [gpu((70000 * 64, 64), address=next(at)) for _ in range(2)]
    assert kernel.specialize(*args).options["persistent"] is True
    given = [gpu((70000 * 64, 64), address=next(at)) for _ in range(2)]
    plain = tawa_xdsl.compile(DOUBLE_TILES, "double_tiles", persistent=False)
    with pytest.raises(KernelArgumentError, match="70000 programs along y"):
        plain(*given)  # the caller's persistent=False stands
    lowered = tawa_xdsl.apply(
        tawa_xdsl.parse(DOUBLE_TILES), "tawa-hopper-pipeline{persistent=true}"
    )
    x = np.random.default_rng(0).standard_normal((5 * 64, 64)).astype(bfloat16)
    out = np.full_like(x, np.nan)
    tawa_xdsl.simulate(lowered, "double_tiles", x, out, grid=(2,))
    np.testing.assert_array_equal(out, (2 * x.astype(np.float32)).astype(bfloat16))


def test_given_grid_past_cuda_z_limit_is_refused(epilogue) -> None:
    args = _device_args(200, 136, 64)
    with pytest.raises(
        KernelArgumentError,
        match=r"65536 programs along z \(the grid given\); CUDA launches at most "
        "65535",
    ):
        epilogue(*args, grid=(2, 2, 65536))


# ------------------------------------------------------ loops at the bound


@pytest.mark.parametrize(
    ("lb", "ub", "step", "trips"),
    [
        (2**31 - 100, 2**31 - 1, 64, 2),  # the second step passes 2^31 - 1
        (2**31 - 65, 2**31 - 1, 64, 1),
        (0, 2**31 - 1, 2**30, 2),
        (-5, 3, 4, 2),
    ],
)
def test_loop_counter_saturates_at_the_bound(lb, ub, step, trips) -> None:
    """A `ptx.for` whose bound is within a step of 2^31 - 1 (a K loop at K =
    2^31 - 1) ends: the counter saturates (`add.sat.s32`) where a wrapping
    add turned it negative, below the bound, and the loop ran on for ever
    (a GPU hang; the simulator looped as long). Counts each lane's trips."""
    k = PtxKernel()
    with k.for_(
        k.alu("mov.u32", k.imm(lb)),
        k.alu("mov.u32", k.imm(ub)),
        k.imm(step),
        [k.alu("mov.b32", k.imm(0))],
    ) as loop:
        loop.yields.append(k.alu("add.u32", loop.carried[0], k.imm(1)))
    store(k, lane_address(k, "p_out", 4), k.last.res[0])
    out = np.zeros(128, np.uint32)
    k.run({"p_out": Pointer(out, "out")})
    assert (out == trips).all()
    lowered = apply_passes(k.module(), "ptx-allocate,ptx-lower-control-flow")
    assert [
        op.opcode.data
        for op in lowered.walk()
        if isinstance(op, ptx.AluOp) and op.opcode.data.startswith("add.sat")
    ] == ["add.sat.s32"]


def test_add_sat_s32_clamps() -> None:
    a = np.array([2**31 - 10, 5, (-(2**31) + 3) & 0xFFFFFFFF], np.uint32)
    b = np.array([64, 7, (-9) & 0xFFFFFFFF], np.uint32)
    got = ALU["add.sat.s32"](a, b).view(np.int32)
    assert got.tolist() == [2**31 - 1, 12, -(2**31)]


DOUBLED_IV = """\
func.func @doubled_iv(%o: !tile.desc<?xf32, box = [64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %ub = arith.constant 2147483647 : index
  %step = arith.constant 1073741824 : index
  %zero = arith.constant 0.000000e+00 : f32
  %s = scf.for %i = %c0 to %ub step %step iter_args(%a = %zero) -> (f32) {
    %d = arith.addi %i, %i : index
    %di = arith.index_cast %d : index to i64
    %f = arith.sitofp %di : i64 to f32
    %n = arith.addf %a, %f : f32
    scf.yield %n : f32
  }
  %t = tile.splat %s : f32 -> tensor<64xf32>
  tile.store %t, %o[%c0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}
"""


def test_index_arithmetic_wraps_at_32_bits_in_the_interpreter() -> None:
    """`index` is 32-bit signed on the GPU (`target.INDEX_BITS`): i + i at
    i = 2^30 (the loop's second trip, 0 to 2^31 - 1 by 2^30) is -2^31 there
    and in the thread simulator, so the sum of 2i over the trips is -2^31.
    The interpreter, the oracle, computed +2^31 with Python ints."""
    expected = np.full(64, -(2.0**31), np.float32)
    out = np.zeros(64, np.float32)
    tawa_xdsl.interpret(tawa_xdsl.parse(DOUBLED_IV), "doubled_iv", out, grid=(1,))
    np.testing.assert_array_equal(out, expected)
    lowered = to_thread_level(tawa_xdsl.parse(DOUBLED_IV), "tawa-hopper-pipeline")
    out[:] = 0
    tawa_xdsl.simulate(lowered, "doubled_iv", out, grid=(1,))
    np.testing.assert_array_equal(out, expected)


# ------------------------------------------ split-K slices in 32-bit indices

WRAPPING = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.DivUIOp: lambda a, b: a // b,
    arith.RemUIOp: lambda a, b: a % b,
    arith.CeilDivSIOp: lambda a, b: -(-a // b),
    arith.MaxSIOp: max,
}


def _in_32_bits(value: SSAValue, leaves: dict[type, int]) -> int:
    """`value` computed as the GPU does, every result wrapped to 32 bits (the
    width of `index` there); `leaves` gives program ids and tensor extents."""
    op = value.owner
    if type(op) in leaves:
        return leaves[type(op)]
    if isinstance(op, arith.ConstantOp):
        return op.value.value.data
    if isinstance(op, arith.IndexCastOp):
        return _in_32_bits(op.input, leaves)
    args = [_in_32_bits(v, leaves) for v in op.operands]
    return WRAPPING[type(op)](*args) % 2**32


@pytest.mark.parametrize(("k", "splits"), [(2**29, 1000), (2**31 - 64, 132)])
def test_split_k_slices_do_not_wrap(k: int, splits: int) -> None:
    """Slice s of S runs K iterations [s T / S, (s + 1) T / S): computed as
    s * T in 32-bit indices it wrapped (T = 2^23 iterations split 1000 ways),
    and slices overlapped or went missing, a silently wrong sum."""
    module = tawa_xdsl.apply(tawa_xdsl.parse(GEMM), f"split-k{{splits={splits}}}")
    partials = next(
        op
        for op in module.walk()
        if getattr(op, "sym_name", None) and op.sym_name.data == "gemm_nt_split_k"
    )
    bounds = {
        r.name_hint: r
        for op in partials.walk()
        for r in op.results
        if r.name_hint in ("slice_begin", "slice_end")
    }
    trips = -(-k // 64)
    for s in (0, 1, splits // 2, splits - 1):
        leaves = {tile.ProgramIdOp: s, tile.DimOp: k}
        got = [_in_32_bits(bounds[n], leaves) for n in ("slice_begin", "slice_end")]
        assert got == [s * trips // splits, (s + 1) * trips // splits], s


def _on_the_gpu(value: SSAValue, leaves: dict[str, int]) -> int:
    """A scalar thread-level value as the GPU computes it (`ptx_alu.ALU`, 32-bit
    registers); `leaves` gives parameters and special registers by name."""
    op = value.owner
    if isinstance(op, ptx.ParamOp):
        return leaves[op.param.data]
    if isinstance(op, ptx.SpecialOp):
        return leaves[op.register.data]
    if isinstance(op, ptx.ImmOp):
        return op.value.value.data
    assert isinstance(op, ptx.AluOp), op.name
    args = [
        np.array([_on_the_gpu(v, leaves) & 0xFFFFFFFF], np.uint32) for v in op.operands
    ]
    return int(ALU[op.opcode.data](*args)[0])


@pytest.mark.parametrize(("k", "splits"), [(2**31 - 1, 132), (2**31 - 64, 7)])
def test_split_k_loops_at_the_thread_level_cover_k_once(k: int, splits: int) -> None:
    """The K loops of the split-K partials kernel as the GPU bounds them (the
    lowered arithmetic, 32-bit registers), at K within a step of 2^31: the
    slices run every iteration once. ceil(K / 64) as (K + 63) >> 6 wrapped
    negative there (no iterations: a silently zero sum), as did s * T."""
    module = to_thread_level(
        tawa_xdsl.parse(GEMM),
        f"split-k{{splits={splits}}},tawa-hopper-pipeline{{tuned=false}}",
    )
    partials = next(op for op in module.ops if op.sym_name.data == "gemm_nt_split_k")
    loops = [op for op in partials.walk() if isinstance(op, ptx.ForOp)]
    assert len(loops) == 2  # the producer's and the consumers'
    trips = -(-k // 64)
    for loop in loops:
        covered = 0
        for s in range(splits):
            leaves = {"p_a_dim1": k, "%ctaid.z": s}
            lb, ub = (
                np.int32(np.uint32(_on_the_gpu(v, leaves))) for v in (loop.lb, loop.ub)
            )
            assert lb == 64 * (s * trips // splits), s
            covered += max(0, -(-(int(ub) - int(lb)) // 64))
        assert covered == trips


def test_stream_k_programs_keep_unit_products_in_32_bits() -> None:
    """The stream-K kernel computes program * units (its share of the units of
    work) in 32-bit indices: where 132 programs would wrap it (8192 x 8192 x
    2^20: thousands of tiles of 16384 iterations), fewer run; past 2^31 - 1 units the
    call is refused by name."""
    gemm = tawa_xdsl.compile(GEMM, "gemm_nt", stream_k=True)
    spec = gemm.specialize(*_gemm_device_args(256, 256, 8192))
    assert spec.plan.decision.stream_k
    small = gemm.stream_k_launch(spec.kernel, {"M": 256, "N": 256, "K": 8192})
    assert small[1] > 1
    extents = {"M": 8192, "N": 8192, "K": 2**20}
    bm, bn = (spec.kernel.options[o] or 128 for o in ("block_m", "block_n"))
    units = -(-8192 // bm) * -(-8192 // bn) * 2**20 // 64  # K steps of 64
    _, programs = gemm.stream_k_launch(spec.kernel, extents)
    assert 132 * units > 2**31 and 1 <= programs * units <= 2**31 - 1
    with pytest.raises(KernelArgumentError, match=r"units of work.*stream_k=False"):
        gemm.stream_k_launch(spec.kernel, {"M": 2**20, "N": 8192, "K": 2**20})


def _gemm_device_args(m: int, n: int, k: int) -> list:
    at = itertools.count(1 << 40, 1 << 40)
    return [gpu(s, address=next(at)) for s in [(m, k), (n, k), (m, n)]]


# ------------------------------------------------- 64-bit global addresses


def _defs(value: SSAValue) -> Iterator[Operation]:
    """The ops `value` is computed from, through operands (a block argument,
    a loop's carried value, ends the walk)."""
    seen: set[int] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        op = v.owner
        if not isinstance(op, Operation) or id(op) in seen:
            continue
        seen.add(id(op))
        yield op
        todo.extend(op.operands)


def _pitch(value: SSAValue) -> bool:
    """Whether `value` is a tensor's row pitch (a `_stride` parameter)."""
    op = value.owner
    return isinstance(op, ptx.ParamOp) and "_stride" in op.param.data


def _global_addresses(module: ModuleOp) -> list[tuple[Operation, SSAValue]]:
    return [
        (op, op.operands[0])
        for op in module.walk()
        if isinstance(op, ptx.LoadOp | ptx.StoreOp) and op.space.data == "global"
    ]


def pitch_products_in_32_bits(module: ModuleOp) -> list[str]:
    """Ops that multiply a row pitch in 32 bits on the way to a global
    address (row * pitch wraps past 2^32 bytes; `mad.wide` / `mul.wide` and
    64-bit arithmetic do not); an empty list when there are none."""
    bad = []
    for mem, address in _global_addresses(module):
        for op in _defs(address):
            if (
                isinstance(op, ptx.AluOp)
                and any(_pitch(v) for v in op.operands)
                and ".wide." not in op.opcode.data
                and ptx.register_class(op.result) != "b64"
            ):
                bad.append(f"{op.opcode.data} feeds {mem.name}")
    return bad


REGISTER_STORES = [
    (EPILOGUE, "tawa-hopper-pipeline{tma-store=false}"),
    (GEMM, "tawa-hopper-pipeline{tma-store=false block-m=64}"),
    (EXAMPLES / "attention.mlir", "tawa-hopper-pipeline{tma-store=false}"),
    (KERNELS / "gemm_batched.mlir", "tawa-hopper-pipeline{tma-store=false}"),
    (KERNELS / "row_vectors.mlir", "tawa-hopper-pipeline"),
]


@pytest.mark.parametrize(
    ("path", "pipeline"), REGISTER_STORES, ids=lambda x: str(x)[-30:]
)
def test_global_addresses_scale_pitches_in_64_bits(path, pipeline: str) -> None:
    """Every global load and store the thread level makes multiplies row
    pitches with a widening multiply: a bf16 output of more than 2^31
    elements (2^20 x 4096) stored from registers lands at its own address."""
    module = to_thread_level(tawa_xdsl.parse(path), pipeline)
    addresses = _global_addresses(module)
    assert addresses, "the pipeline stores from registers"
    assert any(
        _pitch(v) for _, a in addresses for op in _defs(a) for v in op.operands
    ), "some address is scaled by a pitch"
    assert pitch_products_in_32_bits(module) == []


def _rows_in_32_bits(ops, s):
    """`memory._rows` as it must not be: row * pitch in 32 bits, widened
    after the product wrapped."""
    row = ops.alu("add.s32", s.row0, ops.imm(s.row_offsets, "b32"))
    inside = ops.alu("setp.lt.u32", row, s.dims[-2])
    inside = ops.alu("and.pred", inside, s.ok)
    product = ops.alu("mul.lo.u32", row, s.strides[-1])
    wide = ops.alu("cvt.u64.u32", product)
    return inside, ops.alu("add.s64", wide, s.offset)


def test_32_bit_pitch_products_are_found(monkeypatch) -> None:
    """The audit above can fail: with the register stores' row addresses
    computed in 32 bits, it names the multiply."""
    monkeypatch.setattr(memory, "_rows", _rows_in_32_bits)
    module = to_thread_level(
        tawa_xdsl.parse(GEMM), "tawa-hopper-pipeline{tma-store=false}"
    )
    bad = pitch_products_in_32_bits(module)
    assert bad and all(b.startswith("mul.lo.u32 feeds") for b in bad)


def test_explain_of_empty_outputs_says_nothing_is_launched(epilogue) -> None:
    """explain() of a call whose every output is empty, by arrays, by extents
    or after the call, says nothing runs (it described a grid and tiles), the
    options are none, and for_shape has no specialization to give."""
    args = _device_args(0, 136, 64)
    epilogue(*args)
    for text in (
        epilogue.explain(*args),
        epilogue.explain(M=0, N=136, K=64),
        epilogue.explain(),
    ):
        assert "nothing is launched: every output is empty (c " in text, text
        assert "block_m" not in text and "wave" not in text
    assert epilogue.options == {}
    with pytest.raises(KernelArgumentError, match="launches nothing"):
        epilogue.for_shape(M=0, N=136, K=64)
    with pytest.raises(KernelArgumentError, match="no dimension named Q"):
        epilogue.explain(M=0, Q=3)
    assert "nothing is launched" not in epilogue.explain(M=1, N=136, K=64)
