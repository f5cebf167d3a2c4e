"""Writes the FlashAttention examples (attention.mlir, attention_f16.mlir,
attention_d80_d96.mlir, attention_d256.mlir, attention_gqa.mlir,
attention_fp8.mlir, attention_fp8_v.mlir) from one template, so the
thirty-four kernels stay alike.

    python examples/make_attention.py        # rewrite the .mlir files next to it

tests/test_examples.py checks that the committed files are what this prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

HEADER = """\
// FlashAttention forward: O = softmax(Q K^T * sm_scale) V, one program per (BM-query
// block, batch * head). Q and O are [BH, SQ, D], K and V [BH, SK, D] {dtype} tensors
// (tile.dims: BH = batch * heads, SQ / SK = query / key length, D = head dim; a call
// whose extents disagree is refused). The key loop walks BN-key blocks keeping the
// online-softmax state: the running row max m, the running row sum l and the
// unnormalised output acc, rescaled by alpha = exp2(m_old - m_new) whenever m
// grows. m is kept in log2 units (scores times scale = sm_scale * log2(e)) and
// rounded down to a multiple of 8, so it moves only when a row's max crosses a
// factor of 256: alpha is then exactly 1 for almost every block, and the PTX
// printer skips multiplying acc by a warp's ones. The probabilities
// exp2(s * scale - m), one fused multiply-add per score, lie below 256 with the
// largest at least 1: no bf16 or f16 overflow, and no more underflow than with
// the exact max. SQ may differ from SK: the causal kernels let query i see keys 0..i.
// BM = {bm}, BN = {bn} are named (tile.box, tile.size), so `tile-shape{{block-m=..
// block-n=..}}` can resize them. Launch grid: (ceil(SQ / BM), BH).{note}
//
//   {full}:
//     every key; the blocks wholly inside the sequence run unmasked, the last
//     partial block masks keys past seq_len.
//   {causal}:
//     keys up to the query position; the blocks left of the query block run
//     unmasked, the rest with the causal and sequence-length masks.
"""

NARROW_NOTE = """
// Head dims 80 and 96: rows of 160 and 192 bytes, which 128-byte swizzle chunks do
// not divide, are moved (TMA) and read (wgmma) in chunks of the widest swizzle
// span that divides them: five 32-byte chunks, three 64-byte ones."""

D256_NOTE = """
// Head dim 256 walks 64-key blocks: a 128x256 f32 accumulator and a 128x64 score
// tile fit the registers of two consumer warpgroups."""

GQA_HEADER = """\
// Grouped-query FlashAttention forward (GQA; MQA when all query heads of a batch
// share one kv head): q_heads = group * kv_heads, query head h reads kv head
// h / group. The caller passes Q and O, [B * HQ, SQ, D] {dtype} tensors, folded (a
// free view of the contiguous tensor) to [BHKV, GSQ, D]: the group query heads of
// one kv head stacked along the rows, fold row r being position r % SQ of the
// group's query head r / SQ. K and V are [BHKV, SK, D] (tile.dims: BHKV = batch *
// kv heads, GSQ = group * SQ, SK, D). One program per (BM-row block of the fold,
// batch * kv head): each K/V tile it loads feeds BM query rows of the group, of
// several query heads wherever a block spans a head boundary, so K and V are
// read ceil(group * SQ / BM) times per kv head against group * ceil(SQ / BM)
// for one program per (query block, query head): the same when BM divides SQ,
// group times fewer when SQ <= BM / group (decoding, short prompts).
// group is not passed: it is the fold (BHQ / BHKV). A query that was not folded
// is refused by the contract (its BHKV differs from K's unless group = 1).
// The online softmax is attention.mlir's (running max in steps of 8, log2
// units); BM = {bm}, BN = {bn} are named (tile.box, tile.size), so
// `tile-shape{{block-m=.. block-n=..}}` can resize them. Launch grid:
// (ceil(GSQ / BM), BHKV).{note}
//
//   {full}:
//     attention.mlir's kernels applied to the fold (a query row's result does
//     not depend on its position), under the GQA contract.
//   {causal}:
//     take SQ (%seq_q; the caller checks that it divides GSQ, i.e. that the
//     fold is [BHKV, group * SQ, D]) and let fold row r see keys 0 .. r % SQ.
//     A block within one head runs the key blocks left of its first position
//     unmasked and the rest masked; a block that spans heads runs every key
//     block up to min(SQ, SK) masked.
"""

