"""The CUDA driver through cuda-python: checked calls, the context, PTX loading.

PTX is loaded with the driver JIT (`cuModuleLoadDataEx`): nvJitLink and cuLink
compile it as relocatable code and drop `setmaxnreg` (docs/hopper.md,
"Registers and `setmaxnreg`").
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


class CudaError(RuntimeError):
    """A CUDA driver call failed; the message names the kernel and the call."""


class GPUUnavailable(CudaError):
    """cuda-python or a CUDA driver with a device is missing."""


def _driver() -> Any:
    try:
        from cuda.bindings import driver
    except ImportError:  # cuda-python < 12.6 layout
        try:
            from cuda import cuda as driver  # type: ignore[no-redef]
        except ImportError as e:
            raise GPUUnavailable(
                "cuda-python is not installed: pip install 'tawa-xdsl[gpu]'"
            ) from e
    return driver


def check(result: tuple, what: str) -> Any:
    """The outputs of a cuda-python call, or a `CudaError` naming `what` failed."""
    cu = _driver()
    err, *out = result
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        _, text = cu.cuGetErrorString(err)
        raise CudaError(
            f"{what}: {name.decode() if name else err} ({text.decode() if text else 'no description'})"
        )
    if not out:
        return None
    return out[0] if len(out) == 1 else tuple(out)


@functools.cache
def context() -> tuple[Any, Any]:
    """(driver module, the device's primary context), made current; torch and cupy
    use the same primary context, so their pointers are valid here."""
    cu = _driver()
    try:
        check(cu.cuInit(0), "cuInit")
    except CudaError:
        raise
    except Exception as e:  # no driver library on this machine
        raise GPUUnavailable(f"no CUDA driver: {e}") from e
    if check(cu.cuDeviceGetCount(), "cuDeviceGetCount") < 1:
        raise GPUUnavailable("no CUDA device")
    device = check(cu.cuDeviceGet(0), "cuDeviceGet")
    major = check(
        cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device
        ),
        "cuDeviceGetAttribute",
    )
    if major != 9:
        raise GPUUnavailable(
            f"device 0 has compute capability {major}.x; sm_90a needs 9.0"
        )
    ctx = check(cu.cuDevicePrimaryCtxRetain(device), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return cu, ctx


@functools.cache
def sm_count() -> int:
    """Streaming multiprocessors of device 0: how many programs a persistent
    kernel launches at most (one per SM)."""
    cu, _ = context()
    device = check(cu.cuDeviceGet(0), "cuDeviceGet")
    return check(
        cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device
        ),
        "cuDeviceGetAttribute",
    )


@functools.cache
def device_name() -> str:
    """Device 0's name ("NVIDIA H100 80GB HBM3"): kernel caches key on it."""
    cu, _ = context()
    device = check(cu.cuDeviceGet(0), "cuDeviceGet")
    name = check(cu.cuDeviceGetName(256, device), "cuDeviceGetName")
    return name.split(b"\0")[0].decode()


@functools.cache
def driver_version() -> str:
    """The CUDA version the driver supports ("12.4"): its JIT compiles our PTX."""
    cu, _ = context()
    version = check(cu.cuDriverGetVersion(), "cuDriverGetVersion")
    return f"{version // 1000}.{version % 1000 // 10}"


def event_times(
    launch: Callable[[], None], repeats: int, stream: int = 0
) -> list[float]:
    """Milliseconds of `repeats` runs of `launch` on `stream`, each between two
    CUDA events (the launches queue back to back, so what is timed is the GPU's
    work, not Python's)."""
    cu, _ = context()
    events = [
        (
            check(cu.cuEventCreate(0), "cuEventCreate"),
            check(cu.cuEventCreate(0), "cuEventCreate"),
        )
        for _ in range(repeats)
    ]
    try:
        for start, end in events:
            check(cu.cuEventRecord(start, stream), "cuEventRecord")
            launch()
            check(cu.cuEventRecord(end, stream), "cuEventRecord")
        check(cu.cuEventSynchronize(events[-1][1]), "cuEventSynchronize")
        return [
            check(cu.cuEventElapsedTime(start, end), "cuEventElapsedTime")
            for start, end in events
        ]
    finally:
        for pair in events:
            for event in pair:
                cu.cuEventDestroy(event)


STANDIN_BYTES = 256
"""Bytes of a stand-in buffer (`standin`): more than a tensor map of unit
extents and 16-byte pitches addresses in any rank."""


@functools.cache
def standin(written: bool) -> int:
    """Zeroed device memory that stands in for an empty array in a tensor map:
    TMA describes no zero extent, so an empty array's map has unit extents
    over this buffer, whose one element reads 0 as everything outside a
    tensor does (a K = 0 GEMM sums no products). An array the kernel writes
    gets a buffer of its own, so what a TMA store leaves there is never
    read."""
    cu, _ = context()
    ptr = int(check(cu.cuMemAlloc(STANDIN_BYTES), "cuMemAlloc (a stand-in)"))
    check(cu.cuMemsetD8(ptr, 0, STANDIN_BYTES), "cuMemsetD8 (a stand-in)")
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize (a stand-in)")
    return ptr


def gpu_available() -> bool:
    """Whether a Hopper GPU and cuda-python are usable here."""
    try:
        context()
    except (GPUUnavailable, CudaError):
        return False
    return True


def load_ptx(ptx: str, kernel_name: str) -> tuple[Any, Any, str]:
    """(module, function, JIT info log); a failed JIT raises with its error log."""
    cu, _ = context()
    err_log, info_log = bytearray(65536), bytearray(65536)
    opts = [
        cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER,
        cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        cu.CUjit_option.CU_JIT_INFO_LOG_BUFFER,
        cu.CUjit_option.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        cu.CUjit_option.CU_JIT_LOG_VERBOSE,
    ]
    values = [err_log, len(err_log), info_log, len(info_log), 1]
    result = cu.cuModuleLoadDataEx(ptx.encode() + b"\0", len(opts), opts, values)
    if result[0] != cu.CUresult.CUDA_SUCCESS:
        log = bytes(err_log).split(b"\0")[0].decode(errors="replace")
        try:
            check(result, f"{kernel_name}: loading PTX")
        except CudaError as e:
            raise CudaError(f"{e}\nJIT log:\n{log}") from None
    module = result[1]
    function = check(
        cu.cuModuleGetFunction(module, kernel_name.encode()),
        f"{kernel_name}: cuModuleGetFunction",
    )
    info = bytes(info_log).split(b"\0")[0].decode(errors="replace")
    return module, function, info
