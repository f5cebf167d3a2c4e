"""Golden lowered IR: a refactoring of the Hopper lowering must not change it.

Every example kernel is lowered under the default options and every
configuration the GPU tests and `tests/test_lowering.py` use (consumer
warpgroups, persistent, two-stage, clusters, ping-pong, register stores, block
sizes, reversed grids, register budgets), plus the shifted GEMM of
`tests/gpu/test_runtime_gpu.py` at every coordinate it tries and a fixed sample
of generated kernels. Each case records the IR printed right after
`convert-aref-to-nvgpu-async` and at the end of `tawa-hopper-pipeline` (or the
diagnostic the lowering gives).

The outputs are kept outside the repository (they are large and only mean
something next to the code that printed them):

    python -m tests.test_lowering_golden record DIR   # before a refactoring
    python -m tests.test_lowering_golden compare DIR  # after each step

and `TAWA_GOLDEN_DIR=DIR pytest tests/test_lowering_golden.py` runs the
comparison case by case; without the variable these tests skip.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException

import tawa_xdsl
from tawa_xdsl.diagnostics import verify_located
from tawa_xdsl.kernel import find_kernel, kernels
from tawa_xdsl.lowering.aref_to_nvgpu import ConvertArefToNVGPUAsyncPass
from tawa_xdsl.pipelines import TawaHopperPipeline
from tawa_xdsl.registry import all_passes_with_xdsl, make_context
from tawa_xdsl.runtime.kernel import RUNTIME_DEFAULTS
from tawa_xdsl.tuning import default_options

from .conftest import EXAMPLES
from .gpu.test_attention_gpu import CONFIGS as ATTENTION_GPU_CONFIGS
from .gpu.test_gemm_gpu import CONFIGS as GEMM_GPU_CONFIGS
from .gpu.test_runtime_gpu import SHIFTED_GEMM
from .property.programs import tile_programs
from .property.test_lowering_generated import cooperative_options, hopper_options
from .test_lowering import ATTENTION_CONFIGS, GEMM_CONFIGS


@dataclass(frozen=True)
class Case:
    """One lowering: `source` (text) with `options` for `tawa-hopper-pipeline`.

    `kernel` set: as `tawa_xdsl.compile` does it (only that kernel, the runtime
    defaults, then the tuned defaults unless `tuned` is False, then `options`).
    `kernel` None: the whole file with exactly `options`."""

    name: str
    source: str
    options: dict[str, Any] = field(default_factory=dict)
    kernel: str | None = None
    tuned: bool = True
    spec: str | None = None
    """A `tawa-hopper-pipeline{...}` pass spec instead of `options`."""


def _kernel_names(text: str) -> list[str]:
    return re.findall(r"func\.func @(\w+)", text)


def _pipeline_options(config: tuple[int, ...], **extra: Any) -> dict[str, Any]:
    """`tests/test_lowering.py`'s (num-stages, mma-depth, num-consumers,
    two-stage[, ping-pong]) as pipeline options."""
    stages, mma, consumers, two_stage, *ping_pong = config
    return dict(
        num_stages=stages,
        mma_depth=mma,
        num_consumers=consumers,
        two_stage=bool(two_stage),
        ping_pong=bool(ping_pong and ping_pong[0]),
        **extra,
    )


def _example(name: str) -> str:
    return (EXAMPLES / name).read_text()


def example_cases() -> list[Case]:
    """The examples under the options of the pipeline tests and the GPU tests."""
    cases: list[Case] = []
    files = sorted(p.name for p in EXAMPLES.glob("*.mlir"))
    for f in files:
        cases.append(Case(f"{f}-pipeline-defaults", _example(f)))
        configs = ATTENTION_CONFIGS if f.startswith("attention") else GEMM_CONFIGS
        for c in configs:
            tag = "-".join(map(str, c))
            cases.append(Case(f"{f}-{tag}", _example(f), _pipeline_options(c)))
    gemm = _example("gemm.mlir")
    for consumers in (1, 2):
        cases.append(
            Case(
                f"gemm.mlir-persistent-W{consumers}",
                gemm,
                dict(
                    num_stages=2,
                    mma_depth=1,
                    persistent=True,
                    num_consumers=consumers,
                ),
            )
        )
    d256 = _example("attention_d256.mlir")
    for consumer in (200, 240):
        cases.append(
            Case(
                f"attention_d256.mlir-registers-{consumer}",
                d256,
                _pipeline_options(
                    (2, 1, 2, 1), producer_registers=24, consumer_registers=consumer
                ),
            )
        )
    # tests/test_lowering.py's clusters: one kernel at a time
    for kernel, persistent in [
        ("gemm_nn", False),
        ("gemm_nt", False),
        ("gemm_nn", True),
        ("gemm_nt", True),
    ]:
        cases.append(
            _only(
                f"gemm.mlir-{kernel}-cluster-persistent={persistent}",
                gemm,
                kernel,
                dict(
                    num_stages=2,
                    mma_depth=1,
                    num_consumers=2,
                    persistent=persistent,
                    cluster=2,
                ),
            )
        )
    cases.append(
        _only(
            "attention.mlir-attention_d128-cluster-persistent",
            _example("attention.mlir"),
            "attention_d128",
            dict(
                num_stages=2, mma_depth=1, num_consumers=2, persistent=True, cluster=2
            ),
        )
    )
    return cases + compile_cases()


def _only(name: str, text: str, kernel: str, options: dict[str, Any]) -> Case:
    """`options` exactly, on a module holding only `kernel`."""
    return Case(name, text, options, kernel, tuned=False)


def compile_cases() -> list[Case]:
    """What the GPU tests hand to `tawa_xdsl.compile`."""
    cases: list[Case] = []

    def add(file: str, kernel: str, tag: str, tuned: bool = True, **options: Any):
        cases.append(
            Case(
                f"compile-{file}-{kernel}-{tag}",
                _example(file),
                options,
                kernel,
                tuned,
            )
        )

    for kernel in _kernel_names(_example("gemm.mlir")):
        add("gemm.mlir", kernel, "tuned")
        for stages, mma, consumers in GEMM_GPU_CONFIGS:
            add(
                "gemm.mlir",
                kernel,
                f"D{stages}-P{mma}-W{consumers}",
                False,
                num_stages=stages,
                mma_depth=mma,
                num_consumers=consumers,
            )
        exact = dict(num_stages=3, mma_depth=1, num_consumers=2)
        for block_n in (128, 256):
            for persistent in (True, False):
                for tma_store in (True, False):
                    for ping_pong in (False, True):
                        add(
                            "gemm.mlir",
                            kernel,
                            f"BN{block_n}-persistent={persistent}-"
                            f"tma={tma_store}-pp={ping_pong}",
                            False,
                            block_n=block_n,
                            persistent=persistent,
                            tma_store=tma_store,
                            ping_pong=ping_pong,
                            **exact,
                        )
                add(
                    "gemm.mlir",
                    kernel,
                    f"BN{block_n}-persistent={persistent}-cluster",
                    False,
                    block_n=block_n,
                    persistent=persistent,
                    cluster=2,
                    **exact,
                )
        add("gemm.mlir", kernel, "cluster-grid", cluster=2, persistent=False)
    for kernel in _kernel_names(_example("gemm_epilogue.mlir")):
        add("gemm_epilogue.mlir", kernel, "tuned")
        for stages, mma, consumers in [(3, 2, 1), (4, 2, 2)]:
            add(
                "gemm_epilogue.mlir",
                kernel,
                f"D{stages}-P{mma}-W{consumers}",
                False,
                num_stages=stages,
                mma_depth=mma,
                num_consumers=consumers,
            )
    for file in ("attention.mlir", "attention_f16.mlir"):
        for kernel in _kernel_names(_example(file)):
            for tag, options in ATTENTION_GPU_CONFIGS.items():
                options = dict(options)
                tuned = options.pop("tuned", True)
                add(file, kernel, tag, tuned, **options)
    for kernel in _kernel_names(_example("attention_d256.mlir")):
        for tag in ("tuned", "D2-P1", "D2-P1-two-stage"):
            options = dict(ATTENTION_GPU_CONFIGS[tag])
            tuned = options.pop("tuned", True)
            add("attention_d256.mlir", kernel, tag, tuned, **options)
        add(
            "attention_d256.mlir",
            kernel,
            "one-consumer",
            False,
            num_stages=2,
            mma_depth=1,
            num_consumers=1,
        )
        for registers in ({}, dict(producer_registers=24, consumer_registers=200)):
            add(
                "attention_d256.mlir",
                kernel,
                f"two-stage-registers={registers.get('consumer_registers', 0)}",
                False,
                num_stages=2,
                mma_depth=1,
                two_stage=True,
                **registers,
            )
    for tma_store in (True, False):
        shifts = [(128, 0, 0), (64, 0, 0), (0, 128, 0), (0, 64, 0)]
        shifts += [(0, 0, col) for col in (0, 8, 16, 24, 2, 1, -8, -1)]
        for load, store, col in shifts:
            cases.append(
                Case(
                    f"shifted-{load}-{store}-{col}-tma={tma_store}",
                    SHIFTED_GEMM.format(load=load, store=store, col=col),
                    {"tma_store": tma_store},
                    "shifted",
                    tuned=False,
                )
            )
    return cases


def _sample(strategy_options, tile: int, count: int, tag: str) -> list[Case]:
    """A fixed sample (derandomized hypothesis) of generated kernels."""
    found: list[Case] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(program=tile_programs(tile=tile), options=strategy_options())
    def collect(program, options: str) -> None:
        found.append(Case(f"generated-{tag}-{len(found)}", program.text, spec=options))

    collect()
    return found


def generated_cases() -> list[Case]:
    return _sample(hopper_options, 64, 30, "64") + _sample(
        cooperative_options, 128, 15, "128"
    )


def all_cases() -> list[Case]:
    return example_cases() + generated_cases()


def _split_at_conversion(
    passes: list[ModulePass],
) -> tuple[list[ModulePass], list[ModulePass]]:
    i = next(
        i for i, p in enumerate(passes) if isinstance(p, ConvertArefToNVGPUAsyncPass)
    )
    return passes[: i + 1], passes[i + 1 :]


def _passes(case: Case, module: ModuleOp) -> list[ModulePass]:
    if case.spec is not None:
        (pipeline,) = PassPipeline.parse_spec(all_passes_with_xdsl(), case.spec).passes
        assert isinstance(pipeline, TawaHopperPipeline)
        return pipeline.passes()
    options = dict(case.options)
    if case.kernel is not None:
        tuned = default_options(find_kernel(module, case.kernel)) if case.tuned else {}
        options = {**RUNTIME_DEFAULTS, **tuned, **case.options}
    return TawaHopperPipeline(**options).passes()


def lower(case: Case) -> str:
    """The IR after the conversion and after the whole pipeline, or the
    diagnostic that stopped it."""
    module = tawa_xdsl.parse(case.source)
    if case.kernel is not None:
        for other in list(kernels(module)):
            if other.sym_name.data != case.kernel:
                other.detach()
                other.erase()
    ctx = make_context()
    out: list[str] = []
    try:
        before, after = _split_at_conversion(_passes(case, module))
        for stage, passes in (("convert", before), ("pipeline", after)):
            for p in passes:
                p.apply(ctx, module)
                verify_located(module)
            text = StringIO()
            Printer(stream=text).print_op(module)
            out.append(f"// ----- {stage}\n{text.getvalue()}\n")
    except DiagnosticException as e:
        out.append(f"// ----- diagnostic\n{e}\n")
    return "".join(out)


def _file(directory: Path, case: Case) -> Path:
    return directory / f"{re.sub(r'[^A-Za-z0-9_.=-]', '_', case.name)}.mlir"


_CASES = all_cases()
_GOLDEN = os.environ.get("TAWA_GOLDEN_DIR")


@pytest.mark.skipif(_GOLDEN is None, reason="set TAWA_GOLDEN_DIR to compare")
@pytest.mark.parametrize("case", _CASES, ids=[c.name for c in _CASES])
def test_lowering_matches_the_golden_output(case: Case) -> None:
    assert _GOLDEN is not None
    assert lower(case) == _file(Path(_GOLDEN), case).read_text()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["record", "compare", "list"])
    parser.add_argument("directory", type=Path, nargs="?")
    parser.add_argument("-k", default="", help="only cases whose name holds this")
    args = parser.parse_args(argv)
    cases = [c for c in _CASES if args.k in c.name]
    if args.mode == "list":
        print("\n".join(c.name for c in cases))
        return 0
    assert args.directory is not None
    args.directory.mkdir(parents=True, exist_ok=True)
    names = [_file(args.directory, c) for c in cases]
    assert len(set(names)) == len(names), "case names must be unique"
    differ = 0
    for case, path in zip(cases, names, strict=True):
        text = lower(case)
        if args.mode == "record":
            path.write_text(text)
        elif not path.exists() or path.read_text() != text:
            differ += 1
            path.with_suffix(".new").write_text(text)
            print(f"DIFFERS: {case.name}", flush=True)
    print(f"{len(cases)} cases, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
