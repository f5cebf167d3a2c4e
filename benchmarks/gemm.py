"""GEMM benchmark: tawa-xdsl vs cuBLAS (torch.matmul) vs our Triton GEMM, in one run.

    python benchmarks/gemm.py [--dtype bf16|fp8] [--suite six|llm|other] [--quick]
                              [--rows PATTERNS] [--list] [--shapes MxNxK,...]
                              [--config OPTIONS ...] [--out DIR]

Suites: `six` (the default), six large bf16 shapes; `llm`, issue 16's shapes
from real models (C = A @ W^T, 44 rows: bf16 with B stored N x K, plus rows
with B stored K x N and f16 rows, and the six); `other`, 40 bf16 shapes from
models the llm suite does not hold (decode batches, LM heads, vision, odd K),
the check of the shape rules beyond the shapes they were fitted on. A row is named
MxNxK[-nn][-f16] (`-nn`: B stored K x N, the gemm_nn kernels); `--rows` keeps
the rows matching any of comma-separated shell patterns (`--rows '*-nn,16x*'`),
`--quick` a representative dozen of the suite, `--shapes` replaces the suite by
bf16 N x K shapes. The row count and the estimated GPU time are printed first;
`--list` prints them with the rows and exits (no GPU needed).

`--dtype fp8` (issue 17) runs the FP8 suite instead: C (bf16) = (A @ B^T)
scaled, A and B e4m3 (B N x K), with per-tensor scales (rows named
MxNxK-fp8-tensor, kernel gemm_fp8_tensorwise of examples/gemm_fp8.mlir) and
row-wise scales (-fp8-row, gemm_fp8_rowwise) at 4096^3, 8192^3, 8192 x 8192 x
{1024, 4096, 16384} and the llm suite's rows with M >= 512, and DeepSeek-V3
block scales (-fp8-block, gemm_fp8_blockwise_overlap) at M in {128, 4096} with (N, K)
in {(7168, 16384), (4096, 7168), (2112, 7168)}. Its cuBLAS is FP8 through torch
(benchmarks/scaled_mm.py: the scalings this torch takes, found at run time,
the others recorded as unsupported) and its Triton our FP8 GEMM; every kernel
is checked against the float64 product of the dequantized operands. `--shapes`
gives per-tensor and row-wise rows of those shapes. Writes gemm_fp8.csv.

For each row: every kernel is checked against cuBLAS (FP8: against float64;
relative error < 1e-2) before it is timed with CUDA events
(triton.testing.do_bench: L2 flushed between runs, median of many). A kernel that is refused (tawa's TMA path refuses row
pitches that are not a multiple of 16 bytes, e.g. N = 4097) or wrong is recorded
in the row's `errors` and the run goes on. tawa-xdsl runs with the tuned
defaults of `tawa_xdsl.compile`; each `--config` (compile options such as
`num_stages=4,block_n=128`) is timed too and the best is reported. Prints
TFLOP/s and ratios per row and the geometric means of tawa/cuBLAS and
tawa/Triton over the rows where both ran (FP8: per scaling, over the five
large shapes and over the llm rows); writes gemm.csv (gemm_llm.csv for the llm
suite) row by row and a plot under --out.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    EXAMPLES,
    add_timings,
    attempt,
    check,
    estimate_s,
    measure_rows,
    median_ms,
    parse_options,
    pick,
    print_geomeans,
    print_plan,
    suite_arguments,
    warm_up,
)

from tawa_xdsl.compiler import describe

FP8_KERNELS = {
    "tensor": "gemm_fp8_tensorwise",
    "row": "gemm_fp8_rowwise",
    "block": "gemm_fp8_blockwise_overlap",
}
"""The kernel of examples/gemm_fp8.mlir for each scaling (see fp8.groups)."""


class Gemm(NamedTuple):
    """C[M, N] = A[M, K] @ B, B stored N x K (`nt`: A @ B^T) or K x N (`nn`);
    dtype fp8: e4m3 A and B (nt), C in bf16, scaled as `scaling` says."""

    m: int
    n: int
    k: int
    layout: str = "nt"
    dtype: str = "bf16"
    scaling: str = ""

    @property
    def label(self) -> str:
        return (
            f"{self.m}x{self.n}x{self.k}"
            + ("-nn" if self.layout == "nn" else "")
            + ("-f16" if self.dtype == "f16" else "")
            + (f"-fp8-{self.scaling}" if self.dtype == "fp8" else "")
        )

    @property
    def example(self) -> str:
        return "gemm_fp8.mlir" if self.dtype == "fp8" else "gemm.mlir"

    @property
    def kernel(self) -> str:
        """The kernel of the example file that computes it."""
        if self.dtype == "fp8":
            return FP8_KERNELS[self.scaling]
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


OTHER_FOUND = [
    *("1x4096x4096", "8x4096x4096", "32x11008x4096", "77x3072x768", "197x3072x768"),
    *("300x4096x1024", "1500x5120x5120", "3000x10240x2560", "4000x11008x4096"),
    *("6144x13824x5120", "2048x1536x1536", "8192x768x3072", "512x50257x768"),
    *("1024x768x768", "2560x2560x2560", "16384x1024x1024", "384x384x65536"),
    *("64x128256x4096", "4096x2x4096", "3x3x3", "1536x8960x1536", "24576x4096x1024"),
    *("640x640x640", "12288x12288x12288", "2x32000x4096", "700x2000x3000"),
    *("5000x5000x200", "100x100000x512"),
]
"""Where the gaps of NOTES 3.58-3.60 were found: decode batches, LM heads,
vision and odd K (1000, 3000, 200: rows off the 32-byte grid)."""
OTHER_HELD_OUT = [
    *("1x5120x5120", "2x13824x5120", "4x3072x3072", "8x151936x4096"),
    *("16x8192x28672", "32x2048x8192", "1x11008x4096", "3x4096x11008"),
    *("24x5120x13824", "48x1536x8960", "12288x12288x1000", "6144x16384x3000"),
]
"""Held out from those changes: timed only after them."""
OTHER = [
    Gemm(*(int(x) for x in shape.split("x"))) for shape in OTHER_FOUND + OTHER_HELD_OUT
]
"""Shapes from models the llm suite does not hold (`--suite other`): where
the shape rules were checked beyond the shapes they were fitted on."""

FP8_LARGE = [
    Gemm(4096, 4096, 4096),
    Gemm(8192, 8192, 8192),
    Gemm(8192, 8192, 1024),
    Gemm(8192, 8192, 4096),
    Gemm(8192, 8192, 16384),
]
"""Issue 17's five large shapes (the Tawa paper's FP8 figure is at M = N = 8192)."""
LLM_LARGE_M = [
    r for r in llm_suite() if r.m >= 512 and r.layout == "nt" and r.dtype == "bf16"
]
"""The llm suite's shapes with M >= 512, once each."""
BLOCK_SCALED = [
    Gemm(m, n, k, dtype="fp8", scaling="block")
    for m in (128, 4096)
    for n, k in ((7168, 16384), (4096, 7168), (2112, 7168))
]
"""DeepSeek-V3's projections, decode (M = 128) and prefill (4096)."""


