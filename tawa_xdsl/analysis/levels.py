"""The IR level a kernel is at, and the check every pass makes of its input.

A kernel goes down four levels: tile IR, aref IR (`aref-partition` made its
roles), nvgpu_async IR (`convert-aref-to-nvgpu-async` lowered it: it carries the
launch contract) and thread-level IR (`distribute-fragments`: it reads its
parameters with `ptx.param`). Each pass takes one level (`PASS_LEVELS`); the
pipeline drivers (`tawa-opt`, `tawa_xdsl.apply`) call `check_pass_input` before
each pass, so a pass run on IR above or below its level is refused at the
kernel, naming the pass and the level it takes, instead of failing inside on
ops it does not know. Below the thread level, an op no level lowers to PTX (a
`math` op without an instruction) is refused where it is written, before any
pass works on it.
"""

from __future__ import annotations

from enum import IntEnum

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import (
    IndexType,
    ModuleOp,
    TensorType,
    UnregisteredOp,
    i32,
)
from xdsl.ir import Operation

from tawa_xdsl.analysis.elementwise import narrow_arithmetic, unsupported_elementwise
from tawa_xdsl.contract import is_lowered
from tawa_xdsl.diagnostics import OpDiagnostic, each_kernel
from tawa_xdsl.dialects import aref, tile
from tawa_xdsl.signature import kernels


class Level(IntEnum):
    TILE = 0
    AREF = 1
    NVGPU = 2
    THREAD = 3


DESCRIPTION = {
    Level.TILE: "tile IR",
    Level.AREF: "aref IR (made by aref-partition)",
    Level.NVGPU: "nvgpu_async IR (made by convert-aref-to-nvgpu-async)",
    Level.THREAD: "thread-level IR (made by distribute-fragments)",
}

PARAMS_ATTR = "ptx.params"
"""What `distribute-fragments` sets on a kernel (`dialects.ptx.PARAMS_ATTR`,
not imported: the ptx dialect is large and tile passes never need it)."""

PASS_LEVELS: dict[str, Level] = {
    **dict.fromkeys(
        (
            "split-k",
            "stream-k",
            "tile-shape",
            "swap-operands",
            "reverse-grid",
            "cluster",
            "persistent",
            "aref-partition",
            "tawa-hopper-pipeline",
        ),
        Level.TILE,
    ),
    **dict.fromkeys(
        ("cooperative", "register-budget", "pipeline", "convert-aref-to-nvgpu-async"),
        Level.AREF,
    ),
    **dict.fromkeys(
        ("ping-pong", "select-store-path", "distribute-fragments"), Level.NVGPU
    ),
    **dict.fromkeys(
        (
            "ptx-skip-unit-scale",
            "ptx-contract-fma",
            "ptx-allocate",
            "ptx-lower-control-flow",
        ),
        Level.THREAD,
    ),
}
"""The level each of our passes takes (xDSL's own, such as canonicalize, take
any)."""

_MADE_BY = {
    Level.AREF: "aref-partition",
    Level.NVGPU: "convert-aref-to-nvgpu-async",
    Level.THREAD: "distribute-fragments",
}
"""The pass that takes a kernel down to each level."""
LOWERINGS = {"tawa-hopper-pipeline", *_MADE_BY.values()}
"""Passes that leave the level they take."""


def kernel_level(kernel: func.FuncOp) -> Level:
    """Where `kernel` is: what the last lowering that ran on it left there (a
    thread-level kernel written by hand may lack the parameter list: its ops
    tell)."""
    top = list(kernel.body.ops)
    if PARAMS_ATTR in kernel.attributes or any(o.dialect_name() == "ptx" for o in top):
        return Level.THREAD
    if is_lowered(kernel):
        return Level.NVGPU
    if any(isinstance(op, aref.WarpSpecializeOp) for op in top):
        return Level.AREF
    return Level.TILE


def check_pass_input(pass_name: str, module: ModuleOp) -> None:
    """Refuse a kernel that `pass_name` cannot take: one at another level than
    the pass's, or (below the thread level) one holding an op that no level
    lowers (see `unsupported_op`), or (at the tile and aref levels) one that
    writes no output. Every kernel is checked; their refusals are reported
    together. Passes not in `PASS_LEVELS` take any level."""
    if pass_name in PASS_LEVELS:
        each_kernel(kernels(module), lambda k: check_kernel_input(pass_name, k))


def check_kernel_input(pass_name: str, kernel: func.FuncOp) -> None:
    """`check_pass_input` for one kernel of a pass in `PASS_LEVELS`
    (`compile()` checks its kernel so, at once)."""
    wanted = PASS_LEVELS[pass_name]
    if len(blocks := kernel.body.blocks) != 1:  # parsed, or made so by a pass
        raise OpDiagnostic(
            kernel,
            f"{pass_name} takes a kernel whose body is one block of structured "
            f"control flow (scf.for, scf.while, scf.if); @{kernel.sym_name.data}'s "
            f"has {len(blocks)} blocks (cf branches, as convert-scf-to-cf leaves)",
        )
    level = kernel_level(kernel)
    if level != wanted:
        raise OpDiagnostic(kernel, _wrong_level(pass_name, wanted, kernel, level))
    if level < Level.THREAD:
        refuse_unsupported_ops(kernel)
    if level <= Level.AREF:
        refuse_no_output(kernel)


