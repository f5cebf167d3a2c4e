"""Parsing one kernel of a file (`kernel_text.only_kernel`, `api.parse_kernel`):
the kernel parses to the same IR at the same lines and columns as in the whole
file, and wherever the split cannot be sure the whole file decides."""

from __future__ import annotations

import pytest
from xdsl.utils.exceptions import DiagnosticException, ParseError

from tawa_xdsl.api import parse, parse_kernel
from tawa_xdsl.compiler import compile
from tawa_xdsl.kernel import kernels
from tawa_xdsl.kernel_text import only_kernel

from .conftest import EXAMPLES

GEMM = (EXAMPLES / "gemm.mlir").read_text()
"""Four kernels of an implicit module, with argument attributes in parentheses."""


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.mlir")), ids=lambda p: p.name)
def test_each_example_kernel_parses_alone_as_in_its_file(path) -> None:
    text = path.read_text()
    whole = parse(text, str(path))
    for kernel in kernels(whole):
        name = kernel.sym_name.data
        assert only_kernel(text, name) is not None
        alone = list(kernels(parse_kernel(text, name, str(path))))
        assert [k.sym_name.data for k in alone] == [name]
        assert str(alone[0]) == str(kernel)
        assert [str(o.location) for o in alone[0].walk()] == [
            str(o.location) for o in kernel.walk()
        ]


def test_braces_in_strings_and_comments_do_not_split() -> None:
    other = '// } a brace in a comment {\n"test.op"() {s = "}{"} : () -> ()\n'
    text = GEMM.replace("func.func @gemm_nn(", other + "func.func @gemm_nn(")
    kept = only_kernel(text, "gemm_nn")
    assert kept is not None and "@gemm_nt(" not in kept and "@gemm_nn(" in kept
    assert '"test.op"' in kept  # not a kernel: it stays
    assert kept.count("\n") == text.count("\n")
    explicit = "module {\n" + text + "}\n"
    assert only_kernel(explicit, "gemm_nn") == "module {\n" + kept + "}\n"


def test_the_whole_file_decides_where_the_split_is_unsure() -> None:
    twice = GEMM + GEMM[GEMM.index("func.func @gemm_nn(") :]
    assert only_kernel(twice, "gemm_nn") is None  # a duplicate
    assert only_kernel(GEMM, "gemm") is None  # not there
    assert only_kernel(GEMM.rstrip()[:-1], "gemm_nt") is None  # unbalanced
    with pytest.raises(DiagnosticException, match="gemm_nn"):
        parse_kernel(twice, "gemm_nn")


def test_a_kernel_is_compiled_without_the_others_of_its_file() -> None:
    # a wrong kernel does not stop another of its file; it is located in the
    # file when it is compiled
    nn = GEMM.index("func.func @gemm_nn(")
    text = GEMM[:nn] + GEMM[nn:].replace("tile.store", "tile.storx", 1)
    assert compile(text, "gemm_nt").tile_kernel.sym_name.data == "gemm_nt"
    with pytest.raises(ParseError, match=r"tile\.storx"):
        compile(text, "gemm_nn")
