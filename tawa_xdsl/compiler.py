"""Compile options and `compile`: a tile kernel in, a GPU kernel out.

    gemm = tawa_xdsl.compile("examples/gemm.mlir", "gemm_nt", num_stages=4)
    gemm(a, b, c)                      # torch / cupy / numpy; grid from c's shape

`CompileOptions` is the one place that holds the defaults of the Hopper pipeline.
An option left None is resolved for each kernel, in this order:

1. the tuning rules (`tuning.default_options`: what `benchmarks/tune.py` measured
   best for the kernel's structure), unless `tuned=False`;
2. the kernel's structure: the consumer warpgroups from the tile rows (each
   warpgroup owns whole 64-row wgmma slices: a 64-row tile gets one, 128 rows
   two, 192 rows three) and the register budgets from the consumer count;
3. `DEFAULTS`, the static defaults, which the single passes take too
   (`pipeline`, `persistent`, `cooperative`, `register-budget`,
   `convert-aref-to-nvgpu-async`).

`tawa-hopper-pipeline` is a `CompileOptions` whose fields are its pass options, and
it resolves them per kernel (a module may hold GEMM and attention kernels), so
`tawa-opt -p tawa-hopper-pipeline` prints the kernel `compile` runs. `compile`
hands the resolved options to the pipeline as an object, lowers, prints PTX, and
returns a `runtime.Kernel` (which only loads and launches). The passes import their
defaults from here, so this module imports the compiler stages only inside the
functions that run them.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, get_args, get_type_hints

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tawa_xdsl.pass_pipeline import OptionValueError
from tawa_xdsl.target import WGMMA_ROWS

if TYPE_CHECKING:
    from tawa_xdsl.dispatch import Dispatcher


def thread_load_names(text: str) -> frozenset[str]:
    """The parameter names a `thread_loads` option gives (comma-separated,
    spaces ignored)."""
    return frozenset(n.strip() for n in text.split(",") if n.strip())


@dataclass(frozen=True)
class CompileOptions:
    """Every option of the Hopper pipeline; None means "resolve it for the kernel"
    (see the module docstring)."""

    num_stages: int | None = None
    """Slots of each aref ring (`pipeline{num-stages}`)."""
    mma_depth: int | None = None
    """wgmma groups kept in flight (`pipeline{mma-depth}`)."""
    two_stage: bool | None = None
    """FlashAttention-3's overlap of loops with two dots (`pipeline{two-stage}`)."""
    num_consumers: int | None = None
    """Consumer warpgroups sharing each tile by rows (`cooperative`)."""
    producer_registers: int | None = None
    """`setmaxnreg` budget of the producer warpgroup (`register-budget`)."""
    consumer_registers: int | None = None
    """`setmaxnreg` budget of each consumer warpgroup (`register-budget`)."""
    block_m: int | None = None
    """Tile size named BM (`tile-shape`); 0 keeps the written size."""
    block_n: int | None = None
    """Tile size named BN (`tile-shape`); 0 keeps the written size."""
    block_k: int | None = None
    """Tile size named BK (`tile-shape`); 0 keeps the written size."""
    persistent: bool | None = None
    """One program per SM walks the output tiles (`persistent`)."""
    group_m: int | None = None
    """Tile rows per raster group of a persistent kernel (`persistent{group-m}`)."""
    longest_first: bool | None = None
    """A persistent kernel walks rows from the last (`persistent{longest-first}`)."""
    dynamic_tiles: bool | None = None
    """A persistent kernel's programs take their next tiles from a tile counter
    (`persistent{dynamic}`) instead of walking them in a fixed order."""
    outer_stages: int | None = None
    """Slots of rings put once per persistent tile (`pipeline{outer-stages}`)."""
    tma_store: bool | None = None
    """Epilogue stores through TMA where provably safe
    (`convert-aref-to-nvgpu-async{tma-store}`)."""
    thread_loads: str | None = None
    """Tensor parameters, by name and comma-separated ("b" or "a,b"), whose
    tiles the producer warpgroup's threads load with plain loads instead of
    TMA (`convert-aref-to-nvgpu-async{thread-loads}`): for inputs whose base
    or row pitch TMA cannot describe, without the copy the dispatcher makes of
    them otherwise (which is faster: NOTES 3.80). "" none; None as the
    dispatcher decides (`dispatch_rules.thread_loads_pay`)."""
    ping_pong: bool | None = None
    """Consumer warpgroups take turns issuing wgmmas (`ping-pong`)."""
    cluster: int | None = None
    """Thread blocks per cluster along x (`cluster{size}`); 1: no clusters."""
    reverse_x: bool | None = None
    """Program ids along x counted from the grid's end (`reverse-grid`)."""
    stream_k: bool | None = None
    """Whether a `compile()` call runs a GEMM as its `stream-k` pair (one
    program per SM shares the tiles' K iterations; `Dispatcher`): None as the
    shape rules decide (`heuristics`, `dispatch_rules.STREAM_K_GAIN`), False
    never, True whenever the call may split K. A choice of the calls, not of
    the lowering: `tawa-hopper-pipeline` lowers the kernels it is given."""
    split_k: int | None = None
    """How many ways a `compile()` call splits a GEMM's K (its `split-k`
    pair): None (or 0) as the shape rules decide (`dispatch_rules.split_count`
    and the wave model), 1 never, S > 1 always S ways where the call may split
    (not with grid=; the tile shape the rules still choose, for S slices).
    Like `stream_k`, a choice of the calls, not of the lowering."""
    swap_ab: bool | None = None
    """Compute a GEMM as C^T = B A^T (`swap-operands`, after `tile-shape`):
    the weight tile (`block_n`, 64 rows per consumer warpgroup) on wgmma's
    M side and the few rows of A (`block_m`: wgmma's N, 8 to 256, a multiple
    of 8) on its N side, the output stored transposed from registers. For
    small M (a decode GEMM's 16 rows would be 48 of 64 padding rows). None:
    as the shape rules decide (`dispatch_rules.SWAP_AB_MAX_M`)."""
    tuned: bool = True
    """Whether the tuning rules take part in resolving the options."""

    def __post_init__(self) -> None:
        """Option values of the wrong type are refused by name (an int option
        takes no bool, a bool option no int), not found out by a pass. NumPy's
        integers and bools (a sweep over `np.arange`) are taken as the Python
        values they stand for, which the JSON cache keys can hold."""
        for f in fields(CompileOptions):
            value = getattr(self, f.name)
            if value is None and f.name != "tuned":
                continue
            if f.name == "thread_loads":
                if not isinstance(value, str):
                    raise TypeError(
                        f"option thread_loads must be str (names, comma-separated), "
                        f"got {value!r}"
                    )
                object.__setattr__(
                    self, f.name, ",".join(sorted(thread_load_names(value)))
                )
                continue
            taken = _option_value(value, f.name in _BOOL_OPTIONS)
            if taken is None:
                wanted = "bool" if f.name in _BOOL_OPTIONS else "int"
                raise TypeError(f"option {f.name} must be {wanted}, got {value!r}")
            object.__setattr__(self, f.name, taken)
        if self.split_k is not None and self.split_k < 0:
            raise OptionValueError(
                f"option split_k must be 0 or more, got {self.split_k}"
            )
        if self.dynamic_tiles and not self.persistent:
            # refused whatever the shape (a call whose rules kept persistent
            # ran, one whose rules turned it off was refused by the pipeline)
            raise OptionValueError(
                "option dynamic_tiles=True is how a persistent kernel takes its "
                "tiles: give persistent=True too"
            )
        if self.persistent and self.reverse_x:
            raise OptionValueError(
                "options persistent=True and reverse_x=True: reverse_x orders how "
                "the GPU starts the programs of a grid; a persistent kernel walks "
                "its tiles itself (use longest_first)"
            )
        if self.swap_ab and ((self.split_k or 0) > 1 or self.stream_k):
            raise OptionValueError(
                "option swap_ab=True with a K cut (split_k > 1 or stream_k=True): "
                "the swapped GEMM runs whole, its K uncut; give one of them"
            )
        if self.swap_ab and self.block_m and (self.block_m % 8 or self.block_m > 256):
            raise OptionValueError(
                f"option block_m={self.block_m} with swap_ab=True: the rows of A are "
                "wgmma's N side, a multiple of 8 up to 256"
            )
        if (self.split_k or 0) > 1 and self.stream_k:
            raise OptionValueError(
                "options split_k and stream_k=True both choose how K is cut: "
                "give one of them"
            )

    @classmethod
    def of(cls, options: CompileOptions) -> Self:
        """`options` as an instance of `cls` (a subclass such as the pipeline)."""
        return cls(**options.as_dict())

    def given(self) -> dict[str, Any]:
        """The options set (not None), `tuned` aside."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(CompileOptions)
            if f.name != "tuned" and getattr(self, f.name) is not None
        }

    def as_dict(self) -> dict[str, Any]:
        """Every option by name, `tuned` included (what `Kernel.options` shows)."""
        return {f.name: getattr(self, f.name) for f in fields(CompileOptions)}

    def resolve(
        self, kernel: func.FuncOp, shaped: Mapping[str, Any] | None = None
    ) -> CompileOptions:
        """The options for `kernel` (tile IR), every one set; `shaped` are the
        choices of the shape rules for one problem (`heuristics.decide`)."""
        return self.resolve_sources(kernel, shaped)[0]

    def resolve_sources(
        self, kernel: func.FuncOp, shaped: Mapping[str, Any] | None = None
    ) -> tuple[CompileOptions, dict[str, str]]:
        """The options for `kernel`, and where each came from ("given", "shape",
        "tuned", "structure" or "default"; `Dispatcher.explain` shows them).

        The shape rules sit between the given options and the tuning rules, and
        take part only when the tuning rules do (`tuned=False` means exactly the
        options given and the static defaults)."""
        from tawa_xdsl.tuning import default_options, tile_rows

        given = self.given()
        shape = {
            k: v for k, v in (shaped or {}).items() if self.tuned and k not in given
        }
        if given.get("swap_ab") or shape.get("swap_ab"):
            kernel = swapped_kernel(kernel)  # its tiles' rows are the weight side
        sizes = {
            name: value
            for name, option in TILE_OPTIONS
            if (value := given.get(option) or shape.get(option))
        }
        stages = given.get("num_stages")
        consumers = given.get("num_consumers") or shape.get("num_consumers")
        if not consumers and (given.get("ping_pong") or shape.get("ping_pong")):
            consumers = 2  # ping-pong needs two consumer warpgroups taking turns
        tuned = (
            default_options(
                kernel,
                sizes,
                stages=stages,
                outer_stages=given.get("outer_stages"),
                persistent=given.get("persistent"),
                dynamic_tiles=bool(given.get("dynamic_tiles")),
                num_consumers=consumers,
                tma_store=given.get("tma_store") is not False,
            )
            if self.tuned
            else {}
        )
        for layer in (shape, tuned):  # a chosen tile gives way to the consumers
            if consumers and _splits_badly(
                kernel, {**tuned, **shape, **given}, consumers
            ):
                for _, option in TILE_OPTIONS:
                    if option not in given:
                        layer.pop(option, None)
        for options in EXCLUSIVE:  # a tuned choice gives way to one it excludes
            if any(given.get(o) or shape.get(o) for o in options):
                for o in options - given.keys() - shape.keys():
                    tuned.pop(o, None)
        chosen = {**DEFAULTS.given(), **tuned, **shape, **given}
        if "two_stage" not in given and chosen["mma_depth"] + 1 > chosen["num_stages"]:
            # a rule's two-stage overlap gives way to the stages given: it holds
            # mma_depth + 1 slots (num_stages=1 given to attention was refused
            # by the pipeline, naming two-stage, which the caller never gave)
            for layer in (shape, tuned):
                layer.pop("two_stage", None)
            chosen["two_stage"] = DEFAULTS.two_stage
        layers = (("given", given), ("shape", shape), ("tuned", tuned))
        sources = {
            option: next((s for s, layer in layers if option in layer), "default")
            for option in chosen
        }
        if "num_consumers" not in chosen:
            sizes = {
                name: chosen[option] for name, option in TILE_OPTIONS if chosen[option]
            }
            # ping-pong's two warpgroups at least: on 64-row tiles cooperative
            # then says so at the dot (ping-pong said "run cooperative first")
            chosen["num_consumers"] = max(
                default_consumers(tile_rows(kernel, sizes)), consumers or 1
            )
            sources["num_consumers"] = "structure"
        if chosen["num_consumers"] in REGISTER_BUDGETS:  # else cooperative refuses it
            budgets = default_registers(chosen["num_consumers"])
            for option, budget in zip(REGISTER_OPTIONS, budgets, strict=True):
                if option not in chosen:
                    chosen[option] = budget
                    sources[option] = "structure"
        return dataclasses.replace(self, **chosen), sources


def swapped_kernel(kernel: func.FuncOp) -> func.FuncOp:
    """A copy of `kernel` through `swap-operands` (refused as the pass refuses
    it): the kernel whose tiles the options resolved under `swap_ab` are for
    (the consumer warpgroups split the weight side, the output is stored
    from registers, so no staging tile takes shared memory)."""
    from tawa_xdsl.registry import make_context
    from tawa_xdsl.transforms.swap_operands import SwapOperandsPass

    module = ModuleOp([kernel.clone()])
    SwapOperandsPass().apply(make_context(), module)
    copy = module.body.block.first_op
    assert isinstance(copy, func.FuncOp)
    return copy


def _mma_loops(kernel: func.FuncOp) -> bool:
    """Whether some scf.for of `kernel` holds a tile.dot in its body (the
    loops whose MMAs `ping-pong` takes turns on: it refused the others only
    after lowering, after `ping_pong` had been checked against the tile rows,
    whose advice, 128-row tiles, could not help)."""
    from xdsl.dialects import scf

    from tawa_xdsl.dialects import tile

    return any(
        isinstance(op, scf.ForOp)
        and any(isinstance(o, tile.DotOp) for o in op.body.block.ops)
        for op in kernel.walk()
    )


def _splits_badly(
    kernel: func.FuncOp, options: Mapping[str, Any], consumers: int
) -> bool:
    """Whether the tiles `options` size leave rows that `consumers` warpgroups
    cannot share in whole 64-row wgmma slices (`cooperative` refuses them)."""
    from tawa_xdsl.tuning import tile_rows

    sizes = {name: options[o] for name, o in TILE_OPTIONS if options.get(o)}
    return any(r % (WGMMA_ROWS * consumers) for r in tile_rows(kernel, sizes))


def _option_value(value: object, boolean: bool) -> int | bool | None:
    """`value` as the Python bool (`boolean`) or int an option holds, or None
    when it is neither (a bool is no int here: `num_stages=True`). NumPy's
    scalars are read by their dtype's kind, without importing NumPy."""
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if getattr(value, "ndim", 0) != 0:
        return None
    if isinstance(value, bool) or kind == "b":
        return bool(value) if boolean else None  # type: ignore[arg-type]
    if boolean or not (isinstance(value, int) or kind in ("i", "u")):
        return None
    return operator.index(value)  # type: ignore[arg-type]


