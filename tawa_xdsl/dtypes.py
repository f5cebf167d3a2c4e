"""MLIR element types <-> numpy dtypes (bf16 and fp8 through ml_dtypes), and the
names arrays' dtypes go by in messages and argument checks (MLIR's spelling)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
)
from xdsl.ir import Attribute

bfloat16 = np.dtype(ml_dtypes.bfloat16)
float8_e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e5m2 = np.dtype(ml_dtypes.float8_e5m2)

DTYPES: dict[str, np.dtype] = {
    "bf16": bfloat16,
    "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "f8E4M3FN": float8_e4m3fn,
    "f8E5M2": float8_e5m2,
    "i1": np.dtype(np.bool_),
    **{f"i{w}": np.dtype(f"int{w}") for w in (8, 16, 32, 64)},
    **{f"ui{w}": np.dtype(f"uint{w}") for w in (8, 16, 32, 64)},
}
"""Every dtype an array argument can have, by the name of its MLIR element type.
Arrays from any library (numpy, DLPack, `__cuda_array_interface__`) are compared
with a kernel's parameters by these names."""

_NAMES = {dtype: name for name, dtype in DTYPES.items()}


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that holds values of an MLIR element type."""
    match element_type:
        case BFloat16Type():
            return bfloat16
        case Float16Type():
            return np.dtype(np.float16)
        case Float32Type():
            return np.dtype(np.float32)
        case Float64Type():
            return np.dtype(np.float64)
        case Float8E4M3FNType():
            return float8_e4m3fn
        case Float8E5M2Type():
            return float8_e5m2
        case IndexType():
            return np.dtype(np.int64)
        case IntegerType() if element_type.width.data == 1:
            return np.dtype(np.bool_)
        case IntegerType() if element_type.width.data in (8, 16, 32, 64):
            return np.dtype(f"int{element_type.width.data}")
    raise TypeError(f"no numpy dtype for element type {element_type}")


def is_float_dtype(dtype: np.dtype) -> bool:
    return dtype in (bfloat16, float8_e4m3fn, float8_e5m2) or np.issubdtype(
        dtype, np.floating
    )


def type_name(dtype: np.dtype) -> str:
    """How a dtype reads in messages and checks: bf16, f16, f32, i32, ...; a dtype
    no kernel can take keeps numpy's name (a byte-swapped `>f4`, `complex64`)."""
    dtype = np.dtype(dtype)
    return _NAMES.get(dtype, dtype.str if dtype.byteorder == ">" else str(dtype))
