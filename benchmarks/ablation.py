"""Ablation, as in the Tawa paper: switch the passes on one at a time and time
each step, for GEMM and attention, with the peers in the same run.

    python benchmarks/ablation.py [--out benchmarks/results]

GEMM 8192x8192x8192 and 4096x4096x4096 bf16:
  1 stage         aref-partition alone: producer and consumer warpgroups, but
                  a ring of one slot, so loads and MMAs take turns (the nearest
                  we have to "no warp specialization": nothing overlaps)
  + pipeline      3 slots, 2 MMA groups in flight
  + cooperative   two consumer warpgroups share the 128x128 tile
  + tile 128x256  tile-shape block-n=256
  + persistent    one CTA per SM, grouped raster
  + TMA store     the epilogue through shared memory and TMA
  + D/P tuning    the tuned defaults (3 stages, 2 MMA groups in flight,
                  raster groups of 16)
  + ping-pong     the defaults with MMA turns (measured, not kept)
Attention d128, seq 4096 and 16384, causal and not:
  1 stage, 2 consumers -> + 2 stages -> + two-stage overlap -> + 3 stages ->
  the tuned defaults (persistent, row-major, Q in one slot, where every tile
  does the same work: not causal), and the defaults with MMA turns (ping-pong:
  measured, not kept).
Writes ablation.csv.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    EXAMPLES,
    RESULTS,
    check,
    median_ms,
    warm_up,
    write_csv,
)

import tawa_xdsl


def cumulative(steps: list[tuple[str, dict | None]]) -> list[tuple[str, dict]]:
    """Each step adds its options to the ones before it (exact options, no tuned
    defaults); a step of None is the tuned defaults alone."""
    options: dict = {"tuned": False}
    out = []
    for label, delta in steps:
        if delta is None:
            out.append((label, {}))
        else:
            options = {**options, **delta}
            out.append((label, dict(options)))
    return out


GEMM_STEPS = cumulative(
    [
        ("1 stage", dict(num_stages=1, mma_depth=1, num_consumers=1, tma_store=False)),
        ("+ pipeline (D3 P2)", dict(num_stages=3, mma_depth=2)),
        ("+ cooperative (2 WG)", dict(num_consumers=2)),
        ("+ tile 128x256", dict(block_n=256)),
        ("+ persistent", dict(persistent=True)),
        ("+ TMA-store epilogue", dict(tma_store=True)),
        ("+ D/P tuning (defaults)", None),
    ]
)
GEMM_STEPS += [
    ("+ ping-pong (not kept)", dict(ping_pong=True)),
    ("+ clusters of 2 (not kept)", dict(cluster=2)),
]
ATTENTION_STEPS = [
    *cumulative(
        [
            ("1 stage, 2 WG", dict(num_stages=1, mma_depth=1, num_consumers=2)),
            ("+ 2 stages", dict(num_stages=2)),
            ("+ two-stage overlap", dict(two_stage=True)),
            ("+ 3 stages", dict(num_stages=3)),
            ("+ defaults (persistent, one Q slot; causal: x reversed)", None),
        ]
    ),
    ("+ ping-pong (not kept)", dict(ping_pong=True)),
    ("+ clusters of 2 (not kept; not causal)", dict(cluster=2)),
]


def compiled_steps(file: str, name: str, steps, args: list, out, ref) -> list:
    """(label, launcher) per step, each checked against `ref` first."""
    import torch

    launchers = []
    for label, options in steps:
        kernel = tawa_xdsl.compile(EXAMPLES / file, name, **options)
        out.fill_(float("nan"))
        kernel(*args)
        torch.cuda.synchronize()
        check(label, out, ref)
        launchers.append((label, kernel.bind(*args)))
    return launchers


def gemm(rows: list[dict]) -> None:
    import torch
    from triton_gemm import gemm as triton_gemm

    for m, n, k in [(8192, 8192, 8192), (4096, 4096, 4096)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        ref = a @ b.t()
        c = torch.empty_like(ref)
        flops = 2 * m * n * k
        peers = {
            "cuBLAS": functools.partial(torch.matmul, a, b.t()),
            "Triton (ours)": functools.partial(triton_gemm, a, b, c),
        }
        steps = compiled_steps("gemm.mlir", "gemm_nt", GEMM_STEPS, [a, b, c], c, ref)
        record(rows, f"gemm {m}x{n}x{k}", steps, peers, flops)


def attention(rows: list[dict]) -> None:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from triton_attention import attention as triton_attention

    d = 128
    for seq in (4096, 16384):
        for causal in (False, True):
            heads, batch = 2048 // d, 16384 // seq
            q, k, v = (
                torch.randn(batch * heads, seq, d, device="cuda", dtype=torch.bfloat16)
                for _ in range(3)
            )
            o = torch.empty_like(q)
            scale = 1 / math.sqrt(d)
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                ref = F.scaled_dot_product_attention(
                    *(x.view(batch, heads, seq, d) for x in (q, k, v)), is_causal=causal
                ).reshape(q.shape)

            def cudnn(q=q, k=k, v=v, causal=causal, batch=batch, heads=heads, seq=seq):
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    return F.scaled_dot_product_attention(
                        *(x.view(batch, heads, seq, d) for x in (q, k, v)),
                        is_causal=causal,
                    )

            peers = {
                "cuDNN": cudnn,
                "Triton (ours)": functools.partial(
                    triton_attention, q, k, v, o, scale, causal
                ),
            }
            name = f"attention{'_causal' if causal else ''}_d{d}"
            # causal key loops differ per query block: nothing for a cluster to share
            kept = [s for s in ATTENTION_STEPS if not (causal and "cluster" in s[1])]
            steps = compiled_steps(
                "attention.mlir", name, kept, [q, k, v, o, scale], o, ref
            )
            flops = 4 * batch * heads * seq * seq * d * (0.5 if causal else 1)
            record(
                rows,
                f"attention d{d} seq{seq}{' causal' if causal else ''}",
                steps,
                peers,
                flops,
            )


def record(rows, problem: str, steps, peers: dict, flops: float) -> None:
    print(problem, flush=True)
    for label, fn in [*steps, *peers.items()]:
        tf = flops / median_ms(fn) / 1e9
        rows.append({"problem": problem, "step": label, "tflops": round(tf, 1)})
        print(f"  {label:>28} {tf:8.1f} TFLOP/s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--only", choices=["gemm", "attention"], help="one family")
    args = parser.parse_args()
    import torch  # after --help, which runs without it (as in common.py)

    print(torch.cuda.get_device_name(), flush=True)
    warm_up()
    rows: list[dict] = []
    if args.only != "attention":
        gemm(rows)
    if args.only != "gemm":
        attention(rows)
    write_csv(rows, args.out / "ablation.csv")


if __name__ == "__main__":
    main()
