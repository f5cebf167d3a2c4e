"""Located diagnostics: `file:line:col: error: message` for the op at fault.

xDSL's parser keeps no source position for ops unless the text spells `loc(...)`,
and its verifier reports a failure by dumping the whole module. We record each
op's position while parsing (as a `FileLineColLoc`, which survives cloning through
passes) and, when verification or a pass fails, name the op and its line.

The parser also refuses, where they are written, inputs xDSL takes silently or
crashes on (literals out of their type's range, nesting past what the recursive
passes handle, bytes that are not UTF-8), and `verify_located` adds the checks
xDSL's verifier does not make (`ir_checks`: dominance, duplicate symbols, loop
steps).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType, TracebackType

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AnyDenseElement,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    RankedStructure,
    Signedness,
    StringAttr,
)
from xdsl.ir import Attribute, Operation
from xdsl.parser import AttrParser, Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Token
from xdsl.utils.mlir_lexer import MLIRTokenKind

from tawa_xdsl.target import INDEX_BITS

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


class KernelDiagnostics(DiagnosticException):
    """The refusals of several kernels of one module, reported together: each
    kernel is compiled on its own, so one refused kernel does not hide the
    next one's refusal (as mlir-opt reports every function a pass fails on)."""

    def __init__(self, errors: Sequence[DiagnosticException]):
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))


def each_kernel(
    kernels: Iterable[func.FuncOp], run: Callable[[func.FuncOp], None]
) -> None:
    """`run` on every kernel; the diagnostics of those it refuses are raised
    together once all ran, each naming its kernel when there are several.
    Anything else (a bug of ours) escapes at once."""
    kernels = list(kernels)
    errors: list[DiagnosticException] = []
    for kernel in kernels:
        try:
            run(kernel)
        except DiagnosticException as e:
            if isinstance(e, VerifyException | KernelDiagnostics):
                raise
            errors.append(e if len(kernels) == 1 else _naming(e, kernel))
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise KernelDiagnostics(errors)


def _naming(error: DiagnosticException, kernel: func.FuncOp) -> DiagnosticException:
    """`error`, its message naming `kernel` (unless it does already)."""
    name = f"@{kernel.sym_name.data}"
    if isinstance(error, OpDiagnostic):
        if name in error.message:
            return error
        named = OpDiagnostic(error.op, f"{error.message} (in kernel {name})")
    elif name in str(error):
        return error
    else:
        named = DiagnosticException(f"{error} (in kernel {name})")
    named.__cause__ = error.__cause__
    return named


def format_at(op: Operation, message: str) -> str:
    """`file:line:col: error: op.name: message` when the op has a location."""
    if not message.startswith(op.name):
        message = f"{op.name}: {message}"
    return f"{location_prefix(op)}error: {message}"


def location_prefix(op: Operation) -> str:
    """`file:line:col: ` of `op`'s source location or, for an op a pass made
    without one, of the nearest op around it that has one (its loop, its
    kernel): a diagnostic about it still points into the user's file. Nothing
    when no op around it has a location either."""
    found: Operation | None = op
    while found is not None:
        loc = found.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: "
        found = found.parent_op()
    return ""


class InternalError(Exception):
    """A bug of ours that escaped `stage` (a pass, the parser, a target), with the
    op it was working on when that is known."""

    def __init__(self, stage: str, message: str, op: Operation | None = None):
        super().__init__(
            f"{location_prefix(op) if op else ''}internal error in {stage}: {message}"
        )

    @classmethod
    def wrap(cls, stage: str, error: BaseException) -> InternalError:
        first_line = (str(error).strip().splitlines() or [""])[0]
        return cls(
            stage,
            f"{type(error).__name__}: {first_line}",
            op_at_fault(error.__traceback__),
        )


