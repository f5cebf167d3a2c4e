"""scripts/pass_order.py and benchmarks/compile_time.py work on a CPU: the
pass-order experiment reports a good order and two that passes reject; the
compile-time benchmark covers every example kernel and profiles one (the times
themselves are the benchmark's business, not a test's). The GEMM and attention
benchmarks' suites are the issues' lists (16-bit and FP8), name kernels that
exist, and list their rows without torch."""

from __future__ import annotations

import csv
import importlib.util
import re
import subprocess
import sys
from types import ModuleType

import pytest

import tawa_xdsl
from tawa_xdsl.kernel import kernels as kernels_of

from .conftest import EXAMPLES, REPO, sweep


def test_pass_order_reports_each_order(tmp_path) -> None:
    orders = tmp_path / "orders.txt"
    orders.write_text(
        "# a good order and two that a pass rejects\n"
        "aref-partition,pipeline{num-stages=2 mma-depth=1},convert-aref-to-nvgpu-async\n"
        "pipeline{num-stages=2},aref-partition,convert-aref-to-nvgpu-async\n"
        "aref-partition,register-budget{producer=40 consumer=240},cooperative,"
        "convert-aref-to-nvgpu-async\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "pass_order.py"),
            str(EXAMPLES / "gemm.mlir"),
            "gemm_nt",
            "--orders",
            str(orders),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[0] == "ok"
    assert lines[1].split()[0] == "rejected"
    assert "run aref-partition first" in lines[1]
    # located in the file, not in "<string>" (the script parsed its text)
    assert f" {EXAMPLES / 'gemm.mlir'}:9:1: error: func.func: pipeline" in lines[1]
    assert lines[2].split()[0] == "rejected"
    assert "run register-budget after cooperative" in lines[2]
    assert "1.              ok" in result.stdout


def test_compile_time_times_the_kernels_asked_for(tmp_path) -> None:
    """(Three kernels: every example is the script's default.)"""
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "compile_time.py"),
            "--repeat",
            "1",
            "--kernels",
            "gemm_nt,attention_d256",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    with open(tmp_path / "compile_time.csv") as f:
        rows = list(csv.DictReader(f))
    kernels = {r["kernel"] for r in rows}
    assert kernels == {"gemm_nt", "attention_causal_d128", "attention_d256"}
    assert all(float(r["total"]) > 0 for r in rows), rows
    assert "profile of" in result.stdout


def load_benchmark(name: str) -> ModuleType:
    """A benchmark script as a module: importing it needs no torch or GPU."""
    path = REPO / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def kernel_names(example: str) -> set[str]:
    return {k.sym_name.data for k in kernels_of(tawa_xdsl.parse(EXAMPLES / example))}


def issue16_gemm_suite() -> set[tuple[int, int, int, str, str]]:
    """Issue 16's list, transcribed: (M, N, K, B layout, dtype)."""
    bf16 = [
        (m, n, k)
        for m in (128, 512, 2048, 8192)
        for n, k in [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336)]
    ]
    bf16 += [
        (m, n, k)
        for m in (512, 4096)
        for n, k in [(10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)]
    ]
    bf16 += [(m, n, k) for m in (16, 64) for n, k in [(6144, 4096), (4096, 14336)]]
    bf16 += [
        (256, 256, 16384),
        (128, 1024, 8192),
        (1000, 1000, 1000),
        (4095, 4097, 4096),
        (999, 3001, 2000),
    ]
    nn = [(2048, 4096, 4096), (512, 28672, 4096), (8192, 8192, 8192)]
    f16 = [(2048, 6144, 4096), (999, 3001, 2000)]
    six = [
        (2048, 2048, 2048),
        (4096, 4096, 4096),
        (8192, 8192, 8192),
        (8192, 8192, 1024),
        (8192, 8192, 4096),
        (4096, 4096, 16384),
    ]
    rows = {(*s, "nt", "bf16") for s in bf16 + nn + f16 + six}  # nn: both layouts
    return rows | {(*s, "nn", "bf16") for s in nn} | {(*s, "nt", "f16") for s in f16}


