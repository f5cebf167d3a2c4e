"""GEMM benchmark: tawa-xdsl vs cuBLAS (torch.matmul) vs our Triton GEMM, in one run.

    python benchmarks/gemm.py [--out benchmarks/results] [--config OPTIONS ...]

For each shape (bf16, C = A @ B^T with B stored N x K): check every kernel against
cuBLAS (relative error < 1e-2) before timing, then time each with CUDA events
(triton.testing.do_bench: L2 flushed between runs, median of many). tawa-xdsl runs
with the tuned defaults of `tawa_xdsl.compile`; each `--config` (compile options
such as `num_stages=4,block_n=128`) is timed too and the best is reported. Prints
TFLOP/s and ratios, the geometric mean of tawa/cuBLAS, and writes gemm.csv and
gemm.png under --out.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    EXAMPLES,
    RESULTS,
    add_timings,
    check,
    describe,
    median_ms,
    parse_options,
    print_geomeans,
    warm_up,
    write_csv,
)
from triton_gemm import gemm_nt as triton_gemm

import tawa_xdsl

SHAPES = [
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (8192, 8192, 1024),
    (8192, 8192, 4096),
    (4096, 4096, 16384),
]


def time_ours(options: dict, a, b, ref) -> tuple[float, str]:
    kernel = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt", **options)
    c = torch.full_like(ref, float("nan"))
    kernel(a, b, c)
    torch.cuda.synchronize()
    name = describe(kernel.options)
    check(f"tawa {name}", c, ref)
    return median_ms(kernel.bind(a, b, c)), name


def run(shapes, configs: list[dict], out_dir: Path) -> list[dict]:
    rows = []
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        ref = a @ b.t()
        timings = {"cublas": median_ms(functools.partial(torch.matmul, a, b.t()))}
        c = torch.full_like(ref, float("nan"))
        triton_gemm(a, b, c)
        check("triton", c, ref)
        timings["triton"] = median_ms(functools.partial(triton_gemm, a, b, c))
        best = min(time_ours(options, a, b, ref) for options in configs)
        timings["tawa"] = best[0]
        row = {"M": m, "N": n, "K": k, "config": best[1]}
        add_timings(row, timings, 2 * m * n * k, ["cublas", "triton"])
        rows.append(row)
        print_row(row)
    print_geomeans(rows, ["cublas", "triton"])
    write_csv(rows, out_dir / "gemm.csv")
    plot(rows, out_dir / "gemm.png")
    return rows


HEADER = (
    f"{'shape':>16} {'config':>22} {'tawa':>7} {'cuBLAS':>7} {'Triton':>7} "
    f"{'/cuBLAS':>8} {'/Triton':>8}"
)


def print_row(row: dict) -> None:
    shape = f"{row['M']}x{row['N']}x{row['K']}"
    print(
        f"{shape:>16} {row['config']:>22} {row['tawa_tflops']:>7} "
        f"{row['cublas_tflops']:>7} {row['triton_tflops']:>7} "
        f"{row['tawa/cublas']:>8} {row['tawa/triton']:>8}",
        flush=True,
    )


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['M']}x{r['N']}x{r['K']}" for r in rows]
    x = range(len(rows))
    fig, ax = plt.subplots(figsize=(10, 4.5))
    peers = [
        ("tawa-xdsl", "tawa_tflops"),
        ("cuBLAS", "cublas_tflops"),
        ("Triton (ours)", "triton_tflops"),
    ]
    for i, (name, key) in enumerate(peers):
        ax.bar(
            [p + 0.27 * (i - 1) for p in x], [r[key] for r in rows], 0.27, label=name
        )
    ax.set_xticks(list(x), labels, rotation=20)
    ax.set_ylabel("TFLOP/s (bf16)")
    ax.set_title("GEMM C = A @ B^T on H100")
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
    parser.add_argument("--shapes", default="", help="MxNxK,... (default: the set)")
    args = parser.parse_args()
    configs = [{}] + [parse_options(c) for c in args.config]
    shapes = [
        tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",") if s
    ] or SHAPES
    print(torch.cuda.get_device_name(), flush=True)
    warm_up()
    print(HEADER, flush=True)
    run(shapes, configs, args.out)


if __name__ == "__main__":
    main()