def op_at_fault(tb: TracebackType | None) -> Operation | None:
    """The op the innermost frame of `tb` was working on, if it has a location.

    Passes and the printer keep the op they handle in a local (`op`, `load`,
    `self` of an op method); the first located one from the inside out is the op
    an internal error is most likely about."""
    for frame in reversed(_frames(tb)):
        for value in frame.f_locals.values():
            if isinstance(value, Operation) and isinstance(
                value.location, FileLineColLoc
            ):
                return value
    return None


def failed_outside_our_code(tb: TracebackType | None) -> bool:
    """Whether the code `tb` ran, past its first frames (the driver's, ours),
    is none of ours: the failure is then in the code called (an xDSL pass),
    not in code of ours it called back (our ops' patterns or verifiers)."""
    frames = _frames(tb)
    while frames and _is_ours(frames[0]):
        frames.pop(0)
    return bool(frames) and not any(_is_ours(f) for f in frames)


def op_in_hand(tb: TracebackType | None) -> Operation | None:
    """The first op local of the innermost frame of `tb` that has one, located
    or not (a diagnostic about it is placed at the op around it)."""
    for frame in reversed(_frames(tb)):
        for value in frame.f_locals.values():
            if isinstance(value, Operation):
                return value
    return None


def _frames(tb: TracebackType | None) -> list[FrameType]:
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames


def _is_ours(frame: FrameType) -> bool:
    return frame.f_globals.get("__name__", "").partition(".")[0] == "tawa_xdsl"


def is_user_error(error: BaseException) -> bool:
    """What a pass or target raises on purpose about its input. A
    `VerifyException` escaping one is not: it was building invalid IR."""
    return isinstance(error, DiagnosticException) and not isinstance(
        error, VerifyException
    )


MAX_NESTING = 64
"""Deepest nesting of ops in regions we parse: far above any kernel (attention
nests 4), and low enough that the recursive parser, passes and printer stay
inside Python's stack."""

MODULE_NAMES = ("builtin.module", "module")
"""How a module op starts (`"builtin.module"` in the generic form, unquoted)."""

INDEX_WIDTH = IntegerType(INDEX_BITS, Signedness.SIGNED)
"""What `index` is where kernels run, signed: literals must fit it (2^32 was
printed into a 32-bit PTX instruction, and 2^31 would be negative there)."""

FLOAT_FORMATS: dict[type[Attribute], tuple[int, int]] = {
    Float16Type: (10, 15),
    BFloat16Type: (7, 127),
    Float32Type: (23, 127),
}
"""(fraction bits, largest exponent) of the float types narrower than a Python
float: where a decimal literal can overflow after it was read."""


def overflows(value: float, float_type: Attribute) -> bool:
    """Whether a finite `value` rounds to infinity in `float_type`: its magnitude
    reaches the largest finite value plus half an ulp (round to nearest even)."""
    if not math.isfinite(value) or type(float_type) not in FLOAT_FORMATS:
        return False
    fraction, exponent = FLOAT_FORMATS[type(float_type)]
    return abs(value) >= math.ldexp(2 - 2.0 ** -(fraction + 1), exponent)


def literal_problem(value: object, literal_type: Attribute) -> str | None:
    """Why a number as written does not fit the type it is given, or None: an
    integer out of its type's range (`index` is 32 bits on the GPU), a float that
    would round to infinity."""
    if isinstance(value, int) and isinstance(literal_type, IntegerType | IndexType):
        width = INDEX_WIDTH if isinstance(literal_type, IndexType) else literal_type
        try:
            width.verify_value(value)
        except VerifyException as e:
            note = (
                f" (index is {INDEX_BITS} bits on the GPU)"
                if width is INDEX_WIDTH
                else ""
            )
            return f"{e}{note}"
    elif isinstance(value, int | float) and overflows(float(value), literal_type):
        return f"float literal out of range for {literal_type}"
    return None


def decode_source(data: bytes, name: str) -> str:
    """UTF-8 text of a source file; other bytes get a located diagnostic."""
    try:
        return data.decode()
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise DiagnosticException(
            f"{name}:{line}:{col}: error: the input is not UTF-8 text "
            f"(byte 0x{data[e.start]:02x}); tawa-opt reads MLIR source"
        ) from None


