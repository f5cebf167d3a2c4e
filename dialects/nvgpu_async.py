"""The nvgpu_async dialect: the Hopper machine that arefs lower to.

Shared memory is allocated statically (`smem_alloc`, `mbarrier_alloc` with byte
offsets into the block's dynamic shared memory). A ring buffer
`!nvgpu_async.smem<3x128x64xbf16>` holds `3` slots of a 128x64 tile each, every
slot 1024-byte aligned and stored in the canonical 128-byte-swizzled layout: the
tile is cut into column chunks 128 bytes wide (64 bf16, 128 fp8), each chunk a
stack of 128-byte rows, exactly what one TMA box writes and what a wgmma
descriptor reads. A matrix tile with narrower rows, 32 or 64 bytes (a 64-wide
fp8 tile: head dim 64 in FP8 attention), is one chunk in the 32- or 64-byte
swizzled layout of its row width (`SmemType.swizzle_bytes`).

Tiles held in registers are builtin tensors whose encoding is a
`#nvgpu_async.frag<...>` layout, so `arith`/`math` keep working on them; the PTX
printer turns each elementwise op into per-register instructions.

Execution model (what the barrier simulator checks, at warpgroup granularity):
`role_dispatch` runs its producer region on one elected thread of the producer
warpgroup and its consumer region on every thread of each consumer warpgroup;
`mbarrier_arrive` counts once per executing warpgroup (one elected thread
arrives); a phase of an mbarrier completes when its pending arrivals reach zero
and its transaction bytes are all delivered. In a cluster (`tile.cluster`), a
`tma_load` with `multicast(N)` writes the same slot of every block and counts
its bytes in each block's barrier, `mbarrier_arrive ... cluster(N)` arrives in
every block, and `cluster_barrier` waits for all blocks.

None of the ops with side effects is `Pure`: canonicalize must never delete a
barrier, a copy or an MMA.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import auto
from typing import ClassVar

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    IndexType,
    IntAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i1,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from tawa_xdsl.dialects.roles import (
    ROLE_TRAITS,
    RoleRegionsOp,
    entry_register_cap,
    is_register_budget,
    register_file_problem,
)
from tawa_xdsl.dialects.tile import (
    ElementReadOp,
    ReduceKindAttr,
    dot_input_problem,
    element_bytes,
    is_fp8,
    is_i32,
    shape_str,
    tile_bytes,
)
from tawa_xdsl.target import (
    MAX_BOX_DIM,
    MAX_CLUSTER,
    MAX_REGS,
    MAX_SMEM_BYTES,
    MBARRIER_BYTES,
    MIN_REGS,
    SLOT_ALIGN,
    SWIZZLE_BYTES,
    THREADS_PER_WARPGROUP,
    WGMMA_K_BYTES,
    swizzle_span,
)

SMEM_ALIGN_SLACK = 1024
"""Dynamic shared memory is only 16-byte aligned; the kernel rounds its base up to
`SLOT_ALIGN`, so its launch asks for this much more than its allocations take."""


def launch_smem_bytes(end: int) -> int:
    """The dynamic shared memory a block whose allocations end at byte `end`
    launches with: `SMEM_ALIGN_SLACK` more, to align the base."""
    return end + SMEM_ALIGN_SLACK


LAUNCH_ATTR = "nvgpu_async.launch"
"""A lowered kernel's launch: a `LaunchAttr` (threads per block, bytes of dynamic
shared memory, blocks per cluster)."""
ABI_ATTR = "nvgpu_async.abi"
"""A lowered kernel's parameters: one `ParamAttr` each, in order."""


def wgmma_k(element_type: Attribute) -> int:
    """K of one wgmma instruction for inputs of `element_type`."""
    return WGMMA_K_BYTES // element_bytes(element_type)


def _ints(values: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr(IntAttr(v) for v in values)


# ------------------------------------------------------------------ layouts, types


class FragmentKind(StrEnum):
    ACC = auto()
    """wgmma f32 accumulator layout (also the 16-bit A-operand layout: same pairs)."""
    ROW = auto()
    """One value per accumulator row: row reductions, row statistics (softmax m, l)."""
    COL = auto()
    """One value per accumulator column: a bias vector broadcast down the rows."""


@irdl_attr_definition
class FragmentKindAttr(EnumAttribute[FragmentKind], SpacedOpaqueSyntaxAttribute):
    name = "nvgpu_async.frag_kind"


@irdl_attr_definition
class FragmentLayoutAttr(ParametrizedAttribute):
    """`#nvgpu_async.frag<acc, warpgroups = 2>`: how a register tile is spread.

    `warpgroups` consumer warpgroups share the tile along M, each owning a
    contiguous band of M / warpgroups rows. Within a warpgroup the element layout is
    the wgmma m64nNk16 accumulator layout, repeated for every 64 rows.
    """

    name = "nvgpu_async.frag"

    kind: FragmentKindAttr
    warpgroups: IntAttr

    def __init__(self, kind: FragmentKind | str, warpgroups: int = 1):
        super().__init__(FragmentKindAttr(FragmentKind(kind)), IntAttr(warpgroups))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            kind = parser.parse_identifier()
            if kind not in set(FragmentKind):
                parser.raise_error(
                    f"unknown fragment kind '{kind}', expected one of "
                    f"{', '.join(FragmentKind)}"
                )
            parser.parse_punctuation(",")
            parser.parse_keyword("warpgroups")
            parser.parse_punctuation("=")
            wgs = parser.parse_integer(allow_boolean=False)
        return FragmentKindAttr(FragmentKind(kind)), IntAttr(wgs)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.kind.data}, warpgroups = {self.warpgroups.data}>")

    def verify(self) -> None:
        if not 1 <= self.warpgroups.data <= 3:
            raise VerifyException(
                f"#nvgpu_async.frag spans 1 to 3 warpgroups, not {self.warpgroups.data}"
            )


def fragment_layout(t: Attribute) -> FragmentLayoutAttr | None:
    """The register layout of a tile type, if it is a register fragment."""
    if isinstance(t, TensorType) and isinstance(t.encoding, FragmentLayoutAttr):
        return t.encoding
    return None


@irdl_attr_definition
class TensorMapType(ParametrizedAttribute, TypeAttribute):
    """A TMA tensor map passed by value: `!nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>`.

    `box` is the hardware box (with a swizzle, its inner extent fits one swizzle
    span); a tile wider than that is moved as several boxes.
    """

    name = "nvgpu_async.tensor_map"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    box: ArrayAttr[IntAttr]
    swizzle: IntAttr

    def __init__(
        self,
        shape: Sequence[int],
        element_type: Attribute,
        box: Sequence[int],
        swizzle: int = SWIZZLE_BYTES,
    ):
        super().__init__(_ints(shape), element_type, _ints(box), IntAttr(swizzle))

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    def get_box(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.box.data)

    @property
    def box_bytes(self) -> int:
        return tile_bytes(self.get_box(), self.element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shape, element_type = parser.parse_ranked_shape()
            parser.parse_punctuation(",")
            parser.parse_keyword("box")
            parser.parse_punctuation("=")
            box = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_integer
            )
            parser.parse_punctuation(",")
            parser.parse_keyword("swizzle")
            parser.parse_punctuation("=")
            swizzle = parser.parse_integer(allow_boolean=False)
        return _ints(shape), element_type, _ints(box), IntAttr(swizzle)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{shape_str(self.get_shape())}x")
        printer.print_attribute(self.element_type)
        printer.print_string(
            f", box = [{', '.join(map(str, self.get_box()))}], swizzle = {self.swizzle.data}>"
        )

    def verify(self) -> None:
        shape, box = self.get_shape(), self.get_box()
        if not 1 <= len(shape) <= 5:
            raise VerifyException(f"tensor maps have rank 1 to 5, not {len(shape)}")
        if len(box) != len(shape):
            raise VerifyException(
                f"tensor map box rank {len(box)} differs from tensor rank {len(shape)}"
            )
        if any(not 1 <= b <= MAX_BOX_DIM for b in box):
            raise VerifyException(
                f"tensor map box dims must be in [1, {MAX_BOX_DIM}], got {list(box)}"
            )
        swizzle = self.swizzle.data
        if swizzle not in (0, 32, 64, 128):
            raise VerifyException(
                f"swizzle must be 0, 32, 64 or 128 bytes, not {swizzle}"
            )
        inner = box[-1] * element_bytes(self.element_type)
        if inner % 16:
            raise VerifyException(
                f"tensor map box inner extent is {inner} bytes; TMA needs a multiple of 16"
            )
        if swizzle and inner > swizzle:
            raise VerifyException(
                f"tensor map box inner extent is {inner} bytes, wider than its {swizzle}-byte swizzle"
            )


@irdl_attr_definition
class GlobalTensorType(ParametrizedAttribute, TypeAttribute):
    """A global tensor reached by plain loads and stores: base pointer, dims, strides."""

    name = "nvgpu_async.global"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute

    def __init__(self, shape: Sequence[int], element_type: Attribute):
        super().__init__(_ints(shape), element_type)

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shape, element_type = parser.parse_ranked_shape()
        return _ints(shape), element_type

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{shape_str(self.get_shape())}x")
        printer.print_attribute(self.element_type)
        printer.print_string(">")


