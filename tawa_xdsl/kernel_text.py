"""The text of one kernel out of a module's text, so that compiling a kernel
parses that kernel and not every kernel of its file.

Parsing is the largest stage of a compile (xDSL's declarative-format parser in
Python: about 0.07 s per attention kernel on two cores), and example files hold
four to six kernels. `only_kernel` blanks every other top-level `func.func`
of the module, keeping each of its newlines, so what is left parses to a module
with the one kernel whose ops sit at the lines and columns they have in the file.

The split is a scan of braces outside string literals and comments; other
top-level ops stay. It gives up (returns None) wherever it cannot be sure:
unbalanced braces, a kernel name found not exactly once at the top level. The
caller then parses the whole text, and it does so too when the one kernel does
not parse alone (say it names a symbol of the blanked text), so a diagnostic is
always the one the whole file gives.
"""

from __future__ import annotations

import re

_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|[{}()]|\bfunc\.func\b')
_NAME = re.compile(
    r'\s+(?:(?:private|public|nested)\s+)?@("(?:[^"\\\n]|\\.)*"|[\w$.-]+)'
)
_MODULE = re.compile(r"\s*(?://[^\n]*\s*)*(?:builtin\.)?module\b")


def only_kernel(text: str, name: str) -> str | None:
    """`text` with every top-level `func.func` but `@name` blanked (newlines
    kept), or None where the scan cannot tell the kernels apart."""
    top = 1 if _MODULE.match(text) else 0
    spans = _kernel_spans(text, top)
    if spans is None or [n for n, _, _ in spans].count(name) != 1:
        return None
    pieces, last = [], 0
    for kernel, start, stop in spans:
        if kernel != name:
            pieces += [text[last:start], "\n" * text.count("\n", start, stop)]
            last = stop
    return "".join(pieces) + text[last:]


def _kernel_spans(text: str, top: int) -> list[tuple[str, int, int]] | None:
    """(name, start, end) of each top-level `func.func`, or None."""
    depth, parens, opened = 0, 0, []
    braces: list[tuple[int, int]] = []  # top-level {...} outside parentheses
    funcs: list[tuple[str, int, int]] = []  # name, start, end of the name
    for token in _TOKENS.finditer(text):
        kind = token.group()
        if kind == "{":
            depth += 1
            opened.append((token.start(), parens))
        elif kind == "}":
            depth -= 1
            if depth < 0 or not opened:
                return None
            start, in_parens = opened.pop()
            if depth == top and not in_parens:
                braces.append((start, token.end()))
        elif kind in "()" and depth == top:
            parens += 1 if kind == "(" else -1
        elif kind == "func.func" and depth == top and not parens:
            found = _NAME.match(text, token.end())
            if found is None:
                return None
            funcs.append((found.group(1).strip('"'), token.start(), found.end()))
    if depth != 0 or parens:
        return None
    spans = []
    for name, start, after_name in funcs:
        # the body is the first top-level {...} after the signature, or the one
        # after `attributes {...}`
        later = [b for b in braces if b[0] > after_name]
        if not later:
            return None
        if text[after_name : later[0][0]].rstrip().endswith("attributes"):
            later = later[1:]
        if not later:
            return None
        spans.append((name, start, later[0][1]))
    ends = [end for _, _, end in spans]
    starts = [start for _, start, _ in spans[1:]]
    if any(end > nxt for end, nxt in zip(ends, starts, strict=False)):
        return None
    return spans
