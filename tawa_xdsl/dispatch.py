"""Shape-aware dispatch: a compiled kernel that picks its specialization per call.

`compile()` returns a `Dispatcher`. Each call

1. converts its arguments once (the shared checks of `tawa_xdsl.kernel`, as
   every executor runs them, then `runtime.arrays.device_array`);
2. reads the `DispatchKey` off them: the extent of every dimension the kernel's
   `tile.dims` name, bucketed (`bucket`), each tensor's dtype, and whether TMA
   can describe it (16-byte aligned base and row pitches);
3. on the first call of a key, decides the options (`heuristics.decide` on the
   bucket's upper ends, then `CompileOptions.resolve`), or with
   `autotune=True` searches around that decision (`autotune`), and compiles:
   once per set of resolved options in the process, and once per machine
   through the disk cache (`kernel_cache`);
4. launches that specialization's `runtime.Kernel`, which only loads and
   launches what it is handed; an input TMA cannot describe is first copied
   into a buffer with aligned rows, which the kernel reads in its place
   (`runtime.realign`; autotuning is for calls whose arrays are all aligned),
   and so is an input that shares memory with an output (D = A @ B + D: the
   kernel would read what other programs already overwrote; autotuning does
   not search such a call either).

Split K. When the rules split K (output tiles that leave most SMs idle: one
128 x 128 tile with a long K), the specialization is the pair `split-k{splits=S}`
makes of the kernel (`tawa_xdsl.partials`): each kernel of the pair is compiled
by a dispatcher of its own for the call's extents (the partials kernel on the
plan's tile shape), and a call launches the partials kernel, then the reduce
kernel, on its stream, through an f32 workspace of S output-sized slots that
the dispatcher allocates once per shape and stream. A call that passes `grid=`
fixes the launch of one kernel: it runs the kernel unsplit. Autotuning
searches K splits too, each built as its pair (`Runner`); a kernel the pass
refuses, and a call with grid=, is searched unsplit (a K split given is then
dropped), and its winner is stored apart from that of calls that may split.
`explain` before a call runs the pass (not the lowering) to say whether K
is split.

Stream K. Where the tiles times the split still leave SMs idle and the wave
model predicts a clear gain (`dispatch_rules.STREAM_K_GAIN`), or always with
`stream_k=True` (never with False), the specialization is the pair `stream-k`
makes instead: a call launches the partials kernel with one program per SM
(fewer when there are fewer units of work: `dispatch_rules.stream_k_programs`)
through a workspace of `partials.stream_k_slots` slots, counted in the tiles
and K steps the partials kernel is lowered with for the call's extents, then
the reduce kernel on its grid. The sums' grouping follows the program count,
so a call's result is deterministic on one GPU.

`explain()` says which specialization a call (or a shape, either given
`grid=` or not) gets and why;
`options` and `ptx` are those of the last call's specialization (before any
call, of the kernel compiled for no particular shape: the tuned options alone).

Buckets. An extent is rounded up to the next of four steps per octave: (2^k,
2^(k+1)] is cut into four buckets of width 2^(k-2), and extents up to 8 are
their own bucket. So 64, 128 and 256 are bucket edges (the small-M rules can
tell M <= 64 from M <= 128), 3000 and 3072 share a bucket, and two extents of
one bucket differ by less than 25%: the tile counts the rules reckon with (at
the upper end) are off by as much at worst. Autotuning stores its result per
bucket.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from io import StringIO
from typing import TYPE_CHECKING, Any

from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException

from tawa_xdsl.api import apply as apply_passes
from tawa_xdsl.compiler import (
    DEFAULTS,
    TILE_OPTIONS,
    CompileOptions,
    check_options,
    describe,
    lower,
    thread_load_names,
)
from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects.tile import DescType
from tawa_xdsl.dispatch_rules import (
    CP_ASYNC_MAX_READS,
    OFF_SECTOR_SLOWDOWN,
    REDUCE_MIN_WIDTH,
    REDUCE_PROGRAMS,
    THREAD_LOAD_MAX_READS,
    realign_pays,
    realign_us,
    split_count,
    stream_k_programs,
    thread_loads_pay,
)
from tawa_xdsl.heuristics import (
    OPTION_OF,
    Decision,
    Reason,
    Splitter,
    Structure,
    decide,
)
from tawa_xdsl.kernel import (
    ArrayView,
    KernelArgumentError,
    Param,
    check_arguments,
    find_kernel,
    is_extent,
    normalize_grid,
    params,
)
from tawa_xdsl.launch_cache import CachedCall, CallCache, call_signature
from tawa_xdsl.partials import original_arguments, record, stream_k_slots
from tawa_xdsl.target import INDEX_BITS, INDEX_MAX, MAX_GRID, SECTOR_BYTES, SM_COUNT

if TYPE_CHECKING:
    from tawa_xdsl.autotune import Bench, Trial
    from tawa_xdsl.grid import Rule
    from tawa_xdsl.runtime.kernel import Kernel
    from tawa_xdsl.runtime.realign import Copy, DeviceBuffer


def bucket(extent: int) -> int:
    """The upper end of `extent`'s bucket (see the module docstring)."""
    if extent <= 8:
        return extent
    step = 1 << ((extent - 1).bit_length() - 3)
    return -(-extent // step) * step


def bucket_floor(extent: int) -> int:
    """The largest extent below `extent`'s bucket (its buckets are (floor, end])."""
    end = bucket(extent)
    if end <= 8:
        return end - 1
    return end - (1 << ((end - 1).bit_length() - 3))


@dataclass(frozen=True)
class DispatchKey:
    """What picks a specialization: the bucketed extent of each named dimension
    (in the order the parameters name them), and for each tensor parameter its
    dtype, whether TMA can describe it (`tma_problem`), whether it reads it
    at full speed (`sector_problem`) and whether the producer's threads
    could copy it with `cp.async` (`cp_async_problem`: what the thread-load
    rule weighs). An output TMA cannot describe is stored
    from registers (`tma_store=False`, K unsplit); an input is read through a
    buffer with aligned rows (`runtime.realign`), as is an input off the
    sector grid where the copy pays (`Plan.copied`)."""

    extents: tuple[tuple[str, int], ...]
    dtypes: tuple[str, ...]
    tma: tuple[bool, ...]
    sectors: tuple[bool, ...]
    async_copies: tuple[bool, ...]

    @property
    def problem(self) -> dict[str, int]:
        """The extents the rules see: each bucket's upper end."""
        return dict(self.extents)

    def as_json(self) -> dict[str, Any]:
        return {
            "extents": [list(e) for e in self.extents],
            "dtypes": list(self.dtypes),
            "tma": list(self.tma),
            "sectors": list(self.sectors),
            "async_copies": list(self.async_copies),
        }

    def __str__(self) -> str:
        extents = ", ".join(f"{n} in ({bucket_floor(e)}, {e}]" for n, e in self.extents)
        tma = "all TMA" if all(self.tma) else "not all TMA"
        if not all(self.sectors):
            tma += f", not all on the {SECTOR_BYTES}-byte grid"
        return f"{extents or 'no named dimensions'}; {' '.join(self.dtypes)}; {tma}"


def call_extents(ps: Sequence[Param], values: Sequence[Any]) -> dict[str, int]:
    """The extent of each named dimension in a call (the first tensor naming it
    gives it; `check_arguments` made the others agree), unbucketed."""
    extents: dict[str, int] = {}
    for p, v in zip(ps, values, strict=True):
        if p.is_tensor:
            for name, extent in zip(p.dims, v.shape, strict=False):
                if name:
                    extents.setdefault(name, extent)
    return extents


def dispatch_key(ps: Sequence[Param], values: Sequence[Any]) -> DispatchKey:
    """The key of a call whose arguments are converted (`device_array`) and
    checked (`runtime.kernel.check_device_array`)."""
    from tawa_xdsl.runtime.kernel import cp_async_problem, sector_problem, tma_problem

    # an empty extent (K = 0) is planned as 1: the rules count tiles and
    # iterations over positive extents, as `shape_key` takes them
    extents = {n: bucket(max(1, e)) for n, e in call_extents(ps, values).items()}
    dtypes, tma, sectors, copies = [], [], [], []
    for p, v in zip(ps, values, strict=True):
        if p.is_tensor:
            dtypes.append(v.dtype)
            tma.append(tma_problem(p, v) is None)
            sectors.append(sector_problem(p, v) is None)
            copies.append(cp_async_problem(p, v) is None)
    return DispatchKey(
        tuple(extents.items()),
        tuple(dtypes),
        tuple(tma),
        tuple(sectors),
        tuple(copies),
    )


def shared_inputs(ps: Sequence[Param], values: Sequence[Any]) -> list[tuple[str, str]]:
    """The inputs of a call that share memory with an array the kernel writes,
    each with that array's name: launches read them from a copy
    (`runtime.arrays.copy_on_launch`), and autotuning, whose runs poison and
    rewrite the outputs, does not search such a call."""
    return [
        (p.name, v.overlaps)
        for p, v in zip(ps, values, strict=True)
        if p.is_tensor and v.overlaps is not None
    ]


def shape_key(ps: Sequence[Param], extents: Mapping[str, int]) -> DispatchKey:
    """The key of a call with these extents (by dimension name) and aligned
    operands of the parameters' dtypes: what `explain(M=...)` and
    `tawa-hopper-pipeline{shape=...}` specialize for. An extent a parameter's
    type fixes is the key's without being given, as in a call's key: the
    shape rules read it (attention's plan for SQ, SK without D = 64 was not
    the plan a call of that shape runs)."""
    from tawa_xdsl.dtypes import numpy_dtype, type_name

    named = list(dict.fromkeys(n for p in ps for n in p.dims if n))
    unknown = sorted(set(extents) - set(named))
    if unknown:
        raise KernelArgumentError(
            f"no dimension named {', '.join(unknown)} here; the kernel names "
            f"{', '.join(named) or 'none'} (tile.dims)"
        )
    bad = {n: e for n, e in extents.items() if not is_extent(e)}
    if bad:
        raise KernelArgumentError(
            f"extents must be positive integers up to {INDEX_MAX} (kernels index "
            f"with {INDEX_BITS}-bit integers), got {bad}"
        )
    extents = {n: operator.index(e) for n, e in extents.items()}  # numpy's too
    for name, extent in extents.items():
        if (why := fixed_elsewhere(ps, name, extent)) is not None:
            raise KernelArgumentError(why)
    tensors = [p for p in ps if isinstance(p.type, DescType)]
    for p in tensors:  # what the types fix, every call has: D = 64 of attention
        for dim, extent in zip(p.dims, p.type.get_shape(), strict=False):
            if dim and extent != DYNAMIC_INDEX:
                extents.setdefault(dim, extent)
    return DispatchKey(
        tuple((n, bucket(extents[n])) for n in named if n in extents),
        tuple(type_name(numpy_dtype(p.type.element_type)) for p in tensors),
        (True,) * len(tensors),
        (True,) * len(tensors),
        (True,) * len(tensors),
    )


def fixed_elsewhere(ps: Sequence[Param], name: str, extent: int) -> str | None:
    """Why no call has dimension `name` of `extent`: a parameter's type fixes
    it to another (`check_arguments` refuses such a call), or None."""
    for p in ps:
        if not p.is_tensor:
            continue
        for axis, (dim, fixed) in enumerate(
            zip(p.dims, p.type.get_shape(), strict=False)
        ):
            if dim == name and fixed not in (DYNAMIC_INDEX, extent):
                return (
                    f"{name}={extent}, but argument '{p.name}' dimension {axis} "
                    f"({name}) has extent {fixed} in its type {p.type}: no call "
                    "has that shape"
                )
    return None


def unset_dims(ps: Sequence[Param], extents: Mapping[str, int]) -> list[str]:
    """The `tile.dims` names a call gives (no parameter's type fixes them)
    missing from `extents`: a plan for these extents is not one a call runs."""
    fixed = {
        dim
        for p in ps
        if p.is_tensor
        for dim, extent in zip(p.dims, p.type.get_shape(), strict=False)
        if extent != DYNAMIC_INDEX
    }
    named = dict.fromkeys(n for p in ps for n in p.dims if n)
    return [n for n in named if n not in fixed and n not in extents]


def parse_shape(text: str) -> dict[str, int]:
    """ "M=512,N=4096,K=4096" as {"M": 512, ...} (a pass option's syntax)."""
    extents: dict[str, int] = {}
    for part in text.replace(" ", ",").split(","):
        if not part:
            continue
        name, _, value = part.partition("=")
        name = name.strip()
        if not name or not value.strip().isdigit() or not is_extent(int(value)):
            raise ValueError(
                f"shape: expected NAME=EXTENT pairs (a positive integer each, up "
                f'to {INDEX_MAX}), e.g. "M=512,N=4096,K=4096"; got {part!r}'
            )
        if name in extents:
            raise ValueError(f"shape: {name} is given twice in {text!r}")
        extents[name] = int(value)
    return extents


@dataclass(frozen=True)
class Device:
    """What the rules and the caches need of the GPU: its name, the driver's CUDA
    version and the SM count. Without a GPU (compiling on a CPU, `explain`,
    the CLI), an H100: the machine the rules are measured on."""

    name: str
    driver: str
    sms: int

    @staticmethod
    @functools.cache
    def current() -> Device:
        from tawa_xdsl.runtime.driver import (
            CudaError,
            device_name,
            driver_version,
            sm_count,
        )

        try:
            return Device(device_name(), driver_version(), sm_count())
        except CudaError:
            return Device("none", "none", SM_COUNT)


@dataclass(frozen=True)
class Plan:
    """What a key is compiled with: the rules' decision and the options it
    resolves to, with each option's source (`CompileOptions.resolve_sources`)."""

    key: DispatchKey | None
    decision: Decision
    options: CompileOptions
    sources: Mapping[str, str]
    copied: tuple[str, ...] = ()
    """Inputs TMA can describe but reads slowly (off the sector grid), copied
    onto it before each launch because the copy pays (`_sector_copies`)."""


@dataclass(frozen=True)
class Specialization:
    """A compiled plan: its kernel, and how its options and code came to be
    ("rules" or "autotune", then "compiled" or "disk cache")."""

    plan: Plan
    kernel: Kernel
    origin: str
    trials: tuple[Trial, ...] = ()
    reduce: Kernel | None = None
    """For a plan that splits or streams K: `kernel` writes the f32 partial
    sums and this kernel sums them and runs the epilogue (`partials`)."""

    @property
    def options(self) -> dict[str, Any]:
        return self.plan.options.as_dict()

    @property
    def ptx(self) -> str:
        return self.kernel.ptx


@dataclass(frozen=True)
class Launchers:
    """The bound steps of a call, run in order on their stream: copies into
    aligned buffers, the kernel (a split's two), copies back."""

    launchers: tuple[Any, ...]

    def __call__(self) -> None:
        for launch in self.launchers:
            launch()

    def detached(self) -> Launchers:
        """Every step holding none of the caller's arrays (`launch_cache`)."""
        return Launchers(tuple(step.detached() for step in self.launchers))


@dataclass(frozen=True)
class Runner:
    """A specialization as autotuning builds, runs and names it: its options
    (with its K split), its kernel's name, and `bind` like a kernel's (a split
    pair's two kernels run in order, through the call's workspace)."""

    dispatcher: Dispatcher
    spec: Specialization

    @property
    def options(self) -> dict[str, Any]:
        return {**self.spec.kernel.options, "split_k": self.spec.plan.options.split_k}

    @property
    def name(self) -> str:
        return self.spec.kernel.name

    def bind(self, *values: Any, grid: Any = None, stream: int = 0) -> Any:
        steps = [
            kernel.bind(*args, grid=kernel_grid, stream=stream)
            for kernel, args, kernel_grid in self.dispatcher._launches(
                self.spec, values, stream, grid
            )
        ]
        return steps[0] if len(steps) == 1 else Launchers(tuple(steps))


def shape_decision(
    structure: Structure,
    key: DispatchKey | None,
    requested: CompileOptions,
    sms: int,
    splitter: Splitter | None = None,
    stream: bool = True,
    off_sector: tuple[bool, bool] = (False, False),
) -> Decision:
    """The shape rules' decision for `key` (None: no shape known), unless the
    tuning rules are off (`tuned=False`: the options given and the static
    defaults, exactly; a K split or stream given is made, on that tile).
    `Dispatcher` and `tawa-hopper-pipeline{shape=...}`
    both decide here, so the CLI prints the PTX a call of that shape runs (of
    the kernel unsplit: the CLI lowers the kernels it is given, and a split
    is the pass `split-k` run first). `splitter` may split K (`decide`) and,
    unless not `stream`, stream it; `off_sector`: whether the row and the
    column operand are read in place off the sector grid (`decide`)."""
    if key is None:
        return Decision({}, (Reason("none", "no shape given"),))
    given = requested.given()
    if not stream:
        given["stream_k"] = False
    if requested.tuned:
        return decide(structure, key.problem, given, sms, splitter, off_sector)
    untuned = Reason("none", "tuned=False: the given and static options")
    if not ((given.get("split_k") or 0) > 1 or given.get("stream_k")):
        return Decision({}, (untuned,))
    # a cut given is the caller's to keep: reckoned on the tile that runs (the
    # given or written one), the rules' other choices left out
    written = (*structure.output, structure.loop)
    tile = {
        OPTION_OF[a.tile]: given.get(OPTION_OF[a.tile]) or a.size
        for a in written
        if a is not None and a.tile
    }
    cut = decide(structure, key.problem, given | tile, sms, splitter)
    return Decision(
        {},
        (untuned, *(r for r in cut.reasons if r.rule in ("split-K", "stream-K"))),
        split_k=cut.split_k,
        stream_k=cut.stream_k,
    )


def reduce_options(requested: CompileOptions) -> CompileOptions:
    """The options a pair's reduce kernel is compiled with: `requested` less
    those of a dot's main loop. It loads no tile two blocks share and issues
    no wgmma, so `cluster` (multicast), `ping_pong` and `mma_depth` would
    refuse it or mean nothing; its rings hold f32 partial tiles, so the stage
    counts sized for the dot's operands overflowed shared memory (a kernel
    compiled with any of them ran no split call); it has no K loop, so
    `block_k` (tile-shape refused it: "@k_split_k_reduce does not name BK");
    it loads the workspace, not the inputs `thread_loads` names."""
    return dataclasses.replace(
        requested,
        thread_loads=None,
        block_k=None,
        cluster=None,
        ping_pong=None,
        mma_depth=None,
        two_stage=None,
        num_stages=None,
        outer_stages=None,
    )


def _named_tiles(structure: Structure, tiles: Mapping[str, int]) -> dict[str, int]:
    """The tile sizes of `tiles` (by option) a pair's reduce kernel names: it
    runs on the partials kernel's output tiles (sized by its own rules it kept
    the tile as written: one 128x128 program read all 32 slots at 128 x 128 x
    8192, 0.40 of cuBLAS against 0.63 on the partials' 64x96 tiles)."""
    named = {OPTION_OF[name] for name in structure.tunable}
    return {option: size for option, size in tiles.items() if option in named}


def _narrowed(
    structure: Structure, sizes: Mapping[str, int], extents: Mapping[str, int]
) -> dict[str, int]:
    """A reduce kernel's tile `sizes` (by option) for these extents, the
    innermost narrowed to the widest multiple of 8 columns (at least
    `REDUCE_MIN_WIDTH`) that gives `REDUCE_PROGRAMS` programs, or to the
    least: each program sums its slots one after another, a wait on each
    (NOTES 3.60), so more, narrower programs finish sooner (NOTES 3.73)."""
    sizes = dict(sizes)
    inner = structure.output[-1] if structure.output else None
    option = OPTION_OF.get(inner.tile) if inner is not None else None
    if inner is None or option not in sizes:
        return sizes
    by_name = {name: sizes[o] for name, o in OPTION_OF.items() if o in sizes}
    for width in range(sizes[option] - sizes[option] % 8, REDUCE_MIN_WIDTH - 1, -8):
        count = structure.tiles(extents, {**by_name, inner.tile: width})
        if count is None:
            break
        sizes[option] = width
        if count >= REDUCE_PROGRAMS:
            break
    return sizes


def _uncut(
    options: CompileOptions, sources: Mapping[str, str], decision: Decision
) -> tuple[CompileOptions, dict[str, str]]:
    """`options` and `sources` of a plan whose `decision` runs the kernel
    alone, less a cut asked for (`split_k` > 1, `stream_k=True`) that does
    not run (a kernel that is not GEMM-like, a call with grid=, a kernel the
    pass refuses): the label and the disk-cache key say what runs, and the
    kernel is the one compiled with no cut given. Its source keeps what was
    asked; the decision's reasons say why it does not run."""
    sources = dict(sources)
    if decision.split_k > 1 or decision.stream_k:
        return options, sources
    dropped = {}
    if (options.split_k or 0) > 1:
        dropped["split_k"] = DEFAULTS.split_k
    if options.stream_k:
        dropped["stream_k"] = False
    for name in dropped:
        sources[name] = f"given {getattr(options, name)!r}, not run"
    return dataclasses.replace(options, **dropped), sources


def _tuned_sources(plan: Plan, options: CompileOptions) -> dict[str, str]:
    """Where the options autotuning chose came from: the plan's sources where
    it kept the plan's value, else "autotune"."""
    return {
        name: source
        if getattr(plan.options, name) == getattr(options, name)
        else "autotune"
        for name, source in plan.sources.items()
    }


class Dispatcher:
    """A tile kernel compiled per bucket of argument shapes (module docstring).

    `bench` makes what autotuning runs and times candidates with, from a call's
    converted arguments, grid and stream (`autotune.CudaBench`; a fake one tests
    the search on a CPU); `report` prints its progress lines."""

    def __init__(
        self,
        text: str,
        name: str,
        options: CompileOptions,
        allow_spills: bool = False,
        autotune: bool = False,
        bench: Callable[[Sequence[Any], Any, int], Bench] | None = None,
        report: Callable[[str], None] | None = None,
        source_name: str | None = None,
    ) -> None:
        from tawa_xdsl.autotune import to_stderr

        self.name = name
        self.text = text
        self.source_name = source_name
        """The file `text` was read from: diagnostics are located in it."""
        self.requested = options
        self.allow_spills = allow_spills
        self.autotune = autotune
        self._bench = bench or self._cuda_bench
        self._report = report or to_stderr
        self._specs: dict[DispatchKey | None, Specialization] = {}
        self._unsplit: dict[DispatchKey, Specialization] = {}
        self._walking: dict[CompileOptions, Specialization] = {}
        """Persistent stand-ins for plans whose plain grid CUDA refuses
        (`_within_grid_limits`), by the plan's options."""
        self._partials: dict[tuple[str, tuple], Dispatcher] = {}
        self._reduces: dict[tuple[str, tuple, tuple], Dispatcher] = {}
        self._reduce_named: dict[
            tuple[str, tuple], tuple[Structure, dict[str, int]]
        ] = {}
        """The dispatchers of each pair, by the pass that made it (with its
        parameters) and the partials kernel's tile sizes."""
        self._cuts: dict[str, str | Reason] = {}
        """What each pass (with its parameters) makes of the kernel: the
        pair's tile IR, or why it refuses (`_cut`)."""
        self._workspaces: dict[tuple[tuple[int, ...], int], DeviceBuffer] = {}
        self._buffers: dict[tuple[int, int], DeviceBuffer] = {}
        self._calls = CallCache()
        self._kernels: dict[CompileOptions, tuple[Kernel, str]] = {}
        self.last: Specialization | None = None
        self.last_empty: str | None = None
        """When the last call wrote only empty arrays: which (it launched
        nothing, `_writes_nothing`); `last` is then not that call's."""
        self.last_grid: Any = None
        """The grid the last call of `last` passed (None: its own)."""

    # ------------------------------------------------------------- the kernel

    @functools.cached_property
    def _tile(self) -> ModuleOp:
        """The tile IR of this kernel alone (lowering each specialization clones it)."""
        from tawa_xdsl.api import parse_kernel

        module = parse_kernel(self.text, self.name, self.source_name)
        found = find_kernel(module, self.name)
        found.detach()
        return ModuleOp([found])

    @functools.cached_property
    def tile_kernel(self) -> func.FuncOp:
        """The tile kernel it specializes (as written: lowering clones it)."""
        return find_kernel(self._tile, self.name)

    @functools.cached_property
    def _kernel_ir(self) -> str:
        """The kernel's tile IR as printed: what the disk cache keys on."""
        return str(self._tile)

    @functools.cached_property
    def _plain_grid(self) -> list[Rule] | None:
        """The rule of the plain launch grid (None: none can be read off)."""
        from tawa_xdsl.grid import GridInferenceError, grid_rule

        try:
            return grid_rule(self.tile_kernel)
        except GridInferenceError:
            return None

    @functools.cached_property
    def structure(self) -> Structure:
        return Structure.of(self.tile_kernel)

    @functools.cached_property
    def params(self) -> list[Param]:
        """The tile-level parameters callers pass."""
        return params(self.tile_kernel)

    # --------------------------------------------------------------- planning

    def plan(
        self,
        key: DispatchKey | None,
        split: bool = True,
        stream: bool = True,
        walking: bool = False,
    ) -> Plan:
        """The options `key` is compiled with (no compilation); with `split`,
        K may be split, and with `stream` too streamed (never for a kernel of a
        pair already); `walking`: persistent, as if the caller gave it."""
        _, outputs = self.off_grid(key)
        requested = self.requested
        if walking:
            requested = dataclasses.replace(requested, persistent=True)
        if outputs:  # an output TMA cannot describe: stores from registers
            self._refuse_register_stored_fp8(key, outputs)
            requested = dataclasses.replace(requested, tma_store=False)
        splitter = self._splitter(key) if split else None
        pair = record(self.tile_kernel) is not None
        written = self._written_tile(requested) if pair else {}
        rules = dataclasses.replace(requested, **written)
        sms = Device.current().sms
        decision = shape_decision(self.structure, key, rules, sms, splitter, stream)
        copied, reason = self._sector_copies(key, decision)
        if reason is not None:
            off = self._off_sector_operands(key)
            in_place = shape_decision(
                self.structure, key, rules, sms, splitter, stream, off
            )
            if in_place.options.get("cluster"):  # multicast reads them at speed
                copied, reason = (), self._multicast_reason(reason)
            if not copied:  # read in place: the tiles are weighed for that
                decision = in_place
            reasons = (*decision.reasons, reason)
            decision = dataclasses.replace(decision, reasons=reasons)
        options, sources = rules.resolve_sources(self.tile_kernel, decision.options)
        options = dataclasses.replace(options, **dict.fromkeys(written, 0))
        if not pair:
            options, sources = _uncut(options, sources, decision)
        if outputs and self.requested.tma_store is not False:  # not the caller's
            asked = "" if self.requested.tma_store is None else "; True given"
            sources = {
                **sources,
                "tma_store": f"layout: TMA cannot describe {', '.join(outputs)}{asked}",
            }
        if requested.thread_loads is None:
            loads, why = self._thread_loads(key, options, decision)
            if loads:
                options = dataclasses.replace(options, thread_loads=loads)
                sources = {**sources, "thread_loads": "shape"}
            if why is not None:
                decision = dataclasses.replace(
                    decision, reasons=(*decision.reasons, why)
                )
        return Plan(key, decision, options, sources, copied)

    def _thread_loads(
        self, key: DispatchKey | None, options: CompileOptions, decision: Decision
    ) -> tuple[str, Reason | None]:
        """The inputs TMA cannot describe in calls of `key` that the producer's
        threads load (`dispatch_rules.thread_loads_pay`: each of their tiles
        read by at most `THREAD_LOAD_MAX_READS` programs), comma-separated,
        and why; the others are
        copied into aligned buffers. Only matrix operands of the K loop
        (rank 2, spanning the loop's dimension and the output's rows or
        columns), outside clusters, a tile counter and a streamed K."""
        inputs = self.off_grid(key)[0]
        s = self.structure
        if key is None or not inputs or s.loop is None or s.rows is None:
            return "", None
        blocked = (
            "the blocks of a cluster multicast their loads"
            if (options.cluster or 1) > 1
            else "its programs take tiles from a counter"
            if options.dynamic_tiles
            else "K is streamed"
            if decision.stream_k
            else None
        )
        extents, chosen, notes = key.problem, [], []
        tensors = [p for p in self.params if p.is_tensor]
        copies = {p.name: ok for p, ok in zip(tensors, key.async_copies, strict=True)}
        for p in tensors:
            if p.name not in inputs:
                continue
            reads = self._tile_reads(p, options, extents)
            if reads is None or blocked is not None:
                notes.append(f"{p.name} copied ({blocked or 'not a K-loop operand'})")
                continue
            pays = thread_loads_pay(reads, copies[p.name])
            if pays:
                chosen.append(p.name)
            verdict = "loaded by the producer's threads" if pays else "copied"
            how = "cp.async" if copies[p.name] else "synchronous loads"
            notes.append(
                f"{p.name}: each tile read by {reads} programs, {how}, {verdict}"
            )
        return ",".join(chosen), Reason(
            "thread-loads",
            f"{'; '.join(notes)} (tiles read by at most {THREAD_LOAD_MAX_READS} "
            f"programs load in the kernel with synchronous loads, at most "
            f"{CP_ASYNC_MAX_READS} with cp.async: the synchronous loads ran slower "
            "than the copy on every row measured, cp.async faster where tiles are "
            "read once or twice, NOTES 3.80, 3.85)",
        )

    def _tile_reads(
        self, p: Param, options: CompileOptions, extents: Mapping[str, int]
    ) -> int | None:
        """How many programs read each tile of input `p` in a call of these
        extents: the output's tile columns for an operand spanning its rows
        (A), its tile rows for one spanning its columns (B); None for what
        is not a matrix operand of the K loop."""
        s = self.structure
        assert s.loop is not None and s.rows is not None and s.cols is not None
        if len(p.dims) != 2 or s.loop.dim not in p.dims:
            return None
        for mine, other in ((s.rows, s.cols), (s.cols, s.rows)):
            if mine.dim in p.dims and other.dim in extents:
                size = getattr(options, OPTION_OF.get(other.tile, ""), 0)
                return -(-extents[other.dim] // (size or other.size))
        return None

    def _refuse_register_stored_fp8(self, key: DispatchKey, outputs: list[str]) -> None:
        """8-bit float tiles are stored through TMA only (the register store
        path does not split the pairs their registers hold): a call whose 8-bit
        float output TMA cannot describe is refused naming the argument, not
        at the IR's store after compiling a register store for it."""
        from tawa_xdsl.dtypes import DTYPES, FP8_DTYPES

        tensors = [p for p in self.params if p.is_tensor]
        for p, dtype in zip(tensors, key.dtypes, strict=True):
            if p.name in outputs and DTYPES[dtype] in FP8_DTYPES:
                raise KernelArgumentError(
                    f"{self.name}: argument '{p.name}' ({dtype}, an output) is laid "
                    "out as TMA cannot describe (a 16-byte aligned base and row "
                    "pitch, rows that end on a 16-byte boundary): 8-bit float "
                    "outputs are stored through TMA only; give it rows of a "
                    "multiple of 16 elements, contiguous and aligned"
                )

    def _sector_copies(
        self, key: DispatchKey | None, decision: Decision
    ) -> tuple[tuple[str, ...], Reason | None]:
        """The inputs of `key` off the sector grid that calls copy onto it
        (`dispatch_rules.realign_pays`, on the rules' predicted time), and
        why; none where the rules predict no time or an input has a dimension
        `tile.dims` leaves unnamed (its size is unknown here)."""
        from tawa_xdsl.dtypes import DTYPES

        if key is None or decision.predicted_us is None:
            return (), None
        tensors = [p for p in self.params if p.is_tensor]
        off = [
            (p, dtype)
            for p, dtype, tma, sector in zip(
                tensors, key.dtypes, key.tma, key.sectors, strict=True
            )
            if tma and not sector and not p.written
        ]
        extents = key.problem
        if not off or any(not d or d not in extents for p, _ in off for d in p.dims):
            return (), None
        size = sum(
            math.prod(extents[d] for d in p.dims) * DTYPES[dtype].itemsize
            for p, dtype in off
        )
        names = tuple(p.name for p, _ in off)
        kernel_us = decision.predicted_us
        copy_us = realign_us(size, len(off))
        pays = realign_pays(kernel_us, size, len(off))
        verdict = (
            "copied onto it before each launch"
            if pays
            else "read in place (the tiles weighed against L2's rate for such rows)"
        )
        return names if pays else (), Reason(
            "realign",
            f"{', '.join(names)}: rows off the {SECTOR_BYTES}-byte grid, which "
            f"TMA reads about {OFF_SECTOR_SLOWDOWN:.0%} slower; copying costs "
            f"{copy_us:.1f} us against {OFF_SECTOR_SLOWDOWN * kernel_us:.1f} us "
            f"saved of the kernel's predicted {kernel_us:.1f} us: {verdict}",
        )

    def _off_sector_operands(self, key: DispatchKey) -> tuple[bool, bool]:
        """Whether an operand of the K loop off the sector grid spans the
        output's rows (A) and whether one spans its columns (B), by the
        dimensions it names (a residual or a bias is read once per tile)."""
        rows, cols, loop = self.structure.rows, self.structure.cols, self.structure.loop
        tensors = [p for p in self.params if p.is_tensor]
        off = [
            p
            for p, tma, sector in zip(tensors, key.tma, key.sectors, strict=True)
            if tma and not sector and not p.written and loop and loop.dim in p.dims
        ]
        return (
            rows is not None and any(rows.dim in p.dims for p in off),
            cols is not None and any(cols.dim in p.dims for p in off),
        )

    @staticmethod
    def _multicast_reason(reason: Reason) -> Reason:
        """The realign reason of inputs read in place because the in-place plan
        multicasts them (NOTES 3.64: in clusters of two, 4096 x 4096 x 3000
        read in place ran within 2% of K = 3008 on the grid)."""
        verdict = reason.text.rsplit(": ", 1)[0]
        return Reason(
            reason.rule, f"{verdict}: read in place, in clusters that multicast them"
        )

    def _splitter(self, key: DispatchKey | None) -> Splitter | None:
        """How calls of `key` may split K: not where an output is stored from
        registers (the reduce kernel stores through TMA), nor a kernel of a
        pair already."""
        if self.off_grid(key)[1] or record(self.tile_kernel) is not None:
            return None
        return split_count

    def _written_tile(self, requested: CompileOptions) -> dict[str, int]:
        """The output tile sizes `requested` leaves unset, as written. A kernel
        of a split or stream pair is given its plan's tile sizes but not the
        written ones (0): `plan` holds those too (and reads them back as 0),
        or its rules would size them anew (counting the workspace slots as
        programs) and the tuning rules widen them, and the pair runs a tile
        its plan does not name."""
        return {
            OPTION_OF[a.tile]: a.size
            for a in self.structure.output
            if a.tile and not getattr(requested, OPTION_OF[a.tile])
        }

    def off_grid(self, key: DispatchKey | None) -> tuple[list[str], list[str]]:
        """The inputs and the outputs, by name, that TMA cannot describe in calls
        of `key`: inputs are read through aligned buffers (`realigned`), outputs
        stored from registers."""
        if key is None:
            return [], []
        tensors = [p for p in self.params if p.is_tensor]
        off = [p for p, ok in zip(tensors, key.tma, strict=True) if not ok]
        return [p.name for p in off if not p.written], [
            p.name for p in off if p.written
        ]

    def key(self, *args: Any, stream: int = 0) -> DispatchKey:
        """The key of a call with `args` (checked as a call checks them)."""
        return dispatch_key(self.params, self._convert(args, stream))

    def key_for(self, **extents: int) -> DispatchKey:
        """The key of a call with these extents (by `tile.dims` name), its operands
        aligned."""
        return shape_key(self.params, extents)

    # -------------------------------------------------------------- compiling

    def _ptx_key(self, options: CompileOptions) -> dict[str, Any]:
        from tawa_xdsl import __version__
        from tawa_xdsl.kernel_cache import compiler_fingerprint

        device = Device.current()
        return {
            "ir": self._kernel_ir,
            "kernel": self.name,
            "options": options.as_dict(),
            "gpu": device.name,
            "driver": device.driver,
            "package": __version__,
            "compiler": compiler_fingerprint(),
        }

    def _build(self, options: CompileOptions) -> tuple[Kernel, str]:
        """The kernel for resolved `options`: compiled once per process, read from
        the disk cache when another process compiled it; how it was made."""
        if options in self._kernels:
            return self._kernels[options]
        from tawa_xdsl.compiled import CompiledKernel, from_lowered
        from tawa_xdsl.kernel_cache import DiskCache
        from tawa_xdsl.runtime.kernel import Kernel

        cache, key = DiskCache("ptx"), self._ptx_key(options)
        compiled = cache.load(key, CompiledKernel.from_json)
        origin = "disk cache"
        if compiled is None:
            module = self._tile.clone()
            lower(module, options)
            compiled = from_lowered(module, self.name, options.as_dict())
            cache.store(key, compiled.to_json())
            origin = "compiled"
        kernel = Kernel(compiled, allow_spills=self.allow_spills)
        self._kernels[options] = kernel, origin
        return kernel, origin

    def _compiled(
        self, key: DispatchKey | None, split: bool = True, stream: bool = True
    ) -> Specialization:
        plan = self._runnable(self.plan(key, split, stream))
        if plan.decision.split_k > 1 or plan.decision.stream_k:
            return self._pair(plan)
        # what the pipeline would refuse, with each value's source (the
        # pipeline sees the resolved options as given); the K cut is the
        # calls' (a pair's kernels get the caller's options)
        lowered = dataclasses.replace(self.requested, split_k=None, stream_k=None)
        check_options(lowered, self.tile_kernel, plan.decision.options)
        kernel, origin = self._build(plan.options)
        return Specialization(plan, kernel, f"rules, {origin}")

    @staticmethod
    def _mode(plan: Plan) -> str:
        """The pass that makes `plan`'s pair, with its parameters."""
        if plan.decision.stream_k:
            return f"stream-k{{group-m={plan.options.group_m}}}"
        return f"split-k{{splits={plan.decision.split_k}}}"

    def _cut(self, mode: str) -> str | Reason:
        """The tile IR of the pair the pass `mode` makes of this kernel, or
        why the pass refuses it (run once per mode, on a copy: no lowering).
        The text keeps each op's source location, so what the pair's kernels
        refuse is located in the caller's file, not in this text."""
        if mode not in self._cuts:
            module = self._tile.clone()
            try:
                apply_passes(module, mode)
                text = StringIO()
                Printer(stream=text, print_debuginfo=True).print_op(module)
                self._cuts[mode] = text.getvalue()
            except (OpDiagnostic, PassFailedException) as e:
                rule = "stream-K" if mode.startswith("stream-k") else "split-K"
                what = "streamed" if rule == "stream-K" else "split"
                self._cuts[mode] = Reason(rule, f"the kernel cannot be {what}: {e}")
        return self._cuts[mode]

    def _splits_k(self) -> bool:
        """Whether the split-k pass takes this kernel (what it refuses is the
        kernel's structure, whatever the count)."""
        return isinstance(self._cut("split-k{splits=2}"), str)

    def _runnable(self, plan: Plan) -> Plan:
        """`plan`, or where it cuts K and the pass refuses this kernel, the plan
        that runs instead (unsplit, or split where stream-K was refused) with
        the pass's reason: what a call compiles and what `explain` says
        before one."""
        if not (plan.decision.split_k > 1 or plan.decision.stream_k):
            return plan
        why = self._cut(self._mode(plan))
        if not isinstance(why, Reason):
            return plan
        streamed = plan.decision.stream_k
        other = self._runnable(self.plan(plan.key, split=streamed, stream=False))
        # the unsplit plan's own split-K reason points at grid= and the CLI:
        # the pass's reason replaces it
        reasons = [
            r for r in other.decision.reasons if r.rule not in {"stream-K", why.rule}
        ]
        decision = dataclasses.replace(other.decision, reasons=(*reasons, why))
        return dataclasses.replace(other, decision=decision)

    def _takes_given_tiles(self) -> None:
        """Refuse tile sizes given that this kernel does not name, as
        `tile-shape` does and of this kernel: a pair's kernels refused them
        in the name of `@k_split_k`, which the caller never wrote."""
        from tawa_xdsl.analysis.shapes import KernelShape
        from tawa_xdsl.transforms.tile_shape import resize

        sizes = {
            name: size
            for name, option in TILE_OPTIONS
            if (size := getattr(self.requested, option))
        }
        if sizes:
            resize(KernelShape(find_kernel(self._tile.clone(), self.name)), sizes)

    def _pair(self, plan: Plan) -> Specialization:
        """A plan that splits or streams K (of a kernel the pass takes:
        `_runnable`): the pair's kernels, each compiled by its own dispatcher
        for the key's extents and the plan's slot count."""
        assert plan.key is not None
        self._takes_given_tiles()
        streamed = plan.decision.stream_k
        mode = self._mode(plan)
        text = self._cut(mode)
        assert isinstance(text, str), f"internal error: {mode} refuses @{self.name}"
        tiles = {  # the partials kernel keeps the tile shape the plan assumed
            option: value
            for _, option in TILE_OPTIONS
            if (value := getattr(plan.options, option))
        }
        suffix = "_stream_k" if streamed else "_split_k"
        names = [f"{self.name}{suffix}", f"{self.name}{suffix}_reduce"]
        loads = plan.options.thread_loads or None  # the partials kernel's inputs
        pair_key = (mode, tuple(sorted(tiles.items())), loads)
        if pair_key not in self._partials:
            partials_options = dataclasses.replace(
                self.requested, **tiles, thread_loads=loads
            )
            self._partials[pair_key] = Dispatcher(
                text, names[0], partials_options, self.allow_spills
            )
        if pair_key not in self._reduce_named:  # parsed once, on the partials' tiles
            d = Dispatcher(
                text, names[1], reduce_options(self.requested), self.allow_spills
            )
            named = _named_tiles(d.structure, tiles)
            d.requested = dataclasses.replace(d.requested, **named)
            self._reduces[(*pair_key, tuple(sorted(named.items())))] = d
            self._reduce_named[pair_key] = d.structure, named
        structure, named = self._reduce_named[pair_key]
        narrowed = _narrowed(structure, named, plan.key.problem)
        partials_d = self._partials[pair_key]
        slots = plan.decision.split_k
        if streamed:  # the slots of the bucket's upper ends (its key's extents)
            partials = partials_d.for_shape(
                **self._pair_extents(partials_d, plan.key, 1)
            )
            slots, programs = self.stream_k_launch(partials.kernel, plan.key.problem)
            how = f"K streamed over up to {programs} programs"
        else:
            how = f"K split {slots} ways"
        partials = partials_d.for_shape(
            **self._pair_extents(partials_d, plan.key, slots)
        )
        try:
            reduce = self._reduce_for(pair_key, text, names[1], narrowed, plan, slots)
        except (OpDiagnostic, PassFailedException):
            if narrowed == named:
                raise
            # narrower tiles than this reduce kernel takes (a tensor it loads
            # and stores keeps 128-byte rows): the partials' own
            self._reduces[(*pair_key, tuple(sorted(narrowed.items())))] = (
                self._reduce_dispatcher(pair_key, text, names[1], named)
            )
            reduce = self._reduce_for(pair_key, text, names[1], narrowed, plan, slots)
        origin = f"rules, {how} ({partials.origin}; {reduce.origin})"
        return Specialization(plan, partials.kernel, origin, reduce=reduce.kernel)

    def _reduce_dispatcher(
        self, pair_key: tuple[str, tuple], text: str, name: str, tiles: dict[str, int]
    ) -> Dispatcher:
        """The reduce kernel's dispatcher on these tiles (made once)."""
        key = (*pair_key, tuple(sorted(tiles.items())))
        if key not in self._reduces:
            options = dataclasses.replace(reduce_options(self.requested), **tiles)
            self._reduces[key] = Dispatcher(text, name, options, self.allow_spills)
        return self._reduces[key]

    def _reduce_for(
        self,
        pair_key: tuple[str, tuple],
        text: str,
        name: str,
        tiles: dict[str, int],
        plan: Plan,
        slots: int,
    ) -> Specialization:
        """The reduce kernel of `plan` on `tiles` (or on the tiles that
        replaced them for this kernel), compiled for the key's extents."""
        d = self._reduce_dispatcher(pair_key, text, name, tiles)
        return d.for_shape(**self._pair_extents(d, plan.key, slots))

    @staticmethod
    def _pair_extents(d: Dispatcher, key: DispatchKey, slots: int) -> dict[str, int]:
        """The extents `d` (a kernel of a pair) specializes for: the key's,
        with `slots` workspace slots."""
        ws = d.params[record(d.tile_kernel).workspace]
        extents = {**key.problem, ws.dims[0]: slots}
        named = {n for p in d.params for n in p.dims}
        return {n: e for n, e in extents.items() if n in named}

    def stream_k_launch(
        self, partials: Kernel, extents: Mapping[str, int]
    ) -> tuple[int, int]:
        """The workspace slots and the programs of a stream-K launch of the
        `partials` kernel for these extents (by dimension name): its tiles and
        K steps as it was lowered, one program per SM."""
        lowered = {
            name: partials.options.get(option) or 0 for name, option in TILE_OPTIONS
        }
        axes = [*self.structure.output, self.structure.loop]
        sizes = {a.tile: lowered[a.tile] or a.size for a in axes if a and a.tile}
        tiles = self.structure.tiles(extents, sizes)
        assert tiles is not None, "internal error: stream-K without a tile count"
        iterations = self.structure.iterations(extents, sizes)
        programs = stream_k_programs(tiles, iterations, Device.current().sms)
        # the kernel shares units among programs in 32-bit index arithmetic
        # (program * units): fewer programs where that would wrap
        units = tiles * max(iterations, 1)
        if units > INDEX_MAX:
            raise KernelArgumentError(
                f"{self.name}: stream-K over {tiles} tiles of {iterations} K "
                f"iterations is {units} units of work; the kernel counts them in "
                f"{INDEX_BITS}-bit integers (at most {INDEX_MAX}): pass "
                "stream_k=False"
            )
        programs = min(programs, INDEX_MAX // units)
        return stream_k_slots(tiles, iterations, programs), programs

    # ------------------------------------------------------------- autotuning

    def _tuned_key(self, key: DispatchKey, split: bool) -> dict[str, Any]:
        """What a stored winner is found by: the kernel, the options asked for,
        the bucket, and whether the search may split K (a call with grid=,
        or a kernel split-k refuses, searches single kernels)."""
        return {
            **self._ptx_key(self.requested),
            "options": self.requested.as_dict(),
            "bucket": key.as_json(),
            "split": split,
        }

    def _cuda_bench(self, values: Sequence[Any], grid: Any, stream: int) -> Bench:
        from tawa_xdsl.autotune import CudaBench

        return CudaBench(self.name, self.params, values, grid, stream)

    def _autotuned(
        self, key: DispatchKey, values: Sequence[Any], grid: Any, stream: int
    ) -> Specialization:
        """The specialization autotuning picks for `key`: the stored winner, or a
        search on this call's arguments whose winner is stored. A call with
        `grid` searches single kernels (a split pair would run on its grid)."""
        from tawa_xdsl.autotune import Trial, candidates, fastest, search
        from tawa_xdsl.kernel_cache import DiskCache

        # a call with grid= runs one kernel on that grid, never a pair
        split = grid is None
        plan = self._runnable(self.plan(key, split))
        splitter = self._splitter(key) if split else None
        if splitter is not None and not self._splits_k():
            splitter = None  # the pass refuses the kernel: search it unsplit
        if plan.decision.stream_k:  # the stream-K pair runs
            spec = self._compiled(key)
            self._report(
                f"@{self.name} [{key}]: not searched: the rules stream K "
                f"({spec.origin.removeprefix('rules, ')}), which autotuning "
                "does not time; the rules' plan runs"
            )
            return dataclasses.replace(spec, origin=f"{spec.origin}; not autotuned")
        requested = self.requested
        if splitter is None:  # single kernels: a cut given does not run
            requested = dataclasses.replace(requested, split_k=None, stream_k=None)
        cache = DiskCache("tuned")
        tuned_key = self._tuned_key(key, splitter is not None)

        def read(value: Mapping[str, Any]) -> tuple[CompileOptions, tuple[Trial, ...]]:
            trials = tuple(
                Trial(label, CompileOptions(**options), ms, error)
                for label, options, ms, error in value["trials"]
            )
            return CompileOptions(**value["options"]), trials

        stored = cache.load(tuned_key, read)
        if stored is not None:
            options, trials = stored
            spec = self._candidate(key, plan, options)
            return dataclasses.replace(
                spec, origin=f"autotune (stored), {spec.origin}", trials=trials
            )
        configurations = candidates(
            self.structure,
            key.problem,
            requested.given(),
            Device.current().sms,
            plan.decision,
            lambda shaped: requested.resolve(self.tile_kernel, shaped),
            splitter,
        )
        self._report(f"@{self.name} [{key}]: {len(configurations)} candidates")
        trials = search(
            configurations,
            lambda options: Runner(self, self._candidate(key, plan, options)),
            self._bench(values, grid, stream),
            self._report,
        )
        best = fastest(trials)
        cache.store(
            tuned_key,
            {
                "options": best.options.as_dict(),
                "trials": [
                    [t.label, t.options.as_dict(), t.ms, t.error] for t in trials
                ],
            },
        )
        spec = self._candidate(key, plan, best.options)
        return dataclasses.replace(
            spec, origin=f"autotune, {spec.origin}", trials=tuple(trials)
        )

    def _candidate(
        self, key: DispatchKey, plan: Plan, options: CompileOptions
    ) -> Specialization:
        """An autotuning candidate of `key` as it runs: `options`' kernel, or
        with `split_k` > 1 the split pair on `options`' tile shape. Its origin
        ends with how its code came ("compiled" or "disk cache")."""
        tuned = dataclasses.replace(
            plan, options=options, sources=_tuned_sources(plan, options)
        )
        splits = options.split_k or 1
        if splits > 1:
            decision = dataclasses.replace(
                plan.decision, split_k=splits, stream_k=False
            )
            spec = self._pair(dataclasses.replace(tuned, decision=decision))
            made = "disk cache" if "disk cache" in spec.origin else "compiled"
            return dataclasses.replace(spec, origin=f"K split {splits} ways, {made}")
        kernel, origin = self._build(options)
        return Specialization(tuned, kernel, origin)

    # ---------------------------------------------------------------- calling

    def _convert(self, args: Sequence[Any], stream: int) -> list[Any]:
        """The arguments converted once, with the checks every kernel makes
        (the shared ones, then what any compiled kernel needs of an array)."""
        from tawa_xdsl.runtime.arrays import copy_on_launch, device_array
        from tawa_xdsl.runtime.kernel import check_device_array

        values = check_arguments(
            self.name,
            self.params,
            args,
            lambda v: device_array(v, stream),
            copy_on_launch,
        )
        for p, v in zip(self.params, values, strict=True):
            if p.is_tensor:
                check_device_array(self.name, p, v)
        return values

    def _select(self, values: Sequence[Any], grid: Any, stream: int) -> Specialization:
        key = dispatch_key(self.params, values)
        split = grid is None
        # a winner of calls with grid= (single kernels) is no winner of those
        # that may split, nor the other way round
        tuned = self._specs if split else self._unsplit
        searchable = all(key.tma) and not shared_inputs(self.params, values)
        if key not in tuned and self.autotune and searchable:
            tuned[key] = self._autotuned(key, values, grid, stream)
        spec = self._within_grid_limits(self._spec(key, split), values, grid)
        self.last, self.last_empty, self.last_grid = spec, None, grid
        return spec

    def _past_grid_limits(self, plan: Plan, values: Sequence[Any], grid: Any) -> bool:
        """Whether `plan` runs a plain grid that CUDA refuses for these values:
        more than `MAX_GRID` programs along y or z (a batch or head count past
        65535); the caller's own grid and persistent=False stand as given."""
        from tawa_xdsl.grid import infer_grid

        options = plan.options
        given = self.requested
        if grid is not None or options.persistent or given.persistent is False:
            return False
        if given.reverse_x:  # the caller's, which a persistent kernel cannot take
            return False
        if plan.decision.split_k > 1 or plan.decision.stream_k:
            return False
        if self._plain_grid is None:
            return False
        launch = infer_grid(self._plain_grid, values)
        return any(e > limit for e, limit in zip(launch[1:], MAX_GRID[1:], strict=True))

    def _walking_plan(self, plan: Plan) -> Plan:
        """`plan`'s key planned persistent (its stages fitted to that): one
        program per SM walks every tile along x (the persistent pass numbers
        the tiles of all three axes), so y and z extents past CUDA's limit
        run."""
        walking = self.plan(plan.key, split=False, stream=False, walking=True)
        reason = Reason(
            "grid limits",
            f"persistent: the plain grid has more than {MAX_GRID[1]} programs "
            "along y or z, which CUDA does not launch; one program per SM walks "
            "the tiles instead",
        )
        decision = dataclasses.replace(
            walking.decision, reasons=(*walking.decision.reasons, reason)
        )
        sources = {**walking.sources, "persistent": "grid limits"}
        return dataclasses.replace(walking, decision=decision, sources=sources)

    def _within_grid_limits(
        self, spec: Specialization, values: Sequence[Any], grid: Any
    ) -> Specialization:
        """`spec`, or where its plain grid passes CUDA's limits for these
        values, its plan made persistent (`_walking_plan`), compiled once. A
        kernel the persistent pass refuses keeps `spec`, whose launch is then
        refused naming the axis."""
        if not self._past_grid_limits(spec.plan, values, grid):
            return spec
        walking = self._walking_plan(spec.plan)
        if walking.options not in self._walking:
            try:
                kernel, origin = self._build(walking.options)
            except (OpDiagnostic, PassFailedException):
                return spec
            self._walking[walking.options] = Specialization(
                walking, kernel, f"rules, {origin}"
            )
        return self._walking[walking.options]

    def _launches(
        self, spec: Specialization, values: Sequence[Any], stream: int, grid: Any
    ) -> list[tuple[Kernel, list[Any], Any]]:
        """The kernels `spec` launches, in order, each with its arguments and
        grid (a split's: the call's `grid`, None; a stream-K partials kernel:
        one program per SM)."""
        if spec.reduce is None:
            return [(spec.kernel, list(values), grid)]
        out = next(
            v
            for p, v in zip(self.params, values, strict=True)
            if p.is_tensor and p.written
        )
        slots, partials_grid = spec.plan.decision.split_k, grid
        if spec.plan.decision.stream_k:
            extents = call_extents(self.params, values)
            slots, programs = self.stream_k_launch(spec.kernel, extents)
            partials_grid = (programs,)
        ws = self._workspace((slots, *out.shape), stream)
        return [
            (k, original_arguments(k.contract.split, values, ws), g)
            for k, g in ((spec.kernel, partials_grid), (spec.reduce, grid))
        ]

    def _workspace(self, shape: tuple[int, ...], stream: int) -> Any:
        """The f32 workspace of this shape on `stream`, allocated once."""
        key = (shape, stream)
        if key not in self._workspaces:
            from tawa_xdsl.runtime.arrays import compact_strides
            from tawa_xdsl.runtime.realign import DeviceBuffer

            view = ArrayView("f32", shape, compact_strides(shape))
            self._workspaces[key] = DeviceBuffer(view)
        return self._workspaces[key].array

    def realigned(self, spec: Specialization, values: Sequence[Any]) -> list[int]:
        """The parameters (by index) whose arrays a call of `spec` hands to the
        kernel through an aligned buffer (`runtime.realign`): those a kernel of
        `spec` takes as a TMA tensor map and TMA cannot describe, those its
        plan copies onto the sector grid (`Plan.copied`), and device arrays only
        read that share memory with one the kernel writes (`copy_on_launch`:
        copied before each launch, whatever the kernel)."""
        from tawa_xdsl.runtime.kernel import tma_problem

        maps = spec.kernel.tensor_maps
        if spec.reduce is not None:
            maps |= spec.reduce.tensor_maps
        return [
            i
            for i, (p, v) in enumerate(zip(self.params, values, strict=True))
            if p.is_tensor
            and (
                (p.name in maps and (tma_problem(p, v) or p.name in spec.plan.copied))
                or (v.overlaps is not None and v.host is None)
            )
        ]

    def _realign(
        self, spec: Specialization, values: Sequence[Any], stream: int
    ) -> tuple[list[Any], list[Copy], list[Copy]]:
        """`values` with the arrays of `realigned` replaced by their buffers (one
        per parameter and stream, kept while its shape holds), the copies into
        them, and the copies back out of those the kernel writes."""
        from tawa_xdsl.dtypes import DTYPES
        from tawa_xdsl.runtime.arrays import row_strides
        from tawa_xdsl.runtime.realign import Copy, DeviceBuffer

        values = list(values)
        copies_in, copies_out = [], []
        for i in self.realigned(spec, values):
            array = values[i]
            view = ArrayView(
                array.dtype,
                array.shape,
                row_strides(array.shape, DTYPES[array.dtype].itemsize),
            )
            buffer = self._buffers.get((i, stream))
            if buffer is None or buffer.array.view != view:
                buffer = self._buffers[i, stream] = DeviceBuffer(view)
                self._calls.clear()  # their copies may point into the old one
            values[i] = buffer.array
            copies_in.append(Copy(buffer.array, array, stream, buffer))
            if self.params[i].written:
                copies_out.append(Copy(array, buffer.array, stream, buffer))
        return values, copies_in, copies_out

    def specialize(
        self, *args: Any, grid: Any = None, stream: int = 0
    ) -> Specialization:
        """The specialization a call with `args` runs (compiled, autotuned first
        with `autotune=True`), without launching it."""
        return self._select(self._convert(args, stream), grid, stream)

    def for_shape(self, split: bool = True, **extents: int) -> Specialization:
        """The specialization of a call with these extents (by `tile.dims` name)
        and aligned operands, compiled (never autotuned: that needs arrays);
        `split=False`: of such a call with grid= (K never split). A call
        whose every output is empty has none: it launches nothing."""
        empty = self._empty_outputs(extents=extents)
        if empty is not None:
            raise KernelArgumentError(
                f"{self.name}: a call with these extents launches nothing (every "
                f"output is empty: {empty}), so it has no specialization"
            )
        return self._spec(self.key_for(**extents), split)

    def _spec(self, key: DispatchKey, split: bool) -> Specialization:
        """The specialization of `key`, compiled once (or autotuned: `_select`);
        when not `split`, a single kernel in place of a pair (the one
        autotuned for calls with grid=, else the kernel unsplit)."""
        if not split and key in self._unsplit:
            return self._unsplit[key]
        if key not in self._specs:
            self._specs[key] = self._compiled(key)
        spec = self._specs[key]
        if split or spec.reduce is None:
            return spec
        self._unsplit[key] = self._compiled(key, split=False)
        return self._unsplit[key]

    def _writes_nothing(self, values: Sequence[Any], grid: Any) -> bool:
        """Whether every array the call writes is empty: then nothing is
        compiled or launched (`runtime.kernel.writes_nothing`; recorded in
        `last_empty`); a `grid` given is checked all the same."""
        empty = self._empty_outputs(values)
        if empty is None:
            return False
        if grid is not None:
            normalize_grid(grid, self.name)
        self.last_empty = empty
        return True

    def _empty_outputs(
        self, values: Sequence[Any] = (), extents: Mapping[str, int] | None = None
    ) -> str | None:
        """When every array a call with `values` (or with these extents, by
        `tile.dims` name) writes is empty: the outputs with their shapes (of
        extents: the names that are 0); None when one is not (or may not be)."""
        from tawa_xdsl.runtime.kernel import writes_nothing

        outputs = [p for p in self.params if p.is_tensor and p.written]
        if extents is None:
            tensors = [
                (p, v) for p, v in zip(self.params, values, strict=True) if p.is_tensor
            ]
            if not writes_nothing(tensors):
                return None
            return ", ".join(
                f"{p.name} {' x '.join(map(str, v.shape))}"
                for p, v in tensors
                if p.written
            )
        zeros = [[n for n in p.dims if n and extents.get(n) == 0] for p in outputs]
        if not all(zeros):
            return None
        return ", ".join(
            f"{p.name} ({' = '.join(z)} = 0)"
            for p, z in zip(outputs, zeros, strict=True)
        )

    def __call__(self, *args: Any, grid: Any = None, stream: int = 0) -> None:
        """Launch on `stream` (see `runtime.Kernel.__call__`). A call repeating
        an earlier call's arrays (address, shape, strides, dtype), scalars,
        grid and stream launches what that call launched (`launch_cache`)."""
        signature = call_signature(args, grid, stream)
        if signature is not None:
            cached = self._calls.get(signature)
            if cached is None:
                launch = self.bind(*args, grid=grid, stream=stream)
                spec = self.last if self.last_empty is None else None
                cached = CachedCall(launch.detached(), spec, self.last_empty)
                self._calls.put(signature, cached)
            elif cached.spec is not None:
                self.last, self.last_empty, self.last_grid = cached.spec, None, grid
            else:
                self.last_empty = cached.empty
            cached.launch()
            return
        values = self._convert(args, stream)
        if self._writes_nothing(values, grid):
            return
        spec = self._select(values, grid, stream)
        values, copies_in, copies_out = self._realign(spec, values, stream)
        for copy in copies_in:
            copy()
        for kernel, kernel_args, kernel_grid in self._launches(
            spec, values, stream, grid
        ):
            kernel(*kernel_args, grid=kernel_grid, stream=stream)
        for copy in copies_out:
            copy()

    def bind(self, *args: Any, grid: Any = None, stream: int = 0) -> Any:
        """A launcher of this call's specialization (`runtime.Kernel.bind`; with
        aligning copies or a split, one that runs every step in order)."""
        values = self._convert(args, stream)
        if self._writes_nothing(values, grid):
            return Launchers(())
        spec = self._select(values, grid, stream)
        values, copies_in, copies_out = self._realign(spec, values, stream)
        steps = [
            *copies_in,
            *(
                kernel.bind(*kernel_args, grid=kernel_grid, stream=stream)
                for kernel, kernel_args, kernel_grid in self._launches(
                    spec, values, stream, grid
                )
            ),
            *copies_out,
        ]
        return steps[0] if len(steps) == 1 else Launchers(tuple(steps))

    # ------------------------------------------------------------ inspection

    @property
    def current(self) -> Specialization:
        """The last call's specialization, or before any call the one compiled
        for no particular shape."""
        if self.last is not None:
            return self.last
        if None not in self._specs:
            self._specs[None] = self._compiled(None)
        return self._specs[None]

    @property
    def options(self) -> dict[str, Any]:
        """The resolved options of `current`; none ({}) when the last call
        launched nothing (its outputs were empty: `explain()` says so)."""
        if self.last_empty is not None:
            return {}
        return self.current.options

    @property
    def ptx(self) -> str:
        return self.current.ptx

    @property
    def kernel(self) -> Kernel:
        """The runtime kernel of `current` (`load`, `num_regs`, `threads`, ...)."""
        return self.current.kernel

    def _explained(
        self, key: DispatchKey, split: bool
    ) -> tuple[Plan, Specialization | None]:
        """The plan a call of `key` runs, and its specialization where one is
        compiled: as `_spec` finds it, without compiling; when not `split` (a
        call with grid=), a single kernel in place of a pair."""
        if not split and key in self._unsplit:
            return self._unsplit[key].plan, self._unsplit[key]
        spec = self._specs.get(key)
        plan = spec.plan if spec is not None else self._runnable(self.plan(key))
        if split or not (plan.decision.split_k > 1 or plan.decision.stream_k):
            return plan, spec
        return self._runnable(self.plan(key, split=False)), None

    def _given_grid(
        self,
        plan: Plan,
        spec: Specialization | None,
        grid: Any,
        values: Sequence[Any],
    ) -> str:
        """What a call of `plan` with `grid` launches, the grid checked as the
        launch checks it (a persistent kernel takes a grid along x only, a
        clustered one whole clusters, CUDA its limits per axis); with the
        grid the compiled kernel's stores give for `values`, where known."""
        from tawa_xdsl.grid import infer_grid
        from tawa_xdsl.runtime.kernel import check_grid

        options = plan.options
        persistent = bool(options.persistent)
        launch = normalize_grid(grid, self.name, options.cluster or 1, persistent)
        check_grid(self.name, launch, "the grid given")
        given = f"  grid {launch} given: one kernel, K not split"
        if persistent:
            return (
                f"{given}; {launch[0]} persistent program{'s' * (launch[0] > 1)} "
                "walk the output tiles (without grid=, at most one per SM: "
                f"{Device.current().sms})"
            )
        programs = math.prod(launch)
        given += f"; {programs} program{'s' * (programs > 1)}"
        rule = spec.kernel.contract.grid if spec is not None else None
        if values and rule is not None:
            return (
                f"{given} (without grid=, the stores give {infer_grid(rule, values)})"
            )
        return given

    def explain(self, *args: Any, grid: Any = None, **extents: int) -> str:
        """Which specialization a call with `args`, or with these extents (by
        `tile.dims` name), runs, or the last call's with neither, and why: the
        key, the rules that fired with their numbers, every option with where
        it came from. Nothing is compiled or tuned for it (a pass that may
        refuse to split K is run on the tile IR, as a call runs it). A call
        whose every output is empty launches nothing, and says so. With
        `grid`, of a call that passes it: one kernel on that grid, K never
        split; a grid such a call refuses is refused alike."""
        if grid is not None and not (args or extents):
            raise KernelArgumentError(
                f"{self.name}: explain(grid=...) describes a call with that grid: "
                "give the call's arguments, or its extents by tile.dims name, too"
            )
        values = self._convert(args, 0) if args else []
        if args:
            empty = self._empty_outputs(values)
        elif extents:
            empty = self._empty_outputs(extents=extents)
            if empty is not None:  # the names and the other extents are checked
                self.key_for(**{n: e for n, e in extents.items() if e != 0})
        else:
            empty = self.last_empty
        if empty is not None:
            if grid is not None:  # checked all the same, as the call checks it
                normalize_grid(grid, self.name)
            return (
                f"@{self.name}: nothing is launched: every output is empty "
                f"({empty}); the call returns at once, compiling and running no "
                "kernel (a grid of zero programs is no launch)\n"
                "options: none (no kernel runs)"
            )
        if args or extents:
            key = dispatch_key(self.params, values) if args else self.key_for(**extents)
            plan, spec = self._explained(key, grid is None)
        else:  # the last call's (unsplit if it passed grid=), or `current`'s
            spec = self.last if self.last is not None else self._specs.get(None)
            key = spec.plan.key if spec is not None else None
            plan = spec.plan if spec is not None else self._runnable(self.plan(key))
            grid = self.last_grid if self.last is not None else None
        if args and self._past_grid_limits(plan, values, grid):
            plan = self._walking_plan(plan)  # what the call runs instead
            spec = self._walking.get(plan.options)
        lines = [f"@{self.name}: {key if key is not None else 'no shape'}"]
        if extents and (unset := unset_dims(self.params, extents)):
            names = ", ".join(unset)
            lines.append(
                f"  {names} not given: the shape rules read every extent a call "
                f"has; give {names} too for the plan a call of this shape runs"
            )
        if grid is not None:
            lines.append(self._given_grid(plan, spec, grid, values))
        for name, writer in shared_inputs(self.params, values) if args else ():
            lines.append(
                f"  {name}: shares memory with {writer}, which the kernel writes; "
                "read from a copy made before each launch"
                + (" (not autotuned: its runs would overwrite it)" * self.autotune)
            )
        inputs, outputs = self.off_grid(key)
        threads = thread_load_names(plan.options.thread_loads or "")
        if read := [n for n in inputs if n in threads]:
            lines.append(
                f"  {', '.join(read)}: TMA cannot describe; loaded by the producer "
                "warpgroup's threads in the kernel (thread_loads), not copied"
            )
        if copied := [n for n in inputs if n not in threads]:
            lines.append(
                f"  {', '.join(copied)}: TMA cannot describe; copied into buffers "
                f"with {SECTOR_BYTES}-byte aligned rows before each launch"
            )
        if outputs:
            lines.append(
                f"  {', '.join(outputs)}: TMA cannot describe; stored from "
                "registers, K is not split"
            )
        lines += [f"  {reason}" for reason in plan.decision.reasons]
        if spec is None:
            how = "not compiled yet"
            if self.autotune and key is not None:
                how += "; autotune searches around these options on the first call"
        else:
            how = spec.origin
            best = min((t.ms for t in spec.trials if t.ms is not None), default=None)
            for t in spec.trials:
                time = (
                    f"{t.ms:.4f} ms" if t.ms is not None else f"skipped: {t.error[:80]}"
                )
                mark = " (chosen)" if t.ms is not None and t.ms == best else ""
                lines.append(f"  tried {t.label}: {time}{mark}")
        lines.append(f"options {describe(plan.options.as_dict())} ({how}):")
        lines += [
            f"  {name} = {value!r} ({plan.sources.get(name, 'default')})"
            for name, value in plan.options.as_dict().items()
            if name != "tuned"
        ]
        if spec is not None and spec.reduce is not None:
            # a pair's kernels resolve their own options (stages, grid)
            lines.append(
                "kernels run: "
                + ", ".join(
                    f"@{k.name} {describe(k.options)}"
                    for k in (spec.kernel, spec.reduce)
                )
            )
        return "\n".join(lines)