FP8 = "f8E4M3FN"

FP8_HEADER = """\
// FP8 FlashAttention forward: O = softmax(Q K^T * sm_scale) V with Q, K, V in e4m3
// and per-tensor descales (the real Q is q_descale * Q, likewise K and V), O in
// bf16; one program per (BM-query block, batch * head). Q and O are [BH, SQ, D],
// K is [BH, SK, D], {v_note}
// The online softmax is that of attention.mlir with the descales folded into
// the score scale (sm_scale * log2(e) * q_descale * k_descale), but m moves in
// steps of 1 (log2 units) and the probabilities are exp2(s * scale - m + 7): the largest of a row
// lies in [128, 256), high in e4m3's range (largest 448), so that P, cast to e4m3
// (round to nearest even, saturating) for the second product, keeps 3 mantissa
// bits on its large values and flushes to zero only what lies 2^17 below the
// row's largest (FlashAttention-3 puts the largest at 256 with a fixed offset of 8
// on the exact max). A row's common factor cancels in O = acc / l, since l sums
// the same f32 probabilities; v_descale is applied there, once per row. alpha
// stays exactly 1 while a row's max stays within its power of two. SQ may differ from
// SK: the causal kernels let query i see keys 0..i. BM = {bm}, BN = {bn} are named
// (tile.box, tile.size), so `tile-shape{{block-m=.. block-n=..}}` can resize them;
// BN stays a multiple of 128 ({bn_note}).
// Launch grid: (ceil(SQ / BM), BH). Head dim 64 has 64-byte rows of Q and K, moved
// and read 64-byte swizzled; head dim 96 has 96-byte rows, three 32-byte swizzled
// chunks (head dims that are not multiples of 32 are refused: wgmma's e4m3 K step
// is 32).
//
//   {full}:
//     every key; the blocks wholly inside the sequence run unmasked, the last
//     partial block masks keys past seq_len.
//   {causal}:
//     keys up to the query position; the blocks left of the query block run
//     unmasked, the rest with the causal and sequence-length masks.
"""

V_TRANSPOSED_NOTE = """and V comes transposed, v_t = [BH, D, SK] (tile.dims: BH =
// batch * heads, SQ / SK = query / key length, D = head dim). Both products read
// their shared-memory operands K-major, the only way wgmma reads 8-bit inputs:
// K's rows of D are the K dimension of Q K^T, and for P V the K dimension is the
// keys, which only a transposed V stores contiguously (attention_fp8_v.mlir takes
// V as stored and has the producer transpose each tile)."""

V_STORED_NOTE = """and so is V, as models store it (tile.dims: BH = batch *
// heads, SQ / SK = query / key length, D = head dim). Both products read their
// shared-memory operands K-major, the only way wgmma reads 8-bit inputs: K's rows
// of D are the K dimension of Q K^T, but for P V the K dimension is the keys, and
// a V tile [BN keys, D] as TMA loads it is MN-major. The producer warpgroup
// transposes it: TMA loads the tile into a staging buffer, the producer's 128
// threads wait for it, read it in 4x4-byte blocks (ld.shared.b32, eight
// prmt.b32), write it D x BN at the swizzled addresses wgmma reads K-major,
// fence, meet at a named barrier, and one arrives on the slot's full barrier
// (nvgpu_async.transpose_copy). attention_fp8.mlir takes V transposed instead
// (v_t = [BH, D, SK]), which needs no copy but a transpose before the call."""

SUFFIXES = {"bf16": "", "f16": "_f16", FP8: "_fp8"}


