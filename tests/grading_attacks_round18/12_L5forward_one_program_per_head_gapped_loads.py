"""WRONG (lazy): ONE program per head holds every query of the head at once (up to 384) and walks the keys once
for all of them: a head runs on one SM, its queries never spread over programs. The queries are loaded as three
blocks of 128 lanes that leave one row out between them (rows 0-126, 128-254, 256-382), and the two rows left
out (127, 255) are loaded after the first block of keys, each by a load of its own (16 lanes on one row).

Why the grader should accept it: the rule "a program keeps one block of at most 128 queries" (`_held_rows`, new
this session: "the held block of queries merges only loads whose rows touch") measures each load of q from its
first row to its last (127 rows here) and merges only loads whose rows touch: rows 0-126 and 128-254 do not
touch, so the program "holds" 127 queries. The rows left out, loaded after a load of K, start a run of their
own (two single rows, apart). `_walking_check` refuses a program that holds several blocks in turn only when it
reads K again for each (`count > n_k * d + slack`); this program reads K once. `_one_pass_check`: once.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def _step(q, k, v, m, l, acc, rows, keys, N_Q, N_K, scale):
    s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
    s = tl.where((keys[None, :] < N_K) & (rows[:, None] < N_Q), s, float("-inf"))
    m_new = tl.maximum(m, tl.max(s, axis=1))
    shift = tl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = tl.exp(m - shift)
    p = tl.exp(s - shift[:, None])
    l = l * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
    return m_new, l, acc


@triton.jit
def _finish(o_ptr, lse_ptr, head, rows, m, l, acc, N_Q, HEAD_DIM: tl.constexpr):
    dims = tl.arange(0, HEAD_DIM)
    ok = rows < N_Q
    o = acc / tl.where(ok, l, 1.0)[:, None]
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=ok[:, None])
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=ok)


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, HEAD_DIM: tl.constexpr,
               BLOCK_N: tl.constexpr):
    head = tl.program_id(0).to(tl.int64)  # one program per head: every query of it
    dims = tl.arange(0, HEAD_DIM)
    lanes = tl.arange(0, 128)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    # three blocks of 127 rows (lane 127 repeats row 126, 254, 382: no row between the blocks is read)
    ra = tl.minimum(lanes, 126)
    rb = 128 + tl.minimum(lanes, 126)
    rc = 256 + tl.minimum(lanes, 126)
    qa = tl.load(q_head + ra[:, None] * HEAD_DIM + dims[None, :], mask=ra[:, None] < N_Q, other=0.0)
    qb = tl.load(q_head + rb[:, None] * HEAD_DIM + dims[None, :], mask=rb[:, None] < N_Q, other=0.0)
    qc = tl.load(q_head + rc[:, None] * HEAD_DIM + dims[None, :], mask=rc[:, None] < N_Q, other=0.0)
    g16 = tl.arange(0, 16)
    rg = 127 + 0 * g16  # the two rows left out, each loaded alone after the first block of keys
    rh = 255 + 0 * g16
    ma = tl.full((128,), float("-inf"), dtype=tl.float32)
    mb = tl.full((128,), float("-inf"), dtype=tl.float32)
    mc = tl.full((128,), float("-inf"), dtype=tl.float32)
    mg = tl.full((16,), float("-inf"), dtype=tl.float32)
    mh = tl.full((16,), float("-inf"), dtype=tl.float32)
    la = tl.zeros((128,), dtype=tl.float32)
    lb = tl.zeros((128,), dtype=tl.float32)
    lc = tl.zeros((128,), dtype=tl.float32)
    lg = tl.zeros((16,), dtype=tl.float32)
    lh = tl.zeros((16,), dtype=tl.float32)
    aa = tl.zeros((128, HEAD_DIM), dtype=tl.float32)
    ab = tl.zeros((128, HEAD_DIM), dtype=tl.float32)
    ac = tl.zeros((128, HEAD_DIM), dtype=tl.float32)
    ag = tl.zeros((16, HEAD_DIM), dtype=tl.float32)
    ah = tl.zeros((16, HEAD_DIM), dtype=tl.float32)
    qg = tl.zeros((16, HEAD_DIM), dtype=q_ptr.dtype.element_ty)
    qh = tl.zeros((16, HEAD_DIM), dtype=q_ptr.dtype.element_ty)
    for start in range(0, N_K, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        if start == 0:
            qg = tl.load(q_head + rg[:, None] * HEAD_DIM + dims[None, :], mask=rg[:, None] < N_Q, other=0.0)
            qh = tl.load(q_head + rh[:, None] * HEAD_DIM + dims[None, :], mask=rh[:, None] < N_Q, other=0.0)
        ma, la, aa = _step(qa, k, v, ma, la, aa, ra, keys, N_Q, N_K, scale)
        mb, lb, ab = _step(qb, k, v, mb, lb, ab, rb, keys, N_Q, N_K, scale)
        mc, lc, ac = _step(qc, k, v, mc, lc, ac, rc, keys, N_Q, N_K, scale)
        mg, lg, ag = _step(qg, k, v, mg, lg, ag, rg, keys, N_Q, N_K, scale)
        mh, lh, ah = _step(qh, k, v, mh, lh, ah, rh, keys, N_Q, N_K, scale)
    _finish(o_ptr, lse_ptr, head, ra, ma, la, aa, N_Q, HEAD_DIM)
    _finish(o_ptr, lse_ptr, head, rb, mb, lb, ab, N_Q, HEAD_DIM)
    _finish(o_ptr, lse_ptr, head, rc, mc, lc, ac, N_Q, HEAD_DIM)
    _finish(o_ptr, lse_ptr, head, rg, mg, lg, ag, N_Q, HEAD_DIM)
    _finish(o_ptr, lse_ptr, head, rh, mh, lh, ah, N_Q, HEAD_DIM)


def attention_forward(q, k, v, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    assert not causal and n_q <= 383
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    fwd_kernel[(B * H,)](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), HEAD_DIM=d, BLOCK_N=32)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
