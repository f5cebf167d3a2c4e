"""Arrays a kernel is called with, seen the same way whatever library made them.

torch tensors (read directly: their `__cuda_array_interface__` refuses bf16),
anything with `__cuda_array_interface__` (cupy, numba), and numpy arrays (copied to
the device and, after the launch, back) all become a `DeviceArray`: pointer,
shape, element strides, dtype name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tawa_xdsl.dtypes import bfloat16, type_name
from tawa_xdsl.runtime.driver import check, context

TORCH_DTYPES = {
    "torch.bfloat16": "bf16",
    "torch.float16": "f16",
    "torch.float32": "f32",
}
TYPESTR = {"<f2": "f16", "<f4": "f32"}


@dataclass
class DeviceArray:
    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    dtype: str  # bf16, f16, f32
    host: np.ndarray | None = None  # numpy source, written back after the launch
    owned: int = 0  # device allocation to free

    def copy_back(self) -> None:
        if self.host is not None:
            cu, _ = context()
            check(
                cu.cuMemcpyDtoH(self.host.ctypes.data, self.ptr, self.host.nbytes),
                "cuMemcpyDtoH",
            )

    def free(self) -> None:
        if self.owned:
            cu, _ = context()
            check(cu.cuMemFree(self.owned), "cuMemFree")
            self.owned = 0


def device_array(value: Any, name: str) -> DeviceArray:
    """A `DeviceArray` for a torch/cupy/numpy array, or TypeError naming `name`."""
    if type(value).__module__.startswith("torch"):
        if not value.is_cuda:
            value = value.cuda()
        dtype = TORCH_DTYPES.get(str(value.dtype))
        if dtype is None:
            raise TypeError(
                f"argument '{name}' has dtype {value.dtype}; use bf16, f16 or f32"
            )
        return DeviceArray(
            value.data_ptr(), tuple(value.shape), tuple(value.stride()), dtype
        )
    if hasattr(value, "__cuda_array_interface__"):
        cai = value.__cuda_array_interface__
        dtype = TYPESTR.get(cai["typestr"])
        if dtype is None:
            raise TypeError(
                f"argument '{name}' has type {cai['typestr']}; use f16 or f32 (or torch for bf16)"
            )
        itemsize = int(cai["typestr"][2:])
        shape = tuple(cai["shape"])
        strides = cai.get("strides")
        if strides is None:
            strides = tuple(int(np.prod(shape[k + 1 :])) for k in range(len(shape)))
        else:
            strides = tuple(s // itemsize for s in strides)
        return DeviceArray(int(cai["data"][0]), shape, strides, dtype)
    if isinstance(value, np.ndarray):
        names = {
            bfloat16: "bf16",
            np.dtype(np.float16): "f16",
            np.dtype(np.float32): "f32",
        }
        dtype = names.get(value.dtype)
        if dtype is None:
            raise TypeError(
                f"argument '{name}' has dtype {type_name(value.dtype)}; use bf16, f16 or f32"
            )
        host = np.ascontiguousarray(value)
        cu, _ = context()
        ptr = int(check(cu.cuMemAlloc(max(1, host.nbytes)), f"cuMemAlloc for '{name}'"))
        check(cu.cuMemcpyHtoD(ptr, host.ctypes.data, host.nbytes), "cuMemcpyHtoD")
        strides = tuple(s // host.itemsize for s in host.strides)
        array = DeviceArray(ptr, host.shape, strides, dtype, value, ptr)
        if host is not value:  # a non-contiguous numpy input is only read
            array.host = None
        return array
    raise TypeError(
        f"argument '{name}' must be a torch tensor, a CUDA array (cupy) or a numpy array, "
        f"not {type(value).__name__}"
    )