def kernel(
    d: int,
    dtype: str,
    causal: bool,
    bm: int,
    bn: int,
    gqa: bool = False,
    v_stored: bool = False,
) -> str:
    """One attention kernel; see the header for what it computes (GQA_HEADER for
    `gqa`: Q and O folded to [BHKV, GSQ, D], the causal mask by position;
    FP8_HEADER for e4m3 inputs: descales, P cast to e4m3, bf16 output, V
    transposed unless `v_stored`)."""
    fp8 = dtype == FP8
    v_t = fp8 and not v_stored  # V comes transposed, [BH, D, SK]
    stem = "attention_gqa" if gqa else "attention"
    name = f"{stem}{'_causal' if causal else ''}_d{d}{suffix(dtype, v_stored)}"
    q_desc = f"!tile.desc<?x?x{d}x{dtype}, box = [1, {bm}, {d}]>"
    o_type = "bf16" if fp8 else dtype
    o_desc = f"!tile.desc<?x?x{d}x{o_type}, box = [1, {bm}, {d}]>"
    kv_desc = f"!tile.desc<?x?x{d}x{dtype}, box = [1, {bn}, {d}]>"
    vt_desc = f"!tile.desc<?x{d}x?x{dtype}, box = [1, {d}, {bn}]>"
    s_t = f"tensor<{bm}x{bn}xf32>"
    row_t = f"tensor<{bm}xf32>"
    acc_t = f"tensor<{bm}x{d}xf32>"
    tile_t = f"tensor<{bn}x{d}x{dtype}>"
    q_t = f"tensor<{bm}x{d}x{dtype}>"
    o_t = f"tensor<{bm}x{d}x{o_type}>"
    carried = f"({row_t}, {row_t}, {acc_t})"
    q_dims, bh = ('"BHKV", "GSQ"', '"BHKV"') if gqa else ('"BH", "SQ"', '"BH"')
    q_attrs = f'{{tile.box = ["", "BM", ""], tile.dims = [{q_dims}, "D"]}}'
    kv_attrs = f'{{tile.box = ["", "BN", ""], tile.dims = [{bh}, "SK", "D"]}}'
    vt_attrs = f'{{tile.box = ["", "", "BN"], tile.dims = [{bh}, "D", "SK"]}}'
    v_param = f"%v_t: {vt_desc} {vt_attrs}" if v_t else f"%v: {kv_desc} {kv_attrs}"
    seq_q = ", %seq_q: index" if gqa and causal else ""
    scalars = f"%sm_scale: f32{seq_q}" + (
        ", %q_descale: f32, %k_descale: f32, %v_descale: f32" if fp8 else ""
    )
    # the running max moves in steps of `step` (log2 units); the probabilities
    # are exp2(s * scale - m + offset): see the headers for the choices
    step, offset = (1, 7) if fp8 else (8, 0)
    lines = [
        f"func.func @{name}(%q: {q_desc} {q_attrs},",
        f"    %k: {kv_desc} {kv_attrs},",
        f"    {v_param},",
        f"    %o: {o_desc} {q_attrs},",
        f"    {scalars}) attributes {{tile.kernel}} {{",
        "  %pid_m = tile.program_id x",
        "  %bh = tile.program_id y",
        f"  %seq_len = tile.dim %k, 1 : {kv_desc}",
        "  %c0 = arith.constant 0 : index",
        f'  %bm = arith.constant {{tile.size = "BM"}} {bm} : index',
        f'  %bn = arith.constant {{tile.size = "BN"}} {bn} : index',
        "  %m0 = arith.muli %pid_m, %bm : index",
        f"  %q_t = tile.load %q[%bh, %m0, %c0] : {q_desc} -> {q_t}",
        "  %log2e = arith.constant 1.44269502 : f32",
    ]
    if fp8:
        lines += [
            "  %sm_log2 = arith.mulf %sm_scale, %log2e : f32",
            "  %qk_descale = arith.mulf %q_descale, %k_descale : f32",
            "  %qk_scale = arith.mulf %sm_log2, %qk_descale : f32",
        ]
    else:
        lines.append("  %qk_scale = arith.mulf %sm_scale, %log2e : f32")
    lines += [
        f"  // the running max moves in steps of {step} (log2 units)",
        f"  %max_step = arith.constant {step:.1f} : f32",
        f"  %per_max_step = arith.constant {1 / step} : f32",
        "  %max_steps_per_score = arith.mulf %qk_scale, %per_max_step : f32",
        f"  %max_step_r = tile.splat %max_step : f32 -> {row_t}",
        f"  %steps_r = tile.splat %max_steps_per_score : f32 -> {row_t}",
        f"  %scale_t = tile.splat %qk_scale : f32 -> {s_t}",
        "  %ninf = arith.constant 0xFF800000 : f32",
        f"  %neg_inf = tile.splat %ninf : f32 -> {s_t}",
        f"  %zero_s = arith.constant dense<0.000000e+00> : {s_t}",
        f"  %m_init = tile.splat %ninf : f32 -> {row_t}",
        f"  %l_init = arith.constant dense<0.000000e+00> : {row_t}",
        f"  %acc_init = arith.constant dense<0.000000e+00> : {acc_t}",
        "  %seq_len_i32 = arith.index_cast %seq_len : index to i32",
        f"  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<{bm}x{bn}xi32>",
        f"  %col_iota_1d = tile.iota : tensor<{bn}xi32>",
        f"  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<{bn}xi32> -> tensor<1x{bn}xi32>",
    ]
    if offset:
        lines += [
            f"  // the largest probability of a row in [2^{offset}, 2^{offset + step}): e4m3's range",
            f"  %p_offset = arith.constant {offset:.1f} : f32",
            f"  %p_offset_r = tile.splat %p_offset : f32 -> {row_t}",
        ]
    if causal:
        lines += [
            "  %m0_i32 = arith.index_cast %m0 : index to i32",
            f"  %m0_col = tile.splat %m0_i32 : i32 -> tensor<{bm}x1xi32>",
            f"  %row_iota_1d = tile.iota : tensor<{bm}xi32>",
            f"  %row_iota = tile.expand_dims %row_iota_1d, axis = 1 : tensor<{bm}xi32> -> tensor<{bm}x1xi32>",
            f"  %row_ids = arith.addi %row_iota, %m0_col : tensor<{bm}x1xi32>",
        ]
        # the lowest query position of the block and each row's position
        first, rows = ("%lo", "%row_pos") if gqa else ("%m0_in", "%row_ids")
        if gqa:
            lines += gqa_positions(bm)
        else:  # queries past the keys see every key, all masked past seq_len
            lines.append("  %m0_in = arith.minui %m0, %seq_len : index")
        lines += [
            f"  %rows_b = tile.broadcast {rows} : tensor<{bm}x1xi32> -> tensor<{bm}x{bn}xi32>",
            "  // key blocks wholly left of the query block need no mask",
            f"  %m0_blocks = arith.divui {first}, %bn : index",
            "  %full_end = arith.muli %m0_blocks, %bn : index",
        ]
        end = "%hi" if gqa else "%diag_end"
        if not gqa:
            lines.append("  %diag_end = arith.addi %m0, %bm : index")
        lines.append(f"  %kv_end = arith.minui {end}, %seq_len : index")
    else:
        lines += [
            "  // key blocks wholly inside the sequence need no mask",
            "  %seq_blocks = arith.divui %seq_len, %bn : index",
            "  %full_end = arith.muli %seq_blocks, %bn : index",
        ]

    def loop(result: str, lb: str, ub: str, init: str, masked: bool) -> None:
        lines.append(
            f"  {result} = scf.for %n = {lb} to {ub} step %bn iter_args(%m_i = {init[0]}, "
            f"%l_i = {init[1]}, %acc = {init[2]}) -> {carried} {{"
        )
        body = [f"%k_t = tile.load %k[%bh, %n, %c0] : {kv_desc} -> {tile_t}"]
        if v_t:  # V^T's tile is D x BN: transposed, the K-major B operand of P V
            v_blk = "%v_blk"
            body += [
                f"%vt_blk = tile.load %v_t[%bh, %c0, %n] : {vt_desc} -> tensor<{d}x{bn}x{dtype}>",
                f"%v_blk = tile.trans %vt_blk : tensor<{d}x{bn}x{dtype}> -> {tile_t}",
            ]
        else:
            v_blk = "%v_t"
            body.append(f"%v_t = tile.load %v[%bh, %n, %c0] : {kv_desc} -> {tile_t}")
        body += [
            f"%k_tt = tile.trans %k_t : {tile_t} -> tensor<{d}x{bn}x{dtype}>",
            f"%s = tile.dot %q_t, %k_tt, %zero_s : {q_t}, tensor<{d}x{bn}x{dtype}> -> {s_t}",
        ]
        score = "%s"
        if masked:
            body += [
                "// keys past the sequence end"
                + (" and keys after the query" if causal else "")
                + " score -inf",
                "%n_i32 = arith.index_cast %n : index to i32",
                f"%n_row = tile.splat %n_i32 : i32 -> tensor<1x{bn}xi32>",
                f"%col_ids = arith.addi %col_iota, %n_row : tensor<1x{bn}xi32>",
                f"%cols_b = tile.broadcast %col_ids : tensor<1x{bn}xi32> -> tensor<{bm}x{bn}xi32>",
                f"%in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<{bm}x{bn}xi32> -> tensor<{bm}x{bn}xi1>",
                f"%s_len = tile.select %in_seq, %s, %neg_inf : tensor<{bm}x{bn}xi1>, {s_t}",
            ]
            score = "%s_len"
            if causal:
                body += [
                    f"%causal = tile.cmpi sle, %cols_b, %rows_b : tensor<{bm}x{bn}xi32> -> tensor<{bm}x{bn}xi1>",
                    f"%s_causal = tile.select %causal, %s_len, %neg_inf : tensor<{bm}x{bn}xi1>, {s_t}",
                ]
                score = "%s_causal"
        body += [
            f"%m_blk = tile.reduce max {score}, axis = 1 : {s_t} -> {row_t}",
            f"%blk_steps = arith.mulf %m_blk, %steps_r : {row_t}",
            f"%blk_steps_down = math.floor %blk_steps : {row_t}",
            f"%m_blk_down = arith.mulf %blk_steps_down, %max_step_r : {row_t}",
            f"%m_new = arith.maximumf %m_i, %m_blk_down : {row_t}",
        ]
        shift = "%m_new"
        if offset:
            body.append(f"%m_shift = arith.subf %m_new, %p_offset_r : {row_t}")
            shift = "%m_shift"
        body += [
            f"%m_e = tile.expand_dims {shift}, axis = 1 : {row_t} -> tensor<{bm}x1xf32>",
            f"%m_b = tile.broadcast %m_e : tensor<{bm}x1xf32> -> {s_t}",
            f"%s_scaled = arith.mulf {score}, %scale_t : {s_t}",
            f"%s_shift = arith.subf %s_scaled, %m_b : {s_t}",
            f"%p = math.exp2 %s_shift : {s_t}",
            f"%m_diff = arith.subf %m_i, %m_new : {row_t}",
            f"%alpha = math.exp2 %m_diff : {row_t}",
            f"%l_blk = tile.reduce sum %p, axis = 1 : {s_t} -> {row_t}",
            f"%l_scaled = arith.mulf %l_i, %alpha : {row_t}",
            f"%l_new = arith.addf %l_scaled, %l_blk : {row_t}",
            f"%alpha_e = tile.expand_dims %alpha, axis = 1 : {row_t} -> tensor<{bm}x1xf32>",
            f"%alpha_b = tile.broadcast %alpha_e : tensor<{bm}x1xf32> -> {acc_t}",
            f"%acc_scaled = arith.mulf %acc, %alpha_b : {acc_t}",
            f"%p_lo = arith.truncf %p : {s_t} to tensor<{bm}x{bn}x{dtype}>",
            f"%acc_new = tile.dot %p_lo, {v_blk}, %acc_scaled : tensor<{bm}x{bn}x{dtype}>, {tile_t} -> {acc_t}",
            f"scf.yield %m_new, %l_new, %acc_new : {row_t}, {row_t}, {acc_t}",
        ]
        lines.extend("    " + b for b in body)
        # the masked blocks are one or two per query block: not worth overlapping
        lines.append("  } {tile.overlap = false}" if masked else "  }")

    loop(
        "%m_1, %l_1, %acc_1",
        "%c0",
        "%full_end",
        ("%m_init", "%l_init", "%acc_init"),
        False,
    )
    lines.append(
        "  // the diagonal blocks: causal and sequence-length masks"
        if causal
        else "  // the last, partial block (if any): sequence-length mask"
    )
    end = "%kv_end" if causal else "%seq_len"
    loop("%m_f, %l_f, %acc_f", "%full_end", end, ("%m_1", "%l_1", "%acc_1"), True)
    lines.append("  // one division per row, then a multiply per element")
    if fp8:
        lines += [
            f"  %ones = tile.splat %v_descale : f32 -> {row_t}",
            f"  %l_inv = arith.divf %ones, %l_f : {row_t}",
        ]
    else:
        lines += [
            f"  %ones = arith.constant dense<1.000000e+00> : {row_t}",
            f"  %l_inv = arith.divf %ones, %l_f : {row_t}",
        ]
    lines += [
        f"  %l_e = tile.expand_dims %l_inv, axis = 1 : {row_t} -> tensor<{bm}x1xf32>",
        f"  %l_b = tile.broadcast %l_e : tensor<{bm}x1xf32> -> {acc_t}",
        f"  %o_f = arith.mulf %acc_f, %l_b : {acc_t}",
        f"  %o_t = arith.truncf %o_f : {acc_t} to {o_t}",
        f"  tile.store %o_t, %o[%bh, %m0, %c0] : {o_t} -> {o_desc}",
        "  func.return",
        "}",
    ]
    return "\n".join(lines) + "\n"


