"""DLPack without a GPU: the capsule parser on numpy's own capsules and on a
producer written here with ctypes (bf16, fp8, NULL strides, byte offsets, legacy
and versioned capsules, CUDA devices), the borrow's lifetime (the producer's
deleter runs exactly once, after our last view is gone), and how the runtime
sees device, host and `__cuda_array_interface__` arrays before any GPU call."""

from __future__ import annotations

import ctypes
import gc
import itertools
import re
from typing import Any

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl.compiled import from_lowered
from tawa_xdsl.dlpack import ArrayError, export, host_view, read_capsule
from tawa_xdsl.dtypes import DTYPES, bfloat16, float8_e4m3fn, float8_e5m2
from tawa_xdsl.kernel import KernelArgumentError, check_arguments
from tawa_xdsl.runtime.arrays import copy_on_launch, device_array, row_strides
from tawa_xdsl.runtime.kernel import Kernel

from .conftest import EXAMPLES

# ------------------------------------------------- a DLPack producer in ctypes
# The C layout is written out again here (not imported from tawa_xdsl.dlpack),
# so a mistake in the parser's structs cannot hide behind the same mistake.


class Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DataType(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
    ]


class Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", Device),
        ("ndim", ctypes.c_int32),
        ("dtype", DataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class Managed(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", Tensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


class Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class ManagedVersioned(ctypes.Structure):
    _fields_ = [
        ("version", Version),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", Tensor),
    ]


_api = ctypes.PyDLL(ctypes.pythonapi._name)
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [
    ctypes.c_void_p,
    ctypes.c_char_p,
]  # raw: no refcounts
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

VERSIONED, LEGACY = b"dltensor_versioned", b"dltensor"
DELETED: list[int] = []
"""Serial numbers of the exports whose deleter ran (as a producer frees them)."""
EXPORTS: dict[int, Any] = {}
"""The producer's side of each live export, by serial number (its manager_ctx)."""


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule: int) -> None:
    """What producers do: an unconsumed capsule calls its tensor's deleter."""
    for name, struct in ((VERSIONED, ManagedVersioned), (LEGACY, Managed)):
        if _api.PyCapsule_IsValid(capsule, name):
            managed = struct.from_address(_api.PyCapsule_GetPointer(capsule, name))
            DELETED.append(managed.manager_ctx)
            EXPORTS.pop(managed.manager_ctx)


def released(serial: int) -> int:
    """How many times export `serial` was released, after collecting garbage."""
    gc.collect()
    return DELETED.count(serial)


class Producer:
    """Exports `memory` (a numpy buffer, or a bare address for a device) as any
    DLPack dtype, device, layout and version."""

    def __init__(
        self,
        memory: np.ndarray | int,
        shape: tuple[int, ...],
        code: int,
        bits: int,
        *,
        strides: tuple[int, ...] | None = None,
        device: tuple[int, int] = (1, 0),
        byte_offset: int = 0,
        lanes: int = 1,
        major: int = 1,
        flags: int = 0,
        legacy_only: bool = False,
    ) -> None:
        self.memory = memory
        self.shape, self.strides, self.device = shape, strides, device
        self.dtype = DataType(code, bits, lanes)
        self.byte_offset, self.major, self.flags = byte_offset, major, flags
        self.legacy_only = legacy_only

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device

    def __dlpack__(self, stream: int | None = None, max_version=None) -> Any:
        if self.legacy_only and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword 'max_version'")
        self.stream = stream
        versioned = max_version is not None and max_version[0] >= 1
        managed = ManagedVersioned() if versioned else Managed()
        shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
        strides = (
            (ctypes.c_int64 * len(self.strides))(*self.strides)
            if self.strides is not None
            else None
        )
        memory = self.memory
        data = memory if isinstance(memory, int) else memory.ctypes.data
        managed.dl_tensor = Tensor(
            data,
            Device(*self.device),
            len(self.shape),
            self.dtype,
            shape,
            strides,
            self.byte_offset,
        )
        if versioned:
            managed.version = Version(self.major, 0)
            managed.flags = self.flags
        self.serial = managed.manager_ctx = len(DELETED) + len(EXPORTS) + 1
        EXPORTS[self.serial] = (managed, shape, strides, memory)
        return _api.PyCapsule_New(
            ctypes.addressof(managed),
            VERSIONED if versioned else LEGACY,
            ctypes.cast(_capsule_destructor, ctypes.c_void_p),
        )


def bf16_producer(array: np.ndarray, **kw: Any) -> Producer:
    return Producer(array, array.shape, 4, 16, strides=None, **kw)


# -------------------------------------------------------------------- parsing


@pytest.mark.parametrize("versioned", [True, False])
def test_numpy_capsules(versioned: bool) -> None:
    base = np.arange(60, dtype=np.int16).reshape(5, 12)
    view = base[1:, ::3]
    capsule = view.__dlpack__(max_version=(1, 0) if versioned else None)
    got = read_capsule(capsule)
    assert (got.dtype, got.shape, got.strides) == ("i16", (4, 4), (12, 3))
    assert got.ptr == view.ctypes.data and got.device == (1, 0)
    assert not got.read_only
    np.testing.assert_array_equal(host_view(got), view)
    frozen = np.zeros(3, dtype=np.float32)
    frozen.flags.writeable = False
    if versioned:  # only the versioned ABI carries the read-only flag
        assert read_capsule(frozen.__dlpack__(max_version=(1, 0))).read_only


@pytest.mark.parametrize(
    "code, bits, dtype",
    [
        (4, 16, bfloat16),
        (10, 8, float8_e4m3fn),
        (12, 8, float8_e5m2),
        (2, 16, np.float16),
        (6, 8, np.bool_),
    ],
    ids=["bf16", "f8E4M3FN", "f8E5M2", "f16", "bool"],
)
def test_dtypes_numpy_cannot_export(code: int, bits: int, dtype) -> None:
    memory = (np.arange(12) % 5).astype(dtype)
    got = host_view(export(Producer(memory, (3, 4), code, bits)))
    assert got.dtype == np.dtype(dtype) and got.shape == (3, 4)
    np.testing.assert_array_equal(got, memory.reshape(3, 4))


def test_null_strides_and_byte_offset() -> None:
    memory = np.arange(10, dtype=np.float32)
    got = export(Producer(memory, (2, 3), 2, 32, byte_offset=8, legacy_only=True))
    assert got.strides == (3, 1) and got.ptr == memory.ctypes.data + 8
    np.testing.assert_array_equal(host_view(got), memory[2:8].reshape(2, 3))


def test_views_write_through_and_keep_the_producer_alive() -> None:
    memory = np.zeros(6, dtype=bfloat16)
    producer = Producer(memory, (2, 3), 4, 16, strides=(3, 1))
    view = host_view(export(producer))
    view[1, 2] = 7
    assert memory[5] == 7
    assert released(producer.serial) == 0  # the capsule lives as long as the view
    del view
    assert released(producer.serial) == 1  # once, by the producer's destructor


@pytest.mark.parametrize(
    "producer, message",
    [
        (Producer(0, (2,), 5, 64), "DLPack dtype code 5 with 64 bits x 1 lanes"),
        (Producer(0, (2,), 2, 32, lanes=4), "2 with 32 bits x 4 lanes"),
        (Producer(0, (2,), 17, 4), "code 17 with 4 bits"),
        (
            Producer(0, (2,), 2, 32, major=2),
            "is a DLPack 2.0 tensor; tawa-xdsl reads DLPack 1.x",
        ),
    ],
    ids=["complex", "vector", "fp4", "version"],
)
def test_unreadable_tensors_are_refused_and_released(producer, message) -> None:
    with pytest.raises(ArrayError, match=re.escape(message)):
        export(producer)
    assert released(producer.serial) == 1  # refused, and still handed back


def test_what_is_not_a_dlpack_capsule() -> None:
    class Odd:
        def __dlpack__(self, stream=None, max_version=None):
            return "capsule"

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(ArrayError, match="returned str, not a DLPack capsule"):
        export(Odd())
    used = np.zeros(2).__dlpack__()
    _api.PyCapsule_SetName(used, b"used_dltensor")
    with pytest.raises(ArrayError, match="capsule named b'used_dltensor'"):
        read_capsule(used)
    _api.PyCapsule_SetName(used, LEGACY)  # numpy frees it as unused

    class Refusing(Odd):
        def __dlpack__(self, stream=None, max_version=None):
            raise BufferError("cannot export a tensor that requires grad")

    with pytest.raises(ArrayError, match="BufferError: cannot export a tensor"):
        export(Refusing())


def test_every_dlpack_dtype_has_a_numpy_dtype() -> None:
    from tawa_xdsl.dlpack import DTYPE_CODES

    for (_, bits), name in DTYPE_CODES.items():
        assert DTYPES[name].itemsize * 8 == bits


# ------------------------------------------------------ the interpreter's view


def test_interpret_runs_bf16_dlpack_arrays_in_place() -> None:
    """bf16 reaches the CPU executors through DLPack (numpy cannot export it)."""
    module = tawa_xdsl.parse(EXAMPLES / "gemm.mlir")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((128, 64)).astype(bfloat16)
    b = rng.standard_normal((128, 64)).astype(bfloat16)
    c = np.full((128, 128), np.nan, dtype=bfloat16)
    args = [bf16_producer(x) for x in (a, b, c)]
    tawa_xdsl.interpret(module, "gemm_nt", *args, grid=(1, 1))
    expected = np.full_like(c, np.nan)
    tawa_xdsl.interpret(module, "gemm_nt", a, b, expected, grid=(1, 1))
    np.testing.assert_array_equal(c, expected)
    assert all(released(p.serial) == 1 for p in args)  # borrowed, handed back


def test_read_only_dlpack_outputs_are_refused() -> None:
    module = tawa_xdsl.parse(EXAMPLES / "gemm.mlir")
    a, b, c = (np.zeros(s, dtype=bfloat16) for s in [(128, 64), (128, 64), (128, 128)])
    with pytest.raises(KernelArgumentError, match="argument 'c' is read-only"):
        tawa_xdsl.interpret(
            module, "gemm_nt", a, b, bf16_producer(c, flags=1), grid=(1, 1)
        )


# ------------------------------------------------------------ the GPU's view


def test_device_arrays_are_passed_by_pointer() -> None:
    producer = Producer(0x10000, (256, 128), 4, 16, strides=(136, 1), device=(2, 0))
    array, view = device_array(producer, stream=0)
    assert array.ptr == 0x10000 and array.host is None
    assert (view.dtype, view.shape, view.strides) == ("bf16", (256, 128), (136, 1))
    assert producer.stream == 1  # DLPack's number for the legacy default stream
    assert array.keep.capsule is not None  # held through the launch
    device_array(producer, stream=7)
    assert producer.stream == 7
    with pytest.raises(ArrayError, match="is on CUDA device 1"):
        device_array(Producer(0x10000, (2,), 4, 16, device=(2, 1)), stream=0)
    with pytest.raises(ArrayError, match="DLPack device type 4"):
        device_array(Producer(0x10000, (2,), 4, 16, device=(4, 0)), stream=0)


def test_host_arrays_are_staged_through_views_of_the_callers_memory() -> None:
    """A non-contiguous output is written back through the caller's own strides,
    and a CPU DLPack array through the producer's memory."""
    full = np.zeros((300, 400), dtype=bfloat16)
    out = full[:, ::2]
    array, view = device_array(out, stream=0)
    assert array.host is out and array.ptr == 0  # nothing allocated yet
    assert view.shape == (300, 200) and view.strides == (208, 1)  # the temporary
    memory = np.zeros((4, 8), dtype=bfloat16)
    array, _ = device_array(bf16_producer(memory), stream=0)
    assert np.shares_memory(array.host, memory)


def test_host_temporaries_pad_rows_to_what_tma_describes() -> None:
    """A host array whose rows are not a multiple of 32 bytes (K = 330 bf16:
    660 bytes; 200 bf16: 400 bytes, legal TMA but slow, NOTES 3.58) is staged
    with rows padded onto the 32-byte grid, so TMA describes the temporary and
    reads it at full speed; the padding is never read back into the caller's
    array."""
    assert row_strides((7, 330), 2) == (336, 1)
    assert row_strides((7, 200), 2) == (208, 1)
    assert row_strides((7, 256), 2) == (256, 1)
    assert row_strides((2, 5, 33), 4) == (200, 40, 1)
    assert row_strides((3, 17), 1) == (32, 1)
    assert row_strides((9,), 2) == (1,)
    host = np.arange(7 * 330, dtype=np.float32).reshape(7, 330).astype(bfloat16)
    array, view = device_array(host, stream=0)
    assert view.strides == (336, 1)
    padded, inside = array._padded()
    inside[...] = host
    assert padded.size == 6 * 336 + 330 and (padded.reshape(-1)[330:336] == 0).all()
    assert np.array_equal(inside, host)


class CudaArrayInterface:
    def __init__(self, **cai: Any) -> None:
        self.__cuda_array_interface__ = {"version": 3, "strides": None} | cai


def test_cuda_array_interface_is_the_fallback() -> None:
    array, view = device_array(
        CudaArrayInterface(
            shape=(64, 32), typestr="<f2", data=(0x20000, False), strides=(128, 2)
        ),
        stream=0,
    )
    assert array.ptr == 0x20000 and view == view.__class__(
        "f16", (64, 32), (64, 1), True
    )
    with pytest.raises(ArrayError, match="pass it through DLPack for bf16"):
        device_array(CudaArrayInterface(shape=(2,), typestr="<V2", data=(16, False)), 0)
    with pytest.raises(ArrayError, match="masked"):
        device_array(
            CudaArrayInterface(shape=(2,), typestr="<f4", data=(16, False), mask=1), 0
        )


@pytest.fixture(scope="module")
def compiled():
    lowered = tawa_xdsl.apply(
        tawa_xdsl.parse(EXAMPLES / "gemm.mlir"), "tawa-hopper-pipeline{num-consumers=1}"
    )
    return Kernel(from_lowered(lowered, "gemm_nt"))


KERNELS = EXAMPLES.parent / "tests" / "kernels"

ADDRESSES = itertools.count(0x1000_0000, 0x100_0000)
"""Made-up device addresses 16 MiB apart: arrays that share no memory."""


def gpu(shape: tuple[int, ...], address: int | None = None, **kw: Any) -> Producer:
    """A bf16 CUDA array at a made-up address (never dereferenced), apart from
    every other one's unless `address` is given."""
    at = next(ADDRESSES) if address is None else address
    return Producer(at, shape, 4, 16, device=(2, 0), **kw)


@pytest.mark.parametrize(
    "args, message",
    [
        (
            [gpu((256, 128)), gpu((256, 64)), gpu((256, 256))],
            "gemm_nt: argument 'b' dimension 1 (K) has extent 64 but argument 'a' "
            "dimension 1 (K) has extent 128",
        ),
        (
            [gpu((256, 128), 0x100008), gpu((256, 128)), gpu((256, 256))],
            "argument 'a' starts at an address that is not 16-byte aligned",
        ),
        (
            [gpu((256, 128), strides=(1, 256)), gpu((256, 128)), gpu((256, 256))],
            "argument 'a' must be contiguous in its last dimension",
        ),
        (
            [gpu((256, 130)), gpu((256, 130)), gpu((256, 256))],
            "argument 'a' has a stride of 260 bytes in dimension 0",
        ),
        (
            [gpu((256, 128), strides=(-128, 1)), gpu((256, 128)), gpu((256, 256))],
            "argument 'a' has a stride of -128 in dimension 0",
        ),
        (
            [gpu((256, 128)), gpu((256, 128)), gpu((256, 256), flags=1)],
            "argument 'c' is read-only, but the kernel stores into it",
        ),
    ],
    ids=[
        "k-mismatch",
        "unaligned",
        "transposed",
        "odd-rows",
        "negative",
        "read-only",
    ],
)
def test_device_arguments_are_checked_before_the_gpu(compiled, args, message) -> None:
    """The compiled kernel's checks, shared and TMA's, run on any machine."""
    with pytest.raises(KernelArgumentError, match=re.escape(message)):
        compiled(*args, grid=(2, 2))


# ------------------------------------------------------------- aliased arrays


@pytest.mark.parametrize(
    ("a", "b", "c", "other"),
    [
        # C written into A's memory (A's rows are the first half of C's)
        ((256, 128), (256, 128), (256, 256), "a"),
        # C's last byte is the first of B
        ((256, 128), (256, 128), (256, 256), "b"),
    ],
    ids=["c-over-a", "c-touches-b"],
)
def test_device_inputs_sharing_an_outputs_memory_are_copied(
    compiled, a, b, c, other
) -> None:
    """The shared checks mark an input that shares an output's memory to be
    read from a copy (the dispatcher makes it before each launch:
    tests/test_dispatch.py); a Kernel, which launches the arrays it is given,
    refuses it."""
    base = next(ADDRESSES)
    if other == "a":
        arrays = [gpu(a, base, strides=(256, 1)), gpu(b), gpu(c, base)]
    else:
        last = base + (256 * 256 - 1) * 2  # the address of C's last element
        arrays = [gpu(a), gpu(b, last), gpu(c, base)]
    values = check_arguments(
        "gemm_nt",
        compiled.params,
        arrays,
        lambda v: device_array(v, 0),
        copy_on_launch,
    )
    assert [v.overlaps for v in values] == [
        "c" if name == other else None for name in "abc"
    ]
    with pytest.raises(
        KernelArgumentError,
        match=re.escape(
            f"gemm_nt: argument '{other}' shares memory with argument 'c', which "
            "the kernel writes; the kernel compile() returns reads it from a copy"
        ),
    ):
        compiled(*arrays, grid=(2, 2))


def test_arrays_only_read_may_share_memory(compiled) -> None:
    """A @ A^T: a and b are one array; only c is written."""
    a = gpu((256, 128))
    values = check_arguments(
        "gemm_nt",
        compiled.params,
        [a, a, gpu((256, 256))],
        lambda v: device_array(v, 0),
        copy_on_launch,
    )
    assert values[0].ptr == values[1].ptr
    assert [v.overlaps for v in values] == [None] * 3
    adjacent = next(ADDRESSES)  # C right after A's last byte: no overlap
    values = check_arguments(
        "gemm_nt",
        compiled.params,
        [gpu((256, 128), adjacent), a, gpu((256, 256), adjacent + 256 * 128 * 2)],
        lambda v: device_array(v, 0),
        copy_on_launch,
    )
    assert [v.overlaps for v in values] == [None] * 3


def test_host_inputs_sharing_an_outputs_memory_are_read_from_a_copy(
    compiled,
) -> None:
    """The interpreter wrote C into A while later programs read A: it copies
    A first. A launch stages host arrays into device temporaries, which are
    that copy (checked up to the launch: no GPU here)."""
    module = tawa_xdsl.parse(EXAMPLES / "gemm.mlir")
    rng = np.random.default_rng(1)
    memory = rng.standard_normal((128, 128)).astype(bfloat16)
    a, b = memory[:, :64], rng.standard_normal((128, 64)).astype(bfloat16)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    tawa_xdsl.interpret(module, "gemm_nt", a, b, memory, grid=(1, 1))
    np.testing.assert_allclose(
        memory.astype(np.float64), a64 @ b64.T, rtol=2e-2, atol=2e-2
    )
    tensors, _, _ = compiled._checked((a, b, memory), (1, 1), 0)
    assert [t.overlaps for _, t in tensors] == ["c", None, None]
    assert all(t.host is not None for _, t in tensors)


def test_the_interpreter_adds_a_residual_in_place() -> None:
    """D = A @ B^T + D (cuBLAS's beta = 1 in place): R is D's memory."""
    module = tawa_xdsl.parse(KERNELS / "gemm_residual.mlir")
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((256, 64)).astype(bfloat16) for _ in range(2))
    d = rng.standard_normal((256, 256)).astype(bfloat16)
    want = a.astype(np.float64) @ b.astype(np.float64).T + d.astype(np.float64)
    tawa_xdsl.interpret(module, "gemm_residual", a, b, d, d, grid=(2, 2))
    np.testing.assert_allclose(d.astype(np.float64), want, rtol=2e-2, atol=5e-2)


def test_two_outputs_sharing_memory_are_refused() -> None:
    """No copy tells which of two stores into one byte should land."""
    module = tawa_xdsl.parse(KERNELS / "gemm_sweep.mlir")
    memory = np.zeros(64 * 128 * 2, np.uint8)
    c = memory.view(bfloat16).reshape(64, 128)
    rs = memory[: 64 * 4].view(np.float32)
    a, b = np.zeros((64, 64), bfloat16), np.zeros((128, 64), bfloat16)
    with pytest.raises(
        KernelArgumentError,
        match=re.escape(
            "gemm_two_outputs: arguments 'c' and 'rs', which the kernel both "
            "writes, overlap in memory"
        ),
    ):
        tawa_xdsl.interpret(module, "gemm_two_outputs", a, b, c, rs, grid=(1,))


def test_the_interpreter_computes_a_times_a_transposed_in_place() -> None:
    module = tawa_xdsl.parse(EXAMPLES / "gemm.mlir")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 64)).astype(bfloat16)
    c = np.zeros((128, 128), dtype=bfloat16)
    tawa_xdsl.interpret(module, "gemm_nt", a, a, c, grid=(1, 1))
    a64 = a.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), a64 @ a64.T, rtol=2e-2, atol=2e-2)
