"""What each `ptx.alu` opcode computes, over the registers of many lanes at once.

A register bundle in the thread simulator is a numpy array `[lanes, registers]`
of raw bits: `pred` bool, `b16` uint16, `b32` and `f32` uint32 (an f32 register
holds its IEEE bits, so a `b32` instruction may move a float unchanged), `b64`
uint64. `ALU[opcode]` takes the operand arrays (already read through their maps,
so they broadcast against each other) and returns the result bits; it is the
meaning of every opcode `dialects/ptx.py` lists in `ALU_OPCODES`, one entry each.

Arithmetic follows the PTX ISA: integer results wrap, shifts of 32 or more give
0 (or the sign for `shr.s32`), `div`/`rem` truncate towards zero, `.ftz` flushes
subnormal inputs and results to zero, `max.f32` ignores a NaN operand while
`max.NaN.f32` propagates it, float compares are ordered except `neu`, and
`cvt.rn.bf16x2.f32 d, a, b` puts `a` in the upper half (as the 8-bit
`cvt.rn.satfinite.e4m3x2.f32` puts it in the upper byte, saturating), and
`prmt.b32 d, a, b, c` picks d's bytes from b:a by c's nibbles.

The `.approx` functions err as much as the PTX ISA lets them (`APPROXIMATE`):
each result is the exact one rounded to nearest on a grid coarse enough that
the rounding error reaches the ISA's bound to within a factor 2 and never
passes it (`Approximation`). tanh.approx.f32 keeps 11 significant bits, so a
kernel whose tolerance is tighter than what the GPU's tanh guarantees fails in
the simulator as it could on the GPU; ex2, lg2, rsqrt, rcp, sin and cos keep
the 21 to 23 bits the ISA promises them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tawa_xdsl.dialects.ptx import F32_COMPARISONS
from tawa_xdsl.dtypes import bfloat16, cast, float8_e4m3fn, float8_e5m2
from tawa_xdsl.interp.elementwise import COMPARE

DTYPES: dict[str, np.dtype] = {
    "pred": np.dtype(np.bool_),
    "b16": np.dtype(np.uint16),
    "b32": np.dtype(np.uint32),
    "f32": np.dtype(np.uint32),
    "b64": np.dtype(np.uint64),
}
"""Register class -> the numpy dtype of its bits."""

BYTES = {"b16": 2, "b32": 4, "f32": 4, "b64": 8}
"""Register class -> bytes it occupies in memory."""

CLUSTER_WINDOW = 1 << 24
"""Shared addresses below this are the running block's (`shared::cta`); `mapa`
maps an address into block r's part of the cluster window,
`(r + 1) * CLUSTER_WINDOW + address`."""

Fn = Callable[..., np.ndarray]


def f32(x: np.ndarray) -> np.ndarray:
    """The floats that 32-bit register bits hold."""
    return x.view(np.float32)


def f32_bits(x: np.ndarray) -> np.ndarray:
    """The register bits of floats (rounded to f32)."""
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def s32(x: np.ndarray) -> np.ndarray:
    return x.view(np.int32)


def _ftz(x: np.ndarray) -> np.ndarray:
    """Subnormal f32 values flushed to zero of the same sign."""
    tiny = np.abs(x) < np.finfo(np.float32).tiny
    return np.where(tiny & np.isfinite(x), np.copysign(np.float32(0), x), x)


def _float1(fn: Callable[[np.ndarray], np.ndarray], ftz: bool = False) -> Fn:
    def run(a: np.ndarray) -> np.ndarray:
        x = f32(a)
        if ftz:
            return f32_bits(_ftz(fn(_ftz(x)).astype(np.float32)))
        return f32_bits(fn(x))

    return run


@dataclass(frozen=True)
class Approximation:
    """An `.approx` instruction: the exact function `fn` (float64 in and
    out), and the ISA's error bound as the `bits` of 2^-bits, relative to
    the result, or absolute where `absolute` and the result is below 1 in
    magnitude (sine, cosine, and lg2 near x = 1, whose results cross zero).
    `ftz`: subnormal inputs and results flushed, as the `.ftz` forms do."""

    fn: Callable[[np.ndarray], np.ndarray]
    bits: int
    absolute: bool = False
    ftz: bool = True

    def round(self, y: np.ndarray) -> np.ndarray:
        """`y` to nearest on this approximation's grid: significands of
        `bits` bits (y = m 2^e, m in [0.5, 1), rounded to 2^(e - bits): an
        error of at most 2^-bits |y|), or multiples of 2^(1 - bits) where the
        error is absolute (at most 2^-bits). Zeros, infinities and NaN stay."""
        finite = np.isfinite(y) & (y != 0)
        m, e = np.frexp(np.where(finite, y, 1.0))
        out = np.ldexp(np.round(np.ldexp(m, self.bits)), e - self.bits)
        if self.absolute:
            grid = np.ldexp(np.round(np.ldexp(y, self.bits - 1)), 1 - self.bits)
            out = np.where(np.abs(y) < 1, grid, out)
        return np.where(finite, out, y)

    def exact(self) -> Fn:
        """The instruction without its error: the exact value rounded to f32."""
        return _float1(lambda x: self.fn(x.astype(np.float64)), self.ftz)

    def simulated(self) -> Fn:
        """The instruction as the thread simulator runs it."""
        return _float1(lambda x: self.round(self.fn(x.astype(np.float64))), self.ftz)


def _float2(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Fn:
    return lambda a, b: f32_bits(fn(f32(a), f32(b)))


def _u32(fn: Callable[..., np.ndarray]) -> Fn:
    """An integer op computed in int64 and wrapped to 32 bits."""

    def run(*xs: np.ndarray) -> np.ndarray:
        return (fn(*xs) & 0xFFFFFFFF).astype(np.uint32)

    return run


def _wide(x: np.ndarray, signed: bool) -> np.ndarray:
    return (s32(x) if signed else x).astype(np.int64)


def add_sat_s32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`add.sat.s32`: the signed sum clamped to [-2^31, 2^31 - 1], as int64
    (a `ptx.for` counter steps so: `ptx.ForOp`)."""
    total = _wide(a, True) + _wide(b, True)
    return np.clip(total, -(2**31), 2**31 - 1)