def gqa_positions(bm: int) -> list[str]:
    """The causal GQA kernel's positions: row r of the fold is position r % SQ.
    A block within one head holds positions p0 .. p0 + BM - 1; one that spans
    two or more heads holds 0 .. SQ - 1, so its key loops are bounded by those."""
    return [
        "  // row r of the fold is position r % SQ of query head r / SQ",
        "  %seq_q_i32 = arith.index_cast %seq_q : index to i32",
        f"  %seq_q_col = tile.splat %seq_q_i32 : i32 -> tensor<{bm}x1xi32>",
        f"  %row_pos = arith.remui %row_ids, %seq_q_col : tensor<{bm}x1xi32>",
        "  %p0 = arith.remui %m0, %seq_q : index",
        "  %p_end = arith.addi %p0, %bm : index",
        "  %one_head = arith.cmpi ule, %p_end, %seq_q : index",
        "  %lo_any = arith.select %one_head, %p0, %c0 : index",
        "  // no unmasked key block past the keys (SQ > SK)",
        "  %lo = arith.minui %lo_any, %seq_len : index",
        "  %hi = arith.minui %p_end, %seq_q : index",
    ]


def suffix(dtype: str, v_stored: bool = False) -> str:
    """A kernel name's ending: the dtype's, and `_v` for V as stored (fp8)."""
    return SUFFIXES[dtype] + ("_v" if v_stored else "")


