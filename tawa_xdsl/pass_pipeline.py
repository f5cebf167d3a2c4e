"""Pass pipelines from `-p` text, with errors that name what the user wrote.

xDSL's `PassPipeline.parse_spec` answers a bad option with its Python types
(`Incompatible types: given ('x',), expected <class 'int'>`) and an unknown pass
or option with a bare `ValueError`; here each becomes a `PassOptionError` that
quotes the pass and option as spelled (`pipeline{num-stages=x}: num-stages takes
an integer, got x`). Named pipelines (`tawa-hopper-pipeline`) call the driver's
callback between the passes they run (for each kernel, whose options may
differ), so the driver times, dumps and verifies each one and an error is
blamed on the pass that made it.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable
from typing import (
    Any,
    Protocol,
    TypeVar,
    get_args,
    get_type_hints,
    runtime_checkable,
)

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipelineCallbackType
from xdsl.utils.arg_spec import (
    ArgSpec,
    ArgSpecConvertible,
    PipelineLexer,
    SpecTokenKind,
    parse_pipeline,
)
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException

PassFactories = dict[str, Callable[[], type[ModulePass]]]

TYPE_WORDS: dict[str, str] = {
    "int": "an integer",
    "bool": "true or false",
    "float": "a number",
    "str": "a string",
}


class PassOptionError(DiagnosticException):
    """A pass pipeline that names an unknown pass or gives an option a bad value."""


class OptionValueError(ValueError, DiagnosticException):
    """Option values of the right types that a pass refuses when it is built
    (`CompileOptions`: split_k -1, or a split and a stream both given); its
    message says why, and is what `-p` reports. A diagnostic too, as the
    passes' own option checks are, so `compile()` refuses every bad option
    value with one kind of error."""


@runtime_checkable
class NamedPipeline(Protocol):
    """A pass that is a sequence of other passes (`tawa-hopper-pipeline`)."""

    def run(
        self, ctx: Context, op: ModuleOp, between: PassPipelineCallbackType | None
    ) -> None:
        """Apply, calling `between` around each pass as `PassPipeline` does."""
        ...


@runtime_checkable
class ChecksOptions(Protocol):
    """A pass whose option values can be refused before it sees any IR."""

    def check_options(self) -> None:
        """Raise a `PassFailedException` naming the option that is out of range."""
        ...


@dataclasses.dataclass(frozen=True)
class Stepped(ModulePass):
    """A named pipeline whose passes are each followed by `between`."""

    pipeline: ModulePass
    between: PassPipelineCallbackType

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.pipeline.name

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        assert isinstance(self.pipeline, NamedPipeline)
        self.pipeline.run(ctx, op, self.between)


Configured = TypeVar("Configured", bound=ArgSpecConvertible)


def build_passes(
    available: PassFactories,
    text: str,
    between: PassPipelineCallbackType | None = None,
) -> list[ModulePass]:
    """The passes `text` (`-p` syntax) names; named pipelines call `between`
    after each pass they run."""
    try:
        specs = list(parse_pipeline(text))
    except ArgSpecParseError as e:
        raise PassOptionError(str(e)) from None
    if repeated := _repeated_option(text):
        raise PassOptionError(repeated)
    passes: list[ModulePass] = []
    for spec in specs:
        if spec.name not in available:
            close = difflib.get_close_matches(spec.name, available, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise PassOptionError(f"unknown pass '{spec.name}'{hint}")
        p = instantiate(available[spec.name](), spec)
        stepped = between is not None and isinstance(p, NamedPipeline)
        passes.append(Stepped(p, between) if stepped else p)
    return passes


def check_input(upcoming: ModulePass | None, module: ModuleOp) -> None:
    """Before a pass: refuse a kernel at a level it does not take, or holding
    an op no level compiles (`analysis.levels`); the drivers call this between
    passes, so each pass states its level once, in one table."""
    if upcoming is not None:
        from tawa_xdsl.analysis.levels import check_pass_input

        check_pass_input(upcoming.name, module)


def verify_after(
    done: ModulePass | None, module: ModuleOp, *, in_pipeline: bool = False
) -> None:
    """Verify `module` (`verify_located`) after the pass `done`, or before the
    first (None). A failure after one of our passes is that pass's bug, an
    `InternalError` naming it, never a diagnostic the user would take for one
    about the input; after one of xDSL's that the user ran (which do not know
    our ops' rules: convert-scf-to-cf splits a role's region into blocks) a
    diagnostic at the op, naming the pass, as a pass run where it does not
    apply. The cleanups a named pipeline of ours runs (`in_pipeline`) are ours:
    canonicalize applies our ops' patterns."""
    from tawa_xdsl import registry
    from tawa_xdsl.diagnostics import InternalError, OpDiagnostic, verify_located

    try:
        verify_located(module)
    except OpDiagnostic as e:
        if done is None:
            raise  # the input: the user's to fix
        if not in_pipeline and done.name not in registry.all_passes():
            raise OpDiagnostic(
                e.op,
                f"{done.name} (an xDSL pass) left IR that does not verify: {e.message}",
            ) from e
        raise InternalError(
            done.name, f"left invalid IR: {e.op.name}: {e.message}", e.op
        ) from e
    except DiagnosticException as e:
        if done is None:
            raise
        raise InternalError.wrap(done.name, e) from e


