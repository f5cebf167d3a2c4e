"""Autotuning's search and bookkeeping on the CPU (`tawa_xdsl.autotune`), with
a fake bench in place of the GPU: the candidates, one progress line each, the
skipped ones, the winner stored with its PTX so a second process neither
searches nor compiles. The timing loop itself runs in tests/gpu."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tawa_xdsl.autotune import CudaBench, Mismatch, candidates, search
from tawa_xdsl.compiler import CompileOptions, describe
from tawa_xdsl.dispatch import Dispatcher
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.kernel import KernelArgumentError
from tawa_xdsl.kernel_cache import LAYOUT

from .conftest import example_module, two_loop_gemm

TEXT = str(example_module("gemm.mlir", "gemm_nt"))
ARGS = [np.zeros(s, bfloat16) for s in ((512, 4096), (4096, 4096), (512, 4096))]
SHAPE = {"M": 512, "N": 4096, "K": 4096}


class FakeBench:
    """Times each kernel by its options: `times` maps configuration names
    (`describe`) to milliseconds; the rest take 1 ms; `wrong` ones mismatch."""

    def __init__(self, times: dict[str, float], wrong: set[str] = frozenset()) -> None:
        self.times, self.wrong = times, wrong
        self.referenced: list[str] = []

    def reference(self, kernel: Any) -> None:
        self.referenced.append(describe(kernel.options))

    def time(self, kernel: Any) -> float:
        label = describe(kernel.options)
        if label in self.wrong:
            raise Mismatch(f"{kernel.name}: output differs")
        return self.times.get(label, 1.0)


class NoBench:
    def __init__(self, *args: Any) -> None:
        raise AssertionError("searched although a winner was stored")


def tuner(
    bench: Any,
    lines: list[str],
    source: str = TEXT,
    kernel: str = "gemm_nt",
    options: CompileOptions | None = None,
) -> Dispatcher:
    """A dispatcher of `kernel` that autotunes with `bench` (made from a call's
    arguments), its report lines appended to `lines`."""
    return Dispatcher(
        source,
        kernel,
        options or CompileOptions(),
        autotune=True,
        bench=bench,
        report=lines.append,
    )


def configurations(**given: Any) -> list[CompileOptions]:
    options = CompileOptions(**given)
    d = Dispatcher(TEXT, "gemm_nt", options)
    key = d.key_for(**SHAPE)
    kernel = d.tile_kernel
    return candidates(
        d.structure,
        key.problem,
        options.given(),
        132,
        d.plan(key).decision,
        lambda shaped: options.resolve(kernel, shaped),
    )


def test_the_space_is_the_rules_choice_its_alternatives_and_neighbours() -> None:
    found = configurations()
    names = [describe(c.as_dict()) for c in found]
    assert names[0] == "D5-P1-W2-BN128"  # the rules' choice: 128x128, one wave
    assert len(set(names)) == len(names)
    assert "D3-P1-W2-BN256" in names  # the tuned tile: 64 tiles, not persistent
    assert "D4-P1-W1-BM64-BN256" in names and "D6-P1-W1-BM64-BN128-pers-g16" in names
    for neighbour in ("D4-P1-W2-BN128", "D6-P1-W2-BN128", "D5-P2-W2-BN128"):
        assert neighbour in names
    assert "D5-P1-W2-BN128-pers-g16" in names  # persistent flipped
    fixed = configurations(num_stages=4, persistent=False)
    assert {(c.num_stages, c.persistent) for c in fixed} == {(4, False)}


def test_the_fastest_candidate_wins_and_is_stored(lowerings: list[Any]) -> None:
    lines: list[str] = []
    bench = FakeBench(
        {"D4-P1-W1-BM64-BN256": 0.5, "D4-P1-W2-BN128": 0.1}, wrong={"D4-P1-W2-BN128"}
    )
    d = tuner(lambda values, grid, stream: bench, lines)
    spec = d.specialize(*ARGS)
    assert bench.referenced == ["D5-P1-W2-BN128"]  # the rules' choice
    assert describe(spec.options) == "D4-P1-W1-BM64-BN256"
    assert spec.origin == "autotune, compiled"
    assert lines[0].startswith("@gemm_nt [M in (448, 512]") and "candidates" in lines[0]
    assert len(lines) == 1 + len(spec.trials) == 1 + len(configurations())
    assert lines[1] == f"[1/{len(spec.trials)}] D5-P1-W2-BN128: 1.0000 ms"
    (skipped,) = [t for t in spec.trials if t.ms is None]
    assert skipped.label == "D4-P1-W2-BN128" and "Mismatch" in skipped.error
    assert any("D4-P1-W2-BN128: skipped (Mismatch" in line for line in lines)
    explained = d.explain()
    assert "tried D4-P1-W1-BM64-BN256: 0.5000 ms (chosen)" in explained
    assert "block_m = 64 (autotune)" in explained
    assert d.specialize(*ARGS) is spec  # once per bucket
    compiled = len(lowerings)

    again = tuner(NoBench, lines)  # another process: the stored winner, its PTX
    stored = again.specialize(*ARGS)
    assert stored.options == spec.options and stored.ptx == spec.ptx
    assert stored.origin == "autotune (stored), disk cache"
    assert len(lowerings) == compiled
    assert [t.label for t in stored.trials] == [t.label for t in spec.trials]


def test_a_damaged_tuning_entry_means_searching_again(
    lowerings: list[Any], tmp_path: Path
) -> None:
    lines: list[str] = []
    tuner(lambda values, grid, stream: FakeBench({}), lines).specialize(*ARGS)
    (entry,) = (tmp_path / LAYOUT / "tuned").glob("*.json")
    entry.write_text('{"key": ')
    again = tuner(lambda values, grid, stream: FakeBench({}), lines)
    assert again.specialize(*ARGS).origin == "autotune, disk cache"  # PTX kept
    assert '"trials"' in entry.read_text()  # rewritten


def test_the_rules_choice_must_run() -> None:
    """Without the reference nothing can be checked: its failure is raised."""

    def build(options: CompileOptions) -> Any:
        raise RuntimeError("does not compile")

    with pytest.raises(RuntimeError, match="does not compile"):
        search([CompileOptions()], build, FakeBench({}), print)


def test_timing_needs_device_arrays() -> None:
    d = Dispatcher(TEXT, "gemm_nt", CompileOptions())
    values = d._convert(ARGS, 0)
    with pytest.raises(
        KernelArgumentError, match="autotune times launches on device arrays"
    ):
        CudaBench("gemm_nt", d.params, values, None, 0)


class HalvedSplitWins(FakeBench):
    """The rules' choice with its K split halved runs fastest."""

    def __init__(self, splits: int) -> None:
        super().__init__({})
        self.splits = splits

    def time(self, kernel: Any) -> float:
        label = describe(kernel.options)
        prefix = self.referenced[0].removesuffix(f"-s{self.splits}")
        return 0.5 if label == f"{prefix}-s{self.splits // 2}" else 1.0


