"""`Kernel`: a compiled kernel, loaded and launched through cuda-python.

`tawa_xdsl.compiler.compile` lowers a tile kernel and hands its PTX here
(`from_lowered`); the kernel is loaded with the driver JIT on first launch. Each
call checks its arguments against the kernel's
signature before anything reaches the GPU (dtype, rank, static extents, a
contiguous innermost dimension, 16-byte aligned base and strides as TMA needs),
builds the TMA tensor maps, picks the grid from the output's shape unless `grid=`
is given, launches, and reports any CUDA error with the kernel's name.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    Float32Type,
    IntegerAttr,
    ModuleOp,
)

from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects.tile import DescType, element_bytes
from tawa_xdsl.grid import GRID_ATTR, Rule, decode_rules, infer_grid
from tawa_xdsl.kernel import (
    KernelArgumentError,
    Param,
    check_scalar,
    check_tensor,
    find_kernel,
    params,
)
from tawa_xdsl.lowering.aref_to_nvgpu import ABI_ATTR, LAUNCH_ATTR
from tawa_xdsl.lowering.ptx_emitter import emit_module
from tawa_xdsl.runtime.arrays import DeviceArray, device_array
from tawa_xdsl.runtime.driver import CudaError, check, context, load_ptx, sm_count
from tawa_xdsl.transforms.persistent import PERSISTENT_ATTR


class ResourceError(CudaError):
    """The kernel does not fit the hardware budget it is compiled for."""


TMA_ALIGN = 16


def from_lowered(
    module: ModuleOp,
    kernel_name: str,
    allow_spills: bool = False,
    options: dict[str, Any] | None = None,
) -> Kernel:
    """A GPU kernel from a module already lowered to nvgpu_async (e.g. by a
    pass order of your own); `compile` ends here."""
    lowered_kernel = find_kernel(module, kernel_name)
    if ABI_ATTR not in lowered_kernel.attributes:
        raise KernelArgumentError(
            f"@{kernel_name} is not lowered to nvgpu_async; run "
            "convert-aref-to-nvgpu-async (or tawa-hopper-pipeline) first"
        )
    return Kernel(
        kernel_name,
        emit_module([lowered_kernel]),
        lowered_kernel,
        allow_spills=allow_spills,
        options=dict(options or {}),
    )


@dataclass
class Kernel:
    """A compiled kernel: its PTX, its ABI, and (after the first launch) its CUDA
    function. Call it like the tile kernel, with arrays for the tensors."""

    name: str
    ptx: str
    lowered: func.FuncOp
    _function: Any = None
    jit_log: str = ""
    num_regs: int = 0
    allow_spills: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    params: list[Param] = field(init=False)
    grid_rules: list[Rule] | None = field(init=False)
    persistent_rules: list[Rule] | None = field(init=False)

    def __post_init__(self) -> None:
        self.params = params(self.lowered)
        attrs = self.lowered.attributes
        self.grid_rules = decode_rules(attrs[GRID_ATTR]) if GRID_ATTR in attrs else None
        self.persistent_rules = (
            decode_rules(attrs[PERSISTENT_ATTR]) if PERSISTENT_ATTR in attrs else None
        )
        launch = self.lowered.attributes[LAUNCH_ATTR]
        self.threads = launch.data["threads"].value.data
        self.smem = launch.data["smem"].value.data
        cluster = launch.data.get("cluster")
        self.cluster = cluster.value.data if isinstance(cluster, IntegerAttr) else 1
        self._resident_clusters = 0

    # ------------------------------------------------------------ loading

    def load(self) -> Any:
        """Load the PTX with the driver JIT (once); returns the CUDA function."""
        if self._function is None:
            cu, _ = context()
            self._module, function, self.jit_log = load_ptx(self.ptx, self.name)
            check(
                cu.cuFuncSetAttribute(
                    function,
                    cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    self.smem,
                ),
                f"{self.name}: setting {self.smem} bytes of dynamic shared memory",
            )
            self.num_regs = check(
                cu.cuFuncGetAttribute(
                    cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, function
                ),
                f"{self.name}: cuFuncGetAttribute",
            )
            # spills live in local memory (our kernels have no local arrays); the
            # attribute holds whether or not the driver's JIT cache skipped the log
            spilled = check(
                cu.cuFuncGetAttribute(
                    cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function
                ),
                f"{self.name}: cuFuncGetAttribute",
            )
            if spilled and not self.allow_spills:
                raise ResourceError(
                    f"{self.name} does not fit the register budget: the JIT spills "
                    f"{spilled} bytes per thread to local memory. Use more consumer "
                    "warpgroups (each then holds a smaller share of every tile), smaller "
                    "tiles, or a larger consumer_registers budget; "
                    "compile(..., allow_spills=True) runs it anyway"
                )
            self._function = function
        return self._function

    # ----------------------------------------------------------- arguments

    def _check_array(self, p: Param, array: DeviceArray) -> None:
        desc = p.type
        assert isinstance(desc, DescType)
        check_tensor(p, array.dtype, array.shape, f"{self.name}: ")
        if any(d == 0 for d in array.shape):
            raise KernelArgumentError(
                f"{self.name}: argument '{p.name}' is empty: shape {array.shape}"
            )
        if array.strides[-1] != 1 and array.shape[-1] > 1:
            raise KernelArgumentError(
                f"{self.name}: argument '{p.name}' must be contiguous in its last dimension "
                f"(stride {array.strides[-1]})"
            )
        esize = element_bytes(desc.element_type)
        if array.ptr % TMA_ALIGN:
            raise KernelArgumentError(
                f"{self.name}: argument '{p.name}' starts at an address that is not "
                f"{TMA_ALIGN}-byte aligned"
            )
        for axis, stride in enumerate(array.strides[:-1]):
            if (stride * esize) % TMA_ALIGN:
                raise KernelArgumentError(
                    f"{self.name}: argument '{p.name}' has a stride of {stride * esize} bytes in "
                    f"dimension {axis}; TMA needs a multiple of {TMA_ALIGN} (pad the rows)"
                )

    def _tensor_map(self, array: DeviceArray, t: nv.TensorMapType, name: str) -> Any:
        cu, _ = context()
        data_type = {
            "bf16": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            "f16": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            "f32": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        }[array.dtype]
        swizzle = {
            0: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
            128: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        }[t.swizzle.data]
        esize = element_bytes(t.element_type)
        rank = len(t.get_shape())
        shape, strides = list(array.shape), list(array.strides[:-1])
        while len(shape) < rank:  # a map with unit outer dimensions (1-D tensors)
            row = (
                -(-shape[0] * (strides[0] if strides else 1) * esize // TMA_ALIGN)
                * TMA_ALIGN
            )
            shape.insert(0, 1)
            strides.insert(0, row // esize)
        return check(
            cu.cuTensorMapEncodeTiled(
                data_type,
                rank,
                array.ptr,
                [cu.cuuint64_t(d) for d in reversed(shape)],
                [cu.cuuint64_t(s * esize) for s in reversed(strides)],
                [cu.cuuint32_t(b) for b in reversed(t.get_box())],
                [cu.cuuint32_t(1)] * rank,
                cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle,
                cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            ),
            f"{self.name}: cuTensorMapEncodeTiled for '{name}'",
        )

    def _pack(self, values: Sequence[Any]) -> Packed:
        """The kernel parameters as a `void**` array, in the order of the PTX ABI."""
        abi = self.lowered.attributes[ABI_ATTR]
        assert isinstance(abi, ArrayAttr)
        packed = Packed()
        for entry, arg in zip(abi.data, self.lowered.body.block.args, strict=True):
            kind, index, *axis = entry.data.split(":")
            p, value = self.params[int(index)], values[int(index)]
            if kind == "map":
                packed.add_object(self._tensor_map(value, arg.type, p.name))
            elif kind == "global":
                packed.add(ctypes.c_uint64(value.ptr))
                for d in value.shape:
                    packed.add(ctypes.c_uint32(d))
                for stride in value.strides[:-1]:
                    packed.add(ctypes.c_uint32(stride))
            elif kind == "dim":
                packed.add(ctypes.c_uint32(value.shape[int(axis[0])]))
            elif isinstance(arg.type, Float32Type):
                packed.add(ctypes.c_float(float(value)))
            else:
                packed.add(ctypes.c_uint32(int(value)))
        return packed

    def _prepare(self, args: Sequence[Any], grid: Sequence[int] | None) -> tuple:
        """Checked device arrays, scalars, grid and packed parameters for a launch."""
        if len(args) != len(self.params):
            names = ", ".join(p.name for p in self.params)
            raise KernelArgumentError(
                f"{self.name} takes {len(self.params)} arguments ({names}), got {len(args)}"
            )
        arrays: list[DeviceArray] = []
        values: list[Any] = []
        try:
            for p, a in zip(self.params, args, strict=True):
                if p.is_tensor:
                    array = device_array(a, p.name)
                    arrays.append(array)
                    self._check_array(p, array)
                    values.append(array)
                else:
                    values.append(check_scalar(p, a))
            return arrays, self._grid(values, grid), self._pack(values)
        except BaseException:
            for a in arrays:
                a.free()
            raise

    def _launch(
        self, launch_grid: tuple[int, int, int], packed: Packed, stream: int
    ) -> None:
        cu, _ = context()
        check(
            cu.cuLaunchKernel(
                self.load(),
                *launch_grid,
                self.threads,
                1,
                1,
                self.smem,
                stream,
                packed.pointer(),
                0,
            ),
            f"{self.name}: cuLaunchKernel (grid {launch_grid}, {self.threads} threads, "
            f"{self.smem} bytes of shared memory)",
        )

    def __call__(
        self, *args: Any, grid: Sequence[int] | None = None, stream: int = 0
    ) -> None:
        """Launch on `stream` (numpy outputs are copied back, which synchronizes)."""
        arrays, launch_grid, packed = self._prepare(args, grid)
        try:
            self._launch(launch_grid, packed, stream)
            if any(a.host is not None for a in arrays):
                cu, _ = context()
                check(
                    cu.cuStreamSynchronize(stream), f"{self.name}: running the kernel"
                )
                for a in arrays:
                    a.copy_back()
        finally:
            for a in arrays:
                a.free()

    def bind(self, *args: Any, grid: Sequence[int] | None = None, stream: int = 0):
        """A zero-argument launcher with everything checked and packed once (for
        timing loops). The arrays must live on the device (torch, cupy)."""
        arrays, launch_grid, packed = self._prepare(args, grid)
        if any(a.host is not None for a in arrays):
            for a in arrays:
                a.free()
            raise KernelArgumentError(
                f"{self.name}.bind needs device arrays (torch or cupy)"
            )
        self.load()
        return lambda: self._launch(launch_grid, packed, stream)

    def _grid(
        self, values: Sequence[Any], grid: Sequence[int] | None
    ) -> tuple[int, int, int]:
        if grid is not None:
            dims = tuple(grid) + (1,) * (3 - len(grid))
            if len(dims) != 3 or any(not isinstance(d, int) or d < 1 for d in dims):
                raise KernelArgumentError(
                    f"{self.name}: grid must be 1 to 3 positive integers, got {grid}"
                )
            if dims[0] % self.cluster:
                raise KernelArgumentError(
                    f"{self.name}: runs in clusters of {self.cluster} programs along "
                    f"x; grid x = {dims[0]} is not a multiple of {self.cluster}"
                )
            return dims  # type: ignore[return-value]
        size = self.cluster
        if self.persistent_rules is not None:
            x, y, z = infer_grid(self.persistent_rules, values)
            tiles = -(-x // size) * y * z  # of clusters
            return min(tiles, self.resident_clusters()) * size, 1, 1
        if self.grid_rules is None:
            raise KernelArgumentError(
                f"{self.name}: the launch grid cannot be read off the kernel's "
                "stores; pass grid="
            )
        x, y, z = infer_grid(self.grid_rules, values)
        return -(-x // size) * size, y, z  # the last cluster may run past the edge

    def resident_clusters(self) -> int:
        """How many clusters of this kernel the GPU holds at once: a persistent
        kernel launches that many (one block per SM without clusters)."""
        if self.cluster == 1:
            return sm_count()
        if not self._resident_clusters:
            cu, _ = context()
            config = cu.CUlaunchConfig()
            config.gridDimX = sm_count() // self.cluster * self.cluster
            config.gridDimY = config.gridDimZ = 1
            config.blockDimX, config.blockDimY, config.blockDimZ = self.threads, 1, 1
            config.sharedMemBytes = self.smem
            attr = cu.CUlaunchAttribute()
            attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            attr.value.clusterDim.x = self.cluster
            attr.value.clusterDim.y = attr.value.clusterDim.z = 1
            config.attrs, config.numAttrs = [attr], 1
            self._resident_clusters = check(
                cu.cuOccupancyMaxActiveClusters(self.load(), config),
                f"{self.name}: cuOccupancyMaxActiveClusters",
            )
            if self._resident_clusters < 1:
                raise ResourceError(
                    f"{self.name}: a cluster of {self.cluster} blocks with "
                    f"{self.smem} bytes of shared memory each does not fit the GPU"
                )
        return self._resident_clusters


class Packed:
    """Kernel parameters laid out for cuLaunchKernel's `void** kernelParams`, with
    the objects they point into kept alive."""

    def __init__(self) -> None:
        self.keep: list[Any] = []
        self.addresses: list[int] = []

    def add(self, value: ctypes._SimpleCData) -> None:
        self.keep.append(value)
        self.addresses.append(ctypes.addressof(value))

    def add_object(self, obj: Any) -> None:
        """A cuda-python object passed by value (a CUtensorMap's 128 bytes)."""
        self.keep.append(obj)
        self.addresses.append(int(obj.getPtr()))

    def pointer(self) -> int:
        array = (ctypes.c_void_p * len(self.addresses))(*self.addresses)
        self.keep.append(array)
        return ctypes.addressof(array)


__all__ = ["CudaError", "Kernel", "ResourceError", "from_lowered"]
