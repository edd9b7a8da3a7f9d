"""FlashAttention backward in Gluon for Hopper: K and V held in shared memory, Q and dO streamed by TMA.

Why this kernel exists. The Triton backward (:mod:`gpuperf.kernels.flash_attention_bwd`) leaves the
compiler to place every tile: on the H200 its dK/dV program holds 255 registers and spills, and reaches
0.65-0.89 of cuDNN's backward (fp16, d = 64 and 128, N = 1024 to 16384; 0.66-0.75 at d = 128; chapter 15).
Gluon lets the kernel say where each tile lives:
here the key block's K and V sit in shared memory for the whole program, blocks of Q and dO arrive through
TMA into a ring of shared-memory slots, each guarded by an mbarrier, and every product is one
``warpgroup_mma`` (wgmma) whose operands are named explicitly (shared memory, or registers for P and dS).

One program per (key block of ``BLOCK_N`` keys, batch-head). It walks the query blocks that see its keys
(with a causal mask, only those at or below the diagonal) and, per block of ``BLOCK_M`` queries, computes
in the transposed orientation (keys are the rows, so the accumulators dK, dV and the scores share one
layout)::

    S^T  = K Q^T                       wgmma, both operands in shared memory
    P^T  = exp2(S^T scale log2 e - L log2 e)     (masked entries 0)
    dV  += P^T dO                      wgmma, P^T from registers
    dP^T = V dO^T                      wgmma
    dS^T = P^T (dP^T - D)
    dK  += dS^T Q                      wgmma, dS^T from registers
    dQ_i += dS K                       wgmma from dS^T stored to shared memory, added to an fp32 buffer

``D = rowsum(dO o O)`` and the zeroed fp32 dQ buffer come from a small Triton kernel before, and another
scales dQ and casts it after (as in :mod:`gpuperf.kernels.flash_attention_bwd`, which dispatches here).

Two schedules (a launch option): *plain*, where every warp both fills the ring (``STAGES - 1`` blocks ahead of the block being computed) and multiplies, and
*warp-specialised* (``gl.warp_specialize``), where one producer warp at 24 registers fills each slot as
soon as the consumers hand it back through its "empty" mbarrier and eight consumer warps, at 240 registers
(``setmaxnreg``), do the products. Optionally dQ is computed transposed, ``dQ_i^T = K_j^T dS_i^T``, which
lets the query block shrink to 32 rows at d = 128 (dS K needs 64 for a warpgroup's wgmma), halving every
per-block tile. :func:`emulate` replays the kernel's indexing and masks in float64 on the CPU.

Status (2026-12-04): compiled for sm_90 on a machine without a GPU (Triton 3.9); never run on an H200.
:data:`gpuperf.kernels.flash_attention_bwd.GLUON_CASES` is empty, so the library does not dispatch here.

Tensors are addressed as 2-D views ``[B H N, d]``; a block that runs past the end of a head reads rows of
the next one (or TMA's zeros past the tensor), which the masks turn into zero probabilities, and stores and
atomic adds are masked by row. The kernel needs ``triton.experimental.gluon`` (written for Triton 3.6 on
the H200, compiled on the CPU with Triton 3.9; :data:`_tma_load` and :data:`_cta_barrier` take either
version's name) and a Hopper GPU: :func:`available` says whether this process can run it.
"""

from __future__ import annotations

import inspect
import math

import torch
import triton
import triton.language as tl

from gpuperf.kernels.gluon_softmax import Availability, available as _gluon_available

try:  # Gluon: only where this Triton has it; the module imports without it
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import (
        fence_async_shared, mbarrier, tma, warpgroup_mma, warpgroup_mma_wait)
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    _IMPORT_ERROR = ""
except Exception as exc:  # noqa: BLE001 - any failure means "no Gluon here", with the reason kept
    gluon = gl = fence_async_shared = mbarrier = tma = TensorDescriptor = None
    warpgroup_mma = warpgroup_mma_wait = None
    _IMPORT_ERROR = f"{type(exc).__name__}: {exc}"

if gl is not None:
    # The same operations under Triton 3.6's names (the H200) and later ones (3.9 here).
    _tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
    _cta_barrier = getattr(gl, "barrier", None) or gl.thread_barrier
    # warp_specialize takes [(function, arguments), ...] in later Tritons, and (default arguments,
    # default function, worker arguments, worker functions, ...) in earlier ones.
    try:
        _WS_LIST_API = "functions_and_args" in inspect.signature(gl.warp_specialize).parameters
    except (TypeError, ValueError):
        _WS_LIST_API = True

#: The schedules this module implements (the module docstring).
SCHEDULE = "TMA ring of Q/dO blocks, wgmma products, fp32 atomic dQ; plain or warp-specialised"

HEAD_DIMS = (64, 128)
DTYPES = (torch.float16, torch.bfloat16)

#: (BLOCK_N keys, BLOCK_M queries, STAGES ring slots, consumer warps, warp-specialised, dQ computed
#: transposed, L and D loaded one value a thread) per head dimension.
CONFIGS = {64: (128, 64, 2, 8, False, False, False), 128: (128, 64, 2, 8, False, False, False)}