_BOOL_OPTIONS = frozenset(
    name
    for name, hint in get_type_hints(CompileOptions).items()
    if bool in (hint, *get_args(hint))
)

DEFAULTS = CompileOptions(
    num_stages=3,
    mma_depth=1,
    two_stage=False,
    block_m=0,
    block_n=0,
    block_k=0,
    persistent=False,
    group_m=8,
    longest_first=False,
    dynamic_tiles=False,
    outer_stages=2,
    tma_store=True,
    thread_loads="",
    ping_pong=False,
    cluster=1,
    reverse_x=False,
    stream_k=False,
    split_k=0,
    swap_ab=False,
)
"""The static defaults (`split_k` 0: as the rules decide). The consumer count and the register budgets are left to
the kernel's structure (`default_consumers`, `default_registers`)."""

TILE_OPTIONS = (("BM", "block_m"), ("BN", "block_n"), ("BK", "block_k"))
"""The tile dimension names (`tile-shape`) and the options that size them."""

REGISTER_OPTIONS = ("producer_registers", "consumer_registers")

EXCLUSIVE = (frozenset({"persistent", "reverse_x"}),)
"""Options that cannot both be on (`hopper_passes` refuses the pair): when one is
given, neither the shape rules (`heuristics`) nor the tuning rules turn the
other on."""


