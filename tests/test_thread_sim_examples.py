"""Every example kernel, lowered through the Hopper pipeline and
`distribute-fragments` to the thread level, runs in the thread simulator (lanes,
registers, addresses, barriers, TMA and wgmma) and computes what the reference
interpreter computes on the tile kernel, to a couple of units in the last place
(the thread level sums and reduces in its own order), and as close to a float64
numpy reference as the interpreter is. Inputs are not multiples of the tiles,
so every masked edge runs."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16

from .conftest import EXAMPLES, sweep
from .thread_level import assert_close, simulate_output, to_thread_level

F16 = np.dtype(np.float16)


def gemm_ref(nn: bool) -> Callable:
    return lambda a, b, c: a @ (b if nn else b.T)


def relu_ref(a, b, bias, c, alpha):
    return np.maximum(alpha * (a @ b.T) + bias, 0)


def gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def gelu_ref(a, b, bias, c):
    return gelu(a @ b.T + bias)


def gelu_erf_ref(a, b, bias, c):
    x = a @ b.T + bias
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def residual_gelu_ref(a, b, bias, r, c, alpha):
    return gelu(alpha * (a @ b.T) + bias) + r


def attention_ref(causal: bool) -> Callable:
    def ref(q, k, v, o, scale):
        s = q @ k.transpose(0, 2, 1) * scale
        if causal:
            seq = q.shape[1]
            s = np.where(np.tri(seq, dtype=bool), s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        return (p / p.sum(-1, keepdims=True)) @ v

    return ref


@dataclass(frozen=True)
class Run:
    file: str
    shapes: tuple[tuple[int, ...], ...]  # inputs, then the output
    grid: tuple[int, ...]
    reference: Callable
    dtype: np.dtype = bfloat16
    scalars: tuple[float, ...] = ()
    options: str = ""  # pipeline options it needs (256-wide heads: fewer stages)

    def args(self, seed: int) -> list:
        rng = np.random.default_rng(seed)
        *ins, out = self.shapes
        arrays = [rng.standard_normal(s).astype(self.dtype) for s in ins]
        return [*arrays, np.full(out, np.nan, self.dtype), *self.scalars]


def _attention(file: str, d: int, causal: bool, dtype=bfloat16) -> Run:
    qkv = (2, 200, d)
    return Run(
        file,
        (qkv, qkv, qkv, qkv),
        (2, 2),
        attention_ref(causal),
        dtype,
        (1 / math.sqrt(d),),
        "num-stages=2 mma-depth=1" if d == 256 else "",  # the rings must fit
    )


# rows padded to 16 bytes, as the runtime requires of every tensor
GEMM_NT = ((200, 136), (152, 136), (200, 152))
GEMM_NN = ((200, 136), (136, 152), (200, 152))
RUNS = {
    "gemm_nt": Run("gemm.mlir", GEMM_NT, (2, 2), gemm_ref(False)),
    "gemm_nn": Run("gemm.mlir", GEMM_NN, (2, 2), gemm_ref(True)),
    "gemm_nt_f16": Run("gemm.mlir", GEMM_NT, (2, 2), gemm_ref(False), F16),
    "gemm_nn_f16": Run("gemm.mlir", GEMM_NN, (2, 2), gemm_ref(True), F16),
    "gemm_scale_bias_relu": Run(
        "gemm_epilogue.mlir",
        ((130, 72), (200, 72), (200,), (130, 200)),
        (2, 2),
        relu_ref,
        scalars=(0.75,),
    ),
    "gemm_bias_gelu": Run(
        "gemm_epilogue.mlir",
        ((130, 72), (200, 72), (200,), (130, 200)),
        (2, 2),
        gelu_ref,
    ),
    "gemm_bias_gelu_erf": Run(
        "gemm_epilogue.mlir",
        ((130, 72), (200, 72), (200,), (130, 200)),
        (2, 2),
        gelu_erf_ref,
    ),
    "gemm_residual_gelu": Run(
        "gemm_epilogue.mlir",
        ((130, 72), (200, 72), (200,), (130, 200), (130, 200)),
        (2, 2),
        residual_gelu_ref,
        scalars=(0.75,),
    ),
    **{
        f"attention{'_causal' if c else ''}_d{d}{'_f16' if f else ''}": _attention(
            f"attention{'_f16' if f else ''}.mlir", d, c, F16 if f else bfloat16
        )
        for d in (64, 128)
        for c in (False, True)
        for f in (False, True)
    },
    **{
        f"attention{'_causal' if c else ''}_d{d}": _attention(
            "attention_d80_d96.mlir", d, c
        )
        for d in (80, 96)
        for c in (False, True)
    },
    "attention_d256": _attention("attention_d256.mlir", 256, False),
    "attention_causal_d256": _attention("attention_d256.mlir", 256, True),
}
FAST = {
    "gemm_nt",
    "gemm_residual_gelu",
    "gemm_bias_gelu_erf",
    "attention_causal_d64",
    "attention_d96",
}
ALLOCATED_FAST = {"attention_d64"}  # its loop entries swap registers
ALLOCATED_CI = {
    "attention_causal_d128",
    "attention_d256",
    "gemm_nt",
    "gemm_nn_f16",
    "gemm_residual_gelu",
}
"""CI's share of the allocated runs: a kernel of each family (the register
allocator's cases: loop entries, the causal split, the 256-wide accumulator,
register stores, the epilogue's loads); every example under `--exhaustive`."""


def thread_level_example(kernel: str, pipeline: str) -> ModuleOp:
    return to_thread_level(tawa_xdsl.parse(EXAMPLES / RUNS[kernel].file), pipeline)


