"""Which values can differ between the programs that run one kernel.

Passes ask this about the program ids a kernel reads from its launch:

- `rank_varying` / `cluster_uniform`: what may differ between the blocks of one
  cluster (`program_id(x)` and `tile.cluster_rank` and everything computed from
  them, through loops and branches). `cluster` refuses a kernel with no load
  that is the same in every block; the Hopper lowering multicasts the loads
  that are.
- `depends_on_program_id`: whether a value is computed from any program id
  through the ops that compute it; the tuning rules tell kernels whose tiles do
  equal work (no loop bound depends on the program id) from causal ones.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.ir import Operation, OpResult, SSAValue

from tawa_xdsl.analysis.carried import STRUCTURED, carried_pairs
from tawa_xdsl.dialects import tile


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
    if isinstance(op, scf.WhileOp):  # its trip count is not analysed
        return [*op.results, *(a for r in op.regions for a in r.block.args)]
    if isinstance(op, scf.ForOp) and any(v in varying for v in (op.lb, op.ub, op.step)):
        return [*op.results, *op.body.block.args[1:]]
    if isinstance(op, scf.IfOp) and op.cond in varying:
        return list(op.results)
    if isinstance(op, STRUCTURED):  # a varying value makes its copies vary
        return [copy for source, copy in carried_pairs(op) if source in varying]
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


def depends_on_program_id(value: SSAValue) -> bool:
    """Whether `value` is computed (through any chain of ops) from a program id."""
    return computed_from(value, tile.ProgramIdOp)


def computed_from(
    value: SSAValue, kind: type[Operation], through_regions: bool = False
) -> bool:
    """Whether `value` is computed (through any chain of ops; with
    `through_regions`, also through what a loop's or branch's regions yield)
    from a result of an op of `kind`."""
    seen: set[SSAValue] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        if v in seen or not isinstance(v, OpResult):
            continue
        seen.add(v)
        if isinstance(v.op, kind):
            return True
        todo.extend(v.op.operands)
        for region in v.op.regions if through_regions else ():
            for block in region.blocks:
                if block.last_op is not None:
                    todo.extend(block.last_op.operands)
    return False
