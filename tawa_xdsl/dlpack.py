"""Arrays from any library through DLPack (`__dlpack__` / `__dlpack_device__`),
the protocol torch, cupy, JAX and numpy share; unlike `__cuda_array_interface__`
it carries bf16 and fp8.

We read the `DLManagedTensor` a producer puts in its PyCapsule (the versioned
"dltensor_versioned" of DLPack >= 1.0, or the legacy "dltensor") with ctypes and
*borrow* it: the capsule is not renamed "used_dltensor", so when it is garbage
collected the producer's capsule destructor calls the tensor's deleter, exactly
once. We hold the capsule for as long as we use its memory (`DLPackArray.capsule`,
and the base of every numpy view made from it), which keeps the producer's
buffer alive. Nothing here needs a GPU, so the parser is tested on numpy's own
capsules in CI.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import numpy as np

from tawa_xdsl.dtypes import DTYPES

CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
"""DLPack device types (DLDeviceType) we meet: host memory (plain or pinned) is
copied to the GPU; device and managed memory is passed by pointer."""
HOST_DEVICES = (CPU, CUDA_HOST)
GPU_DEVICES = (CUDA, CUDA_MANAGED)

DLPACK_MAJOR = 1
"""The versioned ABI we read; a capsule of another major version is refused."""
READ_ONLY = 1
"""DLPACK_FLAG_BITMASK_READ_ONLY in a versioned tensor's flags."""

DTYPE_CODES: dict[tuple[int, int], str] = {
    **{(0, bits): f"i{bits}" for bits in (8, 16, 32, 64)},  # kDLInt
    **{(1, bits): f"ui{bits}" for bits in (8, 16, 32, 64)},  # kDLUInt
    (2, 16): "f16",  # kDLFloat
    (2, 32): "f32",
    (2, 64): "f64",
    (4, 16): "bf16",  # kDLBfloat
    (6, 8): "i1",  # kDLBool
    (10, 8): "f8E4M3FN",  # kDLFloat8_e4m3fn
    (12, 8): "f8E5M2",  # kDLFloat8_e5m2
}
"""(DLDataTypeCode, bits) -> our dtype name (`dtypes.DTYPES`), for one lane."""