#: Registers per thread of the producer warp in the warp-specialised schedule (the least Hopper grants),
#: and the launch's register limit: (8 consumer warps + 4, the producer's warp rounded up to a
#: warpgroup) x 168 x 32 fits the SM's 65536 registers and leaves the consumers 240 each.
PRODUCER_REGS = 24
SPECIALISED_MAXNREG = 168

_LOG2E = 1.4426950408889634


def query_block_ranges(start_n: int, n_q: int, n_k: int, block_m: int, block_n: int,
                       causal: bool) -> tuple[range, range, range]:
    """The query blocks the program of the key block starting at ``start_n`` visits, as the kernel splits
    them: (masked, unmasked, masked) ranges of block indices. The first crosses the causal diagonal (or,
    for a key block past ``n_k``'s end, is everything), the second holds whole blocks every key of which
    every query sees, the third the ragged last block. The kernel computes the same bounds."""
    n_blocks = -(-n_q // block_m)
    full = n_q // block_m
    first = mid = 0
    if causal:
        first = min(start_n // block_m, n_blocks)
        mid = min((start_n + block_n - 1 + block_m - 1) // block_m, n_blocks)
    if start_n + block_n > n_k:
        mid = n_blocks
    return range(first, mid), range(mid, max(full, mid)), range(max(full, mid), n_blocks)


#: Illustrative durations (arbitrary units) of one query block's steps in :func:`schedule_events`: the
#: TMA load of Q_i and dO_i, the five products, the exponentials (overlapping dP^T's product), dS, the
#: dQ reductions.
STEP_UNITS = {"load": 4.0, "S": 1.0, "exp": 1.5, "dP": 1.0, "dV": 1.0, "dS": 1.0, "dK": 1.0, "dQ": 1.0,
              "red": 1.0}


def schedule_events(n_blocks: int = 4, stages: int = 2, units: dict | None = None) -> list[tuple]:
    """The warp-specialised schedule of one program as events ``(lane, label, block, start, end)``. Lanes
    ``"K V"``: the TMA load of the program's K_j and V_j (block -1), which every product waits for;
    ``"slot s"``: the TMA load of Q_i and dO_i into ring slot ``s = i % stages``, issued by the producer
    as soon as the consumers hand the slot back (after dK of block ``i - stages``, the last product that
    reads it); ``"tensor cores"``: the consumers' wgmma products; ``"other units"``: exponentials, dS and
    the dQ reductions. The consumers start block i when its load has landed. Durations from ``units``
    (default :data:`STEP_UNITS`): a drawing of the order of events, not a performance model."""
    if n_blocks < 1 or stages < 1:
        raise ValueError(f"n_blocks and stages must be >= 1, got {n_blocks}, {stages}")
    u = {**STEP_UNITS, **(units or {})}
    events = [("K V", "K V", -1, 0.0, u["load"])]
    freed = {}  # block -> when the consumers hand its slot back
    t = u["load"]  # the consumers' clock: nothing starts before K_j and V_j have landed
    for i in range(n_blocks):
        issue = freed[i - stages] if i >= stages else 0.1 * i
        landed = issue + u["load"]
        events.append((f"slot {i % stages}", f"Q{i} dO{i}", i, issue, landed))
        t = max(t, landed)
        events.append(("tensor cores", "S", i, t, t + u["S"]))
        t += u["S"]
        events.append(("tensor cores", "dP", i, t, t + u["dP"]))  # while the exponentials run
        events.append(("other units", "exp", i, t, t + u["exp"]))
        t += max(u["dP"], u["exp"])
        events.append(("tensor cores", "dV", i, t, t + u["dV"]))
        events.append(("other units", "dS", i, t, t + u["dS"]))
        t += max(u["dV"], u["dS"])
        events.append(("tensor cores", "dK", i, t, t + u["dK"]))
        t += u["dK"]
        freed[i] = t
        events.append(("tensor cores", "dQ", i, t, t + u["dQ"]))
        t += u["dQ"]
        events.append(("other units", "red", i, t, t + u["red"]))
        t += u["red"]
    return events


def emulate(q, k, v, o, lse, do, causal: bool, softmax_scale: float | None = None, *, block_n: int = 128,
            block_m: int = 64, operand_dtype: torch.dtype | None = None):
    """The kernel's arithmetic on the CPU, block by block as the programs do it (a check of its indexing
    and masks, not of the Gluon code): 2-D views ``[B H N, d]`` read in blocks that may run into the next
    head's rows or past the end (zeros, as TMA fills them), the query blocks of
    :func:`query_block_ranges`, masks only in the masked ranges, ``P^T = exp2(S^T scale log2 e - L log2 e)``,
    dQ summed over key blocks into a flat buffer by rows below ``n_q``. With ``operand_dtype`` the operands
    the kernel rounds (P^T, dS^T) are rounded to it. Returns ``(dq, dk, dv)`` in float64."""
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    scale = 1.0 / math.sqrt(d) if softmax_scale is None else float(softmax_scale)
    f64 = torch.float64
    qf, kf, vf, dof = (t.detach().to("cpu", f64).reshape(-1, d) for t in (q, k, v, do))
    lse2 = lse.detach().to("cpu", f64).reshape(-1) * _LOG2E
    delta = (o.detach().to("cpu", f64) * do.detach().to("cpu", f64)).sum(-1).reshape(-1)
    dq = torch.zeros(b * h * n_q, d, dtype=f64)
    dk = torch.zeros(b * h * n_k, d, dtype=f64)
    dv = torch.zeros(b * h * n_k, d, dtype=f64)

    def rows(t, start, count):  # a TMA block: zeros past the end of the view
        out = torch.zeros(count, t.shape[1], dtype=f64)
        got = t[start:start + count]
        out[:got.shape[0]] = got
        return out

    def vec(t, start, count, valid):  # L or D of the block's queries, 0 where masked off
        out = torch.zeros(count, dtype=f64)
        take = min(valid, count)
        if take > 0:
            out[:take] = t[start:start + take]
        return out

    def rounded(x):
        return x.to(operand_dtype).to(f64) if operand_dtype is not None else x

    for bh in range(b * h):
        row_q0, row_k0 = bh * n_q, bh * n_k
        for start_n in range(0, n_k, block_n):
            k_j, v_j = rows(kf, row_k0 + start_n, block_n), rows(vf, row_k0 + start_n, block_n)
            acc_k = torch.zeros(block_n, d, dtype=f64)
            acc_v = torch.zeros(block_n, d, dtype=f64)
            offs_n = start_n + torch.arange(block_n)
            ranges = query_block_ranges(start_n, n_q, n_k, block_m, block_n, causal)
            for masked, blocks in zip((True, False, True), ranges):
                for block in blocks:
                    start_m = block * block_m
                    q_i = rows(qf, row_q0 + start_m, block_m)
                    do_i = rows(dof, row_q0 + start_m, block_m)
                    offs_m = start_m + torch.arange(block_m)
                    l_i = vec(lse2, row_q0 + start_m, block_m, n_q - start_m)
                    d_i = vec(delta, row_q0 + start_m, block_m, n_q - start_m)
                    p_t = torch.exp2((k_j @ q_i.T) * scale * _LOG2E - l_i[None, :])
                    if masked:
                        keep = (offs_m[None, :] < n_q) & (offs_n[:, None] < n_k)
                        if causal:
                            keep &= offs_m[None, :] >= offs_n[:, None]
                        p_t = torch.where(keep, p_t, torch.zeros((), dtype=f64))
                    acc_v += rounded(p_t) @ do_i
                    ds_t = rounded(p_t * (v_j @ do_i.T - d_i[None, :]))
                    acc_k += ds_t @ q_i
                    ok = offs_m < n_q
                    dq[row_q0 + offs_m[ok]] += (ds_t.T @ k_j)[ok]
            keep_rows = offs_n < n_k
            dk[row_k0 + offs_n[keep_rows]] = acc_k[keep_rows] * scale
            dv[row_k0 + offs_n[keep_rows]] = acc_v[keep_rows]
    shape_q, shape_k = (b, h, n_q, d), (b, h, n_k, d)
    return dq.reshape(shape_q) * scale, dk.reshape(shape_k), dv.reshape(shape_k)


def available(device=None) -> Availability:
    """Can :func:`gluon_attention_backward` run here? Gluon, compiled kernels, a Hopper GPU."""
    if gl is None:
        return Availability(False, f"triton.experimental.gluon does not import ({_IMPORT_ERROR})")
    return _gluon_available(device)


def usable_for(q, k, v, do) -> Availability:
    """:func:`available` for ``q``'s device, and the inputs within what the kernel takes (fp16/bf16, d in
    :data:`HEAD_DIMS`, contiguous, 16-byte aligned; any N_q and N_k); never raises."""
    status = available(q.device) if q.is_cuda else Availability(False, "q is not a CUDA tensor")
    if not status:
        return status
    if q.dtype not in DTYPES:
        return Availability(False, f"dtype {q.dtype}: the Gluon kernel takes fp16 and bf16")
    if q.shape[-1] not in HEAD_DIMS:
        return Availability(False, f"head_dim {q.shape[-1]} not in {HEAD_DIMS}")
    for t in (q, k, v, do):
        if not t.is_contiguous() or t.data_ptr() % 16:
            return Availability(False, "inputs must be contiguous and 16-byte aligned (TMA)")
    return Availability(True, "")


# ---- the kernel ------------------------------------------------------------------------------------------

if gl is not None:

    @gluon.jit
    def _issue_qdo(q_desc, do_desc, q_ring, do_ring, bars, t, first_block, n_blocks, row_q0,
                   BLOCK_M: gl.constexpr, STAGES: gl.constexpr):
        # Request the Q and dO blocks of iteration t (query block first_block + t) into slot t % STAGES;
        # nothing past the last block.
        block = first_block + t
        live = block < n_blocks
        s = t % STAGES
        bar = bars.index(s)
        mbarrier.expect(bar, q_desc.block_type.nbytes + do_desc.block_type.nbytes, pred=live)
        _tma_load(q_desc, [row_q0 + block * BLOCK_M, 0], bar, q_ring.index(s), pred=live)
        _tma_load(do_desc, [row_q0 + block * BLOCK_M, 0], bar, do_ring.index(s), pred=live)

    @gluon.jit
    def _row_values(ptr, row_q0, offs_m, start_m, n_q, BLOCK_M: gl.constexpr, LSE_VEC: gl.constexpr,
                    WARPS: gl.constexpr, s_layout: gl.constexpr):
        # L or D of the block's queries, as the columns of S^T's layout. With LSE_VEC, loaded one value per
        # thread and moved into that layout through shared memory (fewer addresses held in registers).
        if LSE_VEC:
            offs_v = start_m + gl.arange(0, BLOCK_M, layout=gl.BlockedLayout([1], [32], [WARPS], [0]))
            x = gl.load(ptr + row_q0 + offs_v, mask=offs_v < n_q, other=0.0)
            x = gl.convert_layout(x, gl.SliceLayout(0, s_layout))
        else:
            x = gl.load(ptr + row_q0 + offs_m, mask=offs_m < n_q, other=0.0)
        return x

    @gluon.jit
    def _query_blocks(q_desc, do_desc, q_ring, do_ring, bars, empty, k_smem, v_smem, ds_smem, lse_ptr,
                      delta_ptr, dq_ptr, dk, dv, t, lo, hi, first_block, n_blocks, row_q0, start_n, n_q,
                      n_k, qk_scale_log2, HEAD_DIM: gl.constexpr, BLOCK_M: gl.constexpr,
                      BLOCK_N: gl.constexpr, STAGES: gl.constexpr, MASK: gl.constexpr,
                      CAUSAL: gl.constexpr, SPECIALISE: gl.constexpr, s_layout: gl.constexpr,
                      dkv_layout: gl.constexpr, dq_layout: gl.constexpr, DQ_T: gl.constexpr,
                      LSE_VEC: gl.constexpr, WARPS: gl.constexpr):
        # Query blocks lo..hi-1 (iterations t, t + 1, ...): dK and dV accumulate, dQ goes out by atomics.
        # Without SPECIALISE these warps also fill the ring; with it, a producer partition does, and
        # these warps hand each slot back by arriving on its `empty` barrier.
        LOG2E: gl.constexpr = 1.4426950408889634
        dtype: gl.constexpr = q_desc.dtype
        op_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=dkv_layout, k_width=2)
        offs_n = start_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, s_layout))
        if DQ_T:  # dQ_i^T = K^T dS^T: the head dimension along the product's rows
            dq_rows = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(0, dq_layout))
            dq_cols = gl.arange(0, HEAD_DIM, layout=gl.SliceLayout(1, dq_layout))
            dq_zero = gl.zeros([HEAD_DIM, BLOCK_M], gl.float32, layout=dq_layout)
        else:  # dQ_i = dS K
            dq_rows = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, dq_layout))
            dq_cols = gl.arange(0, HEAD_DIM, layout=gl.SliceLayout(0, dq_layout))
            dq_zero = gl.zeros([BLOCK_M, HEAD_DIM], gl.float32, layout=dq_layout)
        dq_base = dq_ptr + row_q0.to(gl.int64) * HEAD_DIM  # this head's fp32 dQ rows
        s_zero = gl.zeros([BLOCK_N, BLOCK_M], gl.float32, layout=s_layout)
        for block in range(lo, hi):
            # listing: gluon-bwd-step
            if not SPECIALISE:  # the block STAGES - 1 ahead, into the slot freed last iteration
                _issue_qdo(q_desc, do_desc, q_ring, do_ring, bars, t + STAGES - 1,
                           first_block, n_blocks, row_q0, BLOCK_M, STAGES)
            s = t % STAGES
            start_m = block * BLOCK_M
            offs_m = start_m + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(0, s_layout))
            mbarrier.wait(bars.index(s), (t // STAGES) & 1)  # Q_i and dO_i have landed
            q_s = q_ring.index(s)
            do_s = do_ring.index(s)
            s_t = warpgroup_mma(k_smem, q_s.permute((1, 0)), s_zero, use_acc=False, is_async=True)
            lse2 = _row_values(lse_ptr, row_q0, offs_m, start_m, n_q, BLOCK_M, LSE_VEC, WARPS,
                               s_layout) * LOG2E
            s_t = warpgroup_mma_wait(num_outstanding=0, deps=(s_t,))
            # dP^T's product runs on the tensor cores while the exponentials run
            # on the SM's other units.
            dp_t = warpgroup_mma(v_smem, do_s.permute((1, 0)), s_zero, use_acc=False, is_async=True)
            p_t = gl.exp2(s_t * qk_scale_log2 - gl.expand_dims(lse2, 0))
            if MASK:
                keep = (gl.expand_dims(offs_m, 0) < n_q) & (gl.expand_dims(offs_n, 1) < n_k)
                if CAUSAL:
                    keep = keep & (gl.expand_dims(offs_m, 0) >= gl.expand_dims(offs_n, 1))
                p_t = gl.where(keep, p_t, 0.0)
            p_op = gl.convert_layout(p_t.to(dtype), op_layout)
            dp_t = warpgroup_mma_wait(num_outstanding=0, deps=(dp_t,))
            dv = warpgroup_mma(p_op, do_s, dv, is_async=True)
            delta = _row_values(delta_ptr, row_q0, offs_m, start_m, n_q, BLOCK_M, LSE_VEC, WARPS,
                                s_layout)
            ds_t = p_t * (dp_t - gl.expand_dims(delta, 0))
            ds16 = ds_t.to(dtype)
            ds_op = gl.convert_layout(ds16, op_layout)
            dk = warpgroup_mma(ds_op, q_s, dk, is_async=True)
            ds_smem.store(ds16)
            fence_async_shared()  # the generic-proxy stores, before wgmma (async proxy) reads them
            # dV and dK done, so the register operands P^T and dS^T (kept alive until here) can go.
            dk, dv, p_op, ds_op = warpgroup_mma_wait(num_outstanding=0, deps=(dk, dv, p_op, ds_op))
            _cta_barrier()  # every warpgroup's half of dS^T is in place, Q_i and dO_i are read
            if SPECIALISE:
                mbarrier.arrive(empty.index(s), count=1)  # the producer may refill slot s
            rows = start_m + dq_rows
            if DQ_T:
                dq = warpgroup_mma(k_smem.permute((1, 0)), ds_smem, dq_zero, use_acc=False,
                                   is_async=True)
                offsets = gl.expand_dims(rows * HEAD_DIM, 0) + gl.expand_dims(dq_cols, 1)
                ok = gl.expand_dims(rows < n_q, 0)
            else:
                dq = warpgroup_mma(ds_smem.permute((1, 0)), k_smem, dq_zero, use_acc=False,
                                   is_async=True)
                offsets = gl.expand_dims(rows * HEAD_DIM, 1) + gl.expand_dims(dq_cols, 0)
                ok = gl.expand_dims(rows < n_q, 1)
            dq = warpgroup_mma_wait(num_outstanding=0, deps=(dq,))
            gl.atomic_add(dq_base + offsets, dq, mask=ok, sem="relaxed")
            _cta_barrier()  # slot s and dS^T are free for the next loads and stores
            # end listing: gluon-bwd-step
            t += 1
        return dk, dv, t

    @gluon.jit
    def _producer(q_desc, do_desc, q_ring, do_ring, bars, empty, first, n_blocks, row_q0,
                  BLOCK_M: gl.constexpr, STAGES: gl.constexpr):
        # The warp-specialised schedule's producer (one warp): fill each slot as soon as it is handed back.
        # listing: gluon-bwd-producer
        for t in range(n_blocks - first):
            s = t % STAGES
            # Slot s handed back (passes at once the first time round).
            mbarrier.wait(empty.index(s), ((t // STAGES) & 1) ^ 1)
            block = first + t
            mbarrier.expect(bars.index(s), q_desc.block_type.nbytes + do_desc.block_type.nbytes)
            _tma_load(q_desc, [row_q0 + block * BLOCK_M, 0], bars.index(s), q_ring.index(s))
            _tma_load(do_desc, [row_q0 + block * BLOCK_M, 0], bars.index(s), do_ring.index(s))
        # end listing: gluon-bwd-producer

    @gluon.jit
    def _consumer(q_desc, do_desc, q_ring, do_ring, bars, empty, kv_bar, k_smem, v_smem, ds_smem, lse_ptr,
                  delta_ptr, dq_ptr, dk_ptr, dv_ptr, first, mid, full, n_blocks, row_q0, row_k0, start_n,
                  n_q, n_k, qk_scale_log2, softmax_scale, HEAD_DIM: gl.constexpr, BLOCK_M: gl.constexpr,
                  BLOCK_N: gl.constexpr, STAGES: gl.constexpr, CAUSAL: gl.constexpr,
                  SPECIALISE: gl.constexpr, WARPS: gl.constexpr, DQ_T: gl.constexpr,
                  LSE_VEC: gl.constexpr):
        # The products and the stores of dK and dV: the whole program without SPECIALISE, else the
        # default partition.
        dtype: gl.constexpr = q_desc.dtype
        s_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1],
                                                           instr_shape=[16, BLOCK_M, 16])
        dkv_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1],
                                                             instr_shape=[16, HEAD_DIM, 16])
        # dQ_i's accumulator: [BLOCK_M, d] over warps (4, WARPS / 4), or transposed [d, BLOCK_M]
        # (then shaped like S^T).
        dq_layout: gl.constexpr = gl.NVMMADistributedLayout(
            version=[3, 0], warps_per_cta=[WARPS, 1] if DQ_T else [4, WARPS // 4],
            instr_shape=[16, BLOCK_M, 16] if DQ_T else [16, HEAD_DIM // (WARPS // 4), 16])
        mbarrier.wait(kv_bar, 0)
        dk = gl.zeros([BLOCK_N, HEAD_DIM], gl.float32, layout=dkv_layout)
        dv = gl.zeros([BLOCK_N, HEAD_DIM], gl.float32, layout=dkv_layout)
        t = 0
        dk, dv, t = _query_blocks(q_desc, do_desc, q_ring, do_ring, bars, empty, k_smem, v_smem, ds_smem,
                                  lse_ptr, delta_ptr, dq_ptr, dk, dv, t, first, mid, first, n_blocks, row_q0,
                                  start_n, n_q, n_k, qk_scale_log2, HEAD_DIM, BLOCK_M, BLOCK_N, STAGES,
                                  True, CAUSAL, SPECIALISE, s_layout, dkv_layout, dq_layout, DQ_T, LSE_VEC, WARPS)
        dk, dv, t = _query_blocks(q_desc, do_desc, q_ring, do_ring, bars, empty, k_smem, v_smem, ds_smem,
                                  lse_ptr, delta_ptr, dq_ptr, dk, dv, t, mid, gl.maximum(full, mid), first,
                                  n_blocks, row_q0, start_n, n_q, n_k, qk_scale_log2, HEAD_DIM, BLOCK_M,
                                  BLOCK_N, STAGES, False, CAUSAL, SPECIALISE, s_layout, dkv_layout,
                                  dq_layout, DQ_T, LSE_VEC, WARPS)
        dk, dv, t = _query_blocks(q_desc, do_desc, q_ring, do_ring, bars, empty, k_smem, v_smem, ds_smem,
                                  lse_ptr, delta_ptr, dq_ptr, dk, dv, t, gl.maximum(full, mid), n_blocks,
                                  first, n_blocks, row_q0, start_n, n_q, n_k, qk_scale_log2, HEAD_DIM,
                                  BLOCK_M, BLOCK_N, STAGES, True, CAUSAL, SPECIALISE, s_layout, dkv_layout,
                                  dq_layout, DQ_T, LSE_VEC, WARPS)
        out_layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [WARPS, 1], [1, 0])
        rows = start_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, out_layout))
        cols = gl.arange(0, HEAD_DIM, layout=gl.SliceLayout(0, out_layout))
        offsets = gl.expand_dims(row_k0 + rows, 1).to(gl.int64) * HEAD_DIM + gl.expand_dims(cols, 0)
        ok = gl.expand_dims(rows < n_k, 1)
        gl.store(dk_ptr + offsets, gl.convert_layout((dk * softmax_scale).to(dtype), out_layout), mask=ok)
        gl.store(dv_ptr + offsets, gl.convert_layout(dv.to(dtype), out_layout), mask=ok)

    @gluon.jit
    def _bwd_kernel(q_desc, k_desc, v_desc, do_desc, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr,
                    n_q, n_k, qk_scale_log2, softmax_scale, HEAD_DIM: gl.constexpr,
                    BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, STAGES: gl.constexpr,
                    CAUSAL: gl.constexpr, WARPS: gl.constexpr, SPECIALISE: gl.constexpr,
                    WS_LIST_API: gl.constexpr, PRODUCER_REGS: gl.constexpr, DQ_T: gl.constexpr,
                    LSE_VEC: gl.constexpr, DS_SWIZZLE: gl.constexpr):
        # HBM bytes per program: K_j, V_j once (2 BLOCK_N d b); Q, dO, L, D of every visited query block;
        # dQ's fp32 partial sums added (4 BLOCK_M d per block); dK_j, dV_j written once.
        dtype: gl.constexpr = q_desc.dtype
        ds_layout: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=DS_SWIZZLE, element_bitwidth=16,
                                                       rank=2)
        pid_n = gl.program_id(0)
        bh = gl.program_id(1)
        start_n = pid_n * BLOCK_N
        row_q0 = bh * n_q  # this head's first row in the [B H N_q, d] view
        row_k0 = bh * n_k

        k_smem = gl.allocate_shared_memory(dtype, [BLOCK_N, HEAD_DIM], k_desc.layout)
        v_smem = gl.allocate_shared_memory(dtype, [BLOCK_N, HEAD_DIM], v_desc.layout)
        q_ring = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_M, HEAD_DIM], q_desc.layout)
        do_ring = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_M, HEAD_DIM], do_desc.layout)
        ds_smem = gl.allocate_shared_memory(dtype, [BLOCK_N, BLOCK_M], ds_layout)
        # Slot s's "full" barrier (TMA's bytes landed) is bars[s]; bars[STAGES] is K and V's; empty[s] is
        # slot s handed back (warp-specialised schedule only).
        bars = gl.allocate_shared_memory(gl.int64, [STAGES + 1, 1], mbarrier.MBarrierLayout())
        empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        for s in gl.static_range(STAGES + 1):
            mbarrier.init(bars.index(s), count=1)
        for s in gl.static_range(STAGES):
            mbarrier.init(empty.index(s), count=1)
        kv_bar = bars.index(STAGES)

        # The query blocks that see these keys: all, or (causal) those from the diagonal down. Blocks
        # [first, mid) cross the diagonal, [mid, full) are whole and unmasked, [full, n_blocks) the ragged
        # last one; a key block past n_k's end masks everything.
        n_blocks = (n_q + BLOCK_M - 1) // BLOCK_M
        full = n_q // BLOCK_M
        first = start_n * 0  # a tensor, like the causal case's (partition arguments must agree)
        mid = first
        if CAUSAL:
            first = gl.minimum(start_n // BLOCK_M, n_blocks)
            mid = gl.minimum((start_n + BLOCK_N - 1 + BLOCK_M - 1) // BLOCK_M, n_blocks)
        if start_n + BLOCK_N > n_k:
            mid = n_blocks

        mbarrier.expect(kv_bar, k_desc.block_type.nbytes + v_desc.block_type.nbytes)
        _tma_load(k_desc, [row_k0 + start_n, 0], kv_bar, k_smem)
        _tma_load(v_desc, [row_k0 + start_n, 0], kv_bar, v_smem)
        # (The argument tuples are written out in each call: a tuple held in a variable loses its
        # constexpr entries.)
        if SPECIALISE:
            if WS_LIST_API:  # Triton's later signature: [(function, arguments), ...]
                gl.warp_specialize([
                    (_consumer, (q_desc, do_desc, q_ring, do_ring, bars, empty, kv_bar, k_smem, v_smem, ds_smem,
                                 lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, first, mid, full, n_blocks,
                                 row_q0, row_k0, start_n, n_q, n_k, qk_scale_log2, softmax_scale, HEAD_DIM,
                                 BLOCK_M, BLOCK_N, STAGES, CAUSAL, SPECIALISE, WARPS, DQ_T, LSE_VEC)),
                    (_producer, (q_desc, do_desc, q_ring, do_ring, bars, empty, first, n_blocks, row_q0,
                                 BLOCK_M, STAGES))], [1], [PRODUCER_REGS])
            else:  # the earlier one: default arguments and function, then the workers'
                gl.warp_specialize(
                    (q_desc, do_desc, q_ring, do_ring, bars, empty, kv_bar, k_smem, v_smem, ds_smem, lse_ptr,
                     delta_ptr, dq_ptr, dk_ptr, dv_ptr, first, mid, full, n_blocks, row_q0, row_k0, start_n,
                     n_q, n_k, qk_scale_log2, softmax_scale, HEAD_DIM, BLOCK_M, BLOCK_N, STAGES, CAUSAL,
                     SPECIALISE, WARPS, DQ_T, LSE_VEC), _consumer,
                    (q_desc, do_desc, q_ring, do_ring, bars, empty, first, n_blocks, row_q0, BLOCK_M, STAGES),
                    [_producer], [1], [PRODUCER_REGS])
        else:
            for t0 in gl.static_range(STAGES - 1):
                _issue_qdo(q_desc, do_desc, q_ring, do_ring, bars, t0, first, n_blocks, row_q0, BLOCK_M,
                           STAGES)
            _consumer(q_desc, do_desc, q_ring, do_ring, bars, empty, kv_bar, k_smem, v_smem, ds_smem, lse_ptr,
                      delta_ptr, dq_ptr, dk_ptr, dv_ptr, first, mid, full, n_blocks, row_q0, row_k0, start_n,
                      n_q, n_k, qk_scale_log2, softmax_scale, HEAD_DIM, BLOCK_M, BLOCK_N, STAGES, CAUSAL,
                      SPECIALISE, WARPS, DQ_T, LSE_VEC)
        for s in gl.static_range(STAGES + 1):
            mbarrier.invalidate(bars.index(s))
        for s in gl.static_range(STAGES):
            mbarrier.invalidate(empty.index(s))


# ---- the Triton kernels around it ------------------------------------------------------------------------


@triton.jit
def _preprocess_kernel(o_ptr, do_ptr, delta_ptr, dq_acc_ptr, n_q, BLOCK_M: tl.constexpr,
                       HEAD_DIM: tl.constexpr):
    # D = rowsum(dO o O) per query row, and the fp32 dQ buffer zeroed. HBM: read 2 N_q d b, write
    # 4 N_q + 4 N_q d bytes per head.
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < n_q
    offsets = pid_bh * n_q * HEAD_DIM + offs_m[:, None] * HEAD_DIM + offs_d[None, :]
    o = tl.load(o_ptr + offsets, mask=row_ok[:, None], other=0.0).to(tl.float32)
    do = tl.load(do_ptr + offsets, mask=row_ok[:, None], other=0.0).to(tl.float32)
    tl.store(delta_ptr + pid_bh * n_q + offs_m, tl.sum(o * do, axis=1), mask=row_ok)
    tl.store(dq_acc_ptr + offsets, tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32), mask=row_ok[:, None])


@triton.jit
def _convert_kernel(dq_acc_ptr, dq_ptr, n_elements, softmax_scale, BLOCK: tl.constexpr):
    # dQ = scale x the fp32 sums, cast to the storage dtype. HBM: read 4, write b bytes per element.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n_elements
    acc = tl.load(dq_acc_ptr + offs, mask=ok, other=0.0)
    tl.store(dq_ptr + offs, (acc * softmax_scale).to(dq_ptr.dtype.element_ty), mask=ok)


# ---- host side -------------------------------------------------------------------------------------------

_GL_DTYPES = {}


def _shared_layout(block_shape, dtype):
    # 128-byte swizzle (the rows of every block are 128 bytes or more), 16-bit elements.
    return gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)


