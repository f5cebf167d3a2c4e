"""`Kernel`: a compiled kernel, loaded and launched through cuda-python.

`tawa_xdsl.compile` lowers a tile kernel into a compiled-kernel record
(`tawa_xdsl.compiled.CompiledKernel`: PTX and launch contract, no IR) and
hands it here; the kernel is loaded with the driver JIT on first launch. Each
call checks its arguments before anything reaches the GPU, with the checks
`interpret` and `simulate` run too (`tawa_xdsl.kernel.check_arguments`: dtype,
rank, static extents, the shape contract of `tile.dims`, scalar types and
ranges) and then what TMA needs (a contiguous innermost dimension, 16-byte
aligned base and strides); it copies host arrays to the device, builds the TMA
tensor maps, picks the grid from the output's shape unless `grid=` is given,
launches, copies host outputs back, and reports any CUDA error with the
kernel's name.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType
from xdsl.ir import Attribute

from tawa_xdsl.contract import LaunchContract
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects.nvgpu_async import ParamKind
from tawa_xdsl.dialects.ptx import CP_ASYNC_SIZES
from tawa_xdsl.dialects.tile import DescType, element_bytes
from tawa_xdsl.grid import Rule, infer_grid
from tawa_xdsl.kernel import (
    KernelArgumentError,
    Param,
    check_arguments,
    normalize_grid,
)
from tawa_xdsl.runtime.arrays import DeviceArray, copy_on_launch, device_array
from tawa_xdsl.runtime.driver import (
    CudaError,
    check,
    context,
    load_ptx,
    sm_count,
    standin,
)
from tawa_xdsl.target import (
    INDEX_BITS,
    INDEX_MAX,
    MAX_GRID,
    SECTOR_BYTES,
    TMA_ALIGN,
)

if TYPE_CHECKING:
    from tawa_xdsl.compiled import CompiledKernel


class ResourceError(CudaError):
    """The kernel does not fit the hardware budget it is compiled for."""


U32_MAX = 2**32 - 1


def is_empty(array: DeviceArray) -> bool:
    """Whether `array` has no elements (an extent of 0): its strides address
    nothing, TMA cannot describe it (a stand-in does, `driver.standin`), and
    a launch whose every output is empty has nothing to do."""
    return 0 in array.shape


def writes_nothing(tensors: Sequence[tuple[Param, DeviceArray]]) -> bool:
    """Whether every array a launch writes is empty (M = 0 or N = 0 for a
    GEMM): it is not launched (CUDA refuses a grid of zero programs, which a
    persistent kernel over zero tiles would get)."""
    return all(is_empty(a) for p, a in tensors if p.written)


def check_device_array(kernel_name: str, p: Param, array: DeviceArray) -> None:
    """What every compiled kernel needs of an array beyond the shared checks:
    positive strides below 2**32 (register stores take them as .u32
    parameters), the last dimension contiguous (TMA's, and the register stores',
    innermost dimension). An empty array passes: its strides address nothing."""
    where = f"{kernel_name}: argument '{p.name}'"
    if is_empty(array):
        return
    if array.strides[-1] != 1 and array.shape[-1] > 1:
        raise KernelArgumentError(
            f"{where} must be contiguous in its last dimension "
            f"(stride {array.strides[-1]})"
        )
    for axis, stride in enumerate(array.strides[:-1]):
        if stride <= 0:
            raise KernelArgumentError(
                f"{where} has a stride of {stride} in dimension {axis}; kernels "
                "need positive strides (pass a contiguous copy)"
            )
        if stride > U32_MAX:
            raise KernelArgumentError(
                f"{where} has a stride of {stride} elements in dimension {axis}; "
                f"kernels take strides below 2**32"
            )


def grid_sources(
    rules: Sequence[Rule], ps: Sequence[Param], values: Sequence[Any]
) -> str:
    """Where an inferred grid comes from, axis by axis: "x: argument 'c'
    dimension 0 (M) 4096 over blocks of 128"."""
    parts = []
    for axis, arg, dim, block, block_arg in rules:
        p = ps[arg]
        name = f" ({p.dims[dim]})" if dim < len(p.dims) and p.dims[dim] else ""
        size = int(values[block_arg]) if block_arg >= 0 else block
        parts.append(
            f"{'xyz'[axis]}: argument '{p.name}' dimension {dim}{name} "
            f"{values[arg].shape[dim]} over blocks of {size}"
        )
    return "; ".join(parts)


