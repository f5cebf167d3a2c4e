"""The Python entry points: parse IR, run pass pipelines on it."""

from __future__ import annotations

from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

from tawa_xdsl.diagnostics import LocatingParser, decode_source, verify_located
from tawa_xdsl.pass_pipeline import build_passes, check_input
from tawa_xdsl.registry import all_passes_with_xdsl, make_context


def parse(source: str | Path, name: str | None = None) -> ModuleOp:
    """Parse and verify MLIR text, or the file at a `Path`."""
    if isinstance(source, Path):
        name = name or str(source)
        source = decode_source(source.read_bytes(), name)
    module = LocatingParser(make_context(), source, name or "<string>").parse_module()
    verify_located(module)
    return module


def apply(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Run a pass pipeline (`tawa-opt -p` syntax) on `module` in place; verify after
    every pass (a named pipeline as a whole: verifying between its passes, as
    `tawa-opt` does, would double its cost) and refuse input a pass does not
    take (`check_input`); return the module."""

    def between(done: ModulePass | None, op: ModuleOp, upcoming: ModulePass | None):
        verify_located(op)
        check_input(upcoming, op)

    passes = build_passes(all_passes_with_xdsl(), pipeline)
    PassPipeline(tuple(passes), between).apply(make_context(), module)
    return module
