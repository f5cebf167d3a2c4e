"""Attention benchmark: tawa-xdsl vs torch SDPA (cuDNN backend, flash backend) vs our
Triton FlashAttention, in one run.

    python benchmarks/attention.py [--out benchmarks/results] [--config OPTIONS ...]

FA3's setting: 16k tokens in total (batch = 16384 / seq), hidden 2048 (heads = 2048 /
head_dim), seq 512 to 16k, head dim 64 and 128, causal and not, bf16. Every kernel
is checked against cuDNN (relative error < 1e-2) before it is timed with CUDA events
(triton.testing.do_bench, median). tawa-xdsl runs with the tuned defaults of
`tawa_xdsl.compile`; each `--config` (compile options such as
`num_stages=2,two_stage=false`) is timed too and the best is reported. Prints
TFLOP/s and ratios; writes attention.csv and attention.png under --out.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

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
from triton_attention import attention as triton_attention

import tawa_xdsl

SEQS = [512, 1024, 2048, 4096, 8192, 16384]


def sdpa(backend, q, k, v, causal):
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def time_ours(
    d: int, causal: bool, options: dict, q3, k3, v3, ref
) -> tuple[float, str]:
    kernel = tawa_xdsl.compile(
        EXAMPLES / "attention.mlir",
        f"attention{'_causal' if causal else ''}_d{d}",
        **options,
    )
    o3 = torch.full_like(q3, float("nan"))
    scale = 1 / math.sqrt(d)
    kernel(q3, k3, v3, o3, scale)
    torch.cuda.synchronize()
    name = describe(kernel.options)
    check(f"tawa {name}", o3.view_as(ref), ref)
    return median_ms(kernel.bind(q3, k3, v3, o3, scale)), name


def run(dims, seqs, causals, configs: list[dict], out_dir: Path) -> list[dict]:
    rows = []
    for d in dims:
        heads = 2048 // d
        for seq in seqs:
            batch = 16384 // seq
            for causal in causals:
                q, k, v = (
                    torch.randn(
                        batch, heads, seq, d, device="cuda", dtype=torch.bfloat16
                    )
                    for _ in range(3)
                )
                scale = 1 / math.sqrt(d)
                ref = sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal)
                times = {
                    "cudnn": median_ms(
                        functools.partial(
                            sdpa, SDPBackend.CUDNN_ATTENTION, q, k, v, causal
                        )
                    ),
                }
                check("flash", sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal), ref)
                times["flash"] = median_ms(
                    functools.partial(sdpa, SDPBackend.FLASH_ATTENTION, q, k, v, causal)
                )
                q3, k3, v3 = (x.view(batch * heads, seq, d) for x in (q, k, v))
                o3 = torch.full_like(q3, float("nan"))
                triton_attention(q3, k3, v3, o3, scale, causal)
                check("triton", o3.view_as(ref), ref)
                times["triton"] = median_ms(
                    functools.partial(triton_attention, q3, k3, v3, o3, scale, causal)
                )
                best = min(
                    time_ours(d, causal, options, q3, k3, v3, ref)
                    for options in configs
                )
                times["tawa"] = best[0]
                flops = 4 * batch * heads * seq * seq * d * (0.5 if causal else 1.0)
                row = {
                    "d": d,
                    "seq": seq,
                    "batch": batch,
                    "heads": heads,
                    "causal": causal,
                    "config": best[1],
                }
                add_timings(row, times, flops, ["cudnn", "flash", "triton"])
                rows.append(row)
                print_row(row)
    print_geomeans(rows, ["cudnn", "triton"])
    write_csv(rows, out_dir / "attention.csv")
    plot(rows, out_dir / "attention.png")
    return rows


HEADER = (
    f"{'d':>4} {'seq':>6} {'causal':>6} {'config':>18} {'tawa':>7} {'cuDNN':>7} {'flash':>7} "
    f"{'Triton':>7} {'/cuDNN':>7} {'/flash':>7} {'/Triton':>7}"
)


def print_row(r: dict) -> None:
    print(
        f"{r['d']:>4} {r['seq']:>6} {r['causal']!s:>6} {r['config']:>18} {r['tawa_tflops']:>7} "
        f"{r['cudnn_tflops']:>7} {r['flash_tflops']:>7} {r['triton_tflops']:>7} "
        f"{r['tawa/cudnn']:>7} {r['tawa/flash']:>7} {r['tawa/triton']:>7}",
        flush=True,
    )


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = sorted({(r["d"], r["causal"]) for r in rows})
    fig, axes = plt.subplots(
        1, len(groups), figsize=(4.5 * len(groups), 4), squeeze=False
    )
    for ax, (d, causal) in zip(axes[0], groups, strict=True):
        sel = [r for r in rows if r["d"] == d and r["causal"] == causal]
        seqs = [r["seq"] for r in sel]
        for name, key in [
            ("tawa-xdsl", "tawa_tflops"),
            ("cuDNN", "cudnn_tflops"),
            ("flash", "flash_tflops"),
            ("Triton (ours)", "triton_tflops"),
        ]:
            ax.plot(seqs, [r[key] for r in sel], marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_title(f"d={d}{' causal' if causal else ''}")
        ax.set_xlabel("sequence length")
        ax.set_ylabel("TFLOP/s")
    axes[0][0].legend()
    fig.suptitle("Attention forward, bf16, 16k tokens, hidden 2048, H100")
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
    parser.add_argument("--dims", default="64,128")
    parser.add_argument("--seqs", default=",".join(map(str, SEQS)))
    parser.add_argument("--causal", default="0,1")
    args = parser.parse_args()
    configs = [{}] + [parse_options(c) for c in args.config]
    print(torch.cuda.get_device_name(), flush=True)
    warm_up()
    print(HEADER, flush=True)
    run(
        [int(x) for x in args.dims.split(",")],
        [int(x) for x in args.seqs.split(",")],
        [bool(int(x)) for x in args.causal.split(",")],
        configs,
        args.out,
    )


if __name__ == "__main__":
    main()
