"""Loads and stores of register tiles (pattern family 6).

- `smem_slot` / `smem_trans`: a slot's address; a transposed view is the same
  address (its type says how wgmma reads it).
- `smem_extract`: one element of a slot (a block scale in its TMA box), one
  `ld.shared` in every thread at an offset known when compiling (through the
  slot's swizzle for a matrix tile).
- `smem_store`: every thread writes its accumulator elements into the
  staging tile in the 128-byte-swizzled layout TMA reads: 16-byte chunk c of
  row r sits at chunk c ^ (r % 8), and r % 8 is the thread's g for every row it
  holds; one address per 8-column group, one store per element pair.
- `thread_load` and `transpose_copy`: the producer's threads write a slot
  (from global memory, or transposed out of a staging buffer TMA filled) at
  the addresses TMA would have written (`swizzled_piece`).
- `smem_load`: a vector tile (a bias) read into the column layout, one load
  per 8-column group; a matrix tile TMA loaded (a residual, a split-K partial
  sum) read into the accumulator layout through the same swizzle, one load per
  element pair (32 bits for 16-bit pairs, `ld.shared.v2.f32` for f32,
  `.v2.b64` for i64), or per element for i8 (`ld.shared.s8`: the byte
  sign-extended into its register; stores of i8 write `st.u8`, the low byte).
- `store_global`: masked stores from registers with unsigned bounds checks, by
  the paths `select-store-path` listed (a store without them takes that pass's
  choice), chosen at run time with uniform branches on the tile's first column:
  16-byte `st.global.v4` after a quad transpose (`vec16`), element pairs masked
  per element (`pair`; an odd column misaligns them; an i8 pair's two bytes
  packed by `prmt.b32` into one `st.global.u16`), single elements (`single`).
  Each path computes its own row addresses, as the printer did. A
  `transposed` store writes each element alone at its transposed place.

A tile under 64 rows (`Geometry.padded`) is read by its padding rows at its own
rows and written by none of them: `smem_store` and `store_global` mask them (a
tile ending in half a warp slab, row by row: `KernelState.padding_guard`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
)

from tawa_xdsl.diagnostics import OpDiagnostic
from tawa_xdsl.dialects import nvgpu_async as nv
from tawa_xdsl.dialects import ptx
from tawa_xdsl.dialects.nvgpu_async import FragmentKind, StorePath
from tawa_xdsl.dialects.tile import element_bytes, is_fp8, is_i8
from tawa_xdsl.lowering.distribute.barriers import slot_address
from tawa_xdsl.lowering.distribute.context import (
    ConsumerIds,
    KernelState,
    Lowered,
    Ops,
    bundle,
    geometry,
    is_16bit,
    register_type,
    scalar_class,
    uniform_branch,
)
from tawa_xdsl.lowering.distribute.kernel import DistributePattern
from tawa_xdsl.lowering.fragments import Geometry
from tawa_xdsl.lowering.quad_transpose import quad_transpose_bundle
from tawa_xdsl.lowering.select_store_path import store_paths
from tawa_xdsl.target import SWIZZLE_BYTES, THREADS_PER_WARPGROUP, swizzle_span


class SmemSlot(DistributePattern):
    OPS = (nv.SmemSlotOp,)

    def rewrite(self, op: nv.SmemSlotOp, rewriter: PatternRewriter):
        ops = Ops(self.k)
        self.k.define(
            rewriter, op, ops, Lowered(slot_address(ops, op.buffer, op.slot, op))
        )


class SmemTrans(DistributePattern):
    OPS = (nv.SmemTransOp,)

    def rewrite(self, op: nv.SmemTransOp, rewriter: PatternRewriter):
        self.k.define(rewriter, op, [], self.k.lowered(op.source, op))


class SmemExtract(DistributePattern):
    OPS = (nv.SmemExtractOp,)

    def rewrite(self, op: nv.SmemExtractOp, rewriter: PatternRewriter):
        view = op.source.type
        assert isinstance(view, nv.SmemViewType)
        cls = scalar_class(view.element_type)
        if cls is None or view.is_transposed:
            raise OpDiagnostic(
                op,
                f"reading one {view.element_type} element of a "
                f"{'transposed ' if view.is_transposed else ''}shared tile is not "
                "supported (f32, i32 or index elements of a tile as loaded)",
            )
        ops = Ops(self.k)
        load = ptx.LoadOp(
            "shared",
            self.k.lowered(op.source, op).value,
            cls,
            1,
            offsets=[_element_offset(view, op.get_position())],
        )
        ops.add(load)
        self.k.define(rewriter, op, ops, Lowered(load.results[0]))


def _element_offset(view: nv.SmemViewType, position: tuple[int, ...]) -> int:
    """Bytes from a slot to one element: row-major for a vector, through the
    swizzle TMA writes for a matrix (chunks of `span`-byte rows, the 16-byte
    piece of row r at piece ^ (r % 8), masked to the span)."""
    esize = element_bytes(view.element_type)
    if len(position) == 1:
        return position[0] * esize
    rows, cols = view.get_shape()
    r, c = position
    span = swizzle_span(cols * esize) or SWIZZLE_BYTES
    chunk, within = divmod(c * esize, span)
    linear = chunk * rows * span + r * span + within
    return linear ^ (((linear >> 7) & (span // 16 - 1)) << 4)


class SmemStore(DistributePattern):
    OPS = (nv.SmemStoreOp,)

    def rewrite(self, op: nv.SmemStoreOp, rewriter: PatternRewriter):
        value = self.k.lowered(op.value, op)
        t = op.value.type
        if geometry(t).kind != FragmentKind.ACC:
            raise OpDiagnostic(op, "only accumulator-layout tiles can be staged")
        assert isinstance(t, TensorType)
        ops = Ops(self.k)
        if value.uniform:  # a splat: every store reads its one register
            value = Lowered(ops.reg(value))
        base = slot_address(ops, op.buffer, op.slot, op)
        addr, pairs = _swizzled_pairs(ops, op, t, base)
        packed = is_16bit(t.element_type) or is_fp8(t.element_type)
        pair = (lambda i: [i // 2]) if packed else (lambda i: [i, i + 1])
        byte = is_i8(t.element_type)
        within = (0, 1) if byte else (0,)  # i8: each byte of a pair on its own
        held = self.k.padding_guard(geometry(t), op, ops)
        halves = held is not None and ptx.width(held) == 2  # a half slab
        ops.add(
            ptx.StoreOp(
                "shared",
                addr,
                value.value,
                [value.element(e) for p in pairs for e in pair(p.element)],
                pred=held,
                offsets=[p.offset + b for p in pairs for b in within],
                addr_elements=[p.group for p in pairs for _ in within],
                pred_elements=[p.half for p in pairs for _ in within]
                if halves
                else None,
                byte=byte,
            )
        )
        rewriter.replace(op, ops, [])


class SmemStoreScalar(DistributePattern):
    """A tile ticket into its slot: one st.shared.b32 by the producer thread."""

    OPS = (nv.SmemStoreScalarOp,)

    def rewrite(self, op: nv.SmemStoreScalarOp, rewriter: PatternRewriter):
        ops = Ops(self.k)
        addr = slot_address(ops, op.buffer, op.slot, op)
        value = ops.reg(self.k.lowered(op.value, op))
        ops.add(ptx.StoreOp("shared", addr, value, [0]))
        rewriter.replace(op, ops, [])


class SmemLoad(DistributePattern):
    """A vector tile (a bias) into the column layout, or a matrix tile that TMA
    loaded (a residual, a split-K partial sum) into the accumulator layout,
    read back through the swizzle `smem_store` writes with."""

    OPS = (nv.SmemLoadOp,)

    def rewrite(self, op: nv.SmemLoadOp, rewriter: PatternRewriter):
        t = op.result.type
        view = op.source.type
        assert isinstance(t, TensorType) and isinstance(view, nv.SmemViewType)
        kind, rank = geometry(t).kind, len(view.get_shape())
        ops = Ops(self.k)
        if kind == FragmentKind.COL and rank == 1:
            load = self._vector(ops, op, t)
        elif kind == FragmentKind.ROW and rank == 1:
            load = self._row_vector(ops, op, t)
        elif kind == FragmentKind.ACC and rank == 2 and not view.is_transposed:
            load = self._matrix(ops, op, t)
        elif kind == FragmentKind.ACC and rank == 2:
            raise OpDiagnostic(
                op,
                "a transposed shared tile cannot be read into registers: load the "
                "tile in the orientation the epilogue uses",
            )
        else:
            raise OpDiagnostic(
                op,
                "only vector tiles (a bias, a row scale) and matrix tiles in the "
                "accumulator layout can be read from shared memory into registers",
            )
        self.k.define(rewriter, op, ops, Lowered(load))

    def _vector(self, ops: Ops, op: nv.SmemLoadOp, t: TensorType) -> SSAValue:
        """One load per 8-column group (a pair: 32 bits, or v2.f32)."""
        esize = element_bytes(t.element_type)
        col = ops.alu(
            "mad.lo.u32",
            self.k.consumer_ids(op).col0,
            ops.imm(esize, "b32"),
            self.k.lowered(op.source, op).value,
        )
        offsets = [8 * j * esize for j in range(geometry(t).count // 2)]
        return _load_shared(ops, col, t, offsets)

    def _row_vector(self, ops: Ops, op: nv.SmemLoadOp, t: TensorType) -> SSAValue:
        """One value per row this thread holds (a per-row scale; a bias of a
        GEMM whose operands `swap-operands` swapped): one load each, from the
        thread's first row (band + 16 w + g, wrapped into a tile under 64
        rows). A 16-bit tile's rows, 8 apart, are loaded one `ld.shared.b16`
        each and packed in pairs, as its registers hold them."""
        if is_fp8(t.element_type):
            raise OpDiagnostic(
                op, "row vectors are read from shared memory as f32, bf16 or f16"
            )
        esize, geom = element_bytes(t.element_type), geometry(t)
        first = ops.alu(
            "mad.lo.u32",
            self.k.row0(geom.rows, op, ops, wrap=True),
            ops.imm(esize, "b32"),
            self.k.lowered(op.source, op).value,
        )
        if ptx.width(first) == 2:  # a half slab: each row its own address
            offsets, groups = [0, 0], [0, 1]
        else:
            offsets = [geom.row_offset(i) * esize for i in range(geom.count)]
            groups = None
        if not is_16bit(t.element_type):
            return _load_shared(ops, first, t, offsets, groups)
        halves = ptx.LoadOp(
            "shared",
            first,
            "b16",
            geom.count,
            offsets=offsets,
            addr_elements=groups,
        )
        return ops.add(ptx.PackOp(ops.add(halves).results[0])).results[0]

    def _matrix(self, ops: Ops, op: nv.SmemLoadOp, t: TensorType) -> SSAValue:
        """One load per element pair, in register order, so the bundle is the
        fragment (16-bit pairs packed in 32 bits, f32 pairs by v2.f32)."""
        base = self.k.lowered(op.source, op).value
        addr, pairs = _swizzled_pairs(ops, op, t, base)
        pairs = sorted(pairs, key=lambda p: p.element)
        offsets, groups = [p.offset for p in pairs], [p.group for p in pairs]
        return _load_shared(ops, addr, t, offsets, groups)


def _load_shared(
    ops: Ops,
    addr: SSAValue,
    t: TensorType,
    offsets: list[int],
    addr_elements: list[int] | None = None,
) -> SSAValue:
    """The registers of tile `t`, an equal share of them from each of
    `offsets` (from element `addr_elements[i]` of `addr`): a vector load per
    offset, or for an i8 tile a byte load per element, at consecutive bytes."""
    rt = register_type(t)
    assert rt is not None
    byte = is_i8(t.element_type)
    if byte:
        per = rt.size // len(offsets)
        offsets = [o + i for o in offsets for i in range(per)]
        if addr_elements is not None:
            addr_elements = [a for a in addr_elements for _ in range(per)]
    load = ptx.LoadOp(
        "shared",
        addr,
        rt.register_class,
        rt.size,
        offsets=offsets,
        addr_elements=addr_elements,
        byte=byte,
    )
    return ops.add(load).results[0]


@dataclass(frozen=True)
class _Pair:
    """Where one accumulator element pair of a thread sits in a swizzled tile."""

    element: int
    """Its first accumulator element."""
    group: int
    """The element of the address bundle it adds to: its 8-column group (and
    its half h, in a half slab: `KernelState.row0`)."""
    offset: int
    """Bytes past that address: its column chunk and its row."""
    half: int
    """Which of the thread's two rows of its 64-row block it is in (h)."""


