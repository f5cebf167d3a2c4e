"""A structural pass given a kernel it has transformed already (`persistent`,
`cluster`, `split-k`, `stream-k` twice): with the same options it leaves the
kernel as it is (the output equals one run's); with other options it refuses
the kernel at its `func.func`, naming both, where the second run used to be
skipped silently. No GPU needed."""

from __future__ import annotations

import pytest
from xdsl.utils.exceptions import DiagnosticException

import tawa_xdsl

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
        "stream-k",
    ],
)
def test_the_same_options_again_change_nothing(once: str) -> None:
    assert lowered(f"{once},{once}") == lowered(once)


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        (
            "persistent,persistent{group-m=4}",
            r"gemm\.mlir:9:1: error: func\.func: persistent: kernel @gemm_nt is "
            r"persistent already, made so by persistent\{group-m=8 "
            r"longest-first=false dynamic=false\}; persistent\{group-m=4 "
            r"longest-first=false dynamic=false\} would walk its tiles otherwise",
        ),
        (
            "persistent{dynamic=true},persistent",
            r"made so by persistent\{group-m=8 longest-first=false dynamic=true\}",
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
    ],
)
def test_other_options_are_refused_naming_both(pipeline: str, message: str) -> None:
    with pytest.raises(DiagnosticException, match=message):
        lowered(pipeline)


def test_a_kernel_made_persistent_by_hand_is_refused() -> None:
    module = tawa_xdsl.apply(tawa_xdsl.parse(GEMM), "persistent")
    for op in module.walk():
        op.attributes.pop("tile.persistent_options", None)
    with pytest.raises(
        DiagnosticException,
        match=r"persistent already, made so without a record of its options",
    ):
        tawa_xdsl.apply(module, "persistent")
