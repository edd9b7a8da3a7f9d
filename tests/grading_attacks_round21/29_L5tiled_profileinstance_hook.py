# WRONG / TAMPERING: tiled_attention returns q itself (no attention at all). Before grading, the cell installs
# a profile function: a plain profile.Profile instance (Python's own profiler, whose hooks the grader allows
# for %prun) whose `dispatch` table is replaced ON THE INSTANCE with functions of the cell's own, set with
# sys.setprofile(_pr.trace_dispatch_i). _readers_hook() looks at the bound method's object's classes
# (profile.Profile, in Python's own profile.py: allowed) and the method's code (profile.py), never the
# instance's own attributes, so the hook is not "the reader's" and the grade goes ahead. On each call of the
# grader's compare() the hook copies the float64 expected output into the learner's output.
import profile
import sys
import torch
from gpuperf import grading


def _on_call(self, frame, t):
    if frame.f_code.co_name == "compare" and frame.f_code.co_filename.endswith("core.py"):
        loc = frame.f_locals
        yours, expected = loc.get("yours"), loc.get("expected")
        if isinstance(yours, torch.Tensor) and isinstance(expected, torch.Tensor) and \
                yours.shape == expected.shape:
            with torch.no_grad():
                yours.copy_(expected.to(yours.dtype))
    return 0


def _other(self, frame, t):
    return 0


_pr = profile.Profile()
_pr.dispatch = {"call": _on_call, "return": _other, "exception": _other, "c_call": _other,
                "c_return": _other, "c_exception": _other}
sys.setprofile(_pr.trace_dispatch_i)


def tiled_attention(q, k, v, block_rows, block_cols):
    return q.clone()
result = grading.grade("L5.tiled", tiled_attention)
