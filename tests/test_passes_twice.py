"""A structural pass given a kernel it has transformed already (`persistent`,
`cluster`, `split-k`, `stream-k`, `pipeline`, `cooperative`, `register-budget`
twice): with the same options it leaves the kernel as it is (the output
equals one run's); with other options it refuses the kernel at its
`func.func`, naming both, where the second run used to be skipped silently,
replace the first silently (`cooperative`, `register-budget`) or, for
`pipeline`, compound the first into a deadlock. `reverse-grid`, whose second
run undoes or adds to the first, composes, checked against the interpreter.
No GPU needed."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.utils.exceptions import DiagnosticException

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16

from .conftest import EXAMPLES

GEMM = EXAMPLES / "gemm.mlir"


def lowered(pipeline: str) -> str:
    return str(tawa_xdsl.apply(tawa_xdsl.parse(GEMM), pipeline))


@pytest.mark.parametrize(
    "once",
    [
        "persistent{group-m=4}",
        "persistent{dynamic=true longest-first=true}",
        "cluster{size=2}",
        "split-k{splits=3}",
        "stream-k{group-m=4}",
        "aref-partition,pipeline{num-stages=4 mma-depth=2}",
        "aref-partition,cooperative{num-consumers=1}",
        "aref-partition,register-budget{producer=40 consumer=232}",
    ],
)
def test_the_same_options_again_change_nothing(once: str) -> None:
    last = once.split(",")[-1]
    assert lowered(f"{once},{last}") == lowered(once)


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        (
            "persistent,persistent{group-m=4}",
            r"gemm\.mlir:9:1: error: func\.func: persistent: kernel @gemm_nt went "
            r"through persistent\{group-m=8 longest-first=false dynamic=false\} "
            r"already; persistent\{group-m=4 longest-first=false dynamic=false\} "
            r"would transform it again: run persistent once",
        ),
        (
            "persistent{dynamic=true},persistent",
            r"through persistent\{group-m=8 longest-first=false dynamic=true\}",
        ),
        (
            "aref-partition,pipeline{num-stages=4 mma-depth=3},pipeline{num-stages=2}",
            r"gemm\.mlir:9:1: error: func\.func: pipeline: kernel @gemm_nt went "
            r"through pipeline\{num-stages=4 mma-depth=3 two-stage=false "
            r"outer-stages=2\} already; pipeline\{num-stages=2 mma-depth=1 "
            r"two-stage=false outer-stages=2\} would transform it again",
        ),
        (
            "cluster{size=2},cluster{size=4}",
            r"gemm\.mlir:9:1: error: func\.func: cluster: kernel @gemm_nt runs in "
            r"clusters of 2 already; cluster\{size=4\}",
        ),
        ("cluster{size=2},cluster{size=1}", r"cluster\{size=1\} would replace"),
        (
            "split-k{splits=2},split-k{splits=3}",
            r"gemm\.mlir:9:1: error: func\.func: split-k: kernel @gemm_nt_split_k is "
            r"the partials kernel of the pair split-k\{splits=2\} made of @gemm_nt; "
            r"split-k\{splits=3\} takes the original kernel",
        ),
        ("split-k{splits=2},stream-k", r"stream-k: kernel @gemm_nt_split_k is"),
        ("stream-k,split-k{splits=2}", r"pair stream-k made of @gemm_nt"),
        (
            "stream-k{group-m=4},stream-k",
            r"stream-k: kernel @gemm_nt_stream_k went through stream-k\{group-m=4\} "
            r"already; stream-k\{group-m=8\} would transform it again",
        ),
        (
            "aref-partition,cooperative{num-consumers=2},cooperative{num-consumers=1}",
            r"gemm\.mlir:9:1: error: func\.func: cooperative: kernel @gemm_nt went "
            r"through cooperative\{num-consumers=2\} already; "
            r"cooperative\{num-consumers=1\} would transform it again",
        ),
        (
            "aref-partition,register-budget{producer=40 consumer=232},"
            "register-budget{producer=24 consumer=240}",
            r"gemm\.mlir:9:1: error: func\.func: register-budget: kernel @gemm_nt "
            r"went through register-budget\{producer=40 consumer=232\} already; "
            r"register-budget\{producer=24 consumer=240\} would transform it again",
        ),
    ],
)
def test_other_options_are_refused_naming_both(pipeline: str, message: str) -> None:
    with pytest.raises(DiagnosticException, match=message):
        lowered(pipeline)


def test_options_resolved_alike_are_the_same_run() -> None:
    """`cooperative` resolves N from the tile rows (2 for 128): given N = 2
    after it, it has nothing to do; so has `register-budget` given the
    budgets it defaulted to."""
    once = lowered("aref-partition,cooperative,register-budget")
    again = lowered(
        "aref-partition,cooperative,register-budget,cooperative{num-consumers=2},"
        "register-budget{producer=24 consumer=240}"
    )
    assert again == once


def test_a_kernel_made_persistent_by_hand_is_refused() -> None:
    module = tawa_xdsl.apply(tawa_xdsl.parse(GEMM), "persistent")
    for op in module.walk():
        op.attributes.pop("tile.persistent_options", None)
    with pytest.raises(
        DiagnosticException,
        match=r"went through persistent without a record of its options "
        r"\(tile\.persistent_options\) already",
    ):
        tawa_xdsl.apply(module, "persistent")


@pytest.mark.parametrize(
    "pipeline",
    [
        "reverse-grid,reverse-grid",
        "reverse-grid{axis=x},reverse-grid{axis=y}",
    ],
)
def test_passes_run_twice_that_compose_compute_the_same(pipeline: str) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 300)).astype(bfloat16)
    b = rng.standard_normal((300, 300)).astype(bfloat16)
    expected = np.zeros((200, 300), dtype=bfloat16)
    tawa_xdsl.interpret(tawa_xdsl.parse(GEMM), "gemm_nt", a, b, expected, grid=(2, 3))
    module = tawa_xdsl.apply(tawa_xdsl.parse(GEMM), pipeline)
    for seed in range(2):
        c = np.zeros_like(expected)
        tawa_xdsl.simulate(module, "gemm_nt", a, b, c, grid=(2, 3), seed=seed)
        assert np.array_equal(c.view(np.uint16), expected.view(np.uint16))


@pytest.mark.parametrize(
    ("made", "kernel", "given", "message"),
    [
        (
            "split-k{splits=2}",
            "gemm_nt_split_k",
            {"stream_k": True},
            "stream_k=True given: stream-k: kernel @gemm_nt_split_k is the partials "
            "kernel of the pair split-k{splits=2} made of @gemm_nt",
        ),
        (
            "stream-k",
            "gemm_nt_stream_k",
            {"split_k": 3},
            "split_k=3 given: split-k: kernel @gemm_nt_stream_k is the partials "
            "kernel of the pair stream-k made of @gemm_nt",
        ),
        (
            "split-k{splits=2}",
            "gemm_nt_split_k_reduce",
            {"split_k": 3},
            "split_k=3 given: split-k: kernel @gemm_nt_split_k_reduce is the reduce "
            "kernel of the pair split-k{splits=2}",
        ),
    ],
)
def test_compile_refuses_to_cut_a_kernel_of_a_pair_again(
    made, kernel, given, message
) -> None:
    """compile() of a pair's kernel given another K cut ran the kernel as it
    was, its options saying it was cut (as the passes refuse the order,
    `split-k` after `stream-k` or the reverse); the cut that made the pair
    is the same run and compiles."""
    text = lowered(made)
    with pytest.raises(DiagnosticException, match=re.escape(message)):
        tawa_xdsl.compile(text, kernel, **given)
    same = {"split_k": 2} if made.startswith("split") else {"stream_k": True}
    tawa_xdsl.compile(text, kernel, **same)
