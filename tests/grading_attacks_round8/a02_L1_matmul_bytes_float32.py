# exercise: L1.matmul_bytes
# family: ordinary
# What it does wrong: counts in float32 (numpy), so large counts are rounded (the count must be exact).
import numpy as np
from gpuperf import grading


def matmul_bytes_moved(m, n, k, bytes_per_element):
    m, n, k, b = (np.float32(v) for v in (m, n, k, bytes_per_element))
    return (m * k + k * n + m * n) * b


matmul_bytes_moved = grading.grade("L1.matmul_bytes", matmul_bytes_moved)
