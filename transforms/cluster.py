"""cluster{size=2}: thread blocks run in clusters of `size` along x and share the
tiles they all load.

Contract. Input: a tile kernel before `persistent` and `aref-partition`. Output:
the same kernel with a `tile.cluster = size` attribute (run again with the same
size, the pass leaves the kernel as it is; with another, it refuses it); the work happens
downstream, where every pass reads the attribute:

- `persistent` walks cluster tiles: the blocks of a cluster take x tiles
  cx*size + rank (rank = `tile.cluster_rank`) of one y, z, so they share every
  tile that does not depend on x.
- `convert-aref-to-nvgpu-async` multicasts each TMA load that is *cluster
  uniform* (`tawa_xdsl.analysis.uniformity`): each block copies 1/size of the tile into
  the same slot of every block of the cluster, the consumers release such slots
  in every block (the producers of all blocks write them), and cluster barriers
  after the barrier init and before exit keep peers from touching shared memory
  that is not set up yet or no longer exists.
- The launch rounds the grid's x extent up to a multiple of `size`; a block past
  the edge computes a tile outside the output, which TMA loads as zeros and the
  stores clip.

A load is cluster uniform when neither its coordinates nor the trip counts and
conditions of the loops and branches around it depend on `program_id(x)` or
`tile.cluster_rank`: then every block of a cluster issues it, with the same
coordinates, at the same aref index. The pass refuses a kernel with no such load
(causal attention, whose key loop length follows the query block, is one):
there would be nothing to share.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from tawa_xdsl.analysis.uniformity import cluster_uniform, rank_varying
from tawa_xdsl.diagnostics import OpDiagnostic, each_kernel
from tawa_xdsl.dialects import tile
from tawa_xdsl.kernel import CLUSTER_ATTR, cluster_size, kernels
from tawa_xdsl.target import MAX_CLUSTER
from tawa_xdsl.transforms.persistent import PERSISTENT_ATTR


def check_size(size: int, pass_name: str, option: str) -> None:
    """A cluster is a power of two blocks, at most `MAX_CLUSTER`; a size of 1 is no
    cluster. Named as the user wrote it, since the size comes from an option."""
    if size < 1 or size > MAX_CLUSTER or size & (size - 1):
        raise PassFailedException(
            f"{pass_name}{{{option}={size}}}: {option} must be a power of two from "
            f"1 to {MAX_CLUSTER}"
        )


@dataclass(frozen=True)
class ClusterPass(ModulePass):
    """Mark each tile kernel to run in clusters of `size` blocks along x."""

    name = "cluster"

    size: int = 2

    def check_options(self) -> None:
        check_size(self.size, self.name, "size")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        each_kernel(kernels(op), self._mark)

    def _mark(self, kernel: func.FuncOp) -> None:
        """Run `kernel` in clusters, or refuse it: persistent already, or no
        load for the blocks of a cluster to share."""
        if CLUSTER_ATTR in kernel.attributes or self.size == 1:
            self._again(kernel)
            return
        if PERSISTENT_ATTR in kernel.attributes:
            raise OpDiagnostic(
                kernel,
                f"cluster: kernel @{kernel.sym_name.data} is already persistent; "
                "run cluster before persistent",
            )
        loads = [o for o in kernel.walk() if isinstance(o, tile.LoadOp)]
        if not loads:
            raise OpDiagnostic(
                kernel,
                f"cluster: @{kernel.sym_name.data} loads no tile, so there is "
                "nothing to multicast",
            )
        varying = rank_varying(kernel)
        if not any(cluster_uniform(ld, varying) for ld in loads):
            raise OpDiagnostic(
                loads[0],
                f"cluster: no tile.load of @{kernel.sym_name.data} is the same in "
                "every block of a cluster (each depends on program_id(x), or sits "
                "in a loop or branch that does), so there is nothing to multicast",
            )
        kernel.attributes[CLUSTER_ATTR] = IntegerAttr(self.size, 64)

    def _again(self, kernel: func.FuncOp) -> None:
        """Nothing to do for a kernel in clusters of this size already (or of
        none, for size 1); a diagnostic at one in clusters of another size."""
        if cluster_size(kernel) != self.size:
            raise OpDiagnostic(
                kernel,
                f"cluster: kernel @{kernel.sym_name.data} runs in clusters of "
                f"{cluster_size(kernel)} already; cluster{{size={self.size}}} would "
                "replace that size silently: run cluster once",
            )
