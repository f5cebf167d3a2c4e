"""What every benchmark here does the same way: warm the GPU up, check a kernel
against a reference before timing it, time with CUDA events (median), parse
option strings, write CSV; for the suites, pick rows by name, estimate the run
time, write each row as it is measured and record a kernel that fails instead of
ending the run. torch and triton are imported where a GPU is used, so the
CPU-only benchmarks (compile time) and `--list` run without them."""

from __future__ import annotations

import argparse
import csv
import fnmatch
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Self, TextIO, TypeVar

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
RESULTS = HERE / "results"
WARMUP_MS, REP_MS = 100, 400
"""do_bench's budgets: each timing runs the kernel for about this long (ms)."""
SETTLE_S = 0.3
"""Seconds each contender runs before it is timed. Under the card's power cap
the clock a kernel gets depends on the load just before it: a contender timed
after a compile pause (the GPU idle) or after a hungrier peer starts at other
clocks than one timed after its own launches, and do_bench's 100 ms warm-up
does not even that out (NOTES 3.78)."""
TIMING_S = SETTLE_S + (WARMUP_MS + REP_MS) / 1000 + 0.1
"""Wall time of one `median_ms`: settling, the budgets, the runtime estimate
and launches."""
WARM_UP_S = 3.0


def warm_up(seconds: float = WARM_UP_S) -> None:
    """Run matmuls until the clocks have ramped up from idle (345 MHz here), so
    the first rows are not timed on a cold card."""
    import torch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    start = time.time()
    while time.time() - start < seconds:
        a @ a
    torch.cuda.synchronize()


def settle(fn: Callable[[], Any], seconds: float = SETTLE_S) -> None:
    """Launch `fn` back to back for `seconds`, so the clocks settle where its
    own load holds them."""
    import torch

    torch.cuda.synchronize()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(20):
            fn()
        torch.cuda.synchronize()


def median_ms(fn: Callable[[], Any]) -> float:
    """Median of many launches timed with CUDA events (L2 flushed in between),
    after `fn` has run alone for `SETTLE_S`."""
    import triton

    settle(fn)
    return triton.testing.do_bench(
        fn, warmup=WARMUP_MS, rep=REP_MS, return_mode="median"
    )


def rel_err(out: Any, ref: Any) -> float:
    return float((out.float() - ref.float()).norm() / ref.float().norm())


class WrongResult(Exception):
    """A kernel's output is not its reference's: it is not timed."""


def check(name: str, out: Any, ref: Any, tolerance: float = 1e-2) -> None:
    """Refuse to time a kernel that is wrong (relative error `tolerance` or more,
    or a NaN: an output element it never wrote)."""
    err = rel_err(out, ref)
    if not err < tolerance or out.isnan().any():
        raise WrongResult(f"{name} is wrong: relative error {err:.3e}; not timing it")


T = TypeVar("T")


def attempt(errors: list[str], name: str, measure: Callable[[], T]) -> T | None:
    """`measure()` (check, then time), or None with the reason appended to
    `errors` when the kernel is refused, fails or is wrong: one kernel's failure
    on one row must not end a suite. (A fault that breaks the CUDA context still
    fails every later row; their errors say so.)"""
    try:
        return measure()
    except Exception as e:  # refusals come as many types: record any, go on
        first = (str(e).strip().splitlines() or [""])[0][:160]
        reason = f"{name}: {type(e).__name__}: {first}"
        print(f"    {reason}", flush=True)
        errors.append(reason)
        return None


def parse_options(text: str) -> dict[str, Any]:
    """`num_stages=3,two_stage=true` -> {"num_stages": 3, "two_stage": True}."""
    options: dict[str, Any] = {}
    for item in filter(None, text.split(",")):
        key, _, value = item.partition("=")
        if value.lower() in ("true", "false"):
            options[key] = value.lower() == "true"
        else:
            options[key] = int(value)
    return options