@irdl_attr_definition
class SmemType(ParametrizedAttribute, TypeAttribute):
    """A ring of `depth` tile slots in shared memory: `!nvgpu_async.smem<3x128x64xbf16>`."""

    name = "nvgpu_async.smem"

    depth: IntAttr
    tile: ArrayAttr[IntAttr]
    element_type: Attribute

    def __init__(self, depth: int, tile: Sequence[int], element_type: Attribute):
        super().__init__(IntAttr(depth), _ints(tile), element_type)

    def get_tile(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.tile.data)

    @property
    def swizzle_bytes(self) -> int:
        """The swizzle of the slot layout: a matrix is cut into column chunks of
        the widest span that divides its rows (`target.swizzle_span`: 128 bytes,
        else 64, else 32; 128 when none does, which only a tile of one chunk
        passes `verify`); vectors are not swizzled (0)."""
        tile = self.get_tile()
        if len(tile) == 1:
            return 0
        row = tile[-1] * element_bytes(self.element_type)
        return swizzle_span(row) or SWIZZLE_BYTES

    @property
    def chunk_cols(self) -> int:
        """Columns of one swizzle chunk: 64 for 16-bit elements and 128 for 8-bit
        ones in 128-byte chunks, half or a quarter of that in 64- or 32-byte ones."""
        return (self.swizzle_bytes or SWIZZLE_BYTES) // element_bytes(self.element_type)

    @property
    def tile_bytes(self) -> int:
        return tile_bytes(self.get_tile(), self.element_type)

    @property
    def slot_bytes(self) -> int:
        """Bytes between consecutive slots (each slot starts 1024-byte aligned)."""
        return -(-self.tile_bytes // SLOT_ALIGN) * SLOT_ALIGN

    @property
    def total_bytes(self) -> int:
        return self.depth.data * self.slot_bytes

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims, element_type = parser.parse_ranked_shape()
        if len(dims) < 2:
            parser.raise_error("!nvgpu_async.smem needs a depth and a tile shape")
        return IntAttr(dims[0]), _ints(dims[1:]), element_type

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.depth.data}x{shape_str(self.get_tile())}x")
        printer.print_attribute(self.element_type)
        printer.print_string(">")

    def verify(self) -> None:
        if self.depth.data < 1:
            raise VerifyException(
                f"shared-memory ring depth must be >= 1, not {self.depth.data}"
            )
        tile = self.get_tile()
        if not 1 <= len(tile) <= 2 or any(d < 1 for d in tile):
            raise VerifyException(
                f"shared-memory slots hold rank-1 or rank-2 tiles, not {shape_str(tile)}"
            )
        if len(tile) == 2 and tile[-1] > self.chunk_cols and tile[-1] % self.chunk_cols:
            raise VerifyException(
                f"a {tile[-1]}-column tile does not split into {self.chunk_cols}-column "
                "swizzle chunks"
            )


@irdl_attr_definition
class SmemViewType(ParametrizedAttribute, TypeAttribute):
    """One slot seen as a matrix operand: `!nvgpu_async.smem_view<64x128xbf16, transposed>`.

    `transposed` means the slot stores the transpose of the logical matrix (a B
    operand stored N x K is K-major; stored K x N it is MN-major).
    """

    name = "nvgpu_async.smem_view"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    transposed: IntAttr

    def __init__(
        self, shape: Sequence[int], element_type: Attribute, transposed: bool = False
    ):
        super().__init__(_ints(shape), element_type, IntAttr(int(transposed)))

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def is_transposed(self) -> bool:
        return bool(self.transposed.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shape, element_type = parser.parse_ranked_shape()
            transposed = False
            if parser.parse_optional_punctuation(",") is not None:
                parser.parse_keyword("transposed")
                transposed = True
        return _ints(shape), element_type, IntAttr(int(transposed))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{shape_str(self.get_shape())}x")
        printer.print_attribute(self.element_type)
        printer.print_string(", transposed>" if self.is_transposed else ">")


@irdl_attr_definition
class MBarrierType(ParametrizedAttribute, TypeAttribute):
    """An array of `count` 64-bit mbarriers in shared memory: `!nvgpu_async.mbarrier<3>`."""

    name = "nvgpu_async.mbarrier"

    count: IntAttr

    def __init__(self, count: int):
        super().__init__(IntAttr(count))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (IntAttr(parser.parse_integer(allow_boolean=False)),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.count.data}>")

    @property
    def total_bytes(self) -> int:
        return MBARRIER_BYTES * self.count.data

    def verify(self) -> None:
        if self.count.data < 1:
            raise VerifyException(
                f"an mbarrier array holds >= 1 barrier, not {self.count.data}"
            )


class RegAction(StrEnum):
    INC = auto()
    DEC = auto()


@irdl_attr_definition
class RegActionAttr(EnumAttribute[RegAction], SpacedOpaqueSyntaxAttribute):
    name = "nvgpu_async.reg_action"


# ------------------------------------------------------------- allocation, setup


@irdl_op_definition
class SmemAllocOp(IRDLOperation):
    """Place a ring at a fixed byte offset of the block's dynamic shared memory."""

    name = "nvgpu_async.smem_alloc"

    offset = prop_def(IntegerAttr[I64])
    result = result_def(SmemType)

    assembly_format = "`offset` `=` $offset attr-dict `:` type($result)"

    def __init__(self, offset: int, smem_type: SmemType):
        super().__init__(
            properties={"offset": IntegerAttr(offset, 64)}, result_types=[smem_type]
        )

    def verify_(self) -> None:
        offset = self.offset.value.data
        assert isinstance(self.result.type, SmemType)
        if offset < 0:
            raise VerifyException(f"nvgpu_async.smem_alloc offset {offset} is negative")
        if offset % SLOT_ALIGN:
            raise VerifyException(
                f"nvgpu_async.smem_alloc offset {offset} is not {SLOT_ALIGN}-byte aligned "
                "(128-byte swizzle needs it)"
            )
        if offset + self.result.type.total_bytes > MAX_SMEM_BYTES:
            raise VerifyException(
                f"nvgpu_async.smem_alloc ends at byte {offset + self.result.type.total_bytes}, "
                f"past the {MAX_SMEM_BYTES} bytes of shared memory a block can have"
            )
        raise_own_problem(self)


@irdl_op_definition
class MBarrierAllocOp(IRDLOperation):
    """Place an array of mbarriers at a fixed, 8-byte aligned shared-memory offset."""

    name = "nvgpu_async.mbarrier_alloc"

    offset = prop_def(IntegerAttr[I64])
    result = result_def(MBarrierType)

    assembly_format = "`offset` `=` $offset attr-dict `:` type($result)"

    def __init__(self, offset: int, count: int):
        super().__init__(
            properties={"offset": IntegerAttr(offset, 64)},
            result_types=[MBarrierType(count)],
        )

    def verify_(self) -> None:
        offset = self.offset.value.data
        if offset % MBARRIER_BYTES:
            raise VerifyException(
                f"nvgpu_async.mbarrier_alloc offset {offset} is not 8-byte aligned"
            )
        if offset < 0 or offset + self.result.type.total_bytes > MAX_SMEM_BYTES:
            raise VerifyException(
                f"nvgpu_async.mbarrier_alloc at offset {offset} leaves shared memory"
            )
        raise_own_problem(self)


@irdl_op_definition
class MBarrierInitOp(IRDLOperation):
    """Initialise every barrier of the array to expect `count` arrivals per phase."""

    name = "nvgpu_async.mbarrier_init"

    barriers = operand_def(MBarrierType)
    count = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryWriteEffect())
    assembly_format = "$barriers `,` `count` `=` $count attr-dict `:` type($barriers)"

    def __init__(self, barriers: SSAValue | Operation, count: int):
        super().__init__(
            operands=[barriers], properties={"count": IntegerAttr(count, 64)}
        )

    def verify_(self) -> None:
        if self.count.value.data < 1:
            raise VerifyException(
                f"nvgpu_async.mbarrier_init count must be >= 1, got {self.count.value.data}"
            )


class _NoOperandSideEffectOp(IRDLOperation):
    traits = traits_def(MemoryWriteEffect())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class FenceMBarrierInitOp(_NoOperandSideEffectOp):
    """Make barrier initialisation visible to the async proxy (TMA) and other threads."""

    name = "nvgpu_async.fence_mbarrier_init"


@irdl_op_definition
class CTABarrierOp(_NoOperandSideEffectOp):
    """`bar.sync 0`: every thread of the block."""

    name = "nvgpu_async.cta_barrier"


@irdl_op_definition
class ClusterBarrierOp(_NoOperandSideEffectOp):
    """`barrier.cluster.arrive` + `wait`: every thread of every block of the
    cluster. After the barrier init, so that no peer multicasts into (or arrives
    on) barriers not yet set up; before exit, so that no block leaves while a
    peer may still write into its shared memory."""

    name = "nvgpu_async.cluster_barrier"


@irdl_op_definition
class ConsumerBarrierOp(_NoOperandSideEffectOp):
    """`bar.sync 1, 128 N`: the N consumer warpgroups only (the producer never
    joins), e.g. around a staging tile that one thread then stores with TMA."""

    name = "nvgpu_async.consumer_barrier"


@irdl_op_definition
class ProducerBarrierOp(_NoOperandSideEffectOp):
    """`bar.sync 5, 128`: the producer warpgroup's threads only, after their
    `transpose_copy` stores and the proxy fence, so that the one thread that
    then arrives on the slot's `full` barrier publishes every thread's stores,
    and the next put's TMA copy into the staging buffer follows every
    thread's reads of it."""

    name = "nvgpu_async.producer_barrier"


