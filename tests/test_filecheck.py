"""The lit + FileCheck suite (tests/filecheck), one pytest item per lit file.

One item per file (rather than one for the whole suite) lets pytest-xdist spread
the files over the cores, names the failing file in the summary, and lets
`pytest tests/test_filecheck.py -k pipeline` run a single file. Each item runs
lit itself on its file, so the files' RUN lines, substitutions and lit.cfg mean
exactly what `lit -v tests/filecheck` makes of them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parent / "filecheck"
# lit.cfg's suffixes and excludes: `.mlir` files, not under `Inputs/`; `Output/`
# holds what lit writes while it runs
LIT_FILES = sorted(
    p
    for p in SUITE.rglob("*.mlir")
    if not {"Inputs", "Output"} & set(p.relative_to(SUITE).parts)
)


@pytest.mark.parametrize(
    "path", LIT_FILES, ids=lambda p: str(p.relative_to(SUITE).with_suffix(""))
)
def test_lit_file(path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import lit.main; lit.main.main()", "-v", str(path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
    assert "Passed: 1" in result.stdout, result.stdout
