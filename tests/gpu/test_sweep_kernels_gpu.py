"""The outside-user sweeps' kernels (tests/kernels/*_sweep.mlir and
*_outside*.mlir, the fifth sweep's too: one tile stored twice over, whose
second TMA store must land last; among them C = alpha A B^T + beta C, whose output is read
through the loads' tensor map, and ALiBi through tile.sitofp) compiled with
the tuned options, and with each other option set the thread-level sweep
lowers them with, run on the H100 from host arrays, against the float64
references of tests/test_sweep_kernels.py; and the calls the sweep found
refused or mis-planned: a split or stream given on 64x64 tiles (no rate in the
wave model), num_stages=1 given to a GEMM and to attention (the tuned two-stage
overlap then off), reverse_x=True given to short causal attention (its
persistent walk then off), persistent=True given to causal attention and
outer_stages=3 (the stages then leave room for Q's slots); the fourth sweep's
GEMM storing its output transposed as a split-K and a stream-K pair; the sixth
sweep's GEMM with a column and a row reduction of its accumulator as a split-K
and a stream-K pair (both reductions in the second kernel's epilogue)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.examples import path

from ..test_sweep_kernels import CASES, CONFIGS, KERNELS, RUNS
from .conftest import rel_err


def check_on_the_gpu(torch, kernel: str, **options: object) -> None:
    """Compile `kernel` with `options`, run it from host arrays (outputs
    poisoned) and check each output against its float64 reference."""
    run = RUNS[kernel]
    args = run.arrays(seed=11)
    wide = [a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args]
    grid = run.grid if run.given_grid else None
    tawa_xdsl.compile(KERNELS / run.file, kernel, **options)(*args, grid=grid)
    for out, expected in zip(run.outputs, run.reference(*wide), strict=True):
        if np.issubdtype(args[out].dtype, np.integer):  # indices, exact counts
            np.testing.assert_array_equal(args[out], expected)
            continue
        got = torch.from_numpy(args[out].astype(np.float64))
        # e4m3 rounds each value by up to a sixteenth: about 3% in the norm
        limit = 5e-2 if args[out].dtype.itemsize == 1 else 2e-2
        assert rel_err(got, torch.from_numpy(expected)) < limit


def compile_options(config: str) -> dict[str, object]:
    """A `tawa-hopper-pipeline` option string as `compile` keywords."""
    options: dict[str, object] = {}
    for item in CONFIGS[config].split():
        name, value = item.split("=")
        parsed = {"true": True, "false": False}.get(value)
        options[name.replace("-", "_")] = int(value) if parsed is None else parsed
    return options


@pytest.mark.parametrize("kernel", sorted(RUNS))
def test_a_sweep_kernel_computes_its_reference(torch, kernel: str) -> None:
    check_on_the_gpu(torch, kernel)


@pytest.mark.parametrize(
    ("kernel", "config"),
    [c for c in CASES if c[1] != "tuned"],
    ids=lambda c: str(c),
)
def test_a_sweep_kernel_under_another_configuration(torch, kernel, config) -> None:
    """The whole grid of options the thread-level sweep lowers each kernel
    with (`test_sweep_kernels.CASES`), given to `compile`: what the
    simulators accept must run right on the GPU too (about 400 cases, 35 s
    on 14 workers, the kernels compiled once per configuration)."""
    check_on_the_gpu(torch, kernel, **compile_options(config))


def _gemm(torch, m: int, n: int, k: int, seed: int):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=gen).bfloat16()
    b = torch.randn(n, k, device="cuda", generator=gen).bfloat16()
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    return a, b, c


@pytest.mark.parametrize("cut", [{"split_k": 3}, {"stream_k": True}], ids=str)
def test_a_cut_given_on_64x64_tiles_runs(torch, cut) -> None:
    a, b, c = _gemm(torch, 256, 256, 8192, seed=1)
    kernel = tawa_xdsl.compile(KERNELS / "gemm_sweep.mlir", "gemm_64x64", **cut)
    kernel(a, b, c)
    torch.cuda.synchronize()
    assert rel_err(c, a.double() @ b.double().t()) < 1e-2
    assert kernel.kernel.contract.split is not None  # the pair ran


def test_one_ring_slot_given_to_a_gemm(torch) -> None:
    a, b, c = _gemm(torch, 1000, 1000, 1000, seed=2)
    kernel = tawa_xdsl.compile(path("gemm.mlir"), "gemm_nt", num_stages=1)
    kernel(a, b, c)
    torch.cuda.synchronize()
    assert rel_err(c, a.double() @ b.double().t()) < 1e-2
    assert kernel.options["num_stages"] == 1


@pytest.mark.parametrize(
    ("kernel", "options", "seq", "causal"),
    [
        ("attention_d64", {"num_stages": 1}, 4096, False),
        ("attention_causal_d64", {"reverse_x": True}, 200, True),
        ("attention_causal_d128", {"persistent": True}, 4096, True),
        ("attention_d128", {"outer_stages": 3}, 4096, False),
    ],
    ids=["one-stage", "short-causal-reversed", "causal-persistent", "outer3"],
)
def test_attention_with_the_options_given(torch, kernel, options, seq, causal) -> None:
    d = 128 if kernel.endswith("128") else 64
    gen = torch.Generator(device="cuda").manual_seed(5)
    q, k, v = (
        torch.randn(4, seq, d, device="cuda", generator=gen).bfloat16()
        for _ in range(3)
    )
    o = torch.full_like(q, float("nan"))
    compiled = tawa_xdsl.compile(path("attention.mlir"), kernel, **options)
    compiled(q, k, v, o, 1 / math.sqrt(d))
    torch.cuda.synchronize()
    s = q.double() @ k.double().transpose(1, 2) / math.sqrt(d)
    if causal:
        s = s.masked_fill(~torch.ones(seq, seq, device="cuda").tril().bool(), -math.inf)
    ref = torch.softmax(s, -1) @ v.double()
    assert rel_err(o, ref) < 2e-2
    for option, value in options.items():
        assert compiled.options[option] == value


def test_a_given_block_k_on_a_split_call(torch) -> None:
    """block_k=128 on an NN f16 GEMM at a shape the rules split: the partials
    kernel takes 128-deep K tiles, the reduce kernel none."""
    m, n, k = 128, 128, 8192
    gen = torch.Generator(device="cuda").manual_seed(6)
    a = torch.randn(m, k, device="cuda", generator=gen).half()
    b = torch.randn(k, n, device="cuda", generator=gen).half()
    bias = torch.randn(n, device="cuda", generator=gen).half()
    r = torch.randn(m, n, device="cuda", generator=gen).half()
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    user = KERNELS / "gemm_user.mlir"
    kernel = tawa_xdsl.compile(user, "nn_f16_bias_res", block_k=128)
    kernel(a, b, bias, r, c)
    torch.cuda.synchronize()
    ref = a.double() @ b.double() + bias.double() + r.double()
    assert rel_err(c, ref) < 1e-2
    assert kernel.kernel.contract.split is not None


@pytest.mark.parametrize("cut", [{"split_k": 3}, {"stream_k": True}], ids=str)
def test_a_transposed_store_split(torch, cut) -> None:
    """@gemm_trans_out (Ct = bf16(relu(A B^T + bias)^T)) as a split-K or
    stream-K pair: the transpose moved up to the loaded tiles before the cut."""
    m, n, k = 256, 192, 8192
    gen = torch.Generator(device="cuda").manual_seed(12)
    a = torch.randn(m, k, device="cuda", generator=gen).bfloat16()
    b = torch.randn(n, k, device="cuda", generator=gen).bfloat16()
    bias = torch.randn(n, device="cuda", generator=gen)
    ct = torch.full((n, m), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel = tawa_xdsl.compile(KERNELS / "gemm_outside4.mlir", "gemm_trans_out", **cut)
    kernel(a, b, bias, ct)
    torch.cuda.synchronize()
    ref = torch.relu(a.double() @ b.double().t() + bias.double()).t()
    assert rel_err(ct, ref) < 1e-2
    assert kernel.kernel.contract.split is not None  # the pair ran


def _tiles(torch, x, rows: int):
    """x's tiles of `rows` rows, zeros past its last row: [tiles, rows, ...]."""
    pad = x.new_zeros((-x.shape[0] % rows, *x.shape[1:]))
    return torch.cat([x, pad]).reshape(-1, rows, *x.shape[1:])


