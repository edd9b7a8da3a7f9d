"""WRONG: adds the compute time and the memory time instead of taking the max (assumes no overlap).
The roofline bound is max(flop/peak, bytes/bw); the sum is up to 2x too large."""
from gpuperf import grading


def time_lower_bound_s(flop, bytes_moved, peak_flop_per_s, bytes_per_s):
    return flop / peak_flop_per_s + bytes_moved / bytes_per_s


result = grading.grade("L1.time", time_lower_bound_s)
