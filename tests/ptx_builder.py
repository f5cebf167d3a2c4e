"""Small thread-level kernels written by hand, for the thread simulator's tests:
a builder that appends ptx ops to a kernel body (nested regions through
context managers) and runs the result with `thread_sim.run_threads`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Block, Region, SSAValue

from tawa_xdsl.dialects import ptx
from tawa_xdsl.dialects.nvgpu_async import LAUNCH_ATTR, LaunchAttr
from tawa_xdsl.dialects.tile import KERNEL_ATTR
from tawa_xdsl.interp.thread_sim import ParamValue, ThreadFunctions, run_threads


@dataclass
class Loop:
    iv: SSAValue
    carried: list[SSAValue]
    yields: list[SSAValue] = field(default_factory=list)


class Kernel:
    """`@k`, launched with `threads`, `smem` bytes and clusters of `cluster`."""

    def __init__(self, threads: int = 128, smem: int = 0, cluster: int = 1):
        self.block = Block()
        self.kernel = func.FuncOp("k", ((), ()), Region(self.block))
        self.kernel.attributes[KERNEL_ATTR] = UnitAttr()
        self.kernel.attributes[LAUNCH_ATTR] = LaunchAttr(threads, smem, cluster)
        self._builder = ImplicitBuilder(self.block)
        self._builder.__enter__()
        self._module: ModuleOp | None = None

    # values
    def imm(
        self, value: int | float | Sequence[int | float], cls: str = "b32"
    ) -> SSAValue:
        return ptx.ImmOp(value, cls).result

    def special(self, register: str) -> SSAValue:
        return ptx.SpecialOp(register).result

    def param(self, name: str, cls: str = "b64", generic: bool = False) -> SSAValue:
        return ptx.ParamOp(name, cls, generic).result

    def alu(
        self,
        opcode: str,
        *args: SSAValue,
        n: int = 1,
        maps: Sequence[Sequence[int] | None] | None = None,
        pred: SSAValue | None = None,
        negated: bool = False,
        pred_map: Sequence[int] | None = None,
    ) -> SSAValue:
        return ptx.AluOp(opcode, args, n, maps, pred, negated, pred_map).result

    def tid(self) -> SSAValue:
        return self.special("%tid.x")

    # control flow
    @contextmanager
    def if_(
        self,
        cond: SSAValue,
        uniform: bool = False,
        results: Sequence[SSAValue] = (),
        otherwise: Sequence[SSAValue] | None = None,
    ) -> Iterator[None]:
        """`ptx.if cond { <body> ; yield results } [else { yield otherwise }]`;
        `results` may be filled in by the body (a list)."""
        then = Region(Block())
        with ImplicitBuilder(then.block):
            yield
            ptx.YieldOp(*results)
        other = Region()
        if otherwise is not None:
            other = Region(Block())
            with ImplicitBuilder(other.block):
                ptx.YieldOp(*otherwise)
        op = ptx.IfOp(cond, then, other, [r.type for r in results], uniform)
        self.last = op

    @contextmanager
    def for_(
        self, lb: SSAValue, ub: SSAValue, step: SSAValue, inits: Sequence[SSAValue] = ()
    ) -> Iterator[Loop]:
        """`ptx.for`: the body sees `loop.iv` and `loop.carried`, and sets
        `loop.yields`; the results are `self.last.res`."""
        body = Region(Block(arg_types=[ptx.RegType("b32"), *[v.type for v in inits]]))
        loop = Loop(body.block.args[0], list(body.block.args[1:]))
        with ImplicitBuilder(body.block):
            yield loop
            ptx.YieldOp(*loop.yields)
        self.last = ptx.ForOp(lb, ub, step, inits, body, [v.type for v in inits])

    def while_(
        self,
        inits: Sequence[SSAValue],
        before: Callable[[list[SSAValue]], tuple[SSAValue, Sequence[SSAValue]]],
        after: Callable[[list[SSAValue]], Sequence[SSAValue]],
    ) -> ptx.WhileOp:
        """`ptx.while`: `before` builds on the carried values and returns the
        condition and what it forwards, `after` builds on those and returns
        what it yields back; the results are `self.last.res`."""
        first = Block(arg_types=[v.type for v in inits])
        with ImplicitBuilder(first):
            cond, forwarded = before(list(first.args))
            ptx.ConditionOp(cond, forwarded)
        then = Block(arg_types=[v.type for v in forwarded])
        with ImplicitBuilder(then):
            ptx.YieldOp(*after(list(then.args)))
        types = [v.type for v in forwarded]
        self.last = ptx.WhileOp(inits, Region(first), Region(then), types)
        return self.last

    def module(self) -> ModuleOp:
        """The finished module (built once; later calls return it)."""
        if self._module is None:
            self._builder.__exit__(None, None, None)
            self.kernel.body.block.add_op(func.ReturnOp())
            self._module = ModuleOp([self.kernel])
        self._module.verify()
        return self._module

    def run(
        self,
        params: dict[str, ParamValue] | None = None,
        grid: tuple[int, int, int] = (1, 1, 1),
        seed: int = 0,
    ) -> ThreadFunctions:
        module = self.module()
        return run_threads(module, self.kernel, params or {}, grid, seed)
