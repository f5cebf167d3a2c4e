"""Grouped-query attention (examples/attention_gqa.mlir) on the CPU: the tile
kernels in the interpreter against a float64 reference (groups 1, 2, 4, 8, MQA,
sequences that are not block multiples, causal, more queries than keys), the
warp-specialized kernels in the aref simulator and the lowered ones in the
barrier simulator bit for bit against the interpreter, the contract refusing a
query that was not folded, the launch grid read off the store, the tuned
options, and the PTX assembling without remarks.

The kernels take Q and O folded to [BHKV, group * SQ, D] (see the file's
header); `fold` is the caller's side of that contract."""

from __future__ import annotations

import math
import re
from typing import NamedTuple

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import tawa_xdsl
from tawa_xdsl.contract import launch_contract
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.grid import grid_rule, infer_grid
from tawa_xdsl.kernel import KernelArgumentError, find_kernel
from tawa_xdsl.lowering.assemble import assemble
from tawa_xdsl.lowering.ptx_target import to_ptx
from tawa_xdsl.tuning import default_options

from .conftest import EXAMPLES
from .test_lowering import hopper

SOURCE = EXAMPLES / "attention_gqa.mlir"


class Problem(NamedTuple):
    """batch, kv heads, query heads per kv head, query and key lengths, head dim."""

    batch: int
    kv_heads: int
    group: int
    seq_q: int
    seq_k: int
    d: int

    def arrays(self, seed: int) -> tuple[np.ndarray, ...]:
        """q [B * HQ, SQ, D], k and v [B * HKV, SK, D], o poisoned with NaN."""
        rng = np.random.default_rng(seed)
        bhkv = self.batch * self.kv_heads
        q = rng.standard_normal((bhkv * self.group, self.seq_q, self.d))
        k, v = (rng.standard_normal((bhkv, self.seq_k, self.d)) for _ in range(2))
        o = np.full(q.shape, np.nan)
        return tuple(x.astype(bfloat16) for x in (q, k, v, o))


def fold(q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, int]:
    """The caller's side of the contract: Q (or O) [B * HQ, SQ, D] as the view
    [BHKV, group * SQ, D] the kernels take, and SQ (the causal kernels' scalar).
    The kernel cannot tell a fold of the wrong group, so this checks it."""
    bhq, seq_q, d = q.shape
    if bhq % k.shape[0]:
        raise ValueError(f"{bhq} query heads cannot share {k.shape[0]} kv heads evenly")
    folded = q.reshape(k.shape[0], -1, d)
    assert np.shares_memory(folded, q)  # writes to the fold land in q
    return folded, seq_q


def kernel_args(q, k, v, o, scale: float, causal: bool) -> tuple:
    qf, seq_q = fold(q, k)
    of, _ = fold(o, k)
    return (qf, k, v, of, scale) + ((seq_q,) if causal else ())


def name(d: int, causal: bool) -> str:
    return f"attention_gqa{'_causal' if causal else ''}_d{d}"


def grid(module, d: int, causal: bool, args: tuple) -> tuple[int, int, int]:
    return infer_grid(grid_rule(find_kernel(module, name(d, causal))), args)


def reference(q, k, v, scale: float, causal: bool) -> np.ndarray:
    """float64 attention; query head h reads kv head h // group (np.repeat), and
    with `causal` query i sees keys 0 .. i."""
    group = q.shape[0] // k.shape[0]
    k, v = (np.repeat(x.astype(np.float64), group, axis=0) for x in (k, v))
    s = q.astype(np.float64) @ k.transpose(0, 2, 1) * scale
    if causal:
        visible = np.arange(k.shape[1])[None, :] <= np.arange(q.shape[1])[:, None]
        s = np.where(visible, s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True) @ v


def rel_err(out: np.ndarray, ref: np.ndarray) -> float:
    """|out - ref| / |ref|; an unwritten (NaN) output fails any bound."""
    return float(np.linalg.norm(out.astype(np.float64) - ref) / np.linalg.norm(ref))


PROBLEMS = {
    "group1": Problem(1, 2, 1, 150, 150, 64),
    "group2": Problem(1, 2, 2, 100, 150, 64),
    "group4-mqa-d128": Problem(1, 1, 4, 70, 130, 128),
    "group7-odd": Problem(1, 2, 7, 10, 75, 64),  # blocks span 7 heads of 10 rows
    "group8-mqa": Problem(2, 1, 8, 20, 100, 64),
    "decode-group8": Problem(1, 2, 8, 3, 200, 64),
    "more-queries-than-keys": Problem(1, 1, 2, 300, 72, 64),
}


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_interpreter_matches_float64(problem: str, causal: bool) -> None:
    p = PROBLEMS[problem]
    q, k, v, o = p.arrays(seed=len(problem))
    scale = 1 / math.sqrt(p.d)
    module = tawa_xdsl.parse(SOURCE)
    args = kernel_args(q, k, v, o, scale, causal)
    tawa_xdsl.interpret(
        module, name(p.d, causal), *args, grid=grid(module, p.d, causal, args)
    )
    assert rel_err(o, reference(q, k, v, scale, causal)) < 1e-2


