"""Every GEMM tile shape and K split, forced, against cuBLAS: the data the wave
model's rates and memory terms are fitted on (`tawa_xdsl/heuristics.py`,
`tawa_xdsl/dispatch_rules.py`; NOTES 3.47).

    python benchmarks/tile_widths.py [--shapes MxNxK,...] [--rows PATTERNS]
                                     [--config key=value,...] [--out DIR] [--list]

Per row: cuBLAS, the dispatcher's default pick, then `compile(examples/gemm.mlir,
"gemm_nt", block_m=BM, block_n=BN, split_k=S)` for BM in 64 and 128 (128 only
above M = 1024), BN in 96, 128, 160, 192 and 256 (and 64 under 128 rows), and S
in 1 and the splits
that keep the programs within one wave of SMs (the most that fit, one fewer,
and the fewest that fill it; never fewer than 4 K iterations a slice). Every
kernel is checked against cuBLAS (output poisoned with NaN) before it is
timed (`common.median_ms`). The CSV (results/tile_widths.csv) has one line
per kernel: the plan that ran (tile, split, stages, consumers, persistent) and
its speed over cuBLAS's. `--config` adds options to every forced kernel (for
example `num_stages=8`: deeper rings on the rows that wait on HBM).
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
    parse_options,
    pick,
    print_plan,
    row_arguments,
    warm_up,
)

from tawa_xdsl.target import SM_COUNT

WIDTHS = (64, 96, 128, 160, 192, 256)
"""Tile widths forced; 64 only under 128 rows (the wave model has no 64x64)."""


class Row(GemmRow):
    """A row, and the tile shapes and splits it forces."""

    def configs(self) -> list[tuple[int, int, int]]:
        """(BM, BN, S) to force, the default pick aside."""
        found = []
        for bm in (64, 128) if self.m <= 1024 else (128,):
            for bn in (w for w in WIDTHS if w >= 96 or bm == 128):
                tiles = -(-self.m // bm) * -(-self.n // bn)
                most = -(-self.k // 64) // 4
                fit = SM_COUNT // tiles
                splits = (
                    {fit, fit - 1, -(-SM_COUNT // tiles)} if self.m <= 1024 else set()
                )
                found += [
                    (bm, bn, s)
                    for s in sorted({1} | {s for s in splits if 2 <= s <= most})
                ]
        return found


ROWS = [
    Row.parse(s)
    for s in [
        "128x6144x4096",
        "128x4096x4096",
        "256x6144x4096",
        "512x6144x4096",
        "768x3072x8192",
        "1024x2560x8192",
        "1536x1536x16384",
        "2000x3000x1024",
        "3000x5000x4096",
        "2048x2048x2048",
        "1000x1000x1000",
        "256x256x16384",
    ]
]
"""Rows of few output rows (HBM-bound), of about one wave of tiles of some
width, of short K, and of several waves."""

FIELDS = [
    "label",
    "m",
    "n",
    "k",
    "cublas_tflops",
    "plan",
    "tflops",
    "vs_cublas",
    "errors",
]


def plan_of(kernel: Any) -> str:
    """The tile, split, stages, consumers and grid of the last call."""
    spec = kernel.current
    o = spec.kernel.options
    return (
        f"{o['block_m'] or 128}x{o['block_n'] or 256} s{spec.plan.decision.split_k} "
        f"st{o['num_stages']} W{o['num_consumers']} p{int(bool(o['persistent']))}"
    )


def measure(row: Row, log: CsvLog, extra: dict[str, Any]) -> None:
    import torch

    import tawa_xdsl

    a = torch.randn(row.m, row.k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(row.n, row.k, device="cuda", dtype=torch.bfloat16)
    reference = a @ b.t()
    flop = 2 * row.m * row.n * row.k
    errors: list[str] = []
    cublas_ms = attempt(errors, "cublas", lambda: median_ms(lambda: a @ b.t()))
    base = {"label": row.label, "m": row.m, "n": row.n, "k": row.k}
    base["cublas_tflops"] = cublas_ms and round(flop / cublas_ms / 1e9, 1)
    forced: list[dict[str, Any]] = [{}] + [
        {"block_m": bm, "block_n": bn, "split_k": s, **extra}
        for bm, bn, s in row.configs()
    ]
    for options in forced:
        errors = []

        def ours(options: dict[str, Any] = options) -> tuple[float, str]:
            kernel = tawa_xdsl.compile(
                EXAMPLES / "gemm.mlir", "gemm_nt", stream_k=False, **options
            )
            c = torch.full(
                (row.m, row.n), float("nan"), device="cuda", dtype=torch.bfloat16
            )
            launch = kernel.bind(a, b, c)
            launch()
            torch.cuda.synchronize()
            check("tawa", c, reference)
            return median_ms(launch), plan_of(kernel)

        found = attempt(errors, "tawa", ours)
        line = dict(base, errors="; ".join(errors))
        if found is not None:
            ms, plan = found
            line |= {"plan": ("default " if not options else "") + plan}
            line |= {"tflops": round(flop / ms / 1e9, 1)}
            if cublas_ms is not None:
                line["vs_cublas"] = round(cublas_ms / ms, 4)
        log.write(line)
        print(
            f"{row.label:>18} {line.get('plan', 'failed'):<28} {line.get('vs_cublas', '-')}",
            flush=True,
        )


def main() -> None:
    parser = row_arguments(__doc__.splitlines()[0])
    parser.add_argument("--config", default="", help="options for every forced kernel")
    args = parser.parse_args()
    extra = parse_options(args.config)
    shapes = [Row.parse(s) for s in args.shapes.split(",") if s]
    rows = pick(shapes or ROWS, args.rows, None)
    print_plan(
        [r.label for r in rows],
        1.5 * sum(1 + len(r.configs()) for r in rows),
        args.list,
    )
    if args.list or not rows:
        return
    import torch

    print(torch.cuda.get_device_name(), flush=True)
    warm_up()
    with CsvLog(args.out / "tile_widths.csv", FIELDS) as log:
        for row in rows:
            measure(row, log, extra)


if __name__ == "__main__":
    main()