def _div(signed: bool, rem: bool) -> Fn:
    """Integer division truncating towards zero; by zero the result is all ones
    (the ISA leaves it unspecified)."""

    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        x, y = _wide(a, signed), _wide(b, signed)
        safe = np.where(y == 0, 1, y)
        q = np.sign(x) * np.sign(safe) * (np.abs(x) // np.abs(safe))
        out = x - q * safe if rem else q
        return (np.where(y == 0, -1, out) & 0xFFFFFFFF).astype(np.uint32)

    return run


def _shift_left(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = b.astype(np.int64)
    return (
        np.where(
            n >= 32, 0, (a.astype(np.uint64) << np.minimum(n, 31).astype(np.uint64))
        )
        .astype(np.uint64)
        .astype(np.uint32)
    )


def _shift_right(signed: bool) -> Fn:
    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        n = np.minimum(b.astype(np.int64), 32)
        if signed:
            return (
                (s32(a).astype(np.int64) >> np.minimum(n, 31))
                .astype(np.int32)
                .view(np.uint32)
            )
        return np.where(n >= 32, 0, a.astype(np.uint64) >> n.astype(np.uint64)).astype(
            np.uint32
        )

    return run


def _bfe_u32(a: np.ndarray, pos: np.ndarray, length: np.ndarray) -> np.ndarray:
    p = (pos & 0xFF).astype(np.uint64)
    n = np.minimum(length & 0xFF, 32).astype(np.uint64)
    shifted = np.where(p >= 32, 0, a.astype(np.uint64) >> np.minimum(p, np.uint64(31)))
    mask = (np.uint64(1) << n) - np.uint64(1)
    return (shifted & mask).astype(np.uint32)


def _mapa(a: np.ndarray, rank: np.ndarray) -> np.ndarray:
    local = a.astype(np.uint64) % CLUSTER_WINDOW
    return ((rank.astype(np.uint64) + 1) * CLUSTER_WINDOW + local).astype(np.uint32)


def _pack16(dtype: np.dtype) -> Fn:
    """`cvt.rn.{bf16,f16}x2.f32 d, hi, lo`: two rounded halves in one register."""

    def run(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
        h = f32(hi).astype(dtype).view(np.uint16).astype(np.uint32)
        low = f32(lo).astype(dtype).view(np.uint16).astype(np.uint32)
        return (h << 16) | low

    return run


def _pack8(dtype: np.dtype) -> Fn:
    """`cvt.rn.satfinite.{e4m3,e5m2}x2.f32 d, hi, lo`: two saturated bytes in a
    16-bit register, `hi` in the upper byte."""

    def run(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
        h = cast(f32(hi), dtype).view(np.uint8).astype(np.uint16)
        low = cast(f32(lo), dtype).view(np.uint8).astype(np.uint16)
        return (h << 8) | low

    return run


def _widen8(dtype: np.dtype) -> Fn:
    """`cvt.rn.f16x2.{e4m3,e5m2}x2 d, a`: each byte of `a` to an f16 half of d
    (exact: f16 holds every 8-bit float), the low byte to the low half."""

    def run(a: np.ndarray) -> np.ndarray:
        pairs = np.ascontiguousarray(a.astype(np.uint16)).view(np.uint8)
        halves = pairs.view(dtype).astype(np.float16).view(np.uint16)
        halves = halves.reshape(*a.shape, 2).astype(np.uint32)
        return halves[..., 0] | (halves[..., 1] << 16)

    return run


def _permute(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """`prmt.b32` (default mode): byte i of d is byte (c >> 4 i) & 7 of the
    eight bytes b:a (a's first), replicated from its sign bit when nibble bit 3
    is set."""
    a, b, c = np.broadcast_arrays(*(np.asarray(x, np.uint32) for x in (a, b, c)))
    wide = a.astype(np.uint64) | (b.astype(np.uint64) << np.uint64(32))
    d = np.zeros(a.shape, np.uint32)
    for i in range(4):
        nibble = (c >> np.uint32(4 * i)) & np.uint32(15)
        byte = (wide >> (8 * (nibble & 7)).astype(np.uint64)) & np.uint64(0xFF)
        byte = byte.astype(np.uint32)
        sign = (nibble & 8) != 0
        byte = np.where(sign, np.where(byte & 0x80, 0xFF, 0), byte).astype(np.uint32)
        d |= byte << np.uint32(8 * i)
    return d


def _unpack16(dtype: np.dtype) -> Fn:
    return lambda a: f32_bits(a.view(dtype).astype(np.float32))


def _compare_int(cmp: str, kind: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    signed = kind == "s32" and cmp in ("eq", "ne", "lt", "le", "gt", "ge")
    unsigned = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
    op = unsigned.get(cmp, cmp)
    fn = COMPARE[op]
    return lambda a, b: fn(_wide(a, signed), _wide(b, signed))


def _to_int(dtype: type) -> Fn:
    """`cvt.rzi.<s32|u32>.f32`: towards zero, saturating to the integer range,
    NaN to 0 (as the PTX ISA says for float-to-integer conversions)."""
    info = np.iinfo(dtype)

    def run(a: np.ndarray) -> np.ndarray:
        x = np.nan_to_num(np.trunc(f32(a).astype(np.float64)), nan=0.0)
        return np.clip(x, info.min, info.max).astype(dtype).view(np.uint32)

    return run


def _compare_f32(cmp: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """`setp.<cmp>.f32`: false where either side is NaN, but true there for the
    unordered forms (`equ`, `ltu`, ..., `neu`); `num` and `nan` test for NaN."""

    def unordered(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.isnan(f32(a)) | np.isnan(f32(b))

    if cmp in ("num", "nan"):
        return lambda a, b: unordered(a, b) == (cmp == "nan")
    if cmp == "neu" or (cmp.endswith("u") and cmp[:-1] in COMPARE):
        fn = COMPARE[cmp[:-1]]
        return lambda a, b: fn(f32(a), f32(b)) | unordered(a, b)
    fn = COMPARE[cmp]
    return lambda a, b: fn(f32(a), f32(b)) & ~unordered(a, b)


def _identity(a: np.ndarray) -> np.ndarray:
    return a


def _select(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np.where(p, a, b)


APPROXIMATE: dict[str, Approximation] = {
    # PTX ISA: maximum relative error 2^-10.987
    "tanh.approx.f32": Approximation(np.tanh, 11, ftz=False),
    # maximum relative error 2^-22 (2^-22.5 in the primary range)
    "ex2.approx.ftz.f32": Approximation(np.exp2, 22),
    # maximum absolute error 2^-22 for x in [0.5, 2], relative 2^-22 elsewhere;
    # not .ftz: a subnormal x is read (log 1e-40 is -92.1, not -inf)
    "lg2.approx.f32": Approximation(np.log2, 22, absolute=True, ftz=False),
    # maximum relative error 2^-22.9; not .ftz: rsqrt 1e-40 is 1e20, not inf
    "rsqrt.approx.f32": Approximation(lambda x: 1 / np.sqrt(x), 23, ftz=False),
    # maximum error 1 ulp (2^-23 of the result's power of two)
    "rcp.approx.ftz.f32": Approximation(lambda x: 1 / x, 23),
    # maximum absolute error 2^-20.5 in [-pi, pi] (the lowering reduces x there)
    "sin.approx.ftz.f32": Approximation(np.sin, 21, absolute=True),
    "cos.approx.ftz.f32": Approximation(np.cos, 21, absolute=True),
}
"""The `.approx` opcodes of the ptx dialect, each as the PTX ISA bounds its
error; the grid `Approximation.round` puts results on errs by at most 2^-bits,
which is within the ISA's bound and at least half of it."""


def _table() -> dict[str, Fn]:
    u64 = np.uint64
    table: dict[str, Fn] = {
        "add.f32": _float2(np.add),
        "sub.f32": _float2(np.subtract),
        "mul.f32": _float2(np.multiply),
        "div.rn.f32": _float2(np.divide),
        "max.f32": _float2(np.fmax),
        "min.f32": _float2(np.fmin),
        "max.NaN.f32": _float2(np.maximum),
        "min.NaN.f32": _float2(np.minimum),
        "fma.rn.f32": lambda a, b, c: f32_bits(
            (f32(a).astype(np.float64) * f32(b) + f32(c)).astype(np.float32)
        ),
        "neg.f32": _float1(np.negative),
        "abs.f32": _float1(np.abs),
        "sqrt.rn.f32": _float1(np.sqrt),
        "cvt.rpi.f32.f32": _float1(np.ceil),
        "cvt.rmi.f32.f32": _float1(np.floor),
        "cvt.rzi.f32.f32": _float1(np.trunc),
        "cvt.rni.f32.f32": _float1(np.rint),
        "copysign.f32": _float2(lambda a, b: np.copysign(b, a)),
        "mov.f32": _identity,
        "cvt.rn.f32.s32": lambda a: f32_bits(s32(a).astype(np.float32)),
        "cvt.rn.f32.u32": lambda a: f32_bits(a.astype(np.float32)),
        "cvt.rzi.s32.f32": _to_int(np.int32),
        "cvt.rzi.u32.f32": _to_int(np.uint32),
        "cvt.f32.bf16": _unpack16(bfloat16),
        "cvt.f32.f16": _unpack16(np.dtype(np.float16)),
        "cvt.rn.bf16x2.f32": _pack16(bfloat16),
        "cvt.rn.f16x2.f32": _pack16(np.dtype(np.float16)),
        "cvt.rn.satfinite.e4m3x2.f32": _pack8(float8_e4m3fn),
        "cvt.rn.satfinite.e5m2x2.f32": _pack8(float8_e5m2),
        "cvt.rn.f16x2.e4m3x2": _widen8(float8_e4m3fn),
        "cvt.rn.f16x2.e5m2x2": _widen8(float8_e5m2),
        "prmt.b32": _permute,
        "and.b32": np.bitwise_and,
        "or.b32": np.bitwise_or,
        "xor.b32": np.bitwise_xor,
        "shl.b32": _shift_left,
        "shr.u32": _shift_right(signed=False),
        "shr.s32": _shift_right(signed=True),
        "add.sat.s32": _u32(lambda a, b: add_sat_s32(a, b)),
        "max.s32": _u32(lambda a, b: np.maximum(_wide(a, True), _wide(b, True))),
        "min.s32": _u32(lambda a, b: np.minimum(_wide(a, True), _wide(b, True))),
        "max.u32": np.maximum,
        "min.u32": np.minimum,
        "div.s32": _div(signed=True, rem=False),
        "rem.s32": _div(signed=True, rem=True),
        "div.u32": _div(signed=False, rem=False),
        "rem.u32": _div(signed=False, rem=True),
        "mad.lo.u32": _u32(lambda a, b, c: _wide(a, False) * b + c),
        "mad.lo.s32": _u32(lambda a, b, c: _wide(a, False) * b + c),
        "bfe.u32": _bfe_u32,
        "mov.b32": _identity,
        "cvt.s32.s8": lambda a: (
            a.astype(np.uint8).view(np.int8).astype(np.int32).view(np.uint32)
        ),
        "mov.u32": _identity,
        "selp.b32": _select,
        "selp.b16": _select,
        "selp.b64": _select,
        "selp.f32": _select,
        "mapa.shared::cluster.u32": _mapa,
        "cvt.u64.u32": lambda a: a.astype(u64),
        "cvt.s64.s32": lambda a: s32(a).astype(np.int64).view(u64),
        "cvt.u32.u64": lambda a: (a & 0xFFFFFFFF).astype(np.uint32),
        "cvt.rn.f32.s64": lambda a: f32_bits(a.view(np.int64).astype(np.float32)),
        "cvt.rn.f32.u64": lambda a: f32_bits(a.astype(np.float32)),
        "add.s64": lambda a, b: a + b,
        "or.b64": np.bitwise_or,
        "mad.lo.u64": lambda a, b, c: a * b + c,
        "mad.wide.u32": lambda a, b, c: a.astype(u64) * b.astype(u64) + c,
        "mov.b64": _identity,
        "mov.u64": _identity,
        "cvta.to.global.u64": _identity,
        "mov.b16": _identity,
        "mov.pred": _identity,
        "and.pred": np.logical_and,
        "or.pred": np.logical_or,
        "xor.pred": np.logical_xor,
    }
    table |= {opcode: a.simulated() for opcode, a in APPROXIMATE.items()}
    for name in ("add", "sub", "mul.lo"):
        fn = {"add": np.add, "sub": np.subtract, "mul.lo": np.multiply}[name]
        for kind in ("s32", "u32"):
            table[f"{name}.{kind}"] = _u32(
                lambda a, b, fn=fn: fn(_wide(a, False), _wide(b, False))
            )
    for cmp in ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"):
        for kind in ("s32", "u32"):
            c = _compare_int(cmp, kind)
            table[f"setp.{cmp}.{kind}"] = c
            table[f"setp.{cmp}.and.{kind}"] = lambda a, b, p, c=c: c(a, b) & p
    for cmp in F32_COMPARISONS:
        c = _compare_f32(cmp)
        table[f"setp.{cmp}.f32"] = c
        table[f"setp.{cmp}.or.f32"] = lambda a, b, p, c=c: c(a, b) | p
    return table


ALU: dict[str, Fn] = _table()
"""opcode -> its meaning on register bits (see the module docstring)."""
EXACT_ALU: dict[str, Fn] = ALU | {op: a.exact() for op, a in APPROXIMATE.items()}
"""The same with the `.approx` instructions exact, as the interpreter computes
them: what a comparison of a lowering with the interpreter, tighter than the
approximations' error, runs (`simulate(..., exact_math=True)`)."""