MAX_CONSUMERS = 3
"""Consumer warpgroups a block can have next to the producer (`cooperative`)."""

REGISTER_BUDGETS = {1: (40, 232), 2: (24, 240), 3: (32, 160)}
"""setmaxnreg budgets (producer, consumer) that fill the SM's register file for
each consumer count (the TMA producer needs few; FlashAttention-3's split)."""


def describe(options: Mapping[str, Any]) -> str:
    """A short name for compile options: D3-P1-W2-BN256-rx-c2-pers-g1-q1-2s-pp
    (rx: program ids along x reversed; c2: clusters of two blocks; q1: the
    once-per-tile rings, Q, in one slot; sk: a call runs the kernel's
    stream-K pair, `stream_k`; s4: its K split 4 ways, `split_k`; ba:
    operands swapped, `swap_ab`). Options not given (or None) read as the static
    defaults (`Kernel.options` gives them all, resolved). The benchmarks' CSV
    files and the autotuner's progress lines name configurations so."""
    options = {
        **DEFAULTS.given(),
        **{k: v for k, v in options.items() if v is not None},
    }
    parts = [
        f"D{options['num_stages']}",
        f"P{options['mma_depth']}",
        f"W{options.get('num_consumers', '?')}",
    ]
    for key, tag in (("block_m", "BM"), ("block_n", "BN"), ("block_k", "BK")):
        if options.get(key):
            parts.append(f"{tag}{options[key]}")
    if options.get("reverse_x"):
        parts.append("rx")
    if options.get("cluster", 1) > 1:
        parts.append(f"c{options['cluster']}")
    if options.get("persistent"):
        parts.append("pers")
        if options["group_m"] != DEFAULTS.group_m:
            parts.append(f"g{options['group_m']}")
        if options.get("longest_first"):
            parts.append("lf")
        if options.get("dynamic_tiles"):
            parts.append("dyn")
        if options["outer_stages"] != DEFAULTS.outer_stages:
            parts.append(f"q{options['outer_stages']}")
    if options.get("two_stage"):
        parts.append("2s")
    if options.get("ping_pong"):
        parts.append("pp")
    if options.get("tma_store") is False:
        parts.append("direct")
    if options.get("thread_loads"):
        parts.append("tl-" + options["thread_loads"].replace(",", "."))
    if options.get("stream_k"):
        parts.append("sk")
    if options.get("split_k"):
        parts.append(f"s{options['split_k']}")
    if options.get("swap_ab"):
        parts.append("ba")
    return "-".join(parts)