def make_descriptors(q, k, v, do, block_m: int, block_n: int):
    """TMA descriptors of the 2-D views ``[B H N, d]``: Q and dO in blocks of ``block_m`` rows, K and V in
    blocks of ``block_n``."""
    d = q.shape[-1]
    out = []
    for t, rows in ((q, block_m), (k, block_n), (v, block_n), (do, block_m)):
        flat = t.reshape(-1, d)
        out.append(TensorDescriptor(flat, list(flat.shape), [d, 1], [rows, d],
                                    _shared_layout([rows, d], t.dtype)))
    return out


def consumer_registers(maxnreg: int = SPECIALISED_MAXNREG, consumer_warps: int = 8,
                       producer_regs: int = PRODUCER_REGS) -> int:
    """Registers per thread the consumer warps of the warp-specialised launch can raise their limit to
    (``setmaxnreg``, a multiple of 8): the program's ``(consumer_warps + 4) x 32 x maxnreg`` registers
    (the one-warp producer occupies a warpgroup of 4) less the producer warpgroup's ``128 x
    producer_regs``, over the consumers' threads. 240 with the defaults (the SASS's ``USETMAXREG``)."""
    total = (consumer_warps + 4) * 32 * maxnreg
    return (total - 128 * producer_regs) // (32 * consumer_warps) // 8 * 8


