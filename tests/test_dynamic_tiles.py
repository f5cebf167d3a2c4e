"""persistent{dynamic=true}: programs take their tiles from the launch's tile
counter (`tile.next_tile`), the producer hands each ticket to the consumers
through a ring of its own.

- every tile is taken exactly once, for any program count, tile count and
  walk order, and the counter is back at zero after the launch (the next
  launch starts there);
- causal attention and a GEMM compute bit for bit what the static walk
  computes, in the reference interpreter, the aref simulator and (lowered to
  nvgpu_async) the barrier simulator, under several interleavings, and at the
  thread level (registers allocated, `atom.global.inc` on the counter) what
  the static walk computes there;
- a launch that leaves the counter dirty, and broken ticket handoffs between
  the roles (at the aref level and in the lowered kernel), are reported, not
  run to a wrong answer."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tawa_xdsl
from tawa_xdsl.compiler import describe
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.interp.aref_sim import ProtocolViolation
from tawa_xdsl.interp.barrier_sim import Hazard
from tawa_xdsl.interp.scheduler import Deadlock

from .conftest import example_module, sweep

BUMP = """
func.func @bump(%c: !tile.desc<?x?xf32, box = [4, 4]>) attributes {tile.kernel} {
  %x = tile.program_id x
  %y = tile.program_id y
  %c4 = arith.constant 4 : index
  %i = arith.muli %x, %c4 : index
  %j = arith.muli %y, %c4 : index
  %t = tile.load %c[%i, %j] : !tile.desc<?x?xf32, box = [4, 4]> -> tensor<4x4xf32>
  %one = arith.constant dense<1.0> : tensor<4x4xf32>
  %u = arith.addf %t, %one : tensor<4x4xf32>
  tile.store %u, %c[%i, %j] : tensor<4x4xf32> -> !tile.desc<?x?xf32, box = [4, 4]>
  func.return
}
"""
"""Adds one to each 4x4 tile of `c` (in place): a tile taken twice reads 2."""

PARTITION = "aref-partition,pipeline{num-stages=2}"


def _dynamic(longest_first: bool = False, group_m: int = 8) -> str:
    return (
        f"persistent{{dynamic=true group-m={group_m} "
        f"longest-first={str(longest_first).lower()}}}"
    )


@given(
    tiles=st.tuples(st.integers(1, 7), st.integers(1, 7)),
    programs=st.integers(1, 60),
    group_m=st.integers(1, 4),
    longest_first=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_each_tile_is_taken_exactly_once(
    tiles, programs, group_m, longest_first, seed
) -> None:
    """More programs than tiles, fewer, one: each tile bumped once, and both
    executors check the counter is back at zero after the launch."""
    module = tawa_xdsl.apply(tawa_xdsl.parse(BUMP), _dynamic(longest_first, group_m))
    c = np.zeros((4 * tiles[0] - 1, 4 * tiles[1] - 2), dtype=np.float32)
    tawa_xdsl.interpret(module, "bump", c, grid=(programs,))
    np.testing.assert_array_equal(c, 1)
    specialized = tawa_xdsl.apply(module.clone(), PARTITION)
    tawa_xdsl.simulate(specialized, "bump", c, grid=(programs,), seed=seed)
    np.testing.assert_array_equal(c, 2)


def _attention_args(seq: int, d: int):
    rng = np.random.default_rng(seq + d)
    q, k, v = (rng.standard_normal((3, seq, d)).astype(bfloat16) for _ in range(3))
    return q, k, v, np.full((3, seq, d), np.nan, dtype=bfloat16), 0.125


def _gemm_args(m: int, n: int, k: int):
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(bfloat16)
    b = rng.standard_normal((n, k)).astype(bfloat16)
    return a, b, np.full((m, n), np.nan, dtype=bfloat16)


CASES = {  # file, kernel, arguments, which argument is the output
    "causal attention": (
        "attention.mlir",
        "attention_causal_d64",
        _attention_args(300, 64),
        3,
    ),
    "gemm": ("gemm.mlir", "gemm_nt", _gemm_args(300, 520, 96), 2),
}


@pytest.mark.parametrize(
    ("case", "longest_first"),
    sweep(
        [(c, lf) for c in CASES for lf in (False, True)],
        {("gemm", False), ("causal attention", True)},
        lambda c: f"{c[1]}-{c[0]}",
        slow=(),
    ),
)
def test_dynamic_walk_computes_what_the_static_walk_computes(
    case, longest_first
) -> None:
    """(CI runs each walk order once; the other two cases, which differ only
    in the order, run under `--exhaustive`.)"""
    file, name, args, output = CASES[case]
    out = args[output]
    static = tawa_xdsl.apply(
        example_module(file, name),
        f"persistent{{longest-first={str(longest_first).lower()}}}",
    )
    tawa_xdsl.interpret(static, name, *args, grid=(4,))
    expected = out.copy()
    dynamic = tawa_xdsl.apply(example_module(file, name), _dynamic(longest_first))
    specialized = tawa_xdsl.apply(
        dynamic.clone(), "aref-partition,pipeline{num-stages=3 two-stage=true}"
    )
    lowered = tawa_xdsl.apply(specialized.clone(), "convert-aref-to-nvgpu-async")
    for programs in (1, 3, 40):
        out[...] = np.nan
        tawa_xdsl.interpret(dynamic, name, *args, grid=(programs,))
        np.testing.assert_array_equal(out, expected)
        for seed in range(2):
            for module in (specialized, lowered):
                out[...] = np.nan
                tawa_xdsl.simulate(module, name, *args, grid=(programs,), seed=seed)
                np.testing.assert_array_equal(out, expected)


def test_a_launch_that_leaves_the_counter_dirty_is_reported() -> None:
    """Programs that stop one tile early (of 16) take 15 tickets, one too few:
    the next launch would start from a dirty counter, so the launch is refused
    at the op that takes the tickets."""
    text = str(tawa_xdsl.apply(tawa_xdsl.parse(BUMP), _dynamic()))
    early = re.sub(
        r"arith.cmpi ult, (%\w+), %tiles",
        r"arith.cmpi ult, \1, %last",
        text.replace(
            "%first_tile = tile.program_id x",
            "%one_tile = arith.constant 1 : index\n"
            "    %last = arith.subi %tiles, %one_tile : index\n"
            "    %first_tile = tile.program_id x",
        ),
    )
    c = np.zeros((16, 16), dtype=np.float32)
    with pytest.raises(OpDiagnostic, match="left its tile counter at 15, not 0") as e:
        tawa_xdsl.interpret(tawa_xdsl.parse(early), "bump", c, grid=(2,))
    assert e.value.op.name == "tile.next_tile"


def _specialized_bump() -> str:
    return str(tawa_xdsl.apply(tawa_xdsl.parse(BUMP), f"{_dynamic()},{PARTITION}"))


def _consumer(text: str) -> tuple[str, str]:
    head, _, consumer = text.partition("} consumer {")
    return head + "} consumer {", consumer


def _broken_handoff(mutate) -> str:
    head, consumer = _consumer(_specialized_bump())
    mutated = mutate(consumer)
    assert mutated != consumer, "the mutation must change the consumer"
    return head + mutated


GET = re.compile(r"(\s*)(%\w+) = aref.get %tickets\[(%\w+)\] : (!aref.aref<[^>]*>)")
CONSUMED = re.compile(r"\s*aref.consumed %tickets\[%\w+\] : !aref.aref<[^>]*>")


def _release_before_get(consumer: str) -> str:
    """The consumer frees the ticket's slot before reading it: the producer
    may overwrite the ticket it was about to hand over."""
    consumer = CONSUMED.sub("", consumer, count=1)
    return GET.sub(
        r"\1aref.consumed %tickets[\3] : \4\1\2 = aref.get %tickets[\3] : \4",
        consumer,
        count=1,
    )


def _never_read(consumer: str) -> str:
    """The consumers walk the tiles statically and never read the tickets:
    the producer fills the ring and waits for ever."""
    consumer = CONSUMED.sub("", consumer, count=1)
    consumer = GET.sub(r"\1\2 = tile.num_programs x", consumer, count=1)
    return consumer


@pytest.mark.parametrize(
    ("mutate", "error", "message"),
    [
        (_release_before_get, ProtocolViolation, r"aref.consumed %tickets"),
        (_never_read, Deadlock, r"producer waits at aref.put %tickets"),
    ],
    ids=["release before get", "tickets never read"],
)
def test_a_broken_ticket_handoff_is_caught(mutate, error, message) -> None:
    module = tawa_xdsl.parse(_broken_handoff(mutate))
    c = np.zeros((24, 24), dtype=np.float32)
    with pytest.raises(error, match=message):
        for seed in range(4):
            tawa_xdsl.simulate(module, "bump", c, grid=(2,), seed=seed)


def _lowered_gemm() -> str:
    return str(
        tawa_xdsl.apply(
            example_module("gemm.mlir", "gemm_nt"),
            f"{_dynamic()},{PARTITION},convert-aref-to-nvgpu-async",
        )
    )


def _skip_consumer_wait(consumer: str) -> str:
    """The consumers read the ticket without waiting for the producer's
    arrive on its full barrier."""
    return re.sub(
        r"\n\s*nvgpu_async.mbarrier_wait %tickets_full\[.*", "", consumer, count=1
    )


def _arrive_before_store(producer: str) -> str:
    """The producer arrives on the full barrier before it stores the ticket:
    the consumers may read the slot before the ticket is in it."""
    store = re.search(r"\n\s*nvgpu_async.smem_store_scalar .*", producer)
    arrive = re.search(
        r"\n\s*nvgpu_async.mbarrier_arrive thread %tickets_full.*", producer
    )
    assert store and arrive and store.end() <= arrive.start()
    return (
        producer[: store.start()]
        + arrive.group()
        + store.group()
        + producer[arrive.end() :]
    )


@pytest.mark.parametrize(
    ("mutate", "consumer_side", "message"),
    [
        (_skip_consumer_wait, True, r"without having waited for %tickets_full"),
        # the arrive publishes nothing; the store waits for the next one
        (_arrive_before_store, False, r"consumer reads slot \d+ of %tickets"),
    ],
    ids=["consumer skips its wait", "producer arrives before its store"],
)
def test_the_barrier_simulator_catches_a_broken_ticket_handoff(
    mutate, consumer_side, message
) -> None:
    head, consumer = _consumer(_lowered_gemm())
    text = head + mutate(consumer) if consumer_side else mutate(head) + consumer
    module = tawa_xdsl.parse(text)
    a, b, c = _gemm_args(256, 256, 64)
    tawa_xdsl.simulate(
        tawa_xdsl.parse(_lowered_gemm()), "gemm_nt", a, b, c, grid=(2,)
    )  # unmutated, it runs
    with pytest.raises(Hazard, match=message):
        for seed in range(6):
            tawa_xdsl.simulate(module, "gemm_nt", a, b, c, grid=(2,), seed=seed)


@pytest.mark.parametrize(
    ("case",),
    sweep([(c,) for c in CASES], {("causal attention",)}, lambda c: c[0], slow=()),
)
def test_the_thread_level_walk_computes_what_the_static_walk_computes(case) -> None:
    """Lowered to PTX's level (`ptx.tile_ticket`, the ticket stored and loaded
    through shared memory): the thread simulator checks the counter is back at
    zero after each launch, as the barrier simulator does. (CI runs causal
    attention, which the tuned rules now walk from the counter; the GEMM
    under `--exhaustive`, and on the GPU.)"""
    file, name, args, output = CASES[case]
    lowering = "aref-partition,pipeline,convert-aref-to-nvgpu-async"
    lowering += ",distribute-fragments,ptx-allocate"
    static = tawa_xdsl.apply(
        example_module(file, name), f"persistent{{longest-first=true}},{lowering}"
    )
    out = args[output]
    out[...] = np.nan
    tawa_xdsl.simulate(static, name, *args, grid=(2,))
    expected = out.copy()
    dynamic = tawa_xdsl.apply(
        example_module(file, name), f"{_dynamic(longest_first=True)},{lowering}"
    )
    for programs in (1, 3):
        out[...] = np.nan
        tawa_xdsl.simulate(dynamic, name, *args, grid=(programs,), seed=programs)
        np.testing.assert_array_equal(out, expected)


def test_compile_options_name_the_dynamic_walk() -> None:
    assert "pers-lf-dyn" in describe(
        {"persistent": True, "longest_first": True, "dynamic_tiles": True}
    )


def test_the_tuned_stages_leave_room_for_the_tickets_ring() -> None:
    """The tickets' ring takes one aligned slot per outer stage: FP8 causal
    attention given 256-key blocks, persistent and dynamic tiles was tuned to
    3 stages and its rings overflowed shared memory by 112 bytes."""
    from tawa_xdsl.examples import path

    kernel = tawa_xdsl.compile(
        path("attention_fp8.mlir"),
        "attention_causal_d128_fp8",
        block_n=256,
        persistent=True,
        dynamic_tiles=True,
    )
    spec = kernel.for_shape(BH=16, SQ=4096, SK=4096, D=128)
    assert spec.options["num_stages"] == 2
    assert "atom.global.inc.u32" in spec.ptx  # the tile counter: a dynamic walk
