"""select-store-path: which ways a register tile may take to global memory.

`convert-aref-to-nvgpu-async` decides between a TMA store (through a swizzled
staging tile; it needs coordinates proven non-negative and 16 bytes into the
row, `coordinates.py`, and the shared memory for the staging tile) and stores
from registers (`nvgpu_async.store_global`); that choice shapes the kernel's
parameters and shared-memory plan, so it stays there. This pass decides, for
each `store_global`, which register paths the thread level may branch between
at run time (`StorePath`), most specialised first:

- `vec16`: 16-byte `st.global.v4` after a quad transpose, for 16-bit tiles of
  whole 32-column groups (`vec16_fits`), taken when the tile lies wholly inside
  the tensor at a column that is a multiple of 8;
- `pair`: one store per element pair, taken at an even first column (an i8
  pair's low bytes packed into one `st.u16`);
- `single`: one store per element, the fallback (an odd column misaligns pairs;
  an i8 element is a `st.u8`), and the only path of a `transposed` store.

`distribute-fragments` emits one uniform branch per listed path but the last.
A store that already lists its paths keeps them (a test or a user may force
one); `vec16=false` leaves the 16-byte path out (the A/B of NOTES 3.28).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from tawa_xdsl.dialects import nvgpu_async as nv


def store_paths(t: TensorType, vec16: bool = True) -> list[nv.StorePath]:
    """The register paths a store of tile type `t` may take."""
    paths = [nv.StorePath.PAIR, nv.StorePath.SINGLE]
    if vec16 and nv.vec16_fits(t):
        paths.insert(0, nv.StorePath.VEC16)
    return paths


@dataclass
class SelectStorePaths(RewritePattern):
    vec16: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nv.StoreGlobalOp, rewriter: PatternRewriter):
        if op.paths is not None:
            return
        assert isinstance(op.value.type, TensorType)
        paths = (
            [nv.StorePath.SINGLE]
            if op.transposed
            else store_paths(op.value.type, self.vec16)
        )
        op.paths = ArrayAttr(StringAttr(str(p)) for p in paths)
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class SelectStorePathPass(ModulePass):
    """Record on every `nvgpu_async.store_global` the register paths it may take."""

    name = "select-store-path"

    vec16: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            SelectStorePaths(self.vec16), apply_recursively=False
        ).rewrite_module(op)
