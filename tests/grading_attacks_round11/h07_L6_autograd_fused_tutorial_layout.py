# HONEST (ACCEPT expected): L6.autograd with the course forward and h06's fused backward (Triton tutorial's layout:
# each program does dK/dV of one key block, then dQ of one query block).
import torch
import importlib.util as _u, os as _os, sys as _sys
def _load(name, fname):
    spec = _u.spec_from_file_location(name, _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), fname))
    m = _u.module_from_spec(spec); _sys.modules[name] = m; spec.loader.exec_module(m)
    return m
from gpuperf.kernels.labs.l5 import attention_forward  # the course forward, as the lab does
attention_backward = _load("my_l6_bwd_02", "h06_L6_backward_fused_tutorial_layout.py").attention_backward
KEY, ENTRY = "L6.autograd", "FlashAttention"
class FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal=False):
        o, lse = attention_forward(q, k, v, causal=causal)
        ctx.causal = bool(causal)
        ctx.save_for_backward(q, k, v, o, lse)
        return o
    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        grads = attention_backward(q, k, v, o, lse, do.contiguous(), causal=ctx.causal)
        return (*grads, None)
