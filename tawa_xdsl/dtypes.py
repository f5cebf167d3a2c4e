"""MLIR element types <-> numpy dtypes (bf16 through ml_dtypes)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
)
from xdsl.ir import Attribute

bfloat16 = np.dtype(ml_dtypes.bfloat16)


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
        case IndexType():
            return np.dtype(np.int64)
        case IntegerType() if element_type.width.data == 1:
            return np.dtype(np.bool_)
        case IntegerType() if element_type.width.data in (8, 16, 32, 64):
            return np.dtype(f"int{element_type.width.data}")
    raise TypeError(f"no numpy dtype for element type {element_type}")


def is_float_dtype(dtype: np.dtype) -> bool:
    return dtype == bfloat16 or np.issubdtype(dtype, np.floating)


def type_name(dtype: np.dtype) -> str:
    """How a dtype reads in messages: bf16, f16, f32, ..."""
    names = {bfloat16: "bf16", np.dtype(np.float16): "f16", np.dtype(np.float32): "f32"}
    return names.get(np.dtype(dtype), str(dtype))
