"""The bundled example kernels, importable as `tawa_xdsl.examples`.

This folder is both the repository's `examples/` (what the README's commands
name) and, through pyproject.toml's package-dir mapping, the package data of
`tawa_xdsl.examples`: one copy of each file, found the same way from a source
checkout, an editable install and a wheel.

    tawa_xdsl.examples.names()             # ["attention.mlir", ..., "gemm.mlir"]
    tawa_xdsl.examples.path("gemm.mlir")   # a Path to read, parse or compile

`tawa-opt gemm.mlir` reads the bundled file when there is no `gemm.mlir` in the
working directory (see `resolve`).
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path


def _folder() -> Path:
    """The examples' folder on disk; setuptools installs packages unzipped, and a
    path (not a resource handle) is what `tawa-opt` and `parse` take."""
    return Path(str(files(__name__)))


def names() -> list[str]:
    """The bundled kernels' file names."""
    return sorted(p.name for p in _folder().glob("*.mlir"))


def path(name: str) -> Path:
    """The bundled example `name` ("gemm.mlir"; the suffix may be left out)."""
    file = name if name.endswith(".mlir") else f"{name}.mlir"
    if file not in names():
        raise FileNotFoundError(
            f"no bundled example {name!r}; the examples are {', '.join(names())}"
        )
    return _folder() / file


def resolve(argument: str) -> str:
    """The file `tawa-opt` should read for its input argument: the argument itself
    when it exists or is not a bare example name, else the bundled example.

    Only a bare file name ("gemm.mlir", no directory) falls back, so a mistyped
    path is still reported as missing rather than silently replaced."""
    if os.path.exists(argument) or os.path.basename(argument) != argument:
        return argument
    if argument in names():
        return str(_folder() / argument)
    return argument
