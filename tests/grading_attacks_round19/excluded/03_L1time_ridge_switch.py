"""WRONG: decides memory- vs compute-bound from the intensity with a rounded ridge point
(ridge rounded to 3 significant digits), then returns that roof's time: wrong just around the ridge."""
from gpuperf import grading


def time_lower_bound_s(flop, bytes_moved, peak_flop_per_s, bytes_per_s):
    ridge = float(f"{peak_flop_per_s / bytes_per_s:.3g}")
    intensity = flop / bytes_moved if bytes_moved else float("inf")
    if intensity < ridge:
        return bytes_moved / bytes_per_s
    return flop / peak_flop_per_s


result = grading.grade("L1.time", time_lower_bound_s)