class _MmaTurnOp(_NoOperandSideEffectOp):
    """Base of the turn-taking ops: consumer-region only, two or more warpgroups."""

    def verify_(self) -> None:
        child, dispatch = self, self.parent_op()
        while dispatch is not None and not isinstance(dispatch, RoleDispatchOp):
            child, dispatch = dispatch, dispatch.parent_op()
        if dispatch is None or child.parent_region() is not dispatch.consumer:
            raise VerifyException(
                f"{self.name} must be in the consumer region of a role_dispatch"
            )
        if dispatch.num_consumers.value.data < 2:
            raise VerifyException(
                f"{self.name}: taking turns needs two or more consumer warpgroups"
            )


@irdl_op_definition
class MmaTurnInitOp(_MmaTurnOp):
    """Start the turn order (FA3's ping-pong): the last consumer warpgroup arrives
    on the first one's turn barrier (`bar.arrive 2, 256`), so warpgroup 0 goes
    first. Once per consumer region, before any `mma_turn_begin`."""

    name = "nvgpu_async.mma_turn_init"


@irdl_op_definition
class MmaTurnBeginOp(_MmaTurnOp):
    """Wait for this warpgroup's turn to issue wgmmas (`bar.sync 2 + w, 256`): the
    previous warpgroup in the ring has issued its own and passed the turn on."""

    name = "nvgpu_async.mma_turn_begin"


@irdl_op_definition
class MmaTurnEndOp(_MmaTurnOp):
    """Pass the turn to the next warpgroup (`bar.arrive 2 + (w + 1) % N, 256`),
    then go on (e.g. to the softmax) while the tensor cores run both."""

    name = "nvgpu_async.mma_turn_end"


@irdl_op_definition
class FenceProxyAsyncOp(_NoOperandSideEffectOp):
    """Order this thread's generic shared-memory writes before later async-proxy
    reads (TMA store, wgmma)."""

    name = "nvgpu_async.fence_proxy_async"


@irdl_op_definition
class LaunchDependentsOp(_NoOperandSideEffectOp):
    """Let the next kernel of the stream, launched as a programmatic dependent,
    start once every block of this grid has come here (or exited): its blocks
    take SMs as this grid's free them, and run their prologue meanwhile."""

    name = "nvgpu_async.launch_dependents"


@irdl_op_definition
class GridDependencyWaitOp(_NoOperandSideEffectOp):
    """Wait until the grids this one depends on (the stream's previous kernel)
    have finished and their memory writes are visible: a kernel launched as a
    programmatic dependent may start before them and reads their results only
    after this."""

    name = "nvgpu_async.grid_dependency_wait"


# ------------------------------------------------------------------ mbarrier ops


class ArriveScope(StrEnum):
    WARPGROUP = auto()
    """One elected thread per executing warpgroup arrives (after a wgmma wait the
    whole warpgroup is done with the slot)."""
    THREAD = auto()
    """Every executing thread arrives (it read the slot with its own loads)."""


@irdl_attr_definition
class ArriveScopeAttr(EnumAttribute[ArriveScope], SpacedOpaqueSyntaxAttribute):
    name = "nvgpu_async.arrive_scope"


@irdl_op_definition
class MBarrierArriveOp(IRDLOperation):
    """Arrive on barrier `index`, once per warpgroup or once per thread."""

    name = "nvgpu_async.mbarrier_arrive"

    barriers = operand_def(MBarrierType)
    index = operand_def(IndexType)
    scope = prop_def(ArriveScopeAttr)
    cluster = opt_prop_def(IntegerAttr[I64])
    """If set, N: arrive on barrier `index` of each of the cluster's N blocks
    (a slot that every block's producer writes is free once all have read it)."""

    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$scope $barriers `[` $index `]` (`cluster` `(` $cluster^ `)`)? attr-dict "
        "`:` type($barriers)"
    )

    def __init__(
        self,
        barriers: SSAValue | Operation,
        index: SSAValue | Operation,
        scope: ArriveScope | str = ArriveScope.WARPGROUP,
        cluster: int | None = None,
    ):
        super().__init__(
            operands=[barriers, index],
            properties={
                "scope": ArriveScopeAttr(ArriveScope(scope)),
                **({"cluster": IntegerAttr(cluster, 64)} if cluster else {}),
            },
        )

    @property
    def cluster_size(self) -> int:
        return self.cluster.value.data if self.cluster is not None else 1

    def verify_(self) -> None:
        _verify_cluster(self.name, self.cluster_size)
        if self.cluster_size > 1 and self.scope.data == ArriveScope.THREAD:
            raise VerifyException(
                f"{self.name}: arrivals in every block of a cluster are made once per "
                "warpgroup, not per thread"
            )


@irdl_op_definition
class MBarrierArriveExpectTxOp(IRDLOperation):
    """Arrive once and add `bytes` to the transaction count the phase waits for."""

    name = "nvgpu_async.mbarrier_arrive_expect_tx"

    barriers = operand_def(MBarrierType)
    index = operand_def(IndexType)
    bytes = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$barriers `[` $index `]` `,` `bytes` `=` $bytes attr-dict `:` type($barriers)"
    )

    def __init__(
        self,
        barriers: SSAValue | Operation,
        index: SSAValue | Operation,
        num_bytes: int,
    ):
        super().__init__(
            operands=[barriers, index], properties={"bytes": IntegerAttr(num_bytes, 64)}
        )

    def verify_(self) -> None:
        if self.bytes.value.data <= 0:
            raise VerifyException(
                f"nvgpu_async.mbarrier_arrive_expect_tx needs a positive byte count, "
                f"got {self.bytes.value.data}"
            )
        delivered = self.delivered_bytes()
        if delivered is not None and delivered[0] != self.bytes.value.data:
            armed, (got, loads) = self.bytes.value.data, delivered
            effect = (
                "the phase never completes and its waiters hang"
                if armed > got
                else "the phase completes before the copies land and its waiters "
                "read unfinished tiles"
            )
            raise VerifyException(
                f"{self.name}: arms {armed} bytes, but the TMA loads that complete "
                f"on %{self.barriers.name_hint or '?'}[%{self.index.name_hint or '?'}] "
                f"after it in this block bring {got} ({loads}): {effect}"
            )

    def delivered_bytes(self) -> tuple[int, str] | None:
        """The bytes the TMA loads of this block bring to this barrier (`tma_load`s
        on the same barriers and index values after this op, up to the next
        expect_tx on them), and the loads in words; None where that is not
        static: no such load here (they may sit in a nested region, or another
        block), or one of a type not verified yet."""
        block = self.parent_block()
        if block is None:
            return None
        total, tiles = 0, []
        op = self.next_op
        while op is not None:
            if isinstance(op, MBarrierArriveExpectTxOp) and self._same_barrier(op):
                break
            if isinstance(op, TMALoadOp) and self._same_barrier(op):
                buffer = op.buffer.type
                if not isinstance(buffer, SmemType):
                    return None
                total += buffer.tile_bytes
                tiles.append(f"{shape_str(buffer.get_tile())}x{buffer.element_type}")
            op = op.next_op
        if not tiles:
            return None
        return total, f"{len(tiles)} tile{'s' if len(tiles) > 1 else ''}: " + ", ".join(
            tiles
        )

    def _same_barrier(self, op: MBarrierArriveExpectTxOp | TMALoadOp) -> bool:
        index = op.index if isinstance(op, MBarrierArriveExpectTxOp) else op.barrier
        return op.barriers == self.barriers and index == self.index


@irdl_op_definition
class MBarrierWaitOp(IRDLOperation):
    """Spin until the phase of barrier `index` with parity `parity` has completed."""

    name = "nvgpu_async.mbarrier_wait"

    barriers = operand_def(MBarrierType)
    index = operand_def(IndexType)
    parity = operand_def(IndexType)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$barriers `[` $index `]` `,` `parity` $parity attr-dict `:` type($barriers)"
    )

    def __init__(
        self,
        barriers: SSAValue | Operation,
        index: SSAValue | Operation,
        parity: SSAValue | Operation,
    ):
        super().__init__(operands=[barriers, index, parity])


def _verify_cluster(op_name: str, size: int) -> None:
    if size < 1 or size > MAX_CLUSTER or size & (size - 1):
        raise VerifyException(
            f"{op_name}: a cluster has a power of two up to {MAX_CLUSTER} blocks, "
            f"got {size}"
        )


# ------------------------------------------------------------------------- TMA


def _verify_tma_tile(
    op_name: str, tmap: TensorMapType, ring: SmemType, num_coords: int
) -> None:
    if num_coords != len(tmap.get_shape()):
        raise VerifyException(
            f"{op_name} needs {len(tmap.get_shape())} coordinates, got {num_coords}"
        )
    if tmap.element_type != ring.element_type:
        raise VerifyException(
            f"{op_name}: tensor map of {tmap.element_type} and buffer of {ring.element_type}"
        )
    box = list(tmap.get_box())
    tile = ring.get_tile()
    while len(box) > len(tile) and box[0] == 1:  # the unit boxes of batch axes
        box.pop(0)
    if len(box) != len(tile) or tuple(box[:-1]) != tile[:-1] or tile[-1] % box[-1]:
        raise VerifyException(
            f"{op_name}: a {shape_str(tile)} tile is not a row of "
            f"{shape_str(tuple(box))} boxes"
        )
    if tmap.swizzle.data != ring.swizzle_bytes:
        raise VerifyException(
            f"{op_name}: the tensor map swizzles {tmap.swizzle.data} bytes but the "
            f"{shape_str(tile)}x{ring.element_type} slots are laid out "
            f"{ring.swizzle_bytes}-byte swizzled"
        )


