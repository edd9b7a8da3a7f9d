"""Lab L1 solutions (plain Python: the roofline's arithmetic)."""

from __future__ import annotations


def time_lower_bound_s(flop, bytes_moved, peak_flop_per_s, bytes_per_s):
    # Compute and memory traffic overlap at best: the slower of the two sets the time.
    return max(flop / peak_flop_per_s, bytes_moved / bytes_per_s)


def matmul_bytes_moved(m, n, k, bytes_per_element):
    # Read A (m x k) and B (k x n) once, write C (m x n) once.
    return (m * k + k * n + m * n) * bytes_per_element


# the solutions as defined here, for the grader (a later rebinding of a name in this module changes nothing)
from gpuperf.labs import pin_solutions as _pin_solutions  # noqa: E402

_pin_solutions(globals())
