"""aref-partition and pipeline preserve the kernel's function and cannot deadlock:
for generated tile programs and random (num-stages, mma-depth, two-stage), the
simulator under many random schedules computes bit for bit what the reference
interpreter computes on the original kernel (bf16 kernels, and e4m3 ones). And
the simulator is a real checker:
break the protocol on purpose and it reports it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from xdsl.dialects import scf

import tawa_xdsl
from tawa_xdsl.dialects import aref
from tawa_xdsl.interp.scheduler import SimulationError

from .programs import TileProgram, tile_programs

SCHEDULES = 4


@st.composite
def pipelines(draw: st.DrawFn, cleanups: bool = False) -> tuple[str, int, int, bool]:
    depth = draw(st.integers(1, 4))
    two_stage = draw(st.booleans()) if depth >= 2 else False
    mma = draw(st.integers(1, depth - 1 if two_stage else depth))
    opts = f"num-stages={depth} mma-depth={mma} two-stage={str(two_stage).lower()}"
    if cleanups:
        spec = f"canonicalize,cse,aref-partition,cse,canonicalize,dce,pipeline{{{opts}}},canonicalize,cse,dce"
    else:
        spec = f"aref-partition,pipeline{{{opts}}}"
    return spec, depth, mma, two_stage


def reference_output(program: TileProgram, seed: int) -> tuple[list, np.ndarray]:
    args = program.make_args(seed)
    tawa_xdsl.interpret(
        tawa_xdsl.parse(program.text), program.name, *args, grid=program.grid
    )
    return args, args[-2].copy()


def simulated_output(
    module, program: TileProgram, args: list, schedule: int
) -> np.ndarray:
    out = args[-2]
    out[...] = np.nan
    tawa_xdsl.simulate(module, program.name, *args, grid=program.grid, seed=schedule)
    return out.copy()


@given(
    program=tile_programs(fp8=True), pipeline=pipelines(), seed=st.integers(0, 2**16)
)
def test_partitioned_pipelined_kernel_equals_reference(program, pipeline, seed) -> None:
    spec, *_ = pipeline
    args, expected = reference_output(program, seed)
    tile_level = tawa_xdsl.parse(program.text)
    np.testing.assert_array_equal(
        simulated_output(tile_level, program, args, 0), expected
    )
    module = tawa_xdsl.apply(tawa_xdsl.parse(program.text), spec)
    assert any(isinstance(op, aref.WarpSpecializeOp) for op in module.walk())
    for schedule in range(SCHEDULES):
        got = simulated_output(module, program, args, seed * SCHEDULES + schedule)
        np.testing.assert_array_equal(got, expected)


@given(program=tile_programs(), pipeline=pipelines(cleanups=True))
def test_passes_compose_with_cleanups(program, pipeline) -> None:
    spec, *_ = pipeline
    args, expected = reference_output(program, 0)
    module = tawa_xdsl.apply(tawa_xdsl.parse(program.text), spec)
    for schedule in range(2):
        np.testing.assert_array_equal(
            simulated_output(module, program, args, schedule), expected
        )


# --------------------------------------------------------------- broken protocols


def _pipelined(program: TileProgram, depth: int, mma: int, two_stage: bool = False):
    opts = f"num-stages={depth} mma-depth={mma} two-stage={str(two_stage).lower()}"
    return tawa_xdsl.apply(
        tawa_xdsl.parse(program.text), f"aref-partition,pipeline{{{opts}}}"
    )


def _expect_failure(module, program: TileProgram, pattern: str) -> None:
    args = program.make_args(0)
    with pytest.raises(SimulationError, match=pattern):
        for schedule in range(SCHEDULES):
            tawa_xdsl.simulate(
                module, program.name, *args, grid=program.grid, seed=schedule
            )


@given(program=tile_programs(min_trips=5), depth=st.integers(1, 3), data=st.data())
def test_simulator_catches_a_dropped_consumed(program, depth, data) -> None:
    """Every consumed runs at least once (loops run >= 5 iterations); drop one."""
    mma = data.draw(st.integers(1, depth))
    module = _pipelined(program, depth, mma)
    releases = [op for op in module.walk() if isinstance(op, aref.ConsumedOp)]
    victim = releases[data.draw(st.integers(0, len(releases) - 1))]
    victim.detach()
    victim.erase()
    _expect_failure(module, program, "never consumed|deadlock")


@given(program=tile_programs(min_trips=5), depth=st.integers(2, 4), data=st.data())
def test_simulator_catches_a_ring_too_shallow_for_its_use(program, depth, data) -> None:
    """With P MMAs in flight (and one more slot where a two-stage loop's stage two
    reads the older slot) the consumer holds that many slots at once; a ring with
    fewer must deadlock."""
    two_stage = data.draw(st.booleans())
    mma = data.draw(st.integers(1, depth - 1 if two_stage else depth))
    module = _pipelined(program, depth, mma, two_stage)
    rings = [
        op
        for op in module.walk()
        if isinstance(op, aref.CreateOp) and op.result.type.num_slots == depth
    ]
    ring = rings[data.draw(st.integers(0, len(rings) - 1))]
    holds = mma + (1 if _holds_two_slots(ring) else 0)
    assume(holds >= 2)
    shallow = aref.CreateOp(aref.ArefType(ring.result.type.types, holds - 1))
    shallow.result.name_hint = ring.result.name_hint
    ring.parent_block().insert_op_before(shallow, ring)
    ring.result.replace_all_uses_with(shallow.result)
    ring.detach()
    ring.erase()
    _expect_failure(module, program, "deadlock")


def _holds_two_slots(ring: aref.CreateOp) -> bool:
    """Whether a rotated loop releases a slot of this ring one iteration after the
    get of the next: stage two still reads the older slot."""
    for use in ring.result.uses:
        get = use.operation
        loop = get.parent_op()
        if (
            isinstance(get, aref.GetOp)
            and isinstance(loop, scf.ForOp)
            and any(
                isinstance(o, aref.ConsumedOp)
                and o.aref is ring.result
                and o.index is not get.index
                for o in loop.body.block.ops
            )
        ):
            return True
    return False


def _rotated(ring: aref.CreateOp) -> bool:
    """Whether two-stage moved a get of this ring into a guarded early stage."""
    return any(
        isinstance(use.operation, aref.GetOp)
        and isinstance(use.operation.parent_op(), scf.IfOp)
        for use in ring.result.uses
    )


@given(program=tile_programs(min_trips=1))
def test_two_stage_rotates_attention_like_loops(program) -> None:
    """Loops whose first dot starts from zero and feeds a second dot get rotated."""
    module = _pipelined(program, 3, 1, two_stage=True)
    rotatable = any(lp.fresh_first and len(lp.dots) >= 2 for lp in program.loops)
    rings = [op for op in module.walk() if isinstance(op, aref.CreateOp)]
    assert any(_rotated(r) for r in rings) == rotatable
