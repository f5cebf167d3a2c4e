"""The calling convention of kernel pairs that split the K loop (`split-k`,
`stream-k`): what each kernel of the pair records so a caller can launch both.

Both passes turn one GEMM-like kernel `@k` into two:

1. the **partials** kernel computes f32 partial accumulators over slices of the
   K range and writes them to a workspace, `[S, *shape of k's output]` f32:
   slot `s` of every output element holds one partial sum (a slot no program
   computes holds zero);
2. the **reduce** kernel sums the S slots of each element in slot order (0,
   1, ..., S-1: deterministic) and runs `@k`'s epilogue and store on the sum.

Run partials first, then reduce, on the same stream. The workspace layout
follows the output, not the tiles, so the two kernels may be lowered with
different tile shapes. Each kernel carries `tile.split_k` (a `Record`): the
mode, its role, the original kernel and the partner's name, the split count and
which of `@k`'s arguments each of its parameters takes (-1: the workspace).
Grids: split-K's partials kernel runs `@k`'s grid with z = S (its stores show
it, so `grid.grid_rule` reads it); stream-K's runs any number of programs
along x, given at launch (one per SM), with a workspace of
`stream_k_slots(...)` slots; the reduce kernel runs `@k`'s grid.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr

SPLIT_ATTR = "tile.split_k"
"""On both kernels of a pair: their `Record`."""

WORKSPACE = -1
"""In `Record.args`: the parameter is the workspace."""


@dataclass(frozen=True)
class Record:
    """How one kernel of a pair is called.

    `splits` is the workspace's slot count S for split-K (fixed by the pass,
    and in the workspace's type); 0 for stream-K, whose slot count follows the
    launch (`stream_k_slots`). `args[i]` is the index of the original kernel's
    argument that parameter `i` takes, or `WORKSPACE`."""

    mode: str
    role: str
    kernel: str
    partner: str
    splits: int
    args: tuple[int, ...]

    def encode(self) -> DictionaryAttr:
        return DictionaryAttr(
            {
                "mode": StringAttr(self.mode),
                "role": StringAttr(self.role),
                "kernel": StringAttr(self.kernel),
                "partner": StringAttr(self.partner),
                "splits": IntegerAttr(self.splits, 64),
                "args": ArrayAttr(IntegerAttr(a, 64) for a in self.args),
            }
        )

    @property
    def workspace(self) -> int:
        """The index of the workspace parameter."""
        return self.args.index(WORKSPACE)


def record(kernel: func.FuncOp) -> Record | None:
    """The pair record `kernel` carries, or None for an ordinary kernel."""
    attr = kernel.attributes.get(SPLIT_ATTR)
    if not isinstance(attr, DictionaryAttr):
        return None
    d = attr.data

    def text(key: str) -> str:
        value = d[key]
        assert isinstance(value, StringAttr)
        return value.data

    splits, args = d["splits"], d["args"]
    assert isinstance(splits, IntegerAttr) and isinstance(args, ArrayAttr)
    return Record(
        text("mode"),
        text("role"),
        text("kernel"),
        text("partner"),
        splits.value.data,
        tuple(a.value.data for a in args.data if isinstance(a, IntegerAttr)),
    )


def stream_k_owner(unit: int, units: int, programs: int) -> int:
    """The program that computes work unit `unit` of `units` when `programs`
    share them evenly (program p takes [p * units // programs, (p + 1) * units //
    programs)): the stream-K kernel computes the same in IR."""
    return ((unit + 1) * programs - 1) // units


def stream_k_slots(tiles: int, iterations: int, programs: int) -> int:
    """The workspace slot count a stream-K launch needs: the most programs from
    the first to the last that work on one output tile (those between them
    with no units, when programs outnumber units, store zeros), for `tiles`
    output tiles of `iterations` K iterations each (at least 1 counts: a tile
    without K iterations is still one unit of work) over `programs` programs.

    A tile's programs are its first unit's owner and one more for each program
    that starts inside the tile after its first unit, so the count walks the
    programs' starts, not the tiles: a huge problem has millions of tiles
    (`explain(M=2**31 - 1, ...)` took minutes), never more programs than SMs."""
    per_tile = max(iterations, 1)
    units = tiles * per_tile
    starts_inside = Counter(
        start // per_tile
        for p in range(1, programs)
        if (start := p * units // programs) % per_tile
    )
    return 1 + max(starts_inside.values(), default=0)


def original_arguments(rec: Record, args: Sequence[object], workspace: object) -> list:
    """The arguments of one kernel of a pair, from the original kernel's
    arguments and the workspace array."""
    return [workspace if i == WORKSPACE else args[i] for i in rec.args]


def self_scheduled(kernel: func.FuncOp) -> bool:
    """Whether `kernel` is a stream-K partials kernel: it walks its own share of
    the work over however many programs it is launched with (so `persistent`
    leaves it alone, and its grid is given at launch)."""
    rec = record(kernel)
    return rec is not None and rec.mode == "stream-k" and rec.role == "partials"