def write_csv(rows: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def add_timings(
    row: dict, times_ms: dict[str, float | None], flops: float, peers: list[str]
) -> None:
    """row["<name>_tflops"] for every timing (None for a kernel that did not
    run), then row["tawa/<peer>"] = tawa's TFLOP/s over the peer's (None unless
    both ran)."""
    for name, ms in times_ms.items():
        row[f"{name}_tflops"] = round(flops / ms / 1e9, 1) if ms else None
    for peer in peers:
        ours, theirs = row.get("tawa_tflops"), row.get(f"{peer}_tflops")
        row[f"tawa/{peer}"] = round(ours / theirs, 3) if ours and theirs else None


def print_geomeans(rows: list[dict], peers: list[str], what: str = "") -> None:
    """The geometric mean of tawa/<peer> over the rows where both ran."""
    parts = []
    for peer in peers:
        ratios = [r[f"tawa/{peer}"] for r in rows if r.get(f"tawa/{peer}")]
        mean = f"{geomean(ratios):.3f}" if ratios else "-"
        parts.append(
            f"geometric mean tawa/{peer}{what} {mean} ({len(ratios)} of {len(rows)} rows)"
        )
    print(", ".join(parts), flush=True)


def geomean(values: list[float]) -> float:
    product = 1.0
    for v in values:
        product *= v
    return product ** (1 / len(values))


# ------------------------------------------------------------------ suites


class Row(Protocol):
    """A benchmark row: `label` names it for `--rows` and in the CSV."""

    @property
    def label(self) -> str: ...


R = TypeVar("R", bound=Row)


@dataclass(frozen=True)
class GemmRow:
    """One GEMM problem, C[M, N] = A[M, K] @ B[N, K]^T, named M x N x K."""

    m: int
    n: int
    k: int

    @property
    def label(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"

    @classmethod
    def parse(cls, text: str) -> Self:
        return cls(*(int(x) for x in text.split("x")))


def row_arguments(description: str) -> argparse.ArgumentParser:
    """The options of a sweep over GEMM rows: --out, --shapes, --rows, --list."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--shapes", default="", help="MxNxK,... instead of the rows")
    parser.add_argument("--rows", default="", help="shell patterns of row names")
    parser.add_argument("--list", action="store_true", help="print rows and exit")
    return parser


def suite_arguments(description: str, dtype_help: str) -> argparse.ArgumentParser:
    """The options of a suite of rows timed against peers: --out, --config,
    --dtype, --rows, --quick, --list."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        help="compile options key=value,... timed besides the tuned defaults",
    )
    parser.add_argument(
        "--dtype", choices=["bf16", "fp8"], default="bf16", help=dtype_help
    )
    parser.add_argument("--rows", default="", help="shell patterns of row names")
    parser.add_argument("--quick", action="store_true", help="a row of each kind")
    parser.add_argument("--list", action="store_true", help="print rows and exit")
    return parser


def measure_rows(
    rows: Sequence[R],
    measure: Callable[[R], dict],
    blank: Callable[[R], dict],
    fields: Sequence[str],
    csv_path: Path,
    print_row: Callable[[dict], None],
) -> list[dict]:
    """`measure` each row, writing it to `csv_path` and printing it as it is
    done; a row that could not run at all (no reference to check against) is
    its `blank` with the errors, so it keeps its name."""
    results = []
    with CsvLog(csv_path, fields) as log:
        for row in rows:
            errors: list[str] = []
            result = attempt(errors, "row", lambda r=row: measure(r))
            result = result or blank(row) | {"errors": "; ".join(errors)}
            log.write(result)
            results.append(result)
            print_row(result)
    return results


def pick(rows: Sequence[R], patterns: str, quick: Collection[str] | None) -> list[R]:
    """The rows whose label matches one of the comma-separated shell patterns
    (every row when none is given); with `quick`, only the rows it names."""
    globs = [p for p in patterns.split(",") if p]
    return [
        r
        for r in rows
        if (quick is None or r.label in quick)
        and (not globs or any(fnmatch.fnmatchcase(r.label, g) for g in globs))
    ]


ROW_S = 1.5
"""Set-up seconds of a suite's row: inputs, the reference, checks, and the
Triton autotuner timing its four configurations on a new key."""
COMPILE_S = 5.0
"""Seconds to compile one tawa kernel (lowering, PTX, the driver JIT) or one
Triton variant (its four configurations)."""


def estimate_s(timings: Sequence[int], compiles: int) -> float:
    """Seconds a run takes: the warm-up, `compiles` kernels compiled, and per row
    its `median_ms` calls (`timings`, each about TIMING_S) and its set-up."""
    return WARM_UP_S + compiles * COMPILE_S + sum(t * TIMING_S + ROW_S for t in timings)


def print_plan(labels: Sequence[str], seconds: float, listing: bool) -> None:
    """The run's size and estimated time (and each row's label when `listing`),
    printed before anything is timed so a short GPU budget can be planned."""
    if listing:
        print("\n".join(labels))
    print(
        f"{len(labels)} rows, about {seconds / 60:.1f} min of GPU time "
        f"(do_bench warmup {WARMUP_MS} ms + rep {REP_MS} ms per timing)",
        flush=True,
    )


class CsvLog:
    """A CSV file written a row at a time and flushed, so a run cut short keeps
    the rows it measured."""

    def __init__(self, path: Path, fields: Sequence[str]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.file: TextIO = open(path, "w", newline="")  # noqa: SIM115 (closed in __exit__)
        self.writer = csv.DictWriter(self.file, fieldnames=list(fields))
        self.writer.writeheader()

    def write(self, row: dict) -> None:
        self.writer.writerow(row)
        self.file.flush()

    def __enter__(self) -> CsvLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.file.close()