class ArrayError(ValueError):
    """A value cannot be read as an array (the message is a phrase about "it")."""


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
    ]


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _Device),
        ("ndim", ctypes.c_int32),
        ("dtype", _DataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _Managed(ctypes.Structure):
    """DLManagedTensor (legacy capsules named "dltensor")."""

    _fields_ = [
        ("dl_tensor", _Tensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _ManagedVersioned(ctypes.Structure):
    """DLManagedTensorVersioned (capsules named "dltensor_versioned")."""

    _fields_ = [
        ("version", _Version),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _Tensor),
    ]


# Our own handle on the C API, so the prototypes we set do not change
# `ctypes.pythonapi` for anyone else.
_python = ctypes.PyDLL(ctypes.pythonapi._name)
_python.PyCapsule_GetName.restype = ctypes.c_char_p
_python.PyCapsule_GetName.argtypes = [ctypes.py_object]
_python.PyCapsule_GetPointer.restype = ctypes.c_void_p
_python.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


@dataclass(frozen=True)
class DLPackArray:
    """A DLPack tensor as we use it: where its first element is, on which device,
    its dtype by name, shape and strides in elements. `capsule` keeps the
    producer's memory alive; keep this object as long as `ptr` is used."""

    ptr: int
    device: tuple[int, int]
    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    read_only: bool
    capsule: Any


def read_capsule(capsule: Any) -> DLPackArray:
    """The tensor in a DLPack capsule, borrowed (see the module docstring)."""
    try:
        name = _python.PyCapsule_GetName(capsule)
    except Exception:  # not a capsule: GetName raised a ValueError for it
        raise ArrayError(
            f"__dlpack__ returned {type(capsule).__name__}, not a DLPack capsule"
        ) from None
    if name == b"dltensor_versioned":
        managed = _ManagedVersioned.from_address(
            _python.PyCapsule_GetPointer(capsule, name)
        )
        if managed.version.major != DLPACK_MAJOR:
            raise ArrayError(
                f"is a DLPack {managed.version.major}.{managed.version.minor} tensor; "
                f"tawa-xdsl reads DLPack {DLPACK_MAJOR}.x"
            )
        read_only = bool(managed.flags & READ_ONLY)
        tensor = managed.dl_tensor
    elif name == b"dltensor":
        tensor = _Managed.from_address(
            _python.PyCapsule_GetPointer(capsule, name)
        ).dl_tensor
        read_only = False
    else:
        raise ArrayError(f"gave a capsule named {name!r}, not an unused DLPack tensor")
    dtype = DTYPE_CODES.get((tensor.dtype.code, tensor.dtype.bits))
    if dtype is None or tensor.dtype.lanes != 1:
        raise ArrayError(
            f"has DLPack dtype code {tensor.dtype.code} with {tensor.dtype.bits} "
            f"bits x {tensor.dtype.lanes} lanes, which no kernel takes"
        )
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    if tensor.strides:
        strides = tuple(tensor.strides[i] for i in range(tensor.ndim))
    else:  # NULL: compact row-major (allowed before DLPack 1.0)
        strides = tuple(
            int(np.prod(shape[i + 1 :], dtype=np.int64)) for i in range(len(shape))
        )
    return DLPackArray(
        (tensor.data or 0) + tensor.byte_offset,
        (tensor.device.device_type, tensor.device.device_id),
        dtype,
        shape,
        strides,
        read_only,
        capsule,
    )


def dlpack_device(value: Any) -> tuple[int, int] | None:
    """(device type, device id) of an object that speaks DLPack, else None."""
    if not (hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__")):
        return None
    device_type, device_id = value.__dlpack_device__()
    return int(device_type), int(device_id)


def export(value: Any, stream: int | None = None) -> DLPackArray:
    """`value.__dlpack__` read into a `DLPackArray`, asking for the versioned
    capsule first. `stream` is the CUDA stream the consumer will use, in DLPack's
    numbering (1: the legacy default stream), so the producer can order its
    pending work before ours; None for host memory."""
    try:
        try:
            capsule = value.__dlpack__(stream=stream, max_version=(DLPACK_MAJOR, 0))
        except TypeError:  # a producer older than DLPack 1.0: no max_version
            capsule = value.__dlpack__(stream=stream)
    except Exception as e:  # the producer's own refusal (a dtype, requires_grad)
        raise ArrayError(
            f"cannot be read through DLPack: {type(e).__name__}: {e}"
        ) from None
    return read_capsule(capsule)


class _Memory:
    """Presents a DLPack tensor's memory to numpy (`__array_interface__`) and,
    as the base of the arrays made from it, keeps the capsule alive."""

    def __init__(self, array: DLPackArray) -> None:
        itemsize = DTYPES[array.dtype].itemsize
        self.capsule = array.capsule
        self.__array_interface__ = {
            "version": 3,
            "shape": array.shape,
            "typestr": np.dtype(f"u{itemsize}").str,  # same size; viewed as dtype
            "strides": tuple(s * itemsize for s in array.strides),
            "data": (array.ptr, array.read_only),
        }


def host_view(array: DLPackArray) -> np.ndarray:
    """A numpy array over a host DLPack tensor's memory (writes go to the
    producer's array), of its dtype (bf16 and fp8 through ml_dtypes)."""
    dtype = DTYPES[array.dtype]
    if 0 in array.shape:  # no memory to share; the pointer may be NULL
        return np.empty(array.shape, dtype)
    return np.asarray(_Memory(array)).view(dtype)


def as_host_array(value: Any) -> np.ndarray | None:
    """`value` as a numpy array sharing its memory if it lives on the host: a
    numpy array itself, or a DLPack array on the CPU (torch CPU tensors, ...);
    None for anything else (GPU arrays, non-arrays)."""
    if isinstance(value, np.ndarray):
        return value
    device = dlpack_device(value)
    if device is None or device[0] not in HOST_DEVICES:
        return None
    return host_view(export(value))
