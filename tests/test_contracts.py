"""Argument contracts: every executor (`interpret`, `simulate` at the tile, aref and
lowered levels, and the compiled kernel's checks, which run before any GPU call)
refuses the same bad arguments with the same message, on a CPU: shapes that break
a kernel's `tile.dims`, wrong dtypes, read-only outputs, scalars of the wrong type
or out of range, malformed grids. Malformed `tile.dims` are refused when the IR
is parsed, at the kernel's line."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp, f32, i1, i32, i64

import tawa_xdsl
from tawa_xdsl.compiled import from_lowered
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.kernel import (
    KernelArgumentError,
    check_scalar,
    find_kernel,
    kernels,
    params,
)
from tawa_xdsl.runtime.kernel import Kernel
from tawa_xdsl.tawa_opt import main as tawa_opt

from .conftest import EXAMPLE_FILES, EXAMPLES

LOWER = "tawa-hopper-pipeline{num-consumers=1}"

SHIFTED = """
func.func @shifted(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]},
    %shift: index, %scale: f32) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %bk = arith.constant 64 : index
  %bm = arith.constant 128 : index
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %m0 = arith.muli %pid, %bm : index
  %src = arith.subi %m0, %shift : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%src, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %s = tile.splat %scale : f32 -> tensor<128x128xf32>
  %scaled = arith.mulf %acc, %s : tensor<128x128xf32>
  %out = arith.truncf %scaled : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %c0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}
"""
"""C rows [128 p, 128 p + 128) = scale * A rows shifted by `shift` @ B[:128]^T: an
index and an f32 parameter next to a shape contract (tests/gpu reuses it)."""


def shifted_reference(
    a: np.ndarray, b: np.ndarray, shift: int, scale: float
) -> np.ndarray:
    """What SHIFTED computes on a grid covering A's rows, in float64."""
    m = a.shape[0]
    rows = np.arange(m) - shift
    inside = (rows >= 0) & (rows < m)
    shifted = np.zeros(a.shape)
    shifted[inside] = a[rows[inside]].astype(np.float64)
    return scale * shifted @ b[:128].astype(np.float64).T


def gemm_arrays(m: int, n: int, k: int, k_b: int | None = None) -> list[np.ndarray]:
    rng = np.random.default_rng(m + n + k)
    return [
        rng.standard_normal((m, k)).astype(bfloat16),
        rng.standard_normal((n, k if k_b is None else k_b)).astype(bfloat16),
        np.full((m, n), np.nan, dtype=bfloat16),
    ]


Runs = list[tuple[str, Callable[..., None]]]


def executors(levels: dict[str, ModuleOp], name: str) -> Runs:
    """(label, call) for every executor of kernel `name`; `call(*args, grid=...)`.
    The compiled kernel is driven on the CPU: its checks run before the GPU."""
    runs: Runs = [
        (
            "interpret",
            lambda *a, **kw: tawa_xdsl.interpret(levels["tile"], name, *a, **kw),
        )
    ]
    for level, module in levels.items():
        runs.append(
            (
                f"simulate-{level}",
                lambda *a, m=module, **kw: tawa_xdsl.simulate(m, name, *a, **kw),
            )
        )
    runs.append(("compiled", Kernel(from_lowered(levels["lowered"], name))))
    return runs


@pytest.fixture(scope="module")
def levels() -> dict[str, ModuleOp]:
    """gemm.mlir at the tile level, after aref-partition + pipeline, lowered."""
    text = (EXAMPLES / "gemm.mlir").read_text()
    return {
        "tile": tawa_xdsl.parse(text),
        "aref": tawa_xdsl.apply(tawa_xdsl.parse(text), "aref-partition,pipeline"),
        "lowered": tawa_xdsl.apply(tawa_xdsl.parse(text), LOWER),
    }


@pytest.fixture(scope="module")
def gemm_runs(levels) -> Runs:
    return executors(levels, "gemm_nt")


