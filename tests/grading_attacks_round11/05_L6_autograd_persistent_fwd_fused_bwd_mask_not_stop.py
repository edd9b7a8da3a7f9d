# WRONG (REFUSE expected): L6.autograd built from file 01's forward (persistent, half as many programs as items,
# the causal bound of each program's last item used for all its items, the extra key blocks masked off instead of
# skipped) and file 02's fused backward (its dQ part walks key blocks past its diagonal, masked off). Both visit
# blocks past the diagonal with every lane masked, which the README says count as visits; the checks compare
# each visit with the rows the whole program loaded.
import torch
import importlib.util as _u, os as _os, sys as _sys
def _load(name, fname):  # the file up to its grading.grade line (tests/attack_files.py), a module named after it
    path = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), fname)
    text = open(path).read(); end = text.find("\nresult = grading.grade(")
    m = type(_sys)(f"{name}_{fname.split('_')[0]}"); m.__file__ = path; _sys.modules[m.__name__] = m
    exec(compile(text if end < 0 else text[:end], path, "exec"), m.__dict__)
    return m
attention_forward = _load("my_l5_fwd_01", "01_L5_causal_persistent_bound_of_last_item.py").attention_forward
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
