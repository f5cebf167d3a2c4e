"""`pip install .` ships every Python package of the source tree."""

from __future__ import annotations

import sys

from .conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_every_package_is_listed_in_pyproject() -> None:
    setup = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setup["packages"])
    found = set()
    for package, directory in setup["package-dir"].items():
        for init in (REPO / directory).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / directory)
            found.add(".".join([package, *rel.parts]))
    assert found <= listed, (
        f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    )
