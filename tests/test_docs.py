"""Every document the code and the docs point to is in the repository: a reader
sent to `docs/hopper.md` must find it there (the code once cited notes that only
its authors had, outside the repository). The README and docs/ name files,
passes and pass options that exist (docs/architecture.md once sent readers to a
test file deleted long before)."""

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


DOCS = ("README.md", "docs/architecture.md", "docs/hopper.md")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
FILE_REFERENCE = re.compile(
    r"(?<![\w*.])[\w/-]+(?:\.\w+)*\.(?:py|mlir|sh|toml)\b|^[\w/-]+/$"
)
PIPELINE_PASS = re.compile(r"\b([a-z][a-z0-9]*(?:-[a-z0-9]+)+)\{([^}]*)\}")
PASS_OPTION = re.compile(r"([a-z][\w-]*)(?:=(?:\"[^\"]*\"|\S+))?")
PACKAGES = {"tawa_xdsl/" + d: d for d in ("dialects", "transforms", "lowering")}


def doc_code_spans() -> list[tuple[str, str]]:
    """(where, text) of every `code span` of the README and docs/."""
    spans = []
    for doc in DOCS:
        text = (REPO / doc).read_text()
        for m in CODE_SPAN.finditer(text):
            spans.append((f"{doc}:{text.count(chr(10), 0, m.start()) + 1}", m[1]))
    return spans


def test_the_docs_name_files_that_exist() -> None:
    """A path the docs name (`lowering/ptx_allocate.py`, `interp/tile.py`,
    `tests/property/`) is the end of a path in the repository; a package path
    (`tawa_xdsl/lowering/...`) is read as its source folder."""
    files = repository_files(".py", ".mlir", ".sh", ".toml", ".md")
    paths = {p.relative_to(REPO).as_posix() for p in files}
    for folder in SOURCES:
        paths.add(folder + "/")
        paths |= {
            p.relative_to(REPO).as_posix() + "/"
            for p in (REPO / folder).rglob("*")
            if p.is_dir()
        }
    missing = []
    for where, span in doc_code_spans():
        for ref in FILE_REFERENCE.findall(span):
            name = ref.removeprefix("./")
            for package, folder in PACKAGES.items():
                if name.startswith(package):
                    name = folder + name.removeprefix(package)
            if not any(p == name or p.endswith("/" + name) for p in paths):
                missing.append(f"{where}: {ref}")
    assert not missing, "files the docs name that are not here:\n" + "\n".join(missing)


def test_the_docs_name_passes_and_options_that_exist() -> None:
    """Every `pass{options}` the docs write names a pass `tawa-opt` has and
    options it takes."""
    import dataclasses

    from tawa_xdsl.registry import all_passes_with_xdsl

    passes = all_passes_with_xdsl()
    wrong = []
    for where, span in doc_code_spans():
        for name, options in PIPELINE_PASS.findall(span):
            if name not in passes:
                wrong.append(f"{where}: no pass {name}")
                continue
            fields = {
                f.name.replace("_", "-") for f in dataclasses.fields(passes[name]())
            }
            wrong += [
                f"{where}: {name} has no option {option}"
                for option in PASS_OPTION.findall(options)
                if option not in fields
            ]
    assert not wrong, "\n".join(wrong)


def test_the_readme_passes_table_names_every_pass_and_option() -> None:
    """Every pass `tawa-opt --list-passes` lists is in the README's table of
    passes, and each option it takes is named in its row (the row the pass
    heads, else the one mentioning it): `tawa-hopper-pipeline`'s `split-k`
    and `select-store-path`'s `vec16` were missing."""
    import dataclasses

    from tawa_xdsl.registry import all_passes

    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("## Passes") :]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    missing = []
    for name, factory in all_passes().items():
        heads = re.compile(rf"`{re.escape(name)}[{{`]")
        own = [r for r in rows if heads.search(r.split("|")[1])]
        own = own or [r for r in rows if f"`{name}" in r]
        if not own:
            missing.append(f"the pass {name}")
        for field in dataclasses.fields(factory()):
            option = field.name.replace("_", "-")
            if own and not any(re.search(rf"\b{option}\b", r) for r in own):
                missing.append(f"{name}'s option {option}")
    assert not missing, "the README's table of passes misses " + ", ".join(missing)
