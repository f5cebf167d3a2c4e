"""The migration oracle of issue 15: the new back end (distribute-fragments,
ptx-skip-unit-scale, ptx-allocate, ptx-lower-control-flow, the small printer)
prints, for every example kernel in every configuration the tests and the GPU
tests lower it with, the instructions the old printer (`ptx_emitter.py`)
prints.

Compared per kernel: the opcode histogram, equal but for the deliberate
differences below; the instruction sequence with every register replaced by
its class and every label by `L` (the same ops in the same order, reading the
same kinds of operands) is reported, not required: copies move.

Deliberate differences, each an instruction the old printer spent for nothing
(`DELIBERATE`: fewer of these opcodes), and one documented by distribute-fragments
(two more lane predicates per 16-byte store path, `vec16_stores`):
- fewer `mov`s: the allocator shares registers by exact liveness, so a value
  a loop yields that is built in the carried registers, or an `if` result
  built in place, needs no copy; a parallel copy stages through temporaries
  only the copies in a cycle (the old printer staged every copy when any
  conflicted); distribute-fragments reduces a row without first copying it;
- one `bra` fewer per `if` without an `else` (the old printer jumped over the
  empty `else` to the next line).

The whole matrix (every example kernel in every configuration below, some 270
lowerings) takes minutes: it is the switch-over's check, not a quick test.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest
from tawa_xdsl.lowering.ptx_emitter import emit_module
from tawa_xdsl.lowering.ptx_target import to_ptx
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException, PassFailedException

import tawa_xdsl
from tawa_xdsl.compiler import CompileOptions
from tawa_xdsl.kernel import find_kernel, kernels
from tawa_xdsl.pipelines import TawaHopperPipeline

from .conftest import EXAMPLE_FILES
from .ptx_histogram import text_histogram
from .test_distribute_fragments import vec16_stores
from .test_lowering import ATTENTION_CONFIGS, GEMM_CONFIGS

REGISTER = re.compile(r"%(rd|r|f|p|h)(\d+)\b")
LABEL = re.compile(r"\bL_[A-Za-z_]+_\d+\b")
DELIBERATE = {"mov": "fewer copies", "bra": "no jump over an empty else"}
"""Opcode prefix -> why the new printer may print fewer of them (never more)."""


def body(ptx: str) -> list[str]:
    """The instruction and label lines of the module's entries."""
    lines = []
    inside = False
    for line in ptx.splitlines():
        text = line.strip()
        if text == "{":
            inside = True
        elif text == "}":
            inside = False
        elif inside and text and not text.startswith(".reg"):
            lines.append(text)
    return lines


def by_class(lines: list[str]) -> list[str]:
    """Each register replaced by its class, each label by `L`."""
    return [LABEL.sub("L", REGISTER.sub(r"%\1", line)) for line in lines]


def renamed(lines: list[str]) -> list[str]:
    """Registers and labels renamed in order of first appearance."""
    names: dict[str, str] = {}
    count: Counter[str] = Counter()

    def rename(m: re.Match[str], kind: str) -> str:
        if m.group(0) not in names:
            names[m.group(0)] = f"{kind}{count[kind]}"
            count[kind] += 1
        return names[m.group(0)]

    out = []
    for line in lines:
        line = REGISTER.sub(lambda m: rename(m, "%" + m.group(1)), line)
        out.append(LABEL.sub(lambda m: rename(m, "L"), line))
    return out


@dataclass(frozen=True)
class Comparison:
    """How the new PTX of one kernel differs from the old printer's."""

    fewer: dict[str, int]  # deliberate: opcode -> how many fewer
    unexplained: dict[str, int]  # opcode -> new count - old count
    same_by_class: bool
    same_renamed: bool


def compare(old: str, new: str, extra: Counter[str] | None = None) -> Comparison:
    """`new` against `old` (PTX text); `extra`: instructions `new` is known to
    hold beyond `old`'s."""
    a, b = body(old), body(new)
    ha, hb = text_histogram(old) + (extra or Counter()), text_histogram(new)
    fewer, unexplained = {}, {}
    for op in sorted(set(ha) | set(hb)):
        delta = hb[op] - ha[op]
        if not delta:
            continue
        if delta < 0 and any(op.startswith(p) for p in DELIBERATE):
            fewer[op] = -delta
        else:
            unexplained[op] = delta
    return Comparison(
        fewer, unexplained, by_class(a) == by_class(b), renamed(a) == renamed(b)
    )


