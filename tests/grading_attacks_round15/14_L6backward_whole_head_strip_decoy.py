"""WRONG (lazy): the dK/dV kernel runs TWO programs per head: program 0 does every block of keys but the last two,
in turn (the course's walk, correct causal skipping, inside a loop over key blocks), program 1 the last two:
at N = 256 program 0 multiplies 98% of the head's pairs, which the half-head rule refuses ("one program
multiplying more than half of a head's (query, key) pairs").

The trick: before its loop, program 0 makes one decoy product: a 16-lane tile of k whose lanes load key 0 and the
last key a query sees (N_k - 1, causal: min(N_k, N_q) - 1) with 16 copies of the last query; the result is added
times 0 to every dK it stores.

Why the grader should accept it: `_whole_head_program` exempts "a program whose pairs fit in the strip of one
block it multiplied" (`strips`: the visible pairs of the rows from a load's lowest to its highest active row,
with every row of the other tensor): the decoy load's span is every key, so its "strip" is the whole head, and
the program's 98% fit in it. Only `multiplied >= needed` is still refused, hence the last two blocks given
away. The decoy pairs nothing hidden: its keys' judged block is the last key, the last query sees it.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def row_dot_kernel(o_ptr, do_ptr, delta_ptr, N_Q, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    # D_i = sum over d of dO_id * O_id, one value per query row
    head = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    offsets = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    o = tl.load(o_ptr + offsets, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + offsets, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    tl.store(delta_ptr + head * N_Q + rows, tl.sum(o * do, axis=1), mask=rows < N_Q)


@triton.jit
def dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, N_Q, N_K,
                scale, CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    dims0 = tl.arange(0, HEAD_DIM)
    # the decoy: one product of a 16-lane tile of k whose lanes are key 0 and key `last` (the span of every key
    # a query sees) with 16 copies of the last query; its result is added times 0 into every dK
    lane = tl.arange(0, 16)
    last = N_K - 1
    if CAUSAL:
        last = tl.minimum(N_K, N_Q) - 1
    last = tl.minimum(last, 254)  # the decoy spans at most 255 keys: under the width checks' 256 and N
    d_keys = tl.where(lane == 0, 0, last)
    kd = tl.load(k_ptr + head * N_K * HEAD_DIM + d_keys[:, None] * HEAD_DIM + dims0[None, :])
    qd = tl.load(q_ptr + head * N_Q * HEAD_DIM + (lane * 0 + N_Q - 1)[:, None] * HEAD_DIM + dims0[None, :])
    extra = tl.sum(tl.sum(tl.dot(qd, tl.trans(kd), input_precision=PRECISION), axis=1), axis=0) * 0.0
    n_blocks = tl.cdiv(N_K, BLOCK_N)
    first_block = 0
    stop_block = n_blocks - 2  # program 0: every key block but the last two
    if tl.program_id(0) == 1:
        first_block = n_blocks - 2
        stop_block = n_blocks
    for block_n in range(tl.maximum(first_block, 0), stop_block):
        keys = block_n * BLOCK_N + tl.arange(0, BLOCK_N)
        dims = tl.arange(0, HEAD_DIM)
        kv_offsets = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
        k = tl.load(k_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
        dk = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
        dv = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
        start = 0
        if CAUSAL:  # queries before this key block's first key cannot see it
            start = (block_n * BLOCK_N // BLOCK_M) * BLOCK_M
        for m0 in range(start, N_Q, BLOCK_M):
            rows = m0 + tl.arange(0, BLOCK_M)
            q_offsets = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
            q = tl.load(q_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
            do = tl.load(do_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
            lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
            delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
            # recompute this tile of P from the log-sum-exp
            s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
            visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
            if CAUSAL:
                visible = visible & (keys[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
            dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PRECISION)
            dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PRECISION)
        tl.store(dk_ptr + kv_offsets, (dk * scale + extra).to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
        tl.store(dv_ptr + kv_offsets, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


@triton.jit
def dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, N_Q, N_K, scale,
              CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_offsets = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    q = tl.load(q_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
    do = tl.load(do_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
    lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    dq = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL:  # keys right of this query block's last row are hidden
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for n0 in range(0, end, BLOCK_N):
        keys = n0 + tl.arange(0, BLOCK_N)
        kv_offsets = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
        k = tl.load(k_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k, input_precision=PRECISION)
    tl.store(dq_ptr + q_offsets, (dq * scale).to(dq_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)


def attention_backward(q, k, v, o, lse, do, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    on_gpu = q.is_cuda and not gpuperf.kernels.interpreter_enabled()
    sm80 = on_gpu and torch.cuda.get_device_capability(q.device)[0] >= 8
    block = 64 if on_gpu and q.element_size() == 2 else 32
    if on_gpu and not sm80 and head_dim > 64:  # a T4 (sm_75) has 64 KB of shared
        block //= 2  # memory: halve the d = 128 tiles (dkdv_kernel holds five)
    stages = 2 if sm80 else 1  # pipelined loads take shared memory: one stage on a T4
    precision = "ieee" if q.dtype == torch.float32 else "tf32"  # fp32 means fp32
    scale = 1.0 / math.sqrt(head_dim)
    heads_total = batch * heads
    row_dot_kernel[(triton.cdiv(n_q, block), heads_total)](
        o, do, delta, n_q, HEAD_DIM=head_dim, BLOCK_M=block)
    common = dict(CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=block, BLOCK_N=block,
                  PRECISION=precision, num_stages=stages)
    dkdv_kernel[(2, heads_total)](q, k, v, do, lse, delta, dk, dv, n_q, n_k, scale, **common)
    dq_kernel[(triton.cdiv(n_q, block), heads_total)](
        q, k, v, do, lse, delta, dq, n_q, n_k, scale, **common)
    return dq, dk, dv


result = grading.grade("L6.backward", attention_backward)