def check_example(
    kernel: str,
    pipeline: str,
    seed: int = 0,
    module: ModuleOp | None = None,
    run: Run | None = None,
    source: str | None = None,
) -> None:
    """`kernel` at the thread level (`module`, by default lowered with
    `pipeline`) computes the reference (on `run`'s arrays, by default the
    kernel's entry in `RUNS`), and what the interpreter computes on the tile
    kernel (of `source`, MLIR text, by default `run`'s example file)."""
    run = run or RUNS[kernel]
    args = run.args(seed=7)
    out = len(run.shapes) - 1
    tawa_xdsl.interpret(
        tawa_xdsl.parse(source or EXAMPLES / run.file), kernel, *args, grid=run.grid
    )
    expected = args[out].copy()
    module = module or thread_level_example(kernel, pipeline)
    got = simulate_output(module, kernel, args, out, run.grid, seed)
    assert_close(got, expected)
    inputs = [a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args]
    reference = run.reference(*inputs)
    ours = np.abs(got.astype(np.float64) - reference).max()
    theirs = np.abs(expected.astype(np.float64) - reference).max()
    assert ours <= 1.5 * theirs + 1e-6, (ours, theirs)


@pytest.mark.parametrize(
    ("kernel",),
    sweep(
        [(k,) for k in sorted(RUNS)],
        {(k,) for k in FAST},
        lambda c: c[0],
        # CI runs the allocated family representatives allocated only; the
        # f16 attention kernels (the bf16 ones in another dtype), the causal
        # head dims 80 and 96 (their non-causal twins run) and the GEMMs the
        # fast and allocated runs stand for (gemm_nt, gemm_nn_f16, the
        # residual and erf epilogues) under --exhaustive
        slow={
            (k,)
            for k in RUNS
            if k not in ALLOCATED_CI
            and not k.startswith("gemm")
            and not (k.startswith("attention") and k.endswith("_f16"))
            and k not in ("attention_causal_d80", "attention_causal_d96")
        },
    ),
)
def test_every_example_runs_at_the_thread_level(kernel) -> None:
    check_example(kernel, f"tawa-hopper-pipeline{{{RUNS[kernel].options}}}")


CONFIGS = {
    "stages1": "num-stages=1 mma-depth=1",
    "two-consumers": "num-consumers=2",
    "persistent": "persistent=true num-stages=2",
    "register-stores": "tma-store=false",
    "two-stage": "num-stages=3 mma-depth=2 two-stage=true",
    "ping-pong": "num-consumers=2 ping-pong=true",
    "cluster": "cluster=2",
}
CONFIG_RUNS = [
    ("gemm_nt", "stages1"),
    ("gemm_nt", "two-consumers"),
    ("gemm_nt", "persistent"),
    ("gemm_nt", "register-stores"),
    ("gemm_nn", "cluster"),
    ("gemm_residual_gelu", "stages1"),  # one warpgroup: two 64-row blocks
    ("attention_d64", "two-stage"),
    ("attention_d64", "ping-pong"),
    ("attention_causal_d128", "two-consumers"),
    ("attention_d128", "persistent"),
]
FAST_CONFIGS = {("gemm_nt", "register-stores"), ("gemm_residual_gelu", "stages1")}


@pytest.mark.parametrize(
    "kernel, config",
    [
        c if c in FAST_CONFIGS else pytest.param(*c, marks=pytest.mark.slow)
        for c in CONFIG_RUNS
    ],
)
def test_configurations_run_at_the_thread_level(kernel, config) -> None:
    check_example(kernel, f"tawa-hopper-pipeline{{{CONFIGS[config]}}}", seed=1)


@pytest.mark.parametrize("n", [135, 132], ids=["pitch-2-mod-4", "pitch-8-mod-16"])
def test_register_stores_take_the_paths_the_pitch_allows(n) -> None:
    """An output TMA cannot describe is stored from registers (what the
    dispatcher does for N = 777 on the device). Its rows are 2n bytes apart:
    16-byte vectors need the pitch (and base) aligned like the column, and
    4-byte pairs an even pitch; the thread simulator faults on a misaligned
    access as the GPU does, so a store path chosen by the column alone fails."""
    run = dataclasses.replace(RUNS["gemm_nt"], shapes=((200, 136), (n, 136), (200, n)))
    check_example("gemm_nt", "tawa-hopper-pipeline{tma-store=false}", run=run)


@pytest.mark.parametrize("k", [99, 100])
def test_inputs_tma_cannot_describe_run_through_aligned_copies(k) -> None:
    """K = 99 (rows 198 bytes apart) or 100 (200): TMA cannot describe A and
    B; at the thread level they are read through aligned copies, as a call
    through `tawa_xdsl.compile` reads them (`runtime/realign.py`), and the
    kernel computes what the interpreter does on the arrays as given."""
    run = dataclasses.replace(RUNS["gemm_nt"], shapes=((200, k), (136, k), (200, 136)))
    check_example("gemm_nt", "tawa-hopper-pipeline", run=run)


@pytest.mark.parametrize(
    ("kernel",),
    sweep(
        [(k,) for k in sorted(RUNS)],
        {(k,) for k in ALLOCATED_FAST},
        lambda c: c[0],
        slow={(k,) for k in ALLOCATED_CI},
    ),
)
def test_allocated_examples_run_at_the_thread_level(kernel) -> None:
    """After `ptx-skip-unit-scale` and `ptx-allocate` the registers are named:
    the simulator then also checks that every read finds its value in its
    registers (none overwritten by a value live at the same time)."""
    module = thread_level_example(
        kernel, f"tawa-hopper-pipeline{{{RUNS[kernel].options}}}"
    )
    tawa_xdsl.apply(module, "ptx-skip-unit-scale,ptx-allocate")
    check_example(kernel, "", module=module)
