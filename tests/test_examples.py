"""The bundled examples round-trip through tawa-opt and survive xDSL's cleanups."""

from __future__ import annotations

import subprocess
import sys

import pytest
from xdsl.dialects.builtin import ModuleOp

import tawa_xdsl
from tawa_xdsl.kernel import kernels

from .conftest import EXAMPLE_FILES

TAWA_OPT = [sys.executable, "-m", "tawa_xdsl.tawa_opt"]


def run_opt(*args: str, stdin: str | None = None) -> str:
    result = subprocess.run(
        [*TAWA_OPT, *args], input=stdin, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_roundtrips(path) -> None:
    printed = run_opt(str(path))
    assert run_opt(stdin=printed) == printed
    generic = run_opt(str(path), "--print-op-generic")
    assert run_opt(stdin=generic) == printed
    original = tawa_xdsl.parse(path)
    assert original.is_structurally_equivalent(tawa_xdsl.parse(printed))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_cleanups_keep_kernels(path) -> None:
    module = tawa_xdsl.apply(tawa_xdsl.parse(path), "canonicalize,cse,dce")
    assert isinstance(module, ModuleOp)
    names = {k.sym_name.data for k in kernels(module)}
    assert names == {k.sym_name.data for k in kernels(tawa_xdsl.parse(path))}
    stores = [op for op in module.walk() if op.name == "tile.store"]
    assert len(stores) == len(names)
