"""The Python entry points: parse IR, run pass pipelines on it."""

from __future__ import annotations

from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline

from tawa_xdsl.diagnostics import LocatingParser, verify_located
from tawa_xdsl.registry import all_passes_with_xdsl, make_context


def parse(source: str | Path, name: str | None = None) -> ModuleOp:
    """Parse and verify MLIR text, or the file at a `Path`."""
    if isinstance(source, Path):
        name = name or str(source)
        source = source.read_text()
    module = LocatingParser(make_context(), source, name or "<string>").parse_module()
    verify_located(module)
    return module


def apply(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Run a pass pipeline (`tawa-opt -p` syntax) on `module` in place; verify after
    every pass; return the module."""
    passes = PassPipeline.parse_spec(
        all_passes_with_xdsl(), pipeline, lambda prev, op, nxt: verify_located(op)
    )
    passes.apply(make_context(), module)
    return module
