"""A CPU model of one warp running straight-line PTX: the integer, predicate,
select, shuffle and global-store instructions that the register-tile stores
print (`KernelEmitter.store_tile`), so tests can check where every element lands
without a GPU.

The 32 lanes run in lock step. Registers hold unsigned integers of their width
(predicates are bools); a register read before it is written is an error, as are
a store whose address is not aligned to its width (the GPU faults), a `bra.uni`
whose condition differs between lanes (undefined on the GPU), and an
instruction the model does not know. Memory is a dict from byte address to byte.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

M32, M64 = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF
COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}
STORE_BYTES = {"b16": 2, "b32": 4, "f32": 4}
GUARD = re.compile(r"@(!?)(%\w+)\s+")
ADDRESS = re.compile(r"\[(%\w+)(?:\+(\d+))?\]")


class PTXModelError(AssertionError):
    """The PTX would fault, hang or be undefined on the GPU, or is outside the model."""


def _signed(x: int) -> int:
    return x - (1 << 32) if x & (1 << 31) else x


def _operands(text: str) -> list[str]:
    """Split operands on commas outside braces."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


class Warp:
    """32 lanes: each lane's %tid.x and its registers at the start."""

    def __init__(self, tids: Sequence[int], registers: Sequence[dict[str, object]]):
        self.tids = list(tids)
        self.regs = [dict(r) for r in registers]
        self.stores: Counter[str] = Counter()
        """Store instructions run with at least one lane active, by opcode."""

    def read(self, lane: int, operand: str) -> int:
        if operand == "%tid.x":
            return self.tids[lane]
        if operand == "smem":
            return 0
        if operand.startswith("%"):
            if operand not in self.regs[lane]:
                raise PTXModelError(f"read of {operand} before it is written")
            return self.regs[lane][operand]  # type: ignore[return-value]
        return int(operand, 0)

    def run(self, lines: Sequence[str], memory: dict[int, int]) -> None:
        labels = {
            line.strip()[:-1]: i
            for i, line in enumerate(lines)
            if line.strip().endswith(":")
        }
        pc = 0
        while pc < len(lines):
            line = lines[pc].strip().rstrip(";")
            pc += 1
            if not line or line.endswith(":"):
                continue
            guard = GUARD.match(line)
            active = [True] * 32
            if guard:
                negate, pred = guard.groups()
                active = [
                    bool(self.read(lane, pred)) != bool(negate) for lane in range(32)
                ]
                line = line[guard.end() :]
            opcode, _, rest = line.partition(" ")
            ops = _operands(rest)
            if opcode == "bra.uni":
                if len(set(active)) != 1:
                    raise PTXModelError(f"divergent bra.uni to {ops[0]}")
                if active[0]:
                    pc = labels[ops[0]]
                continue
            if opcode == "shfl.sync.bfly.b32":
                if not all(active) or ops[3:] != ["31", "-1"]:
                    raise PTXModelError("a full-warp shuffle needs every lane")
                mask = int(ops[2], 0)
                sent = [self.read(lane, ops[1]) for lane in range(32)]
                for lane in range(32):
                    self.regs[lane][ops[0]] = sent[lane ^ mask]
                continue
            if opcode.startswith("st.") and any(active):
                self.stores[opcode] += 1
            for lane in range(32):
                if active[lane]:
                    self._execute(lane, opcode, ops, memory)

    def _execute(self, lane: int, opcode: str, ops: list[str], memory: dict) -> None:
        r = self.regs[lane]

        def v(i: int) -> int:
            return self.read(lane, ops[i])

        parts = opcode.split(".")
        head = parts[0]
        if head == "st":
            self._store(lane, parts, ops, memory)
        elif opcode == "mov.b32" and ops[0].startswith("{"):
            lo, hi = (x.strip() for x in ops[0].strip("{}").split(","))
            r[lo], r[hi] = v(1) & 0xFFFF, v(1) >> 16
        elif head == "mov":
            r[ops[0]] = v(1)
        elif opcode in ("add.s32", "add.u32"):
            r[ops[0]] = (v(1) + v(2)) & M32
        elif opcode in ("sub.s32", "sub.u32"):
            r[ops[0]] = (v(1) - v(2)) & M32
        elif opcode == "add.s64":
            r[ops[0]] = (v(1) + v(2)) & M64
        elif opcode == "and.b32":
            r[ops[0]] = v(1) & v(2) & M32
        elif opcode == "shl.b32":
            r[ops[0]] = (v(1) << v(2)) & M32
        elif opcode == "shr.u32":
            r[ops[0]] = v(1) >> v(2)
        elif opcode == "bfe.u32":
            r[ops[0]] = (v(1) >> v(2)) & ((1 << v(3)) - 1)
        elif opcode == "mul.lo.u32":
            r[ops[0]] = (v(1) * v(2)) & M32
        elif opcode == "mad.lo.u32":
            r[ops[0]] = (v(1) * v(2) + v(3)) & M32
        elif opcode == "mad.lo.u64":
            r[ops[0]] = (v(1) * v(2) + v(3)) & M64
        elif opcode == "mad.wide.u32":
            r[ops[0]] = ((v(1) & M32) * (v(2) & M32) + v(3)) & M64
        elif opcode == "cvt.u64.u32":
            r[ops[0]] = v(1) & M32
        elif opcode == "cvt.s64.s32":
            r[ops[0]] = _signed(v(1) & M32) & M64
        elif opcode == "and.pred":
            r[ops[0]] = bool(v(1)) and bool(v(2))
        elif opcode == "xor.pred":
            r[ops[0]] = bool(v(1)) != bool(v(2))
        elif opcode == "selp.b32":
            r[ops[0]] = v(1) if v(3) else v(2)
        elif head == "setp":
            cmp, typ = parts[1], parts[-1]
            a, b = v(1) & M32, v(2) & M32
            if typ == "s32":
                a, b = _signed(a), _signed(b)
            result = COMPARE[cmp](a, b)
            if len(parts) == 4:  # setp.cmp.and.type d, a, b, c
                result = result and bool(v(3))
            r[ops[0]] = result
        else:
            raise PTXModelError(f"the model does not know {opcode}")

    def _store(self, lane: int, parts: list[str], ops: list[str], memory: dict) -> None:
        if parts[1] != "global":
            raise PTXModelError(f"the model does not know {'.'.join(parts)}")
        count = int(parts[2][1:]) if parts[2].startswith("v") else 1
        width = STORE_BYTES[parts[-1]]
        match = ADDRESS.fullmatch(ops[0])
        assert match, ops[0]
        addr = self.read(lane, match.group(1)) + int(match.group(2) or 0)
        if addr % (width * count):
            raise PTXModelError(
                f"misaligned {'.'.join(parts)} at address {addr:#x} (lane {lane})"
            )
        values = [x.strip() for x in ops[1].strip("{}").split(",")]
        assert len(values) == count
        for k, value in enumerate(values):
            bits = self.read(lane, value)
            for byte in range(width):
                memory[addr + k * width + byte] = (bits >> (8 * byte)) & 0xFF
