"""The Python entry points: parse IR, run pass pipelines on it."""

from __future__ import annotations

from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

from tawa_xdsl.diagnostics import LocatingParser, decode_source, verify_located
from tawa_xdsl.pass_pipeline import build_passes
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
    every pass (named pipelines: after each pass they run); return the module."""

    def verify(prev: ModulePass | None, op: ModuleOp, nxt: ModulePass | None) -> None:
        verify_located(op)

    passes = build_passes(all_passes_with_xdsl(), pipeline, verify)
    PassPipeline(tuple(passes), verify).apply(make_context(), module)
    return module