@pytest.mark.parametrize("cut", [{"split_k": 3}, {"stream_k": True}], ids=str)
def test_column_and_row_reductions_split(torch, cut) -> None:
    """@gemm_col_row (C, the column sums of each 128-row tile and the row maxima
    of each 128-column tile of A B^T) as a split-K or stream-K pair: the
    reductions run on the summed slices, in the second kernel."""
    m, n, k = 200, 136, 8192
    gen = torch.Generator(device="cuda").manual_seed(13)
    a = torch.randn(m, k, device="cuda", generator=gen).bfloat16()
    b = torch.randn(n, k, device="cuda", generator=gen).bfloat16()
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    col = torch.full((2, n), float("nan"), device="cuda")
    row = torch.full((2, m), float("nan"), device="cuda")
    kernel = tawa_xdsl.compile(KERNELS / "gemm_outside6.mlir", "gemm_col_row", **cut)
    kernel(a, b, c, col, row)
    torch.cuda.synchronize()
    p = a.double() @ b.double().t()
    assert rel_err(c, p) < 1e-2
    assert rel_err(col, _tiles(torch, p, 128).sum(1)) < 1e-3
    assert rel_err(row, _tiles(torch, p.t(), 128).amax(1)) < 1e-3
    assert kernel.kernel.contract.split is not None  # the pair ran
