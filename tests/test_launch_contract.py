"""The launch contract (`tawa_xdsl.contract`): its typed attributes round-trip
through the printer and parser and check themselves; `launch_contract` reads a
lowered kernel's whole contract, refuses a kernel that is not lowered and a
malformed ABI; the contract and the compiled-kernel record round-trip through
JSON (what the disk cache stores)."""

from __future__ import annotations

import json

import pytest
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BFloat16Type,
    Float32Type,
    IndexType,
    StringAttr,
)
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

import tawa_xdsl
from tawa_xdsl.compiled import CompiledKernel, from_lowered
from tawa_xdsl.contract import (
    AbiParam,
    Launch,
    NotLoweredError,
    kernel_launch,
    launch_contract,
)
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects.nvgpu_async import ParamKind
from tawa_xdsl.grid import Rule
from tawa_xdsl.kernel import KernelArgumentError, find_kernel
from tawa_xdsl.registry import make_context

from .conftest import example_module

TMAP = nv.TensorMapType((DYNAMIC_INDEX,) * 2, BFloat16Type(), (128, 64))


def lowered(pipeline: str = "tawa-hopper-pipeline", kernel: str = "gemm_nt"):
    """gemm_nt through `pipeline`, and its kernel named `kernel`."""
    module = tawa_xdsl.apply(example_module("gemm.mlir", "gemm_nt"), pipeline)
    return module, find_kernel(module, kernel)


def reparsed(text: str):
    return Parser(make_context(), text).parse_attribute()


@pytest.mark.parametrize(
    ("attr", "text"),
    [
        (
            nv.ParamAttr(ParamKind.MAP, 0, TMAP),
            "#nvgpu_async.param<map 0 : !nvgpu_async.tensor_map<?x?xbf16, "
            "box = [128, 64], swizzle = 128>>",
        ),
        (
            nv.ParamAttr(ParamKind.DIM, 2, IndexType(), axis=1),
            "#nvgpu_async.param<dim 2 axis 1 : index>",
        ),
        (
            nv.ParamAttr(
                ParamKind.GLOBAL,
                1,
                nv.GlobalTensorType((DYNAMIC_INDEX,) * 2, BFloat16Type()),
            ),
            "#nvgpu_async.param<global 1 : !nvgpu_async.global<?x?xbf16>>",
        ),
        (
            nv.ParamAttr(ParamKind.SCALAR, 3, Float32Type()),
            "#nvgpu_async.param<scalar 3 : f32>",
        ),
        (
            nv.LaunchAttr(384, 197632, 2),
            "#nvgpu_async.launch<threads = 384, smem = 197632, cluster = 2>",
        ),
    ],
)
def test_the_attributes_print_and_parse_back(attr, text: str) -> None:
    assert str(attr) == text
    assert reparsed(text) == attr


def test_a_launch_may_leave_out_a_cluster_of_one() -> None:
    assert reparsed("#nvgpu_async.launch<threads = 128, smem = 0>") == (
        nv.LaunchAttr(128, 0, 1)
    )


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: nv.LaunchAttr(200, 0),
            "nvgpu_async.launch: 200 threads are not whole warpgroups of 128",
        ),
        (
            lambda: nv.LaunchAttr(128, 300000),
            "nvgpu_async.launch: 300000 bytes of shared memory; a block can have "
            "0 to 232448",
        ),
        (
            lambda: nv.LaunchAttr(128, 0, 3),
            "nvgpu_async.launch: a cluster has a power of two up to",
        ),
        (
            lambda: nv.ParamAttr(ParamKind.DIM, 0, IndexType()),
            "a dim parameter names its axis, no other kind does",
        ),
        (
            lambda: nv.ParamAttr(ParamKind.MAP, 0, IndexType(), axis=0),
            "a dim parameter names its axis, no other kind does",
        ),
        (
            lambda: nv.ParamAttr(ParamKind.MAP, 0, Float32Type()),
            "a map parameter has type nvgpu_async.tensor_map, not f32",
        ),
    ],
)
def test_the_attributes_check_themselves(make, message: str) -> None:
    with pytest.raises(VerifyException, match=message):
        make()


def test_an_unknown_parameter_kind_is_a_located_parse_error() -> None:
    with pytest.raises(ParseError, match="a parameter kind is one of scalar, map"):
        reparsed("#nvgpu_async.param<tmap 0 : index>")


