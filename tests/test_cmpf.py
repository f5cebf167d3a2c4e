"""Float comparisons and float-to-integer casts on tiles (`tile.cmpf`,
`tile.fptosi`, `tile.fptoui`; the kernels of tests/kernels/cmpf.mlir): a GEMM
with a leaky-ReLU epilogue, a row kernel guarding NaN, clamping and quantizing,
one answering all fourteen predicates at once, and one comparing bf16 and f16
tiles as loaded. Inputs hold NaN, infinities,
signed zeros, a subnormal and values beyond the i32 and u32 ranges. The
interpreter computes the numpy reference (the row kernels bit for bit: NaN
semantics of LLVM's `fcmp`, float-to-integer towards zero, saturating, NaN to
0, as PTX `cvt.rzi` does); the thread level, lowered through the Hopper
pipeline, computes what the interpreter does (bit for bit where no sum is
reordered); the PTX assembles."""

from __future__ import annotations

import math
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
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.interp.reference import make_interpreter
from tawa_xdsl.kernel import find_kernel
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.lowering.ptx_target import kernel_ptx

from .conftest import sweep
from .thread_level import assert_close, program_grid, to_thread_level

KERNELS = Path(__file__).parent / "kernels" / "cmpf.mlir"
F32 = np.dtype(np.float32)
I32_ENDS = [2.0**31, -(2.0**31), 3e9, -3e9]
SPECIAL = np.array(
    [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 1.5, 0.125, *I32_ENDS, 2.0**32, 3e38],
    F32,
)
"""Values where a compare or a cast to integer is easy to get wrong: NaN,
infinities, signed zeros, a subnormal, the threshold and a value exactly
representable in eighths, the ends of the i32 range and beyond those of u32."""
PREDICATES = ("oeq", "ogt", "oge", "olt", "ole", "one", "ord")
PREDICATES += ("ueq", "ugt", "uge", "ult", "ule", "une", "uno")
"""@predicates' order: bit k of its output answers PREDICATES[k]."""
THRESHOLD = 1.5


