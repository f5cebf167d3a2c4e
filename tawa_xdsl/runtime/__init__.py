"""Running compiled kernels on a Hopper GPU through cuda-python."""

from tawa_xdsl.compiler import compile
from tawa_xdsl.runtime.driver import CudaError, GPUUnavailable, gpu_available
from tawa_xdsl.runtime.kernel import Kernel, ResourceError, from_lowered

__all__ = [
    "CudaError",
    "GPUUnavailable",
    "Kernel",
    "ResourceError",
    "compile",
    "from_lowered",
    "gpu_available",
]
