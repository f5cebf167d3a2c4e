"""Host time per call: a loop of plain calls of a compiled GEMM, a loop of its
bound launcher (`kernel.bind`), a loop of plain calls on cupy arrays (f16,
where cupy is installed), and a loop of `torch.matmul`, each launched
back to back with no cache flush, so a call whose host work outlasts its
kernel shows as time per call above the kernel's. Each kernel is checked
against cuBLAS first. Prints a table and writes results/launch_overhead.csv.

    python benchmarks/launch_overhead.py [--calls 300]
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable

from common import EXAMPLES, RESULTS, check, warm_up, write_csv

SHAPES = [(64, 64, 64), (128, 128, 1024), (64, 4096, 4096), (1024, 1024, 1024)]


def per_call_us(fn: Callable[[], object], calls: int) -> tuple[float, float]:
    """(wall time per call with the GPU drained at the end, host time per call
    to enqueue), in microseconds, after 20 calls of warm-up."""
    import torch

    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    enqueued = time.perf_counter()
    torch.cuda.synchronize()
    done = time.perf_counter()
    return (done - start) / calls * 1e6, (enqueued - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    import torch

    import tawa_xdsl

    try:
        import cupy
    except ImportError:
        cupy = None
    warm_up()
    kernel = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt")
    kernel16 = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt_f16")
    rows = []
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        kernel(a, b, c)
        torch.cuda.synchronize()
        check("tawa", c, a @ b.t())
        bound = kernel.bind(a, b, c)
        row = {"shape": f"{m}x{n}x{k}"}
        loops = [
            ("torch", functools.partial(torch.matmul, a, b.t())),
            ("tawa_call", functools.partial(kernel, a, b, c)),
            ("tawa_bound", bound),
        ]
        if cupy is not None:
            halves = [x.half() for x in (a, b, c)]  # cupy's arrays share them
            a16, b16, c16 = (cupy.asarray(x) for x in halves)
            kernel16(a16, b16, c16)
            torch.cuda.synchronize()
            check("tawa cupy", halves[2], a @ b.t())
            loops.append(("cupy_call", functools.partial(kernel16, a16, b16, c16)))
        for name, fn in loops:
            wall, host = per_call_us(fn, args.calls)
            row[f"{name}_us"], row[f"{name}_host_us"] = round(wall, 1), round(host, 1)
        rows.append(row)
        print(
            f"{row['shape']:>16}  "
            + "  ".join(f"{name} {row[f'{name}_us']:7.1f}" for name, _ in loops)
            + "  | host us/call  "
            + "  ".join(f"{name} {row[f'{name}_host_us']:6.1f}" for name, _ in loops),
            flush=True,
        )
    write_csv(rows, RESULTS / "launch_overhead.csv")


if __name__ == "__main__":
    main()
