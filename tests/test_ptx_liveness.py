"""Liveness of ptx values on structured control flow (lowering/ptx_liveness.py):
where a value dies, on straight code, in branches and in loops."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

import tawa_xdsl
from tawa_xdsl.lowering.ptx_liveness import Liveness, overlaps, union

HEAD = """
func.func @k() {
  %tid = ptx.special() {register = "%tid.x"} : () -> !ptx.reg<b32>
  %c1 = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
  %p = ptx.alu(%tid, %c1) {opcode = "setp.eq.u32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<pred>
"""
R = "!ptx.reg<b32>"


def analyse(body: str) -> tuple[Liveness, dict[str, SSAValue], dict[str, Operation]]:
    """Liveness of `body` (after HEAD), its values by name and the op defining
    each named value (or, for `use_<name>` markers, none)."""
    module = tawa_xdsl.parse(HEAD + body + "  func.return\n}\n")
    kernel = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    live = Liveness(kernel.body)
    values: dict[str, SSAValue] = {}
    for op in kernel.walk():
        for v in op.results:
            values[v.name_hint or ""] = v
        for region in op.regions:
            for block in region.blocks:
                for a in block.args:
                    values[a.name_hint or ""] = a
    return live, values, {n: v.owner for n, v in values.items()}  # type: ignore[misc]


def add(name: str, a: str, b: str = "%c1") -> str:
    tb = "!ptx.imm<b32>" if b == "%c1" else R
    return f'{name} = ptx.alu({a}, {b}) {{opcode = "add.s32"}} : ({R}, {tb}) -> {R}\n'


def test_straight_code_dies_at_the_last_use_only() -> None:
    live, v, op = analyse(add("%a", "%tid") + add("%b", "%a") + add("%c", "%a", "%b"))
    assert not live.dies_at(v["a"], op["b"])
    assert live.dies_at(v["a"], op["c"]) and live.dies_at(v["b"], op["c"])
    assert live.dies_at(v["c"], op["c"]) is False  # not an operand there
    # a value and the result of the op where it dies do not overlap
    assert not overlaps(live.segments(v["b"]), live.segments(v["c"]))
    assert overlaps(live.segments(v["a"]), live.segments(v["b"]))


def test_a_use_in_the_other_branch_is_not_a_later_use() -> None:
    body = (
        add("%a", "%tid")
        + "ptx.if %p : !ptx.reg<pred> {\n"
        + add("%t", "%a")
        + add("%t2", "%t")
        + "} else {\n"
        + add("%e", "%a")
        + "}\n"
    )
    live, v, op = analyse(body)
    assert live.dies_at(v["a"], op["t"])
    assert live.dies_at(v["a"], op["e"])
    # `a` is dead in the rest of the then branch but live again in the else
    assert not overlaps(live.segments(v["a"]), live.segments(v["t2"]))
    assert overlaps(live.segments(v["a"]), live.segments(v["e"])) is False


def test_a_use_after_the_branches_keeps_a_value_live_in_both() -> None:
    body = (
        add("%a", "%tid")
        + "ptx.if %p : !ptx.reg<pred> {\n"
        + add("%t", "%a")
        + "} else {\n}\n"
        + add("%after", "%a")
    )
    live, v, op = analyse(body)
    assert not live.dies_at(v["a"], op["t"])
    assert live.dies_at(v["a"], op["after"])


LOOP = (
    '%n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>\n'
    + add("%outside", "%tid")
    + "%res = ptx.for %i = %c1 to %n step %c1 : (!ptx.imm<b32>, !ptx.reg<b32>, "
    "!ptx.imm<b32>) -> !ptx.reg<b32> iter_args(%x = %tid : !ptx.reg<b32>) -> "
    "(!ptx.reg<b32>) {\n"
    + add("%y", "%x", "%outside")
    + add("%z", "%y", "%i")
    + "ptx.yield %z : !ptx.reg<b32>\n}\n"
    + add("%after", "%res")
)


def test_a_value_from_before_a_loop_lives_across_its_iterations() -> None:
    live, v, op = analyse(LOOP)
    assert not live.dies_at(v["outside"], op["y"])  # read again next iteration
    assert live.dies_at(v["x"], op["y"])  # the carried value is fresh each trip
    assert not live.dies_at(v["i"], op["z"])  # the counter is stepped at the end
    assert not live.dies_at(v["n"], op["y"])  # the bound is read every trip
    loop = v["res"].owner
    end = 2 * live.last[loop] + 1
    assert live.live_at(v["outside"], end) and live.live_at(v["n"], end)
    # the carried value and the result share the loop's registers: disjoint
    assert not overlaps(live.segments(v["x"]), live.segments(v["res"]))
    assert live.dies_at(v["res"], op["after"])


WHILE = (
    '%n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>\n'
    + add("%outside", "%tid")
    + add("%init", "%tid")
    + f"%res = ptx.while (%x = %init : {R}) -> ({R}) {{\n"
    + add("%y", "%x", "%outside")
    + f'%q = ptx.alu(%y, %n) {{opcode = "setp.lt.s32"}} : ({R}, {R}) -> !ptx.reg<pred>\n'
    + f"ptx.condition(%q : !ptx.reg<pred>) %y : {R}\n"
    + f"}} do {{\n^bb0(%f: {R}):\n"
    + add("%z", "%f", "%n")
    + f"ptx.yield %z : {R}\n}}\n"
    + add("%after", "%res")
)


def test_a_while_loop_carries_its_values_over_both_regions() -> None:
    live, v, op = analyse(WHILE)
    loop = v["res"].owner
    end = 2 * live.last[loop] + 1
    # read by the next trip's before region, and the after region's bound
    assert not live.dies_at(v["outside"], op["y"]) and live.live_at(v["n"], end)
    assert live.dies_at(v["x"], op["y"])  # the carried value is fresh each trip
    assert live.dies_at(v["y"], v["q"].owner.next_op)  # forwarded, then dead
    # the after region's argument is written at the condition: disjoint from
    # what the condition forwards, from the carried value and from the result
    condition = 2 * live.index[v["q"].owner.next_op]
    assert live.segments(v["f"])[0][0] == condition + 1
    for other in ("y", "x", "res"):
        assert not overlaps(live.segments(v["f"]), live.segments(v[other]))
    # the yielded value may share the carried registers (the back edge)
    assert not overlaps(live.segments(v["z"]), live.segments(v["x"]))
    assert live.dies_at(v["res"], op["after"])


def test_an_if_result_is_written_at_the_end_of_each_branch() -> None:
    body = (
        f"%r = ptx.if %p : !ptx.reg<pred> -> ({R}) {{\n"
        + add("%t", "%tid")
        + f"ptx.yield %t : {R}\n}} else {{\n"
        + add("%e", "%tid")
        + f"ptx.yield %e : {R}\n}}\n"
        + add("%after", "%r")
    )
    live, v, op = analyse(body)
    # the then branch's value may sit in the result's registers: the result is
    # written after it is read, and the else branch does not disturb it
    assert not overlaps(live.segments(v["t"]), live.segments(v["r"]))
    assert not overlaps(live.segments(v["e"]), live.segments(v["r"]))
    # but a value of the else branch lives while the then branch's copy holds
    then_copy = 2 * live.index[v["t"].owner.next_op] + 1
    assert live.live_at(v["r"], then_copy)
    assert not live.live_at(v["r"], 2 * live.index[op["e"]])


@pytest.mark.parametrize(
    ("segments", "merged"),
    [([(5, 7), (1, 2), (3, 4)], [(1, 7)]), ([(1, 2), (4, 5)], [(1, 2), (4, 5)])],
)
def test_union_merges_touching_segments(segments, merged) -> None:
    assert union(segments) == merged
