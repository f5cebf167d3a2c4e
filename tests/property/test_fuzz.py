"""Mutated kernels never crash tawa-opt, at any stage.

Each mutant of a kernel of the bundled examples goes through a round trip
(parse, print, parse again) and, if it parses, through `tawa-hopper-pipeline`
(with one of a few option sets) and `-t ptx` (the thread-level back end that
`compile` runs too). Every run either exits 0 with
output, or exits 1 with exactly one diagnostic, located (`tawa-opt:
file:line:col: error: ...`) unless it is about the module as a whole; never exit
2 or 3 (a crash, a bug of ours), never a traceback.

Mutations are generic (delete, truncate, swap or duplicate lines, change a
number, type, op or SSA name) or aimed: untagged index constants changed
(offsets, loop bounds), and what xDSL's parser and verifier let through or crash
on: loop steps of 0 or below, a use before its definition, nesting deeper than
any kernel, float literals that overflow their type, a duplicated kernel, bytes
that are not UTF-8, a CTA barrier in a tile kernel.

How many mutants run comes from the hypothesis profile (tests/conftest.py);
`pytest -m slow --hypothesis-profile=exhaustive
tests/property/test_fuzz.py` is the long search (500 mutants through -t ptx).
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tawa_xdsl.tawa_opt import main

from ..conftest import EXAMPLE_FILES

NUMBERS = ["0", "1", "3", "-1", "63", "65", "100", "256", "512", "99999999999"]
TYPES = ["bf16", "f16", "f32", "i32", "i1", "index", "i64", "tensor<2xf32>"]
OPS = [
    "tile.dot",
    "tile.load",
    "tile.store",
    "tile.trans",
    "arith.addf",
    "scf.yield",
    "tile.reduce",
    "tile.broadcast",
    "aref.put",
    "func.return",
]
STEPS = ["0", "-1", "-64"]
CONSTANTS = ["0", "1", "16", "32", "48", "96", "192", "256", "-128", "100000"]
FLOATS = ["1.0e400", "-1.0e400", "1.0e39", "-1.0e39", "65520.0", "3.4e38"]
PIPELINES = [
    "tawa-hopper-pipeline",
    "tawa-hopper-pipeline{num-stages=2 mma-depth=1}",
    "tawa-hopper-pipeline{num-consumers=2}",
    "tawa-hopper-pipeline{persistent=true}",
    "tawa-hopper-pipeline{two-stage=true}",
    "tawa-hopper-pipeline{tma-store=false}",
    "tawa-hopper-pipeline{cluster=2}",
]
KERNEL = re.compile(r"^func\.func @\w+.*?^}\n", re.S | re.M)
KERNELS = [k for path in EXAMPLE_FILES for k in KERNEL.findall(path.read_text())]
"""The corpus: each kernel of each example on its own (cheaper than a file)."""

LOCATED = re.compile(r"tawa-opt: \S*input\.mlir:\d+:\d+: error: ")
MODULE_LEVEL = ("tawa-opt: -t ptx: the module has no tile kernels",)
"""Diagnostics about the whole module, which has no location."""

DEFINITION = re.compile(r"^\s*(%\w+)(?::\d+)? = ")


def _header_end(lines: list[str]) -> int:
    """Index of the line that opens the kernel body (`... {tile.kernel} {`)."""
    return next(i for i, line in enumerate(lines) if line.rstrip().endswith("{"))


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


@st.composite
def aimed(draw: st.DrawFn, text: str, kind: str) -> str | None:
    """The mutations aimed at one check each; None where the kernel offers no
    place for `kind`."""
    lines = text.splitlines(keepends=True)
    body = range(_header_end(lines) + 1, len(lines) - 1)
    if kind == "step":
        loops = [i for i in body if "scf.for" in lines[i]]
        if not loops:
            return None
        i = draw(st.sampled_from(loops))
        step = draw(st.sampled_from(STEPS))
        lines[i] = re.sub(r"step %\w+", "step %fuzz_step", lines[i])
        lines.insert(
            i, f"{_indent(lines[i])}%fuzz_step = arith.constant {step} : index\n"
        )
        return "".join(lines)
    if kind == "use_before_def":
        moves = []
        for i in body:
            if m := DEFINITION.match(lines[i]):
                use = re.compile(re.escape(m.group(1)) + r"\b")
                later = [j for j in range(i + 1, len(lines)) if use.search(lines[j])]
                if later:
                    moves.append((i, later[0]))
        if not moves:
            return None
        i, j = draw(st.sampled_from(moves))
        lines.insert(j, lines.pop(i))
        return "".join(lines)
    if kind == "deep_nesting":
        depth = draw(st.integers(55, 150))
        start = _header_end(lines) + 1
        opened = [
            "  %fuzz0 = arith.constant 0 : index\n",
            "  %fuzz1 = arith.constant 1 : index\n",
            *(
                f"  scf.for %fuzz_i{d} = %fuzz0 to %fuzz1 step %fuzz1 {{\n"
                for d in range(depth)
            ),
        ]
        ret = max(i for i in body if "func.return" in lines[i])
        return "".join(
            lines[:start] + opened + lines[start:ret] + ["  }\n"] * depth + lines[ret:]
        )
    if kind == "float_overflow":
        floats = list(re.finditer(r"(?<![\w.])\d+\.\d+(?:e[+-]?\d+)?", text))
        if not floats:
            return None
        m = draw(st.sampled_from(floats))
        return text[: m.start()] + draw(st.sampled_from(FLOATS)) + text[m.end() :]
    if kind == "constant":
        constants = list(
            re.finditer(r"(arith\.constant )(-?\d+)( : (?:index|i32))", text)
        )
        if not constants:
            return None
        m = draw(st.sampled_from(constants))
        return text[: m.start(2)] + draw(st.sampled_from(CONSTANTS)) + text[m.end(2) :]
    if kind == "duplicate_kernel":
        return text + "\n" + text
    if kind == "binary":
        at = draw(st.integers(0, len(text)))
        return text[:at] + "\udcff\udcfe" + text[at:]  # bytes 0xff 0xfe on disk
    assert kind == "barrier"
    at = draw(st.sampled_from(list(body)))
    lines.insert(at, f"{_indent(lines[at]) or '  '}nvgpu_async.cta_barrier\n")
    return "".join(lines)


AIMED = [
    "constant",
    "step",
    "use_before_def",
    "deep_nesting",
    "float_overflow",
    "duplicate_kernel",
    "binary",
    "barrier",
]
GENERIC = [
    "delete_span",
    "number",
    "type",
    "op",
    "ssa",
    "swap_lines",
    "drop_line",
    "dup_line",
    "truncate",
]
KINDS = [*AIMED, *GENERIC, *["constant"] * 3, *["none"] * 2]
"""Weighted toward mutants that still parse, so the later stages see many ("none"
runs a kernel as written, under one of the `PIPELINES`)."""


@st.composite
def mutations(draw: st.DrawFn, text: str) -> str:
    kind = draw(st.sampled_from(KINDS))
    if kind == "none":
        return text
    if kind in AIMED and (mutant := draw(aimed(text, kind))) is not None:
        return mutant
    lines = text.splitlines(keepends=True)
    if kind == "delete_span":
        start = draw(st.integers(0, len(text) - 1))
        return text[:start] + text[start + draw(st.integers(1, 40)) :]
    if kind == "truncate":
        return text[: draw(st.integers(0, len(text)))]
    if kind in ("swap_lines", "drop_line", "dup_line"):
        i = draw(st.integers(0, len(lines) - 1))
        j = draw(st.integers(0, len(lines) - 1))
        if kind == "swap_lines":
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "drop_line":
            del lines[i]
        else:
            lines.insert(j, lines[i])
        return "".join(lines)
    pattern, choices = {
        "type": (r"\b(bf16|f16|f32|i32|i1|index)\b", TYPES),
        "op": (r"\b(tile|arith|scf|math|func)\.\w+", OPS),
        "ssa": (r"%\w+", sorted(set(re.findall(r"%\w+", text)))),
    }.get(kind, (r"(?<![\w%])\d+", NUMBERS))
    matches = list(re.finditer(pattern, text))
    m = matches[draw(st.integers(0, len(matches) - 1))]
    return text[: m.start()] + draw(st.sampled_from(choices)) + text[m.end() :]


def run_in_process(text: str, tmp: Path, *args: str) -> tuple[int, str, str]:
    src = tmp / "input.mlir"
    src.write_bytes(text.encode("utf-8", "surrogateescape"))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(src), *args])
    return rc, out.getvalue(), err.getvalue()


def check_outcome(rc: int, out: str, err: str) -> None:
    """Exit 0 with output, or exit 1 with one diagnostic, located where it can be."""
    assert "Traceback" not in out + err
    assert rc in (0, 1), err
    if rc == 0:
        assert out
        return
    lines = err.splitlines()
    assert sum(line.startswith("tawa-opt: ") for line in lines) == 1, err
    assert LOCATED.match(lines[0]) or lines[0].startswith(MODULE_LEVEL), err


@pytest.mark.slow
@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_kernels_get_one_located_diagnostic_at_every_stage(
    tmp_path: Path, data: st.DataObject
) -> None:
    text = data.draw(mutations(data.draw(st.sampled_from(KERNELS))))
    pipeline = data.draw(st.sampled_from(PIPELINES))
    rc, out, err = run_in_process(text, tmp_path)
    check_outcome(rc, out, err)
    if rc == 1:
        return  # the later stages parse first: the same diagnostic
    rc2, out2, err2 = run_in_process(out, tmp_path)
    assert (rc2, out2) == (0, out), err2
    rc, out, err = run_in_process(text, tmp_path, "-p", pipeline, "-t", "ptx")
    check_outcome(rc, out, err)
    assert rc == 1 or ".entry" in out


@pytest.mark.parametrize("path", EXAMPLE_FILES[:1], ids=lambda p: p.name)
def test_broken_input_exits_1_from_the_shell(path: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.mlir"
    broken.write_text(path.read_text().replace("tile.dot", "tile.dot %oops,", 1))
    result = subprocess.run(
        [sys.executable, "-m", "tawa_xdsl.tawa_opt", str(broken)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert result.stderr.startswith(f"tawa-opt: {broken}:")
    assert "Traceback" not in result.stderr
