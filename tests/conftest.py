"""Shared paths, and the test tiers.

Tiers (README, "Tests"):
- `pytest`: the fast tier, everything but the tests marked `slow`, with the
  "default" hypothesis profile; spread over the cores by pytest-xdist.
- `pytest -m slow`: only the slow tier (the fuzzer and other long searches).
- `pytest --slow`: both tiers; CI runs this with `--hypothesis-profile=ci`.

Hypothesis profiles set how hard every property test searches, so no test
hard-codes an example count: "default" is a quick smoke test for development,
"ci" what CI runs, "exhaustive" a long search to run before a release or after
touching a pass. Choose one with `--hypothesis-profile=NAME` (hypothesis' own
pytest option) or the environment variable HYPOTHESIS_PROFILE.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import settings
from xdsl.dialects.builtin import ModuleOp

from tawa_xdsl.api import parse
from tawa_xdsl.kernel import find_kernel
from tawa_xdsl.kernel_cache import CACHE_ENV

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.mlir"))

# deadline=None everywhere: an example's time depends on the machine's load (CI
# shares two cores), and a slow example is not a failure
settings.register_profile("default", max_examples=10, deadline=None)
settings.register_profile("ci", max_examples=15, deadline=None)
settings.register_profile("exhaustive", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@functools.cache
def _parsed_example(file: str) -> ModuleOp:
    return parse(EXAMPLES / file)


def example_module(file: str, kernel: str | None = None) -> ModuleOp:
    """A fresh module of the example `file`, or of its one kernel `kernel`.

    Each file is parsed once per test process (parsing attention.mlir costs more
    than a second on a loaded CI core, and dozens of tests read it); callers get
    a clone because passes change modules in place. A test about one kernel
    should ask for it alone: lowering one kernel of a four-kernel file is a
    quarter of the work."""
    module = _parsed_example(file)
    if kernel is None:
        return module.clone()
    return ModuleOp([find_kernel(module, kernel).clone()])


@pytest.fixture(autouse=True, scope="session")
def _kernel_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The tests' compiled kernels go to a cache of their own (each xdist worker
    has one), never to the user's (`tawa_xdsl.kernel_cache`); subprocesses
    (tawa-opt) inherit it. Tests of the cache itself use fresh directories."""
    patch = pytest.MonkeyPatch()
    patch.setenv(CACHE_ENV, str(tmp_path_factory.mktemp("kernel-cache")))
    yield
    patch.undo()


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A disk cache of compiled kernels of this test's own, empty at its start
    (`tmp_path`), so that the test sees its own compiles."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    return tmp_path


@pytest.fixture
def lowerings(monkeypatch: pytest.MonkeyPatch, fresh_cache: Path) -> list[Any]:
    """The options of every pipeline run the dispatcher makes, over a
    `fresh_cache`."""
    from tawa_xdsl import dispatch

    runs: list[Any] = []
    lower = dispatch.lower

    def counted(module: ModuleOp, options: Any) -> Any:
        runs.append(options)
        return lower(module, options)

    monkeypatch.setattr(dispatch, "lower", counted)
    return runs


class _Names:
    """A fake driver enum: every member is its own name."""

    def __getattr__(self, name: str) -> str:
        return name


class EncodedMap(NamedTuple):
    """One `cuTensorMapEncodeTiled` call, as the fake driver records it."""

    dtype: str
    ptr: int
    dims: list[int]
    strides: list[int]
    box: list[int]


