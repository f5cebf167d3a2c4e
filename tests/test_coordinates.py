"""`multiple_of` proves what TMA needs of an innermost coordinate (a multiple of
16 bytes) and `non_negative` that no coordinate is below 0, and no more: every
form they accept, and the near misses they must not."""

from __future__ import annotations

import pytest
from xdsl.ir import SSAValue

import tawa_xdsl
from tawa_xdsl.analysis.coordinates import multiple_of, non_negative

KERNEL = """
func.func @k(%n: index, %p: i1, %d: !tile.desc<?xf32, box = [64]>) {
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
  %dim = tile.dim %d, 0 : !tile.desc<?xf32, box = [64]>
  %tiles_n = arith.ceildivsi %dim, %c64 : index
  %row = arith.divsi %pid, %tiles_n : index
  %col = arith.remsi %pid, %tiles_n : index
  %floor = arith.floordivsi %pid, %c4 : index
  %by_n = arith.divsi %pid, %n : index
  %rem_n = arith.remsi %n, %c4 : index
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


@pytest.mark.parametrize(
    ("name", "proven"),
    [
        ("tile", True),
        ("tiles_n", True),  # ceildivsi of an extent by a constant
        ("row", True),  # a program id unfolded: pid / tiles_n, pid % tiles_n
        ("col", True),
        ("floor", True),
        ("n", False),  # an argument: nothing known
        ("by_n", False),  # n may be negative, and so the quotient
        ("rem_n", False),  # takes the sign of n
    ],
)
def test_non_negative(name: str, proven: bool) -> None:
    assert non_negative(values()[name]) is proven
