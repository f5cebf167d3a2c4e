"""`tawa-opt`: xDSL's opt driver with every xDSL dialect and pass plus ours.

Exit codes:
- 0: success; the IR (or `-t` output) on stdout.
- 1: a diagnostic about the input: unparsable or ill-typed IR, an unknown pass or
  a bad option, a kernel a pass cannot handle, an xDSL pass that fails on (or
  leaves invalid) IR it does not take, a missing file, an output that cannot
  be written. One line on stderr, `tawa-opt: file:line:col: error: op:
  message` where an op or a source position is known (a parse error adds the
  source line under it); with `--split-input-file`, one for each chunk that
  failed, after every chunk ran. The `-o` file of a failed run is removed
  (unless it is the input, which is left as it was); the output of a run
  that succeeds replaces it whole once the input was read, so `-o` may name
  the input.
- 2: a command-line usage error (argparse).
- 3: an internal error, a bug of ours: an exception a pass, the printer or the
  driver did not mean to raise, or a pass (or a stage of `-t ptx`) that left
  invalid IR. One line,
  `tawa-opt: [file:line:col: ]internal error in <pass or stage>: ...`;
  `TAWA_TRACEBACK=1` shows the traceback instead.

`--time-passes` and `--print-between-passes` write to stderr, so stdout stays
the IR; `--list-passes` lists our passes with their options; `-` reads stdin
and `-o -` writes stdout.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import os
import stat
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from importlib.metadata import version
from typing import IO, Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from tawa_xdsl import examples, registry
from tawa_xdsl.diagnostics import (
    STAGE_ATTR,
    InternalError,
    KernelDiagnostics,
    LocatingParser,
    decode_source,
    format_parse_error,
    is_user_error,
)
from tawa_xdsl.pass_pipeline import (
    Stepped,
    build_passes,
    check_input,
    instantiate,
    option_name,
    pass_failure,
    verify_after,
)

VERIFIER = "the verifier"
"""The stage before the first pass: verifying the input."""

EXIT_DIAGNOSTIC = 1
EXIT_INTERNAL = 3


class TawaOptMain(xDSLOptMain):
    version_format = "tawa-opt " + version("tawa-xdsl") + " (xDSL {xdsl_version})"

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        registry.register_dialects(self.ctx)

    def register_all_frontends(self) -> None:
        super().register_all_frontends()
        self.available_frontends["mlir"] = self._parse_mlir

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in registry.all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        # xDSL's other targets print its own machine dialects (LLVM, x86,
        # RISC-V, ...), which tawa-xdsl never produces: on our IR they crash
        self.available_targets = {
            "mlir": self.available_targets["mlir"],
            **registry.all_targets(lambda: not self.args.disable_verify),
        }

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        target = next(a for a in arg_parser._actions if a.dest == "target")
        target.type = self._target_spec
        arg_parser.add_argument(
            "--list-passes",
            action=ListPassesAction,
            help="list tawa-xdsl's passes with their options and exit",
        )

    def _target_spec(self, text: str) -> str:
        """`-t`'s value; an empty one is a usage error of `-t` that lists the
        targets (xDSL parses the value as a pass spec, so `-t ''` was reported
        as a pass pipeline that failed to parse)."""
        if not text.strip():
            raise argparse.ArgumentTypeError(
                f"the target is empty; the targets are {', '.join(self.available_targets)}"
            )
        return text

    # ------------------------------------------------------------------ input

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        """`-` reads stdin; a bare example name (`tawa-opt gemm.mlir`) that is no
        file here reads the bundled example, so the examples work after a
        non-editable install."""
        if self.args.input_file == "-":
            return sys.stdin.buffer, "mlir"
        if self.args.input_file is not None:
            self.args.input_file = examples.resolve(self.args.input_file)
        try:
            stream, extension = super().get_input_stream()
        except OSError as e:
            raise DiagnosticException(
                f"{self.args.input_file}: error: {e.strerror}"
            ) from None
        if extension not in self.available_frontends and not self.args.frontend:
            stream.close()
            raise DiagnosticException(
                f"{self.args.input_file}: error: unknown file extension "
                f"'.{extension}'; `-f mlir` reads it as MLIR"
            )
        return stream, extension

    def get_input_name(self) -> str:
        return "stdin" if self.args.input_file in (None, "-") else self.args.input_file

    def prepare_output(self) -> IO[str]:
        """`-o -` is stdout, as `-` is stdin (it wrote a file named `-`)."""
        if self.args.output_file in (None, "-"):
            return sys.stdout
        self._output = Output(self.args.output_file, self.args.input_file)
        return self._output  # type: ignore[return-value] (what xDSL uses of IO)

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        self._line_offset = start_offset
        try:
            return super().parse_chunk(chunk, file_extension, start_offset)
        except (ParseError, DiagnosticException):
            raise
        except Exception as e:
            raise InternalError.wrap("the parser", e) from e

    def _parse_mlir(self, io: IO[bytes]) -> ModuleOp:
        name = self.get_input_name()
        parser = LocatingParser(
            self.ctx,
            decode_source(io.read(), name),
            name,
            getattr(self, "_line_offset", 0),
        )
        return parser.parse_module(not self.args.no_implicit_module)

    def run(self) -> None:
        """Run; the `-o` file is written once the run succeeded (`Output`), and
        that of a run that fails is removed (mlir-opt keeps its output only on
        success): it held the result of another run."""
        self._output: Output | None = None
        try:
            self._run()
            if self._output is not None:
                self._output.commit()
        except BaseException:
            if self._output is not None:
                self._output.discard()
            raise

    def _run(self) -> None:
        """xDSL's loop over the input, but with `--split-input-file` every chunk
        is processed: a chunk's diagnostics are kept and raised together once
        all ran (as `ChunkDiagnostics`). A bug of ours still ends the run."""
        modes = ("verify_diagnostics", "parsing_diagnostics", "shrink")
        if not self.args.split_input_file or any(getattr(self.args, m) for m in modes):
            super().run()
            return
        chunks, file_extension = self.prepare_input()
        output = self.prepare_output()
        errors: list[Exception] = []
        try:
            for i, (chunk, offset) in enumerate(chunks):
                with chunk:
                    if i > 0:
                        output.write("// -----\n")
                    try:
                        module = self.parse_chunk(chunk, file_extension, offset)
                        if module is not None:
                            self.apply_passes(module)
                            output.write(self.output_resulting_program(module))
                    except ParseError as e:
                        e.span = dataclasses.replace(e.span, line_offset=offset)
                        errors.append(e)
                    except DiagnosticException as e:
                        errors.append(e)
                    output.flush()
        finally:
            if output is not sys.stdout:
                output.close()
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise ChunkDiagnostics(errors)

    # ----------------------------------------------------------------- passes

    def setup_pipeline(self) -> None:
        """Our pipeline parser (errors name options as written); between passes
        the IR is verified, and timings and dumps go to stderr."""
        self._stage = VERIFIER
        self._started = time.perf_counter()
        self._pipeline_stage, self._on = VERIFIER, ""
        self._in_pipeline = False  # in a named pipeline's passes
        self.pipeline = PassPipeline(
            tuple(
                build_passes(
                    self.available_passes, self.args.passes, self._within_pipeline
                )
            ),
            self._between_passes,
        )

    def _within_pipeline(
        self, done: ModulePass | None, module: ModuleOp, upcoming: ModulePass | None
    ) -> None:
        """Between the passes a named pipeline runs on one kernel (`module`
        holds it alone): the same as between the passes of `-p`, but for the
        input, verified already."""
        if done is None:
            self._pipeline_stage = self._stage  # the pipeline's own name
            self._in_pipeline = True
            from tawa_xdsl.kernel import kernels

            names = [k.sym_name.data for k in kernels(module)]
            self._on = f" on @{names[0]}" if len(names) == 1 else ""
            self._stage = upcoming.name if upcoming is not None else self._stage
            self._started = time.perf_counter()
            return
        self._between_passes(done, module, upcoming, in_pipeline=True)
        if upcoming is None:  # the next kernel, or the pipeline's end
            self._stage, self._on = self._pipeline_stage, ""
            self._in_pipeline = False

    def _between_passes(
        self,
        done: ModulePass | None,
        module: ModuleOp,
        upcoming: ModulePass | None,
        in_pipeline: bool = False,
    ) -> None:
        if done is not None and self.args.time_passes and not isinstance(done, Stepped):
            ms = (time.perf_counter() - self._started) * 1e3
            print(f"tawa-opt: {done.name} took {ms:.1f} ms{self._on}", file=sys.stderr)
        if not self.args.disable_verify:
            verify_after(done, module, in_pipeline=in_pipeline)
        if done is not None and upcoming is not None and self.args.print_between_passes:
            print(f"// -----// IR after {done.name} //----- //", file=sys.stderr)
            Printer(stream=sys.stderr).print_op(module)
            print(file=sys.stderr)
        self._stage = upcoming.name if upcoming is not None else VERIFIER
        check_input(upcoming, module)
        self._started = time.perf_counter()

    def apply_passes(self, prog: ModuleOp) -> None:
        try:
            super().apply_passes(prog)
        except InternalError:
            raise
        except Exception as e:
            input_error = self._stage == VERIFIER and isinstance(e, DiagnosticException)
            if is_user_error(e) or input_error:
                raise
            raise pass_failure(self._stage, e, in_pipeline=self._in_pipeline) from e

    # ----------------------------------------------------------------- output

    def output_resulting_program(self, prog: ModuleOp) -> str:
        self._check_target_options()
        try:
            return super().output_resulting_program(prog)
        except InternalError:
            raise
        except Exception as e:
            if is_user_error(e):
                raise
            where = getattr(e, STAGE_ATTR, f"-t {self.args.target}")
            raise InternalError.wrap(where, e) from e

    def _check_target_options(self) -> None:
        """A target's options are the user's to get right: an unknown one or a
        bad value is reported as written, like a pass option."""
        spec = parse_spec(self.args.target)
        factory = self.available_targets.get(spec.name)
        if factory is not None and not inspect.signature(factory).parameters:
            instantiate(factory(), spec)


@contextmanager
def output_errors(path: str) -> Iterator[None]:
    """An `OSError` opening or writing the output (a missing folder, a full
    disk) as a diagnostic about its path: no bug of ours."""
    try:
        yield
    except OSError as e:
        raise DiagnosticException(f"{path}: error: {e.strerror}") from None


class Output:
    """The `-o` file, as xDSL's driver uses it (write, flush, close), with
    `output_errors`. A regular file (or a new one) is written to a temporary
    file beside it and moved over it by `commit`, once the run succeeded: the
    file was opened, and so emptied, before the input was read, so `-o`
    naming the input lost it (and the failed run then removed it). A device
    or a pipe (`-o /dev/null`) is written directly, never replaced."""

    def __init__(self, path: str, input_path: str | None):
        self.path = path
        self.target = os.path.realpath(path)  # through a link, not over it
        self.input_path = input_path
        self.temporary: str | None = None
        with output_errors(path):
            if os.path.isdir(self.target) or not _regular_or_missing(self.target):
                self.stream: IO[str] = open(path, "w")  # noqa: SIM115 (held open)
                return
            fd, self.temporary = tempfile.mkstemp(
                dir=os.path.dirname(self.target),
                prefix=f".{os.path.basename(self.target)}.",
                suffix=".tmp",
            )
            self.stream = os.fdopen(fd, "w")

    def write(self, text: str) -> int:
        with output_errors(self.path):
            return self.stream.write(text)

    def flush(self) -> None:
        with output_errors(self.path):
            self.stream.flush()

    def close(self) -> None:
        with output_errors(self.path):
            self.stream.close()

    def commit(self) -> None:
        """Move the written output over the file, with the mode the file has
        (or a new file gets)."""
        if self.temporary is None:
            return
        with output_errors(self.path):
            self.stream.close()
            os.chmod(self.temporary, _mode_for(self.target))
            os.replace(self.temporary, self.target)
        self.temporary = None

    def discard(self) -> None:
        """Close (quietly: the run failed already), drop what was written and
        remove the file, if it is a regular file other than the input."""
        with suppress(OSError):
            self.stream.close()
        if self.temporary is None:
            return
        with suppress(OSError):
            os.remove(self.temporary)
        if not _same_file(self.target, self.input_path):
            with suppress(OSError):
                os.remove(self.target)


def _regular_or_missing(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True


def _mode_for(path: str) -> int:
    """The permission bits of the file at `path`, or of a new file."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _same_file(path: str, other: str | None) -> bool:
    if other is None or other == "-":
        return False
    try:
        return os.path.samefile(path, other)
    except OSError:
        return False


