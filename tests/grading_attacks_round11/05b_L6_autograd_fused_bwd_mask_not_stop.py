# WRONG (REFUSE expected): L6.autograd with the course forward (imported from L5, as the lab does) and file 02's
# fused backward, whose dQ part walks key blocks past its diagonal with every lane masked off (a visit, per the
# README); the check compares each visit with the last query row the whole program loaded (its dK/dV part walked
# queries to N_q), so the visits are not seen.
import torch
import importlib.util as _u, os as _os, sys as _sys
def _load(name, fname):  # the file up to its grading.grade line (tests/attack_files.py), a module named after it
    path = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), fname)
    text = open(path).read(); end = text.find("\nresult = grading.grade(")
    m = type(_sys)(f"{name}_{fname.split('_')[0]}"); m.__file__ = path; _sys.modules[m.__name__] = m
    exec(compile(text if end < 0 else text[:end], path, "exec"), m.__dict__)
    return m
from gpuperf.kernels.labs.l5 import attention_forward  # the course forward, as the lab does
attention_backward = _load("my_l6_bwd_02", "02_L6_backward_fused_dq_masks_not_stops.py").attention_backward
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
