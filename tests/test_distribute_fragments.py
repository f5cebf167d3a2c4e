"""distribute-fragments on every example kernel, in the configurations the
lowering and GPU tests use: the result is thread-level IR (only ptx ops,
`func.func` and `func.return`; no tensor-typed value; no block arguments; the
parameters declared on the kernel) that verifies. Each family's instructions
are checked on minimal inputs by the FileCheck files of
tests/filecheck/lowering/distribute, what they compute by the thread-level
simulator (tests/test_thread_sim_examples.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.utils.exceptions import DiagnosticException

import tawa_xdsl
from tawa_xdsl.compiler import CompileOptions
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import ptx
from tawa_xdsl.kernel import kernels
from tawa_xdsl.lowering.distribute import distribute_kernel, lowered_kernels
from tawa_xdsl.lowering.select_store_path import SelectStorePathPass
from tawa_xdsl.pipelines import TawaHopperPipeline

from .conftest import EXAMPLES

EXACT = dict(num_consumers=2)
TUNED: dict = {}  # the tuned defaults of each kernel, as `tawa_xdsl.compile` uses
CASES = [
    # GEMM: test_lowering's configurations (stages, MMA depth, consumers, ping-pong)
    ("gemm.mlir", dict(num_stages=1, mma_depth=1, num_consumers=1)),
    ("gemm.mlir", dict(num_stages=3, mma_depth=2, num_consumers=1)),
    ("gemm.mlir", dict(num_stages=4, mma_depth=3, num_consumers=2)),
    ("gemm.mlir", dict(num_stages=3, mma_depth=2, num_consumers=2, ping_pong=True)),
    ("gemm.mlir", TUNED),  # persistent 128x256, TMA-store epilogue
    ("gemm.mlir", dict(tma_store=False)),  # register epilogue: vec16 / pair / single
    ("gemm.mlir", dict(cluster=2, persistent=False)),  # multicast, remote arrivals
    ("gemm_epilogue.mlir", dict(num_stages=2, mma_depth=1, num_consumers=1)),
    ("gemm_epilogue.mlir", dict(num_stages=4, mma_depth=2, num_consumers=2)),
    ("gemm_epilogue.mlir", TUNED),
    ("attention.mlir", dict(num_stages=2, mma_depth=1, **EXACT)),
    ("attention.mlir", dict(num_stages=3, mma_depth=2, two_stage=True, **EXACT)),
    (
        "attention.mlir",
        dict(num_stages=2, mma_depth=1, two_stage=True, ping_pong=True, **EXACT),
    ),
    ("attention.mlir", TUNED),
    ("attention.mlir", dict(cluster=2)),
    ("attention.mlir", dict(reverse_x=True, cluster=2, persistent=False)),
    ("attention_f16.mlir", dict(num_stages=2, mma_depth=1, two_stage=True, **EXACT)),
    ("attention_d256.mlir", dict(num_stages=2, mma_depth=1, two_stage=True, **EXACT)),
    ("attention_d256.mlir", TUNED),
]


def case_id(case: tuple[str, dict]) -> str:
    example, options = case
    return example.removesuffix(".mlir") + (
        "-" + "-".join(f"{k}={v}" for k, v in options.items()) if options else "-tuned"
    )


def lowered(example: str, options: dict) -> list[func.FuncOp]:
    """The example's kernels after the Hopper pipeline and select-store-path
    (with the tuned defaults of each kernel where `options` is `TUNED`)."""
    text = (EXAMPLES / example).read_text()
    names = [k.sym_name.data for k in kernels(tawa_xdsl.parse(text))]
    out = []
    for name in names:
        module = tawa_xdsl.parse(text)
        for other in list(kernels(module)):
            if other.sym_name.data != name:
                other.detach()
                other.erase()
        if options is TUNED:
            opts = CompileOptions()
        elif "num_stages" in options:  # an exact configuration
            opts = CompileOptions(tuned=False, **options)
        else:  # tuned defaults, these options changed
            opts = CompileOptions(**options)
        spec = str(TawaHopperPipeline.of(opts).pipeline_pass_spec())
        try:
            module = tawa_xdsl.apply(module, spec)
        except OpDiagnostic as e:  # causal attention shares no load in a cluster
            assert "nothing to multicast" in str(e)
            continue
        SelectStorePathPass().apply(Context(), module)
        out += lowered_kernels(module)
    return out


def assert_thread_level(kernel: func.FuncOp) -> None:
    assert not kernel.body.block.args
    assert kernel.function_type.inputs.data == ()
    decls = kernel.attributes[ptx.PARAMS_ATTR]
    assert all(isinstance(d, ptx.ParamDeclAttr) for d in decls.data)
    for op in kernel.walk():
        if op is kernel:
            continue
        assert isinstance(op, ptx.PTXOp | func.ReturnOp), op.name
        for v in (
            *op.results,
            *(a for r in op.regions for b in r.blocks for a in b.args),
        ):
            assert not isinstance(v.type, TensorType), f"{op.name} defines {v.type}"
            assert isinstance(v.type, ptx.RegType | ptx.ImmType), f"{op.name}: {v.type}"


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_distribution_is_thread_level(case) -> None:
    for kernel in lowered(*case):
        distribute_kernel(kernel)
        kernel.verify()
        assert_thread_level(kernel)


def test_pass_over_a_module() -> None:
    """`distribute-fragments` by name: every lowered kernel, once (a second
    run is refused: `analysis.levels`)."""
    module = tawa_xdsl.apply(
        tawa_xdsl.parse(Path(EXAMPLES / "gemm.mlir")),
        "tawa-hopper-pipeline{num-consumers=2},distribute-fragments",
    )
    assert isinstance(module, ModuleOp)
    ks = list(kernels(module))
    assert len(ks) == 4
    for k in ks:
        assert_thread_level(k)
    with pytest.raises(DiagnosticException, match="it is lowered already"):
        tawa_xdsl.apply(module, "distribute-fragments")