def default_registers(num_consumers: int) -> tuple[int, int]:
    """The (producer, consumer) budgets for `num_consumers` consumer warpgroups."""
    return REGISTER_BUDGETS[num_consumers]


def default_consumers(rows: Iterable[int]) -> int:
    """The most consumer warpgroups (up to 3) that split tiles of these row counts
    into whole 64-row wgmma slices each: 1 for 64 rows, 2 for 128 or 256, 3 for 192.
    One when no tile has a whole number of slices (the passes then say why), or
    when there is no such tile."""
    rows = list(rows)
    return max(
        n
        for n in range(1, MAX_CONSUMERS + 1)
        if n == 1 or (rows and all(r % (WGMMA_ROWS * n) == 0 for r in rows))
    )


def _read_source(source: ModuleOp | str | Path) -> tuple[str, str | None]:
    """The MLIR text of `source`, and the file it came from (for locations):
    bytes that are not UTF-8 are located in the file, as `tawa-opt` does. A
    `str` is a path when it ends in `.mlir` or is one line naming a file (a
    `kernel.tile` was parsed as MLIR: "Could not parse entire input!"). A
    module keeps its ops' source locations (`parse(Path(...))`'s, in the
    user's file): printed without them, its diagnostics pointed into the
    printed text, "<string>:2:3"."""
    from io import StringIO

    from xdsl.printer import Printer

    from tawa_xdsl.diagnostics import decode_source

    if isinstance(source, ModuleOp):
        text = StringIO()
        Printer(stream=text, print_debuginfo=True).print_op(source)
        return text.getvalue(), None
    if isinstance(source, Path) or (
        isinstance(source, str) and (source.endswith(".mlir") or _names_a_file(source))
    ):
        return decode_source(Path(source).read_bytes(), str(source)), str(source)
    if isinstance(source, str):
        return source, None
    raise TypeError(
        "compile: source must be a module, MLIR text or a path, got "
        f"{type(source).__name__}"
    )


