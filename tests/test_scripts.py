"""scripts/pass_order.py and benchmarks/compile_time.py work on a CPU: the
pass-order experiment reports a good order and two that passes reject; the
compile-time benchmark covers every example kernel and profiles one (the times
themselves are the benchmark's business, not a test's)."""

from __future__ import annotations

import csv
import subprocess
import sys

from .conftest import EXAMPLES, REPO


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
    assert lines[2].split()[0] == "rejected"
    assert "run register-budget after cooperative" in lines[2]
    assert "1.              ok" in result.stdout


def test_compile_time_covers_every_example(tmp_path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "compile_time.py"),
            "--repeat",
            "1",
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
    assert {"gemm_nt", "attention_causal_d128", "attention_d256"} <= kernels
    assert all(float(r["total"]) > 0 for r in rows), rows
    assert "profile of" in result.stdout
