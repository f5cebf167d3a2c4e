"""Generated tile kernels (64 x 64 tiles: loads outside and inside loops, chains
of dots through bf16, epilogues, trip counts of 0 to 7) through the whole Hopper
pipeline with random (num-stages, mma-depth, two-stage) and `distribute-fragments`
run in the thread simulator, under random schedules of warpgroups and TMA
engine, and compute what the reference interpreter computes. The chains round
to bf16 every iteration, where a last-place difference in the f32 sums (wgmma
sums 16 products at a time, the interpreter a whole tile) may flip a rounding
that later iterations amplify: results agree to 16 bf16 units (a wrong lane,
mask or address is off by the size of the values), not bit for bit."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tawa_xdsl

from ..thread_level import assert_close, simulate_output, to_thread_level
from .programs import Loop, TileProgram, tile_programs
from .test_lowering_generated import hopper_options


def comparable(program: TileProgram) -> bool:
    """exp2 maps an absolute difference d of its argument to a relative one of
    about 0.7 d: after a chain, where the tolerance above allows differences
    of a 128th of the largest value, an element cancelled near zero may differ
    by hundreds (275 against -65 in one seed), and exp2 turns that into inf
    against 2e-20. Such programs are not comparable at any tolerance."""
    chained = any(d[0] == "chain" for loop in program.loops for d in loop.dots)
    return not (chained and "exp2" in program.epilogue)


def check(program: TileProgram, options: str, seed: int) -> None:
    args = program.make_args(seed)
    out = len(args) - 2
    tawa_xdsl.interpret(
        tawa_xdsl.parse(program.text), program.name, *args, grid=program.grid
    )
    expected = args[out].copy()
    module = to_thread_level(tawa_xdsl.parse(program.text), options)
    got = simulate_output(module, program.name, args, out, program.grid, seed)
    assert_close(got, expected, ulps=16, bits=8)


@pytest.mark.parametrize(
    "step", ["mask_columns", "leaky_relu", "add_distance", "clamp_row_max"]
)
def test_each_row_and_mask_step_runs_at_the_thread_level(step: str) -> None:
    """The epilogue steps made of iota, expand_dims, broadcast, cmpi, cmpf,
    select, sitofp and reduce, each after one GEMM-like loop (the random
    programs reach each only now and then)."""
    loop = Loop(loads=2, dots=[("0", "1", True)], trips=2)
    program = TileProgram(pre_loads=0, loops=[loop], epilogue=[step], blocks=2, tile=64)
    check(program, "tawa-hopper-pipeline{tuned=false num-stages=2}", seed=1)


@settings(max_examples=2)  # seconds per example: the fast tier samples two
@given(
    program=tile_programs(tile=64), options=hopper_options(), seed=st.integers(0, 2**16)
)
def test_generated_programs_run_at_the_thread_level(program, options, seed) -> None:
    assume(comparable(program))
    check(program, options, seed)


@pytest.mark.slow  # as many as the hypothesis profile asks for
@given(
    program=tile_programs(tile=64), options=hopper_options(), seed=st.integers(0, 2**16)
)
def test_many_generated_programs_run_at_the_thread_level(
    program, options, seed
) -> None:
    assume(comparable(program))
    check(program, options, seed)
