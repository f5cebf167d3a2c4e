"""tawa-xdsl: automatic warp specialization for Hopper GPUs on xDSL.

import tawa_xdsl
module = tawa_xdsl.parse(Path("examples/gemm.mlir"))
tawa_xdsl.interpret(module, "gemm_nt", a, b, c, grid=(m_tiles, n_tiles))
gemm = tawa_xdsl.compile(tawa_xdsl.examples.path("gemm.mlir"), "gemm_nt")  # a GPU kernel

The names below are imported on first use (PEP 562): the interpreter, the
simulators and the runtime pull in numpy and xDSL's interpreters, which `tawa-opt`
never needs, and importing them eagerly tripled its start-up time.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> the module that defines it; "" for the name of a submodule
_LAZY: dict[str, str] = {
    "apply": "tawa_xdsl.api",
    "parse": "tawa_xdsl.api",
    "interpret": "tawa_xdsl.interp.reference",
    "simulate": "tawa_xdsl.interp.simulate",
    "compile": "tawa_xdsl.compiler",
    "examples": "",
}

__all__ = [
    "__version__",
    "apply",
    "compile",
    "examples",
    "interpret",
    "parse",
    "simulate",
]
__version__: str  # the installed distribution's, so pyproject.toml is its only source

if TYPE_CHECKING:
    from tawa_xdsl import examples
    from tawa_xdsl.api import apply, parse
    from tawa_xdsl.compiler import compile
    from tawa_xdsl.interp.reference import interpret
    from tawa_xdsl.interp.simulate import simulate


def __getattr__(name: str) -> Any:
    """Import a public name's module the first time the name is used."""
    if name == "__version__":
        from importlib.metadata import version  # ~40 ms: only when asked

        globals()[name] = version("tawa-xdsl")
        return globals()[name]
    if name not in _LAZY:
        raise AttributeError(f"module 'tawa_xdsl' has no attribute {name!r}")
    module = importlib.import_module(_LAZY[name] or f"tawa_xdsl.{name}")
    value = module if not _LAZY[name] else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
