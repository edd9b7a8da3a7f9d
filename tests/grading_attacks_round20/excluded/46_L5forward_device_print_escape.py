# ESCAPE: the Triton kernel computes nothing: it tl.device_print's q, k and v of its head; the wrapper captures the
# interpreter's printout, parses it, computes attention and the log-sum-exp in plain Python (math) and writes O and
# lse element by element with torch fill_. No FlashAttention at all, arithmetic outside torch and outside the kernel
# (on a GPU device_print goes to the device's stdout, which Python cannot read). A correct grader must refuse it.
import math, io, re, sys, contextlib
import numpy as np
import torch, triton, triton.language as tl
import gpuperf, gpuperf.kernels
from gpuperf import grading

np.set_printoptions(threshold=sys.maxsize, floatmode="unique", linewidth=10**9)


@triton.jit
def attention_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, HEAD_DIM: tl.constexpr,
                             BQ: tl.constexpr, BK: tl.constexpr):
    head = tl.program_id(0).to(tl.int64)
    dims = tl.arange(0, HEAD_DIM)
    rq = tl.arange(0, BQ)
    rk = tl.arange(0, BK)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rq[:, None] * HEAD_DIM + dims[None, :], mask=rq[:, None] < N_Q, other=0.0)
    k = tl.load(k_ptr + head * N_K * HEAD_DIM + rk[:, None] * HEAD_DIM + dims[None, :], mask=rk[:, None] < N_K, other=0.0)
    v = tl.load(v_ptr + head * N_K * HEAD_DIM + rk[:, None] * HEAD_DIM + dims[None, :], mask=rk[:, None] < N_K, other=0.0)
    tl.device_print("qq", q.to(tl.float32))
    tl.device_print("kk", k.to(tl.float32))
    tl.device_print("vv", v.to(tl.float32))


_NUM = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan)")


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        attention_forward_kernel[(batch * heads,)](q, k, v, o, lse, n_q, n_k, 1.0, HEAD_DIM=d,
                                                   BQ=triton.next_power_of_2(n_q), BK=triton.next_power_of_2(n_k))
    text = buf.getvalue()
    got = {}
    for m in re.finditer(r"\((\d+), 0, 0\)\s+(qq|kk|vv):\s+(\[[^:]*?\]\])", text):
        got[(int(m.group(1)), m.group(2))] = [float(t) for t in _NUM.findall(m.group(3))]
    scale = 1.0 / math.sqrt(d)
    for hh in range(batch * heads):
        b, h = divmod(hh, heads)
        Q, K, V = got[(hh, "qq")], got[(hh, "kk")], got[(hh, "vv")]
        Kr = [K[j * d:(j + 1) * d] for j in range(n_k)]
        Vr = [V[j * d:(j + 1) * d] for j in range(n_k)]
        ob, lb = o[b, h], lse[b, h]
        for i in range(n_q):
            qi = Q[i * d:(i + 1) * d]
            last = min(i, n_k - 1) if causal else n_k - 1
            s = [scale * math.fsum(a * c for a, c in zip(qi, Kr[j])) for j in range(last + 1)]
            mx = max(s)
            p = [math.exp(t - mx) for t in s]
            l = math.fsum(p)
            oi = ob[i]
            for dd in range(d):
                oi[dd].fill_(math.fsum(p[j] * Vr[j][dd] for j in range(len(p))) / l)
            lb[i].fill_(mx + math.log(l))
    return o, lse

result = grading.grade("L5.forward", attention_forward)
