"""`tawa-opt`: xDSL's opt driver with every xDSL dialect and pass plus ours.

Every failure a user can cause (unparsable or ill-typed IR, an unknown pass, bad
pass options, a pass that cannot handle a kernel, a missing file) is reported as
one located diagnostic on stderr with exit code 1, never as a Python traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.metadata import version
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    VerifyException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from tawa_xdsl import examples, registry
from tawa_xdsl.diagnostics import LocatingParser, locate


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
        self.available_targets.update(registry.all_targets())

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        """A bare example name (`tawa-opt gemm.mlir`) that is no file here reads the
        bundled example, so the examples work after a non-editable install."""
        if self.args.input_file is not None:
            self.args.input_file = examples.resolve(self.args.input_file)
        return super().get_input_stream()

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def _parse_mlir(self, io: IO[bytes]) -> ModuleOp:
        text = io.read().decode()
        parser = LocatingParser(
            self.ctx, text, self.get_input_name(), getattr(self, "_line_offset", 0)
        )
        return parser.parse_module(not self.args.no_implicit_module)

    def apply_passes(self, prog: ModuleOp) -> None:
        try:
            super().apply_passes(prog)
        except VerifyException as e:
            raise locate(e, prog) from e


USER_ERRORS = (
    ParseError,
    DiagnosticException,
    ArgSpecParseError,
    ValueError,
    OSError,
    UnicodeDecodeError,
)


def main(args: Sequence[str] | None = None) -> int:
    """Run the driver; user errors print a diagnostic and return 1."""
    try:
        TawaOptMain(args=args).run()
    except USER_ERRORS as e:
        print(f"tawa-opt: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a compiler bug: one line, the traceback on request
        if os.environ.get("TAWA_TRACEBACK"):
            raise
        print(
            f"tawa-opt: internal error: {type(e).__name__}: {e} "
            "(a bug in tawa-xdsl; TAWA_TRACEBACK=1 shows the traceback)",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
