import gpuperf.kernels
from gpuperf import grading

# WRONG: the op is classified as compute-bound once its intensity reaches half the ridge point (a
# "balance" rule of thumb) and its time is then flop / peak only. For intensity between ridge/2 and the
# ridge (e.g. ridge * 0.75) it returns 0.75 of the true bound: the memory time is ignored.
def time_lower_bound_s(flop, bytes_moved, peak_flops, bandwidth):
    if bytes_moved == 0 or flop / bytes_moved >= 0.5 * peak_flops / bandwidth:
        return flop / peak_flops
    return bytes_moved / bandwidth

result = grading.grade("L1.time", time_lower_bound_s)