def test_a_split_plan_searches_split_counts_and_tiles(lowerings: list[Any]) -> None:
    """One 128x128 output tile with K of 8192: the rules split K; the search
    times split pairs (the rules' split of each tile shape, the pick's halved)
    and the pick unsplit, and the winner runs as its pair, stored for the next
    process."""
    lines: list[str] = []
    args = [np.zeros(s, bfloat16) for s in ((128, 8192), (128, 8192), (128, 128))]
    d = tuner(NoBench, lines)
    splits = d.plan(d.key(*args)).decision.split_k
    assert splits >= 4
    bench = HalvedSplitWins(splits)
    d = tuner(lambda values, grid, stream: bench, lines)
    spec = d.specialize(*args)
    (reference,) = bench.referenced
    assert reference.endswith(f"-s{splits}")
    labels = [t.label for t in spec.trials]
    unsplit = reference.removesuffix(f"-s{splits}")
    assert labels[0] == reference and unsplit in labels
    assert sum(label.endswith(f"-s{splits}") for label in labels) > 2  # other tiles
    assert spec.reduce is not None and spec.plan.options.split_k == splits // 2
    assert spec.origin == f"autotune, K split {splits // 2} ways, compiled"
    assert spec.kernel.contract.split.splits == splits // 2
    stored = tuner(NoBench, lines).specialize(*args)
    assert stored.reduce is not None and stored.plan.options.split_k == splits // 2
    assert stored.origin.startswith(f"autotune (stored), K split {splits // 2} ways")


def test_a_kernel_split_k_refuses_is_searched_unsplit(lowerings: list[Any]) -> None:
    """Two K loops into separate accumulators: the rules would split K and
    the pass refuses. Split candidates ran the kernel unsplit under split
    labels ("D4-P1-W2-s32"), and their winner said "K split 32 ways"."""
    d = tuner(
        lambda values, grid, stream: FakeBench({}),
        [],
        two_loop_gemm(),
        "gemm_two_loops",
    )
    shapes = [(128, 8192), (128, 8192), (128, 8192), (128, 8192), (128, 128)]
    args = [np.zeros(s, bfloat16) for s in shapes]
    assert d.plan(d.key(*args)).decision.split_k > 1
    spec = d.specialize(*args)
    assert spec.reduce is None and not spec.plan.options.split_k
    assert spec.trials and all("-s" not in t.label for t in spec.trials)
    assert "split" not in spec.origin
    assert any("cannot be split" in r.text for r in spec.plan.decision.reasons)


