"""Kernels at the thread level for tests: a tile kernel through a Hopper pipeline
and `distribute-fragments`, and a check of a simulated output against the
reference interpreter's (the thread level sums in its own order and reduces
across lanes, so floats agree to a few units in the last place, not bit for bit).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

import tawa_xdsl
from tawa_xdsl.dtypes import bfloat16, float8_e4m3fn, float8_e5m2
from tawa_xdsl.kernel import PERSISTENT_ATTR, cluster_size, find_kernel


def to_thread_level(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Run `pipeline` (tile IR to nvgpu_async), then `distribute-fragments`."""
    return tawa_xdsl.apply(module, f"{pipeline},distribute-fragments")


def assert_close(
    got: np.ndarray, expected: np.ndarray, ulps: int = 2, bits: int | None = None
) -> None:
    """Equal to `ulps` units in the last place of a `bits`-bit significand (by
    default the output type's), relative to each value or, for values cancelled
    down near zero (an attention output sums terms of either sign), to a
    sixteenth of the largest finite one; NaN and infinities where expected.
    Integers are equal."""
    if np.issubdtype(got.dtype, np.integer):
        np.testing.assert_array_equal(got, expected)
        return
    if bits is None:
        bits = {
            float8_e5m2: 3,
            float8_e4m3fn: 4,
            bfloat16: 8,
            np.dtype(np.float16): 11,
            np.dtype(np.float32): 24,
        }[got.dtype]
    g, e = got.astype(np.float64), expected.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(e))
    ok = ~np.isnan(e)
    g, e = g[ok], e[ok]
    finite = np.abs(e[np.isfinite(e)])
    scale = np.maximum(np.abs(e), finite.max(initial=0) / 16)
    with np.errstate(invalid="ignore"):  # inf - inf
        diff = np.where(g == e, 0.0, np.abs(g - e))  # equal infinities are equal
        error = np.divide(
            diff, scale, out=np.where(diff > 0, np.inf, 0.0), where=scale > 0
        )
    error[np.isinf(e) & (g != e)] = np.inf
    assert error.max(initial=0) <= ulps * 2.0 ** (1 - bits), (
        f"{int((error > ulps * 2.0 ** (1 - bits)).sum())} elements differ by more "
        f"than {ulps} ulps (worst {error.max():.3g})"
    )


def program_grid(
    module: ModuleOp, kernel: str, grid: tuple[int, ...]
) -> tuple[int, ...]:
    """The grid that runs `kernel` of `module` over the tiles of `grid` (the
    tile kernel's): `grid` itself, or for a persistent kernel, whose programs
    walk the tiles along x, three programs (of whole clusters)."""
    lowered = find_kernel(module, kernel)
    if PERSISTENT_ATTR in lowered.attributes:
        return (3 * cluster_size(lowered),)
    return grid


def simulate_output(
    module: ModuleOp,
    kernel: str,
    args: list[Any],
    out: int,
    grid,
    seed: int = 0,
    exact_math: bool = False,
) -> np.ndarray:
    """Simulate over the tiles of `grid` with argument `out` poisoned with NaN;
    return it. `exact_math`: the `.approx` instructions without their error
    (`simulate`)."""
    args = list(args)
    args[out] = np.full_like(args[out], np.nan)
    grid = program_grid(module, kernel, grid)
    tawa_xdsl.simulate(
        module, kernel, *args, grid=grid, seed=seed, exact_math=exact_math
    )
    return args[out]
