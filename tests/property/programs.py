"""A hypothesis strategy for random tile kernels, and the inputs to run them on.

The kernels have the shapes the passes must handle: loads outside loops (like Q in
attention), one or two loops in a row, one to three loads per iteration, chains of
dots (a dot's result rounded to bf16 and fed to the next, as P in attention; the
first dot either accumulates into the loop's carry, as in GEMM, or starts from
zero, as S = Q K^T does),
elementwise epilogues, and trip counts of 0, 1 or many (the loop bounds are run-time
tensor extents). Tiles are small (16 x 16) so the interpreters stay fast. With
`fp8`, a kernel may load and multiply e4m3 tiles (each dot's B operand then
transposed, K-major, the one layout wgmma reads 8-bit operands in).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

from tawa_xdsl.dtypes import DTYPES, cast

T = 16
"""Tiles are T x T; 16 keeps the interpreters fast, 64 is what wgmma can lower."""
EPILOGUE_OPS = (
    "scale",
    "add_bias",
    "relu",
    "leaky_relu",
    "exp2",
    "square",
    "round_bf16",
    "mask_columns",
    "add_distance",
    "clamp_row_max",
)
"""Elementwise and row steps after the loops. Between them they use every
tile op a kernel computes with: `tile.splat`; `tile.iota`, `tile.expand_dims`,
`tile.broadcast`, `tile.cmpi` and `tile.select` (the columns from T / 2 on
masked to zero, as attention masks keys); `tile.cmpf` (leaky ReLU: acc where
acc > 0, else acc / 8); `tile.sitofp` (a row's distance from the column, as
ALiBi); `tile.reduce` (each element at most half its row's
maximum: a row given another row's maximum shows; not x - max as softmax does,
which is NaN on a row an exp2 overflowed to inf)."""


@dataclass
class Loop:
    loads: int  # tiles loaded per iteration, one per input tensor
    dots: list[tuple[str, str, bool]]  # (lhs, rhs, transpose rhs) per dot of the chain
    trips: int  # iterations at run time
    fresh_first: bool = False  # first dot starts from zero (S = Q K^T), not the carry


@dataclass
class TileProgram:
    """A generated kernel: its text and how to call it."""

    pre_loads: int
    loops: list[Loop]
    epilogue: list[str]
    blocks: int  # programs in the grid (x)
    tile: int = T
    shared: frozenset[tuple[int, int]] = frozenset()
    """(loop, load) pairs that read the first row block, the same in every
    program, instead of the program's own rows: what clusters multicast."""
    name: str = "generated"
    element: str = "bf16"
    """The loaded tiles' and the dots' input type: bf16 or f8E4M3FN."""
    text: str = field(init=False)

    def __post_init__(self) -> None:
        self.text = _render(self)

    @property
    def grid(self) -> tuple[int]:
        return (self.blocks,)

    def make_args(self, seed: int) -> list[Any]:
        """Random inputs (M = blocks * T rows, K = trips * T columns per loop), a
        poisoned f32 output, a scale scalar."""
        rng = np.random.default_rng(seed)
        t = self.tile
        rows = self.blocks * t

        def tensor(cols: int) -> np.ndarray:
            return cast(rng.standard_normal((rows, cols)) / 4, DTYPES[self.element])

        args: list[Any] = [tensor(t) for _ in range(self.pre_loads)]
        for loop in self.loops:
            args += [tensor(loop.trips * t) for _ in range(loop.loads)]
        args.append(np.full((rows, t), np.nan, dtype=np.float32))
        args.append(np.float32(rng.uniform(0.5, 1.5)))
        return args


