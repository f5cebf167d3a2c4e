"""Located diagnostics: `file:line:col: error: message` for the op at fault.

xDSL's parser keeps no source position for ops unless the text spells `loc(...)`,
and its verifier reports a failure by dumping the whole module. We record each
op's position while parsing (as a `FileLineColLoc`, which survives cloning through
passes) and, when verification or a pass fails, name the op and its line.
"""

from __future__ import annotations

import math

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, VerifyException

MAX_DENSE_ELEMENTS = 1 << 24
"""Largest dense literal we parse: far above any tile (a 256 x 256 tile is 2^16)."""


PARSER_CRASHES = (
    ArithmeticError,
    ValueError,
    IndexError,
    KeyError,
    TypeError,
    MemoryError,
)
"""Exceptions xDSL's parser lets escape on malformed input."""


class OpDiagnostic(DiagnosticException):
    """An error a pass or a checker reports against one op."""

    def __init__(self, op: Operation, message: str):
        self.op = op
        self.message = message
        super().__init__(format_at(op, message))


def format_at(op: Operation, message: str) -> str:
    """`file:line:col: error: op.name: message` when the op has a location."""
    loc = op.location
    where = ""
    if isinstance(loc, FileLineColLoc):
        where = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: "
    if not message.startswith(op.name):
        message = f"{op.name}: {message}"
    return f"{where}error: {message}"


class LocatingParser(Parser):
    """A parser that stamps every op it parses with its file, line and column."""

    def __init__(
        self, ctx: Context, text: str, name: str = "<stdin>", line_offset: int = 0
    ):
        super().__init__(ctx, text, name)
        self._file = StringAttr(name)
        self._line_offset = line_offset
        self._scan_pos = 0
        self._scan_line = 1
        self._text = text

    def _line_col(self, pos: int) -> tuple[int, int]:
        if pos < self._scan_pos:
            self._scan_pos, self._scan_line = 0, 1
        self._scan_line += self._text.count("\n", self._scan_pos, pos)
        self._scan_pos = pos
        line_start = self._text.rfind("\n", 0, pos) + 1
        return self._scan_line + self._line_offset, pos - line_start + 1

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        # Some malformed literals crash inside xDSL (a float too large for f32, an
        # integer too wide for its type) instead of raising a ParseError; report
        # them where the parser stopped.
        try:
            module = super().parse_module(allow_implicit_module)
        except PARSER_CRASHES as e:
            self.raise_error(f"invalid input here ({type(e).__name__}: {e})")
        # xDSL has no hook for a dialect's argument attributes: kernels' tile.dims
        # are checked here, where every module enters (tawa-opt and the API)
        from tawa_xdsl.signature import verify_signatures

        verify_signatures(module)
        return module

    def _parse_dialect_type_or_attribute_body(self, *args, **kwargs):
        # A type whose parameters fail its verifier is a parse error at the type.
        start = self.pos
        try:
            return super()._parse_dialect_type_or_attribute_body(*args, **kwargs)
        except VerifyException as e:
            self.raise_error(str(e), start, self.pos)

    def _parse_dense_literal_type(self):
        # xDSL expands a splat literal element by element; refuse sizes no tile has
        # before that exhausts memory.
        pos = self.pos
        literal_type = super()._parse_dense_literal_type()
        count = math.prod(literal_type.get_shape())
        if count > MAX_DENSE_ELEMENTS:
            self.raise_error(
                f"dense literal of {count} elements; tiles hold at most "
                f"{MAX_DENSE_ELEMENTS}",
                pos,
                self.pos,
            )
        return literal_type

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        if not isinstance(op.location, FileLineColLoc):
            line, col = self._line_col(start)
            op.location = FileLineColLoc(self._file, IntAttr(line), IntAttr(col))
        return op


def _first_invalid_op(module: ModuleOp) -> tuple[Operation, str] | None:
    """The innermost op whose own checks fail, with the verifier's message."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            message = str(e.args[0]) if e.args else str(e)
            return op, message.removeprefix("Operation does not verify: ")
    return None


def locate(error: VerifyException, module: ModuleOp) -> DiagnosticException:
    """Turn a module-level verification failure into a diagnostic at the op."""
    found = _first_invalid_op(module)
    return error if found is None else OpDiagnostic(*found)


def verify_located(module: ModuleOp) -> None:
    """`module.verify()`, but a failure names the op and its source line."""
    try:
        module.verify()
    except VerifyException as e:
        raise locate(e, module) from e
