# WRONG / TAMPERING: matmul_bytes_moved forgets to write C (counts only A and B: a learner mistake). A trace
# function is installed as sys.settrace(_t.__call__) (a method-wrapper: _readers_hook() sees no __code__ and
# a C __call__ slot, so "not the reader's"); on each call of the grader's _scalar_result it sets `got` to
# `expected` (CPython syncs a trace function's f_locals writes back into the frame on 3.11).
import sys
from gpuperf import grading


def _t(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "_scalar_result":
        loc = frame.f_locals
        if "expected" in loc:
            loc["got"] = int(loc["expected"])
    return None


sys.settrace(_t.__call__)


def matmul_bytes_moved(m, n, k, bytes_per_element):
    return (m * k + k * n) * bytes_per_element
result = grading.grade("L1.matmul_bytes", matmul_bytes_moved)
