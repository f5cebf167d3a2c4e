"""Running compiled kernels on a Hopper GPU through cuda-python: `Kernel` loads
and launches a compiled-kernel record (`tawa_xdsl.compiled`); nothing here
imports the compiler's passes or lowering."""

from tawa_xdsl.runtime.driver import CudaError, GPUUnavailable, gpu_available
from tawa_xdsl.runtime.kernel import Kernel, ResourceError

__all__ = [
    "CudaError",
    "GPUUnavailable",
    "Kernel",
    "ResourceError",
    "gpu_available",
]
