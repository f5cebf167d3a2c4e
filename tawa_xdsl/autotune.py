"""Autotuning one bucket of argument shapes: a small search around the shape
rules' choice, each candidate checked against the rules' output before it is
timed.

The space (`candidates`): the rules' own choice first (its output is the
reference every other candidate must match), then the choice the rules make
with each other tile shape they weighed held fixed (`Decision.considered`),
then the neighbours of their choice: the persistent grid flipped, one stage
fewer and one more, the other MMA depth, and for attention the two-stage
overlap flipped (and, for a grid in launch order, the reversed one); and for
a GEMM call that may split K, each tile shape with the rules' split for it
(`split_k`: the split pair runs) and the pick's split halved, doubled and
undone; for a GEMM of M <= `SWAP_AB_TUNED_M` rows, the rules' choice with
the operands swapped the other way (`swap_ab`). Options the caller gave are
never varied. A bucket the rules stream
K for is not searched (`Dispatcher` runs the stream-K pair). A candidate that
fails to compile, load, run or match is reported and skipped; the fastest of
the rest wins.

`search` only orders the work and keeps the books; what builds a kernel and what
runs and times it are passed in (`Bench`), so the bookkeeping is tested on a
CPU with a fake timer and the timing loop (`CudaBench`: CUDA events, median) on
the GPU.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from tawa_xdsl.compiler import CompileOptions, describe
from tawa_xdsl.dispatch_rules import SWAP_AB_TUNED_M
from tawa_xdsl.heuristics import OPTION_OF, Decision, Splitter, Structure, decide
from tawa_xdsl.kernel import KernelArgumentError, Param

WARMUP = 3
"""Launches before timing: the first loads the module and warms the caches."""
REPEATS = 20
"""Timed launches per candidate; the median is its time."""
TOLERANCE = 1e-2
"""Largest error relative to the reference's largest magnitude (bf16 outputs
of f32 accumulations in another order differ by a few ulps)."""


class Mismatch(RuntimeError):
    """A candidate computed something else than the rules' choice."""


@dataclass(frozen=True)
class Trial:
    """One candidate's result: its median time, or why it was skipped."""

    label: str
    options: CompileOptions
    ms: float | None
    error: str = ""


class Runnable(Protocol):
    """What a candidate is built as: a kernel, or a split pair run as one
    (`dispatch.Runner`)."""

    @property
    def name(self) -> str: ...

    @property
    def options(self) -> dict[str, Any]: ...

    def bind(self, *values: Any, grid: Any = None, stream: int = 0) -> Any: ...


class Bench(Protocol):
    """Runs candidates on one call's arguments."""

    def reference(self, kernel: Runnable) -> None:
        """Run the rules' kernel and keep its outputs."""

    def time(self, kernel: Runnable) -> float:
        """Run `kernel`, check its outputs against the reference (`Mismatch`),
        return its median time in milliseconds."""


