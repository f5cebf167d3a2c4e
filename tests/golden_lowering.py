"""Golden lowered IR: a refactoring of the Hopper lowering must not change it.

Every example kernel is lowered under the tuned options and every
configuration the GPU tests and `tests/test_lowering.py` use (consumer
warpgroups, persistent, two-stage, clusters, ping-pong, register stores, block
sizes, reversed grids, register budgets), plus a GEMM whose stores are shifted
to every coordinate `tests/gpu/test_runtime_gpu.py` tries and a fixed sample
of generated kernels. Each case records the IR printed right after
`convert-aref-to-nvgpu-async`, at the end of `tawa-hopper-pipeline` and the
PTX the thread-level back end prints from it (or the diagnostic the lowering
gives): a change whose PTX is unchanged keeps every GPU result of the code
before it.

The outputs are kept outside the repository (they are large and only mean
something next to the code that printed them):

    python -m tests.golden_lowering record DIR   # before a refactoring
    python -m tests.golden_lowering compare DIR  # after each step

A tool for refactorings, not a test: the comparison needs the outputs of the
code before the change (`compare` exits 1 and writes `.new` files beside the
ones that differ).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from xdsl.passes import PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, PassFailedException

import tawa_xdsl
from tawa_xdsl.diagnostics import verify_located
from tawa_xdsl.kernel import find_kernel, kernels
from tawa_xdsl.lowering.aref_to_nvgpu import ConvertArefToNVGPUAsyncPass
from tawa_xdsl.lowering.ptx_target import to_ptx
from tawa_xdsl.pipelines import TawaHopperPipeline, hopper_passes
from tawa_xdsl.registry import all_passes_with_xdsl, make_context

from .conftest import EXAMPLES
from .gpu.test_attention_gpu import CONFIGS as ATTENTION_GPU_CONFIGS
from .gpu.test_gemm_gpu import CONFIGS as GEMM_GPU_CONFIGS
from .gpu.test_runtime_gpu import SHIFTED_GEMM
from .property.programs import tile_programs
from .property.test_lowering_generated import cooperative_options, hopper_options
from .test_lowering import ATTENTION_CONFIGS, GEMM_CONFIGS, exact_options


@dataclass(frozen=True)
class Case:
    """One lowering: each kernel of `source` (or only `kernel`) through
    `tawa-hopper-pipeline` with the `CompileOptions` fields `options` (a pass
    spec `spec` instead), each kernel resolved and lowered on its own as
    `compile` does it."""

    name: str
    source: str
    options: dict[str, Any] = field(default_factory=dict)
    kernel: str | None = None
    spec: str | None = None
    """A `tawa-hopper-pipeline{...}` pass spec instead of `options`."""


def _kernel_names(text: str) -> list[str]:
    return re.findall(r"func\.func @(\w+)", text)


def _example(name: str) -> str:
    return (EXAMPLES / name).read_text()


def example_cases() -> list[Case]:
    """The examples under the options of the pipeline tests and the GPU tests."""
    cases: list[Case] = []
    files = sorted(p.name for p in EXAMPLES.glob("*.mlir"))
    for f in files:
        cases.append(Case(f"{f}-tuned", _example(f)))
        configs = ATTENTION_CONFIGS if f.startswith("attention") else GEMM_CONFIGS
        for c in configs:
            tag = "-".join(map(str, c))
            cases.append(Case(f"{f}-{tag}", _example(f), exact_options(c)))
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
                    tuned=False,
                ),
            )
        )
    d256 = _example("attention_d256.mlir")
    for consumer in (200, 240):
        cases.append(
            Case(
                f"attention_d256.mlir-registers-{consumer}",
                d256,
                exact_options(
                    (2, 1, 2, 1), producer_registers=24, consumer_registers=consumer
                ),
            )
        )
    for kernel, persistent in [
        ("gemm_nn", False),
        ("gemm_nt", False),
        ("gemm_nn", True),
        ("gemm_nt", True),
    ]:
        cases.append(
            Case(
                f"gemm.mlir-{kernel}-cluster-persistent={persistent}",
                gemm,
                dict(
                    num_stages=2,
                    mma_depth=1,
                    num_consumers=2,
                    persistent=persistent,
                    cluster=2,
                    tuned=False,
                ),
                kernel,
            )
        )
    cases.append(
        Case(
            "attention.mlir-attention_d128-cluster-persistent",
            _example("attention.mlir"),
            dict(
                num_stages=2,
                mma_depth=1,
                num_consumers=2,
                persistent=True,
                cluster=2,
                tuned=False,
            ),
            "attention_d128",
        )
    )
    return cases + compile_cases()


def compile_cases() -> list[Case]:
    """What the GPU tests hand to `tawa_xdsl.compile`."""
    cases: list[Case] = []

    def add(file: str, kernel: str, tag: str, **options: Any) -> None:
        cases.append(
            Case(f"compile-{file}-{kernel}-{tag}", _example(file), options, kernel)
        )

    for kernel in _kernel_names(_example("gemm.mlir")):
        for stages, mma, consumers in GEMM_GPU_CONFIGS:
            add(
                "gemm.mlir",
                kernel,
                f"D{stages}-P{mma}-W{consumers}",
                num_stages=stages,
                mma_depth=mma,
                num_consumers=consumers,
                tuned=False,
            )
        exact = dict(num_stages=3, mma_depth=1, num_consumers=2, tuned=False)
        for block_n in (128, 256):
            for persistent in (True, False):
                for tma_store in (True, False):
                    for ping_pong in (False, True):
                        add(
                            "gemm.mlir",
                            kernel,
                            f"BN{block_n}-persistent={persistent}-"
                            f"tma={tma_store}-pp={ping_pong}",
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
                    block_n=block_n,
                    persistent=persistent,
                    cluster=2,
                    **exact,
                )
        add("gemm.mlir", kernel, "cluster-grid", cluster=2, persistent=False)
    for kernel in _kernel_names(_example("gemm_epilogue.mlir")):
        for stages, mma, consumers in [(3, 2, 1), (4, 2, 2)]:
            add(
                "gemm_epilogue.mlir",
                kernel,
                f"D{stages}-P{mma}-W{consumers}",
                num_stages=stages,
                mma_depth=mma,
                num_consumers=consumers,
                tuned=False,
            )
    attention = [f for f in sorted(p.name for p in EXAMPLES.glob("attention*.mlir"))]
    for file in attention:
        for kernel in _kernel_names(_example(file)):
            for tag, options in ATTENTION_GPU_CONFIGS.items():
                if tag != "tuned":  # the file's tuned case lowers it
                    add(file, kernel, tag, **options)
    for kernel in _kernel_names(_example("attention_d256.mlir")):
        add(
            "attention_d256.mlir",
            kernel,
            "one-consumer",
            num_stages=2,
            mma_depth=1,
            num_consumers=1,
            tuned=False,
        )
    for tma_store in (True, False):
        shifts = [(128, 0, 0), (64, 0, 0), (0, 128, 0), (0, 64, 0)]
        shifts += [(0, 0, col) for col in (0, 8, 16, 24, 2, 1, -8, -1)]
        for load, store, col in shifts:
            cases.append(
                Case(
                    f"shifted-{load}-{store}-{col}-tma={tma_store}",
                    SHIFTED_GEMM.format(load=load, store=store, col=col),
                    dict(tuned=False, num_consumers=2, tma_store=tma_store),
                    "shifted",
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


def _options(case: Case) -> TawaHopperPipeline:
    if case.spec is None:
        return TawaHopperPipeline(**case.options)
    (pipeline,) = PassPipeline.parse_spec(all_passes_with_xdsl(), case.spec).passes
    assert isinstance(pipeline, TawaHopperPipeline)
    return pipeline


def _lower_kernel(text: str, name: str, options: TawaHopperPipeline) -> str:
    """The IR of kernel `name` alone, after the conversion and after the whole
    pipeline, or the diagnostic that stopped it."""
    module = tawa_xdsl.parse(text)
    for other in list(kernels(module)):
        if other.sym_name.data != name:
            other.detach()
            other.erase()
    ctx = make_context()
    out: list[str] = []
    try:
        passes = hopper_passes(options.resolve(find_kernel(module, name)))
        i = next(
            i
            for i, p in enumerate(passes)
            if isinstance(p, ConvertArefToNVGPUAsyncPass)
        )
        for stage, stage_passes in (
            ("convert", passes[: i + 1]),
            ("pipeline", passes[i + 1 :]),
        ):
            for p in stage_passes:
                p.apply(ctx, module)
                verify_located(module)
            text_out = StringIO()
            Printer(stream=text_out).print_op(module)
            out.append(f"// ----- {stage}\n{text_out.getvalue()}\n")
        out.append(f"// ----- ptx\n{to_ptx(module)}\n")
    except (DiagnosticException, PassFailedException) as e:
        out.append(f"// ----- diagnostic\n{e}\n")
    return "".join(out)


def lower(case: Case) -> str:
    """Each kernel of the case, lowered on its own."""
    names = [case.kernel] if case.kernel else _kernel_names(case.source)
    options = _options(case)
    return "".join(
        f"// ===== @{name}\n{_lower_kernel(case.source, name, options)}"
        for name in names
    )


def _file(directory: Path, case: Case) -> Path:
    return directory / f"{re.sub(r'[^A-Za-z0-9_.=-]', '_', case.name)}.mlir"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["record", "compare", "list"])
    parser.add_argument("directory", type=Path, nargs="?")
    parser.add_argument("-k", default="", help="only cases whose name holds this")
    args = parser.parse_args(argv)
    cases = [c for c in all_cases() if args.k in c.name]
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
