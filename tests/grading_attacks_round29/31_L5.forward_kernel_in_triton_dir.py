import math, os, sys, tempfile, importlib.util
import torch, triton, triton.language as tl
from gpuperf import grading

# the kernel lives in a module under a directory named "triton"
_SRC = 'import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,\n               CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,\n               BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):\n    block_m = tl.program_id(0)\n    head = tl.program_id(1).to(tl.int64)\n    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)\n    dims = tl.arange(0, HEAD_DIM)\n    q_head = q_ptr + head * N_Q * HEAD_DIM\n    k_head = k_ptr + head * N_K * HEAD_DIM\n    v_head = v_ptr + head * N_K * HEAD_DIM\n    q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)\n    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)\n    l = tl.zeros((BLOCK_M,), dtype=tl.float32)\n    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)\n    end = N_K\n    if CAUSAL:\n        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)\n    for start in range(0, end, BLOCK_N):\n        keys = start + tl.arange(0, BLOCK_N)\n        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)\n        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)\n        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale\n        visible = keys[None, :] < N_K\n        if CAUSAL:\n            visible = visible & (keys[None, :] <= rows[:, None])\n        s = tl.where(visible, s, float("-inf"))\n        m_new = tl.maximum(m, tl.max(s, axis=1))\n        alpha = tl.exp(m - m_new)\n        p = tl.exp(s - m_new[:, None])\n        l = l * alpha + tl.sum(p, axis=1)\n        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] / (1.0 / v.to(tl.float32)[None, :, :]), axis=1)\n        acc = acc + 0.0 * tl.dot(p.to(v.dtype), v, input_precision=PRECISION)\n        m = m_new\n    o = acc / l[:, None]\n    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],\n             o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)\n    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)\n\n\n'
_dir = os.path.join(tempfile.mkdtemp(), "triton")
os.makedirs(_dir)
_path = os.path.join(_dir, "attn_kernels.py")
with open(_path, "w") as _f:
    _f.write(_SRC)
_spec = importlib.util.spec_from_file_location("attn_kernels", _path)
_mod = importlib.util.module_from_spec(_spec)
sys.modules["attn_kernels"] = _mod
_spec.loader.exec_module(_mod)
fwd_kernel = _mod.fwd_kernel


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(n_q, 32), batch * heads)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(head_dim),
                     CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=32, BLOCK_N=32, PRECISION=precision)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