def ds_swizzle(block_m: int) -> int:
    """Swizzle width in bytes of dS^T's shared-memory tile (rows of ``block_m`` 16-bit values)."""
    return min(128, 2 * block_m)


def launch_options(specialise: bool, warps: int) -> dict:
    """Launch options of the kernel: ``num_warps`` (the consumer warps) and, warp-specialised, the register
    limit :data:`SPECIALISED_MAXNREG`."""
    return {"num_warps": warps, **({"maxnreg": SPECIALISED_MAXNREG} if specialise else {})}


def gluon_attention_backward(q, k, v, o, lse, do, causal: bool, softmax_scale: float | None = None,
                             *, config: tuple | None = None, return_kernels: bool = False):
    """dQ, dK, dV of ``o = softmax(scale q k^T [+ causal]) v`` with the Gluon kernel (Hopper only).

    Same arguments and results as :func:`gpuperf.kernels.flash_attention_bwd.flash_attention_backward`
    for contiguous fp16/bf16 inputs with d in :data:`HEAD_DIMS`. ``config`` is ``(BLOCK_N, BLOCK_M,
    STAGES, warps, specialise, dq_transposed, lse_vec)`` (default :data:`CONFIGS`). With ``return_kernels``, also a
    dict of the compiled kernels (``n_regs``, ``n_spills``)."""
    status = usable_for(q, k, v, do)
    if not status:
        raise ValueError(f"the Gluon backward cannot run here: {status.reason}")
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    scale = 1.0 / math.sqrt(d) if softmax_scale is None else float(softmax_scale)
    block_n, block_m, stages, warps, specialise, dq_t, lse_vec = CONFIGS[d] if config is None else config
    lse = lse.to(torch.float32).contiguous()
    o = o.contiguous()
    delta = torch.empty((batch, heads, n_q), device=q.device, dtype=torch.float32)
    dq_acc = torch.empty(q.shape, device=q.device, dtype=torch.float32)
    dq = torch.empty_like(q)
    dk = torch.empty_like(k)
    dv = torch.empty_like(v)
    handles = {}
    handles["preprocess"] = _preprocess_kernel[(triton.cdiv(n_q, 64), batch * heads)](
        o, do, delta, dq_acc, n_q, 64, d)
    q_desc, k_desc, v_desc, do_desc = make_descriptors(q, k, v, do, block_m, block_n)
    grid = (triton.cdiv(n_k, block_n), batch * heads)
    handles["gluon"] = _bwd_kernel[grid](
        q_desc, k_desc, v_desc, do_desc, lse, delta, dq_acc, dk, dv, n_q, n_k, scale * _LOG2E, scale,
        d, block_m, block_n, stages, bool(causal), warps, bool(specialise), _WS_LIST_API, PRODUCER_REGS,
        bool(dq_t), bool(lse_vec), ds_swizzle(block_m), **launch_options(specialise, warps))
    n = dq.numel()
    handles["convert"] = _convert_kernel[(triton.cdiv(n, 1024),)](dq_acc, dq, n, scale, 1024)
    if return_kernels:
        return dq, dk, dv, handles
    return dq, dk, dv


__all__ = ["CONFIGS", "DTYPES", "HEAD_DIMS", "PRODUCER_REGS", "SCHEDULE", "SPECIALISED_MAXNREG", "STEP_UNITS",
           "available", "consumer_registers", "emulate", "gluon_attention_backward", "launch_options", "make_descriptors",
           "query_block_ranges", "schedule_events", "usable_for"]