@pytest.fixture(scope="module")
def shifted_levels() -> dict[str, ModuleOp]:
    return {
        "tile": tawa_xdsl.parse(SHIFTED),
        "lowered": tawa_xdsl.apply(tawa_xdsl.parse(SHIFTED), LOWER),
    }


K_MISMATCH = (
    "gemm_nt: argument 'b' dimension 1 (K) has extent 64 but argument 'a' "
    "dimension 1 (K) has extent 128"
)


def test_k_mismatch_is_refused_by_every_executor(gemm_runs) -> None:
    """The issue's case: B shorter in K than A used to run and read zeros."""
    a, b, c = gemm_arrays(256, 256, 128, k_b=64)
    for label, run in gemm_runs:
        with pytest.raises(KernelArgumentError, match=re.escape(K_MISMATCH)):
            run(a, b, c, grid=(2, 2))
        assert np.isnan(c.astype(np.float32)).all(), label  # nothing ran


@pytest.mark.parametrize(
    "shapes, message",
    [
        (
            [(2, 256, 64), (2, 256, 64), (2, 192, 64), (2, 256, 64)],
            "argument 'v' dimension 1 (SK) has extent 192 but argument 'k' "
            "dimension 1 (SK) has extent 256",
        ),
        (
            [(2, 256, 64), (2, 256, 64), (2, 256, 64), (2, 128, 64)],
            "argument 'o' dimension 1 (SQ) has extent 128 but argument 'q' "
            "dimension 1 (SQ) has extent 256",
        ),
        (
            [(2, 256, 64), (3, 256, 64), (3, 256, 64), (2, 256, 64)],
            "argument 'k' dimension 0 (BH) has extent 3 but argument 'q' "
            "dimension 0 (BH) has extent 2",
        ),
    ],
    ids=["kv-length", "query-length", "batch-heads"],
)
def test_attention_contract(shapes, message) -> None:
    module = tawa_xdsl.parse(EXAMPLES / "attention.mlir")
    q, k, v, o = (np.zeros(s, dtype=bfloat16) for s in shapes)
    with pytest.raises(KernelArgumentError, match=re.escape(message)):
        tawa_xdsl.interpret(module, "attention_d64", q, k, v, o, 0.125, grid=(2, 2))


def test_queries_and_keys_may_differ_in_length() -> None:
    """SQ and SK are separate names: a longer query than key sequence runs."""
    module = tawa_xdsl.parse(EXAMPLES / "attention.mlir")
    rng = np.random.default_rng(1)
    q, o = (rng.standard_normal((1, 256, 64)).astype(bfloat16) for _ in range(2))
    k, v = (rng.standard_normal((1, 128, 64)).astype(bfloat16) for _ in range(2))
    tawa_xdsl.interpret(module, "attention_d64", q, k, v, o, 0.125, grid=(2, 1))
    s = q[0].astype(np.float64) @ k[0].astype(np.float64).T * 0.125
    p = np.exp(s - s.max(axis=1, keepdims=True))
    ref = p / p.sum(axis=1, keepdims=True) @ v[0].astype(np.float64)
    assert np.abs(o[0].astype(np.float64) - ref).max() < 3e-2


def test_epilogue_bias_must_match_n() -> None:
    module = tawa_xdsl.parse(EXAMPLES / "gemm_epilogue.mlir")
    a, b, c = gemm_arrays(128, 256, 64)
    bias = np.zeros(257, dtype=bfloat16)
    with pytest.raises(
        KernelArgumentError,
        match=re.escape(
            "argument 'bias' dimension 0 (N) has extent 257 but argument 'b' "
            "dimension 0 (N) has extent 256"
        ),
    ):
        tawa_xdsl.interpret(module, "gemm_bias_gelu", a, b, bias, c, grid=(1, 2))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_every_example_names_every_dimension(path: Path) -> None:
    for kernel in kernels(tawa_xdsl.parse(path)):
        for p in params(kernel):
            if p.is_tensor:
                assert p.dims and all(p.dims), (kernel.sym_name.data, p.name)