@pytest.fixture
def encoded_maps(monkeypatch: pytest.MonkeyPatch) -> list[EncodedMap]:
    """A fake CUDA driver (no GPU here) whose `cuTensorMapEncodeTiled` records
    what the runtime asks of it, in order."""
    from tawa_xdsl.runtime import driver
    from tawa_xdsl.runtime import kernel as runtime_kernel

    calls: list[EncodedMap] = []

    def encode(
        dtype: str, rank: int, ptr: int, dims: Any, strides: Any, box: Any, *rest: Any
    ) -> tuple[int, object]:
        calls.append(EncodedMap(dtype, ptr, list(dims), list(strides), list(box)))
        return (0, object())

    fake: Any = type("Driver", (), {})()
    fake.CUresult = type("R", (), {"CUDA_SUCCESS": 0})
    for enum in (
        "CUtensorMapDataType",
        "CUtensorMapSwizzle",
        "CUtensorMapInterleave",
        "CUtensorMapL2promotion",
        "CUtensorMapFloatOOBfill",
    ):
        setattr(fake, enum, _Names())
    fake.cuuint64_t = fake.cuuint32_t = int
    fake.cuTensorMapEncodeTiled = encode
    monkeypatch.setattr(driver, "_driver", lambda: fake)
    monkeypatch.setattr(runtime_kernel, "context", lambda: (fake, None))
    return calls


SLOW = pytest.mark.slow


def two_loop_gemm() -> str:
    """tests/kernels/gemm_two_loops.mlir with `tile.dims` (M, N, K1, K2): a
    GEMM-like kernel the rules would split and the split-k pass refuses (two
    K loops into separate accumulators)."""
    text = (Path(__file__).parent / "kernels" / "gemm_two_loops.mlir").read_text()
    for arg, dims in (
        ("a1", '"M", "K1"'),
        ("b1", '"N", "K1"'),
        ("a2", '"M", "K2"'),
        ("b2", '"N", "K2"'),
        ("c", '"M", "N"'),
    ):
        text = re.sub(
            rf"(%{arg}: !tile.desc<[^>]*>)",
            rf"\1 {{tile.dims = [{dims}]}}",
            text,
            count=1,
        )
    return text


def sweep(
    cases: Sequence[tuple[Any, ...]],
    fast: Collection[tuple[Any, ...]],
    ids: Callable[[tuple[Any, ...]], str],
    slow: Collection[tuple[Any, ...]] | None = None,
) -> list[Any]:
    """Parameters of a test that sweeps configurations: the cases in `fast` run
    in the fast tier, the others are marked slow. The fast tier still lowers every
    kernel and exercises every feature once; CI (`--slow`) sweeps every case, or
    with `slow` given only those (the rest are marked exhaustive: a grid too
    large for CI's ten minutes, cut to a rotation that still reaches every
    kernel and every configuration)."""

    def marks(case: tuple[Any, ...]) -> Any:
        if case in fast:
            return ()
        return SLOW if slow is None or case in slow else pytest.mark.exhaustive

    return [pytest.param(*case, id=ids(case), marks=marks(case)) for case in cases]


def rotation(
    groups: Sequence[Any], choices: Sequence[Any], per_group: int
) -> set[tuple[Any, Any]]:
    """(group, choice) pairs giving each group `per_group` of `choices` in
    turn, so that together the groups reach every choice."""
    return {
        (g, choices[(i * per_group + j) % len(choices)])
        for i, g in enumerate(groups)
        for j in range(per_group)
    }


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        help="also run the tests marked slow (the fast tier is the default)",
    )
    parser.addoption(
        "--exhaustive",
        action="store_true",
        help="also run the exhaustive mutation sweeps (minutes; not in CI)",
    )


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Leave out the slow tier unless `--slow` is given, and the exhaustive
    sweeps unless `--exhaustive` is, or `-m` chooses tests itself (`-m slow`
    runs only the slow tier)."""
    if config.getoption("markexpr"):
        return
    left_out = [
        marker
        for marker, option in (("slow", "--slow"), ("exhaustive", "--exhaustive"))
        if not config.getoption(option)
    ]
    out = [i for i in items if any(i.get_closest_marker(m) for m in left_out)]
    if out:
        config.hook.pytest_deselected(items=out)
        items[:] = [
            i for i in items if not any(i.get_closest_marker(m) for m in left_out)
        ]
