# WRONG / TAMPERING: time_lower_bound_s adds the compute time and the memory time (no overlap: a common
# learner mistake; the roofline bound is their max). A profile function of the cell's own is installed with
# sys.setprofile, wrapped in functools.lru_cache(maxsize=0) (a C wrapper object that calls it uncached).
# _readers_hook() does not follow __wrapped__: the wrapper has no __code__ and type(hook).__call__ is a C
# slot, so the hook counts as "a built-in or a C type's instance" and the grade goes ahead. On each call of
# the grader's _scalar_result, the hook sets its local `got` to `expected` (CPython syncs a profile
# function's f_locals writes back into the frame on 3.11).
import functools
import sys
from gpuperf import grading


def _p(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "_scalar_result":
        loc = frame.f_locals
        if "expected" in loc:
            loc["got"] = float(loc["expected"])
    return None


sys.setprofile(functools.lru_cache(maxsize=0)(_p))


def time_lower_bound_s(flop, bytes_moved, peak_flop_per_s, bytes_per_s):
    return flop / peak_flop_per_s + bytes_moved / bytes_per_s
result = grading.grade("L1.time", time_lower_bound_s)
