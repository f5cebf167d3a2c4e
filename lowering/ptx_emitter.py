"""PTX for sm_90a from a lowered (nvgpu_async) kernel.

The emitter walks the kernel once, in order, and maps SSA values to PTX virtual
registers; ptxas does register allocation. Tiles in registers become one register
per element the thread holds (`fragments.Geometry`), 16-bit tiles one per element
pair; a splat or splat constant stays a single scalar operand (`Uniform`) and a
broadcast is just a re-indexing of its source's registers, so neither costs an
instruction. An elementwise op writes its result over an operand that dies there,
which is what keeps the wgmma accumulator chain (and a rescaled accumulator) in
the same registers across loop iterations without copies.

Execution layout: warpgroup 0 is the producer; its thread 0 runs the producer
region. Warpgroups 1..W are consumers and run the consumer region together. The
block's shared memory is the dynamic `smem` array, rounded up to 1024 bytes.
A kernel in clusters declares `.reqnctapercluster` (so a plain launch works),
multicasts with `.multicast::cluster` and arrives in peer blocks through `mapa`.
The hardware facts this relies on (instruction rules, descriptors, layouts,
swizzle, barriers) are in docs/hopper.md.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import tile
from tawa_xdsl.dialects.nvgpu_async import FragmentKind
from tawa_xdsl.dialects.roles import THREADS_PER_WARPGROUP
from tawa_xdsl.dialects.tile import element_bytes
from tawa_xdsl.lowering.fragments import Geometry
from tawa_xdsl.lowering.ptx_skip_unit_scale import ROW_SCALE_REUSE
from tawa_xdsl.lowering.quad_transpose import quad_transpose
from xdsl.dialects import arith, func, scf
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.traits import IsTerminator

from tawa_xdsl.diagnostics import OpDiagnostic

HEADER = """.version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 1024 .b8 smem[];
"""

CONSUMER_BARRIER = 1  # named barrier of all consumer warpgroups (0 is the CTA's)
TURN_BARRIER0 = 2  # consumer warpgroup w's MMA turn barrier is TURN_BARRIER0 + w
K_MAJOR_DESC = (1 << 62) | (64 << 32) | (1 << 16)
"""128-byte swizzle, SBO 1024 bytes (8 rows), LBO unused: a K-major operand."""


def mn_major_desc(chunk_bytes: int) -> int:
    """128-byte swizzle, SBO 1024 bytes, LBO = bytes between 64-column chunks."""
    return (1 << 62) | (64 << 32) | ((chunk_bytes >> 4) << 16)


def f32_imm(x: float) -> str:
    return "0f{:08X}".format(struct.unpack("<I", struct.pack("<f", x))[0])


def is_16bit(t: Attribute) -> bool:
    return isinstance(t, BFloat16Type | Float16Type)


def ptx_float(t: Attribute) -> str:
    return "bf16" if isinstance(t, BFloat16Type) else "f16"


@dataclass
class Frag:
    """A register tile: one register per element (per element pair if 16-bit)."""

    geom: Geometry
    etype: Attribute
    regs: list[str]
    owned: bool = True


@dataclass
class Uniform:
    """A tile whose elements are all one scalar operand."""

    value: str
    etype: Attribute


@dataclass
class View:
    """A shared-memory tile: its address (u32 register) and layout."""

    addr: str
    shape: tuple[int, ...]
    transposed: bool


@dataclass
class Ring:
    base: str
    type: nv.SmemType


@dataclass
class Barriers:
    base: str


@dataclass
class GlobalTensor:
    ptr: str
    dims: list[str]
    strides: list[str]  # elements, one per dimension but the innermost
    etype: Attribute


@dataclass
class _StoreRows:
    """What every row of one register-tile store shares: the tensor, the
    thread's first row, the leading-index predicate and element offset."""

    target: GlobalTensor
    row0: str
    ok: str
    offset: str


@dataclass
class Regs:
    """Virtual register counters, declared once the body is emitted."""

    counts: dict[str, int] = field(default_factory=dict)
    CLASSES = {"p": ".pred", "r": ".b32", "rd": ".b64", "f": ".f32", "h": ".b16"}

    def new(self, cls: str) -> str:
        n = self.counts.get(cls, 0)
        self.counts[cls] = n + 1
        return f"%{cls}{n}"

    def declarations(self) -> list[str]:
        return [
            f"    .reg {self.CLASSES[c]} %{c}<{n}>;"
            for c, n in sorted(self.counts.items())
        ]


def reg_class(t: Attribute) -> str:
    if isinstance(t, IntegerType) and t.width.data == 1:
        return "p"
    if isinstance(t, Float32Type):
        return "f"
    if isinstance(t, IntegerType) and t.width.data == 64:
        return "rd"
    if is_16bit(t):
        return "r"  # packed pairs in tiles; scalars use 'h' explicitly
    return "r"


def int_suffix(t: Attribute) -> str:
    return "s32"


F32_BINARY = {
    arith.AddfOp: "add.f32",
    arith.SubfOp: "sub.f32",
    arith.MulfOp: "mul.f32",
    arith.DivfOp: "div.rn.f32",
    arith.MaximumfOp: "max.NaN.f32",
    arith.MinimumfOp: "min.NaN.f32",
    arith.MaxnumfOp: "max.f32",
    arith.MinnumfOp: "min.f32",
}
F32_UNARY = {
    arith.NegfOp: ["neg.f32 {d}, {a};"],
    mathd.Exp2Op: ["ex2.approx.ftz.f32 {d}, {a};"],
    mathd.ExpOp: ["mul.f32 {d}, {a}, 0f3FB8AA3B;", "ex2.approx.ftz.f32 {d}, {d};"],
    mathd.TanhOp: ["tanh.approx.f32 {d}, {a};"],
    mathd.Log2Op: ["lg2.approx.ftz.f32 {d}, {a};"],
    mathd.LogOp: ["lg2.approx.ftz.f32 {d}, {a};", "mul.f32 {d}, {d}, 0f3F317218;"],
    mathd.SqrtOp: ["sqrt.rn.f32 {d}, {a};"],
    mathd.RsqrtOp: ["rsqrt.approx.ftz.f32 {d}, {a};"],
    mathd.AbsFOp: ["abs.f32 {d}, {a};"],
    mathd.CeilOp: ["cvt.rpi.f32.f32 {d}, {a};"],
    mathd.FloorOp: ["cvt.rmi.f32.f32 {d}, {a};"],
}
I32_BINARY = {
    arith.AddiOp: "add.s32",
    arith.SubiOp: "sub.s32",
    arith.MuliOp: "mul.lo.s32",
    arith.AndIOp: "and.b32",
    arith.OrIOp: "or.b32",
    arith.XOrIOp: "xor.b32",
    arith.ShLIOp: "shl.b32",
    arith.ShRUIOp: "shr.u32",
    arith.ShRSIOp: "shr.s32",
    arith.MaxSIOp: "max.s32",
    arith.MinSIOp: "min.s32",
    arith.MaxUIOp: "max.u32",
    arith.MinUIOp: "min.u32",
    arith.DivSIOp: "div.s32",
    arith.RemSIOp: "rem.s32",
    arith.DivUIOp: "div.u32",
    arith.RemUIOp: "rem.u32",
}
CMP = {
    "eq": "eq",
    "ne": "ne",
    "slt": "lt",
    "sle": "le",
    "sgt": "gt",
    "sge": "ge",
    "ult": "lo",
    "ule": "ls",
    "ugt": "hi",
    "uge": "hs",
}