@pytest.mark.parametrize(
    "source, spec",
    [
        ("gemm.mlir", "tawa-hopper-pipeline{persistent=true cluster=2 block-n=256}"),
        ("gemm_epilogue.mlir", "tawa-hopper-pipeline{reverse-x=true}"),
        ("gemm.mlir", "tile-shape{block-k=32},reverse-grid,persistent,aref-partition"),
    ],
)
def test_the_contract_survives_the_passes(source: str, spec: str) -> None:
    """Lowered kernels keep the tile-level dims and outputs (also printed and
    parsed again), so the compiled kernel checks what the tile kernel names."""
    tile_level = tawa_xdsl.parse(EXAMPLES / source)
    after = tawa_xdsl.apply(tawa_xdsl.parse(EXAMPLES / source), spec)
    reparsed = tawa_xdsl.parse(str(after))
    for kernel in kernels(tile_level):
        name = kernel.sym_name.data
        expected = [(p.name, p.dims, p.written) for p in params(kernel)]
        assert [p for p, _, written in expected if written] == ["c"]
        for module in (after, reparsed):
            got = params(find_kernel(module, name))
            assert [(p.name, p.dims, p.written) for p in got] == expected


# ------------------------------------------------------------- tile.dims in IR

DIMS_KERNEL = """func.func @k(%a: !tile.desc<?x64xbf16, box = [128, 64]> {{{a}}},
    %b: !tile.desc<?x128xbf16, box = [128, 64]> {{{b}}},
    %s: f32 {{{s}}}) attributes {{tile.kernel}} {{
  func.return
}}
"""


@pytest.mark.parametrize(
    "attrs, message",
    [
        (
            {"a": 'tile.dims = ["M"]'},
            "tile.dims of %a names 1 dimensions but !tile.desc<?x64xbf16, box = "
            "[128, 64]> has 2",
        ),
        ({"a": "tile.dims = [1, 2]"}, "tile.dims of %a must be an array of strings"),
        ({"a": 'tile.dims = "MK"'}, "tile.dims of %a must be an array of strings"),
        (
            {"s": 'tile.dims = ["S"]'},
            "tile.dims of %s: only !tile.desc parameters have dimensions",
        ),
        (
            {"a": 'tile.dims = ["M", "K"]', "b": 'tile.dims = ["N", "K"]'},
            "tile.dims: argument 'b' dimension 1 (K) has extent 128 but argument "
            "'a' dimension 1 (K) has extent 64",
        ),
    ],
    ids=["rank", "not-strings", "not-an-array", "scalar", "static-extents"],
)
def test_malformed_dims_are_refused_where_parsed(
    attrs: dict[str, str], message: str, tmp_path: Path, capsys
) -> None:
    path = tmp_path / "k.mlir"
    path.write_text(DIMS_KERNEL.format(**{"a": "", "b": "", "s": ""} | attrs))
    with pytest.raises(OpDiagnostic, match=re.escape(message)) as info:
        tawa_xdsl.parse(path)
    assert str(info.value).startswith(f"{path}:1:1: error: func.func: ")
    assert tawa_opt([str(path)]) == 1
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "source, message",
    [
        (
            '"func.func"() <{arg_attrs = [{}], function_type = (i32, i32) -> (), '
            'sym_name = "k"}> ({\n^bb0(%a: i32, %b: i32):\n  "func.return"() : () -> ()'
            "\n}) {tile.kernel} : () -> ()",
            "has 2 arguments but 1 argument attributes",
        ),
        (
            "func.func private @k(!tile.desc<?xf32, box = [128]>) attributes "
            "{tile.kernel}",
            "a tile kernel needs a body of one block",
        ),
    ],
    ids=["attribute-count", "declaration"],
)
def test_malformed_kernels_get_a_located_diagnostic(source: str, message: str) -> None:
    """Where reading the signature used to raise a bare ValueError."""
    with pytest.raises(OpDiagnostic, match=re.escape(message)) as info:
        tawa_xdsl.parse(source)
    assert str(info.value).startswith("<string>:1:1: error: func.func: ")


