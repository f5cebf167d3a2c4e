"""GEMM benchmark: tawa-xdsl vs cuBLAS (torch.matmul) vs our Triton GEMM, in one run.

    python benchmarks/gemm.py [--out benchmarks/results] [--config D,P,W ...]

For each shape (bf16, C = A @ B^T with B stored N x K): check every kernel against
cuBLAS (relative error < 1e-2) before timing, then time each with CUDA events
(triton.testing.do_bench: L2 flushed between runs, median of many). Prints a table
of TFLOP/s and ratios, writes gemm.csv and gemm.png under --out.
"""

from __future__ import annotations

import argparse
import csv
import functools
import sys
from pathlib import Path

import torch
import triton

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from triton_gemm import gemm_nt as triton_gemm  # noqa: E402

import tawa_xdsl  # noqa: E402

SHAPES = [
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (8192, 8192, 1024),
    (8192, 8192, 4096),
    (4096, 4096, 16384),
]
DEFAULT_CONFIG = (4, 2, 2)  # num_stages, mma_depth, num_consumers


def median_ms(fn) -> float:
    return triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")


def tflops(m: int, n: int, k: int, ms: float) -> float:
    return 2 * m * n * k / ms / 1e9


def ours(config):
    stages, mma, consumers = config
    return tawa_xdsl.compile(
        HERE.parent / "examples" / "gemm.mlir",
        "gemm_nt",
        num_stages=stages,
        mma_depth=mma,
        num_consumers=consumers,
    )


def check(name: str, out: torch.Tensor, ref: torch.Tensor) -> None:
    err = float((out.float() - ref.float()).norm() / ref.float().norm())
    if not err < 1e-2 or out.isnan().any():
        raise SystemExit(f"{name} is wrong: relative error {err:.3e}; not timing it")


def run(shapes, configs, out_dir: Path) -> list[dict]:
    rows = []
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        ref = a @ b.t()
        bt = b.t()
        timings = {"cublas": median_ms(functools.partial(torch.matmul, a, bt))}
        c = torch.full_like(ref, float("nan"))
        triton_gemm(a, b, c)
        check("triton", c, ref)
        timings["triton"] = median_ms(functools.partial(triton_gemm, a, b, c))
        best = None
        for config in configs:
            kernel = ours(config)
            c = torch.full_like(ref, float("nan"))
            kernel(a, b, c)
            torch.cuda.synchronize()
            check(f"tawa {config}", c, ref)
            launch = kernel.bind(a, b, c)
            ms = median_ms(launch)
            if best is None or ms < best[0]:
                best = (ms, config)
        timings["tawa"] = best[0]
        row = {"M": m, "N": n, "K": k, "config": "D{}-P{}-W{}".format(*best[1])}
        for name, ms in timings.items():
            row[f"{name}_tflops"] = round(tflops(m, n, k, ms), 1)
        row["tawa/cublas"] = round(row["tawa_tflops"] / row["cublas_tflops"], 3)
        row["tawa/triton"] = round(row["tawa_tflops"] / row["triton_tflops"], 3)
        rows.append(row)
        print_row(row)
    write(rows, out_dir)
    return rows


HEADER = f"{'shape':>20} {'config':>10} {'tawa':>8} {'cuBLAS':>8} {'Triton':>8} {'/cuBLAS':>8} {'/Triton':>8}"


def print_row(row: dict) -> None:
    shape = f"{row['M']}x{row['N']}x{row['K']}"
    print(
        f"{shape:>20} {row['config']:>10} {row['tawa_tflops']:>8} {row['cublas_tflops']:>8} "
        f"{row['triton_tflops']:>8} {row['tawa/cublas']:>8} {row['tawa/triton']:>8}",
        flush=True,
    )


def write(rows: list[dict], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "gemm.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['M']}x{r['N']}x{r['K']}" for r in rows]
    x = range(len(rows))
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for i, (name, key) in enumerate(
        [
            ("tawa-xdsl", "tawa_tflops"),
            ("cuBLAS", "cublas_tflops"),
            ("Triton (ours)", "triton_tflops"),
        ]
    ):
        ax.bar(
            [p + 0.27 * (i - 1) for p in x], [r[key] for r in rows], 0.27, label=name
        )
    ax.set_xticks(list(x), labels, rotation=20)
    ax.set_ylabel("TFLOP/s (bf16)")
    ax.set_title("GEMM C = A @ B^T on H100")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out_dir / "gemm.png", dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        help="num_stages,mma_depth,num_consumers (repeatable; the best one is reported)",
    )
    parser.add_argument(
        "--shapes", default="", help="MxNxK,... (default: the standard set)"
    )
    args = parser.parse_args()
    configs = [tuple(int(x) for x in c.split(",")) for c in args.config] or [
        DEFAULT_CONFIG
    ]
    shapes = [
        tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",") if s
    ] or SHAPES
    print(torch.cuda.get_device_name(), flush=True)
    print(HEADER, flush=True)
    run(shapes, configs, args.out)


if __name__ == "__main__":
    main()