def check_grid(
    kernel_name: str, grid: tuple[int, int, int], source: str, hint: str = ""
) -> None:
    """A launch grid CUDA takes (`MAX_GRID` along each axis), or a
    `KernelArgumentError` naming the axis, its extent, the limit and where
    the extent comes from (`source`), before the launch fails."""
    for axis, (extent, limit) in enumerate(zip(grid, MAX_GRID, strict=True)):
        if extent > limit:
            raise KernelArgumentError(
                f"{kernel_name}: the launch grid {grid} has {extent} programs along "
                f"{'xyz'[axis]} ({source}); CUDA launches at most {limit}{hint}"
            )


def tma_problem(p: Param, array: DeviceArray) -> str | None:
    """Why TMA cannot describe `array` (after `check_device_array`), or None:
    its base address and row pitches must be multiples of `TMA_ALIGN` bytes.
    Host arrays are copied into temporaries whose rows are padded to that
    (`arrays.row_strides`). An array the kernel writes needs rows of a
    multiple of `TMA_ALIGN` bytes too: a TMA store writes whole 16-byte
    granules, so it fills the row's tail up to the next boundary, memory past
    the array's last column that may be another array's (`target.TMA_ALIGN`;
    a host array's temporary owns its padding).
    The dispatcher keys specializations on this fact. An empty array has
    none: its map is a stand-in's (`driver.standin`)."""
    if is_empty(array):
        return None
    problem = _off_grid(p, array, TMA_ALIGN)
    row = array.shape[-1] * element_bytes(p.type.element_type)
    if problem is None and p.written and array.host is None and row % TMA_ALIGN:
        problem = (
            f"has rows of {row} bytes, which a TMA store would overrun up to "
            f"the next {TMA_ALIGN}-byte boundary"
        )
    return problem


def cp_async_problem(p: Param, array: DeviceArray) -> str | None:
    """Why the producer's threads could not load `array` with `cp.async`
    copies (`thread_loads`), or None: its base address, row pitches and row
    length must be multiples of the narrowest copy, 4 bytes (else they load
    it synchronously). The dispatcher keys specializations on this too."""
    problem = _off_grid(p, array, CP_ASYNC_SIZES[0])
    row = array.shape[-1] * element_bytes(p.type.element_type)
    if problem is None and not is_empty(array) and row % CP_ASYNC_SIZES[0]:
        problem = f"has rows of {row} bytes"
    return problem


def sector_problem(p: Param, array: DeviceArray) -> str | None:
    """Why TMA reads `array` (which it can describe) below full speed, or None:
    its base address or a row pitch is off the `SECTOR_BYTES` grid. The
    dispatcher keys specializations on this too, and may copy such an input
    onto the grid (`dispatch_rules.realign_pays`)."""
    return _off_grid(p, array, SECTOR_BYTES)


def _off_grid(p: Param, array: DeviceArray, grid: int) -> str | None:
    """Why `array`'s base address or a row pitch is not a multiple of `grid`
    bytes, or None (a host array's temporary is made on the grid)."""
    desc = p.type
    assert isinstance(desc, DescType)
    if is_empty(array):  # its tensor map is a stand-in's
        return None
    if array.host is None and array.ptr % grid:
        return f"starts at an address that is not {grid}-byte aligned"
    size = element_bytes(desc.element_type)
    for axis, stride in enumerate(array.strides[:-1]):
        if (stride * size) % grid:
            return f"has a stride of {stride * size} bytes in dimension {axis}"
    return None