def fp8_rows(shapes: list[Gemm]) -> list[Gemm]:
    """Per-tensor and row-wise FP8 rows of these shapes (B stored N x K)."""
    return [
        g._replace(dtype="fp8", scaling=s) for g in shapes for s in ("tensor", "row")
    ]


SUITES = {
    "six": SIX,
    "llm": llm_suite(),
    "other": OTHER,
    "fp8": fp8_rows(list(dict.fromkeys(FP8_LARGE + LLM_LARGE_M))) + BLOCK_SCALED,
}
"""The 16-bit suites by --suite; fp8 is --dtype fp8's."""
QUICK = {
    "six": {"4096x4096x4096", "8192x8192x1024"},
    "other": {"1x4096x4096", "700x2000x3000", "8x151936x4096", "12288x12288x1000"},
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
    "fp8": {
        "4096x4096x4096-fp8-tensor",
        "8192x8192x16384-fp8-tensor",
        "8192x8192x8192-fp8-row",
        "512x28672x4096-fp8-row",
        "4096x7168x16384-fp8-block",
        "128x2112x7168-fp8-block",
    },
}
"""`--quick`: a row of each kind (small M, long K, unaligned, nn, f16, large;
FP8: each scaling, large and LLM shapes, decode and prefill)."""

PEERS = ["cublas", "triton"]
FIELDS = [
    "label",
    "M",
    "N",
    "K",
    "layout",
    "dtype",
    "scaling",
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
    kernels = len({r.kernel for r in rows})  # a tawa and a Triton variant of each
    return estimate_s([2 + configs] * len(rows), kernels * (1 + configs))


class Operands(NamedTuple):
    """A row's inputs as each kernel takes them, and what C should be."""

    reference: Any
    """[M, N]: cuBLAS's C (16-bit), or the float64 product of the dequantized
    operands (FP8)"""
    out_dtype: Any
    tawa: Callable[[Any], list[Any]]
    """the tawa kernel's arguments around an output C"""
    triton: Callable[[Any], None]
    """our Triton GEMM into an output C"""
    cublas: Callable[[], Any]
    """cuBLAS, returning its C"""


def operands(row: Gemm) -> Operands:
    """Random operands of `row` (FP8: quantized, see fp8.scaled_gemm)."""
    import torch
    from triton_gemm import gemm as triton_gemm

    if row.dtype == "fp8":
        from fp8 import scaled_gemm
        from scaled_mm import scaled_mm

        g = scaled_gemm(row.scaling, row.m, row.n, row.k)
        scales = (g.scale_a, g.scale_b)
        return Operands(
            g.reference,
            torch.bfloat16,
            # gemm_fp8_tensorwise takes its scales as f32 scalars
            lambda c: (
                [g.a, g.b, c, float(g.scale_a), float(g.scale_b)]
                if row.scaling == "tensor"
                else [g.a, g.b, *scales, c]
            ),
            lambda c: triton_gemm(g.a, g.b, c, "nt", scales, row.scaling),
            functools.partial(scaled_mm, g, row.scaling),
        )
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[row.dtype]
    a = torch.randn(row.m, row.k, device="cuda", dtype=dtype)
    b_shape = (row.n, row.k) if row.layout == "nt" else (row.k, row.n)
    b = torch.randn(*b_shape, device="cuda", dtype=dtype)
    b_kn = b.t() if row.layout == "nt" else b
    return Operands(
        a @ b_kn,
        dtype,
        lambda c: [a, b, c],
        lambda c: triton_gemm(a, b, c, row.layout),
        functools.partial(torch.matmul, a, b_kn),
    )


def measure(row: Gemm, configs: list[dict]) -> dict:
    """Check and time cuBLAS, our Triton GEMM and tawa-xdsl on one row."""
    import torch

    import tawa_xdsl

    x = operands(row)
    errors: list[str] = []

    def output() -> Any:
        return torch.full(
            (row.m, row.n), float("nan"), dtype=x.out_dtype, device="cuda"
        )

    def run_and_time(name: str, launch: Any, c: Any) -> float:
        launch()
        torch.cuda.synchronize()
        check(name, c, x.reference)
        return median_ms(launch)

    def cublas() -> float:
        check("cublas", x.cublas(), x.reference)
        return median_ms(x.cublas)

    def triton() -> float:
        c = output()
        return run_and_time("triton", functools.partial(x.triton, c), c)

    def ours(options: dict) -> tuple[float, str]:
        kernel = tawa_xdsl.compile(EXAMPLES / row.example, row.kernel, **options)
        c = output()
        launch = kernel.bind(*x.tawa(c))  # picks this shape's specialization
        name = describe(kernel.options)
        return run_and_time(f"tawa {name}", launch, c), name

    times = {
        "cublas": attempt(errors, "cublas", cublas),
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
    add_timings(out, times, 2 * row.m * row.n * row.k, PEERS)
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
        "scaling": row.scaling,
    }


def summaries(rows: list[Gemm]) -> list[tuple[str, set[str], list[str]]]:
    """The groups of rows whose geometric means are printed: (what, labels,
    peers); FP8's are issue 17's targets."""
    labels = {r.label for r in rows}
    if all(r.dtype != "fp8" for r in rows):
        six = labels & {g.label for g in SIX}
        extra = [(" (six)", six, ["cublas"])] if six and len(rows) > len(SIX) else []
        return [("", labels, PEERS), *extra]
    groups = []
    for scaling in FP8_KERNELS:
        every = {r.label for r in rows if r.scaling == scaling}
        groups += [(f" (fp8 {scaling})", every)] if every else []
        for what, shapes in (("five large", FP8_LARGE), ("llm M >= 512", LLM_LARGE_M)):
            named = {g._replace(dtype="fp8", scaling=scaling).label for g in shapes}
            part = named & every  # a target's rows, where not all the run's
            if scaling != "block" and part and part != every:
                groups.append((f" (fp8 {scaling}, {what})", part))
    return [(what, group, PEERS) for what, group in groups]


def run(rows: list[Gemm], configs: list[dict], csv_path: Path) -> list[dict]:
    results = measure_rows(
        rows, lambda r: measure(r, configs), blank, FIELDS, csv_path, print_row
    )
    for what, labels, peers in summaries(rows):
        print_geomeans([r for r in results if r["label"] in labels], peers, what)
    return results


HEADER = (
    f"{'shape':>26} {'config':>22} {'tawa':>7} {'cuBLAS':>7} {'Triton':>7} "
    f"{'/cuBLAS':>8} {'/Triton':>8}"
)


def print_row(row: dict) -> None:
    def cell(key: str, width: int) -> str:
        return f"{'-' if row[key] is None else row[key]!s:>{width}}"

    print(
        f"{row['label']:>26} {row['config'] or 'refused':>22} {cell('tawa_tflops', 7)} "
        f"{cell('cublas_tflops', 7)} {cell('triton_tflops', 7)} "
        f"{cell('tawa/cublas', 8)} {cell('tawa/triton', 8)}",
        flush=True,
    )


def plot(rows: list[dict], path: Path, title: str) -> None:
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
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


TITLES = {
    "bf16": "GEMM C = A @ B on H100 (bf16 unless -f16; B stored N x K unless -nn)",
    "fp8": "FP8 GEMM C = (A @ B^T) scaled on H100 (e4m3 in, bf16 out; cuBLAS "
    "through torch's scaled mm)",
}


def main() -> None:
    parser = suite_arguments(
        __doc__.splitlines()[0],
        "bf16: the 16-bit suites; fp8: the FP8 suite (issue 17)",
    )
    parser.add_argument(
        "--suite", choices=["llm", "six", "other"], help="16-bit: six (default)"
    )
    parser.add_argument("--shapes", default="", help="MxNxK,... (B N x K)")
    args = parser.parse_args()
    if args.dtype == "fp8" and args.suite:
        parser.error("--dtype fp8 has one suite; --rows picks from it")
    name = "fp8" if args.dtype == "fp8" else args.suite or "six"
    configs = [{}] + [parse_options(c) for c in args.config]
    shapes = [
        Gemm(*(int(x) for x in s.split("x"))) for s in args.shapes.split(",") if s
    ]
    if shapes and args.dtype == "fp8":
        shapes = fp8_rows(shapes)
    suite = shapes or SUITES[name]
    quick = QUICK[name] if args.quick and not args.shapes else None
    rows = pick(suite, args.rows, quick)
    print_plan([r.label for r in rows], estimate(rows, len(configs)), args.list)
    if args.list or not rows:
        return
    import torch

    print(torch.cuda.get_device_name(), flush=True)
    warm_up()
    if args.dtype == "fp8":
        from scaled_mm import describe as cublas_ways

        print(f"cuBLAS FP8 (torch {torch.__version__}): {cublas_ways()}", flush=True)
    print(HEADER, flush=True)
    stem = "gemm" if name == "six" else f"gemm_{name}"
    results = run(rows, configs, args.out / f"{stem}.csv")
    plot(results, args.out / f"{stem}.png", TITLES[args.dtype])


if __name__ == "__main__":
    main()