def test_gemm_llm_suite_is_the_issues_list() -> None:
    gemm = load_benchmark("gemm")
    suite = gemm.SUITES["llm"]
    assert len(suite) == len(set(suite)) == 44
    assert {r[:5] for r in suite} == issue16_gemm_suite()
    assert all(r.scaling == "" for r in suite)
    labels = [r.label for r in suite]
    for name, quick in gemm.QUICK.items():
        assert quick <= {r.label for r in gemm.SUITES[name]}, name
    assert [r.label for r in gemm.pick(suite, "*-nn,16x*", None)] == [
        "16x6144x4096",
        "16x4096x14336",
        "2048x4096x4096-nn",
        "512x28672x4096-nn",
        "8192x8192x8192-nn",
    ]
    assert "999x3001x2000-f16" in labels and "4095x4097x4096" in labels
    assert {r.kernel for r in suite} <= kernel_names("gemm.mlir")


def test_gemm_fp8_suite_is_issue_17s_list() -> None:
    """Per-tensor and row-wise at the five large shapes and the llm suite's
    M >= 512 rows (B N x K, once each), block scales at DeepSeek-V3's shapes."""
    gemm = load_benchmark("gemm")
    suite = gemm.SUITES["fp8"]
    assert len({r.label for r in suite}) == len(suite)
    large = {(4096, 4096, 4096), (8192, 8192, 8192)}
    large |= {(8192, 8192, k) for k in (1024, 4096, 16384)}
    llm = {(m, n, k) for m, n, k, *_ in issue16_gemm_suite() if m >= 512}
    for scaling in ("tensor", "row"):
        shapes = {r[:3] for r in suite if r.scaling == scaling}
        assert shapes == large | llm, scaling
    block = {r[:3] for r in suite if r.scaling == "block"}
    assert block == {
        (m, n, k)
        for m in (128, 4096)
        for n, k in ((7168, 16384), (4096, 7168), (2112, 7168))
    }
    assert {(r.layout, r.dtype) for r in suite} == {("nt", "fp8")}
    assert {r.kernel for r in suite} <= kernel_names("gemm_fp8.mlir")
    assert {r.example for r in suite} == {"gemm_fp8.mlir"}


def test_blockwise_variants_name_kernels_that_exist() -> None:
    """benchmarks/blockwise.py (scripts/bench_blockwise.sh) times kernels of
    gemm_fp8.mlir at issue 17's block-scaled shapes, and plans without torch."""
    blockwise = load_benchmark("blockwise")
    kernels = {kernel for _, kernel, _ in blockwise.VARIANTS.values() if kernel}
    assert kernels <= kernel_names("gemm_fp8.mlir")
    assert {"gemm_fp8_blockwise", "gemm_fp8_blockwise_overlap"} <= kernels
    assert (4096, 7168, 16384) in blockwise.SHAPES
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "blockwise.py"), "--list"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("4 shapes x 7 variants")


def test_attention_suite_has_head_dim_256_and_gqa_rows() -> None:
    attention = load_benchmark("attention")
    suite = attention.suite()
    labels = {r.label for r in suite}
    assert len(labels) == len(suite)
    assert {"d256-s512", "d256-s16384-causal", "gqa32x8-d128-s4096"} <= labels
    assert {"d80-s4096", "d96-s16384-causal"} <= labels
    assert labels >= attention.QUICK["bf16"]
    gqa = [r for r in suite if r.gqa]
    assert {(r.d, r.q_heads, r.kv_heads) for r in gqa} == {
        (128, 32, 8),
        (128, 64, 8),
        (128, 16, 1),
        (64, 32, 8),
    }
    assert all(r.backends == ("cudnn", "flash", "efficient") for r in gqa)
    for file, name in {r.kernel for r in suite}:  # tawa has every kernel named
        assert name in kernel_names(file)