# ----------------------------------------------------------------- cases

GPU_GEMM = [  # tests/gpu/test_gemm_gpu.py: exact configurations and option sweeps
    *(
        dict(num_stages=s, mma_depth=m, num_consumers=c)
        for s, m, c in [
            (1, 1, 1),
            (2, 1, 1),
            (2, 2, 2),
            (3, 2, 1),
            (4, 1, 2),
            (4, 2, 2),
        ]
    ),
    *(
        dict(
            num_stages=3,
            mma_depth=1,
            num_consumers=2,
            block_n=n,
            persistent=p,
            tma_store=t,
            ping_pong=pp,
        )
        for n in (128, 256)
        for p in (True, False)
        for t in (True, False)
        for pp in (False, True)
    ),
    *(
        dict(
            num_stages=3,
            mma_depth=1,
            num_consumers=2,
            block_n=n,
            persistent=p,
            cluster=2,
        )
        for n in (128, 256)
        for p in (True, False)
    ),
]
GPU_ATTENTION = [  # tests/gpu/test_attention_gpu.py CONFIGS (tuned ones below)
    dict(num_stages=2, mma_depth=1, num_consumers=2),
    dict(num_stages=3, mma_depth=2, num_consumers=2),
    dict(num_stages=2, mma_depth=1, num_consumers=2, two_stage=True),
    dict(num_stages=3, mma_depth=2, num_consumers=2, two_stage=True),
]
TUNED_ATTENTION = [{}, dict(ping_pong=True), dict(cluster=2)]
TUNED_ATTENTION_GRID = dict(reverse_x=True, cluster=2, persistent=False)


def _lowering_config(config: tuple) -> dict[str, Any]:
    stages, mma, consumers, two_stage, *ping_pong = config
    return dict(
        num_stages=stages,
        mma_depth=mma,
        num_consumers=consumers,
        two_stage=bool(two_stage),
        ping_pong=bool(ping_pong and ping_pong[0]),
    )


def _configs(kernel) -> list[dict[str, Any]]:
    """Every option set the tests lower `kernel` (tile IR) with."""
    name = kernel.sym_name.data
    tuned = {**CompileOptions().resolve(kernel).given(), "tuned": True}
    found: list[dict[str, Any]] = [{}, tuned]
    if name.startswith("attention"):
        found += [_lowering_config(c) for c in ATTENTION_CONFIGS]
        found += GPU_ATTENTION
        found += [{**tuned, **extra} for extra in TUNED_ATTENTION]
        if "causal" not in name:
            found.append({**tuned, **TUNED_ATTENTION_GRID})
    else:
        found += [_lowering_config(c) for c in GEMM_CONFIGS]
        found += GPU_GEMM
    return found


def _cases() -> list[tuple[str, str, str]]:
    """(example file, kernel, pipeline spec), each spec once per kernel."""
    cases = []
    for path in EXAMPLE_FILES:
        module = tawa_xdsl.parse(path)
        for kernel in kernels(module):
            specs = dict.fromkeys(
                str(
                    TawaHopperPipeline(
                        **{"tuned": False, **options}
                    ).pipeline_pass_spec()
                )
                for options in _configs(kernel)
            )
            cases += [(path.name, kernel.sym_name.data, spec) for spec in specs]
    return cases


CASES = _cases()


def lowered(path: str, name: str, spec: str) -> ModuleOp | None:
    """`name` alone in its module, lowered by `spec` (None: not lowerable)."""
    module = tawa_xdsl.parse(next(p for p in EXAMPLE_FILES if p.name == path))
    for other in list(kernels(module)):
        if other.sym_name.data != name:
            other.detach()
            other.erase()
    try:
        return tawa_xdsl.apply(module, spec)
    except (DiagnosticException, PassFailedException):  # does not fit (smem, shape)
        return None


@pytest.mark.parametrize(
    ("path", "name", "spec"),
    CASES,
    ids=[f"{n}-{i}" for i, (_, n, _) in enumerate(CASES)],
)
def test_new_printer_prints_the_old_instructions(path, name, spec) -> None:
    module = lowered(path, name, spec)
    if module is None:
        pytest.skip("the configuration does not lower")
    module = tawa_xdsl.apply(module, "select-store-path")
    kernel = find_kernel(module, name)
    old = emit_module([kernel])
    extra = Counter({"setp.ne.u32": 2 * vec16_stores(kernel)})
    result = compare(old, to_ptx(module), extra)
    assert not result.unexplained, result
