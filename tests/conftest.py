"""Shared fixtures: paths to the bundled examples, parsed once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.mlir"))


@pytest.fixture(scope="session")
def example_text() -> dict[str, str]:
    return {p.name: p.read_text() for p in EXAMPLE_FILES}
