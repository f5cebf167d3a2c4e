"""Mutated examples never crash tawa-opt: each input either processes cleanly
(exit 0, output that parses back) or gets a diagnostic and exit code 1."""

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


@st.composite
def mutations(draw: st.DrawFn, text: str) -> str:
    lines = text.splitlines(keepends=True)
    kind = draw(
        st.sampled_from(
            [
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
        )
    )
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
        "number": (r"(?<![\w%])\d+", NUMBERS),
        "type": (r"\b(bf16|f16|f32|i32|i1|index)\b", TYPES),
        "op": (r"\b(tile|arith|scf|math|func)\.\w+", OPS),
        "ssa": (r"%\w+", sorted(set(re.findall(r"%\w+", text)))),
    }[kind]
    matches = list(re.finditer(pattern, text))
    m = matches[draw(st.integers(0, len(matches) - 1))]
    return text[: m.start()] + draw(st.sampled_from(choices)) + text[m.end() :]


def run_in_process(text: str, tmp: Path, *args: str) -> tuple[int, str, str]:
    src = tmp / "input.mlir"
    src.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(src), *args])
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_examples_get_diagnostics(path: Path, tmp_path: Path, data) -> None:
    text = data.draw(mutations(path.read_text()))
    rc, out, err = run_in_process(text, tmp_path)
    assert rc in (0, 1)
    assert "Traceback" not in err + out
    if rc == 1:
        assert err.startswith("tawa-opt: ") and len(err.strip()) > len("tawa-opt:")
    else:
        rc2, out2, err2 = run_in_process(out, tmp_path)
        assert (rc2, out2) == (0, out), err2


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
