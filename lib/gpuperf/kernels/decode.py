"""Flash-Decoding in Triton: attention of a few new query rows against a long KV cache, split over keys.

Public names:

* :func:`decode_attention` ``(q, k_cache, v_cache, cache_seqlens, *, block_table=None, layout="bnhd",
  causal=False, softmax_scale=None, n_splits=None, return_lse=False, check_indices=True, config=None,
  merge="fused")``: the kernel.
* :func:`decode_reference`: the same in float64 on the CPU (paged or contiguous caches), the accuracy
  reference of the tests.
* :func:`choose_splits`: the split count the wrapper picks (``gpuperf.decoding.choose_n_splits``, a model
  of waves and of one program's streaming rate, with this device's SM count); :func:`resident_programs`.

**Shapes.** ``q`` is (B, N_q, H_q, d): N_q = 1..16 new query rows per sequence (1 for plain decoding, more
for speculative decoding), H_q query heads, any strides with a unit last one. The cache is either

* contiguous, ``layout="bnhd"``: ``k_cache``, ``v_cache`` (B, N_max, H_kv, d), as FlashAttention's
  ``flash_attn_with_kvcache`` takes it, or ``layout="bhnd"``: (B, H_kv, N_max, d), as SDPA takes it; any
  strides with a unit last one (a view into a larger buffer is fine);
* paged, ``block_table`` given: ``k_cache``, ``v_cache`` (num_pages, page_size, H_kv, d) and ``block_table``
  (B, max_pages) int32, whose row b lists the pages that hold sequence b's keys in order (key j of sequence
  b is at page ``block_table[b, j // page_size]``, row ``j % page_size``), the paged layout of
  FlashAttention's ``flash_attn_with_kvcache`` (``block_table``), which vLLM's FlashAttention backend uses.
  FlashInfer's NHD pages are the same, but its page table is ragged (``kv_indptr``, ``kv_indices``); the
  PagedAttention kernel of Kwon et al. stores K and V in other layouts.

``cache_seqlens`` (B,) int32: the number of cached keys of each sequence (1 <= N_k[b] <= capacity); an int
means the same for all. H_q must be a multiple of H_kv (grouped-query attention: query head h reads KV head
``h // (H_q / H_kv)``). ``causal=True`` aligns the N_q new rows with the last N_q keys (bottom-right: row i
sees keys j <= N_k[b] - N_q + i), as speculative decoding needs; False lets every row see every cached key.
Returns ``o`` (B, N_q, H_q, d) in q's dtype (and, with ``return_lse``, the natural-log log-sum-exp
(B, N_q, H_q) fp32). fp16 and bf16 (bf16 on a GPU only), d in 32, 64, 128.

**The algorithm.** Program (s, b * H_kv + h, r) takes split s of the keys of sequence b, KV head h, and the
r-th block of its query rows: the G = H_q / H_kv query heads of the group times the N_q rows, G N_q rows
that share every K and V tile, so the tile is read from HBM once and serves them all as the M dimension of
``tl.dot`` (up to ``MAX_BLOCK_M`` = 64 rows; more rows read each tile once per 64). Its keys are
``ceil(ceil(N_k[b] / BLOCK_N) / S)`` tiles: each sequence's keys are cut into S equal shares, so a ragged
batch waits for its longest sequence's share; it runs chapter 13's online softmax over them and writes the partial state
(L_s = m_s + log l_s, O_s = sum_j exp(s_j - m_s) v_j / l_s) in fp32. The merge combines the S states
exactly: ``L = log sum_s exp(L_s)``, ``O = sum_s exp(L_s - L) O_s``; by default the last split program of
each (sequence, KV head, row block) to finish does it (``merge="fused"``), else a second kernel with one
program per query row (``merge="kernel"``). With S = 1 the split kernel writes O itself and there is no
merge. Not yet run on a GPU: correctness checked in the interpreter, which runs programs one after another,
and the fused merge's memory ordering only in the compiled PTX (bench/NOTES.md, "decode, 2026-12-04").

**HBM traffic** (b bytes per element, R = G N_q rows per KV head): K and V once, ``2 N_k[b] d b`` per
(sequence, KV head), while G N_q <= 64; Q once per split, ``S R d b``; the partial states ``S R (d + 1) 4`` written and read
back; O ``R d b``. For decoding (R small, N_k large) the cache is nearly all of it; the benchmark family
``decode`` counts only K and V.
"""

from __future__ import annotations

import numbers

import torch
import triton
import triton.language as tl

from gpuperf.kernels import _checks, _launch, interpreter_enabled
# The scale's check is chapter 14's forward's (one rule for every attention kernel of the course).
from gpuperf.kernels.flash_attention import _default_scale

INTERPRETED = interpreter_enabled()

DTYPE_NAMES = {torch.float16: "fp16", torch.bfloat16: "bf16"}
SUPPORTED_HEAD_DIMS = (32, 64, 128)
LAYOUTS = ("bnhd", "bhnd")
#: How the S partial states are merged (``merge``).
MERGES = ("fused", "kernel")
#: Query rows per sequence and step the wrapper accepts (1 = plain decoding; more: speculative decoding).
MAX_QUERY_ROWS = 16
#: Splits at most (the merge kernel reads them as one power-of-two block).
MAX_SPLITS = 128
#: Query rows of one program at most: a group's rows beyond this go to further programs.
MAX_BLOCK_M = 64