def _names_a_file(text: str) -> bool:
    """Whether `text` is one line naming a file (a one-line kernel too long
    for a file name, or holding a NUL, names none)."""
    if "\n" in text or not text.strip():
        return False
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def _options(
    options: CompileOptions | None, fields_given: dict[str, Any]
) -> CompileOptions:
    """`options` with the keyword options applied on top; unknown names are refused
    with the list of known ones."""
    if options is not None and not isinstance(options, CompileOptions):
        raise TypeError(
            "compile: options must be a CompileOptions (or give them as keywords: "
            f"num_stages=4, ...), got {type(options).__name__}"
        )
    known = [f.name for f in fields(CompileOptions)]
    unknown = sorted(set(fields_given) - set(known))
    if unknown:
        raise TypeError(
            f"compile: unknown option(s) {', '.join(unknown)}; the options are "
            f"{', '.join(known)}, allow_spills and autotune"
        )
    return dataclasses.replace(options or CompileOptions(), **fields_given)


def check_options(
    options: CompileOptions,
    kernel: func.FuncOp,
    shaped: Mapping[str, Any] | None = None,
) -> None:
    """Refuse option values that a pass lowering `kernel` would refuse (out of
    range, or a combination the pipeline does not build), before any lowering:
    `compile(num_stages=0)` failed only at the first call, and `explain()`
    described the plan as if it could run. The refusal is at the kernel and
    says where each value the pass takes came from: `mma-depth=3` was refused
    against a num-stages the tuning rules chose, which it did not say."""
    from xdsl.utils.exceptions import PassFailedException, VerifyException

    from tawa_xdsl.diagnostics import OpDiagnostic
    from tawa_xdsl.dialects.roles import check_budget_range, check_register_budget
    from tawa_xdsl.pass_pipeline import ChecksOptions, option_name
    from tawa_xdsl.pipelines import hopper_passes, option_of_field

    _check_cut(options, kernel)
    try:
        resolved, sources = options.resolve_sources(kernel, shaped)
    except OpDiagnostic as e:  # swap-operands' refusal of swap_ab given
        if not options.swap_ab:
            raise
        raise OpDiagnostic(
            e.op,
            f"{e.message} (options for @{kernel.sym_name.data}: swap-ab=true given)",
        ) from None

    def refuse(e: Exception, names: Iterable[str]) -> OpDiagnostic:
        taken = ", ".join(
            f"{option_name(name)}={_spelled(getattr(resolved, name))} {sources[name]}"
            for name in names
            if name in sources
        )
        return OpDiagnostic(
            kernel, f"{e} (options for @{kernel.sym_name.data}: {taken})"
        )

    for p in hopper_passes(resolved):
        if not isinstance(p, ChecksOptions):
            continue
        try:
            p.check_options()
        except PassFailedException as e:
            raise refuse(e, (option_of_field(p, f.name) for f in fields(p))) from None
    _check_given_structure(options, kernel)  # before ping_pong reads the tiles
    turns = resolved.num_consumers or 2
    if resolved.ping_pong and turns < 2:
        raise OpDiagnostic(
            kernel,
            f"ping_pong=true {sources['ping_pong']} needs 2 or 3 consumer "
            "warpgroups taking turns, and num_consumers="
            f"{turns} {sources['num_consumers']}: drop one of them",
        )
    if resolved.ping_pong and not _mma_loops(kernel):
        raise OpDiagnostic(
            kernel,
            f"ping_pong=true {sources['ping_pong']} makes the consumer warpgroups "
            "take turns issuing each loop iteration's MMAs, and no scf.for of "
            f"@{kernel.sym_name.data} holds a tile.dot: drop ping_pong",
        )
    if resolved.ping_pong and _splits_badly(kernel, resolved.as_dict(), turns):
        tiles = ", ".join(
            f"{option}={_spelled(getattr(resolved, option))} {sources[option]}"
            for _, option in TILE_OPTIONS
            if getattr(resolved, option)
        )
        raise OpDiagnostic(
            kernel,
            f"ping_pong=true {sources['ping_pong']} needs {turns} consumer "
            "warpgroups taking turns, each on whole 64-row wgmma slices of a tile, "
            "which "
            f"these tiles' rows do not split into ({tiles or 'the written sizes'}):"
            " drop ping_pong or give 128-row tiles",
        )
    for name in REGISTER_OPTIONS:  # a budget no count of consumers takes
        if (regs := getattr(resolved, name)) is not None:
            try:
                check_budget_range("register-budget", name.split("_")[0], regs)
            except VerifyException as e:
                raise refuse(e, (name,)) from None
    budgets = (resolved.producer_registers, resolved.consumer_registers)
    if resolved.num_consumers in REGISTER_BUDGETS and None not in budgets:
        try:
            check_register_budget("register-budget", resolved.num_consumers, *budgets)
        except VerifyException as e:
            if shaped is not None or not _fit_some_shape(options):
                raise refuse(e, ("num_consumers", *REGISTER_OPTIONS)) from None


