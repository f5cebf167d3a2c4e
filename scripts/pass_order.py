"""Pass-ordering experiments: run several pass orders and options over one example
kernel, check each result, and (with a GPU) time it; print a ranked table.

    python scripts/pass_order.py examples/gemm.mlir gemm_nt
    python scripts/pass_order.py examples/attention.mlir attention_d128 --gpu
    python scripts/pass_order.py FILE KERNEL --orders my_orders.txt

Each order is a pass pipeline string ending in nvgpu_async IR (one per line in
--orders; `#` starts a comment). For each one the script reports:

- rejected: a pass refused the order, with its diagnostic (e.g. pipeline before
  aref-partition); BUG: a pass crashed or left invalid IR (`InternalError`);
- the lowered kernel run in the barrier simulator on a small random problem
  under several schedules, compared bit for bit with the reference interpreter
  on the original kernel: ok, WRONG (with the largest difference), a predicted
  HANG or a HAZARD (with the simulator's message);
- with --gpu: TFLOP/s on --size, after checking the result against float64.

Orders that pass are ranked by TFLOP/s (with --gpu) or listed in input order.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import tawa_xdsl
from tawa_xdsl.diagnostics import DiagnosticException, InternalError
from tawa_xdsl.dtypes import numpy_dtype
from tawa_xdsl.grid import GridInferenceError, grid_rule, infer_grid
from tawa_xdsl.interp.scheduler import SimulationError
from tawa_xdsl.kernel import find_kernel, params

LOWER = "convert-aref-to-nvgpu-async,canonicalize,cse,dce"

GEMM_ORDERS = [
    f"aref-partition,pipeline{{num-stages=3 mma-depth=2}},{LOWER}",
    f"canonicalize,cse,aref-partition,pipeline{{num-stages=3 mma-depth=2}},{LOWER}",
    f"aref-partition,cooperative,pipeline{{num-stages=3 mma-depth=2}},{LOWER}",
    f"aref-partition,pipeline{{num-stages=3 mma-depth=2}},cooperative,{LOWER}",
    f"aref-partition,cooperative,pipeline{{num-stages=4 mma-depth=1}},{LOWER}",
    f"tile-shape{{block-n=256}},aref-partition,cooperative,pipeline{{num-stages=3 mma-depth=1}},{LOWER}",
    f"tile-shape{{block-n=256}},persistent,aref-partition,cooperative,pipeline{{num-stages=3 mma-depth=1}},{LOWER}",
    f"persistent,tile-shape{{block-n=256}},aref-partition,cooperative,pipeline{{num-stages=3 mma-depth=1}},{LOWER}",
    f"tile-shape{{block-n=256}},persistent,aref-partition,cooperative,register-budget{{producer=40 consumer=232}},pipeline{{num-stages=3 mma-depth=1}},{LOWER}",
    f"pipeline{{num-stages=3}},aref-partition,{LOWER}",
]
ATTENTION_ORDERS = [
    f"aref-partition,cooperative,pipeline{{num-stages=2 mma-depth=1}},{LOWER}",
    f"aref-partition,cooperative,pipeline{{num-stages=2 mma-depth=1 two-stage=true}},{LOWER}",
    f"aref-partition,cooperative,pipeline{{num-stages=3 mma-depth=1 two-stage=true}},{LOWER}",
    f"aref-partition,pipeline{{num-stages=3 mma-depth=1 two-stage=true}},cooperative,{LOWER}",
    f"aref-partition,cooperative,pipeline{{num-stages=3 mma-depth=2 two-stage=true}},{LOWER}",
    f"persistent,aref-partition,cooperative,pipeline{{num-stages=2 mma-depth=1 two-stage=true}},{LOWER}",
    f"tile-shape{{block-n=64}},aref-partition,cooperative,pipeline{{num-stages=3 mma-depth=1 two-stage=true}},{LOWER}",
    f"aref-partition,cooperative{{num-consumers=3}},pipeline{{num-stages=2 mma-depth=1}},{LOWER}",
]


@dataclass
class Outcome:
    order: str
    status: str
    detail: str = ""
    tflops: float | None = None
    lowered: object = field(default=None, repr=False)


def small_problem(kernel, name: str, rng) -> tuple[list, list[int], tuple[int, ...]]:
    """Random arguments for a small problem: GEMM 200x300x256, attention 2x300
    (head dim from the kernel); returns (arguments, output index, grid)."""
    ps = params(kernel)
    if name.startswith("attention"):
        d = ps[0].type.get_shape()[-1]
        shapes = [(2, 300, d)] * 4
        scalars = [1 / math.sqrt(d)]
    else:
        k = 256
        shapes = [(200, k), (300, k) if "_nt" in name else (k, 300), (200, 300)]
        scalars = []
    arrays = []
    for p, shape in zip(ps, shapes, strict=False):
        dtype = numpy_dtype(p.type.element_type)
        arrays.append(rng.standard_normal(shape).astype(dtype))
    out = len(arrays) - 1
    arrays[out][...] = np.nan
    grid = infer_grid(grid_rule(kernel), arrays + scalars)
    return arrays + scalars, [out], grid


def check_order(source: Path, name: str, order: str, schedules: int) -> Outcome:
    """Run `order` on kernel `name` of the file `source` (parsed from it, so a
    rejection names its line, not `<string>`), then simulate it."""
    try:
        lowered = tawa_xdsl.apply(tawa_xdsl.parse(source), order)
    except (DiagnosticException, ValueError) as e:
        return Outcome(order, "rejected", str(e).splitlines()[0])
    except InternalError as e:  # a bug of tawa-xdsl's: report it, keep ranking
        return Outcome(order, "BUG", str(e).splitlines()[0])
    kernel = find_kernel(tawa_xdsl.parse(source), name)
    args, (out,), grid = small_problem(kernel, name, np.random.default_rng(0))
    reference = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    tawa_xdsl.interpret(tawa_xdsl.parse(source), name, *reference, grid=grid)
    persistent = "tile.persistent" in find_kernel(lowered, name).attributes
    sim_grid = (max(1, int(np.prod(grid)) // 2),) if persistent else grid
    for seed in range(schedules):
        args[out][...] = np.nan
        try:
            tawa_xdsl.simulate(lowered, name, *args, grid=sim_grid, seed=seed)
        except SimulationError as e:
            kind = "HANG" if "hang" in str(e) else "HAZARD"
            return Outcome(order, kind, str(e).splitlines()[0][:160], lowered=lowered)
        got, want = args[out].astype(np.float64), reference[out].astype(np.float64)
        if not np.array_equal(np.isnan(got), np.isnan(want)) or np.nanmax(
            np.abs(got - want)
        ) > 1e-2 * (1 + np.nanmax(np.abs(want))):
            return Outcome(
                order, "WRONG", f"max |diff| {np.nanmax(np.abs(got - want)):.3g}"
            )
    return Outcome(order, "ok", lowered=lowered)


def time_on_gpu(outcome: Outcome, source_kernel, name: str, size: int) -> None:
    import torch
    import triton

    from tawa_xdsl.compiled import from_lowered
    from tawa_xdsl.runtime import Kernel

    kernel = Kernel(from_lowered(outcome.lowered, name))
    if name.startswith("attention"):
        d = params(source_kernel)[0].type.get_shape()[-1]
        heads, batch = 2048 // d, 16384 // size
        q, k, v = (
            torch.randn(batch * heads, size, d, device="cuda", dtype=torch.bfloat16)
            for _ in range(3)
        )
        o = torch.full_like(q, float("nan"))
        args = [q, k, v, o, 1 / math.sqrt(d)]
        causal = "causal" in name
        ref = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=causal
        )
        flops = 4 * batch * heads * size * size * d * (0.5 if causal else 1)
        out = o
    else:
        a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        c = torch.full((size, size), float("nan"), device="cuda", dtype=torch.bfloat16)
        args = [a, b if "_nt" in name else b.t().contiguous(), c]
        ref = a @ b.t()
        flops = 2 * size**3
        out = c
    try:
        kernel(*args)
    except Exception as e:  # a kernel that does not fit: report, keep ranking
        outcome.status, outcome.detail = "GPU", str(e).splitlines()[0][:160]
        return
    torch.cuda.synchronize()
    err = float((out.float() - ref.float()).norm() / ref.float().norm())
    if not err < 1e-2:
        outcome.status, outcome.detail = "WRONG on GPU", f"relative error {err:.2e}"
        return
    ms = triton.testing.do_bench(kernel.bind(*args), warmup=50, rep=200)
    outcome.tflops = flops / ms / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("kernel")
    parser.add_argument("--orders", type=Path, help="one pass pipeline per line")
    parser.add_argument("--schedules", type=int, default=2)
    parser.add_argument("--gpu", action="store_true", help="time on the GPU")
    parser.add_argument("--size", type=int, help="GEMM M=N=K / attention seq")
    args = parser.parse_args()
    source = args.file
    try:
        source_kernel = find_kernel(tawa_xdsl.parse(source), args.kernel)
    except (DiagnosticException, ValueError) as e:
        sys.exit(f"pass_order: {e}")
    if args.orders:
        lines = args.orders.read_text().splitlines()
        orders = [ln.split("#")[0].strip() for ln in lines if ln.split("#")[0].strip()]
    else:
        orders = (
            ATTENTION_ORDERS if args.kernel.startswith("attention") else GEMM_ORDERS
        )
    outcomes = []
    for order in orders:
        try:
            outcome = check_order(source, args.kernel, order, args.schedules)
        except GridInferenceError as e:
            outcome = Outcome(order, "rejected", str(e))
        if args.gpu and outcome.status == "ok":
            size = args.size or (4096 if args.kernel.startswith("attention") else 8192)
            time_on_gpu(outcome, source_kernel, args.kernel, size)
        outcomes.append(outcome)
        tf = f"{outcome.tflops:8.1f}" if outcome.tflops else " " * 8
        print(f"{outcome.status:>9} {tf}  {order}  {outcome.detail}", flush=True)
    ranked = sorted(outcomes, key=lambda o: (o.status != "ok", -(o.tflops or 0)))
    print("\nranked:")
    for rank, o in enumerate(ranked, 1):
        tf = f"{o.tflops:8.1f} TFLOP/s" if o.tflops else f"{o.status:>15}"
        print(f"{rank:>3}. {tf}  {o.order}")


if __name__ == "__main__":
    main()