def pass_failure(
    name: str, error: Exception, *, in_pipeline: bool = False
) -> Exception:
    """What the pass `name` raising `error` (no diagnostic) is reported as: a
    bug of ours, an `InternalError` at the op, unless the pass is one of
    xDSL's that the user ran (not a cleanup our pipeline runs) and it failed in
    xDSL's code alone. That pass does not take this IR (xDSL's
    test-constant-folding asserts that each arith.addi adds two constants):
    a diagnostic at the op it was on, naming the pass, as when such a pass
    leaves invalid IR (`verify_after`). Our code that an xDSL pass calls (our
    ops' canonicalization patterns, verifiers) stays ours."""
    from tawa_xdsl import registry
    from tawa_xdsl.diagnostics import (
        InternalError,
        OpDiagnostic,
        failed_outside_our_code,
        op_in_hand,
    )

    xdsl_pass = name in registry.all_passes_with_xdsl() and not (
        in_pipeline or name in registry.all_passes()
    )
    tb = error.__traceback__
    if not xdsl_pass or not failed_outside_our_code(tb):
        return InternalError.wrap(name, error)
    first_line = (str(error).strip().splitlines() or [""])[0]
    why = type(error).__name__ + (f": {first_line}" if first_line else "")
    op = op_in_hand(tb)
    failed = f"{name} (an xDSL pass) failed{' on this op' if op else ''}"
    message = f"{failed} ({why}): it does not take this IR"
    return DiagnosticException(message) if op is None else OpDiagnostic(op, message)


def instantiate(cls: type[Configured], spec: ArgSpec) -> Configured:
    """`cls` (a pass or a target) configured by `spec`; a bad option is reported
    as written."""
    problem = _option_problem(cls, spec)
    if problem is None:
        try:
            return cls.from_spec(spec)
        except (ValueError, TypeError) as e:  # values the class refuses together
            problem = f"{spec}: {e}"
    raise PassOptionError(problem)


def _option_problem(cls: type[ArgSpecConvertible], spec: ArgSpec) -> str | None:
    """What is wrong with the options of `spec` one by one: an unknown name, or
    a value not of the option's type. xDSL takes `true` for an integer (a bool
    is an int in Python) and nothing at all for an optional one (as unset), so
    each option must be one value of exactly its type."""
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    hints = get_type_hints(cls)
    for name, values in spec.parameters.items():
        written = f"{spec.name}{{{_spelled(name, values)}}}"
        field = fields.get(name.replace("-", "_"))
        if field is None:
            options = ", ".join(map(option_name, fields)) or "no options"
            return f"{written}: {spec.name} has no option '{name}' (it takes {options})"
        kinds = get_args(hints[field.name]) or (hints[field.name],)
        if len(values) != 1 or type(values[0]) not in kinds:
            got = ",".join(_value(v) for v in values) or "nothing"
            return f"{written}: {name} takes {_type_words(field.type)}, got {got}"
    for name, field in fields.items():
        given = option_name(name) in spec.parameters
        if not given and field.default is field.default_factory is dataclasses.MISSING:
            return (
                f"{spec.name} needs option {option_name(name)}, "
                f"{_type_words(field.type)}: {spec.name}{{{option_name(name)}=...}}"
            )
    return None


def _repeated_option(text: str) -> str | None:
    """The first option `text` (a valid `-p` pipeline) gives one pass twice,
    which xDSL would take silently, the last value winning."""
    lexer = PipelineLexer(text)
    pass_name, seen, inside, previous = "", set[str](), False, None
    while (token := lexer.lex()).kind is not SpecTokenKind.EOF:
        kind, spelled = token.kind, token.span.text
        if kind is SpecTokenKind.IDENT and not inside:
            pass_name, seen = spelled, set()
        elif kind is SpecTokenKind.IDENT and previous in OPTION_STARTS:
            if option_name(spelled) in seen:
                return f"{pass_name}: option {option_name(spelled)} is given twice"
            seen.add(option_name(spelled))
        inside = kind is not SpecTokenKind.R_BRACE and (
            inside or kind is SpecTokenKind.L_BRACE
        )
        previous = kind
    return None


OPTION_STARTS = (SpecTokenKind.L_BRACE, SpecTokenKind.SPACE)
"""The tokens after which an option's name comes, inside a pass's braces."""


def _type_words(t: object) -> str:
    """What an option of type `t` takes, in words: `int | None` (unset: the
    tuned default) is written as an integer."""
    spelled = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    names = [n.strip() for n in spelled.split("|") if n.strip() != "None"]
    return " or ".join(TYPE_WORDS.get(n, f"a {n}") for n in names)


def spelled_pass(p: ModulePass) -> str:
    """`p` as `-p` spells it, every option given: `persistent{group-m=8
    longest-first=false dynamic=false}` (for messages and records)."""
    options = " ".join(
        f"{option_name(f.name)}={_value(getattr(p, f.name))}"
        for f in dataclasses.fields(p)
        if f.init
    )
    return f"{p.name}{{{options}}}" if options else p.name


def option_name(field_name: str) -> str:
    """How the option held in a pass's field is written: `num-stages`."""
    return field_name.replace("_", "-")


def _spelled(name: str, values: list[Any]) -> str:
    return f"{name}={','.join(_value(v) for v in values)}" if values else name


def _value(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)