def _render(p: TileProgram) -> str:
    t = p.tile
    BF = f"tensor<{t}x{t}x{p.element}>"
    B16 = f"tensor<{t}x{t}xbf16>"
    F32 = f"tensor<{t}x{t}xf32>"
    DESC = f"!tile.desc<?x?x{p.element}, box = [{t}, {t}]>"
    OUT_DESC = f"!tile.desc<?x?xf32, box = [{t}, {t}]>"
    I32 = f"tensor<{t}x{t}xi32>"
    params = [f"%pre{i}: {DESC}" for i in range(p.pre_loads)]
    for j, loop in enumerate(p.loops):
        params += [f"%x{j}_{i}: {DESC}" for i in range(loop.loads)]
    params += [f"%out: {OUT_DESC}", "%s: f32"]
    lines = [
        f"func.func @{p.name}({', '.join(params)}) attributes {{tile.kernel}} {{",
        "  %pid = tile.program_id x",
        "  %c0 = arith.constant 0 : index",
        f"  %cT = arith.constant {t} : index",
        "  %m0 = arith.muli %pid, %cT : index",
        f"  %zero = arith.constant dense<0.000000e+00> : {F32}",
    ]
    lines += [
        f"  %p{i} = tile.load %pre{i}[%m0, %c0] : {DESC} -> {BF}"
        for i in range(p.pre_loads)
    ]
    acc = "%zero"
    for j, loop in enumerate(p.loops):
        lines.append(f"  %K{j} = tile.dim %x{j}_0, 1 : {DESC}")
        lines.append(
            f"  %acc{j} = scf.for %k{j} = %c0 to %K{j} step %cT "
            f"iter_args(%a{j} = {acc}) -> ({F32}) {{"
        )
        for i in range(loop.loads):
            row = "%c0" if (j, i) in p.shared else "%m0"
            lines.append(
                f"    %l{j}_{i} = tile.load %x{j}_{i}[{row}, %k{j}] : {DESC} -> {BF}"
            )
        current = "%zero" if loop.fresh_first else f"%a{j}"
        for d, (lhs, rhs, trans) in enumerate(loop.dots):
            lhs_v = f"%l{j}_{lhs}" if lhs.isdigit() else lhs
            if lhs == "chain":
                lines.append(f"    %r{j}_{d} = arith.truncf {current} : {F32} to {BF}")
                lhs_v = f"%r{j}_{d}"
            rhs_v = f"%l{j}_{rhs}" if rhs.isdigit() else f"%{rhs}"
            if trans:
                lines.append(f"    %t{j}_{d} = tile.trans {rhs_v} : {BF} -> {BF}")
                rhs_v = f"%t{j}_{d}"
            acc_in = f"%a{j}" if loop.fresh_first and d == 1 else current
            lines.append(
                f"    %d{j}_{d} = tile.dot {lhs_v}, {rhs_v}, {acc_in} : {BF}, {BF} -> {F32}"
            )
            current = f"%d{j}_{d}"
        if loop.fresh_first and len(loop.dots) == 1:
            lines.append(f"    %sum{j} = arith.addf {current}, %a{j} : {F32}")
            current = f"%sum{j}"
        lines.append(f"    scf.yield {current} : {F32}")
        lines.append("  }")
        acc = f"%acc{j}"
    for e, kind in enumerate(p.epilogue):
        v = f"%e{e}"
        match kind:
            case "scale":
                lines.append(f"  %sp{e} = tile.splat %s : f32 -> {F32}")
                lines.append(f"  {v} = arith.mulf {acc}, %sp{e} : {F32}")
            case "add_bias":
                lines.append(f"  %one{e} = arith.constant dense<1.250000e-01> : {F32}")
                lines.append(f"  {v} = arith.addf {acc}, %one{e} : {F32}")
            case "relu":
                lines.append(f"  {v} = arith.maximumf {acc}, %zero : {F32}")
            case "leaky_relu":
                lines += [
                    f"  %pos{e} = tile.cmpf ogt, {acc}, %zero : {F32} -> "
                    f"tensor<{t}x{t}xi1>",
                    f"  %slope{e} = arith.constant dense<1.250000e-01> : {F32}",
                    f"  %leak{e} = arith.mulf {acc}, %slope{e} : {F32}",
                    f"  {v} = tile.select %pos{e}, {acc}, %leak{e} : "
                    f"tensor<{t}x{t}xi1>, {F32}",
                ]
            case "exp2":
                lines.append(f"  {v} = math.exp2 {acc} : {F32}")
            case "square":
                lines.append(f"  {v} = arith.mulf {acc}, {acc} : {F32}")
            case "round_bf16":
                lines.append(f"  %b{e} = arith.truncf {acc} : {F32} to {B16}")
                lines.append(f"  {v} = arith.extf %b{e} : {B16} to {F32}")
            case "mask_columns":
                lines += _columns(e, t, "cols")
                lines += [
                    f"  %half{e} = arith.constant {t // 2} : i32",
                    f"  %halfs{e} = tile.splat %half{e} : i32 -> {I32}",
                    f"  %keep{e} = tile.cmpi slt, %cols{e}, %halfs{e} : {I32} -> "
                    f"tensor<{t}x{t}xi1>",
                    f"  {v} = tile.select %keep{e}, {acc}, %zero : "
                    f"tensor<{t}x{t}xi1>, {F32}",
                ]
            case "add_distance":  # acc + (row - column) / 8
                lines += _columns(e, t, "cols")
                lines += [
                    f"  %rid{e} = tile.iota : tensor<{t}xi32>",
                    f"  %rcol{e} = tile.expand_dims %rid{e}, axis = 1 : "
                    f"tensor<{t}xi32> -> tensor<{t}x1xi32>",
                    f"  %rows{e} = tile.broadcast %rcol{e} : tensor<{t}x1xi32> -> {I32}",
                    f"  %dist{e} = arith.subi %rows{e}, %cols{e} : {I32}",
                    f"  %distf{e} = tile.sitofp %dist{e} : {I32} -> {F32}",
                    f"  %eighth{e} = arith.constant dense<1.250000e-01> : {F32}",
                    f"  %pen{e} = arith.mulf %distf{e}, %eighth{e} : {F32}",
                    f"  {v} = arith.addf {acc}, %pen{e} : {F32}",
                ]
            case "clamp_row_max":
                lines += [
                    f"  %max{e} = tile.reduce max {acc}, axis = 1 : {F32} -> "
                    f"tensor<{t}xf32>",
                    f"  %maxc{e} = tile.expand_dims %max{e}, axis = 1 : "
                    f"tensor<{t}xf32> -> tensor<{t}x1xf32>",
                    f"  %maxb{e} = tile.broadcast %maxc{e} : tensor<{t}x1xf32> -> {F32}",
                    f"  %halfd{e} = arith.constant dense<5.000000e-01> : {F32}",
                    f"  %cap{e} = arith.mulf %maxb{e}, %halfd{e} : {F32}",
                    f"  {v} = arith.minimumf {acc}, %cap{e} : {F32}",
                ]
        acc = v
    lines += [
        f"  tile.store {acc}, %out[%m0, %c0] : {F32} -> {OUT_DESC}",
        "  func.return",
        "}",
    ]
    return "\n".join(lines) + "\n"


