"""The aref simulator names the op and the reason when a protocol is broken."""

from __future__ import annotations

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.interp.aref_sim import ProtocolViolation
from tawa_xdsl.interp.scheduler import Deadlock, RoleScheduler

T = "tensor<16xf32>"
R = f"!aref.aref<[{T}], depth = DEPTH>"


def kernel(producer: str, consumer: str, depth: int = 1) -> str:
    ring = R.replace("DEPTH", str(depth))
    prologue = f"""
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %t = arith.constant dense<1.0> : {T}"""
    return f"""
func.func @k(%out: !tile.desc<?xf32, box = [16]>) attributes {{tile.kernel}} {{
  %r = aref.create : {ring}
  aref.warp_specialize consumers = 1 producer {{{prologue}
{producer.replace("RING", ring)}
  }} consumer {{{prologue}
{consumer.replace("RING", ring)}
  }}
  func.return
}}
"""


def run(text: str, seeds: int = 6) -> None:
    module = tawa_xdsl.parse(text)
    out = np.zeros(16, dtype=np.float32)
    for seed in range(seeds):
        tawa_xdsl.simulate(module, "k", out, seed=seed)


PUT_TWO = "scf.for %i = %c0 to %c2 step %c1 { aref.put %r[%i], %t : RING }"


def test_a_correct_protocol_runs_under_every_schedule() -> None:
    run(
        kernel(
            PUT_TWO,
            """
    scf.for %i = %c0 to %c2 step %c1 {
      %v = aref.get %r[%i] : RING
      tile.store %v, %out[%c0] : tensor<16xf32> -> !tile.desc<?xf32, box = [16]>
      aref.consumed %r[%i] : RING
    }""",
        )
    )


GET_AND_RELEASE_ZERO = """
    %v = aref.get %r[%c0] : RING
    aref.consumed %r[%c0] : RING"""

BROKEN = {
    "get of an index never put": (
        PUT_TWO,
        """
    scf.for %i = %c0 to %c3 step %c1 {
      %v = aref.get %r[%i] : RING
      aref.consumed %r[%i] : RING
    }""",
        1,
        Deadlock,
        r"consumer waits at aref.get %r\[2\].*index 2 is never put",
    ),
    "put that would overwrite a slot never consumed": (
        PUT_TWO,
        """
    %v = aref.get %r[%c0] : RING
    %w = aref.get %r[%c1] : RING""",
        1,
        Deadlock,
        r"producer waits at aref.put %r\[1\].*overwrite slot 0, which holds index 0 "
        r"\(gotten, never consumed\)",
    ),
    "both roles waiting": (
        PUT_TWO,
        """
    %v = aref.get %r[%c0] : RING
    %w = aref.get %r[%c1] : RING
    aref.consumed %r[%c0] : RING""",
        1,
        Deadlock,
        r"producer waits at aref.put %r\[1\].*; consumer waits at aref.get %r\[1\]",
    ),
    "index put twice": (
        """
    aref.put %r[%c0], %t : RING
    aref.put %r[%c0], %t : RING""",
        GET_AND_RELEASE_ZERO,
        2,
        ProtocolViolation,
        r"aref.put %r\[0\].*index 0 is put twice",
    ),
    "release of an index never gotten": (
        PUT_TWO,
        """
    %v = aref.get %r[%c0] : RING
    aref.consumed %r[%c1] : RING""",
        2,
        ProtocolViolation,
        r"aref.consumed %r\[1\].*index 1 was never gotten",
    ),
    "put but never gotten": (
        PUT_TWO,
        GET_AND_RELEASE_ZERO,
        2,
        ProtocolViolation,
        r"index 1 of %r was put but never gotten",
    ),
    "gotten but never released": (
        "aref.put %r[%c0], %t : RING",
        "%v = aref.get %r[%c0] : RING",
        1,
        ProtocolViolation,
        r"index 0 of %r was gotten but never consumed",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_protocols_are_named(case: str) -> None:
    producer, consumer, depth, error, pattern = BROKEN[case]
    with pytest.raises(error, match=pattern):
        run(kernel(producer, consumer, depth))


def test_seeds_choose_different_interleavings() -> None:
    """Each seed replays one interleaving; different seeds explore others."""

    def interleaving(seed: int) -> tuple[str, ...]:
        scheduler = RoleScheduler(seed)
        order: list[str] = []

        def role(name: str):
            def body() -> None:
                for _ in range(4):
                    order.append(name)
                    scheduler.sync(lambda: True, lambda: name)

            return body

        scheduler.run({"producer": role("p"), "consumer": role("c")})
        return tuple(order)

    assert interleaving(3) == interleaving(3)
    assert len({interleaving(seed) for seed in range(10)}) > 3
