# WRONG / TAMPERING: time_lower_bound_s returns the compute time only (flop / peak: the memory roof forgotten).
# Grading goes ahead although the cell set functools.partial(_p.__call__) as the profile function:
# _readers_hook() follows the partial to its func, a method-wrapper, which it takes for C code (no __code__,
# a C __call__ slot). The hook sets `got` to `expected` in the grader's _scalar_result.
import functools
import sys
from gpuperf import grading


def _p(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "_scalar_result":
        loc = frame.f_locals
        if "expected" in loc:
            loc["got"] = float(loc["expected"])
    return None


sys.setprofile(functools.partial(_p.__call__))


def time_lower_bound_s(flop, bytes_moved, peak_flop_per_s, bytes_per_s):
    return flop / peak_flop_per_s
result = grading.grade("L1.time", time_lower_bound_s)