def special(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """4 N(0, 1) in f32, three elements in ten replaced by `SPECIAL` values."""
    x = (4 * rng.standard_normal(shape)).astype(F32)
    picked = rng.random(shape) < 0.3
    x[picked] = rng.choice(SPECIAL, int(picked.sum()))
    return x


def fcmp(predicate: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """LLVM `fcmp`, from numpy's comparisons (false on NaN but for !=):
    an unordered predicate is the negation of the opposite ordered one."""
    unordered = np.isnan(x) | np.isnan(y)
    with np.errstate(invalid="ignore"):
        return {
            "oeq": x == y,
            "ogt": x > y,
            "oge": x >= y,
            "olt": x < y,
            "ole": x <= y,
            "one": (x != y) & ~unordered,
            "ord": ~unordered,
            "ueq": ~((x != y) & ~unordered),
            "ugt": ~(x <= y),
            "uge": ~(x < y),
            "ult": ~(x >= y),
            "ule": ~(x > y),
            "une": x != y,
            "uno": unordered,
        }[predicate]


def rzi(x: np.ndarray, low: int, high: int) -> np.ndarray:
    """Towards zero, saturating to [low, high], NaN to 0, element by element
    (PTX `cvt.rzi`)."""

    def one(v: float) -> int:
        if math.isnan(v):
            return 0
        return low if v <= low else high if v >= high else math.trunc(v)

    return np.array([one(float(v)) for v in x.ravel()], np.int64).reshape(x.shape)


def fptosi(x: np.ndarray) -> np.ndarray:
    return rzi(x, -(2**31), 2**31 - 1).astype(np.int32)


def fptoui(x: np.ndarray) -> np.ndarray:
    """The unsigned result's bits, as the signless i32 holds them."""
    return rzi(x, 0, 2**32 - 1).astype(np.uint32).view(np.int32)


def _predicates(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> list[np.ndarray]:
    return [sum(2.0**k * fcmp(p, x, y) for k, p in enumerate(PREDICATES))]


def _rows_guard(x, y, q, u, thr) -> list[np.ndarray]:
    half = x * F32.type(0.5)  # f32 arithmetic: a subnormal's half rounds
    with np.errstate(invalid="ignore", over="ignore"):
        low = np.where(x > 0, fptosi(8 * x) / 8, half)
        guarded = np.where(np.isnan(x), 0, np.where(x >= thr, thr, low))
    with np.errstate(over="ignore"):
        eight_x = x * F32.type(8)  # inf past the f32 range, as the kernel's mulf
    return [guarded, fptosi(eight_x), fptoui(x)]


def _halves(x, y, h, g, z) -> list[np.ndarray]:
    x, y, h, g = (v.astype(F32) for v in (x, y, h, g))  # exact
    zero = np.zeros_like(x)
    bits = [fcmp("olt", x, y), fcmp("uno", x, x), fcmp("olt", zero, x)]
    bits += [fcmp("oge", h, g), fcmp("une", h, zero)]
    return [sum(2.0**k * b for k, b in enumerate(bits))]


def _half_inputs(rng: np.random.Generator) -> list[Any]:
    """bf16 and f16 pairs of the special values (past f16's range: infinities),
    half of the second operands equal to the first."""
    made = []
    for dtype in (bfloat16, np.float16):
        with np.errstate(over="ignore"):
            x = special(rng, (64, 100)).astype(dtype)
            y = np.where(rng.random(x.shape) < 0.5, x, special(rng, x.shape))
            made += [x, y.astype(dtype)]
    return made


def _gemm_leaky(a, b, c) -> list[np.ndarray]:
    acc = a.astype(np.float64) @ b.astype(np.float64).T
    return [np.where(acc > 0, acc, 0.01 * acc)]


@dataclass(frozen=True)
class Run:
    """A kernel of cmpf.mlir: its input arrays and scalars made from a seed,
    the shapes of its outputs (f32, after the input arrays, before the
    scalars), its grid and the reference of each output from all arguments."""

    inputs: Callable[[np.random.Generator], list[Any]]
    outputs: tuple[tuple[int, int], ...]
    grid: tuple[int, int]
    reference: Callable[..., list[np.ndarray]]
    exact: bool  # no sum reordered: the thread level agrees bit for bit

    def arrays(self, seed: int) -> list[Any]:
        """Inputs, then the outputs (NaN), then the scalars."""
        made = self.inputs(np.random.default_rng(seed))
        arrays = [a for a in made if isinstance(a, np.ndarray)]
        scalars = [a for a in made if not isinstance(a, np.ndarray)]
        outs = [np.full(shape, np.nan, F32) for shape in self.outputs]
        return [*arrays, *outs, *scalars]

    def output_indices(self, args: list[Any]) -> list[int]:
        first = sum(isinstance(a, np.ndarray) for a in args) - len(self.outputs)
        return list(range(first, first + len(self.outputs)))


def _predicate_inputs(rng: np.random.Generator) -> list[Any]:
    x = special(rng, (100, 130))
    y = np.where(rng.random(x.shape) < 0.5, x, special(rng, x.shape))  # ties too
    return [x, y.astype(F32)]


RUNS = {
    "predicates": Run(_predicate_inputs, ((100, 130),), (2, 3), _predicates, True),
    "rows_guard": Run(
        lambda rng: [special(rng, (100, 130)), THRESHOLD],
        ((100, 130),) * 3,
        (2, 3),
        _rows_guard,
        True,
    ),
    "halves": Run(_half_inputs, ((64, 100),), (1, 2), _halves, True),
    "gemm_leaky": Run(
        lambda rng: [
            (0.5 * rng.standard_normal((200, 72))).astype(bfloat16),
            (0.5 * rng.standard_normal((100, 72))).astype(bfloat16),
        ],
        ((200, 100),),
        (2, 2),
        _gemm_leaky,
        False,
    ),
}


def _module(kernel: str):
    return parse_kernel(KERNELS.read_text(), kernel, str(KERNELS))


def _interpreted(kernel: str, seed: int) -> tuple[list[Any], list[Any]]:
    """The arguments of `seed`, and the same after the interpreter ran."""
    run = RUNS[kernel]
    args = run.arrays(seed)
    done = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    tawa_xdsl.interpret(_module(kernel), kernel, *done, grid=run.grid)
    return args, done


@pytest.mark.parametrize("kernel", sorted(RUNS))
def test_the_interpreter_computes_the_reference(kernel: str) -> None:
    run = RUNS[kernel]
    args, done = _interpreted(kernel, seed=3)
    expected = run.reference(*args)
    for out, want in zip(run.output_indices(args), expected, strict=True):
        if run.exact:
            np.testing.assert_array_equal(done[out], want.astype(F32))
        else:
            assert np.abs(done[out] - want).max() <= 1e-5 * np.abs(want).max()


@pytest.mark.parametrize("kernel", sorted(RUNS))
def test_the_thread_level_computes_what_the_interpreter_does(kernel: str) -> None:
    run = RUNS[kernel]
    args, expected = _interpreted(kernel, seed=5)
    outs = run.output_indices(args)
    module = to_thread_level(_module(kernel), "tawa-hopper-pipeline")
    got = [np.full_like(a, np.nan) if i in outs else a for i, a in enumerate(args)]
    grid = program_grid(module, kernel, run.grid)
    tawa_xdsl.simulate(module, kernel, *got, grid=grid, seed=1)
    for out in outs:
        if run.exact:
            np.testing.assert_array_equal(got[out], expected[out])
        else:  # f32 sums in another order: a few f32 ulps
            assert_close(got[out], expected[out], bits=20)


@pytest.mark.parametrize(
    ("kernel",), sweep([(k,) for k in RUNS], set(), lambda c: c[0])
)
def test_the_ptx_assembles(kernel: str) -> None:
    lowered = tawa_xdsl.apply(_module(kernel), "tawa-hopper-pipeline")
    result = assemble(kernel_ptx(find_kernel(lowered, kernel)))
    assert result.ok, result.log[-3000:]
    assert result.remarks == [] and not result.spills, result.log[-3000:]


V = "tensor<16xf32>"
FLOATS = {"f32": F32, "bf16": bfloat16, "f16": np.dtype(np.float16)}
ELEMENTWISE = "\n".join(
    [
        f"""func.func @{p}_{t}(%x: tensor<16x{t}>, %y: tensor<16x{t}>) -> tensor<16xi1> {{
  %r = tile.cmpf {p}, %x, %y : tensor<16x{t}> -> tensor<16xi1>
  func.return %r : tensor<16xi1>
}}"""
        for p in PREDICATES
        for t in FLOATS
    ]
    + [
        f"""func.func @{cast}(%x: {V}) -> tensor<16xi32> {{
  %r = tile.{cast} %x : {V} -> tensor<16xi32>
  func.return %r : tensor<16xi32>
}}"""
        for cast in ("fptosi", "fptoui")
    ]
)
"""Each predicate and each cast on its own, on 16-element tiles."""
floats = arrays(
    np.float32,
    16,
    elements=st.one_of(
        st.floats(width=32), st.sampled_from([float(v) for v in SPECIAL])
    ),
)
"""Any f32 (NaN, infinities, subnormals, the range's ends), the special values
often."""


@pytest.fixture(scope="module")
def elementwise():
    return make_interpreter(tawa_xdsl.parse(ELEMENTWISE))[0]


@given(
    x=floats,
    y=floats,
    predicate=st.sampled_from(PREDICATES),
    t=st.sampled_from(sorted(FLOATS)),
)
def test_tile_cmpf_is_llvm_fcmp(elementwise, x, y, predicate, t) -> None:
    """On f32, bf16 and f16 tiles (the 16-bit ones rounded from f32: past
    f16's range infinities, NaN stays NaN)."""
    y = np.where(np.arange(16) % 3 == 0, x, y)  # equal operands too
    with np.errstate(over="ignore"):
        x, y = x.astype(FLOATS[t]), y.astype(FLOATS[t])
    (got,) = elementwise.call_op(f"{predicate}_{t}", (x, y))
    np.testing.assert_array_equal(got, fcmp(predicate, x.astype(F32), y.astype(F32)))


@given(x=floats, cast=st.sampled_from(["fptosi", "fptoui"]))
def test_float_to_int_is_ptx_cvt_rzi(elementwise, x, cast) -> None:
    (got,) = elementwise.call_op(cast, (x,))
    np.testing.assert_array_equal(got, {"fptosi": fptosi, "fptoui": fptoui}[cast](x))
