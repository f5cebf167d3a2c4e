"""`multiple_of` proves what TMA needs of an innermost coordinate (a multiple of
16 bytes) and no more: every form it accepts, and the near misses it must not."""

from __future__ import annotations

import pytest
from xdsl.ir import SSAValue

import tawa_xdsl
from tawa_xdsl.analysis.coordinates import multiple_of

KERNEL = """
func.func @k(%n: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %mask = arith.constant -8 : index
  %pid = tile.program_id x
  %tile = arith.muli %pid, %c64 : index
  %sum = arith.addi %tile, %c8 : index
  %odd = arith.addi %tile, %c3 : index
  %sel = arith.select %p, %tile, %c8 : index
  %sel_odd = arith.select %p, %tile, %c3 : index
  %rem = arith.remui %tile, %c64 : index
  %shl = arith.shli %pid, %c3 : index
  %shl_short = arith.shli %pid, %c0 : index
  %low = arith.andi %n, %mask : index
  %div = arith.divui %tile, %c4 : index
  %r:2 = scf.for %k = %c0 to %n step %c64 iter_args(%off = %c8, %bad = %c0) -> (index, index) {
    %use = arith.addi %k, %off : index
    %next = arith.addi %off, %c64 : index
    %next_bad = arith.addi %bad, %c3 : index
    scf.yield %next, %next_bad : index, index
  }
  func.return
}
"""


def values() -> dict[str, SSAValue]:
    kernel = tawa_xdsl.parse(KERNEL).body.block.first_op
    found: dict[str, SSAValue] = {}
    for op in kernel.walk():
        for v in (
            *op.results,
            *(a for r in op.regions for b in r.blocks for a in b.args),
        ):
            if v.name_hint:
                found[v.name_hint] = v
    return found


@pytest.mark.parametrize(
    ("name", "proven"),
    [
        ("tile", True),
        ("sum", True),
        ("odd", False),
        ("sel", True),
        ("sel_odd", False),
        ("rem", True),
        ("shl", True),  # pid << 3: a multiple of 8
        ("shl_short", False),
        ("low", True),  # n & -8
        ("n", False),  # an argument: nothing known
        ("div", False),
        ("k", True),
        ("off", True),  # starts at 8, steps by 64
        ("use", True),
        ("bad", False),  # starts at 0, steps by 3
    ],
)
def test_multiples_of_eight(name: str, proven: bool) -> None:
    assert multiple_of(values()[name], 8) is proven
