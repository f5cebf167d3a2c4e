"""Generated tile programs survive print -> parse, in custom and generic syntax."""

from __future__ import annotations

import io

import numpy as np
from hypothesis import given
from xdsl.printer import Printer

import tawa_xdsl

from .programs import TileProgram, tile_programs


def generic(module) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return out.getvalue()


@given(program=tile_programs())
def test_print_parse_roundtrip(program: TileProgram) -> None:
    module = tawa_xdsl.parse(program.text)
    printed = str(module)
    reparsed = tawa_xdsl.parse(printed)
    assert module.is_structurally_equivalent(reparsed)
    assert str(reparsed) == printed
    from_generic = tawa_xdsl.parse(generic(module))
    assert module.is_structurally_equivalent(from_generic)


@given(program=tile_programs())
def test_generated_programs_run(program: TileProgram) -> None:
    """Every generated kernel is well-typed and writes its whole output."""
    module = tawa_xdsl.parse(program.text)
    args = program.make_args(seed=0)
    tawa_xdsl.interpret(module, program.name, *args, grid=program.grid)
    out = args[-2]
    assert not np.isnan(out).any()