class ChunkDiagnostics(Exception):
    """The diagnostics of several chunks of a `--split-input-file` run (parse
    errors among them), reported after every chunk ran, as mlir-opt does: the
    first no longer ends the run, dropping the later chunks' output and errors."""

    def __init__(self, errors: Sequence[Exception]):
        self.errors = list(errors)
        super().__init__(f"{len(self.errors)} chunks failed")


class ListPassesAction(argparse.Action):
    """`--list-passes`: each of our passes with its options (and their defaults)
    and the first line of its docstring, then exit."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        print(list_passes())
        parser.exit()


def list_passes() -> str:
    """One entry per pass of ours: `name{option=default ...}` and what it does."""
    entries = []
    for name, factory in registry.all_passes().items():
        cls = factory()
        options = " ".join(
            f"{option_name(f.name)}={_default(f.default)}"
            for f in dataclasses.fields(cls)
            if f.init
        )
        first_paragraph = (cls.__doc__ or "").strip().split("\n\n")[0]
        summary = " ".join(first_paragraph.split()).rstrip(":")
        entries.append(f"{name}{{{options}}}" if options else name)
        entries.append(f"    {summary}")
    entries.append(
        "xDSL's passes (canonicalize, cse, dce, ...) can be used too: see --help."
    )
    return "\n".join(entries)


def _default(value: object) -> str:
    if value is None:  # resolved for each kernel (CompileOptions)
        return "unset"
    if value is dataclasses.MISSING:  # the user must give it
        return "required"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _each_error(error: Exception) -> list[Exception]:
    """The single diagnostics that `error` reports."""
    if isinstance(error, KernelDiagnostics | ChunkDiagnostics):
        return [single for e in error.errors for single in _each_error(e)]
    return [error]


def main(args: Sequence[str] | None = None) -> int:
    """Run the driver; return the exit code (see the module docstring)."""
    try:
        TawaOptMain(args=args).run()
    except SystemExit as e:  # argparse: --help, --version, usage errors
        return e.code if isinstance(e.code, int) else 0
    except ArgSpecParseError as e:  # -t's options (-p's are PassOptionErrors)
        print(f"tawa-opt: {e}", file=sys.stderr)
        return EXIT_DIAGNOSTIC
    except (ParseError, DiagnosticException, ChunkDiagnostics) as e:
        for error in _each_error(e):  # several kernels' or chunks': one each
            text = format_parse_error(error) if isinstance(error, ParseError) else error
            print(f"tawa-opt: {text}", file=sys.stderr)
        return EXIT_DIAGNOSTIC
    except Exception as e:  # a bug of ours: one line, the traceback on request
        if os.environ.get("TAWA_TRACEBACK"):
            raise
        error = e if isinstance(e, InternalError) else InternalError.wrap("tawa-opt", e)
        print(
            f"tawa-opt: {error} (a bug in tawa-xdsl; TAWA_TRACEBACK=1 shows the "
            "traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    return 0


if __name__ == "__main__":
    sys.exit(main())