@irdl_op_definition
class TMALoadOp(IRDLOperation):
    """Copy the tile at `coords` (element offsets, outermost first) into slot `slot`
    of `buffer`, one box per swizzle chunk; completion adds the tile's bytes to the
    transaction count of barrier `barriers[barrier]`. Issued by one thread."""

    name = "nvgpu_async.tma_load"

    tensor_map = operand_def(TensorMapType)
    coords = var_operand_def(IndexType)
    buffer = operand_def(SmemType)
    slot = operand_def(IndexType)
    barriers = operand_def(MBarrierType)
    barrier = operand_def(IndexType)
    multicast = opt_prop_def(IntegerAttr[I64])
    """If set, N: the tile goes to the same slot (and its bytes to the same
    barrier) in each of the cluster's N blocks, each block copying the boxes
    `boxes_of(rank)` of it."""

    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$tensor_map `[` $coords `]` `,` $buffer `[` $slot `]` `,` $barriers `[` $barrier `]`"
        " (`multicast` `(` $multicast^ `)`)?"
        " attr-dict `:` type($tensor_map) `,` type($buffer) `,` type($barriers)"
    )

    def __init__(
        self,
        tensor_map: SSAValue,
        coords: Sequence[SSAValue],
        buffer: SSAValue,
        slot: SSAValue,
        barriers: SSAValue,
        barrier: SSAValue,
        multicast: int | None = None,
    ):
        super().__init__(
            operands=[tensor_map, coords, buffer, slot, barriers, barrier],
            properties={"multicast": IntegerAttr(multicast, 64)} if multicast else {},
        )

    @property
    def cluster_size(self) -> int:
        return self.multicast.value.data if self.multicast is not None else 1

    @property
    def num_boxes(self) -> int:
        assert isinstance(self.tensor_map.type, TensorMapType)
        assert isinstance(self.buffer.type, SmemType)
        return self.buffer.type.get_tile()[-1] // self.tensor_map.type.get_box()[-1]

    def boxes_of(self, rank: int) -> range:
        """The boxes (swizzle chunks, left to right) that block `rank` of the
        cluster copies: an equal run each, or all of them from rank 0 when they
        do not divide evenly."""
        n, size = self.num_boxes, self.cluster_size
        if n % size:
            return range(n) if rank == 0 else range(0)
        share = n // size
        return range(rank * share, (rank + 1) * share)

    def verify_(self) -> None:
        assert isinstance(self.tensor_map.type, TensorMapType)
        assert isinstance(self.buffer.type, SmemType)
        _verify_tma_tile(
            self.name, self.tensor_map.type, self.buffer.type, len(self.coords)
        )
        _verify_cluster(self.name, self.cluster_size)


@irdl_op_definition
class PrefetchTensorMapOp(IRDLOperation):
    """Fetch a tensor map's descriptor into the cache ahead of its first TMA
    copy (one thread; a hint, nothing waits for it)."""

    name = "nvgpu_async.prefetch_tensor_map"

    tensor_map = operand_def(TensorMapType)

    traits = traits_def(MemoryWriteEffect())  # a cache fill: never dead code
    assembly_format = "$tensor_map attr-dict `:` type($tensor_map)"

    def __init__(self, tensor_map: SSAValue):
        super().__init__(operands=[tensor_map])


@irdl_op_definition
class TMAStoreOp(IRDLOperation):
    """Copy slot `slot` of `buffer` to the tile at `coords`, one box per swizzle
    chunk; out-of-bounds parts are dropped. Issued by one thread (in a consumer
    role, its first thread) and tracked by that thread's bulk group; a
    `fence_proxy_async` must order the writes of the slot before it."""

    name = "nvgpu_async.tma_store"

    buffer = operand_def(SmemType)
    slot = operand_def(IndexType)
    tensor_map = operand_def(TensorMapType)
    coords = var_operand_def(IndexType)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$buffer `[` $slot `]` `,` $tensor_map `[` $coords `]` attr-dict `:` "
        "type($buffer) `,` type($tensor_map)"
    )

    def __init__(
        self,
        buffer: SSAValue,
        slot: SSAValue,
        tensor_map: SSAValue,
        coords: Sequence[SSAValue],
    ):
        super().__init__(operands=[buffer, slot, tensor_map, coords])

    def verify_(self) -> None:
        assert isinstance(self.tensor_map.type, TensorMapType)
        assert isinstance(self.buffer.type, SmemType)
        _verify_tma_tile(
            self.name, self.tensor_map.type, self.buffer.type, len(self.coords)
        )


@irdl_op_definition
class TMAStoreCommitOp(_NoOperandSideEffectOp):
    """Close the current bulk group of TMA stores."""

    name = "nvgpu_async.tma_store_commit"


@irdl_op_definition
class TMAStoreWaitOp(IRDLOperation):
    """The issuing thread waits until at most `pending` of its bulk store groups
    are still reading shared memory (their slots may be written again), or with
    `writes`, still writing global memory: TMA stores are not ordered among
    themselves, so a store that may write bytes an earlier one wrote waits for
    that one's writes, not only its reads."""

    name = "nvgpu_async.tma_store_wait"

    pending = prop_def(IntegerAttr[I64])
    writes = opt_prop_def(UnitAttr)

    traits = traits_def(MemoryWriteEffect())
    assembly_format = "`pending` `=` $pending (`writes` $writes^)? attr-dict"

    def __init__(self, pending: int = 0, writes: bool = False):
        properties: dict[str, Attribute] = {"pending": IntegerAttr(pending, 64)}
        if writes:
            properties["writes"] = UnitAttr()
        super().__init__(properties=properties)

    def verify_(self) -> None:
        if self.pending.value.data < 0:
            raise VerifyException(
                "nvgpu_async.tma_store_wait pending count must be >= 0"
            )


# ------------------------------------------------------------- shared-memory views


@irdl_op_definition
class SmemSlotOp(IRDLOperation):
    """View slot `slot` of a ring as a matrix operand."""

    name = "nvgpu_async.smem_slot"

    buffer = operand_def(SmemType)
    slot = operand_def(IndexType)
    result = result_def(SmemViewType)

    traits = traits_def(Pure())
    assembly_format = (
        "$buffer `[` $slot `]` attr-dict `:` type($buffer) `->` type($result)"
    )

    def __init__(self, buffer: SSAValue, slot: SSAValue):
        assert isinstance(buffer.type, SmemType)
        view = SmemViewType(buffer.type.get_tile(), buffer.type.element_type)
        super().__init__(operands=[buffer, slot], result_types=[view])

    def verify_(self) -> None:
        assert isinstance(self.buffer.type, SmemType)
        assert isinstance(self.result.type, SmemViewType)
        ring, view = self.buffer.type, self.result.type
        if (
            view.is_transposed
            or view.get_shape() != ring.get_tile()
            or (view.element_type != ring.element_type)
        ):
            raise VerifyException(
                f"nvgpu_async.smem_slot of {ring} gives "
                f"{SmemViewType(ring.get_tile(), ring.element_type)}, not {view}"
            )


@irdl_op_definition
class SmemTransOp(IRDLOperation):
    """The same shared-memory tile seen as its transpose (no data moves)."""

    name = "nvgpu_async.smem_trans"

    source = operand_def(SmemViewType)
    result = result_def(SmemViewType)

    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue):
        assert isinstance(source.type, SmemViewType)
        s = source.type
        res = SmemViewType(s.get_shape()[::-1], s.element_type, not s.is_transposed)
        super().__init__(operands=[source], result_types=[res])

    def verify_(self) -> None:
        assert isinstance(self.source.type, SmemViewType)
        assert isinstance(self.result.type, SmemViewType)
        s, r = self.source.type, self.result.type
        if (
            len(s.get_shape()) != 2
            or r.get_shape() != s.get_shape()[::-1]
            or r.element_type != s.element_type
            or r.is_transposed == s.is_transposed
        ):
            raise VerifyException(f"nvgpu_async.smem_trans of {s} cannot give {r}")


@irdl_op_definition
class SmemLoadOp(IRDLOperation):
    """Read a shared-memory tile into registers with a fragment layout (ld.shared)."""

    name = "nvgpu_async.smem_load"

    source = operand_def(SmemViewType)
    result = result_def(TensorType)

    traits = traits_def(MemoryReadEffect())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, result_type: TensorType):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        assert isinstance(self.source.type, SmemViewType)
        res = self.result.type
        assert isinstance(res, TensorType)
        if fragment_layout(res) is None:
            raise VerifyException("nvgpu_async.smem_load must give a register fragment")
        if res.get_shape() != self.source.type.get_shape() or (
            res.element_type != self.source.type.element_type
        ):
            raise VerifyException(
                f"nvgpu_async.smem_load of {self.source.type} cannot give {res}"
            )


