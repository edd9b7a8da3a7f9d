# WRONG: adds compute time and memory time (no overlap) instead of taking the max;
# the roofline bound is max(flop/peak, bytes/bw), so any input with both terms nonzero is wrong.
import math
import torch, triton, triton.language as tl
import gpuperf, gpuperf.kernels
from gpuperf import grading

def time_lower_bound_s(flop, bytes_moved, peak_flop_per_s, bytes_per_s):
    return flop / peak_flop_per_s + bytes_moved / bytes_per_s

result = grading.grade("L1.time", time_lower_bound_s)