class KernelEmitter:
    """Emits one `.entry`. See the module docstring."""

    def __init__(self, kernel: func.FuncOp):
        self.kernel = kernel
        self.regs = Regs()
        self.lines: list[str] = []
        self.env: dict[SSAValue, object] = {}
        self.labels = 0
        launch = kernel.attributes["nvgpu_async.launch"]
        self.threads = launch.data["threads"].value.data
        self.smem = launch.data["smem"].value.data
        cluster = launch.data.get("cluster")
        self.cluster = cluster.value.data if isinstance(cluster, IntegerAttr) else 1
        self.warpgroups = self.threads // THREADS_PER_WARPGROUP - 1
        self.params: list[str] = []
        self.thread: dict[str, str] = {}
        self.row_base: dict[int, str] = {}

    # ----------------------------------------------------------- utilities

    def emit(self, line: str) -> None:
        self.lines.append("    " + line)

    def label(self, stem: str) -> str:
        self.labels += 1
        return f"L_{stem}_{self.labels}"

    def new(self, cls: str) -> str:
        return self.regs.new(cls)

    def reg(self, operand: str, cls: str = "r") -> str:
        """`operand` in a register (immediates are moved into one)."""
        if operand.startswith("%"):
            return operand
        r = self.new(cls)
        self.emit(
            f"mov.{'b32' if cls == 'r' else 'f32' if cls == 'f' else 'b64'} {r}, {operand};"
        )
        return r

    def value(self, v: SSAValue) -> object:
        return self.env[v]

    def scalar(self, v: SSAValue) -> str:
        x = self.env[v]
        assert isinstance(x, str), f"{v} is not a scalar"
        return x

    # ------------------------------------------------------------- entry

    def run(self) -> str:
        name = self.kernel.sym_name.data
        self._params()
        self._thread_ids()
        for op in self.kernel.body.block.ops:
            self.op(op)
        body = self.lines
        self.lines = []
        out = [
            f".visible .entry {name}(",
            ",\n".join("    " + p for p in self.params),
            ")",
        ]
        out += [f".maxntid {self.threads}, 1, 1", ".minnctapersm 1"]
        if self.cluster > 1:
            out.append(f".reqnctapercluster {self.cluster}, 1, 1")
        out.append("{")
        out += self.regs.declarations()
        out += body
        out += ["    ret;", "}", ""]
        return "\n".join(out)

    def _params(self) -> None:
        abi = self.kernel.attributes["nvgpu_async.abi"]
        assert isinstance(abi, ArrayAttr)
        names: set[str] = set()

        def param(decl: str, name: str, suffix: str = "") -> str:
            """Declare `.param DECL NAME SUFFIX` under a name no other parameter has."""
            while name in names:
                name += "_"
            names.add(name)
            self.params.append(f".param {decl} {name}{suffix}")
            return name

        for arg, entry in zip(self.kernel.body.block.args, abi.data, strict=True):
            base = "p_" + "".join(
                c if c.isalnum() else "_" for c in (arg.name_hint or "arg")
            )
            kind = entry.data.split(":")[0]
            t = arg.type
            if kind == "map":
                name = param(".align 64 .b8", base, "[128]")
                raw, generic = self.new("rd"), self.new("rd")
                self.emit(f"mov.b64 {raw}, {name};")
                self.emit(f"cvta.param.u64 {generic}, {raw};")
                self.env[arg] = generic
            elif kind == "global":
                assert isinstance(t, nv.GlobalTensorType)
                rank = len(t.get_shape())
                ptr = self.new("rd")
                self.emit(f"ld.param.u64 {ptr}, [{param('.u64', f'{base}_ptr')}];")
                dims, strides = [], []
                for k in range(rank):
                    dims.append(self.new("r"))
                    name = param(".u32", f"{base}_dim{k}")
                    self.emit(f"ld.param.u32 {dims[-1]}, [{name}];")
                for k in range(rank - 1):
                    strides.append(self.new("r"))
                    name = param(".u32", f"{base}_stride{k}")
                    self.emit(f"ld.param.u32 {strides[-1]}, [{name}];")
                global_ptr = self.new("rd")
                self.emit(f"cvta.to.global.u64 {global_ptr}, {ptr};")
                self.env[arg] = GlobalTensor(global_ptr, dims, strides, t.element_type)
            elif isinstance(t, Float32Type):
                r = self.new("f")
                self.emit(f"ld.param.f32 {r}, [{param('.f32', base)}];")
                self.env[arg] = r
            elif isinstance(t, IndexType | IntegerType) and reg_class(t) == "r":
                r = self.new("r")
                self.emit(f"ld.param.u32 {r}, [{param('.u32', base)}];")
                self.env[arg] = r
            else:
                raise OpDiagnostic(
                    self.kernel, f"kernel parameters of type {t} are not supported"
                )

    def _thread_ids(self) -> None:
        t = self.thread
        t["tid"] = self.new("r")
        self.emit(f"mov.u32 {t['tid']}, %tid.x;")
        t["smem"] = self.new("r")
        self.emit(f"mov.u32 {t['smem']}, smem;")
        self.emit(f"add.u32 {t['smem']}, {t['smem']}, 1023;")
        self.emit(f"and.b32 {t['smem']}, {t['smem']}, -1024;")
        t["leader"] = self.new("p")
        self.emit(f"setp.eq.u32 {t['leader']}, {t['tid']}, 0;")
        t["false"], t["true"] = self.new("p"), self.new("p")
        self.emit(f"setp.ne.u32 {t['false']}, {t['tid']}, {t['tid']};")
        self.emit(f"setp.eq.u32 {t['true']}, {t['tid']}, {t['tid']};")
        if self.cluster > 1:
            t["rank"], t["rank0"] = self.new("r"), self.new("p")
            self.emit(f"mov.u32 {t['rank']}, %cluster_ctarank;")
            self.emit(f"setp.eq.u32 {t['rank0']}, {t['rank']}, 0;")

    def _consumer_ids(self) -> None:
        """Per-thread coordinates inside the consumer warpgroups."""
        t = self.thread
        ctid = self.new("r")
        self.emit(f"sub.u32 {ctid}, {t['tid']}, {THREADS_PER_WARPGROUP};")
        for name, expr in (
            ("cwg", "shr.u32 {d}, {c}, 7;"),
            ("warp", "bfe.u32 {d}, {c}, 5, 2;"),
            ("g", "bfe.u32 {d}, {c}, 2, 3;"),
            ("t", "and.b32 {d}, {c}, 3;"),
        ):
            t[name] = self.new("r")
            self.emit(expr.format(d=t[name], c=ctid))
        t["col0"] = self.new("r")
        self.emit(f"shl.b32 {t['col0']}, {t['t']}, 1;")
        t["consumer_leader"] = self.new("p")
        self.emit(f"setp.eq.u32 {t['consumer_leader']}, {ctid}, 0;")
        t["wg_leader"] = self.new("p")
        t["wg_lane"] = self.new("r")
        self.emit(f"and.b32 {t['wg_lane']}, {ctid}, 127;")
        self.emit(f"setp.eq.u32 {t['wg_leader']}, {t['wg_lane']}, 0;")

    def row0(self, rows: int) -> str:
        """This thread's first row of a tile with `rows` rows: band + 16 w + g."""
        if rows not in self.row_base:
            r = self.new("r")
            band = rows // self.warpgroups
            self.emit(f"mul.lo.u32 {r}, {self.thread['cwg']}, {band};")
            self.emit(f"mad.lo.u32 {r}, {self.thread['warp']}, 16, {r};")
            self.emit(f"add.u32 {r}, {r}, {self.thread['g']};")
            self.row_base[rows] = r
        return self.row_base[rows]

    # ----------------------------------------------------------- dispatch

    def op(self, op: Operation) -> None:
        handler = self.HANDLERS.get(type(op))
        if handler is not None:
            handler(self, op)
            return
        if type(op) in F32_BINARY or type(op) in I32_BINARY:
            self.binary(op)
        elif type(op) in F32_UNARY:
            self.unary(op)
        else:
            raise OpDiagnostic(op, f"the PTX printer does not handle '{op.name}'")

    def block(self, block: Block) -> None:
        for op in block.ops:
            if not op.has_trait(IsTerminator):  # structured ops copy their operands
                self.op(op)

    # -------------------------------------------------------------- scalars

    def constant(self, op: arith.ConstantOp) -> None:
        v, t = op.value, op.result.type
        if isinstance(v, DenseIntOrFPElementsAttr):
            values = set(v.get_values())
            if len(values) != 1:
                raise OpDiagnostic(
                    op, "only splat tile constants (one value) can live in registers"
                )
            (x,) = values
            et = t.element_type
            # float tiles, 16-bit ones too, hold an f32 immediate (see _register_tile)
            imm = str(int(x)) if isinstance(et, IntegerType) else f32_imm(x)
            self.env[op.result] = Uniform(imm, et)
        elif isinstance(v, FloatAttr):
            self.env[op.result] = f32_imm(v.value.data)
        elif isinstance(v, IntegerAttr):
            self.env[op.result] = str(int(v.value.data))
        else:
            raise OpDiagnostic(op, f"constant {v} is not supported")

    def program_id(self, op: tile.ProgramIdOp) -> None:
        r = self.new("r")
        self.emit(f"mov.u32 {r}, %ctaid.{op.axis.data};")
        self.env[op.result] = r

    def cluster_id(self, op: tile.ClusterIdOp) -> None:
        r = self.new("r")
        self.emit(f"mov.u32 {r}, %clusterid.x;")
        self.env[op.result] = r

    def cluster_rank(self, op: tile.ClusterRankOp) -> None:
        self.env[op.result] = self.thread["rank"]

    def num_programs(self, op: tile.NumProgramsOp) -> None:
        r = self.new("r")
        self.emit(f"mov.u32 {r}, %nctaid.{op.axis.data};")
        self.env[op.result] = r

    def ceildiv(self, op: arith.CeilDivSIOp | arith.CeilDivUIOp) -> None:
        """ceil(a / b) for the non-negative trip counts it is used for: (a + b - 1) / b."""
        a, b = self.reg(self.scalar(op.lhs)), self.scalar(op.rhs)
        t, d = self.new("r"), self.new("r")
        self.emit(f"add.s32 {t}, {a}, {b};")
        self.emit(f"sub.s32 {t}, {t}, 1;")
        if b.isdigit() and _power_of_two(int(b)):
            self.emit(f"shr.s32 {d}, {t}, {int(b).bit_length() - 1};")
        else:
            self.emit(f"div.s32 {d}, {t}, {b};")
        self.env[op.result] = d

    def index_cast(self, op: arith.IndexCastOp) -> None:
        self.env[op.result] = self.env[op.input]

    def cmpi(self, op: arith.CmpiOp) -> None:
        pred = CMP[arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]]
        kind = "u32" if pred in ("lo", "ls", "hi", "hs") else "s32"
        p = self.new("p")
        a, b = self.scalar(op.lhs), self.scalar(op.rhs)
        self.emit(f"setp.{pred}.{kind} {p}, {self.reg(a)}, {b};")
        self.env[op.result] = p

    def select(self, op: arith.SelectOp) -> None:
        cls = reg_class(op.result.type)
        d = self.new(cls)
        suffix = {"f": "f32", "r": "b32", "rd": "b64"}[cls]
        self.emit(
            f"selp.{suffix} {d}, {self.scalar(op.lhs)}, {self.scalar(op.rhs)}, {self.scalar(op.cond)};"
        )
        self.env[op.result] = d

    # ------------------------------------------------------------- elementwise

    def _elements(self, v: SSAValue) -> Callable[[int], str]:
        x = self.env[v]
        if isinstance(x, str):
            return lambda k: x
        if isinstance(x, Uniform):
            return lambda k: x.value
        assert isinstance(x, Frag)
        return lambda k: x.regs[k]

    def _result_frag(
        self, op: Operation, cls: str
    ) -> tuple[Geometry | None, list[str] | None]:
        """The result's geometry and registers (reusing a dying operand's) or None
        when every operand is scalar or uniform."""
        t = op.results[0].type
        frags = [self.env[v] for v in op.operands if isinstance(self.env.get(v), Frag)]
        if not frags:
            return None, None
        geom = self._geometry(t)
        for v in op.operands:
            x = self.env.get(v)
            if (
                isinstance(x, Frag)
                and x.owned
                and reg_class(x.etype) == cls
                and not is_16bit(x.etype)
                and self._dies_here(v, op)
            ):
                return geom, list(x.regs)
        return geom, [self.new(cls) for _ in range(geom.count)]

    @staticmethod
    def _dies_here(v: SSAValue, op: Operation) -> bool:
        """`op` is the only use of `v` and runs as often as `v` is defined."""
        uses = list(v.uses)
        if len(uses) != 1:
            return False
        block = op.parent_block()
        if isinstance(v, BlockArgument):
            return v.block is block
        return v.owner.parent_block() is block

    def _geometry(self, t: Attribute) -> Geometry:
        layout = nv.fragment_layout(t)
        assert layout is not None, f"{t} has no register layout"
        return Geometry.of(t.get_shape(), layout)

    def binary(self, op: Operation) -> None:
        t = op.results[0].type
        et = t.element_type if isinstance(t, TensorType) else t
        if is_16bit(et):
            raise OpDiagnostic(
                op, f"'{op.name}' on 16-bit values: compute in f32 (arith.extf) first"
            )
        float_op = type(op) in F32_BINARY
        opcode = F32_BINARY[type(op)] if float_op else I32_BINARY[type(op)]
        cls = "f" if float_op else "r"
        a, b = self._elements(op.operands[0]), self._elements(op.operands[1])
        geom, regs = self._result_frag(op, cls)
        if geom is None:
            if isinstance(self.env[op.operands[0]], Uniform) and isinstance(
                self.env[op.operands[1]], Uniform
            ):
                raise OpDiagnostic(
                    op, "fold tile constants before lowering (run canonicalize)"
                )
            d = self.new(cls)
            lhs, rhs = self.reg(a(0), cls), b(0)
            if (
                opcode in ("div.u32", "rem.u32")
                and rhs.isdigit()
                and _power_of_two(int(rhs))
            ):
                n = int(rhs)
                if opcode == "div.u32":
                    self.emit(f"shr.u32 {d}, {lhs}, {n.bit_length() - 1};")
                else:
                    self.emit(f"and.b32 {d}, {lhs}, {n - 1};")
            else:
                self.emit(f"{opcode} {d}, {lhs}, {rhs};")
            self.env[op.results[0]] = d
            return
        first = self._uniform_register(op.operands[0], cls)
        skip = self._skip_unit_row_scale(op, regs)
        for k in range(geom.count):
            self.emit(f"{opcode} {regs[k]}, {first or a(k)}, {b(k)};")
        if skip:
            self.lines.append(f"{skip}:")
        self.env[op.results[0]] = Frag(geom, et, regs)

    def _skip_unit_row_scale(self, op: Operation, regs: list[str]) -> str | None:
        """Branch over an in-place `state *= broadcast(row)` of a loop-carried
        tile when every row factor this warp holds is 1.0; returns the label to
        place after the multiplies.

        Why: online softmax rescales its f32 accumulator, a loop-carried value,
        by alpha every key block, and alpha is exactly 1 for rows whose running
        max did not move (almost all, once a kernel quantizes its max, see
        examples/make_attention.py). The skip is exact (x * 1.0 == x) and costs
        four instructions against one multiply per register. Tile-level control
        flow is uniform, so the whole warp reaches the vote."""
        if type(op) is not arith.MulfOp:
            return None
        for state, factor in (op.operands, reversed(op.operands)):
            x, y = self.env[state], self.env[factor]
            if (
                isinstance(state, BlockArgument)
                and isinstance(state.owner.parent_op(), scf.ForOp)
                and isinstance(x, Frag)
                and isinstance(y, Frag)
                and x.regs == regs
            ):
                break
        else:
            return None
        factors = list(dict.fromkeys(y.regs))
        if len(factors) * ROW_SCALE_REUSE > len(regs):
            return None  # not a broadcast row: the vote would not pay
        moved = self.new("p")
        self.emit(f"setp.neu.f32 {moved}, {factors[0]}, 0f3F800000;")
        for r in factors[1:]:
            self.emit(f"setp.neu.or.f32 {moved}, {r}, 0f3F800000, {moved};")
        self.emit(f"vote.sync.any.pred {moved}, {moved}, 0xffffffff;")
        skip = self.label("unit_scale")
        self.emit(f"@!{moved} bra.uni {skip};")
        return skip

    def _uniform_register(self, v: SSAValue, cls: str) -> str | None:
        """A register for a uniform first operand (PTX wants one there), made once."""
        x = self.env[v]
        if isinstance(x, Uniform):
            return self.reg(x.value, cls)
        if isinstance(x, str):
            return self.reg(x, cls)
        return None

    def unary(self, op: Operation) -> None:
        lines = F32_UNARY[type(op)]
        a = self._elements(op.operands[0])
        geom, regs = self._result_frag(op, "f")
        if geom is None:
            d = self.new("f")
            for line in lines:
                self.emit(line.format(d=d, a=self.reg(a(0), "f")))
            self.env[op.results[0]] = d
            return
        for k in range(geom.count):
            for line in lines:
                self.emit(line.format(d=regs[k], a=a(k)))
        self.env[op.results[0]] = Frag(geom, Float32Type(), regs)

    def truncf(self, op: arith.TruncFOp) -> None:
        dst_t, src_t = op.result.type, op.input.type
        if not (
            isinstance(dst_t, TensorType)
            and isinstance(src_t, TensorType)
            and is_16bit(et := dst_t.element_type)
            and isinstance(src_t.element_type, Float32Type)
        ):
            raise OpDiagnostic(
                op, "arith.truncf is supported on f32 register tiles to bf16/f16"
            )
        src = self._register_tile(op, op.input)
        geom = self._geometry(dst_t)
        regs = []
        for k in range(0, geom.count, 2):
            r = self.new("r")
            self.emit(
                f"cvt.rn.{ptx_float(et)}x2.f32 {r}, {src.regs[k + 1]}, {src.regs[k]};"
            )
            regs.append(r)
        self.env[op.result] = Frag(geom, et, regs)

    def extf(self, op: arith.ExtFOp) -> None:
        src = self.env[op.input]
        if not isinstance(src, Frag) or not is_16bit(src.etype):
            raise OpDiagnostic(op, "arith.extf is supported on bf16/f16 register tiles")
        geom = self._geometry(op.result.type)
        regs = []
        for r in src.regs:
            lo, hi = self.new("h"), self.new("h")
            self.emit(f"mov.b32 {{{lo}, {hi}}}, {r};")
            for h in (lo, hi):
                f = self.new("f")
                self.emit(f"cvt.f32.{ptx_float(src.etype)} {f}, {h};")
                regs.append(f)
        self.env[op.result] = Frag(geom, Float32Type(), regs)

    def sitofp(self, op: arith.SIToFPOp) -> None:
        a = self._elements(op.input)
        x = self.env[op.input]
        if isinstance(x, Frag):
            geom = self._geometry(op.result.type)
            regs = [self.new("f") for _ in range(geom.count)]
            for k in range(geom.count):
                self.emit(f"cvt.rn.f32.s32 {regs[k]}, {self.reg(a(k))};")
            self.env[op.result] = Frag(geom, Float32Type(), regs)
        else:
            d = self.new("f")
            self.emit(f"cvt.rn.f32.s32 {d}, {self.reg(a(0))};")
            self.env[op.result] = d

    # ------------------------------------------------------------ tile ops

    def splat(self, op: tile.SplatOp) -> None:
        self.env[op.result] = Uniform(
            self.scalar(op.source), op.result.type.element_type
        )

    def expand_dims(self, op: tile.ExpandDimsOp) -> None:
        x = self.env[op.source]
        if isinstance(x, Frag):
            x = Frag(self._geometry(op.result.type), x.etype, x.regs, x.owned)
        self.env[op.result] = x

    def broadcast(self, op: tile.BroadcastOp) -> None:
        x = self.env[op.source]
        if isinstance(x, Uniform):
            self.env[op.result] = x
            return
        assert isinstance(x, Frag)
        geom = self._geometry(op.result.type)
        if x.geom.kind == geom.kind:
            self.env[op.result] = x
            return
        pick = geom.row_of_acc if x.geom.kind == FragmentKind.ROW else geom.col_of_acc
        self.env[op.result] = Frag(
            geom, x.etype, [x.regs[pick(k)] for k in range(geom.count)], False
        )

    def iota(self, op: tile.IotaOp) -> None:
        geom = self._geometry(op.result.type)
        regs = []
        for k in range(geom.count):
            r = self.new("r")
            if geom.kind == FragmentKind.ROW:
                self.emit(
                    f"add.u32 {r}, {self.row0(geom.shape[0])}, {geom.row_offset(k)};"
                )
            else:
                self.emit(f"add.u32 {r}, {self.thread['col0']}, {geom.col_offset(k)};")
            regs.append(r)
        self.env[op.result] = Frag(geom, op.result.type.element_type, regs)

    def reduce(self, op: tile.ReduceOp) -> None:
        src = self.env[op.source]
        if not isinstance(src, Frag) or src.geom.kind != FragmentKind.ACC:
            raise OpDiagnostic(
                op, "tile.reduce is supported on accumulator-layout tiles"
            )
        combine = (
            "max.NaN.f32"
            if op.kind.data == tile.ReduceKind.MAX
            else ("min.NaN.f32" if op.kind.data == tile.ReduceKind.MIN else "add.f32")
        )
        geom = self._geometry(op.result.type)
        regs = []
        for r in range(geom.count):
            members = [src.regs[k] for k in src.geom.row_members(r)]
            while len(members) > 1:
                nxt = []
                for i in range(0, len(members) - 1, 2):
                    d = self.new("f")
                    self.emit(f"{combine} {d}, {members[i]}, {members[i + 1]};")
                    nxt.append(d)
                if len(members) % 2:
                    nxt.append(members[-1])
                members = nxt
            acc = self.new("f")
            self.emit(f"mov.f32 {acc}, {members[0]};")
            for lane_mask in (1, 2):
                other = self.new("f")
                self.emit(f"shfl.sync.bfly.b32 {other}, {acc}, {lane_mask}, 31, -1;")
                self.emit(f"{combine} {acc}, {acc}, {other};")
            regs.append(acc)
        self.env[op.result] = Frag(geom, src.etype, regs)

    def tile_cmpi(self, op: tile.CmpiOp) -> None:
        pred = CMP[op.predicate.data]
        a, b = self._elements(op.lhs), self._elements(op.rhs)
        geom = self._geometry(op.result.type)
        regs = [self.new("p") for _ in range(geom.count)]
        for k in range(geom.count):
            self.emit(f"setp.{pred}.s32 {regs[k]}, {self.reg(a(k))}, {b(k)};")
        self.env[op.result] = Frag(geom, op.result.type.element_type, regs)

    def tile_select(self, op: tile.SelectOp) -> None:
        m, a, b = (
            self._elements(op.mask),
            self._elements(op.on_true),
            self._elements(op.on_false),
        )
        geom, regs = self._result_frag(op, "f")
        assert geom is not None
        for k in range(geom.count):
            self.emit(f"selp.f32 {regs[k]}, {a(k)}, {b(k)}, {m(k)};")
        self.env[op.result] = Frag(geom, Float32Type(), regs)

    # ----------------------------------------------------------- control

    def _materialize(self, v: SSAValue) -> object:
        """Fresh registers of the same shape as `v` (for loop and branch results)."""
        x = self.env[v]
        if isinstance(x, View):
            return View(self.new("r"), x.shape, x.transposed)
        if isinstance(x, Frag | Uniform):
            geom = self._geometry(v.type)
            et = v.type.element_type
            cls = "r" if is_16bit(et) else reg_class(et)
            n = geom.count // 2 if is_16bit(et) else geom.count
            return Frag(geom, et, [self.new(cls) for _ in range(n)])
        return self.new(reg_class(v.type))

    def _register_tile(self, op: Operation, v: SSAValue) -> Frag:
        """`v` as registers: a uniform tile (a splat, a splat constant) is written
        into fresh ones, so ops that need a fragment take either. A uniform 16-bit
        tile holds an f32 value, rounded here (one cvt per register pair)."""
        x = self.env[v]
        if isinstance(x, Frag):
            return x
        if not isinstance(x, Uniform):
            raise OpDiagnostic(op, f"{v.type} is not a register tile here")
        frag = self._materialize(v)
        assert isinstance(frag, Frag)
        if is_16bit(x.etype):
            f = self.reg(x.value, "f")
            for r in frag.regs:
                self.emit(f"cvt.rn.{ptx_float(x.etype)}x2.f32 {r}, {f}, {f};")
        else:
            self._copy_all([frag], [x])
        return frag

    def _copy_all(self, dsts: Sequence[object], srcs: Sequence[object]) -> None:
        """Parallel copy: every destination gets its source's value as before."""
        pairs = []
        for d, s in zip(dsts, srcs, strict=True):
            pairs += self._register_pairs(d, s)
        pairs = [(d, s) for d, s in pairs if d != s]
        written = {d for d, _ in pairs}
        if any(s in written for _, s in pairs):
            staged = []
            for d, s in pairs:
                tmp = self._temp_like(d)
                self._mov(tmp, s)
                staged.append((d, tmp))
            pairs = staged
        for d, s in pairs:
            self._mov(d, s)

    def _register_pairs(self, d: object, s: object) -> list[tuple[str, str]]:
        if isinstance(d, View):
            assert isinstance(s, View)
            return [(d.addr, s.addr)]
        if isinstance(d, Frag):
            if isinstance(s, Uniform):
                return [(r, s.value) for r in d.regs]
            assert isinstance(s, Frag)
            return list(zip(d.regs, s.regs, strict=True))
        assert isinstance(d, str) and isinstance(s, str)
        return [(d, s)]

    def _temp_like(self, r: str) -> str:
        return self.new("".join(c for c in r[1:] if c.isalpha()))

    def _mov(self, d: str, s: str) -> None:
        kind = {"p": "pred", "f": "f32", "r": "b32", "rd": "b64", "h": "b16"}[
            "".join(c for c in d[1:] if c.isalpha())
        ]
        self.emit(f"mov.{kind} {d}, {s};")

    def for_loop(self, op: scf.ForOp) -> None:
        body = op.body.block
        iv = self.new("r")
        self.emit(f"mov.u32 {iv}, {self.scalar(op.lb)};")
        carried = [self._materialize(v) for v in op.iter_args]
        self._copy_all(carried, [self.env[v] for v in op.iter_args])
        self.env[body.args[0]] = iv
        for arg, regs in zip(body.args[1:], carried, strict=True):
            self.env[arg] = regs
        head, end = self.label("loop"), self.label("done")
        done = self.new("p")
        self.lines.append(f"{head}:")
        self.emit(f"setp.ge.s32 {done}, {iv}, {self.scalar(op.ub)};")
        self.emit(f"@{done} bra {end};")
        self.block(body)
        self._copy_all(carried, [self.env[v] for v in body.last_op.operands])
        self.emit(f"add.s32 {iv}, {iv}, {self.scalar(op.step)};")
        self.emit(f"bra {head};")
        self.lines.append(f"{end}:")
        for r, regs in zip(op.results, carried, strict=True):
            self.env[r] = regs

    def while_loop(self, op: scf.WhileOp) -> None:
        """The before region runs at the head of every trip; its condition's
        values go to the after region's arguments and, on exit, the results."""
        before, after = op.before_region.block, op.after_region.block
        condition = before.last_op
        assert isinstance(condition, scf.ConditionOp)
        state = [self._materialize(v) for v in op.arguments]
        self._copy_all(state, [self.env[v] for v in op.arguments])
        for arg, regs in zip(before.args, state, strict=True):
            self.env[arg] = regs
        head, end = self.label("while"), self.label("done")
        self.lines.append(f"{head}:")
        self.block(before)
        passed = [self._materialize(v) for v in condition.args]
        self._copy_all(passed, [self.env[v] for v in condition.args])
        self.emit(f"@!{self.scalar(condition.condition)} bra {end};")
        for arg, regs in zip(after.args, passed, strict=True):
            self.env[arg] = regs
        self.block(after)
        self._copy_all(state, [self.env[v] for v in after.last_op.operands])
        self.emit(f"bra {head};")
        self.lines.append(f"{end}:")
        for r, regs in zip(op.results, passed, strict=True):
            self.env[r] = regs

    def if_op(self, op: scf.IfOp) -> None:
        other, end = self.label("else"), self.label("endif")
        self.emit(f"@!{self.scalar(op.cond)} bra {other};")
        then = op.true_region.block
        self.block(then)
        yields = list(then.last_op.operands) if op.results else []
        results = []
        for v in yields:
            x = self.env[v]
            reuse = (
                isinstance(x, Frag)
                and x.owned
                and isinstance(v.owner, Operation)
                and (v.owner.parent_block() is then)
            )
            results.append(x if reuse else self._materialize(v))
        self._copy_all(results, [self.env[v] for v in yields])
        self.emit(f"bra {end};")
        self.lines.append(f"{other}:")
        if op.false_region.blocks:
            otherwise = op.false_region.block
            self.block(otherwise)
            if op.results:
                self._copy_all(
                    results, [self.env[v] for v in otherwise.last_op.operands]
                )
        self.lines.append(f"{end}:")
        for r, x in zip(op.results, results, strict=True):
            self.env[r] = x

    # ----------------------------------------------------- nvgpu: memory

    def smem_alloc(self, op: nv.SmemAllocOp) -> None:
        r = self.new("r")
        self.emit(f"add.u32 {r}, {self.thread['smem']}, {op.offset.value.data};")
        self.env[op.result] = Ring(r, op.result.type)

    def mbarrier_alloc(self, op: nv.MBarrierAllocOp) -> None:
        r = self.new("r")
        self.emit(f"add.u32 {r}, {self.thread['smem']}, {op.offset.value.data};")
        self.env[op.result] = Barriers(r)

    def _element(self, base: str, index: SSAValue, stride: int) -> str:
        """The shared address base + index * stride (bytes)."""
        i = self.scalar(index)
        r = self.new("r")
        if i.startswith("%"):
            self.emit(f"mad.lo.u32 {r}, {i}, {stride}, {base};")
        else:
            self.emit(f"add.u32 {r}, {base}, {int(i) * stride};")
        return r

    def _barrier(self, bars: SSAValue, index: SSAValue) -> str:
        base = self.env[bars]
        assert isinstance(base, Barriers)
        return self._element(base.base, index, 8)

    def mbarrier_init(self, op: nv.MBarrierInitOp) -> None:
        base = self.env[op.barriers]
        for i in range(op.barriers.type.count.data):
            self.emit(
                f"@{self.thread['leader']} mbarrier.init.shared::cta.b64 [{base.base}+{8 * i}], "
                f"{op.count.value.data};"
            )

    def fence_mbarrier_init(self, op: Operation) -> None:
        self.emit(f"@{self.thread['leader']} fence.mbarrier_init.release.cluster;")

    def cta_barrier(self, op: Operation) -> None:
        self.emit("bar.sync 0;")

    def fence_proxy(self, op: Operation) -> None:
        self.emit("fence.proxy.async.shared::cta;")

    def mbarrier_wait(self, op: nv.MBarrierWaitOp) -> None:
        addr = self._barrier(op.barriers, op.index)
        parity = self.reg(self.scalar(op.parity))
        again, ok = self.label("wait"), self.new("p")
        self.lines.append(f"{again}:")
        self.emit(f"mbarrier.try_wait.parity.shared::cta.b64 {ok}, [{addr}], {parity};")
        self.emit(f"@!{ok} bra {again};")

    def mbarrier_arrive(self, op: nv.MBarrierArriveOp) -> None:
        addr = self._barrier(op.barriers, op.index)
        guard = (
            ""
            if op.scope.data == nv.ArriveScope.THREAD
            else f"@{self.thread['wg_leader']} "
        )
        if op.cluster_size == 1:
            self.emit(f"{guard}mbarrier.arrive.shared::cta.b64 _, [{addr}];")
            return
        # the same barrier in every block: thread r of the warpgroup arrives in
        # block r, all at once (release at CTA scope, as the slot's readers are
        # this block's own wgmmas, already retired)
        signals, remote = self.new("p"), self.new("r")
        lane = self.thread["wg_lane"]
        self.emit(f"setp.lt.u32 {signals}, {lane}, {op.cluster_size};")
        self.emit(f"@{signals} mapa.shared::cluster.u32 {remote}, {addr}, {lane};")
        self.emit(f"@{signals} mbarrier.arrive.shared::cluster.b64 _, [{remote}];")

    def cluster_barrier(self, op: Operation) -> None:
        # not .aligned: the producer warps reach the exit from diverged branches
        self.emit("barrier.cluster.arrive.release;")
        self.emit("barrier.cluster.wait.acquire;")

    def mbarrier_arrive_expect_tx(self, op: nv.MBarrierArriveExpectTxOp) -> None:
        addr = self._barrier(op.barriers, op.index)
        self.emit(
            f"mbarrier.arrive.expect_tx.shared::cta.b64 _, [{addr}], {op.bytes.value.data};"
        )

    def _slot(self, ring: Ring, slot: SSAValue) -> str:
        return self._element(ring.base, slot, ring.type.slot_bytes)

    def _coords(self, coords: Sequence[SSAValue]) -> list[str]:
        """TMA coordinates in registers, innermost first."""
        return [self.reg(self.scalar(c)) for c in coords][::-1]

    @staticmethod
    def _chunk(ring: Ring, tensor_map: SSAValue) -> tuple[int, int]:
        """(columns, bytes) of one box: a swizzle chunk of the tile."""
        box = tensor_map.type.get_box()
        return box[-1], element_bytes(ring.type.element_type) * _product(box)

    def _boxes(
        self,
        ring: Ring,
        tensor_map: SSAValue,
        regs: list[str],
        count: int | None = None,
    ) -> list[tuple[str, int]]:
        """A tile moved by TMA is a row of boxes, one per swizzle chunk: for each
        of the first `count` (all by default) from coordinates `regs`, its
        coordinates (innermost first) and its byte offset from the first."""
        chunk_cols, chunk_bytes = self._chunk(ring, tensor_map)
        if count is None:
            count = ring.type.get_tile()[-1] // chunk_cols
        boxes = []
        for c in range(count):
            inner = regs[0]
            if c:
                inner = self.new("r")
                self.emit(f"add.s32 {inner}, {regs[0]}, {c * chunk_cols};")
            boxes.append((", ".join([inner, *regs[1:]]), c * chunk_bytes))
        return boxes

    def tma_load(self, op: nv.TMALoadOp) -> None:
        ring = self.env[op.buffer]
        assert isinstance(ring, Ring)
        dst = self._slot(ring, op.slot)
        bar = self._barrier(op.barriers, op.barrier)
        tmap = self.env[op.tensor_map]
        regs = self._coords(op.coords)
        size, count = op.cluster_size, op.num_boxes
        guard = multicast = tail = ""
        if size > 1:
            # this block's share of the boxes (`TMALoadOp.boxes_of`), into all
            mask = self.new("h")
            self.emit(f"mov.b16 {mask}, {(1 << size) - 1};")
            multicast = ".multicast::cluster"
            tail = f", {mask}"
            if count % size:
                guard = f"@{self.thread['rank0']} "
            else:
                count //= size
                chunk_cols, chunk_bytes = self._chunk(ring, op.tensor_map)
                rank = self.thread["rank"]
                inner, first = self.new("r"), self.new("r")
                self.emit(
                    f"mad.lo.s32 {inner}, {rank}, {count * chunk_cols}, {regs[0]};"
                )
                self.emit(f"mad.lo.u32 {first}, {rank}, {count * chunk_bytes}, {dst};")
                regs[0], dst = inner, first
        for where, offset in self._boxes(ring, op.tensor_map, regs, count):
            self.emit(
                f"{guard}cp.async.bulk.tensor.{len(op.coords)}d.shared::cluster.global."
                f"mbarrier::complete_tx::bytes{multicast} [{dst}+{offset}], "
                f"[{tmap}, {{{where}}}], [{bar}]{tail};"
            )

    def prefetch_tensor_map(self, op: nv.PrefetchTensorMapOp) -> None:
        self.emit(f"prefetch.tensormap [{self.env[op.tensor_map]}];")

    def tma_store(self, op: nv.TMAStoreOp) -> None:
        ring = self.env[op.buffer]
        assert isinstance(ring, Ring)
        src = self._slot(ring, op.slot)
        tmap = self.env[op.tensor_map]
        for where, offset in self._boxes(ring, op.tensor_map, self._coords(op.coords)):
            self.emit(
                f"@{self.thread['consumer_leader']} cp.async.bulk.tensor."
                f"{len(op.coords)}d.global.shared::cta.bulk_group [{tmap}, {{{where}}}], "
                f"[{src}+{offset}];"
            )

    def tma_store_commit(self, op: Operation) -> None:
        self.emit(f"@{self.thread['consumer_leader']} cp.async.bulk.commit_group;")

    def tma_store_wait(self, op: nv.TMAStoreWaitOp) -> None:
        self.emit(
            f"@{self.thread['consumer_leader']} cp.async.bulk.wait_group.read "
            f"{op.pending.value.data};"
        )

    def consumer_barrier(self, op: Operation) -> None:
        self.emit(
            f"bar.sync {CONSUMER_BARRIER}, {THREADS_PER_WARPGROUP * self.warpgroups};"
        )

    def mma_turn_init(self, op: Operation) -> None:
        """Name this warpgroup's turn barrier (TURN_BARRIER0 + w) and the next
        one's; the last warpgroup arrives on warpgroup 0's, so that it goes first."""
        t, n = self.thread, self.warpgroups
        t["turn_own"], t["turn_next"] = self.new("r"), self.new("r")
        self.emit(f"add.u32 {t['turn_own']}, {t['cwg']}, {TURN_BARRIER0};")
        self.emit(f"add.u32 {t['turn_next']}, {t['cwg']}, 1;")
        self.emit(f"rem.u32 {t['turn_next']}, {t['turn_next']}, {n};")
        self.emit(f"add.u32 {t['turn_next']}, {t['turn_next']}, {TURN_BARRIER0};")
        last = self.new("p")
        self.emit(f"setp.eq.u32 {last}, {t['cwg']}, {n - 1};")
        self.emit(f"@{last} bar.arrive {TURN_BARRIER0}, {2 * THREADS_PER_WARPGROUP};")

    def mma_turn_begin(self, op: Operation) -> None:
        self.emit(f"bar.sync {self.thread['turn_own']}, {2 * THREADS_PER_WARPGROUP};")

    def mma_turn_end(self, op: Operation) -> None:
        self.emit(
            f"bar.arrive {self.thread['turn_next']}, {2 * THREADS_PER_WARPGROUP};"
        )

    def smem_store(self, op: nv.SmemStoreOp) -> None:
        """Each thread writes its accumulator elements into the staging tile, in the
        128-byte-swizzled layout TMA reads: 16-byte chunk k of row r sits at chunk
        k ^ (r % 8), and r % 8 is the thread's g for every row it holds."""
        value = self._register_tile(op, op.value)
        ring = self.env[op.buffer]
        assert isinstance(ring, Ring), "the lowering stages into smem_alloc buffers"
        if value.geom.kind != FragmentKind.ACC:
            raise OpDiagnostic(op, "only accumulator-layout tiles can be staged")
        geom, et = value.geom, value.etype
        esize = element_bytes(et)
        rows = geom.rows
        chunk_cols = nv.SWIZZLE_BYTES // esize
        base = self._slot(ring, op.slot)
        row_addr = self.new("r")  # this thread's first row, 128 bytes per row
        self.emit(f"mad.lo.u32 {row_addr}, {self.row0(rows)}, 128, {base};")
        g16 = self.new("r")
        self.emit(f"shl.b32 {g16}, {self.thread['g']}, 4;")
        t_bytes = self.new("r")  # the thread's column pair within 8 columns
        self.emit(f"mul.lo.u32 {t_bytes}, {self.thread['t']}, {2 * esize};")
        half = geom.cols // 2
        for j in range(geom.cols // 8):
            chunk, in_chunk = divmod(8 * j, chunk_cols)
            byte = self.new("r")
            self.emit(f"add.u32 {byte}, {t_bytes}, {in_chunk * esize};")
            swizzled = self.new("r")
            self.emit(f"and.b32 {swizzled}, {byte}, -16;")
            self.emit(f"xor.b32 {swizzled}, {swizzled}, {g16};")
            self.emit(f"and.b32 {byte}, {byte}, 15;")
            self.emit(f"add.u32 {swizzled}, {swizzled}, {byte};")
            self.emit(f"add.u32 {swizzled}, {swizzled}, {row_addr};")
            for b in range(geom.blocks):
                for h in (0, 1):
                    i = b * half + 4 * j + 2 * h  # first of the pair
                    offset = chunk * rows * nv.SWIZZLE_BYTES + (64 * b + 8 * h) * 128
                    if is_16bit(et):
                        self.emit(
                            f"st.shared.b32 [{swizzled}+{offset}], {value.regs[i // 2]};"
                        )
                    else:
                        pair = f"{{{value.regs[i]}, {value.regs[i + 1]}}}"
                        self.emit(f"st.shared.v2.f32 [{swizzled}+{offset}], {pair};")

    def smem_slot(self, op: nv.SmemSlotOp) -> None:
        ring = self.env[op.buffer]
        self.env[op.result] = View(
            self._slot(ring, op.slot), op.result.type.get_shape(), False
        )

    def smem_trans(self, op: nv.SmemTransOp) -> None:
        v = self.env[op.source]
        self.env[op.result] = View(v.addr, op.result.type.get_shape(), not v.transposed)

    def smem_load(self, op: nv.SmemLoadOp) -> None:
        view = self.env[op.source]
        geom = self._geometry(op.result.type)
        et = op.result.type.element_type
        if geom.kind != FragmentKind.COL or len(view.shape) != 1:
            raise OpDiagnostic(
                op,
                "only vector tiles (a bias) can be read from shared memory into registers",
            )
        esize = element_bytes(et)
        col = self.new("r")
        self.emit(f"mad.lo.u32 {col}, {self.thread['col0']}, {esize}, {view.addr};")
        regs = []
        for j in range(geom.count // 2):
            if is_16bit(et):
                r = self.new("r")
                self.emit(f"ld.shared.b32 {r}, [{col}+{8 * j * esize}];")
                regs.append(r)
            else:
                a, b = self.new("f"), self.new("f")
                self.emit(f"ld.shared.v2.f32 {{{a}, {b}}}, [{col}+{8 * j * esize}];")
                regs += [a, b]
        self.env[op.result] = Frag(geom, et, regs)

    # -------------------------------------------------------------- wgmma

    def wgmma_fence(self, op: Operation) -> None:
        self.emit("wgmma.fence.sync.aligned;")

    def wgmma_commit(self, op: Operation) -> None:
        self.emit("wgmma.commit_group.sync.aligned;")

    def wgmma_wait(self, op: nv.WgmmaWaitGroupOp) -> None:
        self.emit(f"wgmma.wait_group.sync.aligned {op.pending.value.data};")

    def _desc(self, addr: str, const: int) -> str:
        t, d = self.new("r"), self.new("rd")
        self.emit(f"bfe.u32 {t}, {addr}, 4, 14;")
        self.emit(f"cvt.u64.u32 {d}, {t};")
        self.emit(f"or.b64 {d}, {d}, {const};")
        return d

    def wgmma(self, op: nv.WgmmaOp) -> None:
        (m, k), n = op.lhs.type.get_shape(), op.rhs.type.get_shape()[1]
        acc = self.env[op.acc]
        geom = self._geometry(op.acc.type)
        et = op.rhs.type.element_type
        kind = ptx_float(et)
        zero_init = isinstance(acc, Uniform) and acc.value == f32_imm(0.0)
        if isinstance(acc, Frag) and acc.owned and self._dies_here(op.acc, op):
            regs = acc.regs
        else:
            regs = [self.new("f") for _ in range(geom.count)]
            if not zero_init:
                self._copy_all([Frag(geom, Float32Type(), regs)], [acc])
        per_block = n // 2
        rows_wg = m // self.warpgroups
        b_view = self.env[op.rhs]
        if b_view.transposed:
            b_desc = self._desc(b_view.addr, K_MAJOR_DESC)
            b_off = lambda s: (s // 4) * n * 128 + (s % 4) * 32  # noqa: E731
            trans_b = 0
        else:
            b_desc = self._desc(b_view.addr, mn_major_desc(k * 128))
            b_off = lambda s: s * 16 * 128  # noqa: E731
            trans_b = 1
        lhs = self.env[op.lhs]
        if isinstance(lhs, View):
            a_band = self.new("r")
            self.emit(
                f"mad.lo.u32 {a_band}, {self.thread['cwg']}, {rows_wg * 128}, {lhs.addr};"
            )
            a_desc = self._desc(a_band, K_MAJOR_DESC)
        for s in range(k // 16):
            b_d = self._offset_desc(b_desc, b_off(s))
            for blk in range(geom.blocks):
                d_regs = ", ".join(regs[blk * per_block : (blk + 1) * per_block])
                scale = (
                    self.thread["false"]
                    if zero_init and s == 0
                    else self.thread["true"]
                )
                shape = f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{kind}.{kind}"
                if isinstance(lhs, View):
                    a_d = self._offset_desc(
                        a_desc, (s // 4) * m * 128 + blk * 64 * 128 + (s % 4) * 32
                    )
                    self.emit(
                        f"{shape} {{{d_regs}}}, {a_d}, {b_d}, {scale}, 1, 1, 0, {trans_b};"
                    )
                else:
                    base = blk * (k // 4) + 4 * s
                    a_regs = ", ".join(lhs.regs[base : base + 4])
                    self.emit(
                        f"{shape} {{{d_regs}}}, {{{a_regs}}}, {b_d}, {scale}, 1, 1, {trans_b};"
                    )
        self.env[op.result] = Frag(geom, Float32Type(), regs)

    def _offset_desc(self, desc: str, offset_bytes: int) -> str:
        if not offset_bytes:
            return desc
        d = self.new("rd")
        self.emit(f"add.s64 {d}, {desc}, {offset_bytes >> 4};")
        return d

    # -------------------------------------------------------------- stores

    def store_global(self, op: nv.StoreGlobalOp) -> None:
        """Masked stores of an accumulator-layout tile, by one of three paths
        chosen with uniform branches (the coordinates are the same in every
        thread): a 16-bit tile whose columns are all inside the tensor and start
        16-byte aligned (the usual case: a full tile at a multiple of 8) takes
        `_store_vectors`; any other tile stores element pairs, or single
        elements where the first column is odd (a pair there is not aligned
        for one store: the GPU faults on a misaligned address)."""
        value = self._register_tile(op, op.value)
        target = self.env[op.target]
        assert isinstance(target, GlobalTensor)
        if value.geom.kind != FragmentKind.ACC:
            raise OpDiagnostic(op, "stores of accumulator-layout tiles are supported")
        self.store_tile(value, target, [self.reg(self.scalar(i)) for i in op.indices])

    def store_tile(self, value: Frag, target: GlobalTensor, idx: list[str]) -> None:
        """The stores of `store_global`: `idx` are the tile's coordinates in
        `target`, in registers."""
        rank = len(idx)
        ok = self.new("p")
        self.emit(f"mov.pred {ok}, {self.thread['true']};")
        offset = self.new("rd")
        self.emit(f"mov.u64 {offset}, 0;")
        for dim in range(rank - 2):  # leading dimensions: a box of extent 1
            inside = self.new("p")  # unsigned: a negative index is outside too
            self.emit(f"setp.lt.u32 {inside}, {idx[dim]}, {target.dims[dim]};")
            self.emit(f"and.pred {ok}, {ok}, {inside};")
            self.emit(
                f"mad.wide.u32 {offset}, {idx[dim]}, {target.strides[dim]}, {offset};"
            )
        row0 = self.new("r")
        self.emit(f"add.s32 {row0}, {idx[rank - 2]}, {self.row0(value.geom.rows)};")
        rows = _StoreRows(target, row0, ok, offset)
        col, cols_dim = idx[rank - 1], target.dims[rank - 1]
        odd, low = self.new("p"), self.new("r")
        self.emit(f"and.b32 {low}, {col}, 1;")
        self.emit(f"setp.ne.u32 {odd}, {low}, 0;")
        pairs, singles, done = (
            self.label("store_pairs"),
            self.label("store_singles"),
            self.label("stored"),
        )
        if is_16bit(value.etype) and value.geom.cols % 32 == 0:
            fits, low, last = self.new("p"), self.new("r"), self.new("r")
            self.emit(f"and.b32 {low}, {col}, 7;")
            self.emit(f"setp.eq.u32 {fits}, {low}, 0;")
            self.emit(f"setp.ge.and.s32 {fits}, {col}, 0, {fits};")
            self.emit(f"sub.s32 {last}, {cols_dim}, {value.geom.cols};")
            self.emit(f"setp.le.and.s32 {fits}, {col}, {last}, {fits};")
            self.emit(f"@!{fits} bra.uni {pairs};")
            self._store_vectors(value, rows, col)
            self.emit(f"bra.uni {done};")
        self.lines.append(f"{pairs}:")
        self.emit(f"@{odd} bra.uni {singles};")
        self._store_pairs(value, rows, col, paired=True)
        self.emit(f"bra.uni {done};")
        self.lines.append(f"{singles}:")
        self._store_pairs(value, rows, col, paired=False)
        self.lines.append(f"{done}:")

    def _store_row(self, rows: _StoreRows, offset: int) -> tuple[str, str]:
        """(predicate, element offset) of this thread's row `offset` rows below
        its first: inside the tensor, and the element offset of its column 0."""
        row, inside, addr = self.new("r"), self.new("p"), self.new("rd")
        self.emit(f"add.s32 {row}, {rows.row0}, {offset};")
        self.emit(f"setp.lt.u32 {inside}, {row}, {rows.target.dims[-2]};")
        self.emit(f"and.pred {inside}, {inside}, {rows.ok};")
        self.emit(
            f"mad.wide.u32 {addr}, {row}, {rows.target.strides[-1]}, {rows.offset};"
        )
        return inside, addr

    def _store_vectors(self, value: Frag, rows: _StoreRows, col: str) -> None:
        """Every column inside: quads trade registers (`quad_transpose`) so each
        lane stores one 16-byte group, 8 columns, per `st.global.v4`."""
        geom, target = value.geom, rows.target
        esize = element_bytes(value.etype)
        bits = {}
        for mask in (2, 1):
            bit, upper = self.new("r"), self.new("p")
            self.emit(f"and.b32 {bit}, {self.thread['t']}, {mask};")
            self.emit(f"setp.ne.u32 {upper}, {bit}, 0;")
            bits[mask] = upper
        lane_col = self.new("r")  # lane t stores groups 4q + t: column 8 t
        self.emit(f"mad.lo.u32 {lane_col}, {self.thread['t']}, 8, {col};")
        quarter = geom.cols // 4  # packed registers per row block
        for b in range(geom.blocks):
            for h in (0, 1):
                inside, addr = self._store_row(rows, 64 * b + 8 * h)
                el = self.new("rd")
                self.emit(f"cvt.u64.u32 {el}, {lane_col};")
                self.emit(f"add.s64 {el}, {el}, {addr};")
                self.emit(f"mad.lo.u64 {el}, {el}, {esize}, {target.ptr};")
                for q in range(geom.cols // 32):
                    x = [
                        value.regs[b * quarter + 2 * (4 * q + k) + h] for k in range(4)
                    ]
                    y = quad_transpose(
                        x, bits.__getitem__, lambda: self.new("r"), self.emit
                    )
                    self.emit(
                        f"@{inside} st.global.v4.b32 [{el}+{32 * esize * q}], "
                        f"{{{', '.join(y)}}};"
                    )

    def _store_pairs(
        self, value: Frag, rows: _StoreRows, col: str, paired: bool
    ) -> None:
        """Any tile, any bounds: each lane stores its column pairs, masked per
        element (a pair half inside stores its first element alone), or, when
        not `paired` (an odd first column, whose pairs are not aligned for one
        store), every element on its own."""
        geom, et, target = value.geom, value.etype, rows.target
        esize = element_bytes(et)
        col0 = self.new("r")
        self.emit(f"add.s32 {col0}, {col}, {self.thread['col0']};")
        cols = []
        for j in range(geom.cols // 8):
            c, second = self.new("r"), self.new("r")
            first_in, second_in = self.new("p"), self.new("p")
            self.emit(f"add.s32 {c}, {col0}, {8 * j};")
            self.emit(f"add.s32 {second}, {c}, 1;")
            self.emit(f"setp.lt.u32 {first_in}, {c}, {target.dims[-1]};")
            self.emit(f"setp.lt.u32 {second_in}, {second}, {target.dims[-1]};")
            cols.append((c, first_in, second_in))
        half = geom.cols // 2
        for b in range(geom.blocks):
            for h in (0, 1):
                inside, addr = self._store_row(rows, 64 * b + 8 * h)
                for j, (c, first_in, second_in) in enumerate(cols):
                    i = b * half + 4 * j + 2 * h  # first of the pair
                    el, p0, p1 = self.new("rd"), self.new("p"), self.new("p")
                    self.emit(f"cvt.s64.s32 {el}, {c};")  # -1 when col is odd
                    self.emit(f"add.s64 {el}, {el}, {addr};")
                    self.emit(f"mad.lo.u64 {el}, {el}, {esize}, {target.ptr};")
                    self.emit(f"and.pred {p0}, {first_in}, {inside};")
                    self.emit(f"and.pred {p1}, {second_in}, {inside};")
                    if is_16bit(et):
                        packed = value.regs[i // 2]
                        x0, x1 = self.new("h"), self.new("h")
                        self.emit(f"mov.b32 {{{x0}, {x1}}}, {packed};")
                        wide, single = "b32", "b16"
                    else:
                        x0, x1 = value.regs[i], value.regs[i + 1]
                        packed, wide, single = f"{{{x0}, {x1}}}", "v2.f32", "f32"
                    if paired:  # p1: both inside (p1 implies p0), p0: the first alone
                        self.emit(f"xor.pred {p0}, {p0}, {p1};")
                        self.emit(f"@{p1} st.global.{wide} [{el}], {packed};")
                        self.emit(f"@{p0} st.global.{single} [{el}], {x0};")
                    else:
                        self.emit(f"@{p0} st.global.{single} [{el}], {x0};")
                        self.emit(f"@{p1} st.global.{single} [{el}+{esize}], {x1};")

    # --------------------------------------------------------------- roles

    def setmaxnreg(self, op: nv.SetMaxNRegOp) -> None:
        self.emit(f"setmaxnreg.{op.action.data}.sync.aligned.u32 {op.regs.value.data};")

    def role_dispatch(self, op: nv.RoleDispatchOp) -> None:
        wg = self.new("r")
        producer = self.new("p")
        self.emit(f"shr.u32 {wg}, {self.thread['tid']}, 7;")
        self.emit(f"setp.eq.u32 {producer}, {wg}, 0;")
        consumer_label, end = self.label("consumer"), self.label("exit")
        self.emit(f"@!{producer} bra {consumer_label};")
        first = op.producer.block.first_op
        if isinstance(first, nv.SetMaxNRegOp):
            self.setmaxnreg(first)
        self.emit(f"@!{self.thread['leader']} bra {end};")
        for o in op.producer.block.ops:
            if o is not first or not isinstance(o, nv.SetMaxNRegOp):
                self.op(o)
        self.emit(f"bra {end};")
        self.lines.append(f"{consumer_label}:")
        self._consumer_ids()
        self.block(op.consumer.block)
        self.lines.append(f"{end}:")

    HANDLERS: dict[type, Callable] = {}


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _product(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


KernelEmitter.HANDLERS = {
    arith.ConstantOp: KernelEmitter.constant,
    arith.IndexCastOp: KernelEmitter.index_cast,
    arith.CeilDivSIOp: KernelEmitter.ceildiv,
    arith.CeilDivUIOp: KernelEmitter.ceildiv,
    arith.CmpiOp: KernelEmitter.cmpi,
    arith.SelectOp: KernelEmitter.select,
    arith.TruncFOp: KernelEmitter.truncf,
    arith.ExtFOp: KernelEmitter.extf,
    arith.SIToFPOp: KernelEmitter.sitofp,
    tile.ProgramIdOp: KernelEmitter.program_id,
    tile.NumProgramsOp: KernelEmitter.num_programs,
    tile.ClusterIdOp: KernelEmitter.cluster_id,
    tile.ClusterRankOp: KernelEmitter.cluster_rank,
    tile.SplatOp: KernelEmitter.splat,
    tile.ExpandDimsOp: KernelEmitter.expand_dims,
    tile.BroadcastOp: KernelEmitter.broadcast,
    tile.IotaOp: KernelEmitter.iota,
    tile.ReduceOp: KernelEmitter.reduce,
    tile.CmpiOp: KernelEmitter.tile_cmpi,
    tile.SelectOp: KernelEmitter.tile_select,
    scf.ForOp: KernelEmitter.for_loop,
    scf.IfOp: KernelEmitter.if_op,
    scf.WhileOp: KernelEmitter.while_loop,
    func.ReturnOp: lambda self, op: None,
    nv.SmemAllocOp: KernelEmitter.smem_alloc,
    nv.MBarrierAllocOp: KernelEmitter.mbarrier_alloc,
    nv.MBarrierInitOp: KernelEmitter.mbarrier_init,
    nv.FenceMBarrierInitOp: KernelEmitter.fence_mbarrier_init,
    nv.CTABarrierOp: KernelEmitter.cta_barrier,
    nv.FenceProxyAsyncOp: KernelEmitter.fence_proxy,
    nv.MBarrierWaitOp: KernelEmitter.mbarrier_wait,
    nv.MBarrierArriveOp: KernelEmitter.mbarrier_arrive,
    nv.MBarrierArriveExpectTxOp: KernelEmitter.mbarrier_arrive_expect_tx,
    nv.TMALoadOp: KernelEmitter.tma_load,
    nv.TMAStoreOp: KernelEmitter.tma_store,
    nv.PrefetchTensorMapOp: KernelEmitter.prefetch_tensor_map,
    nv.TMAStoreCommitOp: KernelEmitter.tma_store_commit,
    nv.TMAStoreWaitOp: KernelEmitter.tma_store_wait,
    nv.ConsumerBarrierOp: KernelEmitter.consumer_barrier,
    nv.ClusterBarrierOp: KernelEmitter.cluster_barrier,
    nv.MmaTurnInitOp: KernelEmitter.mma_turn_init,
    nv.MmaTurnBeginOp: KernelEmitter.mma_turn_begin,
    nv.MmaTurnEndOp: KernelEmitter.mma_turn_end,
    nv.SmemStoreOp: KernelEmitter.smem_store,
    nv.SmemSlotOp: KernelEmitter.smem_slot,
    nv.SmemTransOp: KernelEmitter.smem_trans,
    nv.SmemLoadOp: KernelEmitter.smem_load,
    nv.WgmmaFenceOp: KernelEmitter.wgmma_fence,
    nv.WgmmaCommitGroupOp: KernelEmitter.wgmma_commit,
    nv.WgmmaWaitGroupOp: KernelEmitter.wgmma_wait,
    nv.WgmmaOp: KernelEmitter.wgmma,
    nv.StoreGlobalOp: KernelEmitter.store_global,
    nv.SetMaxNRegOp: KernelEmitter.setmaxnreg,
    nv.RoleDispatchOp: KernelEmitter.role_dispatch,
}


def emit_module(kernels: Sequence[func.FuncOp]) -> str:
    """A complete PTX module with one entry per lowered kernel."""
    return HEADER + "\n" + "\n".join(KernelEmitter(k).run() for k in kernels)
