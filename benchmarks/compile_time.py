"""Compile time: tile IR -> PTX for every example kernel, and where it goes.

    python benchmarks/compile_time.py [--repeat 3] [--profile gemm_nt] [--out DIR]
                                      [--kernels gemm_nt,attention_d128]

Times the path `tawa_xdsl.compile` takes (parsing the kernel's part of its file,
the tuned `tawa-hopper-pipeline`, the PTX stages) per kernel (those of --kernels, and the profiled one), median of --repeat runs, on this machine's CPU (no
GPU needed; the target is under 1 s per kernel on a 2-core machine). Then
profiles one kernel with cProfile and prints the stages and the functions that
take the time. Writes compile_time.csv under --out.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import EXAMPLES, RESULTS, write_csv

import tawa_xdsl
from tawa_xdsl.api import parse_kernel
from tawa_xdsl.compiler import CompileOptions, lower
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.kernel import find_kernel, kernels
from tawa_xdsl.lowering.ptx_target import kernel_ptx


def stages(text: str, name: str) -> dict[str, float]:
    """Seconds per stage of compiling kernel `name` of module `text`; a kernel
    the back end refuses raises its diagnostic."""
    times: dict[str, float] = {}
    start = time.perf_counter()
    module = parse_kernel(text, name)
    kernel = find_kernel(module, name)
    options = CompileOptions().resolve(kernel)
    times["parse"] = time.perf_counter() - start
    start = time.perf_counter()
    lowered = lower(module, options)
    times["passes"] = time.perf_counter() - start
    start = time.perf_counter()
    kernel_ptx(find_kernel(lowered, name))
    times["ptx"] = time.perf_counter() - start
    times["total"] = sum(times.values())
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", default="attention_causal_d128")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--kernels", default="", help="only these kernels (comma-separated names)"
    )
    args = parser.parse_args()
    only = set(filter(None, args.kernels.split(",")))
    rows = []
    print(f"{'kernel':>28} {'parse':>7} {'passes':>7} {'ptx':>7} {'total':>7}  (s)")
    sources = {}
    for path in sorted(EXAMPLES.glob("*.mlir")):
        text = path.read_text()
        for k in kernels(tawa_xdsl.parse(text)):
            name = k.sym_name.data
            if only and name not in only | {args.profile}:
                continue
            try:
                runs = [stages(text, name) for _ in range(args.repeat)]
            except OpDiagnostic as e:  # no PTX lowering yet: say so, time the rest
                print(f"{name:>28} skipped: {e.message}", flush=True)
                continue
            sources[name] = text
            row = {"file": path.name, "kernel": name}
            for stage in ("parse", "passes", "ptx", "total"):
                row[stage] = round(statistics.median(r[stage] for r in runs), 3)
            rows.append(row)
            print(
                f"{name:>28} {row['parse']:>7} {row['passes']:>7} {row['ptx']:>7} "
                f"{row['total']:>7}",
                flush=True,
            )
    worst = max(rows, key=lambda r: r["total"])
    print(f"slowest: {worst['kernel']} {worst['total']} s")
    write_csv(rows, args.out / "compile_time.csv")

    profiler = cProfile.Profile()
    profiler.enable()
    stages(sources[args.profile], args.profile)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
    print(f"\nprofile of {args.profile} (cumulative time, top 25):")
    print(out.getvalue())


if __name__ == "__main__":
    main()
