"""Block-scaled FP8 GEMM variants side by side (issue 17, NOTES 3.39):

    python benchmarks/blockwise.py [--shapes MxNxK,...] [--variants NAMES] [--list]

C (bf16) = DeepSeek-V3 block-scaled A @ B^T (A e4m3 with a scale per 1 x 128
group, B e4m3 with one per 128 x 128 block), at 4096 x 7168 x 16384, 128 x 7168
x 16384, 4096 x 4096 x 7168 and 4096 x 2112 x 7168 by default. Each variant is
a kernel of examples/gemm_fp8.mlir with compile options:

- `block`: `gemm_fp8_blockwise` as `compile` tunes it (one K block an
  iteration: its MMA group is waited for before its promotion, so each
  consumer warpgroup's tensor cores idle while it promotes), the kernel of the
  first run (NOTES 3.36);
- `block-cluster2`: the same in clusters of 2 along M (B's tiles multicast: a
  128 x 128 FP8 tile moves 32 KB per 4 MFLOP from L2, twice the bytes per
  FLOP of the per-tensor kernel's 128 x 256);
- `overlap`: `gemm_fp8_blockwise_overlap` as `compile` tunes it (two K blocks
  an iteration, both MMA groups issued before the first promotion, which then
  waits for one group and runs under the second; two stages of two blocks);
- `overlap-3stage`: the same with three stages, the epilogue storing from
  registers (three stages of two blocks leave no room for the staging tile);
- `overlap-cluster2`: the overlap kernel in clusters of 2;
- `tensor-128`: the per-tensor kernel on 128 x 128 tiles (`block_n=128`), on
  per-tensor quantized operands of the same shape: no promotion at all, the
  ceiling of this tile shape;
- `cublas`: cuBLAS's block-scaled GEMM through torch (scaled_mm.py), the peer.

Every kernel is checked against the float64 product of its dequantized
operands (relative error < 1e-2) before it is timed (CUDA events, L2 flushed,
median). A variant that is refused or wrong is recorded and the run goes on.
Prints TFLOP/s per shape and variant and each variant over `block` and over
cuBLAS; writes results/blockwise.csv. About 2-3 minutes on an H100.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    EXAMPLES,
    RESULTS,
    CsvLog,
    attempt,
    check,
    geomean,
    median_ms,
    warm_up,
)

SHAPES = [
    (4096, 7168, 16384),
    (128, 7168, 16384),
    (4096, 4096, 7168),
    (4096, 2112, 7168),
]
VARIANTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    # name: (scaling of the operands, kernel of gemm_fp8.mlir, compile options)
    "block": ("block", "gemm_fp8_blockwise", {}),
    "block-cluster2": ("block", "gemm_fp8_blockwise", {"cluster": 2}),
    "overlap": ("block", "gemm_fp8_blockwise_overlap", {}),
    "overlap-3stage": (
        "block",
        "gemm_fp8_blockwise_overlap",
        {"num_stages": 3, "tma_store": False},
    ),
    "overlap-cluster2": ("block", "gemm_fp8_blockwise_overlap", {"cluster": 2}),
    "tensor-128": ("tensor", "gemm_fp8_tensorwise", {"block_n": 128}),
    "cublas": ("block", "", {}),
}
BASE = "block"


def measure(shape: tuple[int, int, int], names: list[str]) -> dict[str, Any]:
    """TFLOP/s of each variant on one shape (None where it did not run)."""
    import torch
    from fp8 import scaled_gemm
    from scaled_mm import scaled_mm

    import tawa_xdsl

    m, n, k = shape
    flops = 2 * m * n * k
    operands: dict[str, Any] = {}
    row: dict[str, Any] = {"shape": "x".join(map(str, shape)), "errors": ""}
    errors: list[str] = []
    for name in names:
        scaling, kernel, options = VARIANTS[name]
        if scaling not in operands:
            operands[scaling] = scaled_gemm(scaling, m, n, k)
        g = operands[scaling]

        def timed(
            name=name, scaling=scaling, kernel=kernel, options=options, g=g
        ) -> float:
            if not kernel:
                check(name, scaled_mm(g, "block"), g.reference)
                return median_ms(lambda: scaled_mm(g, "block"))
            c = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
            args = (
                [g.a, g.b, c, float(g.scale_a), float(g.scale_b)]
                if scaling == "tensor"
                else [g.a, g.b, g.scale_a, g.scale_b, c]
            )
            compiled = tawa_xdsl.compile(EXAMPLES / "gemm_fp8.mlir", kernel, **options)
            launch = compiled.bind(*args)
            launch()
            torch.cuda.synchronize()
            check(name, c, g.reference)
            return median_ms(launch)

        ms = attempt(errors, name, timed)
        row[name] = round(flops / ms / 1e9, 1) if ms else None
        print(f"  {row['shape']:>18} {name:>18} {row[name]!s:>8} TFLOP/s", flush=True)
    row["errors"] = "; ".join(errors)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="", help="MxNxK,... (K %% 512 == 0)")
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help="comma-separated names"
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--list", action="store_true", help="print the plan, exit")
    args = parser.parse_args()
    shapes = [
        tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",") if s
    ] or SHAPES
    names = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(names) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    print(f"{len(shapes)} shapes x {len(names)} variants: {', '.join(names)}")
    if args.list:
        return
    import torch

    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    warm_up()
    rows = []
    with CsvLog(args.out / "blockwise.csv", ["shape", *names, "errors"]) as log:
        for shape in shapes:
            row = measure(shape, names)
            log.write(row)
            rows.append(row)
    print(f"\n{'shape':>18}" + "".join(f"{n:>18}" for n in names))
    for row in rows:
        print(f"{row['shape']:>18}" + "".join(f"{row[n]!s:>18}" for n in names))
    for ref in (BASE, "cublas"):
        if ref not in names:
            continue
        cells = []
        for name in names:
            ratios = [r[name] / r[ref] for r in rows if r[name] and r[ref]]
            cells.append(f"{geomean(ratios):.3f}" if ratios else "-")
        print(f"{'geomean / ' + ref:>18}" + "".join(f"{c:>18}" for c in cells))
    for row in rows:
        if row["errors"]:
            print(f"{row['shape']}: {row['errors']}")


if __name__ == "__main__":
    main()
