"""Our dialects: `tile` (what users write), `aref` (asynchronous references),
`nvgpu_async` (the Hopper machine the lowering targets), `ptx` (what one
thread executes)."""

from collections.abc import Callable

from xdsl.ir import Dialect


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Name -> factory; the imports are lazy so `tawa-opt` starts fast."""

    def get_tile() -> Dialect:
        from tawa_xdsl.dialects.tile import Tile

        return Tile

    def get_aref() -> Dialect:
        from tawa_xdsl.dialects.aref import Aref

        return Aref

    def get_nvgpu_async() -> Dialect:
        from tawa_xdsl.dialects.nvgpu_async import NVGPUAsync

        return NVGPUAsync

    def get_ptx() -> Dialect:
        from tawa_xdsl.dialects.ptx import PTX

        return PTX

    return {
        "tile": get_tile,
        "aref": get_aref,
        "nvgpu_async": get_nvgpu_async,
        "ptx": get_ptx,
    }
