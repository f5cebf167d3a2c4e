"""Stream-K against split-K: cuBLAS, the dispatcher's default pick, forced
split-K and forced stream-K side by side, per GEMM row (issue 16, item 2).

    python benchmarks/stream_k_sweep.py [--rows PATTERNS] [--shapes MxNxK,...]
                                        [--out DIR] [--list]

The rows: issue 16's small-M rows (M in 16, 64, 128, 256 with N x K in 6144 x
4096, 4096 x 4096, 4096 x 14336; 128x1024x8192; 256x256x16384), where split-K
leaves SMs idle, and a few rows a wave and a bit of tiles long, where the wave
model streams K by default. Each tawa column is `compile(examples/gemm.mlir,
"gemm_nt", stream_k=...)`: default (None: the rule decides), "split" (False:
the wave model's split or unsplit pick, never stream-K) and "stream" (True:
stream-K whenever the call may split). Every kernel is checked against cuBLAS
(output poisoned with NaN) before it is timed (median of CUDA-event timings,
L2 flushed: `common.median_ms`). The CSV (results/stream_k_sweep.csv) keeps
each column's plan ("128x128 split 2", "128x128 stream 4s/132p":
slots and programs, "64x128 unsplit") and the rule's reason
on stream-K for the default column (the predicted cost of the best stream-K
plan against the pick it weighed), which is what `dispatch_rules.STREAM_K_GAIN`
is tuned against.
"""

from __future__ import annotations

from typing import Any

from common import (
    EXAMPLES,
    CsvLog,
    GemmRow,
    attempt,
    check,
    median_ms,
    pick,
    print_plan,
    row_arguments,
    warm_up,
)

COLUMNS = {"default": None, "split": False, "stream": True}
"""The tawa columns: the `stream_k` option each compiles with."""


Row = GemmRow


SMALL_M = [
    Row(m, n, k)
    for m in (16, 64, 128, 256)
    for n, k in ((6144, 4096), (4096, 4096), (4096, 14336))
] + [Row(128, 1024, 8192), Row(256, 256, 16384)]
"""Issue 16's small-M rows: output tiles (times the split) short of the SMs."""

WAVE_AND_A_BIT = [Row(768, 3072, 8192), Row(1024, 2560, 8192), Row(1536, 1536, 16384)]
"""Rows whose tiles fill a wave and a bit: where the rule streams by default."""

FIELDS = [
    "label",
    "m",
    "n",
    "k",
    "cublas_tflops",
    *(f"{c}_{what}" for c in COLUMNS for what in ("tflops", "plan", "vs_cublas")),
    "stream_k_reason",
    "errors",
]


def plan_of(kernel: Any, row: Row) -> str:
    """What the last call ran: the partials (or only) kernel's tile, and K
    unsplit, split S ways, or streamed (its slots and programs)."""
    spec = kernel.current
    decision = spec.plan.decision
    options = spec.kernel.options
    tile = f"{options['block_m'] or 128}x{options['block_n'] or 128}"
    if decision.stream_k:
        extents = {"M": row.m, "N": row.n, "K": row.k}
        slots, programs = kernel.stream_k_launch(spec.kernel, extents)
        return f"{tile} stream {slots}s/{programs}p"
    if decision.split_k > 1:
        return f"{tile} split {decision.split_k}"
    return f"{tile} unsplit"


def stream_k_reason(kernel: Any) -> str:
    """The rule's words on stream-K for the last call: the predicted cost of
    stream-K against the pick it weighed (`dispatch_rules.STREAM_K_GAIN`)."""
    reasons = kernel.current.plan.decision.reasons
    return "; ".join(r.text for r in reasons if r.rule == "stream-K")


def measure(row: Row) -> dict:
    """Check and time cuBLAS and each tawa column on one row."""
    import torch

    import tawa_xdsl

    a = torch.randn(row.m, row.k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(row.n, row.k, device="cuda", dtype=torch.bfloat16)
    reference = a @ b.t()
    flop = 2 * row.m * row.n * row.k
    errors: list[str] = []
    out: dict[str, Any] = dict.fromkeys(FIELDS) | {
        "label": row.label,
        "m": row.m,
        "n": row.n,
        "k": row.k,
    }

    def tflops(ms: float | None) -> float | None:
        return None if ms is None else round(flop / ms / 1e9, 1)

    def cublas() -> float:
        check("cublas", a @ b.t(), reference)
        return median_ms(lambda: a @ b.t())

    cublas_ms = attempt(errors, "cublas", cublas)
    out["cublas_tflops"] = tflops(cublas_ms)
    for column, stream_k in COLUMNS.items():

        def ours(
            column: str = column, stream_k: bool | None = stream_k
        ) -> tuple[float, str, str]:
            kernel = tawa_xdsl.compile(
                EXAMPLES / "gemm.mlir", "gemm_nt", stream_k=stream_k
            )
            c = torch.full(
                (row.m, row.n), float("nan"), device="cuda", dtype=torch.bfloat16
            )
            launch = kernel.bind(a, b, c)  # this shape's specialization
            launch()
            torch.cuda.synchronize()
            check(f"tawa {column}", c, reference)
            return median_ms(launch), plan_of(kernel, row), stream_k_reason(kernel)

        found = attempt(errors, f"tawa {column}", ours)
        if found is not None:
            ms, plan, reason = found
            if stream_k is None:
                out["stream_k_reason"] = reason
            out[f"{column}_tflops"] = tflops(ms)
            out[f"{column}_plan"] = plan
            if cublas_ms is not None:
                out[f"{column}_vs_cublas"] = round(cublas_ms / ms, 3)
    out["errors"] = "; ".join(errors)
    return out


def print_row(row: dict) -> None:
    def cell(column: str) -> str:
        ratio = row[f"{column}_vs_cublas"]
        plan = row[f"{column}_plan"] or "failed"
        return f"{'-' if ratio is None else f'{ratio:.3f}':>6} {plan:<24}"

    print(
        f"{row['label']:>18} {row['cublas_tflops'] or '-':>7} "
        + " ".join(cell(c) for c in COLUMNS)
        + (f"  {row['errors']}" if row["errors"] else ""),
        flush=True,
    )


def main() -> None:
    parser = row_arguments(__doc__.splitlines()[0])
    args = parser.parse_args()
    shapes = [Row.parse(s) for s in args.shapes.split(",") if s]
    rows = pick(shapes or SMALL_M + WAVE_AND_A_BIT, args.rows, None)
    print_plan([r.label for r in rows], 4 * 1.5 * len(rows), args.list)
    if args.list or not rows:
        return
    import torch

    print(torch.cuda.get_device_name(), flush=True)
    warm_up()
    print(
        f"{'row':>18} {'cuBLAS':>7} "
        + " ".join(f"{c + ' (of cuBLAS, plan)':<31}" for c in COLUMNS),
        flush=True,
    )
    with CsvLog(args.out / "stream_k_sweep.csv", FIELDS) as log:
        for row in rows:
            result = measure(row)
            log.write(result)
            print_row(result)


if __name__ == "__main__":
    main()
