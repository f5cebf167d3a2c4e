"""GEMM benchmark: tawa-xdsl vs cuBLAS (torch.matmul) vs our Triton GEMM, in one run.

    python benchmarks/gemm.py [--suite six|llm] [--quick] [--rows PATTERNS] [--list]
                              [--shapes MxNxK,...] [--config OPTIONS ...] [--out DIR]

Suites: `six` (the default), six large bf16 shapes; `llm`, issue 16's shapes
from real models (C = A @ W^T, 44 rows: bf16 with B stored N x K, plus rows
with B stored K x N and f16 rows, and the six). A row is named
MxNxK[-nn][-f16] (`-nn`: B stored K x N, the gemm_nn kernels); `--rows` keeps
the rows matching any of comma-separated shell patterns (`--rows '*-nn,16x*'`),
`--quick` a representative dozen of the suite, `--shapes` replaces the suite by
bf16 N x K shapes. The row count and the estimated GPU time are printed first;
`--list` prints them with the rows and exits (no GPU needed).

For each row: every kernel is checked against cuBLAS (relative error < 1e-2)
before it is timed with CUDA events (triton.testing.do_bench: L2 flushed between
runs, median of many). A kernel that is refused (tawa's TMA path refuses row
pitches that are not a multiple of 16 bytes, e.g. N = 4097) or wrong is recorded
in the row's `errors` and the run goes on. tawa-xdsl runs with the tuned
defaults of `tawa_xdsl.compile`; each `--config` (compile options such as
`num_stages=4,block_n=128`) is timed too and the best is reported. Prints
TFLOP/s and ratios per row and the geometric means of tawa/cuBLAS and
tawa/Triton over the rows where both ran; writes gemm.csv (gemm_llm.csv for
the llm suite) row by row and a plot under --out.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    EXAMPLES,
    RESULTS,
    CsvLog,
    add_timings,
    attempt,
    check,
    estimate_s,
    median_ms,
    parse_options,
    pick,
    print_geomeans,
    print_plan,
    warm_up,
)

from tawa_xdsl.compiler import describe


class Gemm(NamedTuple):
    """C[M, N] = A[M, K] @ B, B stored N x K (`nt`: A @ B^T) or K x N (`nn`)."""

    m: int
    n: int
    k: int
    layout: str = "nt"
    dtype: str = "bf16"

    @property
    def label(self) -> str:
        return (
            f"{self.m}x{self.n}x{self.k}"
            + ("-nn" if self.layout == "nn" else "")
            + ("-f16" if self.dtype == "f16" else "")
        )

    @property
    def kernel(self) -> str:
        """The kernel of examples/gemm.mlir that computes it."""
        return f"gemm_{self.layout}" + ("_f16" if self.dtype == "f16" else "")


SIX = [
    Gemm(2048, 2048, 2048),
    Gemm(4096, 4096, 4096),
    Gemm(8192, 8192, 8192),
    Gemm(8192, 8192, 1024),
    Gemm(8192, 8192, 4096),
    Gemm(4096, 4096, 16384),
]


def llm_suite() -> list[Gemm]:
    """Issue 16's GEMM suite, in its order; a row two groups name appears once."""
    rows = [
        Gemm(m, n, k)
        for m in (128, 512, 2048, 8192)
        for n, k in ((6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336))
    ]
    rows += [
        Gemm(m, n, k)
        for m in (512, 4096)
        for n, k in ((10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672))
    ]
    rows += [Gemm(m, n, k) for m in (16, 64) for n, k in ((6144, 4096), (4096, 14336))]
    rows += [
        Gemm(256, 256, 16384),
        Gemm(128, 1024, 8192),
        Gemm(1000, 1000, 1000),
        Gemm(4095, 4097, 4096),
        Gemm(999, 3001, 2000),
    ]
    for m, n, k in ((2048, 4096, 4096), (512, 28672, 4096), (8192, 8192, 8192)):
        rows += [Gemm(m, n, k), Gemm(m, n, k, "nn")]  # both B layouts
    for m, n, k in ((2048, 6144, 4096), (999, 3001, 2000)):
        rows += [Gemm(m, n, k), Gemm(m, n, k, dtype="f16")]  # bf16 and f16
    return list(dict.fromkeys(rows + SIX))


SUITES = {"six": SIX, "llm": llm_suite()}
QUICK = {
    "six": {"4096x4096x4096", "8192x8192x1024"},
    "llm": {
        "128x6144x4096",
        "512x4096x4096",
        "2048x28672x4096",
        "4096x8192x28672",
        "16x6144x4096",
        "64x4096x14336",
        "256x256x16384",
        "4095x4097x4096",
        "999x3001x2000-f16",
        "2048x4096x4096-nn",
        "8192x8192x8192",
    },
}
"""`--quick`: a row of each kind (small M, long K, unaligned, nn, f16, large)."""

FIELDS = [
    "label",
    "M",
    "N",
    "K",
    "layout",
    "dtype",
    "config",
    "tawa_tflops",
    "cublas_tflops",
    "triton_tflops",
    "tawa/cublas",
    "tawa/triton",
    "errors",
]


def estimate(rows: list[Gemm], configs: int) -> float:
    """Seconds of GPU time for `rows`, each timing cuBLAS, Triton and `configs`
    tawa configurations (see common.estimate_s)."""
    variants = len({(r.layout, r.dtype) for r in rows})  # a kernel of each
    return estimate_s([2 + configs] * len(rows), variants * (1 + configs))