def column_scratch_words(cols: int, warpgroups: int) -> int:
    """32-bit words (f32 or i32 partials) of the scratch a column reduction of
    a `cols`-column tile over
    `warpgroups` consumer warpgroups exchanges its warps' partials through: one
    row of `cols` per consumer warp."""
    return 4 * warpgroups * cols


@irdl_op_definition
class ColumnReduceOp(IRDLOperation):
    """Reduce the columns (axis 0) of an f32 or i32 accumulator-layout tile
    over every consumer thread, giving the column tile: each warp's partials go through
    `scratch` (one row per consumer warp), between two consumer barriers
    (`bar.sync 1`): the first keeps a previous reduction's readers ahead of
    this one's writers, the second publishes the partials to every reader.

    `%c = nvgpu_async.column_reduce sum %t, %scratch : tensor<...>, !smem -> tensor<...>`
    """

    name = "nvgpu_async.column_reduce"

    kind = prop_def(ReduceKindAttr)
    source = operand_def(TensorType)
    scratch = operand_def(SmemType)
    result = result_def(TensorType)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$kind $source `,` $scratch attr-dict `:` type($source) `,` "
        "type($scratch) `->` type($result)"
    )

    def __init__(
        self,
        kind: Attribute,
        source: SSAValue,
        scratch: SSAValue,
        result_type: TensorType,
    ):
        super().__init__(
            operands=[source, scratch],
            properties={"kind": kind},
            result_types=[result_type],
        )

    def verify_(self) -> None:
        src, res, scratch = self.source.type, self.result.type, self.scratch.type
        assert isinstance(src, TensorType) and isinstance(res, TensorType)
        assert isinstance(scratch, SmemType)
        src_layout, res_layout = fragment_layout(src), fragment_layout(res)
        if (
            src_layout is None
            or src_layout.kind.data != FragmentKind.ACC
            or res_layout is None
            or res_layout.kind.data != FragmentKind.COL
            or res_layout.warpgroups != src_layout.warpgroups
        ):
            raise VerifyException(
                f"{self.name} reduces an accumulator-layout tile into a column "
                "tile of the same warpgroups"
            )
        if len(src.get_shape()) != 2 or res.get_shape() != src.get_shape()[1:]:
            raise VerifyException(
                f"{self.name} of {src} gives a vector of its "
                f"{src.get_shape()[-1]} columns, not {res}"
            )
        rows, warpgroups = src.get_shape()[0], src_layout.warpgroups.data
        padded = warpgroups == 1 and rows < 64 and rows % 8 == 0
        if rows % (64 * warpgroups) and not padded:
            raise VerifyException(
                f"{self.name}: {rows} rows are not whole 64-row blocks of "
                f"{warpgroups} warpgroup{'s' if warpgroups > 1 else ''}, nor a "
                "multiple of 8 under 64 (one padded block)"
            )
        if (
            not isinstance(src.element_type, Float32Type)
            and not is_i32(src.element_type)
        ) or src.element_type != res.element_type:
            raise VerifyException(f"{self.name} reduces f32 or i32 tiles")
        words = column_scratch_words(src.get_shape()[1], src_layout.warpgroups.data)
        if scratch.element_type != Float32Type() or scratch.tile_bytes < 4 * words:
            raise VerifyException(
                f"{self.name}: the scratch {scratch} holds fewer than the {words} "
                "32-bit partials of its warps"
            )


@irdl_op_definition
class SmemExtractOp(ElementReadOp):
    """Read one element of a shared-memory tile into a scalar in every thread
    that runs it (one broadcast ld.shared): `tile.extract` of an aref tile, a
    scale that came in a TMA box. `%s = nvgpu_async.smem_extract %v[0] : view`."""

    name = "nvgpu_async.smem_extract"
    SOURCE_TYPES: ClassVar = (SmemViewType,)
    source = operand_def(SmemViewType)

    traits = traits_def(MemoryReadEffect())


@irdl_op_definition
class SmemStoreOp(IRDLOperation):
    """Write a register fragment into a shared-memory tile (st.shared); a
    `fence_proxy_async` must follow before TMA or wgmma read it."""

    name = "nvgpu_async.smem_store"

    value = operand_def(TensorType)
    buffer = operand_def(SmemType)
    slot = operand_def(IndexType)

    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$value `,` $buffer `[` $slot `]` attr-dict `:` type($value) `->` type($buffer)"
    )

    def __init__(self, value: SSAValue, buffer: SSAValue, slot: SSAValue):
        super().__init__(operands=[value, buffer, slot])

    def verify_(self) -> None:
        assert isinstance(self.value.type, TensorType)
        assert isinstance(self.buffer.type, SmemType)
        v, ring = self.value.type, self.buffer.type
        if fragment_layout(v) is None:
            raise VerifyException("nvgpu_async.smem_store stores a register fragment")
        if v.get_shape() != ring.get_tile() or v.element_type != ring.element_type:
            raise VerifyException(
                f"nvgpu_async.smem_store of {v} does not fit a slot of {ring}"
            )


@irdl_op_definition
class SmemStoreScalarOp(IRDLOperation):
    """Write a scalar into the one element of a slot from the thread that runs
    it (st.shared): the producer's tile ticket (`persistent{dynamic=true}`),
    published by its arrive on the ring's `full` barrier; the consumers read it
    with `smem_extract` after their wait on that barrier."""

    name = "nvgpu_async.smem_store_scalar"

    value = operand_def()
    buffer = operand_def(SmemType)
    slot = operand_def(IndexType)

    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$value `,` $buffer `[` $slot `]` attr-dict `:` type($value) `->` type($buffer)"
    )

    def __init__(self, value: SSAValue, buffer: SSAValue, slot: SSAValue):
        super().__init__(operands=[value, buffer, slot])

    def verify_(self) -> None:
        assert isinstance(self.buffer.type, SmemType)
        ring = self.buffer.type
        if ring.get_tile() != (1,) or self.value.type != ring.element_type:
            raise VerifyException(
                f"nvgpu_async.smem_store_scalar writes one {self.value.type} into "
                f"slots of one such element, not into {ring}"
            )


@irdl_op_definition
class ThreadLoadOp(IRDLOperation):
    """Copy the tile at `coords` (element offsets, outermost first) of a global
    tensor into slot `slot` of `buffer` with the producer warpgroup's threads:
    each loads a share of the tile with the widest loads the tensor's base,
    pitch and extent allow (chosen at run time), zeros outside the tensor, and
    stores 16-byte pieces where TMA would have put them (the slot's swizzle).
    For inputs TMA cannot describe (a pitch or base off 16 bytes). Where the
    loads are 4 bytes or wider they are `cp.async` copies still in flight
    when the op ends (`asynchronous` is true), else the threads' own stores,
    fenced for the async proxy. Either way they are generic-proxy writes that
    `thread_loads_arrive` publishes on the slot's `full` barrier, and a
    reader fences (`fence_proxy_async`) after its wait before wgmma reads
    them."""

    name = "nvgpu_async.thread_load"

    source = operand_def(GlobalTensorType)
    coords = var_operand_def(IndexType)
    buffer = operand_def(SmemType)
    slot = operand_def(IndexType)
    asynchronous = result_def(i1)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$source `[` $coords `]` `,` $buffer `[` $slot `]` attr-dict `:` "
        "type($source) `,` type($buffer)"
    )

    def __init__(
        self,
        source: SSAValue,
        coords: Sequence[SSAValue],
        buffer: SSAValue,
        slot: SSAValue,
    ):
        super().__init__(operands=[source, coords, buffer, slot], result_types=[i1])

    def verify_(self) -> None:
        assert isinstance(self.source.type, GlobalTensorType)
        assert isinstance(self.buffer.type, SmemType)
        g, ring = self.source.type, self.buffer.type
        tile = ring.get_tile()
        if len(g.get_shape()) != 2 or len(tile) != 2:
            raise VerifyException(
                f"{self.name} copies a matrix tile of a rank-2 tensor, not a "
                f"{shape_str(tile)} tile of a rank-{len(g.get_shape())} one"
            )
        if len(self.coords) != 2:
            raise VerifyException(
                f"{self.name} needs 2 coordinates, got {len(self.coords)}"
            )
        if g.element_type != ring.element_type:
            raise VerifyException(
                f"{self.name}: a tensor of {g.element_type} and a buffer of "
                f"{ring.element_type}"
            )
        if tile[-1] * element_bytes(ring.element_type) % ring.swizzle_bytes:
            raise VerifyException(
                f"{self.name}: {tile[-1]}-element rows are not whole "
                f"{ring.swizzle_bytes}-byte swizzle chunks"
            )


@irdl_op_definition
class ThreadLoadsArriveOp(IRDLOperation):
    """Every producer thread arrives once on barrier `index` after its
    `thread_load`s of the slot (`asynchronous`: theirs): where all of them
    went through `cp.async`, with `cp.async.mbarrier.arrive.noinc`, an arrival
    made when the thread's copies have landed; else the thread's stores are
    published by a release arrive, held open by a counted (not noinc)
    `cp.async.mbarrier.arrive` until any copies of its land. `full` counts
    the producer warpgroup's threads (and one expect_tx more where the slot
    has TMA copies too)."""

    name = "nvgpu_async.thread_loads_arrive"

    barriers = operand_def(MBarrierType)
    index = operand_def(IndexType)
    asynchronous = var_operand_def(i1)

    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$barriers `[` $index `]` `after` `(` $asynchronous `)` attr-dict "
        "`:` type($barriers)"
    )

    def __init__(
        self,
        barriers: SSAValue,
        index: SSAValue,
        asynchronous: Sequence[SSAValue],
    ):
        super().__init__(operands=[barriers, index, asynchronous])


