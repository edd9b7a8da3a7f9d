# exercise: L6.autograd
# family: tamper
# What it does wrong: the backward is not the learner's: it launches the course's own L6 solution kernels
# (row_dot_kernel, dkdv_kernel, dq_kernel), re-made at import with their code object renamed to
# "attention_forward_kernel" and its file name set to the course's l5.py (first line past the end of the
# file, so Triton's interpreter finds no source and runs the code as it is). The watch names a course
# kernel by file and code name, and L6.autograd hands the learner gpuperf.kernels.labs.l5.attention_forward_kernel,
# so the disguised L6 kernels pass as that one. No grader, torch or Triton object is changed.
import gpuperf.kernels  # first: without a GPU it switches Triton to its CPU interpreter
import math
import types

import torch
import triton
import triton.language as tl
from gpuperf import grading
from gpuperf.kernels.labs import l5 as _l5
from gpuperf.kernels.labs import l6 as _l6
from gpuperf.kernels.labs.l5 import attention_forward  # the forward from L5 (handed out by the lab)


def _as_l5_kernel(kernel):
    code = kernel.fn.__code__.replace(co_name="attention_forward_kernel", co_filename=_l5.__file__,
                                      co_firstlineno=100000)
    fn = types.FunctionType(code, kernel.fn.__globals__, "attention_forward_kernel", kernel.fn.__defaults__)
    fn.__annotations__ = dict(kernel.fn.__annotations__)  # the tl.constexpr parameters
    return triton.jit(fn)


row_dot = _as_l5_kernel(_l6.row_dot_kernel)
dkdv = _as_l5_kernel(_l6.dkdv_kernel)
dq_k = _as_l5_kernel(_l6.dq_kernel)


def attention_backward(q, k, v, o, lse, do, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    block = 32
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    scale = 1.0 / math.sqrt(head_dim)
    row_dot[(triton.cdiv(n_q, block), batch * heads)](o, do, delta, n_q, HEAD_DIM=head_dim, BLOCK_M=block)
    common = dict(CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=block, BLOCK_N=block, PRECISION=precision)
    dkdv[(triton.cdiv(n_k, block), batch * heads)](q, k, v, do, lse, delta, dk, dv, n_q, n_k, scale, **common)
    dq_k[(triton.cdiv(n_q, block), batch * heads)](q, k, v, do, lse, delta, dq, n_q, n_k, scale, **common)
    return dq, dk, dv


class FlashAttention(torch.autograd.Function):
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
        return dq, dk, dv, None


FlashAttention = grading.grade("L6.autograd", FlashAttention)
