import gpuperf.kernels
from gpuperf import grading
import numpy as np

# WRONG: the count is kept in numpy int32. Every graded size keeps (m k + k n + m n) b below 2^31, but a
# realistic matmul does not: m = n = k = 16384 in fp16 gives 3 * 2^28 * 2 = 1.6e9 ... and m = n = k = 32768
# gives 6.4e9 bytes, which wraps to a negative number in int32.
def matmul_bytes_moved(m, n, k, bytes_per_element):
    dims = np.array([m, n, k, bytes_per_element], dtype=np.int32)
    m, n, k, b = dims[0], dims[1], dims[2], dims[3]
    with np.errstate(over="ignore"):
        return (m * k + k * n + m * n) * b

result = grading.grade("L1.matmul_bytes", matmul_bytes_moved)