def test_a_query_that_was_not_folded_is_refused() -> None:
    """[B * HQ, SQ, D] passed as is: its first extent is not K's BHKV."""
    q, k, v, o = Problem(1, 2, 4, 64, 64, 64).arrays(seed=0)
    with pytest.raises(
        KernelArgumentError,
        match=re.escape(
            "argument 'k' dimension 0 (BHKV) has extent 2 but argument 'q' "
            "dimension 0 (BHKV) has extent 8"
        ),
    ):
        tawa_xdsl.interpret(
            tawa_xdsl.parse(SOURCE), name(64, False), q, k, v, o, 0.125, grid=(1, 8)
        )
    with pytest.raises(ValueError, match="cannot share 2 kv heads evenly"):
        fold(q[:7], k)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_the_grid_is_one_program_per_block_of_the_fold_and_kv_head(causal) -> None:
    p = Problem(2, 3, 4, 100, 64, 128)
    args = kernel_args(*p.arrays(seed=0), 0.1, causal)
    # 4 * 100 rows of each of the 6 kv heads, in blocks of 128
    assert grid(tawa_xdsl.parse(SOURCE), 128, causal, args) == (4, 6, 1)


@pytest.mark.parametrize("d", [64, 128])
def test_tuned_options_are_attentions(d: int) -> None:
    """The rules see attention (a loop with two dots): the same options as
    attention.mlir's kernels. Full: every block of the fold does the same work,
    so a persistent grid; causal: the key loops end at the block's last
    position, so one program per block, the last block of each kv head first."""
    module = tawa_xdsl.parse(SOURCE)
    mha = tawa_xdsl.parse(EXAMPLES / "attention.mlir")
    for causal in (False, True):
        mha_name = f"attention{'_causal' if causal else ''}_d{d}"
        options = default_options(find_kernel(module, name(d, causal)))
        assert options == default_options(find_kernel(mha, mha_name))
        assert options["two_stage"] and options.get("block_m") == (
            192 if d == 64 else None
        )
        assert options.get("persistent") is (None if causal else True)
        assert options.get("reverse_x") is (True if causal else None)


SMALL = Problem(1, 1, 2, 100, 150, 64)
"""200 fold rows: the first 128-row block spans both query heads."""
SMALL_GRID = (2, 1)  # two blocks of 128 rows, or of 192 (BM at head dim 64 tuned)


def small_output(module, d: int, causal: bool, run=tawa_xdsl.interpret, **kw):
    """O of SMALL at head dim `d` computed by `run` on `module`, as raw bits."""
    q, k, v, o = SMALL._replace(d=d).arrays(seed=1)
    args = kernel_args(q, k, v, o, 1 / math.sqrt(d), causal)
    run(module, name(d, causal), *args, grid=SMALL_GRID, **kw)
    return o.view(np.uint16)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_aref_simulator_matches_the_interpreter(causal: bool) -> None:
    expected = small_output(tawa_xdsl.parse(SOURCE), 64, causal)
    module = tawa_xdsl.apply(
        tawa_xdsl.parse(SOURCE),
        "aref-partition,pipeline{num-stages=3 mma-depth=2 two-stage=true}",
    )
    for seed in range(3):
        got = small_output(module, 64, causal, tawa_xdsl.simulate, seed=seed)
        assert np.array_equal(got, expected)


@pytest.fixture(scope="module")
def tuned() -> ModuleOp:
    """The file through `tawa-hopper-pipeline` with each kernel's tuned options
    (what `compile` runs)."""
    return tawa_xdsl.apply(tawa_xdsl.parse(SOURCE), "tawa-hopper-pipeline")


@pytest.mark.parametrize("config", ["tuned", "D2-P1-W2-2s"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_barrier_simulator_matches_the_interpreter(tuned, causal, config) -> None:
    expected = small_output(tawa_xdsl.parse(SOURCE), 64, causal)
    module = (
        tuned
        if config == "tuned"
        else tawa_xdsl.apply(tawa_xdsl.parse(SOURCE), hopper((2, 1, 2, 1)))
    )
    for seed in range(2):
        got = small_output(module, 64, causal, tawa_xdsl.simulate, seed=seed)
        assert np.array_equal(got, expected)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_compiled_kernels_take_their_grid_from_the_fold(tuned, causal) -> None:
    """What the runtime launches (at head dim 64, 192-row blocks): the rule
    `reverse-grid` recorded for the causal kernels, the tile walk of the
    persistent full ones; either way the fold's blocks times the kv heads."""
    p = Problem(2, 3, 4, 100, 64, 64)
    args = kernel_args(*p.arrays(seed=0), 0.1, causal)
    contract = launch_contract(find_kernel(tuned, name(64, causal)))
    rules = contract.grid if causal else contract.persistent
    assert rules is not None
    assert infer_grid(rules, args) == (3, 6, 1)  # 400 rows / 192


def test_tuned_ptx_assembles_without_remarks(tuned) -> None:
    result = assemble(to_ptx(tuned))
    assert result.ok, result.log[-3000:]
    assert result.remarks == [] and not result.spills, result.log[-3000:]
