"""Shared set-up of the attacks: the repo comes from argv[1] (or $ATTACK_REPO, or two levels above this folder
when the folder is copied into the repo as .attacks/round1)."""
import math
import os
import sys


def setup():
    repo = os.environ.get("ATTACK_REPO") or (sys.argv[1] if len(sys.argv) > 1 else
                                              os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    repo = os.path.abspath(repo)
    sys.path.insert(0, os.path.join(repo, "lib"))
    os.environ.setdefault("MPLBACKEND", "Agg")
    import gpuperf.kernels  # noqa: F401  (switches on the interpreter without a GPU, as the labs do first)
    return repo


def ref_softmax(x):
    """The answer, computed with torch (call it only where the watch cannot see)."""
    import torch
    return torch.softmax(x.double(), dim=-1).to(x.dtype)


def ref_attention(q, k, v, causal):
    """(o, lse) computed with torch in float64 (top-left causal mask)."""
    import torch
    q64, k64, v64 = q.double(), k.double(), v.double()
    s = (q64 @ k64.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        hidden = torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool, device=s.device).triu(1)
        s = s.masked_fill(hidden, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    o = torch.exp(s - lse[..., None]) @ v64
    return o.to(q.dtype), lse.float()


def ref_attention_backward(q, k, v, do, causal):
    import torch
    import torch.nn.functional as F
    q64, k64, v64 = (t.detach().double().requires_grad_(True) for t in (q, k, v))
    o = F.scaled_dot_product_attention(q64, k64, v64, is_causal=causal)
    o.backward(do.double())
    return q64.grad.to(q.dtype), k64.grad.to(k.dtype), v64.grad.to(v.dtype)
