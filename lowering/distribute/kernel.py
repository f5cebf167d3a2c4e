"""Kernel parameters, thread ids and role dispatch (pattern family 7).

Parameters: the kernel's block arguments become `ptx.param` reads at the top
of the kernel (a tensor map its generic address, a global tensor its pointer,
extents and strides), declared in order by `#ptx.param_decl`s on the kernel
(`ptx.params`, names as the PTX printer spells them), so the kernel has no
block arguments and the type `() -> ()`. The parameters' meaning stays in the
launch contract (`nvgpu_async.abi`, read through `tawa_xdsl.contract`), which
the thread simulator fills them from.

Thread ids, after the parameters: `%tid.x`, the shared-memory base rounded up
to 1024 bytes, the leader predicate (thread 0), constant false and true
predicates (wgmma's scale-d), and in a cluster the block's rank.

Role dispatch: warpgroup 0 is the producer; after its `setmaxnreg` only its
thread 0 runs the rest of its region, or, when its threads write slots
(`thread_load`, `transpose_copy`), all of them, with what one thread issues guarded by the leader
predicate (`KernelState.one_thread`). Warpgroups 1..W are the consumers and
start with their coordinates (`ConsumerIds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    FunctionType,
)
from xdsl.ir import Block, Operation, Region
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from tawa_xdsl.contract import AbiParam, launch_contract
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import ptx, tile
from tawa_xdsl.dialects.nvgpu_async import ParamKind
from tawa_xdsl.lowering.distribute.context import (
    ConsumerIds,
    KernelState,
    Lowered,
    Ops,
    int_value,
    is_16bit,
    scalar_class,
)
from tawa_xdsl.target import THREADS_PER_WARPGROUP

PARAM_LOADS = {"b32": "u32", "f32": "f32", "b64": "u64"}
"""Scalar parameters: register class -> `.param` type."""
PAIRS = {
    "bf16": ("cvt.f32.bf16", "cvt.rn.bf16x2.f32"),
    "f16": ("cvt.f32.f16", "cvt.rn.f16x2.f32"),
}
"""A 16-bit scalar parameter (`.param .b16`) -> the conversions that make it
the pair register a 16-bit splat is (`elementwise.Constant`): widened to f32,
then packed into both halves (exact both ways)."""


def begin_kernel(kernel: func.FuncOp) -> KernelState:
    """Read the kernel's parameters and thread ids at its top (see the module
    docstring); returns the state the patterns share."""
    contract = launch_contract(kernel)
    k = KernelState(
        kernel, threads=contract.launch.threads, cluster=contract.launch.cluster
    )
    body = kernel.body.block.first_op
    assert body is not None, "a lowered kernel ends with func.return"
    ops = Ops(k)
    _lower_params(k, contract.abi, ops)
    k.tid = ops.add(ptx.SpecialOp("%tid.x")).results[0]
    base = ops.add(ptx.SpecialOp("smem")).results[0]
    base = ops.alu("add.u32", base, k.imm(1023, "b32"))
    k.smem = ops.alu("and.b32", base, k.imm(-1024, "b32"))
    k.leader = ops.alu("setp.eq.u32", k.tid, k.imm(0, "b32"))
    k.false = ops.alu("setp.ne.u32", k.tid, k.tid)
    k.true = ops.alu("setp.eq.u32", k.tid, k.tid)
    if k.cluster > 1:
        k.rank = ops.add(ptx.SpecialOp("%cluster_ctarank")).results[0]
        k.rank0 = ops.alu("setp.eq.u32", k.rank, k.imm(0, "b32"))
    Rewriter.insert_op(ops, InsertPoint.before(body))
    return k


def _lower_params(k: KernelState, abi: Sequence[AbiParam], ops: Ops) -> None:
    kernel = k.kernel
    block = kernel.body.block
    decls: list[ptx.ParamDeclAttr] = []

    def param(name: str, ptx_type: str, length: int = 0, align: int = 0) -> str:
        """Declare a parameter under a name no other parameter has."""
        taken = {d.param.data for d in decls}
        while name in taken:
            name += "_"
        decls.append(ptx.ParamDeclAttr(name, ptx_type, length, align))
        return name

    for arg, entry in zip(block.args, abi, strict=True):
        hint = arg.name_hint or "arg"
        base = "p_" + "".join(c if c.isalnum() else "_" for c in hint)
        t = arg.type
        if entry.kind == ParamKind.MAP:
            name = param(base, "b8", 128, 64)
            tmap = ops.add(ptx.ParamOp(name, "b64", generic=True)).results[0]
            k.values[arg] = Lowered(tmap)
        elif entry.kind == ParamKind.GLOBAL:
            assert isinstance(t, nv.GlobalTensorType)
            rank = len(t.get_shape())
            ptr = ops.add(ptx.ParamOp(param(f"{base}_ptr", "u64"), "b64")).results[0]
            dims = [
                ops.add(ptx.ParamOp(param(f"{base}_dim{d}", "u32"), "b32")).results[0]
                for d in range(rank)
            ]
            strides = [
                ops.add(ptx.ParamOp(param(f"{base}_stride{d}", "u32"), "b32")).results[
                    0
                ]
                for d in range(rank - 1)
            ]
            k.tensors[arg] = (ops.alu("cvta.to.global.u64", ptr), dims, strides)
        elif (cls := scalar_class(t)) in PARAM_LOADS:
            name = param(base, PARAM_LOADS[cls])
            k.values[arg] = Lowered(ops.add(ptx.ParamOp(name, cls)).results[0])
        elif cls == "pred":  # PTX has no .pred parameters: a u32, 0 or 1
            word = ops.add(ptx.ParamOp(param(base, "u32"), "b32")).results[0]
            k.values[arg] = Lowered(ops.alu("setp.ne.u32", word, k.imm(0, "b32")))
        elif is_16bit(t):
            widen, pack = PAIRS[t.name]
            half = ops.add(ptx.ParamOp(param(base, "b16"), "b16")).results[0]
            f = ops.alu(widen, half)
            k.values[arg] = Lowered(ops.alu(pack, f, f))
        else:
            raise OpDiagnostic(
                kernel,
                f"parameter {entry.arg} ('{arg.name_hint}') has type {t}; scalar "
                "parameters are i1, integers of up to 64 bits, index, f32, bf16 or "
                "f16 (8-bit floats arrive in a tensor: see tile.extract)",
            )
    k.old_args += block.args
    kernel.function_type = FunctionType.from_lists([], [])
    kernel.attributes[ptx.PARAMS_ATTR] = ArrayAttr(decls)


class DistributePattern(RewritePattern):
    """A pattern of one kernel's distribution: it converts the ops of types
    `OPS` (`rewrite`), each of them whole, or raises a diagnostic."""

    OPS: ClassVar[tuple[type[Operation], ...]]

    def __init__(self, k: KernelState):
        self.k = k

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, self.OPS):
            self.rewrite(op, rewriter)

    def rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        raise NotImplementedError


class RoleDispatch(DistributePattern):
    """`role_dispatch` -> `ptx.if` on warpgroup 0: the producer branch runs its
    `setmaxnreg`, then the rest under `ptx.if %leader`; the consumer branch
    starts with the consumer coordinates."""

    OPS = (nv.RoleDispatchOp,)

    def rewrite(self, op: nv.RoleDispatchOp, rewriter: PatternRewriter):
        k = self.k
        ops = Ops(k)
        wg = ops.alu("shr.u32", k.tid, k.imm(7, "b32"))
        producer = ops.alu("setp.eq.u32", wg, k.imm(0, "b32"))

        producer_block, elected = Block(), Block()
        body = list(op.producer.block.ops)
        if body and isinstance(body[0], nv.SetMaxNRegOp):
            body[0].detach()
            producer_block.add_op(body[0])
        if any(
            isinstance(o, nv.ThreadLoadOp | nv.TransposeCopyOp)
            for o in op.producer.walk()
        ):
            # every producer thread loads a share of some tiles: the whole
            # warpgroup runs the role, one-thread ops guarded (`one_thread`)
            elected = producer_block
            k.producer_threads = body[0]
        rewriter.inline_block(op.producer.block, InsertPoint.at_end(elected))
        if elected is not producer_block:
            elected.add_op(ptx.YieldOp())
            producer_block.add_op(
                ptx.IfOp(k.leader, Region(elected), Region())  # only thread 0
            )
        producer_block.add_op(ptx.YieldOp())

        consumer_block = Block()
        k.consumer = _consumer_ids(k, consumer_block)
        rewriter.inline_block(op.consumer.block, InsertPoint.at_end(consumer_block))
        consumer_block.add_op(ptx.YieldOp())
        ops.add(ptx.IfOp(producer, Region(producer_block), Region(consumer_block)))
        rewriter.replace(op, ops, [])


def _consumer_ids(k: KernelState, block: Block) -> ConsumerIds:
    ops = Ops(k)
    ctid = ops.alu("sub.u32", k.tid, k.imm(THREADS_PER_WARPGROUP, "b32"))
    cwg = ops.alu("shr.u32", ctid, k.imm(7, "b32"))
    warp = ops.alu("bfe.u32", ctid, k.imm(5, "b32"), k.imm(2, "b32"))
    g = ops.alu("bfe.u32", ctid, k.imm(2, "b32"), k.imm(3, "b32"))
    t = ops.alu("and.b32", ctid, k.imm(3, "b32"))
    col0 = ops.alu("shl.b32", t, k.imm(1, "b32"))
    leader = ops.alu("setp.eq.u32", ctid, k.imm(0, "b32"))
    wg_lane = ops.alu("and.b32", ctid, k.imm(127, "b32"))
    wg_leader = ops.alu("setp.eq.u32", wg_lane, k.imm(0, "b32"))
    block.add_ops(ops)
    return ConsumerIds(ctid, cwg, warp, g, t, col0, leader, wg_lane, wg_leader, ops[-1])


class SetMaxNReg(DistributePattern):
    OPS = (nv.SetMaxNRegOp,)

    def rewrite(self, op: nv.SetMaxNRegOp, rewriter: PatternRewriter):
        rewriter.replace(op, ptx.SetMaxNRegOp(op.action.data, int_value(op.regs)), [])


class GridQuery(DistributePattern):
    """`tile.program_id` / `num_programs` / `cluster_id`: special registers;
    `cluster_rank`: the rank read at entry (0 outside clusters)."""

    OPS = (tile.ProgramIdOp, tile.NumProgramsOp, tile.ClusterIdOp, tile.ClusterRankOp)
    SPECIAL = {
        tile.ProgramIdOp: "%ctaid.",
        tile.NumProgramsOp: "%nctaid.",
    }

    def rewrite(self, op: Operation, rewriter: PatternRewriter):
        k = self.k
        if isinstance(op, tile.ClusterRankOp):
            rank = k.rank if k.rank is not None else k.imm(0, "b32")
            k.define(rewriter, op, [], Lowered(rank))
            return
        if isinstance(op, tile.ClusterIdOp):
            special = ptx.SpecialOp("%clusterid.x")
        else:
            assert isinstance(op, tile.ProgramIdOp | tile.NumProgramsOp)
            special = ptx.SpecialOp(self.SPECIAL[type(op)] + op.axis.data)
        k.define(rewriter, op, [special], Lowered(special.result))


def tile_counter(kernel: func.FuncOp) -> str:
    """The `.global` symbol of `kernel`'s tile counter (`tile.next_tile`)."""
    return f"{kernel.sym_name.data}__tile_counter"


class NextTile(DistributePattern):
    """`tile.next_tile`: `atom.global.inc` on the kernel's tile counter, which
    wraps to 0 after tiles - 1 (so a launch leaves it at zero)."""

    OPS = (tile.NextTileOp,)

    def rewrite(self, op: tile.NextTileOp, rewriter: PatternRewriter):
        k = self.k
        ops = Ops(k)
        tiles = ops.reg(k.lowered(op.tiles, op))
        bound = ops.alu("sub.u32", tiles, k.imm(1, "b32"))
        ticket = ops.add(ptx.TileTicketOp(tile_counter(k.kernel), bound))
        k.define(rewriter, op, ops, Lowered(ticket.results[0]))


def patterns(k: KernelState) -> list[DistributePattern]:
    return [RoleDispatch(k), SetMaxNReg(k), GridQuery(k), NextTile(k)]
