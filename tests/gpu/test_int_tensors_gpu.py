"""i32 tensors on the GPU (tests/kernels/int_tensors.mlir): INT32 tensor maps,
i32 tiles read from shared memory, integer reductions and i32 stores, against
numpy's answers (tests/test_int_tensors.py checks the same kernels on the CPU):
host arrays of odd extents (rows of 280 and 600 bytes: copied into padded
temporaries), views of larger device tensors (one aligned, described by TMA in
place; others off the 16-byte grid, read and written through aligned copies),
a cross-entropy over a 32000-class vocabulary against torch's, and an argument
of the wrong dtype refused by name; i8 and i64 tensors (UINT8 and INT64 maps,
byte loads and stores, byte pairs stored as one u16) from torch: int8 labels
and int64 indices, matrices of rows off the 16-byte grid, an i8 output of odd
width, an int32 tensor for int8 labels refused."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.kernel import KernelArgumentError

from ..test_int_tensors import (
    FILE,
    RUNS,
    _accuracy,
    _accuracy_args,
    _affine,
    _argmax_count,
    _mix,
    _poisoned,
)


def _check(got: list, expected: list) -> None:
    for g, e in zip(got, expected, strict=True):
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("kernel", sorted(RUNS))
def test_host_arrays_of_odd_extents(torch, kernel: str) -> None:
    run = RUNS[kernel]
    args = run.arrays(seed=7)
    done = _poisoned(run, args)
    tawa_xdsl.compile(FILE, kernel)(*done)
    _check([done[o] for o in run.outputs], run.reference(*args))


def _cuda(torch, array: np.ndarray):
    return torch.from_numpy(array).cuda()


def test_views_of_larger_device_tensors(torch) -> None:
    """@affine_i32 on an aligned view (its columns 4..73 of 80: base 16 bytes in,
    rows 320 bytes apart) and on one a column off the grid, writing into a view
    (columns 0..69 of 72: 280-byte rows, which a TMA store would overrun)."""
    rng = np.random.default_rng(3)
    big = rng.integers(-(2**31), 2**31 - 1, (100, 80), endpoint=True).astype(np.int32)
    compiled = tawa_xdsl.compile(FILE, "affine_i32")
    for start in (4, 1):
        x = _cuda(torch, big)[:, start : start + 70]
        y_big = torch.full((100, 72), -12345, dtype=torch.int32, device="cuda")
        compiled(x, -7, y_big[:, :70])
        torch.cuda.synchronize()
        y = y_big.cpu().numpy()
        np.testing.assert_array_equal(
            y[:, :70], _affine(big[:, start : start + 70], -7)
        )
        assert (y[:, 70:] == -12345).all()  # nothing past the view is written


def test_argmax_of_a_view_into_device_vectors(torch) -> None:
    """@argmax_count_i32 reading rows 5..204 of a larger matrix and writing into
    vectors that start 3 elements into theirs (12 bytes: off the grid)."""
    rng = np.random.default_rng(4)
    big = rng.integers(-1000, 1000, (210, 1000), endpoint=True).astype(np.int32)
    x = _cuda(torch, big)[5:205]
    outs = [
        torch.full((203,), -12345, dtype=torch.int32, device="cuda") for _ in range(3)
    ]
    tawa_xdsl.compile(FILE, "argmax_count_i32")(x, 500, *(o[3:] for o in outs))
    torch.cuda.synchronize()
    got = [o.cpu().numpy() for o in outs]
    _check([g[3:] for g in got], _argmax_count(big[5:205], 500))
    assert all((g[:3] == -12345).all() for g in got)


def test_cross_entropy_against_torch(torch) -> None:
    """1000 rows over 32000 classes, every ninth row ignored (target -100)."""
    gen = torch.Generator(device="cuda").manual_seed(9)
    x = torch.randn(1000, 32000, device="cuda", generator=gen)
    t = torch.randint(
        0, 32000, (1000,), device="cuda", generator=gen, dtype=torch.int32
    )
    t[::9] = -100
    loss = torch.full((1000,), float("nan"), device="cuda")
    tawa_xdsl.compile(FILE, "xent_i32")(x, t, loss)
    torch.cuda.synchronize()
    ref = torch.nn.functional.cross_entropy(
        x.double(), t.long(), reduction="none", ignore_index=-100
    )
    torch.testing.assert_close(loss.double(), ref, rtol=1e-5, atol=1e-4)


def test_a_float_tensor_for_i32_targets_is_refused(torch) -> None:
    x = torch.randn(100, 150, device="cuda")
    t = torch.zeros(100, device="cuda")  # float32 class indices
    loss = torch.empty(100, device="cuda")
    message = "xent_i32: argument 't' has dtype f32, the kernel expects i32"
    with pytest.raises(KernelArgumentError, match=re.escape(message)):
        tawa_xdsl.compile(FILE, "xent_i32")(x, t, loss)


def test_int8_labels_and_int64_indices_from_torch(torch) -> None:
    """@accuracy_i8 on torch tensors: int8 labels from a view 3 bytes into its
    tensor (off the 16-byte grid: read through an aligned copy), the int64
    argmax and the int32 hits written in place."""
    x, label, _, _ = _accuracy_args(np.random.default_rng(5), 300, 120)
    padded = np.concatenate([np.full(3, 7, np.int8), label])
    labels = _cuda(torch, padded)[3:]
    idx = torch.full((300,), -1, dtype=torch.int64, device="cuda")
    hit = torch.full((300,), -1, dtype=torch.int32, device="cuda")
    tawa_xdsl.compile(FILE, "accuracy_i8")(_cuda(torch, x), labels, idx, hit)
    torch.cuda.synchronize()
    _check([idx.cpu().numpy(), hit.cpu().numpy()], _accuracy(x, label))


def test_i8_and_i64_matrices_from_torch(torch) -> None:
    """@mix_i8_i64 on int8 matrices of 70-byte rows (off the 16-byte grid: read
    and written through aligned copies) and int64 ones of 560-byte rows, the
    int64 output a view into a wider tensor (nothing past it written)."""
    rng = np.random.default_rng(6)
    x8 = rng.integers(-128, 127, (100, 70), endpoint=True).astype(np.int8)
    x64 = rng.integers(-(2**63), 2**63 - 1, (100, 70), endpoint=True)
    y8 = torch.zeros((100, 70), dtype=torch.int8, device="cuda")
    y64_big = torch.full((100, 72), -5, dtype=torch.int64, device="cuda")
    tawa_xdsl.compile(FILE, "mix_i8_i64")(
        _cuda(torch, x8), _cuda(torch, x64), 37, y8, y64_big[:, :70]
    )
    torch.cuda.synchronize()
    y64 = y64_big.cpu().numpy()
    _check([y8.cpu().numpy(), y64[:, :70]], _mix(x8, x64, 37))
    assert (y64[:, 70:] == -5).all()


def test_i8_pairs_stored_into_a_view_of_odd_width(torch) -> None:
    """@mix_i8_i64's i8 output, stored from registers two bytes at a time
    (`st.u16`), into a view of 69 of 80 columns (80-byte rows: used in
    place): the last column's byte goes alone, nothing past it is written."""
    rng = np.random.default_rng(8)
    x8 = rng.integers(-128, 127, (100, 69), endpoint=True).astype(np.int8)
    x64 = rng.integers(-(2**63), 2**63 - 1, (100, 69), endpoint=True)
    y8_big = torch.full((100, 80), -5, dtype=torch.int8, device="cuda")
    y64 = torch.zeros((100, 69), dtype=torch.int64, device="cuda")
    tawa_xdsl.compile(FILE, "mix_i8_i64")(
        _cuda(torch, x8), _cuda(torch, x64), 37, y8_big[:, :69], y64
    )
    torch.cuda.synchronize()
    y8 = y8_big.cpu().numpy()
    _check([y8[:, :69], y64.cpu().numpy()], _mix(x8, x64, 37))
    assert (y8[:, 69:] == -5).all()


def test_an_int32_tensor_for_int8_labels_is_refused(torch) -> None:
    x = torch.randn(100, 90, device="cuda")
    label = torch.zeros(100, dtype=torch.int32, device="cuda")
    idx = torch.empty(100, dtype=torch.int64, device="cuda")
    hit = torch.empty(100, dtype=torch.int32, device="cuda")
    message = "accuracy_i8: argument 'label' has dtype i32, the kernel expects i8"
    with pytest.raises(KernelArgumentError, match=re.escape(message)):
        tawa_xdsl.compile(FILE, "accuracy_i8")(x, label, idx, hit)