def test_the_contract_of_a_lowered_gemm() -> None:
    _, kernel = lowered()
    contract = launch_contract(kernel)
    assert contract.name == "gemm_nt"
    assert [p.name for p in contract.params] == ["a", "b", "c"]
    assert [(p.kind, p.arg, p.axis) for p in contract.abi] == [
        (ParamKind.MAP, 0, None),
        (ParamKind.DIM, 0, 1),
        (ParamKind.MAP, 1, None),
        (ParamKind.MAP, 2, None),
        (ParamKind.DIM, 2, 0),
        (ParamKind.DIM, 2, 1),
    ]
    assert [p.type for p in contract.abi] == list(kernel.function_type.inputs)
    assert contract.tensor_maps == {0, 1, 2}
    assert contract.launch == kernel_launch(kernel) == Launch(384, 214064, 1)
    assert contract.split is None
    # the tuned gemm walks a persistent grid over C's 128x256 tiles
    assert contract.grid is None
    assert contract.persistent == (Rule(0, 2, 0, 128), Rule(1, 2, 1, 256))


def test_the_contract_round_trips_through_json() -> None:
    module, kernel = lowered(
        "split-k{splits=4},tawa-hopper-pipeline", "gemm_nt_split_k"
    )
    for k in (kernel, find_kernel(module, "gemm_nt_split_k_reduce")):
        contract = launch_contract(k)
        again = type(contract).from_json(json.loads(json.dumps(contract.to_json())))
        assert again == contract
    assert contract.split is not None and contract.split.role == "reduce"


def test_a_kernel_not_lowered_is_refused_by_name() -> None:
    kernel = find_kernel(example_module("gemm.mlir", "gemm_nt"), "gemm_nt")
    message = (
        "@gemm_nt is not lowered to nvgpu_async; run convert-aref-to-nvgpu-async "
        r"\(or tawa-hopper-pipeline\) first"
    )
    with pytest.raises(NotLoweredError, match=message):
        launch_contract(kernel)
    with pytest.raises(KernelArgumentError, match=message):  # what callers catch
        kernel_launch(kernel)


@pytest.mark.parametrize(
    ("abi", "message"),
    [
        (
            ArrayAttr([StringAttr("map:0")]),
            r'nvgpu_async.abi lists one #nvgpu_async.param per parameter, got \["map:0"\]',
        ),
        (ArrayAttr([]), "nvgpu_async.abi lists 0 parameters, the kernel has 6"),
    ],
)
def test_a_malformed_abi_is_reported_at_the_kernel(abi, message: str) -> None:
    _, kernel = lowered()
    kernel.attributes[nv.ABI_ATTR] = abi
    with pytest.raises(OpDiagnostic, match=message):
        launch_contract(kernel)


def test_an_abi_that_contradicts_the_parameters_is_reported() -> None:
    _, kernel = lowered()
    abi = kernel.attributes[nv.ABI_ATTR]
    assert isinstance(abi, ArrayAttr)
    swapped = [abi.data[1], abi.data[0], *abi.data[2:]]
    kernel.attributes[nv.ABI_ATTR] = ArrayAttr(swapped)
    with pytest.raises(
        OpDiagnostic, match=r"nvgpu_async\.abi gives the parameter types"
    ):
        launch_contract(kernel)


def test_an_abi_entry_of_an_argument_callers_do_not_pass_is_reported() -> None:
    _, kernel = lowered()
    abi = kernel.attributes[nv.ABI_ATTR]
    assert isinstance(abi, ArrayAttr)
    stray = nv.ParamAttr(ParamKind.DIM, 3, IndexType(), axis=0)
    kernel.attributes[nv.ABI_ATTR] = ArrayAttr([*abi.data[:-1], stray])
    with pytest.raises(OpDiagnostic, match="passes argument 3; callers pass 3"):
        launch_contract(kernel)


def test_the_compiled_kernel_record_holds_no_ir_and_round_trips() -> None:
    module, _ = lowered()
    record = from_lowered(module, "gemm_nt", {"num_stages": 3})
    assert record.ptx.startswith(".version 8.0")
    assert record.contract == launch_contract(find_kernel(module, "gemm_nt"))
    text = json.dumps(record.to_json())
    assert "func.func" not in text
    again = CompiledKernel.from_json(json.loads(text))
    assert again == record and again.options["num_stages"] == 3
    assert isinstance(again.contract.abi[0], AbiParam)


def test_from_lowered_refuses_a_tile_kernel() -> None:
    with pytest.raises(NotLoweredError, match="@gemm_nt is not lowered"):
        from_lowered(example_module("gemm.mlir", "gemm_nt"), "gemm_nt")
