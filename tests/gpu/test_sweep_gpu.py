"""What the outside-user sweep added, run on the H100 against float64
references: row vectors (a row reduction of a loaded tile, a GEMM's row maxima
in bf16), column vectors (a vector kernel, a 1 x N row of a matrix), a copy
kernel, and the math ops lowered to `.approx` and conversion instructions
(sin and cos of arguments up to a few hundred, reduced into [-pi, pi] first,
trunc, roundeven, log10, copysign, fma). Extents are not multiples of the
tiles."""

from __future__ import annotations

from pathlib import Path

import pytest

import tawa_xdsl

from ..test_elementwise_ops import kernel as elementwise_kernel
from .conftest import rel_err

KERNELS = Path(__file__).resolve().parents[1] / "kernels"


def test_row_sums_of_a_loaded_tile(torch) -> None:
    x = torch.randn(1000, 64, device="cuda")
    o = torch.full((1000,), float("nan"), device="cuda")
    tawa_xdsl.compile(KERNELS / "row_vectors.mlir", "row_sums")(x, o)
    torch.cuda.synchronize()
    assert rel_err(o, x.double().sum(-1)) < 1e-5


def test_row_sums_kept_as_a_column(torch) -> None:
    """An M x 1 output (4 bytes a row: no TMA box) stored from registers."""
    x = torch.randn(1000, 64, device="cuda")
    o = torch.full((1000, 1), float("nan"), device="cuda")
    tawa_xdsl.compile(KERNELS / "row_vectors.mlir", "row_sums_column")(x, o)
    torch.cuda.synchronize()
    assert rel_err(o, x.double().sum(-1, keepdim=True)) < 1e-5


def test_gemm_row_maxima_in_bf16(torch) -> None:
    a = torch.randn(1000, 328, device="cuda").to(torch.bfloat16)
    b = torch.randn(128, 328, device="cuda").to(torch.bfloat16)
    o = torch.full((1000,), float("nan"), device="cuda", dtype=torch.bfloat16)
    tawa_xdsl.compile(KERNELS / "row_vectors.mlir", "gemm_row_max")(a, b, o)
    torch.cuda.synchronize()
    ref = (a.double() @ b.double().t()).max(-1).values
    assert rel_err(o, ref) < 1e-2


def test_vector_and_row_kernels(torch) -> None:
    x = torch.randn(1000, device="cuda").to(torch.bfloat16)
    o = torch.full_like(x, float("nan"))
    tawa_xdsl.compile(KERNELS / "row_vectors.mlir", "vector_exp")(x, o)
    v = torch.randn(100, device="cuda")
    rows = torch.full((3, 100), float("nan"), device="cuda")
    tawa_xdsl.compile(KERNELS / "row_vectors.mlir", "row_of_matrix")(v, rows)
    torch.cuda.synchronize()
    assert rel_err(o, x.double().exp()) < 1e-2
    assert rel_err(rows, v.double().exp().expand(3, 100)) < 1e-5


def test_copies(torch) -> None:
    x = torch.randn(1000, 128, device="cuda").to(torch.bfloat16)
    o = torch.full_like(x, float("nan"))
    tawa_xdsl.compile(KERNELS / "copies.mlir", "copy")(x, o)
    v = torch.randn(1000, device="cuda")
    w = torch.full_like(v, float("nan"))
    tawa_xdsl.compile(KERNELS / "copies.mlir", "vector_copy")(v, w)
    torch.cuda.synchronize()
    assert torch.equal(o, x) and torch.equal(w, v)


MATH = {  # op: (arity, reference, largest absolute error)
    "math.sin": (1, lambda t, x: x.sin(), 1e-5),
    "math.cos": (1, lambda t, x: x.cos(), 1e-5),
    "math.trunc": (1, lambda t, x: x.trunc(), 0.0),
    "math.roundeven": (1, lambda t, x: x.round(), 0.0),  # torch rounds half to even
    "math.log10": (1, lambda t, x: x.abs().log10(), 1e-5),
    "math.copysign": (2, lambda t, x, y: t.copysign(x, y), 0.0),
    "math.fma": (3, lambda t, a, b, c: a * b + c, 1e-6),  # relative
}


@pytest.mark.parametrize("op", sorted(MATH))
def test_math_op(torch, op) -> None:
    arity, reference, error = MATH[op]
    inputs = [
        (torch.randn(1000, 200, device="cuda") * 20).round(decimals=1) * 2.5
        for _ in range(arity)
    ]
    o = torch.full((1000, 200), float("nan"), device="cuda")
    source = elementwise_kernel(op, arity)
    tawa_xdsl.compile(source, "k")(*inputs, o)
    torch.cuda.synchronize()
    ref = reference(torch, *(x.double() for x in inputs))
    got, finite = o.double(), ref.isfinite()  # log10 of 0 is -inf on both
    assert torch.equal(got[~finite], ref[~finite])
    scale = ref[finite].abs().max().item() if op == "math.fma" else 1.0
    assert (got - ref)[finite].abs().max().item() <= error * scale