@dataclass
class Kernel:
    """A compiled kernel: its record (PTX and launch contract) and, after the
    first launch, its CUDA function. Call it like the tile kernel, with arrays
    for the tensors."""

    compiled: CompiledKernel
    allow_spills: bool = False
    _function: Any = field(default=None, init=False)
    jit_log: str = field(default="", init=False)
    num_regs: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._resident_clusters = 0
        self._last_stream: int | None = None
        self._ended: Any = None
        self._turns = threading.Lock()

    @property
    def name(self) -> str:
        return self.compiled.name

    @property
    def ptx(self) -> str:
        return self.compiled.ptx

    @property
    def contract(self) -> LaunchContract:
        return self.compiled.contract

    @property
    def options(self) -> dict[str, Any]:
        """The resolved compile options."""
        return dict(self.compiled.options)

    @property
    def params(self) -> tuple[Param, ...]:
        return self.contract.params

    @property
    def threads(self) -> int:
        return self.contract.launch.threads

    @property
    def smem(self) -> int:
        return self.contract.launch.smem

    @property
    def cluster(self) -> int:
        return self.contract.launch.cluster

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

    def _check_device_array(self, p: Param, array: DeviceArray) -> None:
        """What TMA and the register stores need beyond the shared checks: only
        a parameter passed as a tensor map needs what TMA can describe (an
        output the kernel stores from registers takes any row pitch)."""
        check_device_array(self.name, p, array)
        problem = p.name in self.tensor_maps and tma_problem(p, array)
        if problem:
            raise KernelArgumentError(
                f"{self.name}: argument '{p.name}' {problem}; TMA needs a multiple "
                f"of {TMA_ALIGN} (pad the rows)"
            )

    @functools.cached_property
    def tensor_maps(self) -> frozenset[str]:
        """The names of the parameters the kernel takes as TMA tensor maps."""
        return frozenset(self.params[i].name for i in self.contract.tensor_maps)

    def _tensor_map(self, array: DeviceArray, t: nv.TensorMapType, p: Param) -> Any:
        cu, _ = context()
        byte = cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT8
        data_type = {
            "bf16": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            "f16": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            "f32": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            "i32": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_INT32,
            "i64": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_INT64,
            # TMA has no fp8 or signed 8-bit type: it moves the bytes (zero
            # bytes out of bounds, which read as +0.0 in e4m3 and e5m2 alike,
            # and as 0 in i8)
            "f8E4M3FN": byte,
            "f8E5M2": byte,
            "i8": byte,
        }[array.dtype]
        swizzle = {
            0: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
            32: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_32B,
            64: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B,
            128: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        }[t.swizzle.data]
        esize = element_bytes(t.element_type)
        rank = len(t.get_shape())
        shape, strides = list(array.shape), list(array.strides[:-1])
        ptr = array.ptr
        if is_empty(array):  # unit extents over zeros: every box reads 0
            shape, strides = [1] * len(shape), [TMA_ALIGN // esize] * len(strides)
            ptr = standin(p.written)
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
                ptr,
                [cu.cuuint64_t(d) for d in reversed(shape)],
                [cu.cuuint64_t(s * esize) for s in reversed(strides)],
                [cu.cuuint32_t(b) for b in reversed(t.get_box())],
                [cu.cuuint32_t(1)] * rank,
                cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle,
                cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            ),
            f"{self.name}: cuTensorMapEncodeTiled for '{p.name}'",
        )

    def _pack(self, values: Sequence[Any]) -> Packed:
        """The kernel parameters as a `void**` array, in the order of the PTX ABI."""
        packed = Packed()
        for entry in self.contract.abi:
            p, value = self.params[entry.arg], values[entry.arg]
            if entry.kind == ParamKind.MAP:
                assert isinstance(entry.type, nv.TensorMapType)
                packed.add_object(self._tensor_map(value, entry.type, p))
            elif entry.kind == ParamKind.GLOBAL:
                packed.add(ctypes.c_uint64(value.ptr))
                for d in value.shape:
                    packed.add(ctypes.c_uint32(d))
                for stride in value.strides[:-1]:
                    packed.add(ctypes.c_uint32(stride))
            elif entry.kind == ParamKind.DIM:
                assert entry.axis is not None
                packed.add(ctypes.c_uint32(value.shape[entry.axis]))
            else:
                packed.add(scalar_ctype(entry.type, value))
        return packed

    def _checked(
        self, args: Sequence[Any], grid: Any, stream: int
    ) -> tuple[list[tuple[Param, DeviceArray]], list[Any], tuple[int, int, int] | None]:
        """The arguments checked (the shared checks, then the device's) and the
        grid, before anything is allocated: the (parameter, array) pairs, every
        value in parameter order (scalars converted), the launch grid (None
        when the launch `writes_nothing`: nothing is launched)."""
        values = check_arguments(
            self.name,
            self.params,
            args,
            lambda v: device_array(v, stream),
            copy_on_launch,
        )
        tensors = [
            (p, v) for p, v in zip(self.params, values, strict=True) if p.is_tensor
        ]
        for p, array in tensors:
            if array.overlaps is not None and array.host is None:
                raise KernelArgumentError(
                    f"{self.name}: argument '{p.name}' shares memory with argument "
                    f"'{array.overlaps}', which the kernel writes; the kernel "
                    "compile() returns reads it from a copy made before each "
                    "launch, a Kernel launches the arrays it is given (pass a copy)"
                )
            self._check_device_array(p, array)
        if writes_nothing(tensors):
            if grid is not None:  # checked all the same
                self._grid(values, grid)
            return tensors, values, None
        return tensors, values, self._grid(values, grid)

    def _staged(
        self, tensors: Sequence[tuple[Param, DeviceArray]], values: Sequence[Any]
    ) -> Packed:
        """Host arrays copied into device temporaries, then the packed parameters;
        on failure the temporaries are freed."""
        try:
            for _, array in tensors:
                array.stage()
            return self._pack(values)
        except BaseException:
            for _, array in tensors:
                array.free()
            raise

    @property
    def dependent(self) -> bool:
        """Whether it launches as a programmatic dependent of the stream's
        previous kernel: a split pair's reduce kernel, which starts while the
        partials kernel drains and waits for its sums (`griddepcontrol.wait`)
        after its own setup. Where another kernel precedes it, the wait is
        for that one, so a lone launch stays correct."""
        split = self.contract.split
        return split is not None and split.role == "reduce"

    @property
    def counts_tiles(self) -> bool:
        """Whether its programs take their tiles from a counter of the loaded
        module (`persistent{dynamic=true}`), which every launch shares and
        leaves at zero only when it ends: two launches must not overlap."""
        return bool(self.compiled.options.get("dynamic_tiles"))

    def _launch(
        self, launch_grid: tuple[int, int, int], packed: Packed, stream: int
    ) -> None:
        if not self.counts_tiles:
            self._enqueue(launch_grid, packed, stream)
            return
        # launches on one stream run in order; one on another stream waits
        # for the last launch's end (recorded after every launch, so the
        # event never names a stream that may since have been destroyed);
        # host threads launching at once take turns
        with self._turns:
            self._after_the_last(launch_grid, packed, stream)

    def _after_the_last(
        self, launch_grid: tuple[int, int, int], packed: Packed, stream: int
    ) -> None:
        cu, _ = context()
        if self._ended is None:
            self._ended = check(
                cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DISABLE_TIMING),
                f"{self.name}: cuEventCreate",
            )
        if self._last_stream is not None and self._last_stream != stream:
            check(
                cu.cuStreamWaitEvent(stream, self._ended, 0),
                f"{self.name}: ordering after its launch on another stream "
                "(the tile counter is shared)",
            )
        self._enqueue(launch_grid, packed, stream)
        check(cu.cuEventRecord(self._ended, stream), f"{self.name}: cuEventRecord")
        self._last_stream = stream

    def _enqueue(
        self, launch_grid: tuple[int, int, int], packed: Packed, stream: int
    ) -> None:
        cu, _ = context()
        where = (
            f"{self.name}: {'cuLaunchKernelEx' if self.dependent else 'cuLaunchKernel'}"
            f" (grid {launch_grid}, {self.threads} threads, "
            f"{self.smem} bytes of shared memory)"
        )
        if not self.dependent:
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
                where,
            )
            return
        config = cu.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = launch_grid
        config.blockDimX, config.blockDimY, config.blockDimZ = self.threads, 1, 1
        config.sharedMemBytes, config.hStream = self.smem, stream
        attr = cu.CUlaunchAttribute()
        attr.id = (
            cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        )
        attr.value.programmaticStreamSerializationAllowed = 1
        config.attrs, config.numAttrs = [attr], 1
        check(cu.cuLaunchKernelEx(config, self.load(), packed.pointer(), 0), where)

    def __call__(self, *args: Any, grid: Any = None, stream: int = 0) -> None:
        """Launch on `stream`. Host arrays are copied into device temporaries that
        live through the launch and, when the kernel stores into them, back into
        the caller's arrays, which waits for the kernel to finish."""
        tensors, values, launch_grid = self._checked(args, grid, stream)
        if launch_grid is None:
            return
        packed = self._staged(tensors, values)
        try:
            self._launch(launch_grid, packed, stream)
            if any(a.host is not None for _, a in tensors):
                cu, _ = context()
                check(
                    cu.cuStreamSynchronize(stream), f"{self.name}: running the kernel"
                )
                for p, array in tensors:
                    if p.written and array.host is not None:
                        array.copy_back()
        finally:
            for _, array in tensors:
                array.free()

    def bind(self, *args: Any, grid: Any = None, stream: int = 0) -> Launcher:
        """A zero-argument launcher with everything checked and packed once (for
        timing loops). The arrays must live on the device (torch, cupy); the
        launcher holds them, and their DLPack capsules, while it lives."""
        tensors, values, launch_grid = self._checked(args, grid, stream)
        host = [p.name for p, a in tensors if a.host is not None]
        if host:
            raise KernelArgumentError(
                f"{self.name}.bind needs device arrays (torch, cupy, ... on the "
                f"GPU); {', '.join(repr(n) for n in host)} live on the host"
            )
        if launch_grid is None:
            return Launcher(self, None, Packed(), stream, tensors)
        packed = self._staged(tensors, values)  # nothing to stage
        self.load()
        return Launcher(self, launch_grid, packed, stream, tensors)

    def _grid(self, values: Sequence[Any], grid: Any) -> tuple[int, int, int]:
        if grid is not None:
            persistent = self.contract.persistent is not None
            launch = normalize_grid(grid, self.name, self.cluster, persistent)
            check_grid(self.name, launch, "the grid given")
            return launch
        size = self.cluster
        if self.contract.persistent is not None:
            x, y, z = infer_grid(self.contract.persistent, values)
            tiles = -(-x // size) * y * z  # of clusters
            if tiles * size > INDEX_MAX:  # the programs count tiles in an index
                raise KernelArgumentError(
                    f"{self.name}: {tiles * size} output tiles "
                    f"({grid_sources(self.contract.persistent, self.params, values)})"
                    f"; a persistent kernel counts its tiles in {INDEX_BITS}-bit "
                    f"integers (at most {INDEX_MAX})"
                )
            return min(tiles, self.resident_clusters()) * size, 1, 1
        if self.contract.grid is None:
            raise KernelArgumentError(
                f"{self.name}: the launch grid cannot be read off the kernel's "
                "stores; pass grid="
            )
        x, y, z = infer_grid(self.contract.grid, values)
        launch = -(-x // size) * size, y, z  # the last cluster may run past the edge
        check_grid(
            self.name,
            launch,
            grid_sources(self.contract.grid, self.params, values),
            "; compile(..., persistent=True) launches one program per SM along "
            "x instead",
        )
        return launch

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


@dataclass(frozen=True)
class Launcher:
    """A launch bound by `Kernel.bind`. It holds the arrays (and their DLPack
    capsules), so their memory outlives every launch made through it."""

    kernel: Kernel
    grid: tuple[int, int, int] | None
    """None: the launch writes nothing (`writes_nothing`), so it is skipped."""
    packed: Packed
    stream: int
    arrays: list[tuple[Param, DeviceArray]]

    def __call__(self) -> None:
        if self.grid is not None:
            self.kernel._launch(self.grid, self.packed, self.stream)

    def detached(self) -> Launcher:
        """This launch holding none of the arrays: for a caller that passes
        live arrays at the same addresses each time (`launch_cache`)."""
        return dataclasses.replace(self, arrays=[])


def scalar_ctype(t: Attribute, value: Any) -> ctypes._SimpleCData:
    """A scalar parameter (checked by `kernel.check_scalar`) as its `.param`
    holds it (`distribute.kernel.PARAM_LOADS`): f32, the bits of a 16-bit
    float (`.b16`), a 64-bit integer, or 32 bits (index, i1 and narrower
    integers, range-checked for them)."""
    if isinstance(t, Float32Type):
        return ctypes.c_float(value)
    if isinstance(t, BFloat16Type | Float16Type):
        return ctypes.c_uint16(int(np.asarray(value).view(np.uint16)))
    if isinstance(t, IntegerType) and t.width.data == 64:
        return ctypes.c_int64(int(value))
    return ctypes.c_int32(value)


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


__all__ = [
    "CudaError",
    "Kernel",
    "ResourceError",
    "check_device_array",
    "is_empty",
    "tma_problem",
    "writes_nothing",
]