def _fit_some_shape(options: CompileOptions) -> bool:
    """Whether the register budgets given fit some consumer count that a
    call's shape may resolve (any, unless the count is given), each budget
    not given at its default for that count: compile() refuses only budgets
    that no call can run (64-row tiles take one consumer warpgroup)."""
    from tawa_xdsl.dialects.roles import register_file_problem

    counts = [options.num_consumers] if options.num_consumers else REGISTER_BUDGETS
    return any(
        register_file_problem(
            n,
            options.producer_registers or REGISTER_BUDGETS[n][0],
            options.consumer_registers or REGISTER_BUDGETS[n][1],
        )
        is None
        for n in counts
        if n in REGISTER_BUDGETS
    )


def _check_given_structure(options: CompileOptions, kernel: func.FuncOp) -> None:
    """Run the passes whose refusal depends on the kernel as well as on an
    option given, `tile-shape` for a tile size (the kernel must name it),
    `cluster` (a load must be the same in every block) and `persistent` (the
    stores must give the tile count), on a copy of the kernel:
    `compile(block_m=128)` of a kernel naming no BM, `cluster=2` of one
    sharing no load or `persistent=True` of one walking its own tiles was
    described by `explain()` as if it could run and refused only at its first
    call. A given `block_m` also fixes the tile rows the consumer warpgroups
    split (`cooperative`): `block_m=96` of a GEMM was refused only when a call
    lowered it."""
    from xdsl.dialects.builtin import ModuleOp

    from tawa_xdsl.diagnostics import OpDiagnostic
    from tawa_xdsl.pass_pipeline import option_name
    from tawa_xdsl.registry import make_context
    from tawa_xdsl.transforms.cluster import ClusterPass
    from tawa_xdsl.transforms.persistent import PersistentPass
    from tawa_xdsl.transforms.swap_operands import SwapOperandsPass
    from tawa_xdsl.transforms.tile_shape import TileShapePass

    given = options.given()
    sizes = {option: given[option] for _, option in TILE_OPTIONS if given.get(option)}
    checks: list[tuple[list[Any], dict[str, Any]]] = []
    if sizes and not given.get("swap_ab"):  # else checked swapped, below
        checks.append(([TileShapePass(**sizes)], sizes))
    if given.get("cluster", 1) != 1:
        checks.append(([ClusterPass(given["cluster"])], {"cluster": given["cluster"]}))
    if given.get("persistent"):
        dynamic = bool(given.get("dynamic_tiles"))
        checks.append(([PersistentPass(dynamic=dynamic)], {"persistent": True}))
    if given.get("swap_ab"):  # the weight side's rows split and placed, swapped
        shaped = [TileShapePass(**sizes)] if sizes else []
        checks.append(([*shaped, SwapOperandsPass()], {**sizes, "swap_ab": True}))
    for passes, said in checks:
        module = ModuleOp([kernel.clone()])
        try:
            for p in passes:
                p.apply(make_context(), module)
            if "block_m" in said or "swap_ab" in said:
                _check_given_rows(module, given.get("num_consumers"))
        except OpDiagnostic as e:
            if "block_m" in said and given.get("num_consumers"):
                said = {**said, "num_consumers": given["num_consumers"]}
            taken = ", ".join(
                f"{option_name(o)}={_spelled(v)} given" for o, v in said.items()
            )
            raise OpDiagnostic(
                e.op, f"{e.message} (options for @{kernel.sym_name.data}: {taken})"
            ) from None


