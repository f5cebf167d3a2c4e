"""The search behind `tawa_xdsl.tuning`: time candidate compile options per
problem and record which wins and by how much over the tuned defaults.

    python benchmarks/tune.py [--out benchmarks/results] [--quick]

GEMM (the shapes of gemm.py): tile 128x128 or 128x256, 3 or 4 stages, 1 or 2
MMA groups in flight, persistent or not, raster groups of 8 or 16 rows, and the
best of these with MMA turns (ping-pong).
Attention (head dim 64 and 128, seq 1k/4k/16k, causal and not): 2 or 3 stages,
two-stage overlap or not, persistent (row-major, Q in one slot) or not, MMA
turns with the two-stage overlap, program ids along x reversed (the longest
causal blocks first) with the two-stage overlap, and for head dim 64, 192 query
rows over three consumer warpgroups, with and without turns, reversed or
persistent.
Every candidate is checked before it is timed. Writes tuning.csv (or
tuning_gemm.csv / tuning_attention.csv with --only) with every candidate after
each problem, and prints, per problem, the winner and default/best.
"""

from __future__ import annotations

import argparse
import itertools
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
from gemm import SIX

import tawa_xdsl
from tawa_xdsl.compiler import describe
from tawa_xdsl.diagnostics import DiagnosticException
from tawa_xdsl.runtime import ResourceError


def gemm_candidates() -> list[dict]:
    grid = itertools.product([128, 256], [3, 4], [1, 2], [True, False], [8, 16])
    return [
        dict(
            block_n=bn if bn != 128 else 0,  # 0: as written
            num_stages=d,
            mma_depth=p,
            persistent=pers,
            group_m=g,
            num_consumers=2,
            tuned=False,
        )
        for bn, d, p, pers, g in grid
        if pers or g == 8
    ] + [
        dict(
            block_n=256,
            num_stages=3,
            mma_depth=p,
            persistent=True,
            group_m=16,
            num_consumers=2,
            ping_pong=True,
            tuned=False,
        )
        for p in (1, 2)
    ]


def attention_candidates(d: int) -> list[dict]:
    persistent = dict(persistent=True, group_m=1, outer_stages=1)
    out = (
        [
            dict(
                num_stages=s,
                mma_depth=1,
                two_stage=two,
                **(persistent if pers else {}),
                tuned=False,
            )
            for s, two, pers in itertools.product([2, 3], [True, False], [False, True])
        ]
        + [
            dict(num_stages=s, mma_depth=1, two_stage=True, ping_pong=True, tuned=False)
            for s in (2, 3)
        ]
        + [
            dict(num_stages=s, mma_depth=1, two_stage=True, reverse_x=True, tuned=False)
            for s in (2, 3)
        ]
    )
    if d == 64:
        out += [
            dict(
                num_stages=s,
                mma_depth=1,
                two_stage=True,
                block_m=192,
                num_consumers=3,
                ping_pong=pp,
                tuned=False,
            )
            for s, pp in itertools.product((2, 3), (False, True))
        ] + [
            dict(
                num_stages=3,
                mma_depth=1,
                two_stage=True,
                block_m=192,
                num_consumers=3,
                **extra,
                tuned=False,
            )
            for extra in (persistent, dict(reverse_x=True))
        ]
    return out


def timed(
    file: str, name: str, options: dict, args: list, out, ref
) -> tuple[float, dict] | None:
    """Median ms of one candidate and its resolved options; None if it does not
    compile or fit."""
    import torch

    try:
        kernel = tawa_xdsl.compile(EXAMPLES / file, name, **options)
        out.fill_(float("nan"))
        kernel(*args)
    except (ResourceError, DiagnosticException, ValueError) as e:
        print(f"    {describe(options)}: skipped ({str(e)[:80]})", flush=True)
        return None
    torch.cuda.synchronize()
    check(f"{name} {describe(options)}", out, ref)
    return median_ms(kernel.bind(*args)), kernel.options


def search(problem: str, file, name, candidates, args, out, ref, flops, rows) -> None:
    results = {}
    default = timed(file, name, {}, args, out, ref)
    assert default is not None, f"{name}: the defaults do not compile"
    default_ms, default_options = default
    for options in candidates:
        found = timed(file, name, options, args, out, ref)
        if found is not None:
            results[describe(found[1])] = found[0]
    best_name, best_ms = min(results.items(), key=lambda kv: kv[1])
    for config, ms in results.items():
        rows.append(
            {
                "problem": problem,
                "config": config,
                "tflops": round(flops / ms / 1e9, 1),
                "is_default": config == describe(default_options),
            }
        )
    print(
        f"{problem:>28}  best {best_name:>26} {flops / best_ms / 1e9:7.1f} TFLOP/s   "
        f"default {describe(default_options):>22} {flops / default_ms / 1e9:7.1f}   "
        f"default/best {best_ms / default_ms:.3f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--quick", action="store_true", help="fewer problems")
    parser.add_argument("--only", choices=["gemm", "attention"], help="one family")
    args = parser.parse_args()
    import torch  # after --help, which runs without it (as in common.py)
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    print(torch.cuda.get_device_name(), flush=True)
    warm_up()
    rows: list[dict] = []
    shapes = SIX[1:3] if args.quick else SIX
    if args.only == "attention":
        shapes = []
    for m, n, k, *_ in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        search(
            f"gemm {m}x{n}x{k}",
            "gemm.mlir",
            "gemm_nt",
            gemm_candidates(),
            [a, b, c],
            c,
            a @ b.t(),
            2 * m * n * k,
            rows,
        )
        write_csv(rows, args.out / f"tuning{'_' + args.only if args.only else ''}.csv")
    seqs = [4096] if args.quick else [1024, 4096, 16384]
    if args.only == "gemm":
        seqs = []
    for d, seq, causal in itertools.product([64, 128], seqs, [False, True]):
        heads, batch = 2048 // d, 16384 // seq
        q, k, v = (
            torch.randn(batch * heads, seq, d, device="cuda", dtype=torch.bfloat16)
            for _ in range(3)
        )
        o = torch.empty_like(q)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):  # no seq x seq scores in memory
            ref = F.scaled_dot_product_attention(
                *(x.view(batch, heads, seq, d) for x in (q, k, v)), is_causal=causal
            ).reshape(q.shape)
        search(
            f"attention d{d} seq{seq}{' causal' if causal else ''}",
            "attention.mlir",
            f"attention{'_causal' if causal else ''}_d{d}",
            attention_candidates(d),
            [q, k, v, o, 1 / math.sqrt(d)],
            o,
            ref,
            4 * batch * heads * seq * seq * d * (0.5 if causal else 1),
            rows,
        )
        write_csv(rows, args.out / f"tuning{'_' + args.only if args.only else ''}.csv")


if __name__ == "__main__":
    main()
