# WRONG / TAMPERING: time_lower_bound_s returns the memory time only (bytes / bandwidth: a learner who
# forgot the compute roof). A profile function of the cell's own is installed through torch's decorator
# (sys.setprofile(torch.no_grad()(_p))): the hook is torch's `decorate_context` function, whose __code__ lies in
# torch/utils/_contextlib.py under site-packages, "an installed package", so _readers_hook() says it is not
# the reader's (it never follows __wrapped__) and the grade goes ahead. Any installed package's
# call-forwarding wrapper does the same. The hook sets `got` to `expected` in
# the grader's _scalar_result (a profile function's f_locals writes are synced back on 3.11).
import sys
import torch
from gpuperf import grading


def _p(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "_scalar_result":
        loc = frame.f_locals
        if "expected" in loc:
            loc["got"] = float(loc["expected"])
    return None


sys.setprofile(torch.no_grad()(_p))


def time_lower_bound_s(flop, bytes_moved, peak_flop_per_s, bytes_per_s):
    return bytes_moved / bytes_per_s
result = grading.grade("L1.time", time_lower_bound_s)