def _columns(e: int, t: int, name: str) -> list[str]:
    """`%{name}{e}`, the T x T i32 tile of each element's column."""
    return [
        f"  %cid{e} = tile.iota : tensor<{t}xi32>",
        f"  %crow{e} = tile.expand_dims %cid{e}, axis = 0 : tensor<{t}xi32> -> "
        f"tensor<1x{t}xi32>",
        f"  %{name}{e} = tile.broadcast %crow{e} : tensor<1x{t}xi32> -> "
        f"tensor<{t}x{t}xi32>",
    ]


@st.composite
def loops(
    draw: st.DrawFn, pre_loads: int, min_trips: int = 0, k_major: bool = False
) -> Loop:
    """A loop; `k_major`: every dot's B operand transposed (an 8-bit one)."""
    loads = draw(st.integers(1, 3))
    operands = [str(i) for i in range(loads)] + [f"p{i}" for i in range(pre_loads)]
    trans = st.just(True) if k_major else st.booleans()
    first = (
        draw(st.sampled_from([str(i) for i in range(loads)])),
        draw(st.sampled_from(operands)),
        draw(trans),
    )
    chained = draw(
        st.lists(
            st.tuples(st.just("chain"), st.sampled_from(operands), trans),
            max_size=2,
        )
    )
    trips = draw(st.sampled_from([t for t in (0, 1, 2, 3, 5, 7) if t >= min_trips]))
    return Loop(loads, [first, *chained], trips, fresh_first=draw(st.booleans()))


@st.composite
def tile_programs(
    draw: st.DrawFn,
    min_trips: int = 0,
    tile: int = T,
    shared: bool = False,
    fp8: bool = False,
) -> TileProgram:
    """Random kernels of `tile` x `tile` tiles; every loop runs at least
    `min_trips` (<= 7) iterations. With `shared`, some loop loads (at least one)
    read the same rows in every program; with `fp8`, a third of the kernels
    are e4m3 ones."""
    pre_loads = draw(st.integers(0, 1))
    element = draw(st.sampled_from(["bf16", "bf16", "f8E4M3FN"] if fp8 else ["bf16"]))
    k_major = element != "bf16"
    loop_list = draw(
        st.lists(loops(pre_loads, min_trips, k_major), min_size=1, max_size=2)
    )
    same: frozenset[tuple[int, int]] = frozenset()
    if shared:
        pairs = [(j, i) for j, lp in enumerate(loop_list) for i in range(lp.loads)]
        same = frozenset(draw(st.sets(st.sampled_from(pairs), min_size=1)))
    return TileProgram(
        pre_loads=pre_loads,
        loops=loop_list,
        epilogue=draw(st.lists(st.sampled_from(EPILOGUE_OPS), max_size=3)),
        blocks=draw(st.integers(1, 3 if shared else 2)),
        tile=tile,
        shared=same,
        element=element,
    )
