"""Generated kernels (64 x 64 tiles, so wgmma can take them; bf16, or e4m3
for a third of them) through the whole
Hopper pipeline with random (num-stages, mma-depth, two-stage): the barrier
simulator, under random schedules of producer, consumer and TMA engine, computes
exactly what the reference interpreter computes, and the PTX assembles with no
ptxas remark."""

from __future__ import annotations

import numpy as np
from hypothesis import given, reject
from hypothesis import strategies as st

import tawa_xdsl
from tawa_xdsl.diagnostics import DiagnosticException
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.lowering.ptx_target import to_ptx

from .programs import tile_programs


@st.composite
def hopper_options(draw: st.DrawFn) -> str:
    depth = draw(st.integers(1, 3))
    mma = draw(st.integers(1, depth))
    two_stage = depth > mma and draw(st.booleans())
    return (
        f"tawa-hopper-pipeline{{tuned=false num-stages={depth} mma-depth={mma} "
        f"two-stage={str(two_stage).lower()}}}"
    )


@given(
    program=tile_programs(tile=64, fp8=True),
    options=hopper_options(),
    seed=st.integers(0, 2**16),
)
def test_lowered_programs_compute_the_reference(program, options, seed) -> None:
    args = program.make_args(seed)
    tawa_xdsl.interpret(
        tawa_xdsl.parse(program.text), program.name, *args, grid=program.grid
    )
    expected = args[-2].copy()
    lowered = tawa_xdsl.apply(tawa_xdsl.parse(program.text), options)
    for schedule in range(3):
        args[-2][...] = np.nan
        tawa_xdsl.simulate(
            lowered, program.name, *args, grid=program.grid, seed=seed + schedule
        )
        np.testing.assert_array_equal(args[-2], expected)


@given(program=tile_programs(tile=64, fp8=True), options=hopper_options())
def test_lowered_programs_assemble(program, options) -> None:
    result = assemble(to_ptx(tawa_xdsl.apply(tawa_xdsl.parse(program.text), options)))
    assert result.ok, result.log[-3000:]
    assert result.remarks == [], result.remarks


@st.composite
def cooperative_options(draw: st.DrawFn) -> str:
    return (
        "tawa-hopper-pipeline{tuned=false num-stages=2 mma-depth=1 num-consumers=2 "
        f"two-stage={str(draw(st.booleans())).lower()} "
        f"ping-pong={str(draw(st.booleans())).lower()}}}"
    )


@given(
    program=tile_programs(tile=128),
    options=cooperative_options(),
    seed=st.integers(0, 2**16),
)
def test_consumer_warpgroups_compute_the_reference(program, options, seed) -> None:
    """Two consumer warpgroups, each its own actor in the simulator, with and
    without MMA turns (ping-pong): any interleaving computes the reference.
    Programs whose 128 x 128 rings do not fit in shared memory are rejected."""
    args = program.make_args(seed)
    tawa_xdsl.interpret(
        tawa_xdsl.parse(program.text), program.name, *args, grid=program.grid
    )
    expected = args[-2].copy()
    try:
        lowered = tawa_xdsl.apply(tawa_xdsl.parse(program.text), options)
    except DiagnosticException as e:
        if "bytes of shared memory" not in str(e):
            raise
        reject()
    for schedule in range(2):
        args[-2][...] = np.nan
        tawa_xdsl.simulate(
            lowered, program.name, *args, grid=program.grid, seed=seed + schedule
        )
        np.testing.assert_array_equal(args[-2], expected)


@given(
    program=tile_programs(tile=64, shared=True),
    launch=st.sampled_from(["grid", "reversed grid", "persistent"]),
    seed=st.integers(0, 2**16),
)
def test_clusters_compute_the_reference(program, launch, seed) -> None:
    """Clusters of two blocks, which multicast every load they issue alike, under
    random interleavings of both blocks' roles: the reference, with the grid's x
    rounded up to whole clusters (the extra block works past the edge: the last
    one, or with `reverse-grid` the first). Some of each program's loop loads
    are the same in every block; the rest are not."""
    persistent, reverse = launch == "persistent", launch == "reversed grid"
    args = program.make_args(seed)
    tawa_xdsl.interpret(
        tawa_xdsl.parse(program.text), program.name, *args, grid=program.grid
    )
    expected = args[-2].copy()
    options = (
        "tawa-hopper-pipeline{tuned=false num-stages=2 mma-depth=1 cluster=2 "
        f"persistent={str(persistent).lower()} reverse-x={str(reverse).lower()}}}"
    )
    try:
        lowered = tawa_xdsl.apply(tawa_xdsl.parse(program.text), options)
    except DiagnosticException as e:
        if "nothing to multicast" not in str(e):
            raise
        reject()  # the shared loads were dead and removed
    x, *rest = program.grid
    grid = (2,) if persistent else (x + x % 2, *rest)
    for schedule in range(2):
        args[-2][...] = np.nan
        tawa_xdsl.simulate(
            lowered, program.name, *args, grid=grid, seed=seed + schedule
        )
        np.testing.assert_array_equal(args[-2], expected)