def _check_given_rows(module: ModuleOp, num_consumers: int | None) -> None:
    """Split the resized kernel in `module` over its consumer warpgroups
    (`num_consumers`, else as many as its tile rows take), which refuses rows
    that are not whole 64-row wgmma blocks per warpgroup, and place its
    register tiles, which refuses rows no register layout holds (96 rows of a
    kernel with no `tile.dot`). A kernel that `aref-partition` refuses is
    left to the first call, which says why whatever the options."""
    from xdsl.utils.exceptions import DiagnosticException

    from tawa_xdsl.lowering.aref_to_nvgpu import place_consumer_tiles
    from tawa_xdsl.registry import make_context
    from tawa_xdsl.transforms.aref_partition import ArefPartitionPass
    from tawa_xdsl.transforms.cooperative import CooperativePass
    from tawa_xdsl.transforms.specialized import warp_specialized

    try:
        ArefPartitionPass().apply(make_context(), module)
    except DiagnosticException:
        return
    CooperativePass(num_consumers).apply(make_context(), module)
    for ws in warp_specialized(module):
        place_consumer_tiles(ws)


def _check_cut(options: CompileOptions, kernel: func.FuncOp) -> None:
    """A K cut given (`split_k` > 1, `stream_k`) for a kernel of a pair that
    `split-k` or `stream-k` made already is refused at the kernel, naming both
    (the calls ran the kernel as it is, the options saying it was cut again),
    unless it is the cut that made the pair."""
    from tawa_xdsl.diagnostics import OpDiagnostic
    from tawa_xdsl.transforms.split_k import paired_already

    if options.stream_k:
        given, mode, splits = "stream_k=True", "stream-k", 0
    elif (options.split_k or 0) > 1:
        given, mode, splits = f"split_k={options.split_k}", "split-k", options.split_k
    else:
        return
    try:
        paired_already(kernel, mode, splits)
    except OpDiagnostic as e:
        raise OpDiagnostic(kernel, f"{given} given: {e.message}") from None


