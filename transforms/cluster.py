"""cluster{size=2}: thread blocks run in clusters of `size` along x and share the
tiles they all load.

Contract. Input: a tile kernel before `persistent` and `aref-partition`. Output:
the same kernel with a `tile.cluster = size` attribute; the work happens
downstream, where every pass reads the attribute:

- `persistent` walks cluster tiles: the blocks of a cluster take x tiles
  cx*size + rank (rank = `tile.cluster_rank`) of one y, z, so they share every
  tile that does not depend on x.
- `convert-aref-to-nvgpu-async` multicasts each TMA load that is *cluster
  uniform* (`rank_varying` below): each block copies 1/size of the tile into
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

from collections.abc import Sequence
from dataclasses import dataclass

from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.dialects.nvgpu_async import MAX_CLUSTER
from tawa_xdsl.transforms.persistent import PERSISTENT_ATTR
from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.kernel import CLUSTER_ATTR, kernels


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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_size(self.size, self.name, "size")
        if self.size == 1:
            return
        for kernel in kernels(op):
            if any(isinstance(o, aref.WarpSpecializeOp) for o in kernel.walk()):
                raise OpDiagnostic(
                    kernel,
                    f"cluster: kernel @{kernel.sym_name.data} is already "
                    "warp-specialized; run cluster before aref-partition",
                )
            if PERSISTENT_ATTR in kernel.attributes:
                raise OpDiagnostic(
                    kernel,
                    f"cluster: kernel @{kernel.sym_name.data} is already persistent; "
                    "run cluster before persistent",
                )
            loads = [o for o in kernel.walk() if isinstance(o, tile.LoadOp)]
            varying = rank_varying(kernel)
            if not any(cluster_uniform(ld, varying) for ld in loads):
                raise OpDiagnostic(
                    loads[0] if loads else kernel,
                    f"cluster: no tile.load of @{kernel.sym_name.data} is the same in "
                    "every block of a cluster (each depends on program_id(x), or sits "
                    "in a loop or branch that does), so there is nothing to multicast",
                )
            kernel.attributes[CLUSTER_ATTR] = IntegerAttr(self.size, 64)


def rank_varying(root: Operation) -> set[SSAValue]:
    """The values under `root` that can differ between the blocks of a cluster:
    computed from program_id(x) or the cluster rank, carried by a loop whose
    trip count or yielded value does, or yielded by a branch whose condition
    does. A fixed point, as loop-carried values feed themselves."""
    varying: set[SSAValue] = set()
    changed = True
    while changed:
        changed = False
        for op in root.walk():
            for v in _newly_varying(op, varying):
                if v not in varying:
                    varying.add(v)
                    changed = True
    return varying


def _newly_varying(op: Operation, varying: set[SSAValue]) -> list[SSAValue]:
    if isinstance(op, tile.ClusterRankOp) or (
        isinstance(op, tile.ProgramIdOp) and op.axis.index == 0
    ):
        return list(op.results)
    if isinstance(op, scf.ForOp):
        body = op.body.block
        yielded = body.last_op.operands if body.last_op else ()
        if any(v in varying for v in (op.lb, op.ub, op.step)):
            return [*op.results, *body.args[1:]]
        out = []
        for i, (init, arg, result) in enumerate(
            zip(op.iter_args, body.args[1:], op.results, strict=True)
        ):
            if init in varying or yielded[i] in varying or arg in varying:
                out += [arg, result]
        return out
    if isinstance(op, scf.IfOp):
        if op.cond in varying:
            return list(op.results)
        branches = [r.block.last_op for r in op.regions if r.blocks]
        return [
            result
            for i, result in enumerate(op.results)
            if any(b is not None and b.operands[i] in varying for b in branches)
        ]
    if isinstance(op, scf.WhileOp):
        return [*op.results, *(a for r in op.regions for a in r.block.args)]
    if any(v in varying for v in op.operands):
        return list(op.results)
    return []


def cluster_uniform(
    op: Operation,
    varying: set[SSAValue],
    operands: Sequence[SSAValue] | None = None,
) -> bool:
    """Whether every block of a cluster runs `op` equally often with the same
    `operands` (all of its operands by default)."""
    if any(v in varying for v in (op.operands if operands is None else operands)):
        return False
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, scf.WhileOp):
            return False
        if isinstance(parent, scf.ForOp) and any(
            v in varying for v in (parent.lb, parent.ub, parent.step)
        ):
            return False
        if isinstance(parent, scf.IfOp) and parent.cond in varying:
            return False
        parent = parent.parent_op()
    return True
