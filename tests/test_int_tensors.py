"""Integer tensors in and out of kernels (`tests/kernels/int_tensors.mlir`): a
cross-entropy whose targets are an i32 vector, a row argmax / maximum / count
above a threshold stored as i32 vectors, i32 arithmetic on 2-D tiles, an i32
mask beside f32 data, wrapping i32 row sums, the argmax of f32 logits, an
accuracy reading int8 labels and writing int64 indices, and 2-D i8 and i64
tiles through tile.extsi / tile.trunci. The interpreter computes numpy's
answer; lowered through the Hopper pipeline, the thread level computes the
interpreter's (bit for bit in the integers), allocated too; a wrong dtype is
refused naming the argument; the runtime builds INT32, INT64 and UINT8 (i8)
tensor maps (the GPU run is tests/gpu/test_int_tensors_gpu.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import tawa_xdsl
from tawa_xdsl.api import parse_kernel
from tawa_xdsl.compiled import from_lowered
from tawa_xdsl.dialects.nvgpu_async import ParamKind
from tawa_xdsl.interp.ptx_alu import ALU
from tawa_xdsl.interp.reference import make_interpreter
from tawa_xdsl.kernel import KernelArgumentError, find_kernel
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.lowering.ptx_target import kernel_ptx
from tawa_xdsl.runtime.arrays import device_array

from .conftest import EncodedMap
from .test_contracts_dlpack import Producer
from .thread_level import assert_close, to_thread_level

FILE = Path(__file__).parent / "kernels" / "int_tensors.mlir"
I8, I32, I64 = np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.int64)
F32 = np.dtype(np.float32)
POISON = {I8: -99, I32: -12345, I64: -(2**40), F32: np.nan}
"""What an output holds before a run: a value no kernel here stores."""


def _wrap(x: np.ndarray) -> np.ndarray:
    """int64 values wrapped to i32 (two's complement), as i32 arithmetic does."""
    return x.astype(np.int64).astype(np.uint32).view(np.int32)


def _xent(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    top = x.max(1, keepdims=True)
    lse = top[:, 0] + np.log(np.exp(x - top).sum(1))
    rows = np.arange(len(t))
    return np.where(t < 0, 0.0, lse - x[rows, np.maximum(t, 0)])


def _argmax_count(x: np.ndarray, thr: int) -> list[np.ndarray]:
    return [x.argmax(1), x.max(1), (x > thr).sum(1)]


def _accuracy(x: np.ndarray, label: np.ndarray) -> list[np.ndarray]:
    idx = x.argmax(1)
    return [idx.astype(np.int64), (idx == label).astype(np.int32)]


def _mix(x8: np.ndarray, x64: np.ndarray, k: int) -> list[np.ndarray]:
    """i8 and i64 through i32: extsi sign-extends, trunci keeps the low bits."""
    a, b = x8.astype(np.int64), _wrap(x64).astype(np.int64)
    return [(a * k + b).astype(np.int8), _wrap(a - b).astype(np.int64)]


def _affine(x: np.ndarray, k: int) -> np.ndarray:
    i, j = np.indices(x.shape)
    return _wrap(x.astype(np.int64) * k + (i - j))


@dataclass(frozen=True)
class Run:
    """A kernel of `int_tensors.mlir`: its arguments (outputs as zeros of their
    shape and dtype), grid and numpy reference of each output."""

    args: Callable[[np.random.Generator], list[Any]]
    outputs: tuple[int, ...]
    grid: tuple[int, ...]
    reference: Callable[..., list[np.ndarray]]

    def arrays(self, seed: int) -> list[Any]:
        return self.args(np.random.default_rng(seed))


def _targets(rng: np.random.Generator, m: int, classes: int) -> np.ndarray:
    """Class indices below `classes`, every seventh row ignored (-100)."""
    t = rng.integers(0, classes, m).astype(np.int32)
    t[::7] = -100
    return t


def _ints(rng: np.random.Generator, shape, low: int, high: int) -> np.ndarray:
    return rng.integers(low, high, shape, endpoint=True).astype(np.int32)


def _accuracy_args(rng: np.random.Generator, m: int, v: int) -> list[Any]:
    """Logits on a grid of quarters (ties: the first column wins), i8 labels:
    the argmax in two rows of three, else any class or a negative one."""
    x = np.round(4 * rng.standard_normal((m, v))).astype(F32) / 4
    label = np.where(
        rng.random(m) < 2 / 3, x.argmax(1), rng.integers(-128, v, m)
    ).astype(I8)
    return [x, label, np.zeros(m, I64), np.zeros(m, I32)]


FULL = (-(2**31), 2**31 - 1)
RUNS = {
    "xent_i32": Run(
        lambda r: [
            r.standard_normal((100, 150)).astype(F32),
            _targets(r, 100, 150),
            np.zeros(100, F32),
        ],
        (2,),
        (2,),
        lambda x, t, loss: [_xent(x, t)],
    ),
    # values from a small range: ties, whose first column argmax takes
    "argmax_count_i32": Run(
        lambda r: (
            [_ints(r, (100, 150), -40, 40), np.int32(20)]
            + [np.zeros(100, I32) for _ in range(3)]
        ),
        (2, 3, 4),
        (2,),
        lambda x, thr, *_: _argmax_count(x, int(thr)),
    ),
    "affine_i32": Run(
        lambda r: [_ints(r, (100, 70), *FULL), np.int32(-7), np.zeros((100, 70), I32)],
        (2,),
        (2, 3),
        lambda x, k, y: [_affine(x, int(k))],
    ),
    "masked_fill": Run(
        lambda r: [
            r.standard_normal((100, 70)).astype(F32),
            _ints(r, (100, 70), -1, 1),
            np.float32(-1.5),
            np.zeros((100, 70), F32),
        ],
        (3,),
        (2, 3),
        lambda x, mask, fill, y: [np.where(mask != 0, x, fill)],
    ),
    # logits on a grid of quarters: ties, whose first column argmax takes
    "argmax_f32": Run(
        lambda r: [
            np.round(4 * r.standard_normal((100, 150))).astype(F32) / 4,
            np.zeros(100, I32),
        ],
        (1,),
        (2,),
        lambda x, idx: [x.argmax(1)],
    ),
    # labels of either sign, most of them the row's argmax
    "accuracy_i8": Run(
        lambda r: _accuracy_args(r, 100, 90),
        (2, 3),
        (2,),
        lambda x, label, idx, hit: _accuracy(x, label),
    ),
    "mix_i8_i64": Run(
        lambda r: [
            r.integers(-128, 127, (100, 70), endpoint=True).astype(I8),
            r.integers(-(2**63), 2**63 - 1, (100, 70), endpoint=True).astype(I64),
            np.int32(37),
            np.zeros((100, 70), I8),
            np.zeros((100, 70), I64),
        ],
        (3, 4),
        (2, 3),
        lambda x8, x64, k, *_: _mix(x8, x64, int(k)),
    ),
    "affine_i8": Run(
        lambda r: [
            r.integers(-128, 127, (100, 300), endpoint=True).astype(I8),
            np.int32(-7),
            np.zeros((100, 300), I8),
        ],
        (2,),
        (2, 3),
        lambda x, k, y: [_affine(x, int(k)).astype(I8)],
    ),
    "row_sum_i32": Run(
        lambda r: [_ints(r, (100, 150), *FULL), np.zeros(100, I32)],
        (1,),
        (2,),
        lambda x, s: [_wrap(x.astype(np.int64).sum(1))],
    ),
}


def _module(kernel: str):
    return parse_kernel(FILE.read_text(), kernel, str(FILE))


def _poisoned(run: Run, args: list[Any]) -> list[Any]:
    """The arguments with every output filled with its POISON."""
    done = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    for out in run.outputs:
        done[out][...] = POISON[done[out].dtype]
    return done


def _interpreted(kernel: str, seed: int) -> tuple[list[Any], list[Any]]:
    run = RUNS[kernel]
    args = run.arrays(seed)
    done = _poisoned(run, args)
    tawa_xdsl.interpret(_module(kernel), kernel, *done, grid=run.grid)
    return args, done


@pytest.mark.parametrize("kernel", sorted(RUNS))
def test_the_interpreter_computes_numpys_answer(kernel: str) -> None:
    run = RUNS[kernel]
    args, done = _interpreted(kernel, seed=3)
    for out, expected in zip(run.outputs, run.reference(*args), strict=True):
        assert done[out].dtype == args[out].dtype
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(done[out], expected, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(done[out], expected)


@pytest.mark.parametrize(
    ("kernel", "config"),
    [(k, "") for k in sorted(RUNS)]
    + [(k, "tma-store=false") for k in ("argmax_count_i32", "mix_i8_i64")],
    ids=lambda c: c or "tuned",
)
def test_the_thread_level_computes_what_the_interpreter_does(
    kernel: str, config: str
) -> None:
    """i32 outputs bit for bit (TMA or register stores); the cross-entropy's f32
    loss to a few ulps."""
    run = RUNS[kernel]
    args, expected = _interpreted(kernel, seed=5)
    module = to_thread_level(_module(kernel), f"tawa-hopper-pipeline{{{config}}}")
    got = _poisoned(run, args)
    tawa_xdsl.simulate(module, kernel, *got, grid=run.grid, seed=1)
    for out in run.outputs:
        if got[out].dtype != F32:
            np.testing.assert_array_equal(got[out], expected[out])
        else:
            assert_close(got[out], expected[out], bits=20)


def test_i8_and_i64_registers_survive_allocation() -> None:
    """@mix_i8_i64 after `ptx-allocate`: byte loads into 32-bit registers and
    64-bit pairs in named registers, every read finding its value (the
    simulator checks that no live value was overwritten)."""
    kernel = "mix_i8_i64"
    run = RUNS[kernel]
    args, expected = _interpreted(kernel, seed=7)
    module = to_thread_level(_module(kernel), "tawa-hopper-pipeline")
    tawa_xdsl.apply(module, "ptx-skip-unit-scale,ptx-allocate")
    got = _poisoned(run, args)
    tawa_xdsl.simulate(module, kernel, *got, grid=run.grid, seed=3)
    for out in run.outputs:
        np.testing.assert_array_equal(got[out], expected[out])


@pytest.mark.parametrize("kernel", ["argmax_count_i32", "mix_i8_i64"])
def test_the_barrier_simulator_computes_what_the_interpreter_does(kernel) -> None:
    """At the nvgpu_async level: i32, i8 and i64 tiles through TMA, shared
    memory and the rings as the barrier simulator models them."""
    run = RUNS[kernel]
    args, expected = _interpreted(kernel, seed=6)
    module = tawa_xdsl.apply(_module(kernel), "tawa-hopper-pipeline")
    got = _poisoned(run, args)
    tawa_xdsl.simulate(module, kernel, *got, grid=run.grid, seed=2)
    for out in run.outputs:
        np.testing.assert_array_equal(got[out], expected[out])


@pytest.mark.parametrize(
    ("kernel", "instructions"),
    [
        # i32 loads, compares, selects, max / min / sum reductions, i32 stores
        ("argmax_count_i32", {"max.s32 ", "min.s32 ", "add.s32 "}),
        # i8 stored from registers: a pair's bytes packed, one 16-bit store
        ("mix_i8_i64", {"prmt.b32 ", "st.global.u16 "}),
    ],
)
def test_the_ptx_of_integer_kernels_assembles(
    kernel: str, instructions: set[str]
) -> None:
    lowered = tawa_xdsl.apply(_module(kernel), "tawa-hopper-pipeline")
    ptx = kernel_ptx(find_kernel(lowered, kernel))
    assert all(i in ptx for i in instructions)
    result = assemble(ptx)
    assert result.ok, result.log[-3000:]
    assert result.remarks == [] and not result.spills, result.log[-3000:]


@pytest.mark.parametrize(
    ("swap", "message"),
    [
        (
            (1, np.float32),
            "xent_i32: argument 't' has dtype f32, the kernel expects i32",
        ),
        ((1, np.int64), "xent_i32: argument 't' has dtype i64, the kernel expects i32"),
        ((0, np.int32), "xent_i32: argument 'x' has dtype i32, the kernel expects f32"),
    ],
    ids=["f32-for-i32", "i64-for-i32", "i32-for-f32"],
)
def test_an_array_of_another_dtype_is_refused_by_name(swap, message) -> None:
    """By the interpreter and by a compiled kernel's call, before anything
    reaches a GPU (the simulator shares the check, `kernel.check_arguments`)."""
    check_dtype_refused("xent_i32", *swap, message)


@pytest.mark.parametrize(
    ("arg", "dtype", "given", "expected"),
    [
        (1, np.int32, "i32", "i8"),
        (1, np.uint8, "ui8", "i8"),
        (2, np.int32, "i32", "i64"),
        (3, np.int64, "i64", "i32"),
    ],
    ids=["i32-for-i8", "u8-for-i8", "i32-for-i64", "i64-for-i32"],
)
def test_i8_and_i64_arguments_take_their_dtype_only(arg, dtype, given, expected):
    """Labels of int8 and an index of int64 exactly: a wider, narrower or
    unsigned array is refused by name, both ways."""
    name = ["x", "label", "idx", "hit"][arg]
    message = (
        f"accuracy_i8: argument '{name}' has dtype {given}, the kernel expects "
        f"{expected}"
    )
    check_dtype_refused("accuracy_i8", arg, dtype, message)


def check_dtype_refused(kernel: str, arg: int, dtype: Any, message: str) -> None:
    """`kernel`'s arguments with argument `arg` of `dtype` are refused with
    `message` by the interpreter and by a compiled kernel's call."""
    args = RUNS[kernel].arrays(seed=0)
    args[arg] = args[arg].astype(dtype)
    grid = RUNS[kernel].grid
    calls = [
        lambda: tawa_xdsl.interpret(_module(kernel), kernel, *args, grid=grid),
        lambda: tawa_xdsl.compile(FILE, kernel)(*args),
    ]
    for call in calls:
        with pytest.raises(KernelArgumentError, match=re.escape(message)):
            call()


@pytest.mark.parametrize(
    ("kernel", "bits", "data_type", "shape", "box"),
    [
        ("affine_i32", 32, "INT32", (100, 72), [32, 64]),
        ("affine_i8", 8, "UINT8", (100, 304), [128, 64]),
        ("mix_i8_i64", 64, "INT64", (100, 72), [16, 64]),
    ],
    ids=["i32", "i8", "i64"],
)
def test_integer_arrays_get_tensor_maps_of_their_width(
    encoded_maps: list[EncodedMap], kernel, bits, data_type, shape, box
) -> None:
    """The runtime describes an integer array to TMA by its element size: i32
    as INT32, i64 as INT64, i8 as UINT8 (TMA moves the bytes; a signed byte
    reads back as it was), its row pitch in bytes (the driver faked: no GPU
    here)."""
    from tawa_xdsl.runtime import kernel as runtime_kernel

    lowered = tawa_xdsl.apply(_module(kernel), "tawa-hopper-pipeline")
    compiled = runtime_kernel.Kernel(from_lowered(lowered, kernel))
    maps = {compiled.params[e.arg].name: e for e in compiled.contract.abi}
    name = "x64" if bits == 64 else "x"
    x = Producer(0x1000_0000, shape, 0, bits, device=(2, 0))  # kDLInt
    array = device_array(x, 0)[0]
    compiled._tensor_map(array, maps[name].type, compiled.params[maps[name].arg])
    dtype, _, dims, strides, got_box = encoded_maps.pop()
    assert maps[name].kind == ParamKind.MAP
    assert dtype == f"CU_TENSOR_MAP_DATA_TYPE_{data_type}"
    assert dims[:2] == [shape[1], shape[0]]
    assert strides[0] == shape[1] * bits // 8
    assert got_box == box


CASTS = "\n".join(
    f"""func.func @{name}(%x: tensor<16xi{a}>) -> tensor<16xi{b}> {{
  %r = tile.{name.rstrip("0123456789_")} %x : tensor<16xi{a}> -> tensor<16xi{b}>
  func.return %r : tensor<16xi{b}>
}}"""
    for name, a, b in [
        ("extsi8_32", 8, 32),
        ("extsi32_64", 32, 64),
        ("trunci32_8", 32, 8),
        ("trunci64_32", 64, 32),
    ]
)
"""Each conversion tile.extsi and tile.trunci make, on its own."""


@pytest.fixture(scope="module")
def casts():
    return make_interpreter(tawa_xdsl.parse(CASTS))[0]


@given(x=arrays(np.int64, 16, elements=st.integers(-(2**63), 2**63 - 1)))
def test_integer_casts_sign_extend_and_keep_the_low_bits(casts, x) -> None:
    """trunci is the value modulo 2^width read signed (LLVM's trunc); extsi
    gives it back where it fits; the thread level's cvt.s32.s8 keeps the low
    byte sign-extended, as an i8 register must hold it."""
    low32 = ((x + 2**31) % 2**32 - 2**31).astype(np.int32)
    low8 = ((x + 2**7) % 2**8 - 2**7).astype(np.int8)
    (got32,) = casts.call_op("trunci64_32", (x,))
    np.testing.assert_array_equal(got32, low32)
    (got8,) = casts.call_op("trunci32_8", (low32,))
    np.testing.assert_array_equal(got8, low8)
    np.testing.assert_array_equal(casts.call_op("extsi8_32", (low8,))[0], low8)
    np.testing.assert_array_equal(casts.call_op("extsi32_64", (low32,))[0], low32)
    bits = ALU["cvt.s32.s8"](low32.view(np.uint32)[None])
    np.testing.assert_array_equal(bits[0].view(np.int32), low8)