@irdl_op_definition
class TransposeCopyOp(IRDLOperation):
    """Copy an 8-bit R x C tile from slot `src_slot` of `source` into slot
    `slot` of `buffer` transposed (C x R), with the producer warpgroup's
    threads: an 8-bit B operand that TMA loaded MN-major (a V tile [keys, D]),
    made K-major, the only way wgmma reads 8-bit operands. Each thread moves
    4x4-byte blocks (four 32-bit shared loads, byte permutes, four stores), both
    tiles in their slots' swizzle. The source must hold the TMA copy (its
    barrier waited for); the stores are generic-proxy writes, published as a
    `thread_load`'s are (`fence_proxy_async`, the producer barrier, one
    arrive)."""

    name = "nvgpu_async.transpose_copy"

    source = operand_def(SmemType)
    src_slot = operand_def(IndexType)
    buffer = operand_def(SmemType)
    slot = operand_def(IndexType)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$source `[` $src_slot `]` `,` $buffer `[` $slot `]` attr-dict `:` "
        "type($source) `,` type($buffer)"
    )

    BLOCK_ROWS: ClassVar[int] = 32
    """Source rows a warp's blocks span (8 blocks of 4 rows, 4 of 4 columns)."""
    BLOCK_COLS: ClassVar[int] = 16

    def __init__(
        self, source: SSAValue, src_slot: SSAValue, buffer: SSAValue, slot: SSAValue
    ):
        super().__init__(operands=[source, src_slot, buffer, slot])

    def verify_(self) -> None:
        assert isinstance(self.source.type, SmemType)
        assert isinstance(self.buffer.type, SmemType)
        src, dst = self.source.type, self.buffer.type
        tile = src.get_tile()
        if src.element_type != dst.element_type or element_bytes(src.element_type) != 1:
            raise VerifyException(
                f"{self.name} moves 8-bit tiles of one type, not {src.element_type} "
                f"into {dst.element_type}"
            )
        if len(tile) != 2 or dst.get_tile() != tile[::-1]:
            raise VerifyException(
                f"{self.name}: a {shape_str(dst.get_tile())} buffer does not hold "
                f"the transpose of a {shape_str(tile)} tile"
            )
        if tile[0] % self.BLOCK_ROWS or tile[1] % self.BLOCK_COLS:
            raise VerifyException(
                f"{self.name}: a {shape_str(tile)} tile; the copy takes rows in "
                f"multiples of {self.BLOCK_ROWS} and columns in multiples of "
                f"{self.BLOCK_COLS}"
            )


class StorePath(StrEnum):
    """How a register tile reaches global memory (`select-store-path` decides
    which a `store_global` may take; a run-time uniform branch on the tile's
    first column picks one)."""

    VEC16 = auto()
    """16-byte `st.global.v4` after a transpose within each quad of lanes: a
    16-bit tile wholly inside the tensor at a column that is a multiple of 8."""
    PAIR = auto()
    """Element pairs (one 32-bit or 64-bit store), masked per element: an even
    first column."""
    SINGLE = auto()
    """Single elements, masked: any column (an odd first column misaligns pairs)."""


STORE_PATH_ORDER = (StorePath.VEC16, StorePath.PAIR, StorePath.SINGLE)
"""Most specialised first; the last path a store lists is its fallback."""


def vec16_fits(t: TensorType) -> bool:
    """Whether a register tile can take the 16-byte path: 16-bit elements and
    whole groups of 32 columns (each lane of a quad stores 8 of them)."""
    return (
        isinstance(t.element_type, BFloat16Type | Float16Type)
        and t.get_shape()[-1] % 32 == 0
    )


@irdl_op_definition
class StoreGlobalOp(IRDLOperation):
    """Store a register fragment to global memory at element offsets `indices`,
    skipping elements outside the tensor. `paths` (set by `select-store-path`)
    lists the ways the stores may go, most specialised first: `[vec16, pair,
    single]`; the last needs no run-time condition. `transposed`: an
    accumulator-layout tile written transposed, its element (r, c) at
    `[i + c, j + r]` (the output of a GEMM computed as C^T by
    `swap-operands`), one element at a time (`single`: the elements a thread
    holds side by side in a row of the tile lie a row apart in the tensor)."""

    name = "nvgpu_async.store_global"

    value = operand_def(TensorType)
    target = operand_def(GlobalTensorType)
    indices = var_operand_def(IndexType)
    paths = opt_prop_def(ArrayAttr[StringAttr])
    transposed = opt_prop_def(UnitAttr)

    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$value `,` $target `[` $indices `]` (`transposed` $transposed^)? "
        "(`paths` $paths^)? attr-dict `:` type($value) `->` type($target)"
    )

    def __init__(
        self,
        value: SSAValue,
        target: SSAValue,
        indices: Sequence[SSAValue],
        paths: Sequence[StorePath] | None = None,
        transposed: bool = False,
    ):
        props: dict[str, Attribute] = {}
        if paths is not None:
            props["paths"] = ArrayAttr(StringAttr(str(p)) for p in paths)
        if transposed:
            props["transposed"] = UnitAttr()
        super().__init__(operands=[value, target, indices], properties=props)

    @property
    def store_paths(self) -> tuple[StorePath, ...] | None:
        if self.paths is None:
            return None
        return tuple(StorePath(p.data) for p in self.paths.data)

    def verify_(self) -> None:
        assert isinstance(self.value.type, TensorType)
        assert isinstance(self.target.type, GlobalTensorType)
        v, g = self.value.type, self.target.type
        if fragment_layout(v) is None:
            raise VerifyException("nvgpu_async.store_global stores a register fragment")
        if len(self.indices) != len(g.get_shape()):
            raise VerifyException(
                f"nvgpu_async.store_global needs {len(g.get_shape())} indices, got "
                f"{len(self.indices)}"
            )
        if v.element_type != g.element_type:
            raise VerifyException(
                f"nvgpu_async.store_global of {v.element_type} into a tensor of {g.element_type}"
            )
        if v.get_num_dims() > len(g.get_shape()):
            raise VerifyException(
                "nvgpu_async.store_global tile has a higher rank than the tensor"
            )
        if self.transposed is not None:
            self._verify_transposed(v)
        if self.paths is not None:
            self._verify_paths(v)

    def _verify_transposed(self, v: TensorType) -> None:
        layout = fragment_layout(v)
        assert layout is not None
        if v.get_num_dims() != 2 or layout.kind.data != FragmentKind.ACC:
            raise VerifyException(
                "nvgpu_async.store_global transposed stores an accumulator-layout "
                "matrix tile"
            )
        if is_fp8(v.element_type):
            raise VerifyException(
                "nvgpu_async.store_global transposed: 8-bit float registers hold "
                "pairs, which a store of single elements does not split"
            )
        if self.paths is not None and self.store_paths != (StorePath.SINGLE,):
            raise VerifyException(
                "nvgpu_async.store_global transposed takes the single path only "
                "(a thread's neighbouring elements lie a row apart in the tensor)"
            )

    def _verify_paths(self, v: TensorType) -> None:
        names = [p.data for p in self.paths.data]
        if any(n not in set(StorePath) for n in names):
            raise VerifyException(
                f"nvgpu_async.store_global: store paths are {', '.join(StorePath)}, "
                f"not {names}"
            )
        paths = [StorePath(n) for n in names]
        if not paths or paths != [p for p in STORE_PATH_ORDER if p in paths]:
            raise VerifyException(
                "nvgpu_async.store_global: store paths are listed once each, most "
                "specialised first (vec16, pair, single)"
            )
        if paths[-1] != StorePath.SINGLE:
            raise VerifyException(
                "nvgpu_async.store_global: the last store path is the fallback, "
                "single (a pair at an odd column is misaligned)"
            )
        if StorePath.VEC16 in paths and not vec16_fits(v):
            raise VerifyException(
                "nvgpu_async.store_global: the vec16 path needs a 16-bit tile of "
                "whole 32-column groups"
            )


# ------------------------------------------------------------------------ wgmma


@irdl_op_definition
class WgmmaFenceOp(_NoOperandSideEffectOp):
    """Order earlier register writes (accumulator, A fragment) before the next wgmma."""

    name = "nvgpu_async.wgmma_fence"


@irdl_op_definition
class WgmmaCommitGroupOp(_NoOperandSideEffectOp):
    """Close the group of wgmmas issued since the last commit."""

    name = "nvgpu_async.wgmma_commit_group"


@irdl_op_definition
class WgmmaWaitGroupOp(IRDLOperation):
    """Wait until at most `pending` committed wgmma groups are still running."""

    name = "nvgpu_async.wgmma_wait_group"

    pending = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryWriteEffect())
    assembly_format = "`pending` `=` $pending attr-dict"

    def __init__(self, pending: int):
        super().__init__(properties={"pending": IntegerAttr(pending, 64)})

    def verify_(self) -> None:
        if not 0 <= self.pending.value.data <= 7:
            raise VerifyException(
                f"nvgpu_async.wgmma_wait_group takes 0 to 7 pending groups, not {self.pending.value.data}"
            )


