"""Run the lit + FileCheck suite (tests/filecheck) as one pytest test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).resolve().parent / "filecheck"


def test_filecheck_suite() -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import lit.main; lit.main.main()", "-sv", str(SUITE)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
    assert "Passed:" in result.stdout