def _swizzled_pairs(
    ops: Ops, op: Operation, t: TensorType, base: SSAValue
) -> tuple[SSAValue, list[_Pair]]:
    """Where this thread's element pairs of the accumulator-layout tile `t`
    sit in the swizzled layout TMA reads and writes, at `base`: column chunks of
    `span` bytes (`SmemType.swizzle_bytes`), each `rows` rows of `span` bytes,
    and in row r the 16-byte piece c at c ^ ((r span / 128) % (span / 16)),
    which for a row r = g mod 8, as every row the thread holds is, is
    c ^ (g >> log2(128 / span)). One address per 8-column group (a pair never
    straddles a 16-byte piece); pairs in (group, 64-row block, half) order. Staging writes
    (`smem_store`) and epilogue reads (`smem_load`) share it, so the registers
    and TMA agree on the layout both ways. The padding warps of a tile under
    64 rows address the tile's own rows (`KernelState.row0`'s `wrap`: same g,
    so the same swizzle), read them, and are masked when writing."""
    k = ops.k
    ids = k.consumer_ids(op)
    geom, esize = geometry(t), element_bytes(t.element_type)
    span = swizzle_span(geom.cols * esize) or SWIZZLE_BYTES
    rows, chunk_cols = geom.rows, span // esize
    row_addr = ops.alu(  # this thread's first row, `span` bytes per row
        "mad.lo.u32", k.row0(rows, op, ops, wrap=True), ops.imm(span, "b32"), base
    )
    halves = ptx.width(row_addr) == 2  # a half slab: each row its own address
    g = ids.g
    if span < SWIZZLE_BYTES:
        shift = (SWIZZLE_BYTES // span).bit_length() - 1
        g = ops.alu("shr.u32", g, ops.imm(shift, "b32"))
    g16 = ops.alu("shl.b32", g, ops.imm(4, "b32"))
    t_bytes = ops.alu("mul.lo.u32", ids.t, ops.imm(2 * esize, "b32"))
    groups = [divmod(8 * j, chunk_cols) for j in range(geom.cols // 8)]
    byte = ops.alu("add.u32", t_bytes, ops.imm([c * esize for _, c in groups], "b32"))
    swizzled = ops.alu("and.b32", byte, ops.imm(-16, "b32"))
    swizzled = ops.alu("xor.b32", swizzled, g16)
    within = ops.alu("and.b32", byte, ops.imm(15, "b32"))
    swizzled = ops.alu("add.u32", swizzled, within)
    n = len(groups)
    if halves:  # group j of half h: element n h + j
        addr = ops.alu(
            "add.u32",
            Lowered(swizzled, tuple(j for _ in (0, 1) for j in range(n))),
            Lowered(row_addr, tuple(h for h in (0, 1) for _ in range(n))),
        )
    else:
        addr = ops.alu("add.u32", swizzled, row_addr)
    half = geom.cols // 2
    pairs = [
        _Pair(
            b * half + 4 * j + 2 * h,
            j + n * h if halves else j,
            (chunk * rows + 64 * b + (0 if halves else 8 * h)) * span,
            h,
        )
        for j, (chunk, _) in enumerate(groups)
        for b in range(geom.blocks)
        for h in (0, 1)
    ]
    return addr, pairs


@dataclass
class _Store:
    """What the paths of one register-tile store share."""

    value: Lowered
    geom: Geometry
    esize: int
    wide16: bool
    ptr: SSAValue
    dims: list[SSAValue]
    strides: list[SSAValue]
    row0: SSAValue
    """The tile's first row plus this thread's row base."""
    ok: SSAValue
    """The leading indices are inside the tensor."""
    offset: SSAValue
    """Element offset of the leading indices."""
    col: SSAValue
    ids: ConsumerIds
    byte: bool
    """An i8 tile: each element its low byte (`st.global.u8`), a pair both
    (`st.global.u16`)."""

    @property
    def row_offsets(self) -> list[int]:
        """Offsets of this thread's rows from its first, (block b, half h) order."""
        return [64 * b + 8 * h for b in range(self.geom.blocks) for h in (0, 1)]


class StoreGlobal(DistributePattern):
    OPS = (nv.StoreGlobalOp,)

    def rewrite(self, op: nv.StoreGlobalOp, rewriter: PatternRewriter):
        t = op.value.type
        assert isinstance(t, TensorType)
        value = self.k.lowered(op.value, op)
        kind = geometry(t).kind
        k, ops = self.k, Ops(self.k)
        if value.uniform:  # a splat: every store reads its one register
            value = Lowered(ops.reg(value))
        if op.target not in k.tensors:
            raise OpDiagnostic(
                op, "stores from registers go to a global tensor parameter"
            )
        if kind != FragmentKind.ACC:
            _store_vector(ops, op, t, value)
            rewriter.replace(op, ops, [])
            return
        if op.transposed:
            _store_transposed(ops, op, t, value)
            rewriter.replace(op, ops, [])
            return
        if is_fp8(t.element_type):
            raise OpDiagnostic(
                op,
                "8-bit float tiles are stored through TMA only: store whole 128-byte "
                "rows at coordinates TMA takes (their registers hold pairs, which the "
                "register store path does not split)",
            )
        paths = op.store_paths or tuple(store_paths(t))
        byte = is_i8(t.element_type)
        if byte and StorePath.VEC16 in paths:
            raise OpDiagnostic(
                op, "i8 tiles are stored from registers by element pairs or alone"
            )
        ptr, dims, strides = k.tensors[op.target]
        idx = [ops.reg(self.k.lowered(i, op)) for i in op.indices]
        rank = len(idx)
        geom = geometry(t)
        ok, offset = _leading(ops, op, geom, idx)
        row0 = ops.alu("add.s32", idx[rank - 2], k.row0(geom.rows, op, ops))
        store = _Store(
            value,
            geom,
            element_bytes(t.element_type),
            is_16bit(t.element_type),
            ptr,
            dims,
            strides,
            row0,
            ok,
            offset,
            idx[rank - 1],
            k.consumer_ids(op),
            byte,
        )
        odd = fits = None
        if (
            len(paths) > 1
        ):  # wide stores need the column, every pitch and the base aligned
            bits = store.col
            for stride in strides:
                bits = ops.alu("or.b32", bits, stride)
            base = ops.alu("cvt.u32.u64", ptr)
            shift = store.esize.bit_length() - 1
            base = ops.alu("shr.u32", base, ops.imm(shift, "b32"))  # in elements
            bits = ops.alu("or.b32", bits, base)
        if StorePath.PAIR in paths:
            low = ops.alu("and.b32", bits, ops.imm(1, "b32"))
            odd = ops.alu("setp.ne.u32", low, ops.imm(0, "b32"))
        if StorePath.VEC16 in paths:
            col, cols_dim = store.col, dims[rank - 1]
            low = ops.alu("and.b32", bits, ops.imm(7, "b32"))
            fits = ops.alu("setp.eq.u32", low, ops.imm(0, "b32"))
            fits = ops.alu("setp.ge.and.s32", col, ops.imm(0, "b32"), fits)
            last = ops.alu("sub.s32", cols_dim, ops.imm(geom.cols, "b32"))
            fits = ops.alu("setp.le.and.s32", col, last, fits)
        code = self._path(paths[-1], store)
        for path in reversed(paths[:-1]):
            this = self._path(path, store)
            if path == StorePath.VEC16:
                assert fits is not None
                code = [uniform_branch(fits, this, code)]
            else:  # pair: an even column
                assert odd is not None
                code = [uniform_branch(odd, code, this)]
        ops.extend(code)
        rewriter.replace(op, ops, [])

    def _path(self, path: StorePath, s: _Store) -> Ops:
        ops = Ops(self.k)
        if path == StorePath.VEC16:
            _store_vectors(ops, s)
        else:
            _store_pairs(ops, s, paired=path == StorePath.PAIR)
        return ops


def _store_vector(
    ops: Ops, op: nv.StoreGlobalOp, t: TensorType, value: Lowered
) -> None:
    """A row tile (one value per accumulator row: a row reduction, a row
    scale) or a column tile (one value per column: a bias), stored as a vector
    along the tensor's last axis, or along the rows of an M x 1 tile. Threads
    that hold the same elements store them once: lane t = 0 of each quad a
    row tile's rows, the first quad of the first warp a column tile's
    columns; each element masked by the bounds."""
    k = ops.k
    ptr, dims, strides = k.tensors[op.target]
    idx = [ops.reg(k.lowered(i, op)) for i in op.indices]
    rank, geom, esize = len(idx), geometry(t), element_bytes(t.element_type)
    ids = k.consumer_ids(op)
    rows = geom.kind == FragmentKind.ROW
    axis = rank - 2 if rows and len(t.get_shape()) == 2 else rank - 1
    if rows:
        ok = ops.alu("setp.eq.u32", ids.t, ops.imm(0, "b32"))
        if (held := k.padding_guard(geom, op, ops)) is not None:
            ok = ops.alu("and.pred", ok, held)
        first = ops.alu("add.s32", idx[axis], k.row0(geom.rows, op, ops))
        offsets = [geom.row_offset(i) for i in range(geom.count)]
    else:
        ok = ops.alu("setp.lt.u32", ids.ctid, ops.imm(4, "b32"))
        first = ops.alu("add.s32", idx[axis], ids.col0)
        offsets = [geom.col_offset(i) for i in range(geom.count)]
    offset = ops.alu("mov.u64", ops.imm(0, "b64"))
    for dim in (d for d in range(rank) if d != axis):  # extent 1: inside or not
        inside = ops.alu("setp.lt.u32", idx[dim], dims[dim])  # negative: outside
        ok = ops.alu("and.pred", ok, inside)
        pitch = strides[dim] if dim < rank - 1 else ops.imm(1, "b32")
        offset = ops.alu("mad.wide.u32", idx[dim], pitch, offset)
    element = ops.alu("add.s32", first, ops.imm(offsets, "b32"))
    inside = ops.alu("setp.lt.u32", element, dims[axis])
    inside = ops.alu("and.pred", inside, ok)
    n = geom.count
    if axis == rank - 1:  # one address, the elements at immediate offsets from it
        addr = ops.alu("mad.wide.u32", first, ops.imm(1, "b32"), offset)
        bytes_at, addr_elements = [esize * o for o in offsets], [0] * n
    else:  # along the rows, a pitch apart
        addr = ops.alu("mad.wide.u32", element, strides[axis], offset)
        bytes_at, addr_elements = [0] * n, list(range(n))
    addr = ops.alu("mad.lo.u64", addr, ops.imm(esize, "b64"), ptr)
    if is_16bit(t.element_type):  # element pairs share a register: unpack them
        rt = register_type(t)
        assert rt is not None
        value = Lowered(ops.add(ptx.UnpackOp(ops.materialize(value, rt))).results[0])
    ops.add(
        ptx.StoreOp(
            "global",
            addr,
            value.value,
            [value.element(i) for i in range(n)],
            pred=inside,
            offsets=bytes_at,
            addr_elements=addr_elements,
            pred_elements=list(range(n)),
            byte=is_i8(t.element_type),
        )
    )


def _leading(
    ops: Ops, op: nv.StoreGlobalOp, geom: Geometry, idx: list[SSAValue]
) -> tuple[SSAValue, SSAValue]:
    """(whether this thread stores at all, element offset) of a matrix store
    from the tensor's leading indices, each a box of extent 1 (inside or
    not), and the padding rows' guard (`KernelState.padding_guard`)."""
    k = ops.k
    _, dims, strides = k.tensors[op.target]
    held = k.padding_guard(geom, op, ops)
    ok = k.true if held is None else held
    offset = ops.alu("mov.u64", ops.imm(0, "b64"))
    for dim in range(len(idx) - 2):
        inside = ops.alu("setp.lt.u32", idx[dim], dims[dim])  # negative: outside
        ok = ops.alu("and.pred", ok, inside)
        offset = ops.alu("mad.wide.u32", idx[dim], strides[dim], offset)
    return ok, offset


def _store_transposed(
    ops: Ops, op: nv.StoreGlobalOp, t: TensorType, value: Lowered
) -> None:
    """An accumulator-layout tile stored transposed (`store_global
    transposed`): the tile's row 64 b + 16 w + g + 8 h goes to the tensor's
    column `j + 64 b + 16 w + g + 8 h`, its column 8 q + 2 t + e to the
    tensor's row `i + 8 q + 2 t + e`. A thread's two neighbouring elements
    lie a row apart, so each is one store (`st.global.b16` for 16-bit, whose
    pairs are unpacked first); a warp's lanes of one g-run write 8 adjacent
    elements of 4 rows per instruction, which suits the few rows of a small-M
    output (the tile's wide side is the tensor's columns). Made one tile row
    (tensor column) and `STORE_GROUPS` pairs of columns at a time, so what
    lives at once is a few addresses, not the whole tile's."""
    k = ops.k
    ptr, dims, strides = k.tensors[op.target]
    idx = [ops.reg(k.lowered(i, op)) for i in op.indices]
    rank, geom, esize = len(idx), geometry(t), element_bytes(t.element_type)
    ids = k.consumer_ids(op)
    ok, offset = _leading(ops, op, geom, idx)
    row_offsets = [64 * b + 8 * h for b in range(geom.blocks) for h in (0, 1)]
    col_offsets = [8 * q + e for q in range(geom.cols // 8) for e in (0, 1)]
    first_col = ops.alu("add.s32", idx[rank - 1], k.row0(geom.rows, op, ops))
    out_cols = ops.alu("add.s32", first_col, ops.imm(row_offsets, "b32"))
    col_in = ops.alu("setp.lt.u32", out_cols, dims[rank - 1])
    col_in = ops.alu("and.pred", col_in, ok)
    out_cols = ops.alu("cvt.s64.s32", out_cols)
    if is_16bit(t.element_type):  # element pairs share a register: unpack them
        rt = register_type(t)
        assert rt is not None
        value = Lowered(ops.add(ptx.UnpackOp(ops.materialize(value, rt))).results[0])
    half = geom.cols // 2
    first_row = ops.alu("add.s32", idx[rank - 2], ids.col0)
    for r in range(len(row_offsets)):  # tile row r = 2 b + h
        for c0 in range(0, len(col_offsets), 2 * STORE_GROUPS):
            cs = range(c0, min(len(col_offsets), c0 + 2 * STORE_GROUPS))
            n = len(cs)
            out_rows = ops.alu(
                "add.s32", first_row, ops.imm([col_offsets[c] for c in cs], "b32")
            )
            inside = ops.alu("setp.lt.u32", out_rows, dims[rank - 2])
            inside = ops.alu("and.pred", inside, Lowered(col_in, (r,) * n))
            el = ops.alu("mad.wide.u32", out_rows, strides[rank - 2], offset)
            el = ops.alu("add.s64", el, Lowered(out_cols, (r,) * n))
            el = ops.alu("mad.lo.u64", el, ops.imm(esize, "b64"), ptr)
            # tile column c = 2 q + e of row r: register (r / 2) N/2 + 4 q + 2 h + e
            held_at = [(r // 2) * half + 4 * (c // 2) + 2 * (r % 2) + c % 2 for c in cs]
            ops.add(
                ptx.StoreOp(
                    "global",
                    el,
                    value.value,
                    [value.element(i) for i in held_at],
                    pred=inside,
                    offsets=[0] * n,
                    addr_elements=list(range(n)),
                    pred_elements=list(range(n)),
                    byte=is_i8(t.element_type),
                )
            )


def _rows(ops: Ops, s: _Store) -> tuple[SSAValue, SSAValue]:
    """(inside, element offset of column 0) of each row this thread holds."""
    row = ops.alu("add.s32", s.row0, ops.imm(s.row_offsets, "b32"))
    inside = ops.alu("setp.lt.u32", row, s.dims[-2])
    inside = ops.alu("and.pred", inside, s.ok)
    addr = ops.alu("mad.wide.u32", row, s.strides[-1], s.offset)
    return inside, addr


def _store_vectors(ops: Ops, s: _Store) -> None:
    """Every column inside: quads trade registers (`quad_transpose_bundle`) so
    each lane stores one 16-byte group, 8 columns, per `st.global.v4`."""
    bits = ops.alu("and.b32", s.ids.t, ops.imm([2, 1], "b32"))
    lane_bits = ops.alu(  # [bit 2 set, clear, bit 1 set, clear]
        "setp.ne.u32",
        Lowered(bits, (0, 0, 1, 1)),
        ops.imm([0, 2, 0, 1], "b32"),
    )
    lane_col = ops.alu("mad.lo.u32", s.ids.t, ops.imm(8, "b32"), s.col)
    inside, addr = _rows(ops, s)
    rows = len(s.row_offsets)
    el = ops.alu("cvt.u64.u32", lane_col, count=rows)
    el = ops.alu("add.s64", el, addr)
    el = ops.alu("mad.lo.u64", el, ops.imm(s.esize, "b64"), s.ptr)
    quarter, quads = s.geom.cols // 4, s.geom.cols // 32
    # group (row r = 2 b + h, q) holds packed registers b quarter + 2 (4 q + k) + h
    elements = [
        s.value.element(b * quarter + 2 * (4 * q + k) + h)
        for b in range(s.geom.blocks)
        for h in (0, 1)
        for q in range(quads)
        for k in range(4)
    ]
    # one group at a time, its store right after its transpose: four registers
    # live per store, not the whole tile's (a 256-column tile spilled)
    for g, (r, q) in enumerate((r, q) for r in range(rows) for q in range(quads)):
        y = quad_transpose_bundle(
            s.value.value, elements[4 * g : 4 * g + 4], lane_bits, ops.add
        )
        ops.add(
            ptx.StoreOp(
                "global",
                el,
                y,
                [0, 1, 2, 3],
                pred=inside,
                offsets=[32 * s.esize * q],
                addr_elements=[r],
                pred_elements=[r],
            )
        )


STORE_GROUPS = 4
"""8-column groups of a row whose masked stores are made together (their
addresses, 2 registers each, and predicates live at once)."""


def _store_pairs(ops: Ops, s: _Store, paired: bool) -> None:
    """Any tile, any bounds: each lane stores its column pairs, masked per
    element (a pair half inside stores its first element alone), or, when not
    `paired` (an odd first column, whose pairs are not aligned for one store),
    every element on its own. `STORE_GROUPS` groups of a row at a time, their
    bounds, addresses and halves made right before their stores: what lives at
    once is theirs, not the whole tile's or a row's (128x256 tiles spilled)."""
    geom = s.geom
    groups = geom.cols // 8
    col0 = ops.alu("add.s32", s.col, s.ids.col0)
    inside, addr = _rows(ops, s)
    packed = (
        ops.materialize(s.value, bundle("b32", geom.count // 2)) if s.wide16 else None
    )
    for r in range(len(s.row_offsets)):  # row r = 2 b + h
        for j0 in range(0, groups, STORE_GROUPS):
            js = range(j0, min(groups, j0 + STORE_GROUPS))
            _store_pair_groups(ops, s, paired, packed, inside, addr, col0, r, js)


def _store_pair_groups(
    ops: Ops,
    s: _Store,
    paired: bool,
    packed: SSAValue | None,
    inside: SSAValue,
    addr: SSAValue,
    col0: SSAValue,
    r: int,
    js: range,
) -> None:
    """The stores of row `r`'s 8-column groups `js` (see `_store_pairs`)."""
    esize, n = s.esize, len(js)
    firsts = [(r // 2) * (s.geom.cols // 2) + 4 * j + 2 * (r % 2) for j in js]
    cols = ops.alu("add.s32", col0, ops.imm([8 * j for j in js], "b32"))
    second = ops.alu("add.s32", cols, ops.imm(1, "b32"))
    row = (r,) * n
    p0 = ops.alu("setp.lt.u32", cols, s.dims[-1])
    p0 = ops.alu("and.pred", p0, Lowered(inside, row))
    p1 = ops.alu("setp.lt.u32", second, s.dims[-1])
    p1 = ops.alu("and.pred", p1, Lowered(inside, row))
    el = ops.alu("cvt.s64.s32", cols)  # -1 when col is odd
    el = ops.alu("add.s64", el, Lowered(addr, row))
    el = ops.alu("mad.lo.u64", el, ops.imm(esize, "b64"), s.ptr)
    if packed is not None:
        wide_value, wide = packed, [[i // 2] for i in firsts]
        pairs = ops.alu("mov.b32", Lowered(packed, tuple(i // 2 for i in firsts)))
        single_value = ops.add(ptx.UnpackOp(pairs)).results[0]
        single_firsts = [[2 * j] for j in range(n)]
        single_seconds = [[2 * j + 1] for j in range(n)]
    else:
        wide_value = single_value = s.value.value
        wide = [[s.value.element(i), s.value.element(i + 1)] for i in firsts]
        single_firsts = [[s.value.element(i)] for i in firsts]
        single_seconds = [[s.value.element(i + 1)] for i in firsts]
    if s.byte and paired:  # i8: a pair's low bytes side by side, one st.u16
        wide_value = ops.alu(
            "prmt.b32",
            s.value.select(firsts),
            s.value.select([i + 1 for i in firsts]),
            ops.imm(PAIR_BYTES, "b32"),
        )
        wide = [[j] for j in range(n)]
    if paired:  # p1: both inside (p1 implies p0), p0: the first alone
        p0 = ops.alu("xor.pred", p0, p1)
        stores = [
            (wide_value, wide, p1, 0, s.byte),
            (single_value, single_firsts, p0, 0, False),
        ]
    else:
        stores = [
            (single_value, single_firsts, p0, 0, False),
            (single_value, single_seconds, p1, esize, False),
        ]
    for value, elements, pred, offset, half in stores:
        ops.add(
            ptx.StoreOp(
                "global",
                el,
                value,
                [x for e in elements for x in e],
                offset,
                pred=pred,
                offsets=[0] * n,
                addr_elements=list(range(n)),
                byte=s.byte and not half,
                half=half,
            )
        )


PAIR_BYTES = 0x40
"""The `prmt.b32` selector putting byte 0 of its second operand (4) above
byte 0 of its first (0): an i8 element pair's two bytes in the low 16 bits,
the first at the lower address."""


LOAD_WIDTHS = (16, 8, 4, 2, 1)
"""Bytes one global load of a `thread_load` may move, widest first."""


class ThreadLoad(DistributePattern):
    """`thread_load`: piece j = tid + 128 i (16 bytes of a tile row; row j / P,
    piece j % P of the P in a row) goes from global memory to where TMA would
    have put it: the slot's swizzle (`swizzled_piece`). Consecutive threads
    read consecutive pieces of a row. The copies are the widest that the
    base, the row pitch, the first column and the row length (in bytes) all
    allow, chosen at run time by uniform branches, 16 bytes down to one
    element. At 4 bytes and wider they are `cp.async` copies (`.cg` at 16,
    `.ca` below), zero-filled outside the tensor by a source size of 0, as
    TMA fills what lies outside, and left in flight: the slot's
    `thread_loads_arrive` tracks them, so the producer goes on to the next
    slot at once. Narrower, each load outside the tensor reads the base
    instead and is zeroed, and the thread stores whole pieces, one piece
    after another, so that what lives at once is one piece's (the producer
    runs on few registers), then fences them for the async proxy. The op's
    result says which: whether the copies are asynchronous."""

    OPS = (nv.ThreadLoadOp,)

    def rewrite(self, op: nv.ThreadLoadOp, rewriter: PatternRewriter):
        k, ops = self.k, Ops(self.k)
        ring = op.buffer.type
        assert isinstance(ring, nv.SmemType)
        esize = element_bytes(ring.element_type)
        ptr, dims, strides = k.tensors[op.source]
        row0, col0 = (ops.reg(k.lowered(c, op)) for c in op.coords)
        tile = _Tile(
            ring,
            esize,
            ptr,
            dims,
            strides[0],
            row0,
            col0,
            slot_address(ops, op.buffer, op.slot, op),
        )
        bits = ops.alu("cvt.u32.u64", ptr)  # in elements, as the others
        bits = ops.alu("shr.u32", bits, ops.imm(esize.bit_length() - 1, "b32"))
        for extent in (strides[0], col0, dims[1]):
            bits = ops.alu("or.b32", bits, extent)
        widths = [w for w in LOAD_WIDTHS if w >= esize]
        code = self._path(tile, widths[-1])
        asynchronous = k.true if widths[-1] >= ptx.CP_ASYNC_SIZES[0] else None
        for w in reversed(widths[:-1]):
            low = ops.alu("and.b32", bits, ops.imm(w // esize - 1, "b32"))
            fits = ops.alu("setp.eq.u32", low, ops.imm(0, "b32"))
            code = [uniform_branch(fits, self._path(tile, w), code)]
            if w == ptx.CP_ASYNC_SIZES[0]:
                asynchronous = fits
        ops.extend(code)
        assert asynchronous is not None
        k.define(rewriter, op, ops, Lowered(asynchronous))

    def _path(self, t: _Tile, width: int) -> Ops:
        """Every piece of this thread in copies of `width` bytes: a loop over
        j = tid, tid + 128, ... below the tile's pieces, so that one piece's
        registers live at a time (unrolled, ptxas hoisted every piece's loads
        and the producer's few registers spilled); after the synchronous
        loads' stores, the thread's proxy fence."""
        ops, k = Ops(self.k), self.k
        rows, cols = t.ring.get_tile()
        pieces = cols * t.esize // 16
        body = Block(arg_types=[bundle("b32")])
        inner = Ops(k)
        self._piece(inner, t, width, body.args[0], pieces)
        body.add_ops([*inner, ptx.YieldOp()])
        ops.add(
            ptx.ForOp(
                k.tid,
                ops.imm(rows * pieces, "b32"),
                ops.imm(THREADS_PER_WARPGROUP, "b32"),
                [],
                Region(body),
                [],
            )
        )
        if width not in ptx.CP_ASYNC_SIZES:
            ops.add(ptx.FenceOp("proxy.async.shared::cta"))
        return ops

    def _piece(self, ops: Ops, t: _Tile, width: int, j: SSAValue, pieces: int) -> None:
        """Piece j: its addresses, then its copies, or its loads, zeros and
        store."""
        r = ops.alu("div.u32", j, ops.imm(pieces, "b32"))
        c = ops.alu("rem.u32", j, ops.imm(pieces, "b32"))
        smem = ops.alu("add.u32", swizzled_piece(ops, t.ring, r, c), t.dst)
        row = ops.alu("add.s32", r, t.row0)
        inside = ops.alu("setp.lt.u32", row, t.dims[0])  # negative: outside
        col = ops.alu("mad.lo.u32", c, ops.imm(16 // t.esize, "b32"), t.col0)
        at = ops.alu("mad.wide.u32", row, t.pitch, ops.imm(0, "b64"))
        at = ops.alu("add.s64", at, ops.alu("cvt.u64.u32", col))
        at = ops.alu("mad.lo.u64", at, ops.imm(t.esize, "b64"), t.ptr)
        n = 16 // width  # copies per piece
        cols, addr = col, at
        if n > 1:
            step = [width // t.esize * m for m in range(n)]
            cols = ops.alu("add.u32", col, ops.imm(step, "b32"))
            addr = ops.alu("add.s64", at, ops.imm([width * m for m in range(n)], "b64"))
        held = ops.alu("setp.lt.u32", cols, t.dims[1])
        held = ops.alu("and.pred", held, Lowered(inside, (0,) * n))
        addr = ops.alu("selp.b64", addr, t.ptr, held)  # outside: read the base
        if width in ptx.CP_ASYNC_SIZES:  # outside: read nothing, fill zeros
            size = ops.alu(
                "selp.b32", ops.imm([width] * n, "b32"), ops.imm(0, "b32"), held
            )
            ops.add(ptx.CpAsyncOp(smem, addr, size, width))
            return
        count = max(n, 4)  # b32 registers: narrow loads one each, low bits
        load = ops.add(
            ptx.LoadOp(
                "global",
                addr,
                "b32",
                count,
                offsets=[0] * n,
                addr_elements=list(range(n)),
                byte=width == 1,
                half=width == 2,
                nc=True,
            )
        )
        owner = Lowered(held, tuple(m for m in range(n) for _ in range(count // n)))
        data = ops.alu("selp.b32", load.results[0], ops.imm(0, "b32"), owner)
        if width == 1:  # byte pairs (each a register's low byte) in 16 bits
            data = _pack(ops, data, 16, 0x0040)
        data = _pack(ops, data, 8, 0x5410)  # the low 16-bit halves into words
        ops.add(ptx.StoreOp("shared", smem, data, [0, 1, 2, 3]))


def _pack(ops: Ops, data: SSAValue, count: int, selector: int) -> SSAValue:
    """`prmt.b32` of registers 2 i and 2 i + 1 of `data` (`count` of them)
    into register i: the low byte of each (0x0040) or the low half (0x5410)."""
    return ops.alu(
        "prmt.b32",
        Lowered(data, tuple(range(0, count, 2))),
        Lowered(data, tuple(range(1, count, 2))),
        ops.imm(selector, "b32"),
    )


@dataclass(frozen=True)
class _Tile:
    """What the load paths of one `thread_load` share."""

    ring: nv.SmemType
    esize: int
    ptr: SSAValue
    dims: list[SSAValue]
    pitch: SSAValue
    """Elements from one row of the tensor to the next."""
    row0: SSAValue
    col0: SSAValue
    dst: SSAValue
    """The slot's address."""


def swizzled_piece(
    ops: Ops, ring: nv.SmemType, row: SSAValue, piece: SSAValue
) -> SSAValue:
    """The byte offset in a slot of `ring` where TMA puts 16-byte piece
    `piece` of tile row `row` (registers): the piece's swizzle chunk (boxes
    side by side, each `rows` rows of `span` bytes), its row in it, and the
    piece within the row XOR the row's phase, as `interp/ptx_memory.swizzle`
    reads it."""
    span = ring.swizzle_bytes
    rows = ring.get_tile()[0]
    per_chunk = span // 16
    chunk = ops.alu("div.u32", piece, ops.imm(per_chunk, "b32"))
    within = ops.alu("rem.u32", piece, ops.imm(per_chunk, "b32"))
    within = ops.alu("shl.b32", within, ops.imm(4, "b32"))
    linear = ops.alu("mad.lo.u32", row, ops.imm(span, "b32"), within)
    linear = ops.alu("mad.lo.u32", chunk, ops.imm(rows * span, "b32"), linear)
    phase = ops.alu("shr.u32", linear, ops.imm(7, "b32"))
    phase = ops.alu("and.b32", phase, ops.imm(per_chunk - 1, "b32"))
    phase = ops.alu("shl.b32", phase, ops.imm(4, "b32"))
    return ops.alu("xor.b32", linear, phase)


TRANSPOSE_4X4 = ((0x5140, 0x7362), (0x5410, 0x7632))
"""The `prmt.b32` selectors that transpose a 4x4-byte block held as four row
words a0..a3 (byte j of a_i is element (i, j)) in two steps: interleave the
rows pairwise (t0 = a0.0 a1.0 a0.1 a1.1 and t1 = a0.2 a1.2 a0.3 a1.3 from a0,
a1; t2, t3 likewise from a2, a3), then join halves (o0 = t0.lo t2.lo =
a0.0 a1.0 a2.0 a3.0, o1 = t0.hi t2.hi; o2, o3 from t1, t3): word j is column j."""


class TransposeCopy(DistributePattern):
    """`transpose_copy` of an R x C byte tile: R/4 x C/4 blocks of 4x4 bytes,
    block j = tid + 128 i per thread (a loop, so that one block's registers
    live at a time). Each warp takes a 32 x 16-byte patch, patches down the
    source rows first; lane l takes its block row l % 8 and block column l / 8,
    so that through the 128-byte swizzle (row r's 16-byte piece p at p ^
    (r % 8)) a warp's row loads touch 8 banks (4 lanes a bank) and its row
    stores 16 (2 a bank); 32 lanes down one column would all store into one
    bank. A block: four
    `ld.shared.b32` (source rows 4 b_r + i at column 4 b_c), eight `prmt.b32`
    (`TRANSPOSE_4X4`), four `st.shared.b32` (destination rows 4 b_c + i at
    column 4 b_r), both at the addresses TMA and wgmma use (`swizzled_piece`
    plus the byte within the piece). Per 128 x 128 tile and thread: 32 loads,
    64 permutes, 32 stores."""

    OPS = (nv.TransposeCopyOp,)

    def rewrite(self, op: nv.TransposeCopyOp, rewriter: PatternRewriter):
        k, ops = self.k, Ops(self.k)
        src, dst = op.source.type, op.buffer.type
        assert isinstance(src, nv.SmemType) and isinstance(dst, nv.SmemType)
        rows, cols = src.get_tile()
        src_base = slot_address(ops, op.source, op.src_slot, op)
        dst_base = slot_address(ops, op.buffer, op.slot, op)
        body = Block(arg_types=[bundle("b32")])
        inner = Ops(k)
        self._block(inner, body.args[0], rows, (src, src_base), (dst, dst_base))
        body.add_ops([*inner, ptx.YieldOp()])
        ops.add(
            ptx.ForOp(
                k.tid,
                ops.imm(rows * cols // 16, "b32"),
                ops.imm(THREADS_PER_WARPGROUP, "b32"),
                [],
                Region(body),
                [],
            )
        )
        rewriter.replace(op, ops, [])

    @staticmethod
    def _block(
        ops: Ops,
        j: SSAValue,
        rows: int,
        src: tuple[nv.SmemType, SSAValue],
        dst: tuple[nv.SmemType, SSAValue],
    ) -> None:
        """Block j: its source rows and columns, loads, permutes and stores."""
        down = rows // nv.TransposeCopyOp.BLOCK_ROWS  # patches along the rows
        lane = ops.alu("and.b32", j, ops.imm(31, "b32"))
        patch = ops.alu("shr.u32", j, ops.imm(5, "b32"))
        # (patch's place, blocks a patch spans, this lane's block in it)
        row, col = (
            ops.alu(
                "shl.b32",
                ops.alu(
                    "mad.lo.u32",
                    ops.alu(across, patch, ops.imm(down, "b32")),
                    ops.imm(span, "b32"),
                    ops.alu(within, lane, ops.imm(bits, "b32")),
                ),
                ops.imm(2, "b32"),  # blocks are 4 bytes a side
            )
            for across, span, within, bits in (
                ("rem.u32", 8, "and.b32", 7),  # block row l % 8
                ("div.u32", 4, "shr.u32", 3),  # block column l / 8
            )
        )
        each = list(range(4))
        words = ops.add(
            ptx.LoadOp(
                "shared",
                _byte_address(ops, src, row, col),
                "b32",
                4,
                offsets=[0] * 4,
                addr_elements=each,
            )
        ).results[0]
        (pairs, halves) = TRANSPOSE_4X4
        mixed = ops.alu(
            "prmt.b32",
            Lowered(words, (0, 0, 2, 2)),
            Lowered(words, (1, 1, 3, 3)),
            ops.imm([*pairs, *pairs], "b32"),
        )
        columns = ops.alu(
            "prmt.b32",
            Lowered(mixed, (0, 0, 1, 1)),
            Lowered(mixed, (2, 2, 3, 3)),
            ops.imm([*halves, *halves], "b32"),
        )
        ops.add(
            ptx.StoreOp(
                "shared",
                _byte_address(ops, dst, col, row),
                columns,
                each,
                offsets=[0] * 4,
                addr_elements=each,
            )
        )


def _byte_address(
    ops: Ops, ring: tuple[nv.SmemType, SSAValue], row: SSAValue, col: SSAValue
) -> SSAValue:
    """The shared addresses of rows row .. row + 3 at byte column `col` (a
    multiple of 4) of a slot (`ring`: its type and address)."""
    t, base = ring
    rows = ops.alu("add.u32", row, ops.imm(list(range(4)), "b32"))
    piece = ops.alu("shr.u32", col, ops.imm(4, "b32"))
    within = ops.alu("and.b32", col, ops.imm(15, "b32"))
    at = ops.alu("add.u32", swizzled_piece(ops, t, rows, piece), within)
    return ops.alu("add.u32", at, base)


def patterns(k: KernelState) -> list[DistributePattern]:
    return [
        SmemSlot(k),
        SmemTrans(k),
        SmemExtract(k),
        SmemStore(k),
        SmemStoreScalar(k),
        SmemLoad(k),
        StoreGlobal(k),
        ThreadLoad(k),
        TransposeCopy(k),
    ]