def _spelled(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


_CACHE: dict[tuple[str, str, CompileOptions, bool, bool], Dispatcher] = {}


def lower(module: ModuleOp, options: CompileOptions) -> ModuleOp:
    """Run `tawa-hopper-pipeline` with `options` on `module` (in place) and verify
    the result; returns the module."""
    from tawa_xdsl.diagnostics import verify_located
    from tawa_xdsl.pipelines import TawaHopperPipeline
    from tawa_xdsl.registry import make_context

    call_only = dataclasses.replace(options, stream_k=None, split_k=None)
    TawaHopperPipeline.of(call_only).apply(make_context(), module)
    verify_located(module)
    return module


def compile(
    source: ModuleOp | str | Path,
    kernel_name: str,
    options: CompileOptions | None = None,
    allow_spills: bool = False,
    autotune: bool = False,
    **fields_given: Any,
) -> Dispatcher:
    """A GPU kernel for `kernel_name` of `source` (a module, MLIR text or a path)
    that specializes itself per call to the argument shapes
    (`tawa_xdsl.dispatch`). Options come as a `CompileOptions` and/or as
    keywords (num_stages=4, tuned=False, ...); those not given are resolved for
    each call's shape (`heuristics`) and the kernel (`tuning`), or with
    `autotune=True` searched on the first call of each bucket of shapes.
    `options`, `ptx` and `explain()` of the result say what ran and why. A
    kernel whose registers spill is refused at load unless `allow_spills`.
    Results are cached by IR and options, in the process and on disk
    (`kernel_cache`). The source is parsed and the kernel found here, so
    malformed IR (located in its file), a kernel the pipeline does not take
    (`analysis.levels`: one that writes no output) and an unknown kernel name
    fail at once;
    lowering waits for the first call or inspection."""
    from tawa_xdsl.analysis.levels import check_kernel_input
    from tawa_xdsl.dispatch import Dispatcher
    from tawa_xdsl.lowering.ptx_printer import check_entry_name

    for flag, value in (("allow_spills", allow_spills), ("autotune", autotune)):
        if not isinstance(value, bool):
            raise TypeError(f"compile: {flag} must be a bool, got {value!r}")
    chosen = _options(options, fields_given)
    text, file = _read_source(source)
    key = (text, file, kernel_name, chosen, allow_spills, autotune)
    if key not in _CACHE:
        dispatcher = Dispatcher(
            text, kernel_name, chosen, allow_spills, autotune, source_name=file
        )
        check_kernel_input("tawa-hopper-pipeline", dispatcher.tile_kernel)
        check_entry_name(dispatcher.tile_kernel)
        check_options(chosen, dispatcher.tile_kernel)
        _CACHE[key] = dispatcher
    return _CACHE[key]
