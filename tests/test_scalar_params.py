"""Scalar parameters of every type a kernel may take (i1, i64, bf16, f16
next to the f32 and i32 of the examples): the interpreter and the thread-level
simulator agree on the value the kernel computes from each, the PTX declares
and loads each with its own `.param` type and assembles, and a type no
executor can pass is refused at the kernel, naming the parameter."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType

import tawa_xdsl
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.kernel import find_kernel
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.lowering.ptx_target import kernel_ptx
from tawa_xdsl.runtime.kernel import scalar_ctype

from .thread_level import simulate_output, to_thread_level

T = "tensor<64x128xf32>"
DESC = "!tile.desc<?x?xf32, box = [64, 128]>"


def scalar_kernel(t: str, to_f32: str) -> str:
    """o = x + f(a), f32 tiles; `to_f32` makes the f32 `%v` of the scalar `%a`
    of type `t`."""
    return f"""
func.func @s(%o: {DESC}, %x: {DESC}, %a: {t}) attributes {{tile.kernel}} {{
  %c0 = arith.constant 0 : index
{to_f32}
  %t = tile.splat %v : f32 -> {T}
  %l = tile.load %x[%c0, %c0] : {DESC} -> {T}
  %r = arith.addf %l, %t : {T}
  tile.store %r, %o[%c0, %c0] : {T} -> {DESC}
  func.return
}}"""


SCALARS = {
    # type: (how it becomes f32, the value passed, what the kernel adds)
    "bf16": (
        "  %v = arith.extf %a : bf16 to f32",
        ml_dtypes.bfloat16(-1.5078125),
        -1.5078125,
    ),
    "f16": ("  %v = arith.extf %a : f16 to f32", np.float16(1000.5), 1000.5),
    "i64": (  # beyond 32 bits: the high word matters
        "  %v = arith.sitofp %a : i64 to f32",
        -(2**40) - 2**33,
        float(np.float32(-(2**40) - 2**33)),
    ),
    "i64-index": (  # index_cast takes the low word, signed
        "  %i = arith.index_cast %a : i64 to index\n"
        "  %j = arith.index_cast %i : index to i32\n"
        "  %v = arith.sitofp %j : i32 to f32",
        -7,
        -7.0,
    ),
    "i1": (
        "  %one = arith.constant 1.0 : f32\n"
        "  %zero = arith.constant 0.0 : f32\n"
        "  %v = arith.select %a, %one, %zero : f32",
        True,
        1.0,
    ),
}


def _type(case: str) -> str:
    return case.split("-")[0]


def _args(value) -> list:
    x = np.arange(64 * 128, dtype=np.float32).reshape(64, 128) / 64
    return [np.full((64, 128), np.nan, np.float32), x, value]


@pytest.mark.parametrize("case", sorted(SCALARS))
def test_scalar_parameter_reaches_the_thread_level(case: str) -> None:
    to_f32, value, added = SCALARS[case]
    source = scalar_kernel(_type(case), to_f32)
    args = _args(value)
    expected = args[1] + np.float32(added)
    tawa_xdsl.interpret(tawa_xdsl.parse(source), "s", *args)
    np.testing.assert_array_equal(args[0], expected)
    module = to_thread_level(tawa_xdsl.parse(source), "tawa-hopper-pipeline")
    got = simulate_output(module, "s", _args(value), 0, (1,))
    np.testing.assert_array_equal(got, expected)


PARAM_TYPES = {"bf16": "b16", "f16": "b16", "i64": "u64", "i1": "u32"}


@pytest.mark.parametrize("t", sorted(PARAM_TYPES))
def test_scalar_parameter_has_its_param_type_and_assembles(t: str) -> None:
    to_f32 = SCALARS[t][0]
    module = tawa_xdsl.apply(
        tawa_xdsl.parse(scalar_kernel(t, to_f32)), "tawa-hopper-pipeline"
    )
    text = kernel_ptx(find_kernel(tawa_xdsl.apply(module, "distribute-fragments"), "s"))
    ptx_type = PARAM_TYPES[t]
    assert re.search(rf"\.param \.{ptx_type} p_a\b", text), text[:2000]
    assert re.search(rf"ld\.param\.{ptx_type} %\w+, \[p_a\]", text)
    result = assemble(text)
    assert result.ok, result.log[-3000:]


def test_an_fp8_scalar_is_refused_by_name() -> None:
    """No executor passes an 8-bit float scalar: the refusal names the
    parameter and its index at the kernel."""
    source = scalar_kernel("f8E4M3FN", "  %v = arith.extf %a : f8E4M3FN to f32")
    module = tawa_xdsl.apply(tawa_xdsl.parse(source), "tawa-hopper-pipeline")
    with pytest.raises(OpDiagnostic, match=r"parameter 2 \('a'\) has type f8E4M3FN"):
        tawa_xdsl.apply(module, "distribute-fragments")


def test_arithmetic_on_an_i64_scalar_is_refused_where_written() -> None:
    source = scalar_kernel(
        "i64",
        "  %b = arith.addi %a, %a : i64\n  %v = arith.sitofp %b : i64 to f32",
    )
    module = tawa_xdsl.apply(tawa_xdsl.parse(source), "tawa-hopper-pipeline")
    with pytest.raises(OpDiagnostic, match=r"arith.addi on i64 values has no thread"):
        tawa_xdsl.apply(module, "distribute-fragments")


@pytest.mark.parametrize(
    ("t", "value", "packed"),
    [
        (BFloat16Type(), ml_dtypes.bfloat16(-1.5078125), b"\xc1\xbf"),
        (Float16Type(), np.float16(1000.5), np.float16(1000.5).tobytes()),
        (IntegerType(64), np.int64(-(2**40)), np.int64(-(2**40)).tobytes()),
        (IntegerType(1), True, b"\x01\x00\x00\x00"),
        (Float32Type(), np.float32(0.75), np.float32(0.75).tobytes()),
    ],
    ids=str,
)
def test_the_runtime_packs_a_scalar_as_its_param_holds_it(t, value, packed) -> None:
    """The bytes cuLaunchKernel reads for each `.param`: 2 for `.b16`, 8 for
    `.u64` (a 32-bit int would leave the high word to chance)."""
    assert bytes(scalar_ctype(t, value)) == packed