_LOG2E = 1.4426950408889634
_LN2 = 0.6931471805599453


# --------------------------------------------------------------------------------------------------------
# Reference.
# --------------------------------------------------------------------------------------------------------


def gather_cache(cache, cache_seqlens, block_table=None, layout: str = "bnhd"):
    """Sequence b's cached rows as a list of (N_k[b], H_kv, d) tensors (pages gathered in table order)."""
    lengths = _lengths_list(cache_seqlens, cache.shape[0] if block_table is None else block_table.shape[0])
    out = []
    for b, n in enumerate(lengths):
        if block_table is not None:
            page_size = cache.shape[1]
            pages = block_table[b, :-(-n // page_size)].long().cpu()
            rows = cache[pages.to(cache.device)].reshape(-1, *cache.shape[2:])[:n]
        elif layout == "bhnd":
            rows = cache[b, :, :n].transpose(0, 1)
        else:
            rows = cache[b, :n]
        out.append(rows)
    return out


def decode_reference(q, k_cache, v_cache, cache_seqlens, *, block_table=None, layout: str = "bnhd",
                     causal: bool = False, softmax_scale: float | None = None):
    """Exact decoding attention in float64 on the CPU: ``(o, lse)``, o (B, N_q, H_q, d) and lse
    (B, N_q, H_q) float64. Gathers each sequence's keys (through the block table when given), repeats the
    KV heads for the query heads of each group and materialises the N_q x N_k scores."""
    b_, n_q, h_q, d = q.shape
    scale = _default_scale(d, softmax_scale)
    ks = gather_cache(k_cache, cache_seqlens, block_table, layout)
    vs = gather_cache(v_cache, cache_seqlens, block_table, layout)
    o = torch.empty(b_, n_q, h_q, d, dtype=torch.float64)
    lse = torch.empty(b_, n_q, h_q, dtype=torch.float64)
    for b in range(b_):
        k = ks[b].detach().to("cpu", torch.float64)  # (N_k, H_kv, d)
        v = vs[b].detach().to("cpu", torch.float64)
        group = h_q // k.shape[1]
        k = k.repeat_interleave(group, dim=1).transpose(0, 1)  # (H_q, N_k, d)
        v = v.repeat_interleave(group, dim=1).transpose(0, 1)
        qb = q[b].detach().to("cpu", torch.float64).transpose(0, 1)  # (H_q, N_q, d)
        s = qb @ k.transpose(1, 2) * scale  # (H_q, N_q, N_k)
        if causal:
            n_k = k.shape[1]
            seen = torch.arange(n_k)[None, :] <= (n_k - n_q + torch.arange(n_q))[:, None]
            s = s.masked_fill(~seen, float("-inf"))
        lse_b = torch.logsumexp(s, dim=-1)
        o[b] = (torch.exp(s - lse_b[..., None]) @ v).transpose(0, 1)
        lse[b] = lse_b.transpose(0, 1)
    return o, lse


# --------------------------------------------------------------------------------------------------------
# The kernels.
# --------------------------------------------------------------------------------------------------------


@triton.jit
def _kv_tile_ptrs(K, V, BT, b, h, start_n, offs_n, offs_d, n_valid, stride_kb, stride_kn, stride_kh,
                  stride_vb, stride_vn, stride_vh, stride_btb, BLOCK_N: tl.constexpr,
                  PAGED: tl.constexpr, PAGE_SIZE: tl.constexpr, TILE_IN_PAGE: tl.constexpr):
    """Addresses of the (BLOCK_N, d) K and V tiles of keys ``offs_n`` (b, h: int64 scalars)."""
    if PAGED:
        if TILE_IN_PAGE:  # the whole tile sits in one page: one entry of the table
            page = tl.load(BT + b * stride_btb + start_n // PAGE_SIZE).to(tl.int64)
            rows = (start_n % PAGE_SIZE + tl.arange(0, BLOCK_N)).to(tl.int64)
            k_rows = page * stride_kb + rows * stride_kn
            v_rows = page * stride_vb + rows * stride_vn
        else:  # a tile spans pages: one entry per key
            page = tl.load(BT + b * stride_btb + offs_n // PAGE_SIZE, mask=offs_n < n_valid, other=0)
            page = page.to(tl.int64)
            rows = (offs_n % PAGE_SIZE).to(tl.int64)
            k_rows = page * stride_kb + rows * stride_kn
            v_rows = page * stride_vb + rows * stride_vn
    else:
        k_rows = b * stride_kb + offs_n.to(tl.int64) * stride_kn
        v_rows = b * stride_vb + offs_n.to(tl.int64) * stride_vn
    k_ptrs = K + (k_rows + h * stride_kh)[:, None] + offs_d[None, :]
    v_ptrs = V + (v_rows + h * stride_vh)[:, None] + offs_d[None, :]
    return k_ptrs, v_ptrs


@triton.jit
def _decode_step(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_n, last_key, qk_scale,
                 MASKED: tl.constexpr):
    """One K/V tile of the online softmax (scores in log2 units) for every query row
    of the group; ``last_key`` (BLOCK_M,): each row's last visible key (if MASKED)."""
    if MASKED:
        keep = offs_n[None, :] <= last_key[:, None]  # (BLOCK_M, BLOCK_N)
        k = tl.load(k_ptrs, mask=(offs_n <= tl.max(last_key, 0))[:, None], other=0.0)
        v = tl.load(v_ptrs, mask=(offs_n <= tl.max(last_key, 0))[:, None], other=0.0)
    else:
        k = tl.load(k_ptrs)  # (BLOCK_N, d): read once, used by every row of the group
        v = tl.load(v_ptrs)
    qk = tl.dot(q, tl.trans(k)) * qk_scale  # (BLOCK_M, BLOCK_N) fp32, log2 units
    if MASKED:
        qk = tl.where(keep, qk, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(qk, 1))
    # a row that has seen no key yet keeps m = -inf: subtract 0 instead
    m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
    p = tl.math.exp2(qk - m_use[:, None])
    alpha = tl.math.exp2(m_i - m_use)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, l_i, m_new


@triton.jit
# listing: decode-split
def _split_kernel(Q, K, V, BT, SEQLENS, O, LSE, MID_O, MID_LSE, COUNTER,
                  stride_qb, stride_qn, stride_qh, stride_kb, stride_kn, stride_kh,
                  stride_vb, stride_vn, stride_vh, stride_btb,
                  stride_ob, stride_on, stride_oh, H_KV, N_Q, ROWS, qk_scale,
                  GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, PAGED: tl.constexpr, PAGE_SIZE: tl.constexpr,
                  TILE_IN_PAGE: tl.constexpr, CAUSAL: tl.constexpr, SPLIT: tl.constexpr,
                  FUSED_MERGE: tl.constexpr):
    split = tl.program_id(0)
    n_splits = tl.num_programs(0)
    bh = tl.program_id(1).to(tl.int64)
    b = bh // H_KV
    h = bh % H_KV
    n_k = tl.load(SEQLENS + b)
    # Row r of this KV head's rows: query row i = r // GROUP
    # of query head h * GROUP + r % GROUP.
    offs_r = tl.program_id(2) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_i = offs_r // GROUP
    row_h = h * GROUP + offs_r % GROUP
    offs_d = tl.arange(0, HEAD_DIM)
    q_rows = row_i.to(tl.int64) * stride_qn + row_h * stride_qh
    q = tl.load(Q + b * stride_qb + q_rows[:, None] + offs_d[None, :],
                mask=(offs_r < ROWS)[:, None], other=0.0)
    # This split's keys: the split-th of S equal shares of this sequence's tiles.
    tiles = tl.cdiv(tl.cdiv(n_k, BLOCK_N), n_splits)
    lo = split * tiles * BLOCK_N
    hi = tl.minimum(lo + tiles * BLOCK_N, n_k)
    if CAUSAL:  # row i sees keys j <= n_k - N_Q + i
        last_key = n_k - N_Q + row_i
        shared = tl.minimum(hi, n_k - N_Q + 1)  # keys every row sees
    else:
        last_key = tl.zeros([BLOCK_M], dtype=tl.int32) + n_k - 1
        shared = hi
    full_end = lo + tl.maximum(shared - lo, 0) // BLOCK_N * BLOCK_N
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(lo, full_end, BLOCK_N):  # whole tiles: no mask
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k_ptrs, v_ptrs = _kv_tile_ptrs(
            K, V, BT, b, h, start_n, offs_n, offs_d, n_k,
            stride_kb, stride_kn, stride_kh, stride_vb, stride_vn, stride_vh,
            stride_btb, BLOCK_N, PAGED, PAGE_SIZE, TILE_IN_PAGE)
        acc, l_i, m_i = _decode_step(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_n,
                                     last_key, qk_scale, False)
    for start_n in range(full_end, hi, BLOCK_N):  # the ragged end: masked
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k_ptrs, v_ptrs = _kv_tile_ptrs(
            K, V, BT, b, h, start_n, offs_n, offs_d, n_k,
            stride_kb, stride_kn, stride_kh, stride_vb, stride_vn, stride_vh,
            stride_btb, BLOCK_N, PAGED, PAGE_SIZE, TILE_IN_PAGE)
        acc, l_i, m_i = _decode_step(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_n,
                                     tl.minimum(last_key, hi - 1), qk_scale, True)
    # The partial state: O_s normalised, L_s = m_s + log2 l_s
    # (-inf for a split that holds no key).
    seen = l_i > 0
    out = acc / tl.where(seen, l_i, 1.0)[:, None]
    lse = tl.where(seen, m_i + tl.math.log2(tl.where(seen, l_i, 1.0)), float("-inf"))
    # end listing: decode-split
    row_ok = offs_r < ROWS
    if SPLIT:
        mid = (bh * ROWS + offs_r) * n_splits + split  # (B * H_kv * ROWS, S) states
        tl.store(MID_LSE + mid, lse, mask=row_ok)
        tl.store(MID_O + mid[:, None] * HEAD_DIM + offs_d[None, :], out, mask=row_ok[:, None])
        if FUSED_MERGE:
            # The last of the S programs of these rows to finish merges all S states (no second launch).
            tl.debug_barrier()  # every thread's stores issued before the counter's release
            slot = COUNTER + bh * tl.num_programs(2) + tl.program_id(2)
            arrived = tl.atomic_add(slot, 1, sem="acq_rel")
            if arrived == n_splits - 1:
                tl.store(slot, 0)  # the others are done with it: reset for the next call
                first = (bh * ROWS + offs_r) * n_splits
                m = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
                for s in range(0, n_splits):
                    m = tl.maximum(m, tl.load(MID_LSE + first + s, mask=row_ok, other=float("-inf"),
                                              cache_modifier=".cg"))
                m_use = tl.where(m == float("-inf"), 0.0, m)
                total = tl.zeros([BLOCK_M], dtype=tl.float32)
                acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
                for s in range(0, n_splits):
                    w = tl.math.exp2(tl.load(MID_LSE + first + s, mask=row_ok, other=float("-inf"),
                                             cache_modifier=".cg") - m_use)
                    o_s = tl.load(MID_O + (first + s)[:, None] * HEAD_DIM + offs_d[None, :],
                                  mask=row_ok[:, None], other=0.0, cache_modifier=".cg")
                    total += w
                    acc += w[:, None] * o_s
                seen = total > 0
                out = acc / tl.where(seen, total, 1.0)[:, None]
                lse = tl.where(seen, m_use + tl.math.log2(tl.where(seen, total, 1.0)), float("-inf"))
                o_rows = b * stride_ob + row_i.to(tl.int64) * stride_on + row_h * stride_oh
                tl.store(O + o_rows[:, None] + offs_d[None, :], out.to(O.dtype.element_ty),
                         mask=row_ok[:, None])
                tl.store(LSE + (b * N_Q + row_i) * (H_KV * GROUP) + row_h, lse * 0.6931471805599453,
                         mask=row_ok)
    else:
        o_rows = b * stride_ob + row_i.to(tl.int64) * stride_on + row_h * stride_oh
        tl.store(O + o_rows[:, None] + offs_d[None, :], out.to(O.dtype.element_ty), mask=row_ok[:, None])
        tl.store(LSE + (b * N_Q + row_i) * (H_KV * GROUP) + row_h, lse * 0.6931471805599453, mask=row_ok)


@triton.jit
def _merge_kernel(MID_O, MID_LSE, O, LSE, stride_ob, stride_on, stride_oh,
                  H_KV, N_Q, ROWS, N_SPLITS, GROUP: tl.constexpr,
                  HEAD_DIM: tl.constexpr, SPLIT_BLOCK: tl.constexpr):
    # one program per query row of one head: row = (b * H_kv + h) * ROWS + r
    row = tl.program_id(0).to(tl.int64)
    offs_s = tl.arange(0, SPLIT_BLOCK)
    offs_d = tl.arange(0, HEAD_DIM)
    lse_s = tl.load(MID_LSE + row * N_SPLITS + offs_s, mask=offs_s < N_SPLITS,
                    other=float("-inf"))
    states = (row * N_SPLITS + offs_s)[:, None] * HEAD_DIM + offs_d[None, :]
    o_s = tl.load(MID_O + states, mask=(offs_s < N_SPLITS)[:, None], other=0.0)
    m = tl.max(lse_s, 0)  # -inf only for a row that sees no key (causal, N_k < N_q, unchecked)
    m = tl.where(m == float("-inf"), 0.0, m)
    w = tl.math.exp2(lse_s - m)  # l_s exp(m_s - m), in log2 units; 0 for empty splits
    total = tl.sum(w, 0)
    seen = total > 0
    out = tl.sum(w[:, None] * o_s, 0) / tl.where(seen, total, 1.0)  # 0 for a row with no key
    lse = tl.where(seen, m + tl.math.log2(tl.where(seen, total, 1.0)), float("-inf"))
    lse = lse * 0.6931471805599453  # times ln 2: back to the natural log
    # where the row goes: query row i of query head hq of sequence b
    bh = row // ROWS
    r = row % ROWS
    b = bh // H_KV
    i = r // GROUP
    hq = (bh % H_KV) * GROUP + r % GROUP
    o_row = O + b * stride_ob + i * stride_on + hq * stride_oh
    tl.store(o_row + offs_d, out.to(O.dtype.element_ty))
    tl.store(LSE + (b * N_Q + i) * (H_KV * GROUP) + hq, lse)


# --------------------------------------------------------------------------------------------------------
# Launch configuration and the split count.
# --------------------------------------------------------------------------------------------------------

#: (BLOCK_N, num_warps, num_stages) by head dim on a GPU: one untested launch (64-key tiles, 4 warps,
#: 3 stages), to tune on the H200 (bench/NOTES.md "decode").
GPU_CONFIGS = {32: (64, 4, 3), 64: (64, 4, 3), 128: (64, 4, 3)}
#: Keys per tile under the interpreter (launch options are ignored there).
INTERPRETER_BLOCK_N = 32

_SM_COUNT: dict = {}
#: The device whose bandwidth and SM limits the split model assumes (the SM count is read from the GPU).
_MODEL_DEVICE = "H200 SXM"
#: One program's streaming rate with two 32 KiB K+V tiles in flight: an assumption, taken from the one
#: measurement of a lone program we have, chapter 14's unsplit forward kernel at batch 1 (8 programs read
#: 269 GB/s in book/data/decode_split_kv_h200.json: 34 GB/s each). Little's law with 64 KiB in flight
#: over chapter 02's 338 ns would allow 190 GB/s; a program gets far less, because it does not keep both
#: tiles in flight all the time. The split model scales it with the tiles in flight. Not yet measured for
#: this kernel (bench/NOTES.md "decode").
PROGRAM_BYTES_PER_S = 34e9


def sm_count(device) -> int:
    """Streaming multiprocessors of ``device`` (asked once per device); 132 (an H200) on the CPU."""
    device = torch.device(device)
    if device.type != "cuda":
        return 132
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index not in _SM_COUNT:
        _SM_COUNT[index] = torch.cuda.get_device_properties(index).multi_processor_count
    return _SM_COUNT[index]


def resident_programs(block_n: int, num_warps: int, num_stages: int, head_dim: int,
                      bytes_per_element: int = 2) -> int:
    """Split programs an H100/H200 SM holds at once, estimated: shared memory for ``num_stages - 1``
    K and V tiles in flight plus 8 KiB, 128 registers a thread, and the SM's warp and block limits."""
    from gpuperf.hardware import get_sm_limits

    lim = get_sm_limits(_MODEL_DEVICE)
    smem = max(1, num_stages - 1) * 2 * block_n * head_dim * bytes_per_element + 8192
    by_smem = lim.shared_memory_per_sm_bytes // (smem + lim.reserved_shared_memory_per_block_bytes)
    by_regs = lim.registers_per_sm // (num_warps * lim.warp_size * 128)
    return max(1, min(by_smem, by_regs, lim.max_warps_per_sm // num_warps, lim.max_blocks_per_sm))


def choose_splits(batch: int, kv_heads: int, row_blocks: int, max_seqlen: int, *, sm_count: int,
                  config: tuple[int, int, int] = (64, 4, 3), head_dim: int = 128,
                  bytes_per_element: int = 2) -> int:
    """Splits per (sequence, KV head, row block): :func:`gpuperf.decoding.choose_n_splits` with this
    launch's tile (``2 BLOCK_N d b`` bytes of K and V), the programs an SM holds
    (:func:`resident_programs`), the device's SM count, the H200's bandwidth and one program's rate
    (:data:`PROGRAM_BYTES_PER_S`, with ``num_stages - 1`` tiles in flight)."""
    from gpuperf.decoding import choose_n_splits
    from gpuperf.hardware import get_accelerator

    block_n, num_warps, num_stages = config
    tile_bytes = 2.0 * block_n * head_dim * bytes_per_element
    tiles = -(-max_seqlen // block_n)
    return choose_n_splits(batch * kv_heads * row_blocks, max_seqlen, sm_count=sm_count,
                           max_splits=max(1, min(MAX_SPLITS, tiles)), block_n=block_n, tile_bytes=tile_bytes,
                           programs_per_sm=resident_programs(block_n, num_warps, num_stages, head_dim,
                                                             bytes_per_element),
                           hbm_bytes_per_s=get_accelerator(_MODEL_DEVICE).hbm_bytes_per_s,
                           program_bytes_per_s=PROGRAM_BYTES_PER_S * max(1, num_stages - 1) / 2
                           * tile_bytes / 32768.0)


# --------------------------------------------------------------------------------------------------------
# The wrapper.
# --------------------------------------------------------------------------------------------------------


def decode_attention(q, k_cache, v_cache, cache_seqlens, *, block_table=None, layout: str = "bnhd",
                     causal: bool = False, softmax_scale: float | None = None, n_splits: int | None = None,
                     return_lse: bool = False, check_indices: bool = True, config=None,
                     merge: str = "fused"):
    """Attention of ``q``'s N_q rows per sequence against the cached keys and values (module docstring
    for shapes and semantics). ``n_splits``: splits of each sequence's keys (None: :func:`choose_splits`;
    1: no split and no merge). ``check_indices``: read a tensor ``cache_seqlens`` and the used entries of
    ``block_table`` on the host to check them (a device-to-host copy, which waits for the GPU; pass False
    where the caller vouches for them; an int ``cache_seqlens`` is checked on the host without it).
    ``config``: ``(BLOCK_N, num_warps, num_stages)`` overrides :data:`GPU_CONFIGS`. ``merge`` (with
    S > 1): ``"fused"``, the last split program of each (sequence, KV head) to finish merges the S states
    (one launch; a per-stream counter buffer says which program is last), or ``"kernel"``, a second launch,
    :func:`_merge_kernel`. Bad arguments raise ``ValueError`` naming them.

    Host time: a call that reads nothing on the device (``check_indices=False``, or an int
    ``cache_seqlens`` with a contiguous cache) and matches an earlier call in everything but the tensors'
    contents (shapes, strides, dtypes, 16-byte alignment, the other arguments) reuses that call's checks
    and launches (its *plan*)."""
    key = _plan_key(q, k_cache, v_cache, cache_seqlens, block_table, layout, causal, softmax_scale, n_splits,
                    return_lse, check_indices, config, merge)
    plan = _PLANS.get(key) if key is not None else None
    if plan is not None:
        return _run_plan(plan, q, k_cache, v_cache, cache_seqlens, block_table)
    paged = block_table is not None
    _check_tensors(q, k_cache, v_cache, layout, paged)
    b_, n_q, h_q, d = q.shape
    if paged:
        _, page_size, h_kv, _ = k_cache.shape
    else:
        h_kv = k_cache.shape[2] if layout == "bnhd" else k_cache.shape[1]
        page_size = k_cache.shape[1] if layout == "bnhd" else k_cache.shape[2]  # N_max
    if h_q % h_kv != 0:
        raise ValueError(f"q's heads H_q = {h_q} must be a multiple of the cache's H_kv = {h_kv} "
                         f"(grouped-query attention)")
    seqlens = _seqlens_tensor(cache_seqlens, b_, q.device)
    if paged:
        _check_block_table(block_table, b_, q.device)
    capacity = block_table.shape[1] * page_size if paged else page_size
    max_seqlen = capacity  # without reading the lengths, the split count plans for a full cache
    if _is_int(cache_seqlens):
        max_seqlen = _check_length_range(int(cache_seqlens), int(cache_seqlens), capacity, paged, n_q, causal)
    if check_indices and (paged or not _is_int(cache_seqlens)):
        max_seqlen = _check_values(seqlens, block_table, capacity, page_size, k_cache.shape[0], n_q, causal)
    if b_ * h_kv > 65535:  # grid axis 1 of the split kernel
        raise ValueError(f"batch x KV heads must be at most 65535 (a grid axis), got {b_} x {h_kv}")
    group = h_q // h_kv
    rows = group * n_q
    block_m = max(16, min(MAX_BLOCK_M, triton.next_power_of_2(rows)))
    row_blocks = triton.cdiv(rows, block_m)
    if config is None:
        config = (INTERPRETER_BLOCK_N, 4, 1) if INTERPRETED else GPU_CONFIGS[d]
    block_n, num_warps, num_stages = config
    scale = _default_scale(d, softmax_scale)
    if n_splits is None:
        n_splits = choose_splits(b_, h_kv, row_blocks, max_seqlen, sm_count=sm_count(q.device),
                                 config=config, head_dim=d, bytes_per_element=q.element_size())
    elif isinstance(n_splits, bool) or not isinstance(n_splits, numbers.Integral) or not (
            1 <= n_splits <= MAX_SPLITS):
        raise ValueError(f"n_splits must be an int in 1..{MAX_SPLITS} or None, got {n_splits!r}")
    if paged:
        sk, sv, sbt = _paged_strides(k_cache), _paged_strides(v_cache), block_table.stride(0)
    else:
        sk, sv, sbt = _cache_strides(k_cache, layout), _cache_strides(v_cache, layout), 0
    if merge not in MERGES:
        raise ValueError(f"merge must be one of {MERGES}, got {merge!r}")
    split = n_splits > 1
    fused = split and merge == "fused"
    out_shapes = ((b_, n_q, h_q, d), (b_, n_q, h_q), (b_ * h_kv * rows, n_splits, d) if split else None)
    o = torch.empty(out_shapes[0], dtype=q.dtype, device=q.device)
    # the kernels' trailing arguments (everything but the tensors), fixed for this plan
    split_rest = (*q.stride()[:3], *sk, *sv, sbt, *o.stride()[:3], h_kv, n_q, rows, scale * _LOG2E, group, d,
                  block_m, block_n, paged, page_size if paged else 1, paged and page_size % block_n == 0,
                  bool(causal), split, fused)
    merge_rest = (*o.stride()[:3], h_kv, n_q, rows, n_splits, group, d, triton.next_power_of_2(n_splits))
    plan = [out_shapes, q.dtype, seqlens if _is_int(cache_seqlens) else None,
            b_ * h_kv * row_blocks if fused else 0,
            [_split_kernel, (n_splits, b_ * h_kv, row_blocks), split_rest,
             (("num_warps", num_warps), ("num_stages", num_stages)), None],
            [_merge_kernel, (b_ * h_kv * rows, 1, 1), merge_rest, (("num_warps", 4 if d >= 128 else 2),), None]
            if split and not fused else None, return_lse]
    result = _run_plan(plan, q, k_cache, v_cache, seqlens, block_table, o)
    if key is not None:
        if len(_PLANS) >= 1024:
            _PLANS.clear()
        _PLANS[key] = plan
    return result


#: Calls already checked and planned (:func:`_plan_key` -> plan): their launches, ready to repeat.
_PLANS: dict = {}


def _run_plan(plan, q, k_cache, v_cache, cache_seqlens, block_table, o=None):
    """Allocate the outputs and launch the plan's kernels (through a cached launcher after the first)."""
    out_shapes, dtype, seqlens, n_counters, split_launch, merge_launch, return_lse = plan
    device = q.device
    if seqlens is None:
        seqlens = cache_seqlens
    if o is None:
        o = torch.empty(out_shapes[0], dtype=dtype, device=device)
    lse = torch.empty(out_shapes[1], dtype=torch.float32, device=device)
    if out_shapes[2] is not None:
        mid_o = torch.empty(out_shapes[2], dtype=torch.float32, device=device)
        mid_lse = torch.empty(out_shapes[2][:2], dtype=torch.float32, device=device)
    else:
        mid_o = mid_lse = lse
    bt = block_table if block_table is not None else seqlens
    counter = _counters(device, n_counters) if n_counters else lse
    _launch_step(split_launch, (q, k_cache, v_cache, bt, seqlens, o, lse, mid_o, mid_lse, counter), device)
    if merge_launch is not None:
        _launch_step(merge_launch, (mid_o, mid_lse, o, lse), device)
    return (o, lse) if return_lse else o


#: Arrival counters of the fused merge, by (device, stream): zeros, and back to zero after every launch.
_COUNTERS: dict = {}


def _counters(device, n: int):
    """At least ``n`` int32 counters for launches on the current stream of ``device`` (two streams never
    share a buffer, so calls on different streams do not race on it)."""
    stream = _launch.current_stream(device.index) if device.type == "cuda" else 0
    key = (device.type, device.index, stream)
    buf = _COUNTERS.get(key)
    if buf is None or buf.numel() < n:
        buf = _COUNTERS[key] = torch.zeros(max(n, 1024), dtype=torch.int32, device=device)
    return buf


def _launch_step(step, tensors, device) -> None:
    """``step`` = [kernel, grid, trailing arguments, launch options, launcher or None]: launch it, and keep
    the launcher the first launch returns (None under the interpreter)."""
    kernel, grid, rest, options, launcher = step
    args = (*tensors, *rest)
    if launcher is not None:
        launcher(grid, _launch.current_stream(device.index), args)
    else:
        step[4] = _launch.launcher(kernel, grid, args, options)


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _plan_key(q, k, v, cache_seqlens, block_table, layout, causal, softmax_scale, n_splits, return_lse,
              check_indices, config, merge):
    """Everything the checks and the launch read from the arguments, for a call that reads nothing on the
    device; None for a call that must take the full path."""
    tensors = (q, k, v) if block_table is None else (q, k, v, block_table)
    if not all(t.__class__ is torch.Tensor for t in tensors):
        return None
    int_len = _is_int(cache_seqlens)
    if check_indices and not (int_len and block_table is None):
        return None
    if not int_len and cache_seqlens.__class__ is not torch.Tensor:
        return None
    lengths = int(cache_seqlens) if int_len else (cache_seqlens.shape, cache_seqlens.dtype,
                                                  cache_seqlens.device, cache_seqlens.is_contiguous())
    return (*((t.shape, t.stride(), t.dtype, t.device, t.data_ptr() % 16 == 0) for t in tensors), lengths,
            layout, causal, softmax_scale, n_splits, return_lse, check_indices, config, merge)


# --------------------------------------------------------------------------------------------------------
# Checks.
# --------------------------------------------------------------------------------------------------------

def _lengths_list(cache_seqlens, batch: int) -> list[int]:
    if isinstance(cache_seqlens, numbers.Integral) and not isinstance(cache_seqlens, bool):
        return [int(cache_seqlens)] * batch
    return [int(n) for n in torch.as_tensor(cache_seqlens).reshape(-1).tolist()]


def _check_tensors(q, k_cache, v_cache, layout, paged) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    what = ("(num_pages, page_size, H_kv, d)" if paged else
            "(B, N_max, H_kv, d)" if layout == "bnhd" else "(B, H_kv, N_max, d)")
    for name, t, shape in (("q", q, "(B, N_q, H_q, d)"), ("k_cache", k_cache, what), ("v_cache", v_cache, what)):
        _checks.check_is_tensor(name, t)
        _checks.check_ndim(name, t, 4, f"must have 4 dims {shape}")
        _checks.check_dtype(name, t, DTYPE_NAMES)
        _checks.check_device(name, t, INTERPRETED, cpu_dtypes="fp16")  # no fp32 cache (DTYPE_NAMES)
        if t.stride(3) != 1:
            raise ValueError(f"{name} must have unit stride in its last dim (d), got strides {tuple(t.stride())}")
    for name, t in (("k_cache", k_cache), ("v_cache", v_cache)):
        _checks.check_same_dtype_and_device(name, t, "q", q)
    if v_cache.shape != k_cache.shape:
        raise ValueError(f"v_cache.shape must equal k_cache.shape {tuple(k_cache.shape)}, got {tuple(v_cache.shape)}")
    d = q.shape[3]
    if d not in SUPPORTED_HEAD_DIMS:
        raise ValueError(f"q.shape[3] (head_dim) must be one of {SUPPORTED_HEAD_DIMS}, got {d}")
    if k_cache.shape[3] != d:
        raise ValueError(f"k_cache.shape[3] (head_dim) must equal q's {d}, got {k_cache.shape[3]}")
    if not 1 <= q.shape[1] <= MAX_QUERY_ROWS:
        raise ValueError(f"q.shape[1] (query rows per sequence) must be in 1..{MAX_QUERY_ROWS}, got {q.shape[1]}")
    if q.shape[0] < 1 or q.shape[2] < 1:
        raise ValueError(f"q must have at least one sequence and one head, got shape {tuple(q.shape)}")
    if not paged and k_cache.shape[0] != q.shape[0]:
        raise ValueError(f"k_cache.shape[0] (batch) must equal q's B = {q.shape[0]}, got {k_cache.shape[0]}")
    if min(k_cache.shape) < 1:
        raise ValueError(f"k_cache must not be empty, got shape {tuple(k_cache.shape)}")


def _seqlens_tensor(cache_seqlens, batch: int, device):
    if isinstance(cache_seqlens, numbers.Integral) and not isinstance(cache_seqlens, bool):
        return torch.full((batch,), int(cache_seqlens), dtype=torch.int32, device=device)
    _checks.check_is_tensor("cache_seqlens", cache_seqlens)
    if cache_seqlens.dtype != torch.int32 or cache_seqlens.shape != (batch,):
        raise ValueError(f"cache_seqlens must be an int or an int32 tensor of shape ({batch},), got "
                         f"{cache_seqlens.dtype} of shape {tuple(cache_seqlens.shape)}")
    if cache_seqlens.device != torch.device(device) and not (
            cache_seqlens.device.type == "cuda" and torch.device(device).type == "cuda"):
        raise ValueError(f"cache_seqlens must be on q's device {device}, got {cache_seqlens.device}")
    return cache_seqlens.contiguous()


def _check_block_table(block_table, batch: int, device) -> None:
    _checks.check_is_tensor("block_table", block_table)
    if block_table.dtype != torch.int32 or block_table.dim() != 2 or block_table.shape[0] != batch:
        raise ValueError(f"block_table must be an int32 tensor (B = {batch}, max_pages), got "
                         f"{block_table.dtype} of shape {tuple(block_table.shape)}")
    if block_table.device.type != torch.device(device).type or block_table.stride(1) != 1:
        raise ValueError(f"block_table must be on q's device with unit stride along pages, got device "
                         f"{block_table.device}, strides {tuple(block_table.stride())}")


def _check_values(seqlens, block_table, capacity: int, page_size: int, num_pages: int, n_q: int,
                  causal: bool) -> int:
    """Reads the lengths (and the used pages) on the host: 1 <= N_k[b] <= capacity, pages in range.
    Returns the longest length."""
    lengths = seqlens.cpu()
    low, high = int(lengths.min()), int(lengths.max())
    _check_length_range(low, high, capacity, block_table is not None, n_q, causal)
    if block_table is not None:
        table = block_table.cpu()
        used = torch.arange(table.shape[1])[None, :] < (lengths[:, None] + page_size - 1) // page_size
        pages = table[used]
        if pages.numel() and (int(pages.min()) < 0 or int(pages.max()) >= num_pages):
            bad = pages[(pages < 0) | (pages >= num_pages)][0]
            raise ValueError(f"block_table must hold page indices in 0..{num_pages - 1} (k_cache.shape[0]) "
                             f"for the pages cache_seqlens uses, got {int(bad)}")
    return high


def _check_length_range(low: int, high: int, capacity: int, paged: bool, n_q: int, causal: bool) -> int:
    """1 (N_q if causal) <= every length <= capacity; returns ``high``."""
    need = n_q if causal else 1
    if low < need:
        raise ValueError(f"cache_seqlens must be >= {need}{' (N_q, causal)' if causal else ''}, got {low}")
    if high > capacity:
        raise ValueError(f"cache_seqlens must be <= the cache's capacity {capacity} keys"
                         f"{' (max_pages x page_size)' if paged else ''}, got {high}")
    return high


def _paged_strides(cache):
    return cache.stride(0), cache.stride(1), cache.stride(2)  # page, row in page, head


def _cache_strides(cache, layout: str):
    if layout == "bnhd":
        return cache.stride(0), cache.stride(1), cache.stride(2)
    return cache.stride(0), cache.stride(2), cache.stride(1)


__all__ = ["DTYPE_NAMES", "GPU_CONFIGS", "INTERPRETED", "LAYOUTS", "MAX_QUERY_ROWS", "MAX_SPLITS",
           "PROGRAM_BYTES_PER_S", "SUPPORTED_HEAD_DIMS", "choose_splits", "decode_attention",
           "decode_reference", "gather_cache", "resident_programs",
           "sm_count"]
