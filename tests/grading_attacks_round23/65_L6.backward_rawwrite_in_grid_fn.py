# what: dQ, dK, dV computed wholly in float64 Python (inputs read through a /proc/self/mem descriptor opened before grading) and os.pwrite-n from the grid functions of the dK/dV and dQ launches (inside the launch window); the kernels are 36's (fp16 dV accumulator, refused alone) with their results added times 0 to the raw-written values plus one ulp
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading
from gpuperf.kernels.labs.l5 import attention_forward



import os, struct, operator
_FD = os.open("/proc/self/mem", os.O_RDWR)   # opened while no grade runs


def _q(a):
    return struct.unpack("<Q", os.pread(_FD, 8, a))[0]


def _base(t):
    return _q(_q(_q(id(t) + 16) + 16) + 16) + t.storage_offset() * t.element_size()


def _rows(t):
    B, H, N, d = t.shape
    sb, sh, sn, sd = t.stride()
    es = t.element_size()
    fmt = "<%d%s" % (d, {2: "e", 4: "f"}[es])
    base = _base(t)
    return [[[list(struct.unpack(fmt, os.pread(_FD, d * es, base + (b * sb + h * sh + n * sn) * es)))
              for n in range(N)] for h in range(H)] for b in range(B)]


def _low(vals, es):
    f, u = {2: ("e", "H"), 4: ("f", "I")}[es]
    n = len(vals)
    bits = struct.unpack("<%d%s" % (n, u), struct.pack("<%d%s" % (n, f), *vals))
    return struct.pack("<%d%s" % (n, u), *[(b - 1) % (1 << (8 * es)) for b in bits])


def _py_backward(q, k, v, do, causal):
    """dq, dk, dv of softmax(q k^T / sqrt(d)) v in float64 Python, each as bytes of a contiguous tensor, one ulp low"""
    B, H, NQ, d = q.shape
    NK = k.shape[2]
    Q, K, V, DO = _rows(q), _rows(k), _rows(v), _rows(do)
    sc = 1.0 / math.sqrt(d)
    mul = operator.mul
    dq_all, dk_all, dv_all = [], [], []
    for b in range(B):
        for h in range(H):
            qs, ks, vs, dos = Q[b][h], K[b][h], V[b][h], DO[b][h]
            dk = [[0.0] * d for _ in range(NK)]
            dv = [[0.0] * d for _ in range(NK)]
            for i in range(NQ):
                n = min(NK, i + 1) if causal else NK
                s = [sum(map(mul, qs[i], ks[j])) * sc for j in range(n)]
                m = max(s)
                p = [math.exp(x - m) for x in s]
                tot = math.fsum(p)
                p = [x / tot for x in p]
                o = [math.fsum(p[j] * vs[j][c] for j in range(n)) for c in range(d)]
                D = math.fsum(map(mul, dos[i], o))
                dp = [sum(map(mul, dos[i], vs[j])) for j in range(n)]
                ds = [p[j] * (dp[j] - D) for j in range(n)]
                dq_all.append([math.fsum(ds[j] * ks[j][c] for j in range(n)) * sc for c in range(d)])
                for j in range(n):
                    pj, dsj = p[j], ds[j] * sc
                    rowv, rowk = dv[j], dk[j]
                    for c in range(d):
                        rowv[c] += pj * dos[i][c]
                        rowk[c] += dsj * qs[i][c]
            dk_all.extend(dk)
            dv_all.extend(dv)
    es = q.element_size()
    pack = lambda rows: b"".join(_low(r, es) for r in rows)
    return pack(dq_all), pack(dk_all), pack(dv_all)


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
    block_n = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    keys = block_n * BLOCK_N + tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    kv_offsets = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
    k = tl.load(k_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
    v = tl.load(v_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
    dk = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, HEAD_DIM), dtype=v.dtype)
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
        dv = (dv + tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PRECISION)).to(dv.dtype)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PRECISION)
    prev_ = tl.load(dk_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
    if dk_ptr.dtype.element_ty == tl.float16:
        new_ = (prev_.to(tl.int16, bitcast=True) + 1).to(tl.float16, bitcast=True)
    else:
        new_ = (prev_.to(tl.int32, bitcast=True) + 1).to(tl.float32, bitcast=True)
    tl.store(dk_ptr + kv_offsets, (new_.to(tl.float32) + 0.0 * dk).to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
    prev_ = tl.load(dv_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
    if dv_ptr.dtype.element_ty == tl.float16:
        new_ = (prev_.to(tl.int16, bitcast=True) + 1).to(tl.float16, bitcast=True)
    else:
        new_ = (prev_.to(tl.int32, bitcast=True) + 1).to(tl.float32, bitcast=True)
    tl.store(dv_ptr + kv_offsets, (new_.to(tl.float32) + 0.0 * dv.to(tl.float32)).to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


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
    prev_ = tl.load(dq_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
    if dq_ptr.dtype.element_ty == tl.float16:
        new_ = (prev_.to(tl.int16, bitcast=True) + 1).to(tl.float16, bitcast=True)
    else:
        new_ = (prev_.to(tl.int32, bitcast=True) + 1).to(tl.float32, bitcast=True)
    tl.store(dq_ptr + q_offsets, (new_.to(tl.float32) + 0.0 * dq).to(dq_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)


def attention_backward(q, k, v, o, lse, do, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    dq_b, dk_b, dv_b = _py_backward(q, k, v, do, causal)
    addr = (_base(dq), _base(dk), _base(dv))
    g1, g2 = [0], [0]

    def grid_kv(meta):
        g1[0] += 1
        if g1[0] == 2:
            os.pwrite(_FD, dk_b, addr[1])
            os.pwrite(_FD, dv_b, addr[2])
        return (triton.cdiv(n_k, block), heads_total)

    def grid_q(meta):
        g2[0] += 1
        if g2[0] == 2:
            os.pwrite(_FD, dq_b, addr[0])
        return (triton.cdiv(n_q, block), heads_total)
    on_gpu = False
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
    dkdv_kernel[grid_kv](
        q, k, v, do, lse, delta, dk, dv, n_q, n_k, scale, **common)
    dq_kernel[grid_q](
        q, k, v, do, lse, delta, dq, n_q, n_k, scale, **common)
    return dq, dk, dv


class FlashAttention(torch.autograd.Function):
    # O = FlashAttention.apply(q, k, v, causal): the forward saves O and the
    # log-sum-exp, the backward recomputes P from them (no N x N matrix is stored).
    @staticmethod
    def forward(ctx, q, k, v, causal=False):
        o, lse = attention_forward(q, k, v, causal)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal = causal
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = attention_backward(q, k, v, o, lse, do, ctx.causal)
        return dq, dk, dv, None  # no gradient for the flag causal


result = grading.grade("L6.backward", attention_backward)