def measure(row: Gemm, configs: list[dict]) -> dict:
    """Check and time cuBLAS, our Triton GEMM and tawa-xdsl on one row."""
    import torch
    from triton_gemm import gemm as triton_gemm

    import tawa_xdsl

    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[row.dtype]
    a = torch.randn(row.m, row.k, device="cuda", dtype=dtype)
    b_shape = (row.n, row.k) if row.layout == "nt" else (row.k, row.n)
    b = torch.randn(*b_shape, device="cuda", dtype=dtype)
    b_kn = b.t() if row.layout == "nt" else b
    ref = a @ b_kn
    errors: list[str] = []

    def run_and_time(name: str, launch: Any, c: Any) -> float:
        launch()
        torch.cuda.synchronize()
        check(name, c, ref)
        return median_ms(launch)

    def triton() -> float:
        c = torch.full_like(ref, float("nan"))
        launch = functools.partial(triton_gemm, a, b, c, row.layout)
        return run_and_time("triton", launch, c)

    def ours(options: dict) -> tuple[float, str]:
        kernel = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", row.kernel, **options)
        c = torch.full_like(ref, float("nan"))
        launch = kernel.bind(a, b, c)  # picks this shape's specialization
        name = describe(kernel.options)
        return run_and_time(f"tawa {name}", launch, c), name

    times = {
        "cublas": median_ms(functools.partial(torch.matmul, a, b_kn)),
        "triton": attempt(errors, "triton", triton),
    }
    tried: list[tuple[float, str]] = []
    for options in configs:
        name = describe(options) if options else "tuned"
        found = attempt(errors, f"tawa {name}", lambda o=options: ours(o))
        tried += [found] if found else []
    best = min(tried, default=(None, ""))
    times["tawa"] = best[0]
    out = blank(row) | {"config": best[1]}
    add_timings(out, times, 2 * row.m * row.n * row.k, ["cublas", "triton"])
    out["errors"] = "; ".join(errors)
    return out


def blank(row: Gemm) -> dict:
    """A CSV row with the fields that name `row` filled in, the others None."""
    return dict.fromkeys(FIELDS) | {
        "label": row.label,
        "M": row.m,
        "N": row.n,
        "K": row.k,
        "layout": row.layout,
        "dtype": row.dtype,
    }


def run(rows: list[Gemm], configs: list[dict], csv_path: Path) -> list[dict]:
    results = []
    with CsvLog(csv_path, FIELDS) as log:
        for row in rows:
            errors: list[str] = []
            result = attempt(errors, "row", lambda r=row: measure(r, configs))
            # a row that could not run at all (no cuBLAS reference) keeps its name
            result = result or blank(row) | {"errors": "; ".join(errors)}
            log.write(result)
            results.append(result)
            print_row(result)
    print_geomeans(results, ["cublas", "triton"])
    six = {g.label for g in SIX}
    if len(rows) > len(SIX) and any(r["label"] in six for r in results):
        print_geomeans([r for r in results if r["label"] in six], ["cublas"], " (six)")
    return results


HEADER = (
    f"{'shape':>20} {'config':>22} {'tawa':>7} {'cuBLAS':>7} {'Triton':>7} "
    f"{'/cuBLAS':>8} {'/Triton':>8}"
)


def print_row(row: dict) -> None:
    def cell(key: str, width: int) -> str:
        return f"{'-' if row[key] is None else row[key]!s:>{width}}"

    print(
        f"{row['label']:>20} {row['config'] or 'refused':>22} {cell('tawa_tflops', 7)} "
        f"{cell('cublas_tflops', 7)} {cell('triton_tflops', 7)} "
        f"{cell('tawa/cublas', 8)} {cell('tawa/triton', 8)}",
        flush=True,
    )


def plot(rows: list[dict], path: Path) -> None:
    """Bars of TFLOP/s for the rows where every kernel ran."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    peers = [
        ("tawa-xdsl", "tawa_tflops"),
        ("cuBLAS", "cublas_tflops"),
        ("Triton (ours)", "triton_tflops"),
    ]
    rows = [r for r in rows if all(r[key] for _, key in peers)]
    if not rows:
        return
    x = range(len(rows))
    fig, ax = plt.subplots(figsize=(max(10, 0.45 * len(rows)), 4.5))
    for i, (name, key) in enumerate(peers):
        ax.bar(
            [p + 0.27 * (i - 1) for p in x], [r[key] for r in rows], 0.27, label=name
        )
    ax.set_xticks(list(x), [r["label"] for r in rows], rotation=60, ha="right")
    ax.set_ylabel("TFLOP/s")
    ax.set_title("GEMM C = A @ B on H100 (bf16 unless -f16; B stored N x K unless -nn)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        help="compile options key=value,... timed besides the tuned defaults",
    )
    parser.add_argument("--suite", choices=sorted(SUITES), default="six")
    parser.add_argument("--shapes", default="", help="MxNxK,... (bf16, B N x K)")
    parser.add_argument("--rows", default="", help="shell patterns of row names")
    parser.add_argument("--quick", action="store_true", help="a row of each kind")
    parser.add_argument("--list", action="store_true", help="print rows and exit")
    args = parser.parse_args()
    configs = [{}] + [parse_options(c) for c in args.config]
    suite = [
        Gemm(*(int(x) for x in s.split("x"))) for s in args.shapes.split(",") if s
    ] or SUITES[args.suite]
    quick = QUICK[args.suite] if args.quick and not args.shapes else None
    rows = pick(suite, args.rows, quick)
    print_plan([r.label for r in rows], estimate(rows, len(configs)), args.list)
    if args.list or not rows:
        return
    import torch

    print(torch.cuda.get_device_name(), flush=True)
    warm_up()
    print(HEADER, flush=True)
    name = "gemm" if args.suite == "six" else f"gemm_{args.suite}"
    results = run(rows, configs, args.out / f"{name}.csv")
    plot(results, args.out / f"{name}.png")


if __name__ == "__main__":
    main()
