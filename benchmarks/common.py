"""What every benchmark here does the same way: warm the GPU up, check a kernel
against a reference before timing it, time with CUDA events (median), parse
option strings, write CSV. torch and triton are imported where a GPU is used,
so the CPU-only benchmarks (compile time) run without them."""

from __future__ import annotations

import csv
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tawa_xdsl.compiler import DEFAULTS

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
RESULTS = HERE / "results"


def warm_up(seconds: float = 3.0) -> None:
    """Run matmuls until the clocks have ramped up from idle (345 MHz here), so
    the first rows are not timed on a cold card."""
    import torch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    start = time.time()
    while time.time() - start < seconds:
        a @ a
    torch.cuda.synchronize()


def median_ms(fn: Callable[[], Any]) -> float:
    """Median of many launches timed with CUDA events (L2 flushed in between)."""
    import triton

    return triton.testing.do_bench(fn, warmup=100, rep=400, return_mode="median")


def rel_err(out: Any, ref: Any) -> float:
    return float((out.float() - ref.float()).norm() / ref.float().norm())


def check(name: str, out: Any, ref: Any) -> None:
    """Refuse to time a kernel that is wrong."""
    err = rel_err(out, ref)
    if not err < 1e-2 or out.isnan().any():
        raise SystemExit(f"{name} is wrong: relative error {err:.3e}; not timing it")


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


def describe(options: dict[str, Any]) -> str:
    """A short name for compile options: D3-P1-W2-BN256-rx-c2-pers-g1-q1-2s-pp
    (rx: program ids along x reversed; c2: clusters of two blocks; q1: the
    once-per-tile rings, Q, in one slot). Options not given read as the static
    defaults (`Kernel.options` gives them all, resolved)."""
    options = {**DEFAULTS.given(), **options}
    parts = [
        f"D{options['num_stages']}",
        f"P{options['mma_depth']}",
        f"W{options.get('num_consumers', '?')}",
    ]
    for key, tag in (("block_m", "BM"), ("block_n", "BN"), ("block_k", "BK")):
        if options.get(key):
            parts.append(f"{tag}{options[key]}")
    if options.get("reverse_x"):
        parts.append("rx")
    if options.get("cluster", 1) > 1:
        parts.append(f"c{options['cluster']}")
    if options.get("persistent"):
        parts.append("pers")
        if options["group_m"] != DEFAULTS.group_m:
            parts.append(f"g{options['group_m']}")
        if options.get("longest_first"):
            parts.append("lf")
        if options["outer_stages"] != DEFAULTS.outer_stages:
            parts.append(f"q{options['outer_stages']}")
    if options.get("two_stage"):
        parts.append("2s")
    if options.get("ping_pong"):
        parts.append("pp")
    if options.get("tma_store") is False:
        parts.append("direct")
    return "-".join(parts)


def write_csv(rows: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def add_timings(
    row: dict, times_ms: dict[str, float], flops: float, peers: list[str]
) -> None:
    """row["<name>_tflops"] for every timing, then row["tawa/<peer>"] = tawa's
    TFLOP/s over the peer's."""
    for name, ms in times_ms.items():
        row[f"{name}_tflops"] = round(flops / ms / 1e9, 1)
    for peer in peers:
        row[f"tawa/{peer}"] = round(row["tawa_tflops"] / row[f"{peer}_tflops"], 3)


def print_geomeans(rows: list[dict], peers: list[str]) -> None:
    print(
        ", ".join(
            f"geometric mean tawa/{peer} {geomean([r[f'tawa/{peer}'] for r in rows]):.3f}"
            for peer in peers
        ),
        flush=True,
    )


def geomean(values: list[float]) -> float:
    product = 1.0
    for v in values:
        product *= v
    return product ** (1 / len(values))
