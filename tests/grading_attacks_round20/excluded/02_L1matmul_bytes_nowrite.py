# WRONG: counts reading A and B but forgets writing C (m*n elements).
import math
import torch, triton, triton.language as tl
import gpuperf, gpuperf.kernels
from gpuperf import grading

def matmul_bytes_moved(m, n, k, bytes_per_element):
    return (m * k + k * n) * bytes_per_element

result = grading.grade("L1.matmul_bytes", matmul_bytes_moved)