def candidates(
    structure: Structure,
    extents: Mapping[str, int],
    given: Mapping[str, Any],
    sms: int,
    decision: Decision,
    resolve: Callable[[Mapping[str, Any]], CompileOptions],
    splitter: Splitter | None = None,
) -> list[CompileOptions]:
    """The configurations to try, the rules' choice first, without repeats.
    With `splitter` (a call that may split K) a candidate's K split is its
    `split_k` (> 1: the split pair runs): the rules' split of each tile shape,
    and the pick's split halved, doubled and undone."""
    shaped = [_with_split(decision.options, decision.split_k)]
    names = {option: name for name, option in OPTION_OF.items()}
    for tile in decision.considered:
        # this tile's rules
        fixed = decide(
            structure, extents, {"stream_k": False, **given, **tile}, sms, splitter
        )
        resized = {o: v for o, v in tile.items() if v != structure.tuned_size(names[o])}
        shaped.append(_with_split({**fixed.options, **resized}, fixed.split_k))
    shaped += _swapped_form(structure, extents, given, sms, decision)
    if splitter and "split_k" not in given and structure.kind == "gemm":
        most = _most_splits(structure, extents, decision, sms, splitter)
        pick, split = shaped[0], decision.split_k
        for other in (1, split // 2, split * 2):
            if 1 <= other <= most and other != split:
                shaped.append(_with_split(pick, other))
    found = [resolve(s) for s in shaped]
    pick = found[0]

    def vary(option: str, *values: Any) -> None:
        # a split pair's kernels resolve their own stages and grids
        if option not in given and not pick.split_k:
            for value in values:
                found.append(dataclasses.replace(pick, **{option: value}))

    vary(
        "num_stages", *(s for s in (pick.num_stages - 1, pick.num_stages + 1) if s >= 2)
    )
    vary("mma_depth", 2 if pick.mma_depth == 1 else 1)
    if "persistent" not in given and "reverse_x" not in given and not pick.split_k:
        found.append(
            dataclasses.replace(pick, persistent=not pick.persistent, reverse_x=False)
        )
    if structure.kind == "attention":
        vary("two_stage", not pick.two_stage)
        if not pick.persistent:
            vary("reverse_x", not pick.reverse_x)
    return list(dict.fromkeys(found))


def _swapped_form(
    structure: Structure,
    extents: Mapping[str, int],
    given: Mapping[str, Any],
    sms: int,
    decision: Decision,
) -> list[dict[str, Any]]:
    """The rules' choice for a GEMM of M <= `SWAP_AB_TUNED_M` rows with its
    operands swapped the other way (`swap_ab` flipped), where the kernel
    takes both forms and the caller gave none."""
    rows = structure.rows
    if (
        "swap_ab" in given
        or structure.swap_refusal is not None
        or rows is None
        or extents.get(rows.dim, SWAP_AB_TUNED_M + 1) > SWAP_AB_TUNED_M
    ):
        return []
    swapped = not decision.options.get("swap_ab")
    flipped = decide(structure, extents, {**given, "swap_ab": swapped}, sms)
    return [_with_split({**flipped.options, "swap_ab": swapped}, flipped.split_k)]


def _with_split(options: Mapping[str, Any], splits: int) -> dict[str, Any]:
    """`options` with K split `splits` ways (1: not split)."""
    return {**options, "split_k": splits if splits > 1 else 0}


def _most_splits(
    structure: Structure,
    extents: Mapping[str, int],
    decision: Decision,
    sms: int,
    splitter: Splitter,
) -> int:
    """The most K slices `splitter` gives the rules' tile (1: none)."""
    rows, cols, loop = structure.rows, structure.cols, structure.loop
    if rows is None or cols is None or loop is None:
        return 1
    axes = (rows, cols, loop)
    if any(a.dim not in extents for a in axes):
        return 1
    sizes = {
        name: size
        for name, option in OPTION_OF.items()
        if (size := decision.options.get(option))
    }
    m, n, k = (extents[a.dim] for a in axes)
    bm, bn, bk = (structure.block(a, sizes) for a in axes)
    return splitter(m, n, k, bm, bn, bk, sms)


def search(
    configurations: Sequence[CompileOptions],
    build: Callable[[CompileOptions], Runnable],
    bench: Bench,
    report: Callable[[str], None],
) -> list[Trial]:
    """Build and time each configuration, the first (the rules' choice) also as
    the reference; one progress line per candidate. A failure of the first is
    raised: without a reference nothing can be checked."""
    trials = []
    for i, options in enumerate(configurations, 1):
        label = describe(options.as_dict())
        where = f"[{i}/{len(configurations)}] {label}"
        try:
            kernel = build(options)
            if i == 1:
                bench.reference(kernel)
            ms = bench.time(kernel)
        except Exception as e:  # any failure skips a candidate, with its reason
            if i == 1:
                raise
            trials.append(Trial(label, options, None, f"{type(e).__name__}: {e}"))
            report(f"{where}: skipped ({trials[-1].error.splitlines()[0][:160]})")
            continue
        trials.append(Trial(label, options, ms))
        report(f"{where}: {ms:.4f} ms")
    return trials


def fastest(trials: Sequence[Trial]) -> Trial:
    """The fastest trial that ran (the first wins a tie: the rules' choice)."""
    ran = [t for t in trials if t.ms is not None]
    return min(ran, key=lambda t: t.ms if t.ms is not None else float("inf"))


def to_stderr(line: str) -> None:
    print(f"tawa-xdsl autotune: {line}", file=sys.stderr, flush=True)


class CudaBench:
    """Runs candidates on the GPU on one call's arguments: outputs set to NaN
    before each run (a candidate that skips elements cannot pass), compared
    with the reference's in float64, then timed with CUDA events."""

    def __init__(
        self,
        name: str,
        params: Sequence[Param],
        values: Sequence[Any],
        grid: Any,
        stream: int,
    ) -> None:
        host = [
            p.name
            for p, v in zip(params, values, strict=True)
            if p.is_tensor and v.host is not None
        ]
        if host:
            raise KernelArgumentError(
                f"{name}: autotune times launches on device arrays; "
                f"{', '.join(repr(n) for n in host)} live on the host (pass torch or "
                "cupy arrays on the GPU)"
            )
        self.values = list(values)
        self.outputs = [v for p, v in zip(params, values, strict=True) if p.written]
        self.grid, self.stream = grid, stream
        self.expected: list[np.ndarray] = []

    def _run(self, kernel: Runnable) -> tuple[Callable[[], None], list[np.ndarray]]:
        from tawa_xdsl.runtime.arrays import fill, read
        from tawa_xdsl.runtime.driver import check, context

        for out in self.outputs:
            fill(out, float("nan"))
        launch = kernel.bind(*self.values, grid=self.grid, stream=self.stream)
        launch()
        cu, _ = context()
        check(cu.cuStreamSynchronize(self.stream), f"{kernel.name}: running")
        return launch, [read(out).astype(np.float64) for out in self.outputs]

    def reference(self, kernel: Runnable) -> None:
        self.expected = self._run(kernel)[1]

    def time(self, kernel: Runnable) -> float:
        from tawa_xdsl.runtime.driver import event_times

        launch, got = self._run(kernel)
        for out, want in zip(got, self.expected, strict=True):
            written = ~np.isnan(want)
            if np.isnan(out[written]).any():
                raise Mismatch(f"{kernel.name}: leaves outputs unwritten (NaN)")
            scale = max(float(np.max(np.abs(want[written]), initial=0.0)), 1e-30)
            diff = np.abs(out[written] - want[written])
            error = float(np.max(diff, initial=0.0)) / scale
            if error >= TOLERANCE:
                raise Mismatch(
                    f"{kernel.name}: output differs from the rules' choice "
                    f"(relative error {error:.3g})"
                )
        event_times(launch, WARMUP, self.stream)
        return statistics.median(event_times(launch, REPEATS, self.stream))
