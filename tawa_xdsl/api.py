"""The Python entry points: parse IR, run pass pipelines on it."""

from __future__ import annotations

from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import DiagnosticException, ParseError

from tawa_xdsl.diagnostics import (
    InternalError,
    LocatingParser,
    decode_source,
    is_user_error,
    require_module,
    verify_located,
)
from tawa_xdsl.kernel_text import only_kernel
from tawa_xdsl.pass_pipeline import (
    build_passes,
    check_input,
    pass_failure,
    verify_after,
)
from tawa_xdsl.registry import all_passes_with_xdsl, make_context


def parse(source: str | bytes | Path, name: str | None = None) -> ModuleOp:
    """Parse and verify MLIR text (`str`, or UTF-8 `bytes`), or the file at a
    `Path`."""
    if isinstance(source, Path):
        name = name or str(source)
        source = decode_source(source.read_bytes(), name)
    elif isinstance(source, bytes):
        source = decode_source(source, name or "<bytes>")
    elif not isinstance(source, str):
        raise TypeError(f"parse takes MLIR text or a Path, got {type(source).__name__}")
    module = LocatingParser(make_context(), source, name or "<string>").parse_module()
    verify_located(module)
    return module


def parse_kernel(text: str, kernel: str, name: str | None = None) -> ModuleOp:
    """Parse and verify the part of MLIR `text` that kernel `@kernel` needs
    (`kernel_text.only_kernel`): compiling one kernel of a file then parses that
    kernel alone. Where the scan gives up, or the kernel does not stand alone,
    the whole text is parsed, so errors are reported as for the whole file."""
    alone = only_kernel(text, kernel)
    if alone is not None:
        try:
            return parse(alone, name)
        except (DiagnosticException, ParseError):
            pass  # let the whole file say what is wrong
    return parse(text, name)


def apply(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Run a pass pipeline (`tawa-opt -p` syntax) on `module` in place; verify after
    every pass (a named pipeline as a whole: verifying between its passes, as
    `tawa-opt` does, would double its cost) and refuse input a pass does not
    take (`check_input`); return the module. What a pass refuses is a
    `DiagnosticException`; a bug of ours (a pass that crashed or left invalid
    IR) is an `InternalError` naming the pass, as `tawa-opt` reports it, so a
    script sorting refusals from results never takes one for the other."""
    stage = "the verifier"

    def between(done: ModulePass | None, op: ModuleOp, upcoming: ModulePass | None):
        nonlocal stage
        verify_after(done, op)
        check_input(upcoming, op)
        stage = upcoming.name if upcoming is not None else stage

    require_module(module, "apply")
    if not isinstance(pipeline, str):
        raise TypeError(
            "apply takes the pipeline as text (tawa-opt -p syntax), got "
            f"{type(pipeline).__name__}"
        )
    passes = build_passes(all_passes_with_xdsl(), pipeline)
    try:
        PassPipeline(tuple(passes), between).apply(make_context(), module)
    except InternalError:
        raise
    except Exception as e:
        if is_user_error(e):
            raise
        raise pass_failure(stage, e) from e
    return module
