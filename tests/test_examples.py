"""The bundled examples round-trip through tawa-opt and survive xDSL's cleanups."""

from __future__ import annotations

import functools
import importlib.util
import subprocess
import sys
from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.kernel import kernels

from .conftest import EXAMPLE_FILES, EXAMPLES, example_module, sweep

TAWA_OPT = [sys.executable, "-m", "tawa_xdsl.tawa_opt"]


def run_opt(*args: str, stdin: str | None = None) -> str:
    result = subprocess.run(
        [*TAWA_OPT, *args], input=stdin, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_roundtrips(path) -> None:
    printed = run_opt(str(path))
    assert run_opt(stdin=printed) == printed
    generic = run_opt(str(path), "--print-op-generic")
    assert run_opt(stdin=generic) == printed
    original = tawa_xdsl.parse(path)
    assert original.is_structurally_equivalent(tawa_xdsl.parse(printed))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_cleanups_keep_kernels(path) -> None:
    module = tawa_xdsl.apply(example_module(path.name), "canonicalize,cse,dce")
    assert isinstance(module, ModuleOp)
    names = {k.sym_name.data for k in kernels(module)}
    assert names == {k.sym_name.data for k in kernels(example_module(path.name))}
    stores = [op for op in module.walk() if op.name == "tile.store"]
    assert len(stores) == len(names)


PIPELINES = [
    "aref-partition",
    "aref-partition,pipeline",
    "aref-partition,pipeline{num-stages=4 mma-depth=2}",
    "aref-partition,pipeline{num-stages=3 mma-depth=2 two-stage=true}",
]


def _random(*shape: int):
    return lambda rng: rng.standard_normal(shape).astype(bfloat16)


@dataclass(frozen=True)
class ExampleRun:
    """A kernel of an example file with inputs that are not tile multiples."""

    file: str
    inputs: tuple  # input makers, each rng -> array
    out_shape: tuple[int, ...]
    grid: tuple[int, ...]
    scalars: tuple = ()


EXAMPLE_RUNS = {
    "gemm_nt": ExampleRun(
        "gemm.mlir", (_random(200, 330), _random(300, 330)), (200, 300), (2, 3)
    ),
    "gemm_nn": ExampleRun(
        "gemm.mlir", (_random(200, 330), _random(330, 300)), (200, 300), (2, 3)
    ),
    "gemm_scale_bias_relu": ExampleRun(
        "gemm_epilogue.mlir",
        (_random(130, 70), _random(260, 70), _random(260)),
        (130, 260),
        (2, 3),
        (0.75,),
    ),
    "gemm_residual_gelu": ExampleRun(  # a 2-D epilogue operand: the residual
        "gemm_epilogue.mlir",
        (_random(130, 70), _random(260, 70), _random(260), _random(130, 260)),
        (130, 260),
        (2, 3),
        (0.75,),
    ),
    "attention_d64": ExampleRun(
        "attention.mlir", (_random(2, 300, 64),) * 3, (2, 300, 64), (3, 2), (0.125,)
    ),
    "attention_causal_d128": ExampleRun(
        "attention.mlir", (_random(2, 300, 128),) * 3, (2, 300, 128), (3, 2), (0.088,)
    ),
}


@functools.cache
def reference_run(kernel: str, seed: int) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Inputs for `kernel` drawn with `seed`, and what the reference interpreter
    computes from them. Cached per test process: the interpreter is the costly
    part of a comparison, and every pipeline of a kernel is compared with the same
    reference. The arrays are read-only, so no test can change another's."""
    run = EXAMPLE_RUNS[kernel]
    rng = np.random.default_rng(seed)
    inputs = tuple(make(rng) for make in run.inputs)
    expected = np.full(run.out_shape, np.nan, dtype=inputs[0].dtype)
    tawa_xdsl.interpret(
        example_module(run.file, kernel),
        kernel,
        *inputs,
        expected,
        *run.scalars,
        grid=run.grid,
    )
    for array in (*inputs, expected):
        array.flags.writeable = False
    return inputs, expected


WS_CASES = [(k, p) for k in sorted(EXAMPLE_RUNS) for p in PIPELINES]


@pytest.mark.parametrize(
    ("kernel", "pipeline"),
    # the fast tier: the partition alone, and with every pipeline feature
    sweep(WS_CASES, [c for c in WS_CASES if c[1] in PIPELINES[::3]], "-".join),
)
def test_warp_specialized_examples_compute_the_reference(kernel, pipeline) -> None:
    run = EXAMPLE_RUNS[kernel]
    inputs, expected = reference_run(kernel, 7)
    module = tawa_xdsl.apply(example_module(run.file, kernel), pipeline)
    for seed in range(3):
        out = np.full(run.out_shape, np.nan, dtype=bfloat16)
        tawa_xdsl.simulate(
            module, kernel, *inputs, out, *run.scalars, grid=run.grid, seed=seed
        )
        assert np.array_equal(out.view(np.uint16), expected.view(np.uint16))


def test_attention_examples_are_what_the_generator_writes() -> None:
    """The attention .mlir files come from examples/make_attention.py; a hand edit
    of one kernel would let the variants drift apart."""
    spec = importlib.util.spec_from_file_location(
        "make_attention", EXAMPLES / "make_attention.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, args in module.FILES.items():
        assert (EXAMPLES / name).read_text() == module.example(*args), name