def format_parse_error(e: ParseError) -> str:
    """`file:line:col: error: message`, then the source line with carets, the form
    every other diagnostic has (xDSL puts the message under the carets)."""
    loc = e.span.get_location()
    # xDSL's context starts with the location line, which leads here already
    context = e.span.print_with_context().rstrip("\n").split("\n", 1)[-1]
    return f"{loc.file}:{loc.line}:{loc.col}: error: {visible(e.msg)}\n{context}"


def visible(message: str) -> str:
    """`message` with the characters a terminal does not show (a NUL the lexer
    quotes as "Unexpected character: ") escaped, line breaks kept."""
    return "".join(
        c if c.isprintable() or c == "\n" else ascii(c)[1:-1] for c in message
    )


class LocatingParser(Parser):
    """A parser that stamps every op it parses with its file, line and column, and
    refuses, at the offending text, what xDSL's parser accepts silently or crashes
    on: literals out of their type's range, nesting too deep to process."""

    def __init__(
        self, ctx: Context, text: str, name: str = "<stdin>", line_offset: int = 0
    ):
        # a leading byte order mark (some editors write one) is no part of the
        # text: the lexer refused it as an invisible "unexpected character"
        text = text.removeprefix("\ufeff")
        super().__init__(ctx, text, name)
        self._file = StringAttr(name)
        self._line_offset = line_offset
        self._scan_pos = 0
        self._scan_line = 1
        self._text = text
        self._depth = 0
        self._last_number: int | float | None = None
        self._type: Attribute | None = None
        self._tensor_literal: list[AttrParser._TensorLiteralElement] = []

    def _line_col(self, pos: int) -> tuple[int, int]:
        if pos < self._scan_pos:
            self._scan_pos, self._scan_line = 0, 1
        self._scan_line += self._text.count("\n", self._scan_pos, pos)
        self._scan_pos = pos
        line_start = self._text.rfind("\n", 0, pos) + 1
        return self._scan_line + self._line_offset, pos - line_start + 1

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        if self._current_token.kind is MLIRTokenKind.EOF:  # xDSL: "Could not
            # parse entire input!" at the end of what may be a blank file
            self.raise_error("the input is empty: there is no op to read")
        # Some malformed input crashes inside xDSL (a value its attribute
        # constructors refuse, input nested past Python's stack) instead of raising
        # a ParseError; report it where the parser stopped.
        try:
            module = super().parse_module(allow_implicit_module)
        except RecursionError:
            self.raise_error("input nested too deeply to parse")
        except VerifyException as e:
            self.raise_error(str(e))
        except PARSER_CRASHES as e:
            self.raise_error(f"invalid input here ({type(e).__name__}: {e})")
        # xDSL has no hook for a dialect's argument attributes: kernels' tile.dims
        # are checked here, where every module enters (tawa-opt and the API)
        from tawa_xdsl.signature import verify_signatures

        verify_signatures(module)
        return module

    def _consume_token(
        self, expected_kind: MLIRTokenKind | None = None
    ) -> Token[MLIRTokenKind, str]:
        token = self._current_token
        if token.kind == MLIRTokenKind.FLOAT_LIT and math.isinf(
            token.kind.get_float_value(token.span)
        ):
            self.raise_error(
                f"float literal {token.text} is out of range: it would be infinity",
                token.span,
            )
        return super()._consume_token(expected_kind)

    def parse_optional_number(
        self, *, allow_boolean: bool = False
    ) -> int | float | None:
        # the literal as written, before xDSL rounds it into the attribute's type
        self._last_number = super().parse_optional_number(allow_boolean=allow_boolean)
        return self._last_number

    def parse_optional_builtin_int_or_float_attr(
        self,
    ) -> IntegerAttr | FloatAttr | None:
        literal = self._current_token.span
        self._last_number = None  # `true` and `false` are no number
        try:
            attr = super().parse_optional_builtin_int_or_float_attr()
        except VerifyException as e:  # an integer its type cannot hold
            self.raise_error(str(e), literal)
        except OverflowError:  # a float struct cannot pack into its type
            self.raise_error(f"float literal out of range for {self._type}", literal)
        # xDSL rounds the written value into the type (1e39 : bf16 becomes inf);
        # a hexadecimal literal spells the bits, an infinity included
        spells_bits = literal.text.lower().startswith("0x")
        if (
            isinstance(attr, IntegerAttr | FloatAttr)
            and not (spells_bits and isinstance(attr, FloatAttr))
            and (problem := literal_problem(self._last_number, attr.type))
        ):
            self.raise_error(problem, literal)
        return attr

    def _parse_attribute_type(self) -> Attribute:
        # the type of the literal being parsed, for the message if it overflows
        self._type = super()._parse_attribute_type()
        return self._type

    def _parse_dialect_type_or_attribute_body(self, *args, **kwargs):
        # A type whose parameters fail its verifier is a parse error at the type.
        start = self.pos
        try:
            return super()._parse_dialect_type_or_attribute_body(*args, **kwargs)
        except VerifyException as e:
            self.raise_error(str(e), start, self.pos)

    def _parse_tensor_literal(
        self,
    ) -> tuple[list[AttrParser._TensorLiteralElement], list[int]]:
        # kept for `_parse_dense_literal_type`, which learns the element type
        self._tensor_literal, shape = super()._parse_tensor_literal()
        return self._tensor_literal, shape

    def parse_dense_int_or_fp_elements_attr(
        self, type: RankedStructure[AnyDenseElement] | None
    ) -> DenseIntOrFPElementsAttr:
        self._tensor_literal = []
        return super().parse_dense_int_or_fp_elements_attr(type)

    def _parse_dense_literal_type(self) -> RankedStructure[AnyDenseElement]:
        # xDSL expands a splat literal element by element; refuse sizes no tile has
        # before that exhausts memory. Elements that overflow the element type
        # would become infinity (or crash while packed): refuse them where written.
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
        element_type = literal_type.get_element_type()
        for element in self._tensor_literal:
            if problem := literal_problem(element.value, element_type):
                self.raise_error(problem, element.span)
        return literal_type

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        # a module does not count: written or implicit, its ops nest the same
        level = self._current_token.text.strip('"') not in MODULE_NAMES
        if level and self._depth >= MAX_NESTING:
            self.raise_error(
                f"ops nested more than {MAX_NESTING} regions deep; tawa-xdsl "
                "handles at most that"
            )
        self._depth += level
        try:
            op = super().parse_operation()
        except VerifyException as e:
            # an operand or result type its format's constraints refuse (xDSL's
            # arith.sitofp on a tensor): at the op, named (it was reported at
            # the next op, without the name)
            line_end = self._text.find("\n", start)
            end = self.pos if line_end < 0 else min(self.pos, line_end)
            name = _op_name(self._text, start)
            hint = f"; {TILE_FORMS[name]}" if name in TILE_FORMS else ""
            self.raise_error(f"{name}: {e}{hint}", start, end)
        finally:
            self._depth -= level
        if op.name in SCALAR_ONLY_NAMES:
            self._refuse_on_tiles(op, start)
        if not isinstance(op.location, FileLineColLoc):
            line, col = self._line_col(start)
            op.location = FileLineColLoc(self._file, IntAttr(line), IntAttr(col))
        return op

    def _refuse_on_tiles(self, op: Operation, start: int) -> None:
        """An arith compare or select on tensors, refused where it is written:
        xDSL gives `arith.cmpf` of tiles an i1 result, so the tile.select
        reading it failed to parse, the error at that use, about its type."""
        from tawa_xdsl.ir_checks import tile_compares

        for _, problem in tile_compares(op):
            line_end = self._text.find("\n", start)
            self.raise_error(problem, start, self.pos if line_end < 0 else line_end)