def test_attention_fp8_suite_is_the_multi_head_grid() -> None:
    attention = load_benchmark("attention")
    every = attention.suite("fp8")
    suite = [r for r in every if not r.v_stored]
    labels = {r.label for r in suite}
    assert len(labels) == len(suite) == 48  # head dims 4 x sequences 6 x causal 2
    assert {r.label for r in every} >= attention.QUICK["fp8"] | {"d128-s16384-fp8"}
    assert {r.label.removesuffix("-fp8") for r in suite} == {
        r.label for r in attention.suite() if not r.gqa and r.d != 80
    }
    assert all(r.backends == ("cudnn",) for r in every)
    assert {r.kernel for r in suite} == {
        ("attention_fp8.mlir", name) for name in kernel_names("attention_fp8.mlir")
    }
    # V as stored: each row of head dim 64, 128, 256 next to its V^T row
    stored = [r for r in every if r.v_stored]
    assert [r.label for r in stored] == [r.label + "-v" for r in suite if r.d != 96]
    assert {r.kernel for r in stored} == {
        ("attention_fp8_v.mlir", name) for name in kernel_names("attention_fp8_v.mlir")
    }
    assert all(every[every.index(r) - 1].label + "-v" == r.label for r in stored)


@pytest.mark.parametrize(
    "args, rows",
    [
        (["gemm.py", "--suite", "llm"], 44),
        (["gemm.py", "--suite", "llm", "--quick"], 11),
        (["gemm.py", "--suite", "other"], 40),
        (["gemm.py", "--suite", "other", "--quick"], 4),
        (["gemm.py"], 6),
        (["attention.py", "--rows", "gqa*"], 24),
        (["attention.py", "--quick"], 8),
        (["gemm.py", "--dtype", "fp8"], 66),
        (["gemm.py", "--dtype", "fp8", "--quick"], 6),
        (["gemm.py", "--dtype", "fp8", "--rows", "*-fp8-block"], 6),
        (["attention.py", "--dtype", "fp8"], 84),
        (["attention.py", "--dtype", "fp8", "--quick"], 7),
        (["tile_widths.py"], 12),
        (["tile_widths.py", "--config", "num_stages=8", "--rows", "128x*"], 2),
    ],
)
def test_benchmarks_list_rows_and_time_without_a_gpu(args, rows) -> None:
    """`--list` runs here, where torch is absent: the scripts import without it."""
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / args[0]), *args[1:], "--list"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    *listed, plan = result.stdout.splitlines()
    assert len(listed) == rows
    assert re.fullmatch(rf"{rows} rows, about \d+\.\d min of GPU time .*", plan)


def test_a_row_that_fails_is_recorded_and_the_suite_goes_on(tmp_path, capsys) -> None:
    """`common.measure_rows` (every suite's loop): a row whose measurement
    raises is written as its blank row with the reason, and the next row runs."""
    common = load_benchmark("common")
    fields = ["label", "tflops", "errors"]

    def measure(row: str) -> dict:
        if row == "bad":
            raise RuntimeError("no reference")
        return {"label": row, "tflops": 1.0, "errors": ""}

    results = common.measure_rows(
        ["good", "bad", "last"],
        measure,
        lambda row: dict.fromkeys(fields) | {"label": row},
        fields,
        tmp_path / "rows.csv",
        lambda r: print(r["label"]),
    )
    assert [r["label"] for r in results] == ["good", "bad", "last"]
    assert results[1]["errors"] == "row: RuntimeError: no reference"
    with open(tmp_path / "rows.csv") as f:
        written = list(csv.DictReader(f))
    assert [r["label"] for r in written] == ["good", "bad", "last"]
    assert written[1]["tflops"] == "" and written[2]["tflops"] == "1.0"
    assert capsys.readouterr().out.split() == [
        "good",
        "row:",
        "RuntimeError:",
        "no",
        "reference",
        "bad",
        "last",
    ]


CLIS = sorted(
    path.relative_to(REPO).as_posix()
    for folder in ("benchmarks", "scripts")
    for path in (REPO / folder).glob("*.py")
    if '__name__ == "__main__"' in path.read_text()
)
"""Every benchmark and script run from the command line."""


@pytest.mark.parametrize(
    ("cli",),
    sweep(
        [(c,) for c in CLIS],
        {("benchmarks/ablation.py",), ("benchmarks/blockwise.py",)},
        lambda c: c[0],
        slow={("benchmarks/tune.py",)},
    ),
)
def test_help_runs_without_torch(cli: str) -> None:
    """`--help` of each command line runs here, where torch is absent (tune.py
    and ablation.py imported torch first and ended in a traceback; tune.py also
    imported a SHAPES gemm.py no longer has; blockwise.py's help held a bare
    '%', which argparse read as a format)."""
    result = subprocess.run(
        [sys.executable, str(REPO / cli), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage:")