def refuse_no_output(kernel: func.FuncOp) -> None:
    """A diagnostic at a tile (or aref) kernel without a `tile.store`: its only
    effects are its stores (loads and the tile counter of `persistent{dynamic}`
    are no result), so it would compile to a launch that does nothing."""
    if not any(isinstance(op, tile.StoreOp) for op in kernel.walk()):
        raise OpDiagnostic(
            kernel,
            f"@{kernel.sym_name.data} writes no output: a tile kernel's only "
            "effect is its tile.store ops, and it has none (its launch would do "
            "nothing)",
        )


def refuse_unsupported_ops(kernel: func.FuncOp) -> None:
    """A diagnostic at the first op of `kernel` that no level lowers to PTX."""
    for op in kernel.walk():
        if (why := unsupported_op(op)) is not None:
            raise OpDiagnostic(op, why)


def unsupported_op(op: Operation) -> str | None:
    """Why `op` cannot be compiled, or None."""
    if isinstance(op, UnregisteredOp):  # --allow-unregistered-dialect parsed it
        return (
            f"{op.op_name.data} is not an op of a registered dialect: no level "
            "compiles it (the cleanups would drop it silently)"
        )
    if isinstance(op, func.CallOp):  # each kernel is lowered in a module alone
        return (
            f"func.call of @{op.callee.string_value()}: a tile kernel calls no "
            "functions; inline it"
        )
    if (why := high_rank_tile(op)) is not None:
        return why
    if isinstance(op, scf.ForOp) and op.lb.type not in (IndexType(), i32):
        return (
            f"scf.for counting in {op.lb.type}: a loop counts in index or i32 (a "
            "32-bit register); give it index bounds (arith.index_cast)"
        )
    if any(isinstance(r.type, tile.DescType) for r in op.results):
        return (
            f"{op.name} makes a !tile.desc: a tensor is a kernel parameter, loaded "
            "and stored as it is (its tensor map is made once, for that "
            "parameter); pick between tiles or stores instead of tensors"
        )
    if isinstance(op, tile.LoadOp) and (row := tma_row_bytes(op.desc.type)) % 16:
        return (
            f"box rows of {row} bytes: loads go through TMA, which moves rows of a "
            "multiple of 16 bytes (a tensor only stored may have any box)"
        )
    if isinstance(op, tile.ReduceOp) and (why := column_reduce_problem(op)):
        return why
    return unsupported_elementwise(op) or narrow_arithmetic(op)


def high_rank_tile(op: Operation) -> str | None:
    """Why `op`, which makes a tile of rank 3 or more, cannot be compiled, or
    None: the consumers hold a tile as a vector or a matrix (the accumulator
    layout's rows and columns), and a shared-memory slot one of those too."""
    for result in op.results:
        if isinstance(t := result.type, TensorType) and t.get_num_dims() > 2:
            *outer, rows, cols = t.get_shape()
            box = ", ".join(["1"] * len(outer) + [str(rows), str(cols)])
            return (
                f"a rank-{t.get_num_dims()} tile ({'x'.join(map(str, t.get_shape()))})"
                ": tiles in registers are vectors or matrices; load a box with "
                f"leading 1s as a matrix (box = [{box}] -> "
                f"tensor<{rows}x{cols}x{t.element_type}>) and loop over the rest"
            )
    return None


def column_reduce_problem(op: tile.ReduceOp) -> str | None:
    """Why a reduction along a tile's columns (axis 0 of a matrix: its rows are
    spread over the lanes and warps of the consumers, so the partials meet in
    shared memory, `nvgpu_async.column_reduce`) cannot be compiled, or None
    (also None for a reduction along the rows, the last axis)."""
    shape = op.source.type.get_shape()
    axis = op.axis.value.data
    if axis == len(shape) - 1:
        return None
    rows, cols = shape  # a tile of rank 3 is refused where it is made
    what = "a column reduction (axis 0)"
    if rows == 1 or cols == 1:
        return (
            f"{what} of a {rows}x{cols} tile, which is held as a vector: reduce "
            "along its other axis (or use it as it is)"
        )
    if cols % 8:
        return f"{what} of {cols} columns: a column tile holds whole 8-column groups"
    if rows % 64 and (rows > 64 or rows % 8):
        return (
            f"{what} of {rows} rows: the rows are reduced in whole 64-row blocks "
            "(the accumulator layout's, each warp a 16-row slab of each), or in "
            "one padded from a multiple of 8 rows under 64"
        )
    return None


def tma_row_bytes(desc: tile.DescType) -> int:
    """Bytes of one row (the innermost extent) of a descriptor's box."""
    return desc.get_box()[-1] * tile.element_bytes(desc.element_type)


def _wrong_level(pass_name: str, wanted: Level, kernel: func.FuncOp, at: Level) -> str:
    name = kernel.sym_name.data
    what = (
        f"{pass_name} takes {DESCRIPTION[wanted]}, but kernel @{name} is "
        f"{DESCRIPTION[at]}"
    )
    if at > wanted and pass_name in LOWERINGS:
        return f"{what}: it is lowered already"
    if at > wanted:
        return f"{what}: run {pass_name} before {_MADE_BY[Level(wanted + 1)]}"
    return f"{what}: run {_MADE_BY[wanted]} first"