SCALAR_ONLY_NAMES = frozenset({"arith.cmpf", "arith.cmpi", "arith.select"})
"""The ops `ir_checks.SCALAR_ONLY` takes on scalars only."""

TILE_FORMS = {
    "arith.sitofp": "it converts scalars; tile.sitofp converts i32 tiles to f32",
    "arith.fptosi": "it converts scalars; tile.fptosi converts f32 tiles to i32",
    "arith.fptoui": "it converts scalars; tile.fptoui converts f32 tiles to i32",
    "arith.extsi": (
        "it converts scalars; tile.extsi converts i8 tiles to i32 and i32 tiles to i64"
    ),
    "arith.trunci": (
        "it converts scalars; tile.trunci converts i32 tiles to i8 and i64 tiles to i32"
    ),
}
"""xDSL ops that take scalars only, with their tile forms (the parser refuses
them on tensors)."""


OP_NAME = re.compile(r'(?:%[^=]*=\s*)?"?([\w.$-]+)')
"""An op as written: its results (if any), `=`, then its name, quoted or not."""


def _op_name(text: str, start: int) -> str:
    """The name of the op written at `start` of `text`."""
    found = OP_NAME.match(text, start)
    return found.group(1) if found else "operation"


def _first_invalid_op(module: ModuleOp) -> tuple[Operation, str] | None:
    """The innermost op whose own checks fail, with the verifier's message.
    An op's own checks include its empty blocks, which xDSL checks in
    `Block.verify` (a body with no terminator), not in the op's."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
            for region in op.regions:
                for block in region.blocks:
                    if block.is_empty:  # verifies no nested op
                        block.verify()
        except VerifyException as e:
            message = str(e.args[0]) if e.args else str(e)
            return op, message.removeprefix("Operation does not verify: ")
    return None


def locate(error: VerifyException, module: ModuleOp) -> DiagnosticException:
    """Turn a module-level verification failure into a diagnostic at the op."""
    found = _first_invalid_op(module)
    return error if found is None else OpDiagnostic(*found)


def require_module(module: object, caller: str) -> ModuleOp:
    """`module`, if it is one: the API's functions that take a parsed module
    (`apply`, `interpret`, `simulate`) refuse text or a path by name, where
    they failed on an attribute of it."""
    if not isinstance(module, ModuleOp):
        raise TypeError(
            f"{caller} takes a module (tawa_xdsl.parse(text or Path)), got "
            f"{type(module).__name__}"
        )
    return module


def verify_located(module: ModuleOp) -> None:
    """`module.verify()` and the checks xDSL does not make (`ir_checks`: dominance,
    symbols, loop steps), where a failure names the op and its source line."""
    # imported here: the checks load arith, scf and tile, which `tawa-opt --help`
    # and `--version` do not need (parsed IR has loaded them already)
    from tawa_xdsl import ir_checks

    for op, message in ir_checks.problems(module):
        raise OpDiagnostic(op, message)
    try:
        module.verify()
    except VerifyException as e:
        raise locate(e, module) from e
    for op, message in ir_checks.problems_after_verify(module):
        raise OpDiagnostic(op, message)


@contextmanager
def in_pass(name: str) -> Iterator[None]:
    """Name the pass `name` in a refusal raised inside (by an analysis several
    passes share, such as the kernel plan or the consumer layouts): a
    compile() or pipeline user never wrote the pass down, and the analysis's
    own message cannot say which pass asked."""
    try:
        yield
    except OpDiagnostic as e:
        if e.message.startswith(f"{name}:") or e.message.startswith(f"{name} "):
            raise
        raise OpDiagnostic(e.op, f"{name}: {e.message}") from None


STAGE_ATTR = "tawa_stage"
"""Set on an exception by `stage`: the stage of a target it escaped from."""


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Name the stage an exception escapes from (the innermost one wins), so
    `tawa-opt` blames a bug inside a target (`-t ptx` runs several passes) on
    that stage rather than on the target as a whole."""
    try:
        yield
    except Exception as e:
        if not hasattr(e, STAGE_ATTR):
            setattr(e, STAGE_ATTR, name)
        raise