def test_a_call_with_a_grid_searches_unsplit(lowerings: list[Any]) -> None:
    """A call that passes grid= runs one kernel on that grid: a split pair
    would launch its partials kernel on it. The search timed split pairs on
    the caller's grid anyway, the rules' split first, as the reference."""
    bench = FakeBench({})
    lines: list[str] = []
    d = tuner(lambda values, grid, stream: bench, lines)
    args = [np.zeros(s, bfloat16) for s in ((128, 8192), (128, 8192), (128, 128))]
    assert d.plan(d.key(*args)).decision.split_k > 1
    spec = d.specialize(*args, grid=(1, 1))
    assert spec.reduce is None and not spec.plan.options.split_k
    assert spec.trials and all("-s" not in t.label for t in spec.trials)
    assert not bench.referenced[0].endswith(tuple(f"-s{s}" for s in range(2, 300)))


def test_a_grid_winner_and_a_split_winner_are_kept_apart(lowerings: list[Any]) -> None:
    """A call with grid= searches single kernels; its winner was stored for
    the whole bucket, in the process and on disk, so a later call without
    grid= (which may split K: 32 ways here) ran the grid call's kernel
    unsplit, never searched. Each now has its own winner."""
    args = [np.zeros(s, bfloat16) for s in ((128, 8192), (128, 8192), (128, 128))]
    lines: list[str] = []
    d = tuner(lambda values, grid, stream: FakeBench({}), lines)
    on_grid = d.specialize(*args, grid=(1, 1))
    assert on_grid.reduce is None and on_grid.origin == "autotune, compiled"
    bench = FakeBench({})
    d._bench = lambda values, grid, stream: bench
    split = d.specialize(*args)
    assert split.reduce is not None and bench.referenced[0].endswith("-s32")
    assert split.origin.startswith("autotune, K split")
    assert d.specialize(*args, grid=(1, 1)) is on_grid  # each kept
    assert d.specialize(*args) is split

    later = FakeBench({})  # another process: the grid winner is not the split one
    fresh = tuner(lambda values, grid, stream: later, lines).specialize(*args)
    assert later.referenced == [] and fresh.origin.startswith("autotune (stored), K")
    first = tuner(lambda values, grid, stream: FakeBench({}), lines)
    first.specialize(*args)  # stored split winner, then a grid call
    assert (
        first.specialize(*args, grid=(1, 1)).origin == "autotune (stored), disk cache"
    )


@pytest.mark.parametrize("grid", [(1, 1), None])
def test_a_search_that_cannot_split_drops_a_given_split(
    lowerings: list[Any], grid: Any
) -> None:
    """split_k=4 given, on a call with grid= and on a kernel the split-k pass
    refuses: the candidates were labelled "-s4" and built as pairs (timed on
    the caller's grid; for the refused kernel, the rules' unsplit kernel
    under each candidate's label), and the grid call's winner was dropped
    for the rules' kernel."""
    lines: list[str] = []
    bench = FakeBench({})
    if grid is None:
        text, name = two_loop_gemm(), "gemm_two_loops"
        shapes = [(128, 1024), (1024, 1024), (128, 1024), (1024, 1024), (128, 1024)]
    else:
        text, name = TEXT, "gemm_nt"
        shapes = [(128, 8192), (128, 8192), (128, 128)]
    d = tuner(
        lambda values, grid, stream: bench,
        lines,
        text,
        name,
        CompileOptions(split_k=4),
    )
    spec = d.specialize(*[np.zeros(s, bfloat16) for s in shapes], grid=grid)
    assert spec.reduce is None and spec.origin == "autotune, compiled"
    assert len(spec.trials) > 2 and all(t.ms is not None for t in spec.trials)
    assert not any("-s" in t.label for t in spec.trials)
    assert "-s" not in bench.referenced[0]


def test_a_kernel_split_k_refuses_gets_no_split_candidates(
    lowerings: list[Any],
) -> None:
    """The rules do not split (M=128, K=1024 on 64x96 tiles) but a candidate
    split it twice: the two-loop kernel, which the pass refuses, ran unsplit
    under the label "-s2" (and won as "K split 2 ways")."""
    d = tuner(
        lambda values, grid, stream: FakeBench({}),
        [],
        two_loop_gemm(),
        "gemm_two_loops",
    )
    shapes = [(128, 1024), (1024, 1024), (128, 1024), (1024, 1024), (128, 1024)]
    args = [np.zeros(s, bfloat16) for s in shapes]
    assert d.plan(d.key(*args)).decision.split_k == 1
    spec = d.specialize(*args)
    assert spec.trials and not any("-s" in t.label for t in spec.trials)
    assert all(t.ms is not None for t in spec.trials)