def test_malformed_signature_records_are_refused(levels) -> None:
    text = str(levels["lowered"])
    bad = text.replace('tile.arg_dims = [["M", "K"], ', "tile.arg_dims = [", 1)
    assert bad != text
    with pytest.raises(OpDiagnostic, match=r"tile\.arg_dims must be an array"):
        tawa_xdsl.parse(bad)


# ------------------------------------------------------------------ arrays


def test_wrong_arrays_are_refused_alike(gemm_runs) -> None:
    a, b, c = gemm_arrays(128, 128, 64)
    cases = [
        (
            (a, b.astype(np.float32), c),
            "argument 'b' has dtype f32, the kernel expects bf16",
        ),
        ((a[0], b, c), "argument 'a' has rank 1, the kernel expects 2"),
        ((a, b), r"takes 3 arguments \(a, b, c\), got 2"),
        ((a, "b", c), "argument 'b' must be an array.*(got|not) str"),
        ((a, b.tolist(), c), "argument 'b' must be an array.*(got|not) list"),
    ]
    for label, run in gemm_runs:
        for args, message in cases:
            with pytest.raises(KernelArgumentError, match=f"gemm_nt: .*{message}"):
                run(*args, grid=(1, 1))
        assert np.isnan(c.astype(np.float32)).all(), label


def test_read_only_outputs_are_refused(levels, gemm_runs) -> None:
    """A store into a read-only array used to fail inside the interpreter (numpy's
    ValueError) and, on the GPU, to be dropped silently on copy-back."""
    a, b, c = gemm_arrays(128, 128, 64)
    c.flags.writeable = False
    for _, run in gemm_runs:
        with pytest.raises(
            KernelArgumentError,
            match="argument 'c' is read-only, but the kernel stores into it",
        ):
            run(a, b, c, grid=(1, 1))
    a.flags.writeable = b.flags.writeable = False  # inputs may be read-only
    c = np.zeros((128, 128), dtype=bfloat16)
    tawa_xdsl.interpret(levels["tile"], "gemm_nt", a, b, c, grid=(1, 1))
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    assert np.abs(c.astype(np.float64) - ref).max() < 0.1