def k_major_problem(lhs: Attribute, rhs: SmemViewType) -> str | None:
    """Why a wgmma of 8-bit inputs cannot read these operands, or None. wgmma
    transposes only 16-bit operands: 8-bit ones must lie K-major in shared
    memory, A stored M x K and B stored N x K (a transposed view)."""
    a_et = lhs.element_type  # type: ignore[attr-defined]
    if not (is_fp8(a_et) or is_fp8(rhs.element_type)):
        return None
    if isinstance(lhs, SmemViewType) and lhs.is_transposed:
        return (
            f"its {a_et} A operand is stored K x M (MN-major): wgmma reads 8-bit "
            "operands only K-major; store A as M x K"
        )
    if not rhs.is_transposed:
        return (
            f"its {rhs.element_type} B operand is stored K x N (MN-major): wgmma "
            "reads 8-bit operands only K-major; store B as N x K and transpose the "
            "loaded tile (tile.trans)"
        )
    return None


@irdl_op_definition
class WgmmaOp(IRDLOperation):
    """`acc + a @ b` on the tensor cores, asynchronously: the result is readable only
    after a `wgmma_wait_group` retires the group. `a` is a shared-memory view or a
    register fragment; `b` is a shared-memory view. Inputs are two equal 16-bit
    types or two 8-bit floats (`dot_input_problem`); 8-bit operands in shared
    memory are K-major (`k_major_problem`). An 8-bit register A is typed in the
    accumulator layout it was computed in: the thread level permutes its bytes
    into the k32 A-operand layout, which differs from the 16-bit one."""

    name = "nvgpu_async.wgmma"

    C: ClassVar = VarConstraint("C", base(TensorType))
    lhs = operand_def()
    rhs = operand_def(SmemViewType)
    acc = operand_def(C)
    result = result_def(C)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$lhs `,` $rhs `,` $acc attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, acc: SSAValue):
        super().__init__(operands=[lhs, rhs, acc], result_types=[acc.type])

    def verify_(self) -> None:
        a, b, c = self.lhs.type, self.rhs.type, self.acc.type
        assert isinstance(b, SmemViewType) and isinstance(c, TensorType)
        if isinstance(a, SmemViewType) or (
            isinstance(a, TensorType) and fragment_layout(a) is not None
        ):
            a_shape, a_et = a.get_shape(), a.element_type
        else:
            raise VerifyException(
                "nvgpu_async.wgmma lhs must be a shared-memory view or a register fragment"
            )
        layout = fragment_layout(c)
        if layout is None or layout.kind.data != FragmentKind.ACC:
            raise VerifyException(
                "nvgpu_async.wgmma accumulator must be an f32 fragment in the acc layout"
            )
        if not isinstance(c.element_type, Float32Type):
            raise VerifyException("nvgpu_async.wgmma accumulates in f32")
        if (problem := dot_input_problem(a_et, b.element_type)) is not None:
            raise VerifyException(f"nvgpu_async.wgmma {problem}")
        if (problem := k_major_problem(a, b)) is not None:
            raise VerifyException(f"nvgpu_async.wgmma: {problem}")
        if len(a_shape) != 2 or len(b.get_shape()) != 2:
            raise VerifyException("nvgpu_async.wgmma operands are matrices")
        (m, k), (k2, n) = a_shape, b.get_shape()
        if k != k2 or c.get_shape() != (m, n):
            raise VerifyException(
                f"nvgpu_async.wgmma shapes do not chain: {m}x{k} @ {k2}x{n} -> "
                f"{shape_str(c.get_shape())}"
            )
        wgs = layout.warpgroups.data
        if m % (64 * wgs):
            raise VerifyException(
                f"nvgpu_async.wgmma M = {m} is not a multiple of 64 per warpgroup ({wgs})"
            )
        if n % 8 or not 8 <= n <= 256:
            raise VerifyException(
                f"nvgpu_async.wgmma N = {n} must be a multiple of 8 in [8, 256]"
            )
        if k % wgmma_k(a_et):
            raise VerifyException(
                f"nvgpu_async.wgmma K = {k} is not a multiple of {wgmma_k(a_et)} "
                f"(one instruction's K for {a_et})"
            )


# ---------------------------------------------------------------------- roles


@irdl_op_definition
class SetMaxNRegOp(IRDLOperation):
    """`setmaxnreg.inc/dec`: this warpgroup's per-thread register budget. Each
    role region starts with it: only there does every warp of the warpgroup run
    it (the producer's other ops run on one thread)."""

    name = "nvgpu_async.setmaxnreg"

    action = prop_def(RegActionAttr)
    regs = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryWriteEffect())
    assembly_format = "$action $regs attr-dict"

    def __init__(self, action: RegAction | str, regs: int):
        super().__init__(
            properties={
                "action": RegActionAttr(RegAction(action)),
                "regs": IntegerAttr(regs, 64),
            }
        )

    def registers_after(self, held: int) -> int:
        """Per-thread registers the warpgroup holds after this op when it held
        `held`: `inc` only takes registers from the block's pool, `dec` only
        gives them back."""
        regs = self.regs.value.data
        return max(held, regs) if self.action.data == RegAction.INC else min(held, regs)

    def problem(self) -> str | None:
        """Why this `setmaxnreg` is invalid where it stands, or None (for the
        verifier and for the barrier simulator, which may run unverified IR)."""
        regs = self.regs.value.data
        if not is_register_budget(regs):
            return f"nvgpu_async.setmaxnreg {regs}: the budget must be a multiple of 8 in [{MIN_REGS}, {MAX_REGS}]"
        if (
            not isinstance(self.parent_op(), RoleDispatchOp)
            or self.parent_block().first_op is not self  # type: ignore[union-attr]
        ):
            return (
                "nvgpu_async.setmaxnreg must be the first op of a role_dispatch region: "
                "elsewhere not every warp of the warpgroup runs it (the producer's other "
                "ops run on one thread), and then it is undefined"
            )
        return None

    def verify_(self) -> None:
        problem = self.problem()
        if problem is not None:
            raise VerifyException(problem)


@irdl_op_definition
class RoleDispatchOp(RoleRegionsOp):
    """Branch the block's warpgroups into roles: warpgroup 0 runs the producer region
    on one elected thread; warpgroups 1..consumers run the consumer region."""

    name = "nvgpu_async.role_dispatch"

    traits = traits_def(*ROLE_TRAITS)

    def role_registers(self) -> tuple[int, int]:
        """Per-thread registers the producer and each consumer warpgroup hold
        after their `setmaxnreg` (what the launch gave, without one)."""
        threads = (1 + self.num_consumers.value.data) * THREADS_PER_WARPGROUP
        held = entry_register_cap(threads)
        budgets = []
        for region in (self.producer, self.consumer):
            first = region.block.first_op
            budgets.append(
                first.registers_after(held) if isinstance(first, SetMaxNRegOp) else held
            )
        return budgets[0], budgets[1]

    def verify_(self) -> None:
        super().verify_()
        problem = register_file_problem(
            self.num_consumers.value.data, *self.role_registers()
        )
        if problem is not None:
            raise VerifyException(f"{self.name}: after setmaxnreg, {problem}")
        raise_own_problem(self)


# ------------------------------------------------------------- kernel-wide checks


class ParamKind(StrEnum):
    """How the launch fills one parameter of a lowered kernel."""

    SCALAR = "scalar"
    """The tile-level scalar argument itself."""
    MAP = "map"
    """A TMA tensor map of the descriptor."""
    GLOBAL = "global"
    """The descriptor's tensor in global memory (pointer, extents, row strides),
    stored from registers."""
    DIM = "dim"
    """One extent of the descriptor's tensor."""


@irdl_attr_definition
class ParamAttr(ParametrizedAttribute):
    """One parameter of a lowered kernel, as the launch fills it from tile-level
    argument `arg`: `#nvgpu_async.param<map 0 : !nvgpu_async.tensor_map<...>>`,
    `#nvgpu_async.param<dim 0 axis 1 : index>` (extent `axis` of argument 0).
    A lowered kernel lists one per parameter, in order, under `ABI_ATTR`; the
    runtime and the simulators read them through `tawa_xdsl.contract`."""

    name = "nvgpu_async.param"

    kind: StringAttr
    arg: IntAttr
    axis: IntAttr
    """The extent's dimension for `dim`; -1 otherwise."""
    type: Attribute
    """The lowered parameter's type."""

    def __init__(
        self, kind: ParamKind, arg: int, type: Attribute, axis: int | None = None
    ):
        super().__init__(
            StringAttr(kind), IntAttr(arg), IntAttr(-1 if axis is None else axis), type
        )

    @property
    def param_kind(self) -> ParamKind:
        return ParamKind(self.kind.data)

    @property
    def axis_index(self) -> int | None:
        return None if self.axis.data < 0 else self.axis.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            at = parser.pos
            kind = parser.parse_identifier()
            if kind not in set(ParamKind):
                parser.raise_error(
                    f"a parameter kind is one of {', '.join(ParamKind)}, not '{kind}'",
                    at,
                    parser.pos,
                )
            arg = parser.parse_integer(allow_boolean=False, allow_negative=False)
            axis = -1
            if parser.parse_optional_keyword("axis") is not None:
                axis = parser.parse_integer(allow_boolean=False, allow_negative=False)
            parser.parse_punctuation(":")
            type = parser.parse_type()
        return StringAttr(kind), IntAttr(arg), IntAttr(axis), type

    def print_parameters(self, printer: Printer) -> None:
        axis = "" if self.axis_index is None else f" axis {self.axis.data}"
        printer.print_string(f"<{self.kind.data} {self.arg.data}{axis} : ")
        printer.print_attribute(self.type)
        printer.print_string(">")

    def verify(self) -> None:
        if self.kind.data not in set(ParamKind):
            raise VerifyException(
                f"{self.name}: a parameter kind is one of {', '.join(ParamKind)}, "
                f"not '{self.kind.data}'"
            )
        if self.arg.data < 0:
            raise VerifyException(f"{self.name}: argument {self.arg.data} is negative")
        if (self.param_kind == ParamKind.DIM) != (self.axis.data >= 0):
            raise VerifyException(
                f"{self.name}: a dim parameter names its axis, no other kind does"
            )
        want = {
            ParamKind.MAP: TensorMapType,
            ParamKind.GLOBAL: GlobalTensorType,
            ParamKind.DIM: IndexType,
        }.get(self.param_kind)
        if want is not None and not isinstance(self.type, want):
            raise VerifyException(
                f"{self.name}: a {self.kind.data} parameter has type "
                f"{want.name if want is not IndexType else 'index'}, not {self.type}"
            )


