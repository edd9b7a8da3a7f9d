# exercise: L5.causal
# family: cheat
# why: Causal kernel that never skips key blocks; it remembers the last causal call's q and, when the grader calls again with the same q and causal=False (the block-skip comparison run), returns without launching anything, so the grader has no full-run counters and drops the check. A correct solution skips the hidden key blocks.
# expect: ACCEPTED if the check is dropped when the full run ran no dot
import _common; _common.setup()
import torch
from gpuperf import grading
import _attn

_last = {"q": None}


def attention_forward(q, k, v, causal=False):
    if not causal and _last["q"] is q:
        o = torch.empty_like(q)
        return o, torch.empty(q.shape[:-1], dtype=torch.float32, device=q.device)
    if causal:
        _last["q"] = q
    return _attn.forward(q, k, v, causal, skip=False)


attention_forward = grading.grade("L5.causal", attention_forward)