def example(
    dims: tuple[int, ...],
    dtype: str,
    bm: int,
    bn: int,
    gqa: bool = False,
    v_stored: bool = False,
) -> str:
    end = suffix(dtype, v_stored)
    stem = "attention_gqa" if gqa else "attention"
    names = [f"@{stem}_d{d}{end}" for d in dims]
    causal = [f"@{stem}_causal_d{d}{end}" for d in dims]
    template = FP8_HEADER if dtype == FP8 else GQA_HEADER if gqa else HEADER
    header = template.format(
        dtype=dtype,
        bm=bm,
        bn=bn,
        note=D256_NOTE if 256 in dims else NARROW_NOTE if 96 in dims else "",
        full=", ".join(names),
        causal=", ".join(causal),
        v_note=V_STORED_NOTE if v_stored else V_TRANSPOSED_NOTE,
        bn_note=(
            "a row of a transposed V tile, BN bytes, is a 128-byte swizzle chunk"
            if v_stored
            else "a V^T row of BN bytes is a 128-byte swizzle chunk"
        ),
    )
    kernels = [
        kernel(d, dtype, c, bm, bn, gqa, v_stored) for d in dims for c in (False, True)
    ]
    return header + "\n" + "\n".join(kernels)


FILES = {
    "attention.mlir": ((64, 128), "bf16", 128, 128),
    "attention_f16.mlir": ((64, 128), "f16", 128, 128),
    "attention_d80_d96.mlir": ((80, 96), "bf16", 128, 128),
    "attention_d256.mlir": ((256,), "bf16", 128, 64),
    "attention_gqa.mlir": ((64, 128), "bf16", 128, 128, True),
    "attention_fp8.mlir": ((64, 96, 128, 256), FP8, 128, 128),
    "attention_fp8_v.mlir": ((64, 128, 256), FP8, 128, 128, False, True),
}


def main() -> None:
    for name, args in FILES.items():
        (HERE / name).write_text(example(*args))
        print(f"wrote {HERE / name}", file=sys.stderr)


if __name__ == "__main__":
    main()
