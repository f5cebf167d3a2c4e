"""tawa-xdsl: automatic warp specialization for Hopper GPUs on xDSL.

import tawa_xdsl
module = tawa_xdsl.parse(Path("examples/gemm.mlir"))
tawa_xdsl.interpret(module, "gemm_nt", a, b, c, grid=(m_tiles, n_tiles))
gemm = tawa_xdsl.compile("examples/gemm.mlir", "gemm_nt")   # a GPU kernel
"""

from tawa_xdsl.api import apply, parse
from tawa_xdsl.interp.reference import interpret
from tawa_xdsl.interp.simulate import simulate
from tawa_xdsl.runtime import compile

__all__ = ["apply", "compile", "interpret", "parse", "simulate"]