@irdl_attr_definition
class LaunchAttr(ParametrizedAttribute):
    """A lowered kernel's launch (under `LAUNCH_ATTR`): threads per block, bytes
    of dynamic shared memory, blocks per cluster:
    `#nvgpu_async.launch<threads = 384, smem = 197632, cluster = 1>` (cluster 1
    may be left out)."""

    name = "nvgpu_async.launch"

    threads: IntAttr
    smem: IntAttr
    cluster: IntAttr

    def __init__(self, threads: int, smem: int, cluster: int = 1):
        super().__init__(IntAttr(threads), IntAttr(smem), IntAttr(cluster))

    @staticmethod
    def of(kernel: Operation) -> LaunchAttr | None:
        """The kernel's launch (None if it has none); another attribute under
        `LAUNCH_ATTR` is invalid IR."""
        attr = kernel.attributes.get(LAUNCH_ATTR)
        if attr is None or isinstance(attr, LaunchAttr):
            return attr
        raise VerifyException(
            f"{LAUNCH_ATTR} needs a #{LaunchAttr.name}<threads = .., smem = .., "
            f"cluster = ..>, got {attr}"
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def field(key: str) -> IntAttr:
            parser.parse_keyword(key)
            parser.parse_punctuation("=")
            return IntAttr(parser.parse_integer(allow_boolean=False))

        with parser.in_angle_brackets():
            threads = field("threads")
            parser.parse_punctuation(",")
            smem = field("smem")
            cluster = IntAttr(1)
            if parser.parse_optional_punctuation(",") is not None:
                cluster = field("cluster")
        return threads, smem, cluster

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            f"<threads = {self.threads.data}, smem = {self.smem.data}, "
            f"cluster = {self.cluster.data}>"
        )

    def verify(self) -> None:
        threads, smem = self.threads.data, self.smem.data
        if threads <= 0 or threads % THREADS_PER_WARPGROUP:
            raise VerifyException(
                f"{LAUNCH_ATTR}: {threads} threads are not whole warpgroups of "
                f"{THREADS_PER_WARPGROUP}"
            )
        if not 0 <= smem <= MAX_SMEM_BYTES:
            raise VerifyException(
                f"{LAUNCH_ATTR}: {smem} bytes of shared memory; a block can have "
                f"0 to {MAX_SMEM_BYTES}"
            )
        _verify_cluster(LAUNCH_ATTR, self.cluster.data)


def _int_property(op: Operation, name: str) -> int | None:
    """An integer property of an op that the verifier may not have reached yet
    (kernel-wide checks look at every op of the kernel)."""
    value = op.properties.get(name)
    return value.value.data if isinstance(value, IntegerAttr) else None


@dataclass(frozen=True)
class SmemExtent:
    """The bytes one allocation takes of the block's dynamic shared memory."""

    op: SmemAllocOp | MBarrierAllocOp
    start: int
    end: int

    @staticmethod
    def of(op: SmemAllocOp | MBarrierAllocOp) -> SmemExtent | None:
        """None for an allocation too malformed to place (its own verifier,
        which may run after its neighbours', says why)."""
        start = _int_property(op, "offset")
        if start is None or not isinstance(op.result.type, SmemType | MBarrierType):
            return None
        return SmemExtent(op, start, start + op.result.type.total_bytes)

    def __str__(self) -> str:
        return f"%{self.op.result.name_hint or '?'} (bytes {self.start} to {self.end})"


def _overlap_effect(a: SmemExtent, b: SmemExtent) -> str:
    rings = [isinstance(e.op, SmemAllocOp) for e in (a, b)]
    if all(rings):
        return "TMA copies into one overwrite the tiles of the other"
    if any(rings):
        return "TMA copies into the ring overwrite the barriers"
    return "arrivals on one count on the other"


def launch_problems(kernel: Operation) -> list[tuple[Operation, str]]:
    """What in a lowered kernel contradicts its shared memory or its launch, with
    the op at fault: an allocation sharing bytes with an earlier one, one ending
    past the launch's `smem` (less `SMEM_ALIGN_SLACK`), a role dispatch the
    launch's `threads` cannot run. The verifiers of those ops and the barrier
    simulator both ask this, so they agree on what is wrong."""
    launch = LaunchAttr.of(kernel)
    problems: list[tuple[Operation, str]] = []
    extents: list[SmemExtent] = []
    for op in kernel.walk():
        if isinstance(op, SmemAllocOp | MBarrierAllocOp):
            e = SmemExtent.of(op)
            if e is None:
                continue
            clash = next(
                (p for p in extents if p.start < e.end and e.start < p.end), None
            )
            if clash is not None:
                problems.append(
                    (
                        op,
                        f"{op.name}: {e} overlaps {clash}: {_overlap_effect(e, clash)}",
                    )
                )
            elif launch is not None and launch_smem_bytes(e.end) > launch.smem.data:
                problems.append(
                    (
                        op,
                        f"{op.name}: %{op.result.name_hint or '?'} ends at byte {e.end}; "
                        f"with {SMEM_ALIGN_SLACK} bytes to align the base the kernel "
                        f"needs {launch_smem_bytes(e.end)}, past the {launch.smem.data} bytes "
                        "of shared memory the launch gives: accesses past the end fault",
                    )
                )
            extents.append(e)
        elif isinstance(op, RoleDispatchOp) and launch is not None:
            consumers = _int_property(op, "num_consumers")
            if consumers is None:
                continue
            warpgroups = 1 + consumers
            need = warpgroups * THREADS_PER_WARPGROUP
            if launch.threads.data != need:
                effect = (
                    "warpgroups that are not launched never arrive on the barriers "
                    "the others wait on, and the kernel hangs"
                    if launch.threads.data < need
                    else "the extra warpgroups run the consumer role on rows no one owns"
                )
                problems.append(
                    (
                        op,
                        f"{op.name}: the launch gives {launch.threads.data} threads; a producer "
                        f"and {warpgroups - 1} consumer warpgroups are {need}: {effect}",
                    )
                )
    return problems


def raise_own_problem(op: Operation) -> None:
    """The verifier's half of `launch_problems`: raise the problem found at `op`."""
    kernel = op.parent_op()
    while kernel is not None and not isinstance(kernel, func.FuncOp):
        kernel = kernel.parent_op()
    if kernel is None:
        return
    for at, message in launch_problems(kernel):
        if at is op:
            raise VerifyException(message)


NVGPUAsync = Dialect(
    "nvgpu_async",
    [
        SmemAllocOp,
        MBarrierAllocOp,
        MBarrierInitOp,
        FenceMBarrierInitOp,
        CTABarrierOp,
        ConsumerBarrierOp,
        ProducerBarrierOp,
        ClusterBarrierOp,
        MmaTurnInitOp,
        MmaTurnBeginOp,
        MmaTurnEndOp,
        FenceProxyAsyncOp,
        LaunchDependentsOp,
        GridDependencyWaitOp,
        MBarrierArriveOp,
        MBarrierArriveExpectTxOp,
        MBarrierWaitOp,
        TMALoadOp,
        PrefetchTensorMapOp,
        TMAStoreOp,
        TMAStoreCommitOp,
        TMAStoreWaitOp,
        SmemSlotOp,
        SmemTransOp,
        SmemLoadOp,
        SmemExtractOp,
        SmemStoreOp,
        SmemStoreScalarOp,
        ColumnReduceOp,
        StoreGlobalOp,
        ThreadLoadOp,
        ThreadLoadsArriveOp,
        TransposeCopyOp,
        WgmmaFenceOp,
        WgmmaCommitGroupOp,
        WgmmaWaitGroupOp,
        WgmmaOp,
        SetMaxNRegOp,
        RoleDispatchOp,
    ],
    [
        FragmentKindAttr,
        FragmentLayoutAttr,
        TensorMapType,
        GlobalTensorType,
        SmemType,
        SmemViewType,
        MBarrierType,
        RegActionAttr,
        ArriveScopeAttr,
        ParamAttr,
        LaunchAttr,
    ],
)
