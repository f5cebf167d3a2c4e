"""Every document the code and the docs point to is in the repository: a reader
sent to `docs/hopper.md` must find it there (the code once cited notes that only
its authors had, outside the repository)."""

from __future__ import annotations

import re
from pathlib import Path

from .conftest import REPO

SOURCES = ("dialects", "docs", "examples", "lowering", "tawa_xdsl", "transforms")
SOURCES += ("benchmarks", "scripts", "tests")
MARKDOWN_REFERENCE = re.compile(r"[\w./-]*\w\.md\b")


def repository_files(*suffixes: str) -> list[Path]:
    """Our files with these suffixes (not the virtual environment's)."""
    files = [p for p in REPO.iterdir() if p.suffix in suffixes]
    for folder in SOURCES:
        files += [p for p in (REPO / folder).rglob("*") if p.suffix in suffixes]
    return files


def test_every_referenced_document_exists() -> None:
    present = {p.relative_to(REPO).as_posix() for p in repository_files(".md")}
    names = {Path(p).name for p in present}
    missing = []
    for file in repository_files(".py", ".md", ".mlir"):
        for ref in MARKDOWN_REFERENCE.findall(file.read_text(errors="replace")):
            found = (
                ref in present
                or (file.parent / ref).resolve().is_file()
                or ("/" not in ref and ref in names)  # "NOTES.md" beside its folder
            )
            if not found:
                missing.append(f"{file.relative_to(REPO)}: {ref}")
    assert not missing, "references to documents not in the repository:\n" + "\n".join(
        missing
    )


def test_the_readme_claims_the_python_pyproject_requires() -> None:
    """The README's Python version is the one pip enforces."""
    import tomllib

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    floor = pyproject["project"]["requires-python"].removeprefix(">=")
    readme = (REPO / "README.md").read_text()
    claims = set(re.findall(r"Python (3\.\d+)\+", readme))
    assert claims == {floor}, (claims, floor)


CONFLICT_MARKER = re.compile(r"^(<{7}|>{7})( |$)", re.M)


def test_no_merge_conflict_is_left_in_a_file() -> None:
    """A merge once left both sides of a conflict in docs/architecture.md,
    markers and all."""
    left = []
    for file in repository_files(".py", ".md", ".mlir", ".toml"):
        text = file.read_text(errors="replace")
        for m in CONFLICT_MARKER.finditer(text):
            left.append(
                f"{file.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}"
            )
    assert not left, "merge conflict markers at " + ", ".join(left)
