"""pipeline{num-stages=3 mma-depth=1 two-stage=false outer-stages=2}:
software-pipeline warp-specialized kernels at the aref level.

- num-stages D: every ring (an aref put inside a loop) gets D slots, so the
  producer can run up to D loads ahead of the consumer. A ring put in a loop
  that itself holds loops with puts (Q in a persistent attention kernel: once
  per tile, around the key loop; the tickets of `persistent{dynamic=true}`,
  put in its scf.while) gets min(outer-stages, D): double buffering
  (the default) lets the producer fetch the next tile's Q during this tile; one
  slot leaves its shared memory to the inner rings (a third K/V stage at head
  dim 128), and the next Q then loads once this tile's last S is computed.
- mma-depth P: keep P MMA groups in flight. The consumer releases index i only
  once the MMA of index i + P - 1 has been issued (its lowering waits for all but
  the newest P - 1 groups there), so `aref.consumed %r[i]` moves P - 1
  iterations later; the last P - 1 indices of a loop are released after it.
- two-stage: in loops with two or more dots (attention), issue the first dot of
  iteration j + 1 before the rest of iteration j (see `two_stage.py`).

Preconditions, checked with a diagnostic: options with D >= 1, 1 <= P <= D (each
MMA group in flight holds a slot), and with two-stage P + 1 <= D; the kernel was
partitioned by `aref-partition`. Run once (`transforms/once.py`): the same
options again leave the kernel as it is; others are refused (delaying the
releases twice deadlocked the producer).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from tawa_xdsl.compiler import DEFAULTS
from tawa_xdsl.dialects import aref
from tawa_xdsl.kernel import kernels
from tawa_xdsl.transforms.once import ran_before, record_run
from tawa_xdsl.transforms.two_stage import counter_of, rotate

DONE_ATTR = "aref.pipeline"
"""On a kernel `pipeline` ran on: its options (`transforms/once.py`)."""


@dataclass(frozen=True)
class PipelinePass(ModulePass):
    """Deepen aref rings, keep MMAs in flight, optionally overlap two dots."""

    name = "pipeline"

    num_stages: int = DEFAULTS.num_stages
    mma_depth: int = DEFAULTS.mma_depth
    two_stage: bool = DEFAULTS.two_stage
    outer_stages: int = DEFAULTS.outer_stages

    def check_options(self) -> None:
        for name, value in (
            ("num-stages", self.num_stages),
            ("outer-stages", self.outer_stages),
        ):
            if value < 1:
                raise PassFailedException(
                    f"pipeline: {name} must be at least 1, got {value}"
                )
        if not 1 <= self.mma_depth <= self.num_stages:
            raise PassFailedException(
                f"pipeline: mma-depth must be between 1 and num-stages "
                f"({self.num_stages}), got {self.mma_depth}: each MMA in flight holds a slot"
            )
        if self.two_stage and self.mma_depth + 1 > self.num_stages:
            raise PassFailedException(
                f"pipeline: two-stage holds mma-depth + 1 = {self.mma_depth + 1} slots; "
                f"num-stages is {self.num_stages}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        for kernel in kernels(op):
            if ran_before(kernel, self, DONE_ATTR):
                continue
            roles = [o for o in kernel.walk() if isinstance(o, aref.WarpSpecializeOp)]
            for ws in roles:
                self._pipeline(ws)
            record_run(kernel, self, DONE_ATTR)

    def _pipeline(self, ws: aref.WarpSpecializeOp) -> None:
        if self.two_stage:
            for loop in [o for o in ws.consumer.walk() if isinstance(o, scf.ForOp)]:
                rotate(loop)
        inner_rings: set[aref.CreateOp] = set()  # the rings MMAs read
        for create, outer in _rings(ws).items():
            if outer:
                _set_depth(create, min(self.outer_stages, self.num_stages))
            else:
                inner_rings.add(_set_depth(create, self.num_stages))
        if self.mma_depth > 1:
            for release in [
                o
                for o in ws.consumer.walk()
                if isinstance(o, aref.ConsumedOp) and o.aref.owner in inner_rings
            ]:
                _delay_release(release, self.mma_depth - 1)


def _rings(ws: aref.WarpSpecializeOp) -> dict[aref.CreateOp, bool]:
    """The arefs the producer puts from inside a loop, each with whether that
    loop also holds loops that put (an outer ring)."""
    rings: dict[aref.CreateOp, bool] = {}
    for put in ws.producer.walk():
        loop = put.parent_op()
        if isinstance(put, aref.PutOp) and isinstance(loop, scf.ForOp | scf.WhileOp):
            create = put.aref.owner
            if isinstance(create, aref.CreateOp):
                outer = any(
                    isinstance(o, aref.PutOp) and o.parent_op() is not loop
                    for o in loop.walk()
                )
                rings[create] = rings.get(create, False) or outer
    return rings


def _set_depth(create: aref.CreateOp, depth: int) -> aref.CreateOp:
    """Give `create` `depth` slots; returns the op that now defines the aref."""
    old_type = create.result.type
    if old_type.num_slots == depth:
        return create
    new = aref.CreateOp(aref.ArefType(old_type.types, depth))
    new.result.name_hint = create.result.name_hint
    block = create.parent_block()
    assert block is not None
    block.insert_op_before(new, create)
    create.result.replace_all_uses_with(new.result)
    create.detach()
    create.erase()
    return new


def _delay_release(release: aref.ConsumedOp, lag: int) -> None:
    """`consumed %r[idx]` in a loop body -> `consumed %r[idx - lag]` once
    idx >= start + lag, and a loop releasing the tail after the loop."""
    loop = release.parent_op()
    if not isinstance(loop, scf.ForOp):
        return
    counter = counter_of(loop, release.index)
    if counter is None:
        return
    start, end = loop.iter_args[counter], loop.results[counter]
    block = loop.parent_block()
    assert block is not None

    lag_c = arith.ConstantOp.from_int_and_width(lag, IndexType())
    lag_c.result.name_hint = "lag"
    first = arith.AddiOp(start, lag_c)
    first.result.name_hint = "release_from"
    for op in (lag_c, first):
        block.insert_op_before(op, loop)

    body = release.parent_block()
    ready = arith.CmpiOp(release.index, first, "sge")
    older = arith.SubiOp(release.index, lag_c)
    older.result.name_hint = "done_idx"
    late = aref.ConsumedOp(release.aref, older)
    late.location = release.location
    guarded = scf.IfOp(ready, [], [Block([older, late, scf.YieldOp()])])
    body.insert_op_before(ready, release)
    body.insert_op_before(guarded, release)
    release.detach()
    release.erase()

    after = loop.next_op
    tail_start = arith.SubiOp(end, lag_c)
    lo = arith.MaxSIOp(tail_start, start)
    one = arith.ConstantOp.from_int_and_width(1, IndexType())
    tail_body = Block(arg_types=[IndexType()])
    tail_body.args[0].name_hint = "tail"
    tail_release = aref.ConsumedOp(late.aref, tail_body.args[0])
    tail_release.location = late.location
    tail_body.add_ops([tail_release, scf.YieldOp()])
    tail = scf.ForOp(lo, end, one, [], tail_body)
    ops: list[Operation] = [tail_start, lo, one, tail]
    for op in ops:
        if after is None:
            block.add_op(op)
        else:
            block.insert_op_before(op, after)
