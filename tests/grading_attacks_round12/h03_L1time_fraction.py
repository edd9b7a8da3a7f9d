import gpuperf.kernels
from gpuperf import grading
from fractions import Fraction

# HONEST: the roofline bound computed in exact rational arithmetic (no rounding at all), returned as a
# Fraction, a numbers.Rational that float() converts.
def time_lower_bound_s(flop, bytes_moved, peak_flops, bandwidth):
    f, b, p, w = (Fraction(v) for v in (flop, bytes_moved, peak_flops, bandwidth))
    return max(f / p, b / w)

result = grading.grade("L1.time", time_lower_bound_s)