class CpuDLPack:
    """An array that offers only DLPack on the CPU (as a CPU torch tensor does)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __dlpack__(self, stream=None, max_version=None):
        return self._array.__dlpack__(stream=stream, max_version=max_version)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


class GpuOnly:
    """Claims to live on CUDA device 0; the CPU executors must not read it."""

    def __dlpack__(self, stream=None, max_version=None):
        raise AssertionError("a GPU array was exported to a CPU executor")

    def __dlpack_device__(self):
        return (2, 0)


def test_cpu_dlpack_arrays_are_run_in_place() -> None:
    module = tawa_xdsl.parse(EXAMPLES / "gemm.mlir")
    a, b, c = (x.astype(np.float16) for x in gemm_arrays(128, 128, 64))
    tawa_xdsl.interpret(
        module, "gemm_nt_f16", CpuDLPack(a), CpuDLPack(b), CpuDLPack(c), grid=(1, 1)
    )
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    assert np.abs(c.astype(np.float64) - ref).max() < 0.1  # written through
    with pytest.raises(KernelArgumentError, match="argument 'a' is on a GPU"):
        tawa_xdsl.interpret(module, "gemm_nt_f16", GpuOnly(), b, c, grid=(1, 1))


def test_bind_refuses_host_arrays(levels) -> None:
    compiled = Kernel(from_lowered(levels["lowered"], "gemm_nt"))
    with pytest.raises(KernelArgumentError, match="'a', 'b', 'c' live on the host"):
        compiled.bind(*gemm_arrays(128, 128, 64), grid=(1, 1))


# ------------------------------------------------------------------ scalars


@pytest.mark.parametrize(
    "t, value, expected",
    [
        (IndexType(), 2**31 - 1, 2**31 - 1),
        (IndexType(), -(2**31), -(2**31)),
        (IndexType(), np.int64(-64), -64),
        (IndexType(), np.array(7), 7),
        (
            IndexType(),
            2**32 + 128,
            r"got 4294967424, outside \[-2147483648, 2147483647\]",
        ),
        (IndexType(), 2**31, "outside"),
        (IndexType(), -(2**31) - 1, "outside"),
        (IndexType(), 1.0, "got float 1.0; pass an integer"),
        (IndexType(), np.float64(3.0), "got a numpy f64 .*; pass an integer"),
        (IndexType(), True, "got a bool; pass an integer"),
        (IndexType(), np.bool_(True), "got a bool"),
        (IndexType(), "3", "got str '3'; pass an integer"),
        (IndexType(), None, "got NoneType"),
        (IndexType(), np.arange(2), "got an array of shape"),
        (i32, -(2**31), np.int32(-(2**31))),
        (i32, 2**31, "outside"),
        (IntegerType(8), 128, r"outside \[-128, 127\]"),
        (i64, 2**40, np.int64(2**40)),
        (i1, True, True),
        (i1, 1, "pass a bool"),
        (f32, 0.5, np.float32(0.5)),
        (f32, 2, np.float32(2)),
        (f32, np.float16(1.5), np.float32(1.5)),
        (f32, np.array(0.25, dtype=bfloat16)[()], np.float32(0.25)),
        (f32, float("-inf"), np.float32(-np.inf)),
        (f32, 1e39, "got 1e\\+39, which overflows f32"),
        (f32, 10**400, "overflows f32"),
        (f32, True, "pass a real number"),
        (f32, 1 + 2j, "got complex"),
        (f32, "0.5", "got str"),
    ],
)
def test_scalars_are_typed_and_range_checked(t, value, expected) -> None:
    if isinstance(expected, str):
        with pytest.raises(KernelArgumentError, match=f"^k: argument 'x' .*{expected}"):
            check_scalar("k: argument 'x'", t, value)
    else:
        got = check_scalar("k: argument 'x'", t, value)
        assert got == expected and type(got) is type(expected)


def test_scalar_checks_are_shared(shifted_levels) -> None:
    """2**32 + 128 used to become 128 on the GPU; every executor refuses it, and a
    float for the index parameter, before running anything."""
    a, b, c = gemm_arrays(256, 128, 64)
    for _, run in executors(shifted_levels, "shifted"):
        for shift, message in [(2**32 + 128, "outside"), (64.0, "pass an integer")]:
            with pytest.raises(
                KernelArgumentError,
                match=f"shifted: argument 'shift' is a scalar of type index, .*{message}",
            ):
                run(a, b, c, shift, 1.0, grid=(2,))
        with pytest.raises(KernelArgumentError, match=r"'scale' .* overflows f32"):
            run(a, b, c, 0, 1e39, grid=(2,))
    assert np.isnan(c.astype(np.float32)).all()


@pytest.mark.parametrize("shift", [-64, 64])
def test_signed_index_parameters_agree_across_levels(shifted_levels, shift) -> None:
    """A negative index parameter is a value every level reads the same way."""
    a, b, _ = gemm_arrays(256, 128, 64)
    ref = shifted_reference(a, b, shift, 0.5)
    for level in ("tile", "lowered"):
        c = np.full((256, 128), np.nan, dtype=bfloat16)
        run = tawa_xdsl.interpret if level == "tile" else tawa_xdsl.simulate
        run(shifted_levels[level], "shifted", a, b, c, shift, 0.5, grid=(2,))
        err = np.abs(c.astype(np.float64) - ref).max()
        assert err < 2e-2 * np.abs(ref).max(), level


# --------------------------------------------------------------------- grid


@pytest.mark.parametrize(
    "grid",
    [5, "a", "ab", (0, 1), (1.5,), (), (1, 1, 1, 1), (True,), (2, -1), {1: 2}],
    ids=repr,
)
def test_malformed_grids_are_refused_alike(gemm_runs, grid) -> None:
    """(grid=None is no malformed grid: every executor then runs the grid the
    kernel's stores give, `test_api_inputs`.)"""
    a, b, c = gemm_arrays(128, 128, 64)
    for _, run in gemm_runs:
        with pytest.raises(
            KernelArgumentError,
            match=re.escape("gemm_nt: grid must be 1 to 3 positive integers in a tuple")
            + f".*got {re.escape(repr(grid))}$",
        ):
            run(a, b, c, grid=grid)


def test_grid_sequences_of_integers_are_taken(levels) -> None:
    a, b, c = gemm_arrays(128, 128, 64)
    tawa_xdsl.interpret(levels["tile"], "gemm_nt", a, b, c, grid=[np.int64(1), 1])
    assert not np.isnan(c.astype(np.float32)).any()


def gemm_levels(tile_pass: str, pipeline_option: str) -> dict[str, ModuleOp]:
    """gemm.mlir after a tile-level launch pass, and lowered with the option
    that runs it."""
    text = (EXAMPLES / "gemm.mlir").read_text()
    return {
        "tile": tawa_xdsl.apply(tawa_xdsl.parse(text), tile_pass),
        "lowered": tawa_xdsl.apply(
            tawa_xdsl.parse(text), f"tawa-hopper-pipeline{{{pipeline_option}}}"
        ),
    }


def test_cluster_grids_are_checked_by_every_executor() -> None:
    levels = gemm_levels("cluster{size=2}", "cluster=2")
    a, b, c = gemm_arrays(384, 128, 64)
    for _, run in executors(levels, "gemm_nt"):
        with pytest.raises(
            KernelArgumentError, match="grid's x extent 3 is not a multiple of 2"
        ):
            run(a, b, c, grid=(3, 1))


def test_persistent_grids_are_checked_by_every_executor() -> None:
    """A persistent kernel's programs walk every tile along x: a grid along y
    or z ran each tile once per row of programs (silently, as every tile of
    an idempotent kernel comes out the same; C = A B + C came out wrong)."""
    levels = gemm_levels("persistent", "persistent=true")
    a, b, c = gemm_arrays(256, 256, 64)
    for _, run in executors(levels, "gemm_nt"):
        with pytest.raises(
            KernelArgumentError,
            match=re.escape("gemm_nt: is persistent (its programs walk the output")
            + r".*got \(2, 2\)$",
        ):
            run(a, b, c, grid=(2, 2))
    tawa_xdsl.interpret(levels["tile"], "gemm_nt", a, b, c, grid=(3,))
    assert not np.isnan(c.astype(np.float32)).any()


def test_compile_locates_in_the_file_and_finds_the_kernel_at_once(
    tmp_path: Path,
) -> None:
    """`compile` parses its source when called: a malformed file is located at
    its path (not `<string>`), an unknown kernel is named with the ones there,
    and a kernel a pass refuses is reported at its line in the file."""
    broken = tmp_path / "broken.mlir"
    broken.write_text(
        (EXAMPLES / "gemm.mlir").read_text().replace("tile.dot", "tile.dott", 1)
    )
    with pytest.raises(Exception, match=re.escape(f"{broken}:")) as e:
        tawa_xdsl.compile(broken, "gemm_nt")
    assert "<string>" not in str(e.value)
    with pytest.raises(KeyError) as e:
        tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "nope")
    assert str(e.value) == (
        "no tile kernel named 'nope' (kernels here: gemm_nn, gemm_nn_f16, "
        "gemm_nt, gemm_nt_f16)"
    )
    refused = tawa_xdsl.compile(EXAMPLES / "gemm.mlir", "gemm_nt", num_consumers=3)
    with pytest.raises(Exception, match=re.escape(f"{EXAMPLES / 'gemm.mlir'}:")):
        refused.for_shape(M=256, N=256, K=256)
